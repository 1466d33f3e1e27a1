import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { Collection } from '@gitbook/api';
import type { Role, RoleOrGuest } from '../src/platform/db/schema.ts';
import * as factories from './support/factories.ts';
import { addMember, newCollection, newSpace, orgWithPersonas, PERSONAS, personaName, statusOf, type Persona } from './support/factories.ts';
import { expectStatus, startTestServer, type TestServer, type TestUser } from './support/server.ts';

let t: TestServer;
before(async () => {
  t = await startTestServer();
});
after(async () => {
  await t?.close();
});

const newOrg = (title = 'Collections Inc') => factories.newOrg(t, title);
const newMember = (organizationId: string, role: RoleOrGuest, name?: string) => factories.newMember(t, organizationId, role, name);
const grant = (...args: Parameters<typeof factories.grantDirect> extends [unknown, ...infer R] ? R : never) => factories.grantDirect(t, ...args);
const atLeast = factories.atLeast;

async function collectionIds(user: TestUser, organizationId: string, nested?: boolean) {
  const { data } = await user.api.orgs.listCollectionsInOrganizationById(organizationId, {
    limit: 1000,
    ...(nested !== undefined ? { nested } : {}),
  });
  assert.equal(data.count, data.items.length);
  return data.items.map((c) => c.id);
}

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

/** Children (spaces and collections) of a parent in position order, straight from the database. */
async function childrenOrder(organizationId: string, parentId: string | null) {
  const db = t.server.services.db;
  const spaces = db
    .selectFrom('spaces')
    .select(['id', 'position'])
    .where('organization_id', '=', organizationId)
    .where('deleted_at', 'is', null)
    .where('parent_id', parentId === null ? 'is' : '=', parentId);
  const collections = db
    .selectFrom('collections')
    .select(['id', 'position'])
    .where('organization_id', '=', organizationId)
    .where('parent_id', parentId === null ? 'is' : '=', parentId);
  const rows = await spaces.unionAll(collections).execute();
  rows.sort((a, b) => (a.position < b.position ? -1 : a.position > b.position ? 1 : 0));
  assert.equal(new Set(rows.map((r) => r.position)).size, rows.length, 'positions are unique');
  return rows.map((r) => r.id);
}

function collectionPermissionsFor(role: RoleOrGuest) {
  return {
    view: atLeast(role, 'read'),
    admin: atLeast(role, 'admin'),
    viewInviteLinks: atLeast(role, 'admin'),
    create: atLeast(role, 'create'),
  };
}

async function rowCounts() {
  const db = t.server.services.db;
  const count = async (table: 'spaces' | 'collections' | 'revisions' | 'content_permissions') =>
    Number((await db.selectFrom(table).select(db.fn.countAll<number>().as('n')).executeTakeFirstOrThrow()).n);
  return {
    spaces: await count('spaces'),
    collections: await count('collections'),
    revisions: await count('revisions'),
    grants: await count('content_permissions'),
  };
}

describe('collections', () => {
  test('create, get, update and list through the official client', async () => {
    const { admin, org } = await newOrg();
    const created = await admin.api.orgs.createCollection(org.id, { title: 'Guides' });
    assert.equal(created.status, 201);
    const guides = created.data;
    assert.equal(guides.object, 'collection');
    assert.equal(guides.title, 'Guides');
    assert.equal(guides.organization, org.id);
    assert.equal(guides.parent, undefined);
    assert.equal(guides.description, undefined);
    assert.equal(guides.defaultLevel, 'inherit');
    assert.deepEqual(guides.urls, { location: `${t.url}/v1/collections/${guides.id}`, app: `${t.url}/app/c/${guides.id}` });
    assert.deepEqual(guides.permissions, collectionPermissionsFor('admin'));
    assert.equal(created.headers.get('location'), guides.urls.location);
    assert.deepEqual((await admin.api.collections.getCollectionById(guides.id)).data, guides);

    const nested = await newCollection(admin, org.id, { title: 'x'.repeat(50), parent: guides.id });
    assert.equal(nested.title.length, 50);
    assert.equal(nested.parent, guides.id);
    const { data: untitled } = await admin.api.orgs.createCollection(org.id, {});
    assert.equal(untitled.title, '');

    const { data: updated } = await admin.api.collections.updateCollectionById(guides.id, {
      title: 'Handbooks',
      description: 'd'.repeat(100),
      defaultLevel: 'comment' as never,
    });
    assert.equal(updated.title, 'Handbooks');
    assert.equal(updated.description, 'd'.repeat(100));
    assert.equal(updated.defaultLevel, 'comment');
    assert.deepEqual((await admin.api.collections.getCollectionById(guides.id)).data, updated);
    // Fields not sent are kept.
    const { data: described } = await admin.api.collections.updateCollectionById(guides.id, { description: 'Short' });
    assert.equal(described.title, 'Handbooks');
    assert.equal(described.defaultLevel, 'comment');
    const { data: reset } = await admin.api.collections.updateCollectionById(guides.id, { defaultLevel: null });
    assert.equal(reset.defaultLevel, null);
    assert.equal(reset.description, 'Short');

    // nested: true (the default) lists every collection, false only the top level.
    assert.deepEqual(await collectionIds(admin, org.id), [guides.id, nested.id, untitled.id]);
    assert.deepEqual(await collectionIds(admin, org.id, true), [guides.id, nested.id, untitled.id]);
    assert.deepEqual(await collectionIds(admin, org.id, false), [guides.id, untitled.id]);
    const { data: list } = await admin.api.orgs.listCollectionsInOrganizationById(org.id);
    assert.deepEqual(list.items[0], reset);
    // Paging.
    const { data: first } = await admin.api.orgs.listCollectionsInOrganizationById(org.id, { limit: 2 });
    assert.equal(first.count, 3);
    assert.deepEqual(first.items.map((c) => c.id), [guides.id, nested.id]);
    const { data: second } = await admin.api.orgs.listCollectionsInOrganizationById(org.id, { limit: 2, page: first.next!.page });
    assert.deepEqual(second.items.map((c) => c.id), [untitled.id]);
    assert.equal(second.next, undefined);
  });

  test('spaces of a collection are listed in their order, only direct children', async () => {
    const { admin, org } = await newOrg();
    const shelf = await newCollection(admin, org.id, 'Shelf');
    const inner = await newCollection(admin, org.id, 'Inner', shelf.id);
    const a = await newSpace(admin, org.id, 'A', shelf.id);
    const b = await newSpace(admin, org.id, 'B', shelf.id);
    const deep = await newSpace(admin, org.id, 'Deep', inner.id);
    const c = await newSpace(admin, org.id, 'C', shelf.id);
    await newSpace(admin, org.id, 'Elsewhere');
    assert.deepEqual(await collectionSpaceIds(admin, shelf.id), [a.id, b.id, c.id]);
    assert.deepEqual(await collectionSpaceIds(admin, inner.id), [deep.id]);
    // Children in one order: spaces and collections interleave by creation.
    assert.deepEqual(await childrenOrder(org.id, shelf.id), [inner.id, a.id, b.id, c.id]);
    await admin.api.spaces.moveSpace(c.id, { position: { before: { type: 'space', space: a.id } } });
    assert.deepEqual(await collectionSpaceIds(admin, shelf.id), [c.id, a.id, b.id]);
    const { data } = await admin.api.collections.listSpacesInCollectionById(shelf.id);
    assert.ok(data.items.every((s) => s.parent === shelf.id && s.organization === org.id));
    await expectStatus(admin.api.collections.listSpacesInCollectionById('no-such-collection'), 404);
  });

  test('delete: nested collections go, their spaces are deleted (hidden, restorable), grants go', async () => {
    const { admin, org } = await newOrg();
    const reader = await newMember(org.id, 'read', 'Rob Reader');
    const guest = await newMember(org.id, null, 'Gus Guest');
    const doomed = await newCollection(admin, org.id, 'Doomed');
    const child = await newCollection(admin, org.id, 'Child', doomed.id);
    const grandchild = await newCollection(admin, org.id, 'Grandchild', child.id);
    const kept = await newCollection(admin, org.id, 'Kept');
    const s1 = await newSpace(admin, org.id, 'S1', doomed.id);
    const s2 = await newSpace(admin, org.id, 'S2', grandchild.id);
    const s3 = await newSpace(admin, org.id, 'S3', kept.id);
    const top = await newSpace(admin, org.id, 'Top');
    await grant(org.id, { collection: child.id }, { user: guest.id }, 'read');
    await grant(org.id, { collection: kept.id }, { user: guest.id }, 'read');
    assert.equal((await admin.api.orgs.getMemberInOrganizationById(org.id, guest.id)).data.spaces, 2);

    // Not allowed: 403, nothing changes.
    await expectStatus(reader.api.collections.deleteCollectionById(doomed.id), 403);
    // Guests that cannot see it: a 204 that changes nothing.
    assert.equal((await guest.api.collections.deleteCollectionById(doomed.id)).status, 204);
    assert.equal((await admin.api.collections.getCollectionById(doomed.id)).status, 200);

    assert.equal((await admin.api.collections.deleteCollectionById(doomed.id)).status, 204);
    for (const id of [doomed.id, child.id, grandchild.id]) {
      await expectStatus(admin.api.collections.getCollectionById(id), 404);
      await expectStatus(admin.api.collections.listSpacesInCollectionById(id), 404);
    }
    assert.deepEqual(await collectionIds(admin, org.id), [kept.id]);
    for (const s of [s1, s2]) {
      await expectStatus(admin.api.spaces.getSpaceById(s.id), 404);
      const row = await t.server.services.db.selectFrom('spaces').select('deleted_at').where('id', '=', s.id).executeTakeFirstOrThrow();
      assert.ok(row.deleted_at, 'soft-deleted');
    }
    assert.deepEqual(await orgSpaceIds(admin, org.id), [s3.id, top.id]);
    assert.deepEqual(await orgSpaceIds(guest, org.id), [s3.id]);
    assert.equal((await admin.api.orgs.getMemberInOrganizationById(org.id, guest.id)).data.spaces, 1);
    assert.equal((await admin.api.orgs.getMemberInOrganizationById(org.id, reader.id)).data.spaces, 2);
    const grants = await t.server.services.db.selectFrom('content_permissions').select('target_id').where('organization_id', '=', org.id).execute();
    assert.deepEqual(grants.map((g) => g.target_id), [kept.id]);
    // Purge jobs are queued for the deleted spaces.
    const jobs = await t.server.services.db.selectFrom('jobs').select('payload').where('type', '=', 'space.purge').execute();
    const queued = jobs.map((j) => (j.payload as { spaceId: string }).spaceId);
    assert.ok(queued.includes(s1.id) && queued.includes(s2.id));
    // Deleting again: 204.
    assert.equal((await admin.api.collections.deleteCollectionById(doomed.id)).status, 204);

    // A space of the deleted collection comes back at the top level, with a place of its own.
    const { data: restored } = await admin.api.spaces.restoreSpace(s2.id);
    assert.equal(restored.parent, undefined);
    assert.deepEqual(await orgSpaceIds(admin, org.id), [s2.id, s3.id, top.id]);
    await childrenOrder(org.id, null);
  });

  test('move: change parent, place among siblings, never under itself or a descendant', async () => {
    const { admin, org } = await newOrg();
    const a = await newCollection(admin, org.id, 'A');
    const b = await newCollection(admin, org.id, 'B');
    const c = await newCollection(admin, org.id, 'C');
    const b1 = await newCollection(admin, org.id, 'B1', b.id);
    const b11 = await newCollection(admin, org.id, 'B11', b1.id);
    const top = await newSpace(admin, org.id, 'Top space');
    assert.deepEqual(await childrenOrder(org.id, null), [a.id, b.id, c.id, top.id]);

    // Among siblings, relative to collections and spaces.
    let { data: moved } = await admin.api.collections.moveCollection(c.id, { position: { before: { type: 'collection', collection: a.id } } });
    assert.equal(moved.parent, undefined);
    assert.deepEqual(await childrenOrder(org.id, null), [c.id, a.id, b.id, top.id]);
    await admin.api.collections.moveCollection(c.id, { position: { after: { type: 'space', space: top.id } } });
    assert.deepEqual(await childrenOrder(org.id, null), [a.id, b.id, top.id, c.id]);
    await admin.api.collections.moveCollection(c.id, {
      position: { after: { type: 'collection', collection: a.id }, before: { type: 'collection', collection: b.id } },
    });
    assert.deepEqual(await childrenOrder(org.id, null), [a.id, c.id, b.id, top.id]);

    // Under another parent: at the end by default, else where asked.
    ({ data: moved } = await admin.api.collections.moveCollection(c.id, { parent: b.id }));
    assert.equal(moved.parent, b.id);
    assert.deepEqual(await childrenOrder(org.id, b.id), [b1.id, c.id]);
    assert.deepEqual(await collectionIds(admin, org.id, false), [a.id, b.id]);
    ({ data: moved } = await admin.api.collections.moveCollection(a.id, { parent: b.id, position: { before: { type: 'collection', collection: b1.id } } }));
    assert.deepEqual(await childrenOrder(org.id, b.id), [a.id, b1.id, c.id]);
    // Back to the top level.
    ({ data: moved } = await admin.api.collections.moveCollection(a.id, { parent: null }));
    assert.equal(moved.parent, undefined);
    assert.deepEqual(await childrenOrder(org.id, null), [b.id, top.id, a.id]);
    assert.equal((await admin.api.collections.getCollectionById(a.id)).data.parent, undefined);

    // Under itself or one of its descendants: 400, nothing moves.
    for (const parent of [b.id, b1.id, b11.id]) {
      const res = await t.request('POST', `/v1/collections/${b.id}/move`, { token: admin.token, body: { parent } });
      assert.equal(res.status, 400, parent);
      assert.match(res.body.error.message, /parent.*(itself|descendant)/);
    }
    let res = await t.request('POST', `/v1/collections/${b1.id}/move`, { token: admin.token, body: { parent: b11.id } });
    assert.equal(res.status, 400);
    assert.equal((await admin.api.collections.getCollectionById(b.id)).data.parent, undefined);
    assert.equal((await admin.api.collections.getCollectionById(b1.id)).data.parent, b.id);

    // Invalid pointers: not a sibling, unknown, itself, not adjacent.
    const cases: [unknown, RegExp][] = [
      [{ position: { before: { type: 'collection', collection: b1.id } } }, /position\.before/],
      [{ position: { after: { type: 'collection', collection: 'no-such-collection' } } }, /position\.after/],
      [{ position: { after: { type: 'space', space: 'no-such-space' } } }, /position\.after/],
      [{ position: { after: { type: 'collection', collection: b11.id } }, parent: a.id }, /position\.after/],
      [{ position: { before: { type: 'collection', collection: b.id } } }, /itself/],
      [{ position: { after: { type: 'collection', collection: b.id }, before: { type: 'collection', collection: a.id } } }, /adjacent|itself|before/],
      [{ parent: 'no-such-collection' }, /parent/],
      [{}, /parent|position/],
    ];
    const orderBefore = await childrenOrder(org.id, null);
    for (const [body, message] of cases) {
      res = await t.request('POST', `/v1/collections/${b.id}/move`, { token: admin.token, body });
      assert.equal(res.status, 400, JSON.stringify(body));
      assert.match(res.body.error.message, message, JSON.stringify(body));
    }
    assert.deepEqual(await childrenOrder(org.id, null), orderBefore);
  });

  test('crossed concurrent moves never make a cycle', async () => {
    const { admin, org } = await newOrg();
    for (let round = 0; round < 5; round++) {
      const a = await newCollection(admin, org.id, `A${round}`);
      const b = await newCollection(admin, org.id, `B${round}`);
      const statuses = await Promise.all([
        statusOf(admin.api.collections.moveCollection(a.id, { parent: b.id })),
        statusOf(admin.api.collections.moveCollection(b.id, { parent: a.id })),
      ]);
      assert.deepEqual([...statuses].sort(), [200, 400], `round ${round}`);
      const parents = await t.server.services.db.selectFrom('collections').select(['id', 'parent_id']).where('id', 'in', [a.id, b.id]).execute();
      assert.equal(parents.filter((p) => p.parent_id === null).length, 1, 'one of them stays at the top');
    }
  });

  test('creating content in a collection being deleted never fails with a 500 nor leaves orphans', async () => {
    const { admin, org } = await newOrg();
    for (let round = 0; round < 4; round++) {
      const doomed = await newCollection(admin, org.id, `Doomed ${round}`);
      const [created, collection, deleted] = await Promise.all([
        t.request('POST', `/v1/orgs/${org.id}/spaces`, { token: admin.token, body: { title: 'Racer', parent: doomed.id } }),
        t.request('POST', `/v1/orgs/${org.id}/collections`, { token: admin.token, body: { title: 'Racer', parent: doomed.id } }),
        t.request('DELETE', `/v1/collections/${doomed.id}`, { token: admin.token }),
      ]);
      assert.equal(deleted.status, 204);
      assert.ok([201, 400].includes(created.status), `space: ${created.status} ${JSON.stringify(created.body)}`);
      assert.ok([201, 400].includes(collection.status), `collection: ${collection.status} ${JSON.stringify(collection.body)}`);
      if (created.status === 201) await expectStatus(admin.api.spaces.getSpaceById(created.body.id), 404);
      if (collection.status === 201) await expectStatus(admin.api.collections.getCollectionById(collection.body.id), 404);
    }
    const live = await t.server.services.db
      .selectFrom('spaces')
      .select('id')
      .where('organization_id', '=', org.id)
      .where('deleted_at', 'is', null)
      .execute();
    assert.deepEqual(live, []);
  });

  test('restoring a space while its collection is deleted leaves it valid wherever it lands', async () => {
    const { admin, org } = await newOrg();
    for (let round = 0; round < 4; round++) {
      const doomed = await newCollection(admin, org.id, `Doomed ${round}`);
      const space = await newSpace(admin, org.id, `Space ${round}`, doomed.id);
      await admin.api.spaces.updateSpaceById(space.id, { ...({ visibility: 'in-collection' } as object) });
      await admin.api.spaces.deleteSpaceById(space.id);
      const [restored, deleted] = await Promise.all([
        t.request('POST', `/v1/spaces/${space.id}/restore`, { token: admin.token }),
        t.request('DELETE', `/v1/collections/${doomed.id}`, { token: admin.token }),
      ]);
      assert.equal(restored.status, 200, JSON.stringify(restored.body));
      assert.equal(deleted.status, 204);
      const row = await t.server.services.db.selectFrom('spaces').selectAll().where('id', '=', space.id).executeTakeFirstOrThrow();
      if (row.deleted_at === null) {
        // Back at the top level (its collection is gone), as a valid top-level space.
        assert.equal(row.parent_id, null);
        assert.notEqual(row.visibility, 'in-collection');
      } else {
        // Restored first, then deleted with its collection.
        await expectStatus(admin.api.spaces.getSpaceById(space.id), 404);
      }
      await childrenOrder(org.id, null);
    }
  });
});

describe('collection transfer', () => {
  test('to another organization with nested collections and spaces', async () => {
    const { admin, org } = await newOrg('Source');
    const { data: target } = await admin.api.orgs.createOrganization({ title: 'Target' });
    const reader = await newMember(org.id, 'read', 'Rob Reader');
    const both = await newMember(org.id, null, 'Bea Both');
    await addMember(t, target.id, both, null);
    const { data: team } = await admin.api.orgs.createOrganizationTeam(org.id, { title: 'Writers' });
    const root = await newCollection(admin, org.id, 'Root');
    const moving = await newCollection(admin, org.id, 'Moving', root.id);
    const nested = await newCollection(admin, org.id, 'Nested', moving.id);
    const staying = await newCollection(admin, org.id, 'Staying', root.id);
    const s1 = await newSpace(admin, org.id, 'S1', moving.id);
    const s2 = await newSpace(admin, org.id, 'S2', nested.id);
    const trashed = await newSpace(admin, org.id, 'Trashed', nested.id);
    await admin.api.spaces.deleteSpaceById(trashed.id);
    const s3 = await newSpace(admin, org.id, 'S3', staying.id);
    const existing = await newCollection(admin, target.id, 'Existing');
    await grant(org.id, { collection: moving.id }, { user: both.id }, 'edit');
    await grant(org.id, { collection: nested.id }, { team: team.id }, 'read');
    await grant(org.id, { space: s1.id }, { user: reader.id }, 'comment');

    const res = await admin.api.collections.transferCollection(moving.id, { organization: target.id });
    assert.equal(res.status, 200);
    const moved = res.data;
    assert.equal(moved.organization, target.id);
    assert.equal(moved.parent, undefined, 'lands at the top level of the target');
    assert.equal(moved.title, 'Moving');
    assert.deepEqual(moved.permissions, collectionPermissionsFor('admin'));

    // Lists of the target show the collection, its nested collection and their spaces; the source's no longer do.
    // (Listed in creation order.)
    assert.deepEqual(await collectionIds(admin, target.id), [moving.id, nested.id, existing.id]);
    assert.deepEqual(await collectionIds(admin, target.id, false), [moving.id, existing.id]);
    assert.deepEqual(await collectionIds(admin, org.id), [root.id, staying.id]);
    assert.deepEqual(await orgSpaceIds(admin, target.id), [s1.id, s2.id]);
    assert.deepEqual(await orgSpaceIds(admin, org.id), [s3.id]);
    assert.deepEqual(await collectionSpaceIds(admin, moving.id), [s1.id]);
    assert.deepEqual(await collectionSpaceIds(admin, nested.id), [s2.id]);
    assert.equal((await admin.api.collections.getCollectionById(nested.id)).data.organization, target.id);
    assert.equal((await admin.api.collections.getCollectionById(nested.id)).data.parent, moving.id);
    const { data: space } = await admin.api.spaces.getSpaceById(s2.id);
    assert.equal(space.organization, target.id);
    assert.equal(space.parent, nested.id);
    // A deleted space goes along too (and is restored in the target).
    assert.equal((await admin.api.spaces.restoreSpace(trashed.id)).data.organization, target.id);
    const revisions = await t.server.services.db.selectFrom('revisions').select('organization_id').where('space_id', 'in', [s1.id, s2.id, trashed.id]).execute();
    assert.deepEqual(new Set(revisions.map((r) => r.organization_id)), new Set([target.id]));
    // Members of the source only lose access; grants follow members of both organizations.
    await expectStatus(reader.api.collections.getCollectionById(moving.id), 404);
    await expectStatus(reader.api.spaces.getSpaceById(s1.id), 404);
    assert.deepEqual((await both.api.collections.getCollectionById(nested.id)).data.permissions, collectionPermissionsFor('edit'));
    assert.equal((await both.api.spaces.getSpaceById(s2.id)).status, 200);
    const grants = await t.server.services.db.selectFrom('content_permissions').selectAll().where('target_id', 'in', [moving.id, nested.id, s1.id]).execute();
    assert.deepEqual(grants.map((g) => [g.organization_id, g.target_id, g.principal_id]), [[target.id, moving.id, both.id]]);
    assert.equal((await admin.api.orgs.getTeamInOrganizationById(org.id, team.id)).data.spaces, 0);
    // Positions at the top of the target are unique.
    await childrenOrder(target.id, null);
  });

  test('needs admin in both organizations: 403 when visible but not allowed, 404 otherwise', async () => {
    const { admin, org } = await newOrg();
    const { data: target } = await admin.api.orgs.createOrganization({ title: 'Target' });
    const { data: foreign } = await (await t.user('Fay Foreign')).api.orgs.createOrganization({ title: 'Foreign' });
    const collection = await newCollection(admin, org.id, 'Box');
    const space = await newSpace(admin, org.id, 'Inside', collection.id);
    // Admin of the collection (through defaultLevel), but not of the source organization.
    const editor = await newMember(org.id, 'edit', 'Ed Editor');
    await addMember(t, target.id, editor, 'admin');
    await admin.api.collections.updateCollectionById(collection.id, { defaultLevel: 'admin' as never });
    assert.equal((await editor.api.collections.getCollectionById(collection.id)).data.permissions.admin, true);
    const partial = await newMember(org.id, 'admin', 'Pat Partial');
    await addMember(t, target.id, partial, 'create');
    const guestAdmin = await newMember(org.id, null, 'Gus Guest');
    await grant(org.id, { collection: collection.id }, { user: guestAdmin.id }, 'admin');
    await addMember(t, target.id, guestAdmin, 'admin');
    const outsider = await t.user('Olga Outsider');
    const cases: [TestUser, string, number][] = [
      [editor, target.id, 403],
      [guestAdmin, target.id, 403],
      [partial, target.id, 403],
      [admin, foreign.id, 404],
      [admin, 'no-such-org', 404],
      [outsider, target.id, 404],
    ];
    for (const [user, organization, status] of cases) {
      const got = await statusOf(user.api.collections.transferCollection(collection.id, { organization }));
      assert.equal(got, status, `${organization}`);
    }
    await expectStatus(admin.api.collections.transferCollection('no-such-collection', { organization: target.id }), 404);
    let res = await t.request('POST', `/v1/collections/${collection.id}/transfer`, { token: admin.token, body: {} });
    assert.equal(res.status, 400);
    assert.match(res.body.error.message, /organization/);
    res = await t.request('POST', `/v1/collections/${collection.id}/transfer`, { token: admin.token, body: { organization: 1 } });
    assert.equal(res.status, 400);
    assert.match(res.body.error.message, /organization/);
    // Nothing moved.
    assert.equal((await admin.api.collections.getCollectionById(collection.id)).data.organization, org.id);
    assert.equal((await admin.api.spaces.getSpaceById(space.id)).data.organization, org.id);
    // To its own organization: nothing to do.
    const { data: same } = await admin.api.collections.transferCollection(collection.id, { organization: org.id });
    assert.equal(same.organization, org.id);
  });
});

describe('collection access', () => {
  test('defaultLevel gives members a role in the collection and below; inherit follows the parent', async () => {
    const { admin, org } = await newOrg();
    const reader = await newMember(org.id, 'read', 'Rob Reader');
    const outer = await newCollection(admin, org.id, 'Outer');
    const inner = await newCollection(admin, org.id, 'Inner', outer.id);
    const perms = async (c: Collection) => (await reader.api.collections.getCollectionById(c.id)).data.permissions;

    assert.deepEqual(await perms(inner), collectionPermissionsFor('read'));
    await expectStatus(reader.api.orgs.createSpace(org.id, { title: 'No', parent: inner.id }), 403);

    await admin.api.collections.updateCollectionById(outer.id, { defaultLevel: 'create' as never });
    assert.deepEqual(await perms(outer), collectionPermissionsFor('create'));
    assert.deepEqual(await perms(inner), collectionPermissionsFor('create'), 'inherit follows the parent');
    const space = await newSpace(reader, org.id, { title: 'By reader', parent: inner.id });
    assert.equal(space.parent, inner.id);
    assert.equal((await reader.api.orgs.createCollection(org.id, { title: 'Sub', parent: inner.id })).status, 201);
    // Not at the top level, where only the organization role counts.
    await expectStatus(reader.api.orgs.createSpace(org.id, { title: 'No' }), 403);
    // Nor may the reader administer the collections.
    await expectStatus(reader.api.collections.updateCollectionById(inner.id, { title: 'No' }), 403);

    await admin.api.collections.updateCollectionById(inner.id, { defaultLevel: 'read' as never });
    assert.deepEqual(await perms(inner), collectionPermissionsFor('read'), 'an explicit level stops inheritance');
    await admin.api.collections.updateCollectionById(inner.id, { defaultLevel: null });
    assert.deepEqual(await perms(inner), collectionPermissionsFor('read'));
    await admin.api.collections.updateCollectionById(outer.id, { defaultLevel: 'admin' as never });
    await admin.api.collections.updateCollectionById(inner.id, { defaultLevel: 'inherit' as never });
    assert.deepEqual(await perms(inner), collectionPermissionsFor('admin'));
    assert.equal((await reader.api.collections.updateCollectionById(inner.id, { title: 'Renamed by reader' })).data.title, 'Renamed by reader');
  });

  test('guests see the collections granted to them and everything below, directly or through a team', async () => {
    const { admin, org } = await newOrg();
    const guest = await newMember(org.id, null, 'Gus Guest');
    const { data: team } = await admin.api.orgs.createOrganizationTeam(org.id, { title: 'Partners', members: [guest.id] });
    const granted = await newCollection(admin, org.id, 'Granted');
    const below = await newCollection(admin, org.id, 'Below', granted.id);
    const viaTeam = await newCollection(admin, org.id, 'Via team');
    const hidden = await newCollection(admin, org.id, 'Hidden');
    const hiddenChild = await newCollection(admin, org.id, 'Hidden child', hidden.id);
    await grant(org.id, { collection: granted.id }, { user: guest.id }, 'create');
    await grant(org.id, { collection: viaTeam.id }, { team: team.id }, 'read');
    await grant(org.id, { collection: hiddenChild.id }, { user: guest.id }, 'edit');

    assert.deepEqual(await collectionIds(guest, org.id), [granted.id, below.id, viaTeam.id, hiddenChild.id]);
    assert.deepEqual(await collectionIds(guest, org.id, false), [granted.id, viaTeam.id]);
    const { data: list } = await guest.api.orgs.listCollectionsInOrganizationById(org.id);
    const expected: Record<string, Role> = { [granted.id]: 'create', [below.id]: 'create', [viaTeam.id]: 'read', [hiddenChild.id]: 'edit' };
    for (const c of list.items) assert.deepEqual(c.permissions, collectionPermissionsFor(expected[c.id]!), c.title);
    await expectStatus(guest.api.collections.getCollectionById(hidden.id), 404);

    // Create in a granted collection; not elsewhere.
    const made = await newSpace(guest, org.id, { title: 'Guest made', parent: below.id });
    assert.deepEqual(made.permissions.admin, false);
    assert.equal(made.permissions.view, true);
    await expectStatus(guest.api.orgs.createSpace(org.id, { title: 'No', parent: viaTeam.id }), 403);
    await expectStatus(guest.api.orgs.createSpace(org.id, { title: 'No', parent: hidden.id }), 400);
    await expectStatus(guest.api.orgs.createCollection(org.id, { title: 'No' }), 403);
    assert.equal((await admin.api.orgs.getMemberInOrganizationById(org.id, guest.id)).data.spaces, 1);
  });
});

describe('collection permission matrix', () => {
  test('each role × each collection operation', async () => {
    const { owner, org, people } = await orgWithPersonas(t);
    const shared = await newCollection(owner, org.id, 'Shared');
    const sibling = await newCollection(owner, org.id, 'Sibling');
    const visible = (p: Persona) => p !== null && p !== 'outsider';
    const role = (p: Persona): RoleOrGuest => (p === 'outsider' ? null : p);
    const need = (p: Persona, min: Role, ok: number) => (!visible(p) ? 404 : atLeast(role(p), min) ? ok : 403);
    const expected: Record<string, (p: Persona) => number> = {
      get: (p) => (visible(p) ? 200 : 404),
      listSpaces: (p) => (visible(p) ? 200 : 404),
      list: (p) => (p === 'outsider' ? 404 : 200),
      updateTitle: (p) => need(p, 'admin', 200),
      updateDefaultLevel: (p) => need(p, 'admin', 200),
      delete: (p) => (!visible(p) ? 204 : atLeast(role(p), 'admin') ? 204 : 403),
      move: (p) => need(p, 'admin', 200),
      moveUnder: (p) => need(p, 'admin', 200),
      transfer: (p) => need(p, 'admin', 200),
      createTop: (p) => (p === 'outsider' ? 404 : atLeast(role(p), 'create') ? 201 : 403),
      createInside: (p) => (p === 'outsider' ? 404 : p === null ? 400 : atLeast(role(p), 'create') ? 201 : 403),
      createSpaceInside: (p) => (p === 'outsider' ? 404 : p === null ? 400 : atLeast(role(p), 'create') ? 201 : 403),
    };
    for (const persona of PERSONAS) {
      const user = people.get(persona)!;
      const api = user.api;
      const name = personaName(persona);
      const own = await newCollection(owner, org.id, `Delete ${name}`);
      const travelling = await newCollection(owner, org.id, `Transfer ${name}`);
      const mover = await newCollection(owner, org.id, `Move ${name}`);
      const { data: target } = await user.api.orgs.createOrganization({ title: `Target of ${name}` });
      const got: Record<string, number> = {
        get: await statusOf(api.collections.getCollectionById(shared.id)),
        listSpaces: await statusOf(api.collections.listSpacesInCollectionById(shared.id)),
        list: await statusOf(api.orgs.listCollectionsInOrganizationById(org.id)),
        updateTitle: await statusOf(api.collections.updateCollectionById(shared.id, { title: `By ${name}` })),
        updateDefaultLevel: await statusOf(api.collections.updateCollectionById(shared.id, { defaultLevel: 'inherit' as never })),
        delete: await statusOf(api.collections.deleteCollectionById(own.id)),
        move: await statusOf(api.collections.moveCollection(shared.id, { position: { before: { type: 'collection', collection: sibling.id } } })),
        moveUnder: await statusOf(api.collections.moveCollection(mover.id, { parent: sibling.id })),
        transfer: await statusOf(api.collections.transferCollection(travelling.id, { organization: target.id })),
        createTop: await statusOf(api.orgs.createCollection(org.id, { title: `Top by ${name}` })),
        createInside: await statusOf(api.orgs.createCollection(org.id, { title: `In by ${name}`, parent: shared.id })),
        createSpaceInside: await statusOf(api.orgs.createSpace(org.id, { title: `In by ${name}`, parent: shared.id })),
      };
      for (const [op, status] of Object.entries(got)) {
        assert.equal(status, expected[op]!(persona), `${name} ${op}`);
      }
      const exists = async (id: string) => !!(await t.server.services.db.selectFrom('collections').select('id').where('id', '=', id).executeTakeFirst());
      assert.equal(await exists(own.id), persona !== 'admin', `${name} delete effect`);
      const travelled = await t.server.services.db.selectFrom('collections').select('organization_id').where('id', '=', travelling.id).executeTakeFirstOrThrow();
      assert.equal(travelled.organization_id, persona === 'admin' ? target.id : org.id, `${name} transfer effect`);
      if (visible(persona)) {
        const { data } = await api.collections.getCollectionById(shared.id);
        assert.deepEqual(data.permissions, collectionPermissionsFor(role(persona)), name);
        assert.equal(data.permissions.admin, got.updateTitle === 200, `${name} admin`);
        assert.equal(data.permissions.create, got.createInside === 201, `${name} create`);
      }
    }
  });
});

describe('collection input', () => {
  test('bad bodies and queries are a 400 naming the field; nothing is half-written', async () => {
    const { admin, org } = await newOrg();
    const box = await newCollection(admin, org.id, 'Box');
    const child = await newCollection(admin, org.id, 'Child', box.id);
    const { data: other } = await admin.api.orgs.createOrganization({ title: 'Other' });
    const foreign = await newCollection(admin, other.id, 'Foreign');
    await admin.api.collections.updateCollectionById(box.id, { description: 'Kept' });
    const { data: before } = await admin.api.collections.getCollectionById(box.id);
    const counts = await rowCounts();

    const cases: [string, string, unknown, RegExp][] = [
      ['POST', `/v1/orgs/${org.id}/collections`, { title: 'x'.repeat(51) }, /title/],
      ['POST', `/v1/orgs/${org.id}/collections`, { title: 3 }, /title/],
      ['POST', `/v1/orgs/${org.id}/collections`, { parent: 'no-such-collection' }, /parent/],
      ['POST', `/v1/orgs/${org.id}/collections`, { parent: foreign.id }, /parent/],
      ['POST', `/v1/orgs/${org.id}/collections`, { parent: false }, /parent/],
      ['POST', `/v1/orgs/${org.id}/collections`, [], /body/],
      ['PATCH', `/v1/collections/${box.id}`, { title: 'x'.repeat(51) }, /title/],
      ['PATCH', `/v1/collections/${box.id}`, { title: { a: 1 } }, /title/],
      ['PATCH', `/v1/collections/${box.id}`, { description: 'd'.repeat(101) }, /description/],
      ['PATCH', `/v1/collections/${box.id}`, { description: 7 }, /description/],
      ['PATCH', `/v1/collections/${box.id}`, { defaultLevel: 'owner' }, /defaultLevel/],
      ['PATCH', `/v1/collections/${box.id}`, { title: 'Half', defaultLevel: 3 }, /defaultLevel/],
      ['PATCH', `/v1/collections/${box.id}`, 'title', /body/],
      ['POST', `/v1/collections/${box.id}/move`, { parent: child.id }, /parent/],
      ['POST', `/v1/collections/${box.id}/move`, { parent: box.id }, /parent/],
      ['POST', `/v1/collections/${box.id}/move`, { parent: foreign.id }, /parent/],
      ['POST', `/v1/collections/${box.id}/move`, { parent: 12 }, /parent/],
      ['POST', `/v1/collections/${box.id}/move`, { position: { after: { type: 'collection' } } }, /position\.after/],
      ['POST', `/v1/collections/${box.id}/move`, { position: { after: { type: 'collection', collection: foreign.id } } }, /position\.after/],
      ['POST', `/v1/collections/${box.id}/move`, { position: [] }, /position/],
      ['POST', `/v1/collections/${box.id}/transfer`, {}, /organization/],
      ['POST', `/v1/collections/${box.id}/transfer`, { organization: null }, /organization/],
    ];
    for (const [method, path, body, message] of cases) {
      const res = await t.request(method, path, { token: admin.token, body });
      assert.equal(res.status, 400, `${method} ${path} ${JSON.stringify(body)}: ${JSON.stringify(res.body)}`);
      assert.match(res.body.error.message, message, `${method} ${path} ${JSON.stringify(body)}`);
    }
    for (const query of ['nested=maybe', 'limit=0', 'limit=1001', 'page=garbage']) {
      const res = await t.request('GET', `/v1/orgs/${org.id}/collections?${query}`, { token: admin.token });
      assert.equal(res.status, 400, query);
      assert.match(res.body.error.message, new RegExp(query.split('=')[0]!), query);
    }
    let res = await t.request('GET', `/v1/collections/${box.id}/spaces?limit=abc`, { token: admin.token });
    assert.equal(res.status, 400);
    res = await t.request('PATCH', `/v1/collections/${box.id}`, { token: admin.token, raw: '{"title"' });
    assert.equal(res.status, 400);
    assert.match(res.body.error.message, /JSON/);
    res = await t.request('POST', `/v1/orgs/${org.id}/collections`, { token: admin.token, body: { title: 'a\u0000b' } });
    assert.equal(res.status, 400);
    res = await t.request('GET', `/v1/collections/${box.id}`);
    assert.equal(res.status, 401);

    assert.deepEqual((await admin.api.collections.getCollectionById(box.id)).data, before);
    assert.deepEqual(await rowCounts(), counts);
    assert.equal((await admin.api.collections.getCollectionById(child.id)).data.parent, box.id);
  });
});
