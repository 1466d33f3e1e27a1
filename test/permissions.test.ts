import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { MemberRole } from '@gitbook/api';
import { addMember, newCollection, newSpace, orgWithPersonas, personaName, PERSONAS, statusOf } from './support/factories.ts';
import { expectStatus, startTestServer, type TestServer, type TestUser } from './support/server.ts';

let t: TestServer;
before(async () => {
  t = await startTestServer();
});
after(async () => {
  await t?.close();
});

async function setup() {
  const admin = await t.user('Admin');
  const { data: org } = await admin.api.orgs.createOrganization({ title: 'Grants' });
  const guest = await t.user('Guest');
  const reader = await t.user('Reader');
  await addMember(t, org.id, guest, null);
  await addMember(t, org.id, reader, 'read');
  const space = await newSpace(admin, org.id, 'Handbook');
  return { admin, org, guest, reader, space };
}

const ids = (items: { user: { id: string } }[]) => items.map((i) => i.user.id).sort();
const visible = async (user: TestUser, orgId: string) =>
  (await user.api.orgs.listSpacesInOrganizationById(orgId)).data.items.map((s) => s.id);

describe('space grants', () => {
  test('inviting, listing, changing and removing user grants', async () => {
    const { admin, org, guest, reader, space } = await setup();
    await expectStatus(guest.api.spaces.getSpaceById(space.id), 404);
    assert.deepEqual(await visible(guest, org.id), []);

    assert.equal((await admin.api.spaces.inviteToSpace(space.id, { role: MemberRole.Comment, users: [guest.id] })).status, 204);
    const { data: got } = await guest.api.spaces.getSpaceById(space.id);
    assert.equal(got.permissions.comment, true);
    assert.equal(got.permissions.edit, false);
    assert.deepEqual(await visible(guest, org.id), [space.id]);

    const { data: users } = await admin.api.spaces.listUserPermissionsInSpace(space.id);
    assert.deepEqual(users.items.map((i) => [i.user.id, i.permission]), [[guest.id, 'comment']]);

    await admin.api.spaces.updateUserPermissionInSpace(space.id, guest.id, { role: MemberRole.Edit });
    assert.equal((await guest.api.spaces.getSpaceById(space.id)).data.permissions.edit, true);
    // A grant raises a member above their organization role.
    await admin.api.spaces.inviteToSpace(space.id, { role: MemberRole.Admin, users: [reader.id] });
    assert.equal((await reader.api.spaces.getSpaceById(space.id)).data.permissions.admin, true);

    const { data: everyone } = await admin.api.spaces.listPermissionsAggregateInSpace(space.id);
    assert.deepEqual(
      everyone.items.map((i) => [i.user.id, i.permission]).sort(),
      [[admin.id, 'admin'], [guest.id, 'edit'], [reader.id, 'admin']].sort(),
    );
    const { data: editors } = await admin.api.spaces.listPermissionsAggregateInSpace(space.id, { role: MemberRole.Edit });
    assert.deepEqual(ids(editors.items), [guest.id]);
    assert.equal(editors.count, 1);

    assert.equal((await admin.api.spaces.removeUserFromSpace(space.id, guest.id)).status, 204);
    await expectStatus(guest.api.spaces.getSpaceById(space.id), 404);
    // Removing again is still 204; a null role removes as well.
    assert.equal((await admin.api.spaces.removeUserFromSpace(space.id, guest.id)).status, 204);
    await admin.api.spaces.inviteToSpace(space.id, { role: null, users: [reader.id] });
    assert.equal((await reader.api.spaces.getSpaceById(space.id)).data.permissions.admin, false);
  });

  test('team grants reach team members, follow membership, and go with the team', async () => {
    const { admin, org, guest, space } = await setup();
    const { data: team } = await admin.api.orgs.createOrganizationTeam(org.id, { title: 'Writers', members: [guest.id] });
    await admin.api.spaces.inviteToSpace(space.id, { role: MemberRole.Review, teams: [team.id] });
    const { data: got } = await guest.api.spaces.getSpaceById(space.id);
    assert.equal(got.permissions.review, true);
    const { data: teams } = await admin.api.spaces.listTeamPermissionsInSpace(space.id);
    assert.deepEqual(teams.items.map((i) => [i.team.id, i.permission, i.team.spaces]), [[team.id, 'review', 1]]);
    assert.equal((await admin.api.orgs.getMemberInOrganizationById(org.id, guest.id)).data.spaces, 1);

    await admin.api.spaces.updateTeamPermissionInSpace(space.id, team.id, { role: MemberRole.Read });
    assert.equal((await guest.api.spaces.getSpaceById(space.id)).data.permissions.review, false);

    await admin.api.orgs.deleteMemberFromOrganizationTeamById(org.id, team.id, guest.id);
    await expectStatus(guest.api.spaces.getSpaceById(space.id), 404);
    await admin.api.orgs.addMemberToOrganizationTeamById(org.id, team.id, guest.id, {});
    assert.equal((await guest.api.spaces.getSpaceById(space.id)).status, 200);

    await admin.api.orgs.removeTeamFromOrganizationById(org.id, team.id);
    await expectStatus(guest.api.spaces.getSpaceById(space.id), 404);
    const left = await t.server.services.db.selectFrom('content_permissions').select('principal_id').where('principal_id', '=', team.id).execute();
    assert.deepEqual(left, []);
  });

  test('collection grants are inherited by everything inside', async () => {
    const { admin, org, guest } = await setup();
    const outer = await newCollection(admin, org.id, 'Outer');
    const inner = await newCollection(admin, org.id, { title: 'Inner', parent: outer.id });
    const deep = await newSpace(admin, org.id, { title: 'Deep', parent: inner.id });
    await admin.api.orgs.createSpace(org.id, { title: 'Elsewhere' });

    await admin.api.collections.inviteToCollection(outer.id, { role: MemberRole.Edit, users: [guest.id] });
    assert.deepEqual(await visible(guest, org.id), [deep.id]);
    assert.equal((await guest.api.spaces.getSpaceById(deep.id)).data.permissions.edit, true);
    assert.equal((await guest.api.collections.getCollectionById(inner.id)).data.permissions.view, true);
    const { data: collections } = await guest.api.orgs.listCollectionsInOrganizationById(org.id);
    assert.deepEqual(collections.items.map((c) => c.id).sort(), [outer.id, inner.id].sort());

    const { data: aggregate } = await admin.api.spaces.listPermissionsAggregateInSpace(deep.id);
    assert.ok(aggregate.items.some((i) => i.user.id === guest.id && i.permission === 'edit'));
    const { data: users } = await admin.api.collections.listUserPermissionsInCollection(outer.id);
    assert.deepEqual(users.items.map((i) => i.user.id), [guest.id]);

    await admin.api.collections.removeUserFromCollection(outer.id, guest.id);
    assert.deepEqual(await visible(guest, org.id), []);
  });

  test('a member who leaves loses their grants', async () => {
    const { admin, org, guest, space } = await setup();
    await admin.api.spaces.inviteToSpace(space.id, { role: MemberRole.Edit, users: [guest.id] });
    await admin.api.orgs.removeMemberFromOrganizationById(org.id, guest.id);
    await addMember(t, org.id, guest, null);
    await expectStatus(guest.api.spaces.getSpaceById(space.id), 404);
  });

  test('bad input: unknown users and teams, empty invites, wrong types', async () => {
    const { admin, org, space } = await setup();
    const stranger = await t.user('Stranger');
    const post = (body: unknown) => t.request('POST', `/v1/spaces/${space.id}/permissions`, { token: admin.token, body });
    let res = await post({ role: 'edit', users: [stranger.id] });
    assert.equal(res.status, 400);
    assert.match(res.body.error.message, /users/);
    res = await post({ role: 'edit', teams: ['nope'] });
    assert.equal(res.status, 400);
    assert.match(res.body.error.message, /teams/);
    res = await post({ role: 'edit' });
    assert.equal(res.status, 400);
    res = await post({ role: 'owner', users: [admin.id] });
    assert.equal(res.status, 400);
    assert.match(res.body.error.message, /role/);
    res = await post({ role: 'edit', users: 'everyone' });
    assert.equal(res.status, 400);
    res = await t.request('PATCH', `/v1/spaces/${space.id}/permissions/users/${stranger.id}`, { token: admin.token, body: { role: 'edit' } });
    assert.equal(res.status, 404);
    res = await t.request('PATCH', `/v1/spaces/${space.id}/permissions/teams/nope`, { token: admin.token, body: { role: 'edit' } });
    assert.equal(res.status, 404);
    res = await t.request('GET', `/v1/spaces/${space.id}/permissions/aggregate?role=boss`, { token: admin.token });
    assert.equal(res.status, 400);
    const grants = await t.server.services.db.selectFrom('content_permissions').selectAll().where('organization_id', '=', org.id).execute();
    assert.deepEqual(grants, [], 'nothing half-written');
  });

  test('permission matrix: each role × each grant operation', async () => {
    const { org, people, owner } = await orgWithPersonas(t);
    const space = await newSpace(owner, org.id, 'Matrix');
    const collection = await newCollection(owner, org.id, 'Matrix');
    const target = await t.user('Target');
    await addMember(t, org.id, target, null);
    for (const persona of PERSONAS) {
      const api = people.get(persona)!.api;
      const read = persona === 'outsider' || persona === null ? 404 : 200;
      const write = persona === 'outsider' || persona === null ? 404 : persona === 'admin' ? 204 : 403;
      const got = {
        invite: await statusOf(api.spaces.inviteToSpace(space.id, { role: MemberRole.Read, users: [target.id] })),
        listUsers: await statusOf(api.spaces.listUserPermissionsInSpace(space.id)),
        listTeams: await statusOf(api.spaces.listTeamPermissionsInSpace(space.id)),
        aggregate: await statusOf(api.spaces.listPermissionsAggregateInSpace(space.id)),
        update: await statusOf(api.spaces.updateUserPermissionInSpace(space.id, target.id, { role: MemberRole.Comment })),
        remove: await statusOf(api.spaces.removeUserFromSpace(space.id, target.id)),
        inviteCollection: await statusOf(api.collections.inviteToCollection(collection.id, { role: MemberRole.Read, users: [target.id] })),
        listCollectionUsers: await statusOf(api.collections.listUserPermissionsInCollection(collection.id)),
        removeCollection: await statusOf(api.collections.removeUserFromCollection(collection.id, target.id)),
      };
      assert.deepEqual(
        got,
        { invite: write, listUsers: read, listTeams: read, aggregate: read, update: write, remove: write, inviteCollection: write, listCollectionUsers: read, removeCollection: write },
        personaName(persona),
      );
    }
  });
});
