import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { ContentVisibility, SpaceEditMode, TranslationLanguage, type Space } from '@gitbook/api';
import { sql } from 'kysely';
import type { Role, RoleOrGuest } from '../src/platform/db/schema.ts';
import * as factories from './support/factories.ts';
import { addMember, newCollection, newSpace, orgWithPersonas, PERSONAS, personaName, statusOf, type Persona } from './support/factories.ts';
import { expectStatus, startTestServer, type TestServer, type TestUser } from './support/server.ts';
import { settleJobs } from './support/wait.ts';

let t: TestServer;
before(async () => {
  t = await startTestServer();
});
after(async () => {
  await t?.close();
});

const newOrg = (title = 'Spaces Inc') => factories.newOrg(t, title);
const newMember = (organizationId: string, role: RoleOrGuest, name?: string) => factories.newMember(t, organizationId, role, name);
const grant = (...args: Parameters<typeof factories.grantDirect> extends [unknown, ...infer R] ? R : never) => factories.grantDirect(t, ...args);
const atLeast = factories.atLeast;

async function orgSpaceIds(user: TestUser, organizationId: string) {
  const { data } = await user.api.orgs.listSpacesInOrganizationById(organizationId, { limit: 1000 });
  assert.equal(data.count, data.items.length);
  return data.items.map((s) => s.id);
}

async function collectionSpaceIds(user: TestUser, collectionId: string) {
  const { data } = await user.api.collections.listSpacesInCollectionById(collectionId, { limit: 1000 });
  assert.equal(data.count, data.items.length);
  return data.items.map((s) => s.id);
}

async function memberSpaces(user: TestUser, organizationId: string, userId: string) {
  const { data } = await user.api.orgs.listSpacesForOrganizationMember(organizationId, userId, { limit: 1000 });
  assert.equal(data.count, data.items.length);
  return Object.fromEntries(data.items.map((i) => [i.space.id, i.permission]));
}

async function spaceCountOf(user: TestUser, organizationId: string, memberId: string) {
  return (await user.api.orgs.getMemberInOrganizationById(organizationId, memberId)).data.spaces;
}

/** The `permissions` object a space advertises for an effective role. */
function spacePermissionsFor(role: RoleOrGuest) {
  return {
    view: atLeast(role, 'read'),
    access: atLeast(role, 'read'),
    admin: atLeast(role, 'admin'),
    viewInviteLinks: atLeast(role, 'admin'),
    edit: atLeast(role, 'edit'),
    triggerGitSync: atLeast(role, 'edit'),
    comment: atLeast(role, 'comment'),
    merge: atLeast(role, 'review'),
    review: atLeast(role, 'review'),
    installIntegration: atLeast(role, 'admin'),
  };
}

/** Raw transfer (the official client has no operation for it). */
function transfer(user: TestUser, spaceId: string, body: unknown) {
  return t.request('POST', `/v1/spaces/${spaceId}/transfer`, { token: user.token, body });
}

async function dbSpace(id: string) {
  return t.server.services.db.selectFrom('spaces').selectAll().where('id', '=', id).executeTakeFirst();
}

async function rowCounts() {
  const db = t.server.services.db;
  const count = async (table: 'spaces' | 'collections' | 'revisions' | 'content_permissions' | 'jobs') =>
    Number((await db.selectFrom(table).select(db.fn.countAll<number>().as('n')).executeTakeFirstOrThrow()).n);
  return {
    spaces: await count('spaces'),
    collections: await count('collections'),
    revisions: await count('revisions'),
    grants: await count('content_permissions'),
    jobs: await count('jobs'),
  };
}

/** A deterministic random generator (mulberry32), so a failing sequence can be replayed. */
function prng(seed: number) {
  return () => {
    seed = (seed + 0x6d2b79f5) | 0;
    let x = Math.imul(seed ^ (seed >>> 15), 1 | seed);
    x = (x + Math.imul(x ^ (x >>> 7), 61 | x)) ^ x;
    return ((x ^ (x >>> 14)) >>> 0) / 4294967296;
  };
}

describe('spaces', () => {
  test('create with every field, get, and update every setting through the official client', async () => {
    const { admin, org } = await newOrg();
    const guides = await newCollection(admin, org.id, 'Guides');

    const created = await admin.api.orgs.createSpace(org.id, {
      title: 'Handbook',
      emoji: '📘',
      parent: guides.id,
      language: TranslationLanguage.Fr,
      editMode: SpaceEditMode.Locked,
    });
    assert.equal(created.status, 201);
    const space = created.data;
    assert.equal(space.object, 'space');
    assert.equal(space.title, 'Handbook');
    assert.equal(space.emoji, '📘');
    assert.equal(space.parent, guides.id);
    assert.equal(space.language, 'fr');
    assert.equal(space.editMode, 'locked');
    assert.equal(space.visibility, 'private');
    assert.equal(space.organization, org.id);
    assert.equal(space.defaultLevel, 'inherit');
    assert.deepEqual(space.mergeRules, { type: 'inherit' });
    assert.equal(space.deletedAt, undefined);
    assert.deepEqual(
      [space.comments, space.changeRequests, space.changeRequestsOpen, space.changeRequestsDraft],
      [0, 0, 0, 0],
    );
    assert.deepEqual(space.urls, { location: `${t.url}/v1/spaces/${space.id}`, app: `${t.url}/app/s/${space.id}` });
    assert.deepEqual(space.permissions, spacePermissionsFor('admin'));
    assert.equal(created.headers.get('location'), space.urls.location);
    assert.ok(Math.abs(Date.parse(space.createdAt) - Date.now()) < 60_000);
    assert.equal(space.createdAt, space.updatedAt);

    // The new space has an active (empty, parentless) first revision of its own.
    assert.match(space.revision, /^[0-9A-Za-z]{20}$/);
    const revision = await t.server.services.db.selectFrom('revisions').selectAll().where('id', '=', space.revision).executeTakeFirstOrThrow();
    assert.equal(revision.space_id, space.id);
    assert.equal(revision.organization_id, org.id);
    assert.deepEqual(revision.parents, []);

    const { data: got } = await admin.api.spaces.getSpaceById(space.id);
    assert.deepEqual(got, space);

    // A minimal body: defaults everywhere.
    const bare = (await admin.api.orgs.createSpace(org.id, {})).data;
    assert.equal(bare.title, '');
    assert.equal(bare.emoji, '');
    assert.equal(bare.parent, undefined);
    assert.equal(bare.language, undefined);
    assert.equal(bare.editMode, 'live');
    assert.notEqual(bare.revision, space.revision);

    const reviewer = await newMember(org.id, 'review', 'Rita Reviewer');
    const { data: updated } = await admin.api.spaces.updateSpaceById(space.id, {
      title: 'Staff handbook',
      emoji: '📗',
      editMode: SpaceEditMode.Live,
      defaultLevel: 'edit' as never,
      language: TranslationLanguage.De,
      mergeRules: { type: 'rules', rules: [{ rule: 'require_specific_reviewers', users: [reviewer.id] }] },
      ...({ visibility: ContentVisibility.Unlisted } as object),
    });
    assert.equal(updated.title, 'Staff handbook');
    assert.equal(updated.emoji, '📗');
    assert.equal(updated.editMode, 'live');
    assert.equal(updated.defaultLevel, 'edit');
    assert.equal(updated.language, 'de');
    assert.deepEqual(updated.mergeRules, { type: 'rules', rules: [{ rule: 'require_specific_reviewers', users: [reviewer.id] }] });
    assert.equal(updated.visibility, 'unlisted');
    assert.equal(updated.createdAt, space.createdAt);
    assert.ok(Date.parse(updated.updatedAt) >= Date.parse(space.updatedAt));
    assert.equal(updated.revision, space.revision);
    assert.equal(updated.parent, guides.id);
    assert.deepEqual((await admin.api.spaces.getSpaceById(space.id)).data, updated);

    // Fields not sent are kept; each field can be changed alone.
    const { data: renamed } = await admin.api.spaces.updateSpaceById(space.id, { title: 'Handbook v2' });
    assert.equal(renamed.emoji, '📗');
    assert.equal(renamed.defaultLevel, 'edit');
    assert.equal(renamed.visibility, 'unlisted');
    const { data: back } = await admin.api.spaces.updateSpaceById(space.id, {
      defaultLevel: null,
      mergeRules: { type: 'inherit' },
      ...({ visibility: 'private' } as object),
    });
    assert.equal(back.defaultLevel, null);
    assert.deepEqual(back.mergeRules, { type: 'inherit' });
    assert.equal(back.visibility, 'private');
    const { data: none } = await admin.api.spaces.updateSpaceById(space.id, { mergeRules: { type: 'none' } });
    assert.deepEqual(none.mergeRules, { type: 'none' });
  });

  test('urls: published unless private, public only when public, icon when set', async () => {
    const { admin, org } = await newOrg();
    const collection = await newCollection(admin, org.id);
    const space = await newSpace(admin, org.id, { parent: collection.id });
    const published = `${t.url}/app/s/${space.id}/published`;
    const base = { location: `${t.url}/v1/spaces/${space.id}`, app: `${t.url}/app/s/${space.id}` };
    const expected: Record<string, object> = {
      private: base,
      public: { ...base, published, public: published },
      unlisted: { ...base, published },
      'share-link': { ...base, published },
      'visitor-auth': { ...base, published },
      'in-collection': { ...base, published },
    };
    for (const [visibility, urls] of Object.entries(expected)) {
      const { data } = await admin.api.spaces.updateSpaceById(space.id, { ...({ visibility } as object) });
      assert.equal(data.visibility, visibility);
      assert.deepEqual(data.urls, urls, visibility);
      assert.deepEqual((await admin.api.spaces.getSpaceById(space.id)).data.urls, urls, visibility);
    }

    // An icon replaces the emoji; an emoji replaces the icon; null removes either.
    await admin.api.spaces.updateSpaceById(space.id, { emoji: '🚀' });
    const { data: withIcon } = await admin.api.spaces.updateSpaceById(space.id, { icon: 'https://cdn.example.com/icon.png' });
    assert.equal(withIcon.urls.icon, 'https://cdn.example.com/icon.png');
    assert.equal(withIcon.emoji, '');
    const { data: withEmoji } = await admin.api.spaces.updateSpaceById(space.id, { emoji: '🎉' });
    assert.equal(withEmoji.emoji, '🎉');
    assert.equal(withEmoji.urls.icon, undefined);
    await admin.api.spaces.updateSpaceById(space.id, { icon: 'https://cdn.example.com/icon.png' });
    const { data: plain } = await admin.api.spaces.updateSpaceById(space.id, { icon: null });
    assert.equal(plain.urls.icon, undefined);
    assert.equal(plain.emoji, '');
  });

  test('in-collection visibility is only for a space inside a collection', async () => {
    const { admin, org } = await newOrg();
    const collection = await newCollection(admin, org.id);
    const top = await newSpace(admin, org.id);

    let res = await t.request('PATCH', `/v1/spaces/${top.id}`, { token: admin.token, body: { visibility: 'in-collection' } });
    assert.equal(res.status, 400);
    assert.match(res.body.error.message, /in-collection/);
    assert.equal((await admin.api.spaces.getSpaceById(top.id)).data.visibility, 'private');

    res = await t.request('POST', `/v1/orgs/${org.id}/spaces`, { token: admin.token, body: { title: 'Nope', visibility: 'in-collection' } });
    assert.equal(res.status, 400);
    assert.match(res.body.error.message, /in-collection.*parent/);

    res = await t.request('POST', `/v1/orgs/${org.id}/spaces`, {
      token: admin.token,
      body: { title: 'Inside', visibility: 'in-collection', parent: collection.id },
    });
    assert.equal(res.status, 201);
    assert.equal(res.body.visibility, 'in-collection');
    const inside = res.body as Space;

    // It cannot leave its collection while in-collection...
    await expectStatus(admin.api.spaces.moveSpace(inside.id, { parent: null }), 400);
    assert.equal((await admin.api.spaces.getSpaceById(inside.id)).data.parent, collection.id);
    // ...but may move to another collection.
    const other = await newCollection(admin, org.id, 'Other');
    const { data: moved } = await admin.api.spaces.moveSpace(inside.id, { parent: other.id });
    assert.equal(moved.parent, other.id);
    assert.equal(moved.visibility, 'in-collection');
  });

  test('lifecycle: delete hides everywhere, restore brings it back in place', async () => {
    const { admin, org } = await newOrg();
    const reader = await newMember(org.id, 'read', 'Rob Reader');
    const guest = await newMember(org.id, null, 'Gus Guest');
    const { data: team } = await admin.api.orgs.createOrganizationTeam(org.id, { title: 'Writers' });
    const collection = await newCollection(admin, org.id);
    const first = await newSpace(admin, org.id, { title: 'First', parent: collection.id });
    const doomed = await newSpace(admin, org.id, { title: 'Doomed', parent: collection.id });
    const last = await newSpace(admin, org.id, { title: 'Last', parent: collection.id });
    const top = await newSpace(admin, org.id, { title: 'Top' });
    await grant(org.id, { space: doomed.id }, { user: guest.id }, 'read');
    await grant(org.id, { space: doomed.id }, { team: team.id }, 'edit');

    const all = [first.id, doomed.id, last.id, top.id];
    assert.deepEqual(await orgSpaceIds(admin, org.id), all);
    assert.deepEqual(await collectionSpaceIds(admin, collection.id), [first.id, doomed.id, last.id]);
    assert.deepEqual(Object.keys(await memberSpaces(admin, org.id, reader.id)).sort(), [...all].sort());
    assert.deepEqual(await memberSpaces(admin, org.id, guest.id), { [doomed.id]: 'read' });
    assert.equal(await spaceCountOf(admin, org.id, reader.id), 4);
    assert.equal(await spaceCountOf(admin, org.id, guest.id), 1);
    assert.equal((await admin.api.orgs.getTeamInOrganizationById(org.id, team.id)).data.spaces, 1);

    // Only admins of the space delete it; others are refused and nothing changes.
    await expectStatus(reader.api.spaces.deleteSpaceById(doomed.id), 403);
    assert.equal((await reader.api.spaces.getSpaceById(doomed.id)).status, 200);

    const deleted = await admin.api.spaces.deleteSpaceById(doomed.id);
    assert.equal(deleted.status, 204);
    const row = await dbSpace(doomed.id);
    assert.ok(row?.deleted_at, 'the row is kept with deleted_at set');

    // Hidden from every list, every read, every change: 404 for everyone (admins included).
    for (const user of [admin, reader, guest]) {
      await expectStatus(user.api.spaces.getSpaceById(doomed.id), 404);
    }
    await expectStatus(admin.api.spaces.updateSpaceById(doomed.id, { title: 'Zombie' }), 404);
    await expectStatus(admin.api.spaces.duplicateSpace(doomed.id), 404);
    await expectStatus(admin.api.spaces.moveSpace(doomed.id, { parent: null }), 404);
    assert.equal((await transfer(admin, doomed.id, { organization: org.id })).status, 404);
    assert.deepEqual(await orgSpaceIds(admin, org.id), [first.id, last.id, top.id]);
    assert.deepEqual(await orgSpaceIds(guest, org.id), []);
    assert.deepEqual(await collectionSpaceIds(admin, collection.id), [first.id, last.id]);
    assert.equal(Object.keys(await memberSpaces(admin, org.id, reader.id)).length, 3);
    assert.deepEqual(await memberSpaces(admin, org.id, guest.id), {});
    assert.equal(await spaceCountOf(admin, org.id, reader.id), 3);
    assert.equal(await spaceCountOf(admin, org.id, guest.id), 0);
    assert.equal((await admin.api.orgs.getTeamInOrganizationById(org.id, team.id)).data.spaces, 0);
    // A deleted space is no valid position pointer either.
    await expectStatus(admin.api.spaces.moveSpace(first.id, { position: { after: { type: 'space', space: doomed.id } } }), 400);
    // Deleting again is still a 204 and changes nothing.
    assert.equal((await admin.api.spaces.deleteSpaceById(doomed.id)).status, 204);
    assert.equal((await dbSpace(doomed.id))?.deleted_at?.getTime(), row.deleted_at.getTime());

    // Restoring needs admin on the space: readers of it get 403, others 404.
    await expectStatus(reader.api.spaces.restoreSpace(doomed.id), 403);
    await expectStatus(guest.api.spaces.restoreSpace(doomed.id), 403);
    const outsider = await t.user('Olga Outsider');
    await expectStatus(outsider.api.spaces.restoreSpace(doomed.id), 404);
    await expectStatus(admin.api.spaces.restoreSpace('no-such-space'), 404);

    const { data: restored } = await admin.api.spaces.restoreSpace(doomed.id);
    assert.equal(restored.id, doomed.id);
    assert.equal(restored.deletedAt, undefined);
    assert.equal(restored.title, 'Doomed');
    assert.equal(restored.parent, collection.id);
    assert.equal(restored.revision, doomed.revision);
    assert.deepEqual(restored.permissions, spacePermissionsFor('admin'));

    // Visible again everywhere, at its place, with its grants.
    assert.deepEqual(await orgSpaceIds(admin, org.id), all);
    assert.deepEqual(await collectionSpaceIds(admin, collection.id), [first.id, doomed.id, last.id]);
    assert.deepEqual(await memberSpaces(admin, org.id, guest.id), { [doomed.id]: 'read' });
    assert.equal(await spaceCountOf(admin, org.id, reader.id), 4);
    assert.equal((await admin.api.orgs.getTeamInOrganizationById(org.id, team.id)).data.spaces, 1);
    assert.equal((await guest.api.spaces.getSpaceById(doomed.id)).data.title, 'Doomed');
    // Restoring a live space is harmless.
    assert.equal((await admin.api.spaces.restoreSpace(doomed.id)).data.deletedAt, undefined);
  });

  test('a restored space gets a place of its own among siblings created meanwhile', async () => {
    const { admin, org } = await newOrg();
    const collection = await newCollection(admin, org.id);
    const a = await newSpace(admin, org.id, { title: 'A', parent: collection.id });
    const b = await newSpace(admin, org.id, { title: 'B', parent: collection.id });
    await admin.api.spaces.deleteSpaceById(b.id);
    // C takes the last place while B is in the trash.
    const c = await newSpace(admin, org.id, { title: 'C', parent: collection.id });
    await admin.api.spaces.restoreSpace(b.id);
    const order = await collectionSpaceIds(admin, collection.id);
    assert.equal(order.length, 3);
    const positions = await t.server.services.db.selectFrom('spaces').select('position').where('parent_id', '=', collection.id).execute();
    assert.equal(new Set(positions.map((p) => p.position)).size, 3, 'no two siblings share a position');
    // Every item can be placed exactly relative to every other.
    await admin.api.spaces.moveSpace(a.id, { position: { after: { type: 'space', space: order[2]! } } });
    assert.deepEqual(await collectionSpaceIds(admin, collection.id), [order[1], order[2], a.id]);
    await admin.api.spaces.moveSpace(a.id, { position: { before: { type: 'space', space: b.id } } });
    const final = await collectionSpaceIds(admin, collection.id);
    assert.equal(final[final.indexOf(b.id) - 1], a.id);
    assert.ok(final.includes(c.id));
  });

  test('deleted then restored after its collection was deleted: back at the top level', async () => {
    const { admin, org } = await newOrg();
    const collection = await newCollection(admin, org.id);
    const inside = await newSpace(admin, org.id, { title: 'Inside', parent: collection.id });
    await admin.api.spaces.updateSpaceById(inside.id, { ...({ visibility: 'in-collection' } as object) });
    const top = await newSpace(admin, org.id, { title: 'Top' });
    await admin.api.collections.deleteCollectionById(collection.id);
    await expectStatus(admin.api.spaces.getSpaceById(inside.id), 404);
    const { data: restored } = await admin.api.spaces.restoreSpace(inside.id);
    assert.equal(restored.parent, undefined);
    // in-collection is not valid outside a collection: it falls back to private.
    assert.equal(restored.visibility, 'private');
    const positions = await t.server.services.db
      .selectFrom('spaces')
      .select('position')
      .where('organization_id', '=', org.id)
      .where('parent_id', 'is', null)
      .execute();
    assert.equal(new Set(positions.map((p) => p.position)).size, positions.length);
    await admin.api.spaces.moveSpace(inside.id, { position: { before: { type: 'space', space: top.id } } });
  });

  test('deleted spaces are purged once the retention period passes, and cannot be restored', async () => {
    const admin = await t.user('Ann Admin');
    const guest = await t.user('Gus Guest');
    const { data: org } = await admin.api.orgs.createOrganization({ title: 'Purge Inc' });
    await addMember(t, org.id, guest, null);
    const doomed = await newSpace(admin, org.id, { title: 'Doomed' });
    const kept = await newSpace(admin, org.id, { title: 'Kept' });
    await t.server.services.db
      .insertInto('content_permissions')
      .values({ organization_id: org.id, target_type: 'space', target_id: doomed.id, principal_type: 'user', principal_id: guest.id, role: 'read', created_at: new Date() })
      .execute();

    await admin.api.spaces.deleteSpaceById(doomed.id);
    // Kept is deleted and restored within the retention period: its purge job must not remove it.
    await admin.api.spaces.deleteSpaceById(kept.id);
    await admin.api.spaces.restoreSpace(kept.id);

    const db = t.server.services.db;
    const purgeJobs = (status: ('queued' | 'running' | 'failed')[]) =>
      db.selectFrom('jobs').select(['id', 'status', 'last_error']).where('type', '=', 'space.purge').where(sql<string>`payload->>'spaceId'`, 'in', [doomed.id, kept.id]).where('status', 'in', status).execute();
    // Within the retention period, nothing is purged.
    await settleJobs(t);
    assert.ok(await db.selectFrom('spaces').select('id').where('id', '=', doomed.id).executeTakeFirst(), 'not purged before its time');
    assert.equal((await purgeJobs(['queued'])).length, 2);
    // The retention period passes on the server's clock: the purge jobs are due and run.
    t.clock.advance(t.server.services.config.spaceRetentionMs);
    await settleJobs(t);
    assert.equal(await db.selectFrom('spaces').select('id').where('id', '=', doomed.id).executeTakeFirst(), undefined, 'purged');
    assert.equal(await db.selectFrom('revisions').select('id').where('space_id', '=', doomed.id).executeTakeFirst(), undefined);
    assert.equal(
      await db.selectFrom('content_permissions').select('target_id').where('target_id', '=', doomed.id).executeTakeFirst(),
      undefined,
    );
    await expectStatus(admin.api.spaces.restoreSpace(doomed.id), 404);
    await expectStatus(admin.api.spaces.getSpaceById(doomed.id), 404);
    assert.equal((await admin.api.spaces.deleteSpaceById(doomed.id)).status, 204);

    // Kept's (stale) purge job has run too: the space survives it.
    assert.deepEqual(await purgeJobs(['queued', 'running']), []);
    const { data: alive } = await admin.api.spaces.getSpaceById(kept.id);
    assert.equal(alive.title, 'Kept');
    assert.deepEqual(await purgeJobs(['failed']), []);
  });

  test('a space whose retention has passed but is not purged yet cannot be restored', async () => {
    const { admin, org } = await newOrg();
    const space = await newSpace(admin, org.id);
    await admin.api.spaces.deleteSpaceById(space.id);
    const retention = t.server.services.config.spaceRetentionMs;
    await t.server.services.db
      .updateTable('spaces')
      .set({ deleted_at: new Date(Date.now() - retention - 1000) })
      .where('id', '=', space.id)
      .execute();
    await expectStatus(admin.api.spaces.restoreSpace(space.id), 404);
  });

  test('duplicate copies content, settings and grants, lands right after the source (201)', async () => {
    const { admin, org } = await newOrg();
    const guest = await newMember(org.id, null, 'Gus Guest');
    const collection = await newCollection(admin, org.id);
    const source = await newSpace(admin, org.id, {
      title: 'Source',
      emoji: '🧪',
      parent: collection.id,
      language: TranslationLanguage.Ja,
      editMode: SpaceEditMode.Locked,
    });
    const next = await newSpace(admin, org.id, { title: 'Next', parent: collection.id });
    await admin.api.spaces.updateSpaceById(source.id, {
      defaultLevel: 'comment' as never,
      mergeRules: { type: 'rules', rules: [{ rule: 'require_specific_reviewers', users: [admin.id] }] },
      ...({ visibility: 'unlisted' } as object),
    });
    await grant(org.id, { space: source.id }, { user: guest.id }, 'edit');
    const { data: src } = await admin.api.spaces.getSpaceById(source.id);

    const res = await admin.api.spaces.duplicateSpace(source.id);
    assert.equal(res.status, 201);
    const copy = res.data;
    assert.equal(res.headers.get('location'), `${t.url}/v1/spaces/${copy.id}`);
    assert.notEqual(copy.id, src.id);
    assert.notEqual(copy.revision, src.revision);
    assert.equal(copy.title, 'Source (copy)');
    for (const field of ['emoji', 'visibility', 'editMode', 'mergeRules', 'organization', 'parent', 'language', 'defaultLevel'] as const) {
      assert.deepEqual(copy[field], src[field], field);
    }
    assert.deepEqual(copy.permissions, spacePermissionsFor('admin'));
    // The copy's first revision continues from the source's content.
    const revision = await t.server.services.db.selectFrom('revisions').selectAll().where('id', '=', copy.revision).executeTakeFirstOrThrow();
    assert.equal(revision.space_id, copy.id);
    assert.deepEqual(revision.parents, [src.revision]);

    assert.deepEqual(await collectionSpaceIds(admin, collection.id), [source.id, copy.id, next.id]);
    // Grants follow the copy; the source is unchanged.
    assert.deepEqual(await memberSpaces(admin, org.id, guest.id), { [source.id]: 'edit', [copy.id]: 'edit' });
    assert.deepEqual((await admin.api.spaces.getSpaceById(source.id)).data, src);

    // A copy of a copy goes right after that copy; long titles stay within 50 characters.
    await admin.api.spaces.updateSpaceById(copy.id, { title: 'x'.repeat(50) });
    const { data: copy2 } = await admin.api.spaces.duplicateSpace(copy.id);
    assert.equal(copy2.title.length, 50);
    assert.deepEqual(await collectionSpaceIds(admin, collection.id), [source.id, copy.id, copy2.id, next.id]);
  });

  test('duplicating needs the create role where the copy lands', async () => {
    const { admin, org } = await newOrg();
    const collection = await newCollection(admin, org.id);
    const inside = await newSpace(admin, org.id, { parent: collection.id });
    const top = await newSpace(admin, org.id);
    // A guest administering one space inside a collection, but with no role on the collection.
    const guest = await newMember(org.id, null, 'Gus Guest');
    await grant(org.id, { space: inside.id }, { user: guest.id }, 'admin');
    await grant(org.id, { space: top.id }, { user: guest.id }, 'admin');
    let res = await t.request('POST', `/v1/spaces/${inside.id}/duplicate`, { token: guest.token });
    assert.equal(res.status, 403);
    assert.match(res.body.error.message, /create/);
    res = await t.request('POST', `/v1/spaces/${top.id}/duplicate`, { token: guest.token });
    assert.equal(res.status, 403);
    // With create on the collection it may.
    await grant(org.id, { collection: collection.id }, { user: guest.id }, 'create');
    assert.equal((await guest.api.spaces.duplicateSpace(inside.id)).status, 201);
  });
});

describe('space ordering', () => {
  test('50 random moves with before/after among spaces and collections produce exactly the requested order', async () => {
    const { admin, org } = await newOrg();
    const parent = await newCollection(admin, org.id, 'Parent');
    type Item = { type: 'space'; id: string } | { type: 'collection'; id: string };
    const model: Item[] = [];
    for (let i = 0; i < 12; i++) {
      if (i % 3 === 2) model.push({ type: 'collection', id: (await newCollection(admin, org.id, `C${i}`, parent.id)).id });
      else model.push({ type: 'space', id: (await newSpace(admin, org.id, { title: `S${i}`, parent: parent.id })).id });
    }
    // Unrelated siblings elsewhere must not interfere.
    await newSpace(admin, org.id, { title: 'Top' });

    const pointer = (item: Item) =>
      item.type === 'space' ? { type: 'space' as const, space: item.id } : { type: 'collection' as const, collection: item.id };
    const actualOrder = async () => {
      const rows = await t.server.services.db
        .selectFrom('spaces')
        .select(['id', 'position'])
        .where('parent_id', '=', parent.id)
        .where('deleted_at', 'is', null)
        .unionAll(t.server.services.db.selectFrom('collections').select(['id', 'position']).where('parent_id', '=', parent.id))
        .execute();
      rows.sort((a, b) => (a.position < b.position ? -1 : a.position > b.position ? 1 : 0));
      assert.equal(new Set(rows.map((r) => r.position)).size, rows.length, 'positions are unique');
      return rows.map((r) => r.id);
    };
    const expectModel = async (label: string) => {
      assert.deepEqual(await collectionSpaceIds(admin, parent.id), model.filter((i) => i.type === 'space').map((i) => i.id), label);
      assert.deepEqual(await actualOrder(), model.map((i) => i.id), label);
    };
    await expectModel('initial');

    const random = prng(20240601);
    const pick = (n: number) => Math.floor(random() * n);
    for (let move = 0; move < 50; move++) {
      const moving = model[pick(model.length)]!;
      const rest = model.filter((i) => i.id !== moving.id);
      const anchorIndex = pick(rest.length);
      const anchor = rest[anchorIndex]!;
      const mode = pick(3);
      let position: { before?: ReturnType<typeof pointer>; after?: ReturnType<typeof pointer> };
      let insertAt: number;
      if (mode === 0) {
        position = { before: pointer(anchor) };
        insertAt = anchorIndex;
      } else if (mode === 1) {
        position = { after: pointer(anchor) };
        insertAt = anchorIndex + 1;
      } else {
        // Between two adjacent siblings (after the anchor, before its successor when there is one).
        const successor = rest[anchorIndex + 1];
        position = successor ? { after: pointer(anchor), before: pointer(successor) } : { after: pointer(anchor) };
        insertAt = anchorIndex + 1;
      }
      const body = { position, ...(random() < 0.3 ? { parent: parent.id } : {}) };
      if (moving.type === 'space') {
        const { data } = await admin.api.spaces.moveSpace(moving.id, body);
        assert.equal(data.parent, parent.id);
      } else {
        const { data } = await admin.api.collections.moveCollection(moving.id, body);
        assert.equal(data.parent, parent.id);
      }
      rest.splice(insertAt, 0, moving);
      model.splice(0, model.length, ...rest);
      if (move % 10 === 9) await expectModel(`after move ${move + 1}`);
    }
    await expectModel('final');

    // Moves that leave the order unchanged in the model are refused when the pointer is invalid.
    const [a, b, c] = model as [Item, Item, Item];
    const spaceItem = model.slice(3).find((i) => i.type === 'space')!;
    const move = (body: unknown) => t.request('POST', `/v1/spaces/${spaceItem.id}/move`, { token: admin.token, body });
    const top = await newSpace(admin, org.id, { title: 'Elsewhere' });
    const cases: [unknown, RegExp][] = [
      [{ position: { after: { type: 'space', space: top.id } } }, /position\.after/],
      [{ position: { before: { type: 'space', space: 'no-such-space' } } }, /position\.before/],
      [{ position: { before: { type: 'collection', collection: parent.id } } }, /position\.before/],
      [{ position: { after: { type: 'collection', collection: 'no-such-collection' } } }, /position\.after/],
      [{ position: { after: { type: 'space', space: spaceItem.id } } }, /position\.after.*itself/],
      [{ position: { after: pointer(c), before: pointer(a) } }, /position/],
      [{ position: { after: pointer(a), before: pointer(c) } }, /adjacent/],
      [{ position: { before: { type: 'space', space: b.id } }, parent: null }, /position\.before/],
    ];
    for (const [body, message] of cases) {
      const res = await move(body);
      assert.equal(res.status, 400, JSON.stringify(body));
      assert.match(res.body.error.message, message, JSON.stringify(body));
    }
    await expectModel('after refused moves');
  });

  test('moving a space between collections and to the top level', async () => {
    const { admin, org } = await newOrg();
    const one = await newCollection(admin, org.id, 'One');
    const two = await newCollection(admin, org.id, 'Two');
    const x = await newSpace(admin, org.id, { title: 'X', parent: one.id });
    const y = await newSpace(admin, org.id, { title: 'Y', parent: two.id });
    const z = await newSpace(admin, org.id, { title: 'Z', parent: two.id });

    // Into another collection, by default at the end; then at a given place.
    const { data: moved } = await admin.api.spaces.moveSpace(x.id, { parent: two.id });
    assert.equal(moved.parent, two.id);
    assert.deepEqual(await collectionSpaceIds(admin, one.id), []);
    assert.deepEqual(await collectionSpaceIds(admin, two.id), [y.id, z.id, x.id]);
    await admin.api.spaces.moveSpace(x.id, { parent: one.id });
    await admin.api.spaces.moveSpace(x.id, { parent: two.id, position: { before: { type: 'space', space: y.id } } });
    assert.deepEqual(await collectionSpaceIds(admin, two.id), [x.id, y.id, z.id]);
    // To the top level.
    const { data: top } = await admin.api.spaces.moveSpace(x.id, { parent: null });
    assert.equal(top.parent, undefined);
    assert.deepEqual(await collectionSpaceIds(admin, two.id), [y.id, z.id]);
    // A position relative to a sibling in the *new* parent.
    const { data: back } = await admin.api.spaces.moveSpace(x.id, { parent: two.id, position: { after: { type: 'space', space: y.id } } });
    assert.equal(back.parent, two.id);
    assert.deepEqual(await collectionSpaceIds(admin, two.id), [y.id, x.id, z.id]);
    // Nothing to do is a 400.
    const res = await t.request('POST', `/v1/spaces/${x.id}/move`, { token: admin.token, body: {} });
    assert.equal(res.status, 400);
  });

  test('concurrent moves under one parent never produce equal positions', async () => {
    const { admin, org } = await newOrg();
    const parent = await newCollection(admin, org.id);
    const spaces: string[] = [];
    for (let i = 0; i < 6; i++) spaces.push((await newSpace(admin, org.id, { title: `S${i}`, parent: parent.id })).id);
    // Everyone moves to the end at the same time.
    await Promise.all(spaces.slice(0, 5).map((id) => admin.api.spaces.moveSpace(id, { parent: parent.id })));
    const rows = await t.server.services.db.selectFrom('spaces').select('position').where('parent_id', '=', parent.id).execute();
    assert.equal(new Set(rows.map((r) => r.position)).size, 6);
    assert.equal((await collectionSpaceIds(admin, parent.id))[0], spaces[5]);
  });
});

describe('space transfer', () => {
  test('to another organization: the space, its revisions and the grants that can follow move along', async () => {
    const { admin, org } = await newOrg('Source Org');
    const { data: target } = await admin.api.orgs.createOrganization({ title: 'Target Org' });
    const both = await newMember(org.id, 'read', 'Bea Both');
    await addMember(t, target.id, both, null);
    const sourceOnly = await newMember(org.id, null, 'Sam Source');
    const { data: team } = await admin.api.orgs.createOrganizationTeam(org.id, { title: 'Writers' });
    const collection = await newCollection(admin, org.id);
    const space = await newSpace(admin, org.id, { title: 'Traveller', parent: collection.id });
    await grant(org.id, { space: space.id }, { user: both.id }, 'edit');
    await grant(org.id, { space: space.id }, { user: sourceOnly.id }, 'read');
    await grant(org.id, { space: space.id }, { team: team.id }, 'comment');
    const targetCollection = await newCollection(admin, target.id, 'Landing');

    const res = await transfer(admin, space.id, { organization: target.id, collection: targetCollection.id });
    assert.equal(res.status, 200, JSON.stringify(res.body));
    assert.equal(res.body.organization, target.id);
    assert.equal(res.body.parent, targetCollection.id);
    assert.equal(res.body.title, 'Traveller');
    assert.deepEqual(res.body.permissions, spacePermissionsFor('admin'));

    assert.ok(!(await orgSpaceIds(admin, org.id)).includes(space.id));
    assert.deepEqual(await collectionSpaceIds(admin, collection.id), []);
    assert.deepEqual(await orgSpaceIds(admin, target.id), [space.id]);
    assert.deepEqual(await collectionSpaceIds(admin, targetCollection.id), [space.id]);
    const revisions = await t.server.services.db.selectFrom('revisions').select('organization_id').where('space_id', '=', space.id).execute();
    assert.deepEqual(revisions.map((r) => r.organization_id), [target.id]);

    // The grant of the user who belongs to both organizations follows; the others are dropped.
    const grants = await t.server.services.db.selectFrom('content_permissions').selectAll().where('target_id', '=', space.id).execute();
    assert.deepEqual(grants.map((g) => [g.organization_id, g.principal_type, g.principal_id, g.role]), [[target.id, 'user', both.id, 'edit']]);
    assert.deepEqual(await memberSpaces(admin, target.id, both.id), { [space.id]: 'edit' });
    await expectStatus(sourceOnly.api.spaces.getSpaceById(space.id), 404);
    assert.equal((await admin.api.orgs.getTeamInOrganizationById(org.id, team.id)).data.spaces, 0);
  });

  test('to a collection of the same organization keeps every grant; in-collection falls back to private at the top level', async () => {
    const { admin, org } = await newOrg();
    const { data: team } = await admin.api.orgs.createOrganizationTeam(org.id, { title: 'Writers' });
    const guest = await newMember(org.id, null, 'Gus Guest');
    const one = await newCollection(admin, org.id, 'One');
    const two = await newCollection(admin, org.id, 'Two');
    const space = await newSpace(admin, org.id, { parent: one.id });
    await admin.api.spaces.updateSpaceById(space.id, { ...({ visibility: 'in-collection' } as object) });
    await grant(org.id, { space: space.id }, { team: team.id }, 'edit');
    await grant(org.id, { space: space.id }, { user: guest.id }, 'read');

    let res = await transfer(admin, space.id, { organization: org.id, collection: two.id });
    assert.equal(res.status, 200);
    assert.equal(res.body.parent, two.id);
    assert.equal(res.body.visibility, 'in-collection');
    const grants = await t.server.services.db.selectFrom('content_permissions').select(['principal_type', 'role']).where('target_id', '=', space.id).execute();
    assert.deepEqual(grants.map((g) => `${g.principal_type}:${g.role}`).sort(), ['team:edit', 'user:read']);
    assert.equal((await admin.api.orgs.getTeamInOrganizationById(org.id, team.id)).data.spaces, 1);

    res = await transfer(admin, space.id, { organization: org.id });
    assert.equal(res.status, 200);
    assert.equal(res.body.parent, undefined);
    assert.equal(res.body.visibility, 'private');
  });

  test('who may transfer, and bad transfer bodies', async () => {
    const { admin, org } = await newOrg();
    const { data: target } = await admin.api.orgs.createOrganization({ title: 'Target' });
    const { data: foreign } = await (await t.user('Fay Foreign')).api.orgs.createOrganization({ title: 'Foreign' });
    const space = await newSpace(admin, org.id);
    const targetColl = await newCollection(admin, target.id);
    const sourceColl = await newCollection(admin, org.id);
    // An editor of the space who is admin of the target organization.
    const editor = await newMember(org.id, 'edit', 'Ed Editor');
    await addMember(t, target.id, editor, 'admin');
    // An admin of the source who only reads in the target.
    const partial = await newMember(org.id, 'admin', 'Pat Partial');
    await addMember(t, target.id, partial, 'read');

    const cases: [TestUser, unknown, number, RegExp?][] = [
      [editor, { organization: target.id }, 403, /admin/],
      [partial, { organization: target.id }, 403, /target/],
      [admin, { organization: foreign.id }, 404],
      [admin, { organization: 'no-such-org' }, 404],
      [admin, {}, 400, /organization/],
      [admin, { organization: 42 }, 400, /organization/],
      [admin, { organization: target.id, collection: 'no-such-collection' }, 400, /collection/],
      [admin, { organization: target.id, collection: sourceColl.id }, 400, /collection/],
      [admin, { organization: target.id, collection: 7 }, 400, /collection/],
    ];
    for (const [user, body, status, message] of cases) {
      const res = await transfer(user, space.id, body);
      assert.equal(res.status, status, `${JSON.stringify(body)}: ${JSON.stringify(res.body)}`);
      if (message) assert.match(res.body.error.message, message);
    }
    const outsider = await t.user('Olga Outsider');
    assert.equal((await transfer(outsider, space.id, { organization: target.id })).status, 404);
    // Nothing moved.
    assert.equal((await admin.api.spaces.getSpaceById(space.id)).data.organization, org.id);

    const res = await transfer(admin, space.id, { organization: target.id, collection: targetColl.id });
    assert.equal(res.status, 200);
    assert.equal(res.body.parent, targetColl.id);
  });
});

describe('space access', () => {
  test('outsiders: 404 on private spaces; public and unlisted readable, share-link with the right key only', async () => {
    const { admin, org } = await newOrg();
    const outsider = await t.user('Olga Outsider');
    const space = await newSpace(admin, org.id, { title: 'Secret' });

    const missing = await t.request('GET', `/v1/spaces/no-such-space`, { token: outsider.token });
    const hidden = await t.request('GET', `/v1/spaces/${space.id}`, { token: outsider.token });
    assert.equal(hidden.status, 404);
    assert.deepEqual(hidden.body, missing.body, 'a private space looks exactly like a missing one');
    await expectStatus(outsider.api.spaces.updateSpaceById(space.id, { title: 'Mine' }), 404);
    await expectStatus(outsider.api.orgs.listSpacesInOrganizationById(org.id), 404);

    const readOnly = spacePermissionsFor('read');
    for (const visibility of ['public', 'unlisted'] as const) {
      await admin.api.spaces.updateSpaceById(space.id, { ...({ visibility } as object) });
      const { data } = await outsider.api.spaces.getSpaceById(space.id);
      assert.equal(data.title, 'Secret');
      assert.deepEqual(data.permissions, readOnly, visibility);
      assert.equal(data.permissions.edit, false);
      // Readable is not writable.
      await expectStatus(outsider.api.spaces.updateSpaceById(space.id, { title: 'Mine' }), 403);
      await expectStatus(outsider.api.spaces.moveSpace(space.id, { parent: null }), 403);
      await expectStatus(outsider.api.spaces.deleteSpaceById(space.id), 403);
      // Visible, so a refusal says why (duplicating takes the create role in the organization).
      await expectStatus(outsider.api.spaces.duplicateSpace(space.id), 403);
      // Still not listed in an organization the outsider does not belong to.
      await expectStatus(outsider.api.orgs.listSpacesInOrganizationById(org.id), 404);
    }

    await admin.api.spaces.updateSpaceById(space.id, { ...({ visibility: 'share-link' } as object) });
    const { share_key: shareKey } = (await dbSpace(space.id))!;
    await expectStatus(outsider.api.spaces.getSpaceById(space.id), 404);
    await expectStatus(outsider.api.spaces.getSpaceById(space.id, { shareKey: 'wrong-key' }), 404);
    const { data: shared } = await outsider.api.spaces.getSpaceById(space.id, { shareKey });
    assert.deepEqual(shared.permissions, readOnly);
    assert.equal(shared.urls.published, `${t.url}/app/s/${space.id}/published`);
    // The key of one space opens no other.
    const other = await newSpace(admin, org.id);
    await admin.api.spaces.updateSpaceById(other.id, { ...({ visibility: 'share-link' } as object) });
    await expectStatus(outsider.api.spaces.getSpaceById(other.id, { shareKey }), 404);
    // The key only opens a share-link space.
    await admin.api.spaces.updateSpaceById(space.id, { ...({ visibility: 'private' } as object) });
    await expectStatus(outsider.api.spaces.getSpaceById(space.id, { shareKey }), 404);
    await admin.api.spaces.updateSpaceById(space.id, { ...({ visibility: 'visitor-auth' } as object) });
    await expectStatus(outsider.api.spaces.getSpaceById(space.id), 404);
  });

  test('guests see only what they were granted: directly, through a team, through a parent collection', async () => {
    const { admin, org } = await newOrg();
    const guest = await newMember(org.id, null, 'Gus Guest');
    const { data: team } = await admin.api.orgs.createOrganizationTeam(org.id, { title: 'Partners', members: [guest.id] });
    const granted = await newCollection(admin, org.id, 'Granted');
    const nested = await newCollection(admin, org.id, 'Nested', granted.id);
    const hidden = await newCollection(admin, org.id, 'Hidden');
    const direct = await newSpace(admin, org.id, { title: 'Direct' });
    const viaTeam = await newSpace(admin, org.id, { title: 'Via team', parent: hidden.id });
    const inGranted = await newSpace(admin, org.id, { title: 'In granted', parent: granted.id });
    const inNested = await newSpace(admin, org.id, { title: 'In nested', parent: nested.id });
    const notGranted = await newSpace(admin, org.id, { title: 'Not granted', parent: hidden.id });
    const publicOne = await newSpace(admin, org.id, { title: 'Public' });
    await admin.api.spaces.updateSpaceById(publicOne.id, { ...({ visibility: 'public' } as object) });
    await grant(org.id, { space: direct.id }, { user: guest.id }, 'edit');
    await grant(org.id, { space: viaTeam.id }, { team: team.id }, 'comment');
    await grant(org.id, { collection: granted.id }, { user: guest.id }, 'read');
    // The strongest grant wins: read on the collection, review directly on a space inside it.
    await grant(org.id, { space: inNested.id }, { user: guest.id }, 'review');

    const expected: Record<string, Role> = {
      [direct.id]: 'edit',
      [viaTeam.id]: 'comment',
      [inGranted.id]: 'read',
      [inNested.id]: 'review',
    };
    assert.deepEqual((await orgSpaceIds(guest, org.id)).sort(), Object.keys(expected).sort());
    for (const [id, role] of Object.entries(expected)) {
      const { data } = await guest.api.spaces.getSpaceById(id);
      assert.deepEqual(data.permissions, spacePermissionsFor(role), `${data.title}`);
    }
    const { data: listed } = await guest.api.orgs.listSpacesInOrganizationById(org.id);
    for (const s of listed.items) assert.deepEqual(s.permissions, spacePermissionsFor(expected[s.id]!), s.title);
    await expectStatus(guest.api.spaces.getSpaceById(notGranted.id), 404);
    // Public spaces are readable by anyone, but a guest's lists show only what was granted.
    assert.deepEqual((await guest.api.spaces.getSpaceById(publicOne.id)).data.permissions, spacePermissionsFor('read'));
    assert.deepEqual(await collectionSpaceIds(guest, granted.id), [inGranted.id]);
    assert.deepEqual(await collectionSpaceIds(guest, nested.id), [inNested.id]);
    await expectStatus(guest.api.collections.listSpacesInCollectionById(hidden.id), 404);

    // What the member-spaces list and counters say agrees.
    assert.deepEqual(await memberSpaces(admin, org.id, guest.id), expected);
    assert.deepEqual(await memberSpaces(guest, org.id, guest.id), expected);
    assert.equal(await spaceCountOf(admin, org.id, guest.id), 4);
    assert.equal((await admin.api.orgs.getTeamInOrganizationById(org.id, team.id)).data.spaces, 1);
    for (const item of (await guest.api.orgs.listSpacesForOrganizationMember(org.id, guest.id)).data.items) {
      // `space.permissions` is the caller's; `permission` the member's.
      assert.deepEqual(item.space.permissions, spacePermissionsFor(item.permission));
    }

    // What the guest may do follows the role: edit changes the title, not the visibility.
    assert.equal((await guest.api.spaces.updateSpaceById(direct.id, { title: 'Directly edited' })).data.title, 'Directly edited');
    await expectStatus(guest.api.spaces.updateSpaceById(direct.id, { ...({ visibility: 'public' } as object) }), 403);
    await expectStatus(guest.api.spaces.updateSpaceById(viaTeam.id, { title: 'No' }), 403);
    await expectStatus(guest.api.spaces.updateSpaceById(notGranted.id, { title: 'No' }), 404);

    // Leaving the team takes that access away.
    await admin.api.orgs.deleteMemberFromOrganizationTeamById(org.id, team.id, guest.id);
    await expectStatus(guest.api.spaces.getSpaceById(viaTeam.id), 404);
    assert.equal(await spaceCountOf(admin, org.id, guest.id), 3);
  });

  test('defaultLevel raises the role of members: on the space, on its collection, inherited through parents', async () => {
    const { admin, org } = await newOrg();
    const reader = await newMember(org.id, 'read', 'Rob Reader');
    const guest = await newMember(org.id, null, 'Gus Guest');
    const outer = await newCollection(admin, org.id, 'Outer');
    const inner = await newCollection(admin, org.id, 'Inner', outer.id);
    const space = await newSpace(admin, org.id, { parent: inner.id });
    await grant(org.id, { space: space.id }, { user: guest.id }, 'read');
    const roleOf = async (user: TestUser) => (await user.api.spaces.getSpaceById(space.id)).data.permissions;

    assert.deepEqual(await roleOf(reader), spacePermissionsFor('read'));
    await expectStatus(reader.api.spaces.updateSpaceById(space.id, { title: 'No' }), 403);

    await admin.api.collections.updateCollectionById(outer.id, { defaultLevel: 'edit' as never });
    assert.deepEqual(await roleOf(reader), spacePermissionsFor('edit'), 'inherited from the outer collection');
    assert.equal((await reader.api.spaces.updateSpaceById(space.id, { title: 'Edited by reader' })).status, 200);
    assert.deepEqual(await memberSpaces(admin, org.id, reader.id), { [space.id]: 'edit' });
    // Guests do not get default levels.
    assert.deepEqual(await roleOf(guest), spacePermissionsFor('read'));

    await admin.api.collections.updateCollectionById(inner.id, { defaultLevel: 'comment' as never });
    assert.deepEqual(await roleOf(reader), spacePermissionsFor('comment'), 'the nearest explicit level wins');
    await admin.api.spaces.updateSpaceById(space.id, { defaultLevel: 'admin' as never });
    assert.deepEqual(await roleOf(reader), spacePermissionsFor('admin'), 'the space level wins');
    await admin.api.spaces.updateSpaceById(space.id, { defaultLevel: null });
    assert.deepEqual(await roleOf(reader), spacePermissionsFor('read'), 'null: the organization role only');
    await admin.api.spaces.updateSpaceById(space.id, { defaultLevel: 'inherit' as never });
    await admin.api.collections.updateCollectionById(inner.id, { defaultLevel: 'inherit' as never });
    assert.deepEqual(await roleOf(reader), spacePermissionsFor('edit'));
    // A default level never lowers an organization role.
    assert.deepEqual(await roleOf(admin), spacePermissionsFor('admin'));
  });
});

describe('space permission matrix', () => {
  test('each role × each space operation', async () => {
    const { owner, org, people } = await orgWithPersonas(t);
    const collection = await newCollection(owner, org.id, 'Shelf');
    const shared = await newSpace(owner, org.id, { title: 'Shared' });
    const anchor = await newSpace(owner, org.id, { title: 'Anchor' });
    const visible = (p: Persona) => p !== null && p !== 'outsider';
    const role = (p: Persona): RoleOrGuest => (p === 'outsider' ? null : p);
    const need = (p: Persona, min: Role, ok: number) => (!visible(p) ? 404 : atLeast(role(p), min) ? ok : 403);
    const expected: Record<string, (p: Persona) => number> = {
      get: (p) => (visible(p) ? 200 : 404),
      updateTitle: (p) => need(p, 'edit', 200),
      updateLanguage: (p) => need(p, 'edit', 200),
      updateVisibility: (p) => need(p, 'admin', 200),
      updateEditMode: (p) => need(p, 'admin', 200),
      updateDefaultLevel: (p) => need(p, 'admin', 200),
      updateMergeRules: (p) => need(p, 'admin', 200),
      delete: (p) => (!visible(p) ? 204 : atLeast(role(p), 'admin') ? 204 : 403),
      restore: (p) => need(p, 'admin', 200),
      duplicate: (p) => need(p, 'create', 201),
      move: (p) => need(p, 'admin', 200),
      transfer: (p) => need(p, 'admin', 200),
      createTop: (p) => (p === 'outsider' ? 404 : atLeast(role(p), 'create') ? 201 : 403),
      createInCollection: (p) => (p === 'outsider' ? 404 : p === null ? 400 : atLeast(role(p), 'create') ? 201 : 403),
      list: (p) => (p === 'outsider' ? 404 : 200),
    };
    for (const persona of PERSONAS) {
      const user = people.get(persona)!;
      const api = user.api;
      const name = personaName(persona);
      const own = await newSpace(owner, org.id, { title: `Delete ${name}` });
      const trashed = await newSpace(owner, org.id, { title: `Restore ${name}` });
      await owner.api.spaces.deleteSpaceById(trashed.id);
      const travelling = await newSpace(owner, org.id, { title: `Transfer ${name}` });
      const { data: target } = await user.api.orgs.createOrganization({ title: `Target of ${name}` });

      const got: Record<string, number> = {
        get: await statusOf(api.spaces.getSpaceById(shared.id)),
        updateTitle: await statusOf(api.spaces.updateSpaceById(shared.id, { title: `By ${name}` })),
        updateLanguage: await statusOf(api.spaces.updateSpaceById(shared.id, { language: TranslationLanguage.En })),
        updateVisibility: await statusOf(api.spaces.updateSpaceById(shared.id, { ...({ visibility: 'private' } as object) })),
        updateEditMode: await statusOf(api.spaces.updateSpaceById(shared.id, { editMode: SpaceEditMode.Live })),
        updateDefaultLevel: await statusOf(api.spaces.updateSpaceById(shared.id, { defaultLevel: 'inherit' as never })),
        updateMergeRules: await statusOf(api.spaces.updateSpaceById(shared.id, { mergeRules: { type: 'inherit' } })),
        delete: await statusOf(api.spaces.deleteSpaceById(own.id)),
        restore: await statusOf(api.spaces.restoreSpace(trashed.id)),
        duplicate: await statusOf(api.spaces.duplicateSpace(shared.id)),
        move: await statusOf(api.spaces.moveSpace(shared.id, { position: { before: { type: 'space', space: anchor.id } } })),
        transfer: (await transfer(user, travelling.id, { organization: target.id })).status,
        createTop: await statusOf(api.orgs.createSpace(org.id, { title: `Top by ${name}` })),
        createInCollection: await statusOf(api.orgs.createSpace(org.id, { title: `In by ${name}`, parent: collection.id })),
        list: await statusOf(api.orgs.listSpacesInOrganizationById(org.id)),
      };
      for (const [op, status] of Object.entries(got)) {
        assert.equal(status, expected[op]!(persona), `${name} ${op}`);
      }
      // Refused or ignored deletes changed nothing; allowed ones did.
      assert.equal(!!(await dbSpace(own.id))?.deleted_at, persona === 'admin', `${name} delete effect`);
      assert.equal(!!(await dbSpace(trashed.id))?.deleted_at, persona !== 'admin', `${name} restore effect`);
      assert.equal((await dbSpace(travelling.id))?.organization_id, persona === 'admin' ? target.id : org.id, `${name} transfer effect`);

      // The advertised permissions agree with what the server allowed.
      if (visible(persona)) {
        const { data } = await api.spaces.getSpaceById(shared.id);
        assert.deepEqual(data.permissions, spacePermissionsFor(role(persona)), name);
        assert.equal(data.permissions.edit, got.updateTitle === 200, `${name} edit`);
        assert.equal(data.permissions.admin, got.updateVisibility === 200, `${name} admin`);
        const { data: org_ } = await api.orgs.getOrganizationById(org.id);
        assert.equal(org_.permissions.createContent, got.createTop === 201, `${name} createContent`);
        const { data: coll } = await api.collections.getCollectionById(collection.id);
        assert.equal(coll.permissions.create, got.createInCollection === 201, `${name} collection create`);
      }
    }
  });

  test('grants to guests (direct, team, parent collection) × each space operation', async () => {
    const { admin, org } = await newOrg();
    const { data: target } = await admin.api.orgs.createOrganization({ title: 'Grant target' });
    const roles: Role[] = ['admin', 'create', 'review', 'edit', 'comment', 'read'];
    for (const via of ['user', 'team', 'collection'] as const) {
      for (const r of roles) {
        const guest = await newMember(org.id, null, `Guest ${via} ${r}`);
        await addMember(t, target.id, guest, 'admin');
        const home = await newCollection(admin, org.id, `Home ${via} ${r}`);
        const space = await newSpace(admin, org.id, { title: 'Granted', parent: home.id });
        const sibling = await newSpace(admin, org.id, { title: 'Sibling', parent: home.id });
        const trashed = await newSpace(admin, org.id, { title: 'Trashed', parent: home.id });
        const doomed = await newSpace(admin, org.id, { title: 'Doomed', parent: home.id });
        const travelling = await newSpace(admin, org.id, { title: 'Travelling', parent: home.id });
        for (const s of [space, sibling, trashed, doomed, travelling]) {
          if (via === 'user') await grant(org.id, { space: s.id }, { user: guest.id }, r);
          if (via === 'team') {
            const { data: team } = await admin.api.orgs.createOrganizationTeam(org.id, { title: `Team ${s.id}`, members: [guest.id] });
            await grant(org.id, { space: s.id }, { team: team.id }, r);
          }
        }
        if (via === 'collection') await grant(org.id, { collection: home.id }, { user: guest.id }, r);
        await admin.api.spaces.deleteSpaceById(trashed.id);
        const api = guest.api;
        const label = `${via} ${r}`;
        const need = (min: Role, ok: number) => (atLeast(r, min) ? ok : 403);
        const got = {
          get: await statusOf(api.spaces.getSpaceById(space.id)),
          updateTitle: await statusOf(api.spaces.updateSpaceById(space.id, { title: 'By guest' })),
          updateVisibility: await statusOf(api.spaces.updateSpaceById(space.id, { ...({ visibility: 'private' } as object) })),
          delete: await statusOf(api.spaces.deleteSpaceById(doomed.id)),
          restore: await statusOf(api.spaces.restoreSpace(trashed.id)),
          // Duplicating lands in the collection: it takes create there, which only a collection grant gives.
          duplicate: await statusOf(api.spaces.duplicateSpace(space.id)),
          move: await statusOf(api.spaces.moveSpace(space.id, { position: { after: { type: 'space', space: sibling.id } } })),
          // The top level of the organization needs an organization role: guests have none.
          moveTop: await statusOf(api.spaces.moveSpace(space.id, { parent: null })),
          transfer: (await transfer(guest, travelling.id, { organization: target.id })).status,
        };
        assert.deepEqual(
          got,
          {
            get: 200,
            updateTitle: need('edit', 200),
            updateVisibility: need('admin', 200),
            delete: need('admin', 204),
            restore: need('admin', 200),
            duplicate: via === 'collection' ? need('create', 201) : 403,
            move: need('admin', 200),
            moveTop: 403,
            // Taking a space out of the organization needs an organization admin, whatever the grant.
            transfer: 403,
          },
          label,
        );
        const { data } = await api.spaces.getSpaceById(space.id);
        assert.deepEqual(data.permissions, spacePermissionsFor(r), label);
      }
    }
  });
});

describe('space input', () => {
  test('bad bodies are a 400 naming the field; nothing is half-written', async () => {
    const { admin, org } = await newOrg();
    const collection = await newCollection(admin, org.id);
    const space = await newSpace(admin, org.id, { title: 'Intact', parent: collection.id });
    const sibling = await newSpace(admin, org.id, { title: 'Sibling', parent: collection.id });
    const { data: other } = await admin.api.orgs.createOrganization({ title: 'Other org' });
    const foreignCollection = await newCollection(admin, other.id);
    const foreignSpace = await newSpace(admin, other.id);
    const { data: before } = await admin.api.spaces.getSpaceById(space.id);
    const counts = await rowCounts();

    const cases: [string, string, unknown, RegExp][] = [
      // create
      ['POST', `/v1/orgs/${org.id}/spaces`, { title: 'x'.repeat(51) }, /title/],
      ['POST', `/v1/orgs/${org.id}/spaces`, { title: 12 }, /title/],
      ['POST', `/v1/orgs/${org.id}/spaces`, { title: null }, /title/],
      ['POST', `/v1/orgs/${org.id}/spaces`, { emoji: '' }, /emoji/],
      ['POST', `/v1/orgs/${org.id}/spaces`, { emoji: 'x'.repeat(51) }, /emoji/],
      ['POST', `/v1/orgs/${org.id}/spaces`, { parent: 'no-such-collection' }, /parent/],
      ['POST', `/v1/orgs/${org.id}/spaces`, { parent: foreignCollection.id }, /parent/],
      ['POST', `/v1/orgs/${org.id}/spaces`, { parent: 7 }, /parent/],
      ['POST', `/v1/orgs/${org.id}/spaces`, { parent: 'x'.repeat(101) }, /parent/],
      ['POST', `/v1/orgs/${org.id}/spaces`, { language: 'klingon' }, /language/],
      ['POST', `/v1/orgs/${org.id}/spaces`, { editMode: 'frozen' }, /editMode/],
      ['POST', `/v1/orgs/${org.id}/spaces`, { visibility: 'secret' }, /visibility/],
      ['POST', `/v1/orgs/${org.id}/spaces`, [], /body/],
      ['POST', `/v1/orgs/${org.id}/spaces`, 'title', /body/],
      // update
      ['PATCH', `/v1/spaces/${space.id}`, { title: 'x'.repeat(51) }, /title/],
      ['PATCH', `/v1/spaces/${space.id}`, { title: ['a'] }, /title/],
      ['PATCH', `/v1/spaces/${space.id}`, { emoji: 5 }, /emoji/],
      ['PATCH', `/v1/spaces/${space.id}`, { emoji: 'x'.repeat(51) }, /emoji/],
      ['PATCH', `/v1/spaces/${space.id}`, { icon: 'not a url' }, /icon/],
      ['PATCH', `/v1/spaces/${space.id}`, { emoji: '🎉', icon: 'https://example.com/i.png' }, /emoji.*icon/],
      ['PATCH', `/v1/spaces/${space.id}`, { editMode: 'frozen' }, /editMode/],
      ['PATCH', `/v1/spaces/${space.id}`, { defaultLevel: 'owner' }, /defaultLevel/],
      ['PATCH', `/v1/spaces/${space.id}`, { language: 'xx' }, /language/],
      ['PATCH', `/v1/spaces/${space.id}`, { visibility: 'everyone' }, /visibility/],
      ['PATCH', `/v1/spaces/${space.id}`, { mergeRules: { type: 'strict' } }, /mergeRules/],
      ['PATCH', `/v1/spaces/${space.id}`, { mergeRules: 'inherit' }, /mergeRules/],
      [
        'PATCH',
        `/v1/spaces/${space.id}`,
        { title: 'Half', mergeRules: { type: 'rules', rules: [{ rule: 'require_specific_reviewers', users: ['ghost'] }] } },
        /mergeRules/,
      ],
      ['PATCH', `/v1/spaces/${space.id}`, { title: 'Half', visibility: 'in-collection', editMode: 'nope' }, /editMode/],
      ['PATCH', `/v1/spaces/${space.id}`, null, /body/],
      // move
      ['POST', `/v1/spaces/${space.id}/move`, { parent: 5 }, /parent/],
      ['POST', `/v1/spaces/${space.id}/move`, { parent: 'no-such-collection' }, /parent/],
      ['POST', `/v1/spaces/${space.id}/move`, { parent: foreignCollection.id }, /parent/],
      ['POST', `/v1/spaces/${space.id}/move`, { position: 'first' }, /position/],
      ['POST', `/v1/spaces/${space.id}/move`, { position: { before: { type: 'space' } } }, /position\.before/],
      ['POST', `/v1/spaces/${space.id}/move`, { position: { before: { type: 'page', page: 'p' } } }, /position\.before/],
      ['POST', `/v1/spaces/${space.id}/move`, { position: { after: { type: 'space', space: 'no-such-space' } } }, /position\.after/],
      ['POST', `/v1/spaces/${space.id}/move`, { position: { after: { type: 'space', space: foreignSpace.id } } }, /position\.after/],
      [
        'POST',
        `/v1/spaces/${space.id}/move`,
        { parent: null, position: { after: { type: 'space', space: sibling.id } } },
        /position\.after/,
      ],
      ['POST', `/v1/spaces/${space.id}/move`, {}, /parent|position/],
      // transfer
      ['POST', `/v1/spaces/${space.id}/transfer`, {}, /organization/],
      ['POST', `/v1/spaces/${space.id}/transfer`, { organization: ['x'] }, /organization/],
      ['POST', `/v1/spaces/${space.id}/transfer`, { organization: other.id, collection: 'nope' }, /collection/],
    ];
    for (const [method, path, body, message] of cases) {
      const res = await t.request(method, path, { token: admin.token, body });
      assert.equal(res.status, 400, `${method} ${path} ${JSON.stringify(body)}: ${JSON.stringify(res.body)}`);
      assert.match(res.body.error.message, message, `${method} ${path} ${JSON.stringify(body)}`);
    }
    // Malformed JSON and a wrong content type.
    let res = await t.request('PATCH', `/v1/spaces/${space.id}`, { token: admin.token, raw: '{"title": ' });
    assert.equal(res.status, 400);
    assert.match(res.body.error.message, /JSON/);
    res = await t.request('POST', `/v1/orgs/${org.id}/spaces`, { token: admin.token, raw: 'title=x', headers: { 'content-type': 'text/plain' } });
    assert.ok(res.status === 400 || res.status === 415, `content type: ${res.status}`);
    // Queries and ids.
    res = await t.request('GET', `/v1/orgs/${org.id}/spaces?limit=0`, { token: admin.token });
    assert.equal(res.status, 400);
    assert.match(res.body.error.message, /limit/);
    res = await t.request('GET', `/v1/orgs/${org.id}/spaces?page=garbage`, { token: admin.token });
    assert.equal(res.status, 400);
    assert.match(res.body.error.message, /page/);
    res = await t.request('GET', `/v1/spaces/${'x'.repeat(300)}`, { token: admin.token });
    assert.ok(res.status === 400 || res.status === 404);
    res = await t.request('GET', `/v1/spaces/${space.id}?shareKey=${'k'.repeat(300)}`, { token: admin.token });
    assert.equal(res.status, 400);
    assert.match(res.body.error.message, /shareKey/);
    res = await t.request('POST', `/v1/orgs/${org.id}/spaces`, { token: admin.token, body: { title: 'nul\u0000' } });
    assert.equal(res.status, 400);
    res = await t.request('POST', `/v1/orgs/${org.id}/spaces`, { token: admin.token, body: { parent: 'a\u0000b' } });
    assert.equal(res.status, 400);
    res = await t.request('POST', `/v1/spaces/${space.id}/move`, {
      token: admin.token,
      body: { position: { after: { type: 'space', space: 'a\u0000b' } } },
    });
    assert.equal(res.status, 400);
    // No auth.
    res = await t.request('GET', `/v1/spaces/${space.id}`);
    assert.equal(res.status, 401);

    assert.deepEqual((await admin.api.spaces.getSpaceById(space.id)).data, before);
    assert.deepEqual(await rowCounts(), counts);
    assert.deepEqual(await collectionSpaceIds(admin, collection.id), [space.id, sibling.id]);
  });

  test('listing an organization\'s spaces pages by cursor and sees every space once', async () => {
    const { admin, org } = await newOrg();
    const ids: string[] = [];
    for (let i = 0; i < 7; i++) ids.push((await newSpace(admin, org.id, { title: `S${i}` })).id);
    const seen: string[] = [];
    let page: string | undefined;
    let pages = 0;
    do {
      const { data } = await admin.api.orgs.listSpacesInOrganizationById(org.id, { limit: 3, ...(page ? { page } : {}) });
      assert.equal(data.count, ids.length);
      seen.push(...data.items.map((s) => s.id));
      page = data.next?.page;
      if (pages++ === 0) ids.push((await newSpace(admin, org.id, { title: 'Late' })).id);
    } while (page);
    assert.deepEqual(seen, ids);

    // Collection spaces page in position order, even after reordering.
    const collection = await newCollection(admin, org.id);
    const inside: string[] = [];
    for (let i = 0; i < 5; i++) inside.push((await newSpace(admin, org.id, { title: `C${i}`, parent: collection.id })).id);
    await admin.api.spaces.moveSpace(inside[4]!, { position: { before: { type: 'space', space: inside[0]! } } });
    const order = [inside[4]!, ...inside.slice(0, 4)];
    const paged: string[] = [];
    page = undefined;
    do {
      const { data } = await admin.api.collections.listSpacesInCollectionById(collection.id, { limit: 2, ...(page ? { page } : {}) });
      assert.equal(data.count, 5);
      paged.push(...data.items.map((s) => s.id));
      page = data.next?.page;
    } while (page);
    assert.deepEqual(paged, order);
    // A cursor from another list is refused.
    const { data: first } = await admin.api.orgs.listSpacesInOrganizationById(org.id, { limit: 1 });
    await expectStatus(admin.api.collections.listSpacesInCollectionById(collection.id, { page: first.next!.page }), 400);
  });
});
