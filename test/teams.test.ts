import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { TeamMemberRole } from '@gitbook/api';
import type { RoleOrGuest } from '../src/platform/db/schema.ts';
import { addMember, statusOf } from './support/factories.ts';
import { expectStatus, startTestServer, type TestServer, type TestUser } from './support/server.ts';

let t: TestServer;
before(async () => {
  t = await startTestServer();
});
after(async () => {
  await t?.close();
});

/** A fresh organization administered by a new user. */
async function newOrg(title = 'Teams Inc') {
  const admin = await t.user('Ann Admin');
  const { data: org } = await admin.api.orgs.createOrganization({ title });
  return { admin, org };
}

/** A new user who is a member of the organization with `role` (null: guest). */
async function newMember(organizationId: string, role: RoleOrGuest, name = 'Member'): Promise<TestUser> {
  const user = await t.user(name);
  await addMember(t, organizationId, user, role);
  return user;
}

async function teamMemberRoles(api: TestUser['api'], organizationId: string, teamId: string): Promise<Record<string, string>> {
  const { data } = await api.orgs.listTeamMembersInOrganizationById(organizationId, teamId, { limit: 1000 });
  assert.equal(data.count, data.items.length);
  return Object.fromEntries(data.items.map((m) => [m.organization.id, m.team.role]));
}

describe('teams', () => {
  test('create, get, list, rename and delete a team through the official client', async () => {
    const { admin, org } = await newOrg();
    const bob = await newMember(org.id, 'edit', 'Bob');

    const created = await admin.api.orgs.createOrganizationTeam(org.id, { title: '  Writers ', members: [bob.id] });
    assert.equal(created.status, 201);
    const team = created.data;
    assert.equal(team.object, 'team');
    assert.equal(team.title, 'Writers');
    assert.equal(team.members, 1);
    assert.equal(team.spaces, 0);
    assert.deepEqual(team.permissions, { view: true, admin: true });
    assert.ok(Math.abs(Date.parse(team.createdAt) - Date.now()) < 60_000, `createdAt ${team.createdAt} is now`);
    assert.equal(created.headers.get('location'), `${t.url}/v1/orgs/${org.id}/teams/${team.id}`);

    const { data: got } = await admin.api.orgs.getTeamInOrganizationById(org.id, team.id);
    assert.deepEqual(got, team);

    const { data: list } = await admin.api.orgs.listTeamsInOrganizationById(org.id);
    assert.deepEqual(list.items, [team]);
    assert.equal(list.count, 1);
    assert.equal(list.next, undefined);

    const { data: renamed } = await admin.api.orgs.updateTeamInOrganizationById(org.id, team.id, { title: 'Editors' });
    assert.equal(renamed.title, 'Editors');
    assert.equal(renamed.members, 1);
    assert.equal((await admin.api.orgs.getTeamInOrganizationById(org.id, team.id)).data.title, 'Editors');

    const { data: members } = await admin.api.orgs.listTeamMembersInOrganizationById(org.id, team.id);
    assert.equal(members.count, 1);
    const [entry] = members.items;
    assert.equal(entry!.organization.id, bob.id);
    assert.equal(entry!.organization.role, 'edit');
    assert.equal(entry!.organization.user.email, bob.email);
    assert.equal(entry!.organization.teams, 1);
    assert.deepEqual(entry!.team, { role: 'member' });
    assert.deepEqual(entry!.permissions, { view: true });

    const { data: bobTeams } = await admin.api.orgs.listTeamsForOrganizationMember(org.id, bob.id);
    assert.deepEqual(bobTeams.items, [{ team: renamed, member: { role: 'member' } }]);

    assert.equal((await admin.api.orgs.removeTeamFromOrganizationById(org.id, team.id)).status, 204);
    await expectStatus(admin.api.orgs.getTeamInOrganizationById(org.id, team.id), 404);
    // Deleting again still answers 204.
    assert.equal((await admin.api.orgs.removeTeamFromOrganizationById(org.id, team.id)).status, 204);
    const { data: after } = await admin.api.orgs.listTeamsInOrganizationById(org.id);
    assert.deepEqual(after, { items: [], count: 0 });
    // The team's memberships went with it.
    assert.equal((await admin.api.orgs.listTeamsForOrganizationMember(org.id, bob.id)).data.count, 0);
  });

  test('the member count stays true through add, remove, set and a member leaving the organization', async () => {
    const { admin, org } = await newOrg();
    const [bob, carl, dave, eve] = await Promise.all(['Bob', 'Carl', 'Dave', 'Eve'].map((n) => newMember(org.id, 'read', n)));
    const { data: team } = await admin.api.orgs.createOrganizationTeam(org.id, { title: 'Counted', members: [bob!.id, carl!.id, bob!.id] });
    assert.equal(team.members, 2);
    const { data: other } = await admin.api.orgs.createOrganizationTeam(org.id, { title: 'Other', members: [carl!.id] });
    const { data: empty } = await admin.api.orgs.createOrganizationTeam(org.id, { title: 'Empty' });
    const counts = async () =>
      Object.fromEntries((await admin.api.orgs.listTeamsInOrganizationById(org.id)).data.items.map((i) => [i.title, i.members]));
    assert.deepEqual(await counts(), { Counted: 2, Other: 1, Empty: 0 });
    const count = async () => (await admin.api.orgs.getTeamInOrganizationById(org.id, team.id)).data.members;

    assert.equal((await admin.api.orgs.addMemberToOrganizationTeamById(org.id, team.id, dave!.id, {})).status, 204);
    assert.equal(await count(), 3);
    await admin.api.orgs.addMemberToOrganizationTeamById(org.id, team.id, dave!.id, {});
    assert.equal(await count(), 3, 'adding a member twice does not count them twice');

    const set = await admin.api.orgs.updateMembersInOrganizationTeam(org.id, team.id, { add: [eve!.email.toUpperCase()], remove: [carl!.id] });
    assert.equal(set.status, 204);
    assert.equal(await count(), 3);
    assert.deepEqual(Object.keys(await teamMemberRoles(admin.api, org.id, team.id)).sort(), [bob!.id, dave!.id, eve!.id].sort());

    assert.equal((await admin.api.orgs.deleteMemberFromOrganizationTeamById(org.id, team.id, bob!.id)).status, 204);
    assert.equal(await count(), 2);
    assert.equal((await admin.api.orgs.deleteMemberFromOrganizationTeamById(org.id, team.id, bob!.id)).status, 204);
    assert.equal(await count(), 2);

    // Leaving the organization removes the member from its teams.
    await t.server.services.db.deleteFrom('members').where('organization_id', '=', org.id).where('user_id', '=', dave!.id).execute();
    assert.equal(await count(), 1);
    assert.deepEqual(await counts(), { Counted: 1, Other: 1, Empty: 0 });
    assert.equal((await admin.api.orgs.getTeamInOrganizationById(org.id, empty.id)).data.members, 0);
    await admin.api.orgs.updateMembersInOrganizationTeam(org.id, other.id, { remove: [carl!.email] });
    assert.deepEqual(await counts(), { Counted: 1, Other: 0, Empty: 0 });
    assert.deepEqual(Object.keys(await teamMemberRoles(admin.api, org.id, team.id)), [eve!.id]);
    await expectStatus(admin.api.orgs.listTeamsForOrganizationMember(org.id, dave!.id), 404);
  });

  test('set members: ids or emails, removal wins, roles, and all or nothing', async () => {
    const { admin, org } = await newOrg();
    const [bob, carl, dave, eve] = await Promise.all(['Bob', 'Carl', 'Dave', 'Eve'].map((n) => newMember(org.id, 'read', n)));
    const { data: team } = await admin.api.orgs.createOrganizationTeam(org.id, { title: 'Core', members: [bob!.id] });

    await admin.api.orgs.updateMembersInOrganizationTeam(org.id, team.id, {
      add: [carl!.email, dave!.id, bob!.id],
      remove: [dave!.email],
      memberships: { [bob!.id]: { role: TeamMemberRole.Owner }, [eve!.email]: { role: TeamMemberRole.Owner } },
    });
    // Dave was both added and removed: removed. Eve got a role without being in `add`: added with it.
    assert.deepEqual(await teamMemberRoles(admin.api, org.id, team.id), { [bob!.id]: 'owner', [carl!.id]: 'member', [eve!.id]: 'owner' });

    // Adding someone already in the team without a role keeps their role.
    await admin.api.orgs.updateMembersInOrganizationTeam(org.id, team.id, { add: [bob!.id] });
    await admin.api.orgs.addMemberToOrganizationTeamById(org.id, team.id, bob!.id, {});
    assert.equal((await teamMemberRoles(admin.api, org.id, team.id))[bob!.id], 'owner');
    // With a role, the role changes.
    await admin.api.orgs.addMemberToOrganizationTeamById(org.id, team.id, bob!.id, { role: TeamMemberRole.Member });
    await admin.api.orgs.addMemberToOrganizationTeamById(org.id, team.id, dave!.id, { role: TeamMemberRole.Owner });
    assert.deepEqual(await teamMemberRoles(admin.api, org.id, team.id), {
      [bob!.id]: 'member',
      [carl!.id]: 'member',
      [dave!.id]: 'owner',
      [eve!.id]: 'owner',
    });

    // One unknown user fails the whole request and changes nothing.
    const before = await teamMemberRoles(admin.api, org.id, team.id);
    const res = await t.request('PUT', `/v1/orgs/${org.id}/teams/${team.id}/members`, {
      token: admin.token,
      body: { add: [], remove: [bob!.id, carl!.id], memberships: { [dave!.id]: { role: 'member' } } },
    });
    assert.equal(res.status, 204);
    // Bodies are strict: an unknown field is a 400 naming it, and changes nothing.
    const unknown = await t.request('PUT', `/v1/orgs/${org.id}/teams/${team.id}/members`, {
      token: admin.token,
      body: { add: [], remove: [dave!.id], extra: 1 },
    });
    assert.equal(unknown.status, 400);
    assert.match(unknown.body.error.message, /unknown field "extra"/);
    assert.deepEqual(await teamMemberRoles(admin.api, org.id, team.id), { [dave!.id]: 'member', [eve!.id]: 'owner' });
    const failing = await t.request('PUT', `/v1/orgs/${org.id}/teams/${team.id}/members`, {
      token: admin.token,
      body: { add: [bob!.id, 'nobody@example.com'], remove: [eve!.id], memberships: { [dave!.id]: { role: 'owner' } } },
    });
    assert.equal(failing.status, 400);
    assert.match(failing.body.error.message, /^add: "nobody@example.com" is not a member of the organization$/);
    assert.notDeepEqual(before, await teamMemberRoles(admin.api, org.id, team.id));
    assert.deepEqual(await teamMemberRoles(admin.api, org.id, team.id), { [dave!.id]: 'member', [eve!.id]: 'owner' });

    // An empty change is a no-op.
    assert.equal((await admin.api.orgs.updateMembersInOrganizationTeam(org.id, team.id, {})).status, 204);
    assert.equal((await admin.api.orgs.getTeamInOrganizationById(org.id, team.id)).data.members, 2);
  });

  test('concurrent changes of one team neither fail nor lose the count', async () => {
    const { admin, org } = await newOrg();
    const users = await Promise.all([1, 2, 3, 4, 5, 6].map((i) => newMember(org.id, 'read', `U${i}`)));
    const { data: team } = await admin.api.orgs.createOrganizationTeam(org.id, { title: 'Busy' });
    // The same users in different orders: unserialized upserts would deadlock on PostgreSQL.
    const orders = [0, 1, 2, 3, 4, 5, 6, 7].map((k) => users.map((_, i) => users[(i * (k % 2 ? 1 : 5) + k) % users.length]!));
    const results = await Promise.all(
      orders.map((order, k) =>
        statusOf(
          admin.api.orgs.updateMembersInOrganizationTeam(org.id, team.id, {
            add: order.map((u) => u.id),
            memberships: { [order[0]!.id]: { role: k % 2 ? TeamMemberRole.Owner : TeamMemberRole.Member } },
          }),
        ),
      ),
    );
    assert.deepEqual(results, orders.map(() => 204));
    assert.equal((await admin.api.orgs.getTeamInOrganizationById(org.id, team.id)).data.members, users.length);

    // A member leaving the organization while being added: either order is fine, never a 500.
    const leaver = await newMember(org.id, 'read', 'Leaver');
    const [status] = await Promise.all([
      statusOf(admin.api.orgs.updateMembersInOrganizationTeam(org.id, team.id, { add: [leaver.id] })),
      t.server.services.db.deleteFrom('members').where('organization_id', '=', org.id).where('user_id', '=', leaver.id).execute(),
    ]);
    assert.ok(status === 204 || status === 400, `status ${status}`);
    const roles = await teamMemberRoles(admin.api, org.id, team.id);
    assert.deepEqual(Object.keys(roles).sort(), users.map((u) => u.id).sort());
    assert.equal((await admin.api.orgs.getTeamInOrganizationById(org.id, team.id)).data.members, users.length);
  });

  test('the title filter is a case-insensitive "contains" where % and _ are plain characters', async () => {
    const { admin, org } = await newOrg();
    const bob = await newMember(org.id, 'read', 'Bob');
    const titles = ['Docs Writers', 'API docs', 'Support', '100% Team', 'snake_case', 'snakeXcase', 'Back\\slash'];
    const ids = new Map<string, string>();
    for (const title of titles) {
      const { data } = await admin.api.orgs.createOrganizationTeam(org.id, { title, members: [bob.id] });
      ids.set(title, data.id);
    }
    const search = async (title: string) => {
      const { data } = await bob.api.orgs.listTeamsInOrganizationById(org.id, { title });
      assert.equal(data.count, data.items.length);
      return data.items.map((i) => i.title);
    };
    assert.deepEqual(await search('DOCS'), ['Docs Writers', 'API docs']);
    assert.deepEqual(await search('%'), ['100% Team']);
    assert.deepEqual(await search('_'), ['snake_case']);
    assert.deepEqual(await search('e_c'), ['snake_case']);
    assert.deepEqual(await search('\\'), ['Back\\slash']);
    assert.deepEqual(await search('nothing like it'), []);
    assert.equal((await bob.api.orgs.listTeamsInOrganizationById(org.id)).data.count, titles.length);

    const { data: mine } = await bob.api.orgs.listTeamsForOrganizationMember(org.id, bob.id, { title: 'sUpPoRt' });
    assert.equal(mine.count, 1);
    assert.deepEqual(mine.items.map((i) => [i.team.id, i.member.role]), [[ids.get('Support'), 'member']]);
    const { data: snake } = await bob.api.orgs.listTeamsForOrganizationMember(org.id, bob.id, { title: '_' });
    assert.deepEqual(snake.items.map((i) => i.team.title), ['snake_case']);
  });

  test('the owner filter lists the teams that member can manage', async () => {
    const { admin, org } = await newOrg();
    const owner = await newMember(org.id, 'edit', 'Olga Owner');
    const plain = await newMember(org.id, 'create', 'Paul Plain');
    const guestOwner = await newMember(org.id, null, 'Gus Guest');
    const a = (await admin.api.orgs.createOrganizationTeam(org.id, { title: 'Alpha' })).data;
    const b = (await admin.api.orgs.createOrganizationTeam(org.id, { title: 'Beta', members: [owner.id, plain.id] })).data;
    const c = (await admin.api.orgs.createOrganizationTeam(org.id, { title: 'Gamma' })).data;
    await admin.api.orgs.updateMembersInOrganizationTeam(org.id, a.id, {
      memberships: { [owner.id]: { role: TeamMemberRole.Owner }, [guestOwner.id]: { role: TeamMemberRole.Owner } },
    });
    await admin.api.orgs.addMemberToOrganizationTeamById(org.id, c.id, owner.id, { role: TeamMemberRole.Owner });

    const teamsOf = async (ownerId: string, title?: string) => {
      const { data } = await plain.api.orgs.listTeamsInOrganizationById(org.id, { owner: ownerId, ...(title ? { title } : {}) });
      assert.equal(data.count, data.items.length);
      return data.items.map((i) => i.id);
    };
    assert.deepEqual(await teamsOf(admin.id), [a.id, b.id, c.id]);
    assert.deepEqual(await teamsOf(owner.id), [a.id, c.id]);
    assert.deepEqual(await teamsOf(owner.id, 'GAM'), [c.id]);
    assert.deepEqual(await teamsOf(plain.id), []);
    assert.deepEqual(await teamsOf(guestOwner.id), [a.id]);

    const unknown = await t.request('GET', `/v1/orgs/${org.id}/teams?owner=nobody`, { token: plain.token });
    assert.equal(unknown.status, 400);
    assert.equal(unknown.body.error.message, 'owner: "nobody" is not a member of the organization');
  });

  test('team permissions advertise what the caller may do, and match what is enforced', async () => {
    const { admin, org } = await newOrg();
    const owner = await newMember(org.id, 'read', 'Olga Owner');
    const reader = await newMember(org.id, 'read', 'Rita Reader');
    const target = await newMember(org.id, 'read', 'Tom Target');
    const mine = (await admin.api.orgs.createOrganizationTeam(org.id, { title: 'Mine', members: [reader.id] })).data;
    const other = (await admin.api.orgs.createOrganizationTeam(org.id, { title: 'Other' })).data;
    await admin.api.orgs.addMemberToOrganizationTeamById(org.id, mine.id, owner.id, { role: TeamMemberRole.Owner });

    const perms = async (user: TestUser) =>
      (await user.api.orgs.listTeamsInOrganizationById(org.id)).data.items.map((i) => [i.title, i.permissions.admin, i.permissions.view]);
    assert.deepEqual(await perms(admin), [['Mine', true, true], ['Other', true, true]]);
    assert.deepEqual(await perms(owner), [['Mine', true, true], ['Other', false, true]]);
    assert.deepEqual(await perms(reader), [['Mine', false, true], ['Other', false, true]]);

    // What `admin: true` promises, the owner can do; what `admin: false` denies, they cannot.
    assert.equal((await owner.api.orgs.addMemberToOrganizationTeamById(org.id, mine.id, target.id, {})).status, 204);
    await expectStatus(owner.api.orgs.addMemberToOrganizationTeamById(org.id, other.id, target.id, {}), 403);
    await expectStatus(reader.api.orgs.addMemberToOrganizationTeamById(org.id, mine.id, target.id, {}), 403);
    // Owning a team does not make one an organization admin.
    await expectStatus(owner.api.orgs.updateTeamInOrganizationById(org.id, mine.id, { title: 'Renamed' }), 403);

    const { data: ownerView } = await owner.api.orgs.listTeamsForOrganizationMember(org.id, reader.id);
    assert.deepEqual(ownerView.items.map((i) => [i.team.id, i.team.permissions.admin, i.member.role]), [[mine.id, true, 'member']]);
    // A team owner can demote themselves, after which they no longer manage the team.
    await owner.api.orgs.updateMembersInOrganizationTeam(org.id, mine.id, { memberships: { [owner.id]: { role: TeamMemberRole.Member } } });
    assert.equal((await owner.api.orgs.getTeamInOrganizationById(org.id, mine.id)).data.permissions.admin, false);
    await expectStatus(owner.api.orgs.deleteMemberFromOrganizationTeamById(org.id, mine.id, target.id), 403);
  });

  test('paging visits every team exactly once, in order, while teams are created in between', async () => {
    const { admin, org } = await newOrg();
    const created: string[] = [];
    const create = async (n: number) => {
      for (let i = 0; i < n; i++) {
        created.push((await admin.api.orgs.createOrganizationTeam(org.id, { title: `Team ${created.length + 1}` })).data.id);
      }
    };
    await create(5);
    const seen: string[] = [];
    let page: string | undefined;
    let pages = 0;
    do {
      const { data } = await admin.api.orgs.listTeamsInOrganizationById(org.id, { limit: 2, ...(page ? { page } : {}) });
      assert.ok(data.items.length <= 2);
      assert.equal(data.count, created.length, 'count is the total matching, not the page size');
      seen.push(...data.items.map((i) => i.id));
      page = data.next?.page;
      pages++;
      if (pages === 1) await create(2);
    } while (page);
    assert.equal(pages, 4);
    assert.deepEqual(seen, created);

    const bad = await t.request('GET', `/v1/orgs/${org.id}/teams?page=not-a-cursor`, { token: admin.token });
    assert.equal(bad.status, 400);
    assert.match(bad.body.error.message, /page/);

    // A cursor of another list is refused, not misread.
    // Team members are listed in the order they joined the organization.
    const members: TestUser[] = [];
    for (const i of [1, 2, 3]) members.push(await newMember(org.id, 'read', `M${i}`));
    await admin.api.orgs.updateMembersInOrganizationTeam(org.id, created[0]!, { add: members.map((m) => m.id) });
    const first = await admin.api.orgs.listTeamMembersInOrganizationById(org.id, created[0]!, { limit: 2 });
    assert.deepEqual(first.data.items.map((i) => i.organization.id), [members[0]!.id, members[1]!.id]);
    assert.equal(first.data.count, 3);
    const second = await admin.api.orgs.listTeamMembersInOrganizationById(org.id, created[0]!, { limit: 2, page: first.data.next!.page });
    assert.deepEqual(second.data.items.map((i) => i.organization.id), [members[2]!.id]);
    assert.equal(second.data.next, undefined);
    await expectStatus(admin.api.orgs.listTeamsInOrganizationById(org.id, { page: first.data.next!.page }), 400);

    // The member's teams page the same way.
    await Promise.all(created.slice(1, 4).map((id) => admin.api.orgs.addMemberToOrganizationTeamById(org.id, id, members[0]!.id, {})));
    const p1 = await admin.api.orgs.listTeamsForOrganizationMember(org.id, members[0]!.id, { limit: 3 });
    const p2 = await admin.api.orgs.listTeamsForOrganizationMember(org.id, members[0]!.id, { limit: 3, page: p1.data.next!.page });
    assert.equal(p1.data.count, 4);
    assert.deepEqual([...p1.data.items, ...p2.data.items].map((i) => i.team.id), created.slice(0, 4));
    assert.equal(p2.data.next, undefined);
  });

  test('teams are scoped to their organization', async () => {
    const { admin, org } = await newOrg('Org A');
    const { data: otherOrg } = await admin.api.orgs.createOrganization({ title: 'Org B' });
    const bob = await newMember(org.id, 'read', 'Bob');
    const stranger = await newMember(otherOrg.id, 'read', 'Stranger');
    const { data: team } = await admin.api.orgs.createOrganizationTeam(org.id, { title: 'A team', members: [bob.id] });

    // The caller is admin of both organizations, but the team belongs to A only.
    await expectStatus(admin.api.orgs.getTeamInOrganizationById(otherOrg.id, team.id), 404);
    await expectStatus(admin.api.orgs.updateTeamInOrganizationById(otherOrg.id, team.id, { title: 'Stolen' }), 404);
    await expectStatus(admin.api.orgs.listTeamMembersInOrganizationById(otherOrg.id, team.id), 404);
    await expectStatus(admin.api.orgs.addMemberToOrganizationTeamById(otherOrg.id, team.id, stranger.id, {}), 404);
    await expectStatus(admin.api.orgs.deleteMemberFromOrganizationTeamById(otherOrg.id, team.id, bob.id), 404);
    await expectStatus(admin.api.orgs.updateMembersInOrganizationTeam(otherOrg.id, team.id, { remove: [bob.id] }), 404);
    assert.equal((await admin.api.orgs.removeTeamFromOrganizationById(otherOrg.id, team.id)).status, 204);
    assert.deepEqual((await admin.api.orgs.listTeamsInOrganizationById(otherOrg.id)).data.items, []);
    assert.deepEqual((await admin.api.orgs.listTeamsForOrganizationMember(otherOrg.id, stranger.id)).data.items, []);
    await expectStatus(admin.api.orgs.listTeamsForOrganizationMember(otherOrg.id, bob.id), 404);

    // Still there, unchanged, and members of another organization cannot join it.
    const { data: still } = await admin.api.orgs.getTeamInOrganizationById(org.id, team.id);
    assert.equal(still.title, 'A team');
    assert.equal(still.members, 1);
    await expectStatus(admin.api.orgs.addMemberToOrganizationTeamById(org.id, team.id, stranger.id, {}), 404);
    await expectStatus(admin.api.orgs.updateMembersInOrganizationTeam(org.id, team.id, { add: [stranger.email] }), 400);
    await expectStatus(admin.api.orgs.createOrganizationTeam(org.id, { title: 'Mixed', members: [bob.id, stranger.id] }), 400);
    assert.equal((await admin.api.orgs.listTeamsInOrganizationById(org.id)).data.count, 1, 'the failed create left no team');
  });

  test('permission matrix: every role against every operation', async () => {
    const { admin, org } = await newOrg('Matrix');
    const target = await newMember(org.id, 'read', 'Target');
    const { data: team } = await admin.api.orgs.createOrganizationTeam(org.id, { title: 'Managed', members: [target.id] });

    type Persona = 'admin' | 'create' | 'review' | 'edit' | 'comment' | 'read' | 'guest' | 'teamOwner' | 'outsider';
    const people = new Map<Persona, TestUser>([['admin', admin]]);
    for (const role of ['create', 'review', 'edit', 'comment', 'read'] as const) people.set(role, await newMember(org.id, role, role));
    people.set('guest', await newMember(org.id, null, 'guest'));
    const owner = await newMember(org.id, 'read', 'team owner');
    await admin.api.orgs.addMemberToOrganizationTeamById(org.id, team.id, owner.id, { role: TeamMemberRole.Owner });
    people.set('teamOwner', owner);
    people.set('outsider', await t.user('outsider'));

    const expect = (ok: number, allowed: Persona[], denied = 403) =>
      Object.fromEntries([...people.keys()].map((p) => [p, p === 'outsider' ? 404 : allowed.includes(p) ? ok : denied]));
    const withRole: Persona[] = ['admin', 'create', 'review', 'edit', 'comment', 'read', 'teamOwner'];
    const managers: Persona[] = ['admin', 'teamOwner'];

    const operations: [string, Record<string, number>, (u: TestUser, p: Persona) => Promise<{ status: number }>][] = [
      ['listTeams', expect(200, withRole), (u) => u.api.orgs.listTeamsInOrganizationById(org.id)],
      ['getTeam', expect(200, withRole), (u) => u.api.orgs.getTeamInOrganizationById(org.id, team.id)],
      ['listTeamMembers', expect(200, withRole), (u) => u.api.orgs.listTeamMembersInOrganizationById(org.id, team.id)],
      ['listMemberTeams', expect(200, withRole), (u) => u.api.orgs.listTeamsForOrganizationMember(org.id, target.id)],
      ['createTeam', expect(201, ['admin']), (u, p) => u.api.orgs.createOrganizationTeam(org.id, { title: `By ${p}` })],
      ['renameTeam', expect(200, ['admin']), (u, p) => u.api.orgs.updateTeamInOrganizationById(org.id, team.id, { title: `Renamed by ${p}` })],
      ['addMember', expect(204, managers), (u) => u.api.orgs.addMemberToOrganizationTeamById(org.id, team.id, target.id, {})],
      ['setMembers', expect(204, managers), (u) => u.api.orgs.updateMembersInOrganizationTeam(org.id, team.id, { add: [target.id] })],
      ['removeMember', expect(204, managers), (u) => u.api.orgs.deleteMemberFromOrganizationTeamById(org.id, team.id, target.id)],
      [
        'deleteTeam',
        expect(204, ['admin']),
        async (u, p) => {
          const { data: doomed } = await admin.api.orgs.createOrganizationTeam(org.id, { title: `Doomed for ${p}` });
          return u.api.orgs.removeTeamFromOrganizationById(org.id, doomed.id);
        },
      ],
    ];

    for (const [name, expected, run] of operations) {
      const actual: Record<string, number> = {};
      for (const [persona, user] of people) actual[persona] = await statusOf(run(user, persona));
      assert.deepEqual(actual, expected, name);
    }

    // Only the allowed callers changed anything.
    const { data: teams } = await admin.api.orgs.listTeamsInOrganizationById(org.id);
    const refused = [...people.keys()].filter((p) => p !== 'admin').map((p) => `Doomed for ${p}`);
    assert.deepEqual(teams.items.map((i) => i.title).sort(), ['By admin', ...refused, 'Renamed by admin'].sort());
    // Unknown team: 404 for whoever may otherwise read or manage it; deletes answer 204 for admins.
    const ghost = 'NoSuchTeam0000000000';
    await expectStatus(people.get('read')!.api.orgs.getTeamInOrganizationById(org.id, ghost), 404);
    await expectStatus(people.get('read')!.api.orgs.listTeamMembersInOrganizationById(org.id, ghost), 404);
    await expectStatus(admin.api.orgs.updateTeamInOrganizationById(org.id, ghost, { title: 'x' }), 404);
    await expectStatus(admin.api.orgs.addMemberToOrganizationTeamById(org.id, ghost, target.id, {}), 404);
    await expectStatus(admin.api.orgs.deleteMemberFromOrganizationTeamById(org.id, ghost, target.id), 404);
    await expectStatus(admin.api.orgs.updateMembersInOrganizationTeam(org.id, ghost, {}), 404);
    await expectStatus(people.get('edit')!.api.orgs.removeTeamFromOrganizationById(org.id, ghost), 403);
    assert.equal((await admin.api.orgs.removeTeamFromOrganizationById(org.id, ghost)).status, 204);
    // Unknown organization: 404 for everyone.
    await expectStatus(admin.api.orgs.listTeamsInOrganizationById('NoSuchOrg'), 404);
    await expectStatus(admin.api.orgs.removeTeamFromOrganizationById('NoSuchOrg', team.id), 404);
  });

  test('bad input is a 400 that names what to fix', async () => {
    const { admin, org } = await newOrg();
    const bob = await newMember(org.id, 'read', 'Bob');
    const { data: team } = await admin.api.orgs.createOrganizationTeam(org.id, { title: 'Valid' });
    const teams = `/v1/orgs/${org.id}/teams`;
    const members = `${teams}/${team.id}/members`;

    const cases: [string, string, { body?: unknown; raw?: string }, RegExp][] = [
      ['PUT', teams, { body: {} }, /^Invalid body: must have property "title"$/],
      ['PUT', teams, { body: { title: '' } }, /^Invalid body\.title: must NOT have fewer than 1 characters$/],
      ['PUT', teams, { body: { title: '   ' } }, /^Invalid body\.title: must match pattern/],
      ['PUT', teams, { body: { title: 'x'.repeat(65) } }, /body\.title: must NOT have more than 64 characters/],
      ['PUT', teams, { body: { title: 42 } }, /body\.title: must be string/],
      ['PUT', teams, { body: { title: 'T', members: bob.id } }, /body\.members: must be array/],
      ['PUT', teams, { body: { title: 'T', members: [7] } }, /body\.members\.0: must be string/],
      ['PUT', teams, { body: { title: 'T', members: [bob.id, 'ghost-user'] } }, /^members: "ghost-user" is not a member of the organization$/],
      ['PUT', teams, { body: { title: 'T', members: ['a@x.test', 'b@x.test'] } }, /^members: "a@x\.test", "b@x\.test" are not members/],
      ['PUT', teams, { raw: '{"title": "T",' }, /^Malformed JSON body/],
      ['PUT', teams, { raw: '"just a string"' }, /^Invalid body: must be object$/],
      ['PATCH', `${teams}/${team.id}`, { body: {} }, /^Invalid body: must have property "title"$/],
      ['PATCH', `${teams}/${team.id}`, { body: { title: '' } }, /^Invalid body\.title: must NOT have fewer than 1 characters$/],
      ['PATCH', `${teams}/${team.id}`, { body: { title: 'y'.repeat(65) } }, /body\.title: must NOT have more than 64 characters/],
      ['PATCH', `${teams}/${team.id}`, { body: { title: ['T'] } }, /body\.title: must be string/],
      ['PUT', members, { body: { add: bob.id } }, /body\.add: must be array/],
      ['PUT', members, { body: { remove: [null] } }, /body\.remove\.0: must be string/],
      ['PUT', members, { body: { add: [''] } }, /^Invalid body\.add\.0: must NOT have fewer than 1 characters$/],
      ['PUT', members, { body: { memberships: { [bob.id]: { role: 'boss' } } } }, /^Invalid body\.memberships\.\w+\.role: must be one of "owner", "member"$/],
      ['PUT', members, { body: { memberships: { [bob.id]: {} } } }, /^Invalid body\.memberships\.\w+: must have property "role"$/],
      ['PUT', members, { body: { memberships: [] } }, /body\.memberships: must be object/],
      ['PUT', members, { body: { remove: ['ghost-user'] } }, /^remove: "ghost-user" is not a member of the organization$/],
      ['PUT', members, { body: { memberships: { 'ghost@x.test': { role: 'owner' } } } }, /^memberships: "ghost@x\.test" is not a member/],
      ['PUT', `${members}/${bob.id}`, { body: { role: 'boss' } }, /body\.role: must be one of "owner", "member"/],
      ['PUT', `${members}/${bob.id}`, { body: { role: 1 } }, /^Invalid body\.role: must be string$/],
      ['PUT', `${members}/${bob.id}`, { raw: '[' }, /^Malformed JSON body/],
      ['GET', `${teams}?limit=0`, {}, /^Invalid querystring\.limit: must be /],
      ['GET', `${teams}?limit=1001`, {}, /^Invalid querystring\.limit: must be /],
      ['GET', `${teams}?limit=many`, {}, /^Invalid querystring\.limit: must be /],
      ['GET', `${teams}?title=${'z'.repeat(65)}`, {}, /^Invalid querystring\.title: must NOT have more than 64 characters$/],
      ['GET', `${members}?limit=-1`, {}, /^Invalid querystring\.limit: must be /],
      ['GET', `/v1/orgs/${org.id}/members/${bob.id}/teams?page=%%%`, {}, /^Invalid "page" cursor/],
      // Characters PostgreSQL refuses in text must be refused before they reach it (else a 500).
      ['PUT', teams, { body: { title: 'a\u0000b' } }, /^title: must not contain control characters/],
      ['PATCH', `${teams}/${team.id}`, { body: { title: 'line\nbreak' } }, /^title: must not contain control characters/],
      ['GET', `${teams}?owner=a%00b`, {}, /^Invalid querystring\.owner: must match pattern/],
      ['GET', `${teams}/a%00b`, {}, /^Invalid params\.teamId: must match pattern/],
      ['GET', `/v1/orgs/a%00b/teams`, {}, /^Invalid params\.organizationId: must match pattern/],
      ['DELETE', `${members}/a%00b`, {}, /^Invalid params\.userId: must match pattern/],
      ['GET', `/v1/orgs/${org.id}/members/a%00b/teams`, {}, /^Invalid params\.userId: must match pattern/],
      ['PUT', members, { body: { add: ['x\u0000y'] } }, /^add: "x\u0000y" is not a member of the organization$/],
    ];
    for (const [method, path, input, message] of cases) {
      const res = await t.request(method, path, { token: admin.token, ...input });
      assert.equal(res.status, 400, `${method} ${path} ${JSON.stringify(input)}: ${JSON.stringify(res.body)}`);
      assert.equal(res.body.error.code, 400);
      assert.match(res.body.error.message, message, `${method} ${path} ${JSON.stringify(input)}`);
    }
    // Nothing above changed the team.
    const { data: unchanged } = await admin.api.orgs.getTeamInOrganizationById(org.id, team.id);
    assert.deepEqual([unchanged.title, unchanged.members], ['Valid', 0]);
    assert.equal((await admin.api.orgs.listTeamsInOrganizationById(org.id)).data.count, 1);

    // A title filter no title can contain matches nothing.
    const nul = await t.request('GET', `${teams}?title=a%00b`, { token: admin.token });
    assert.deepEqual([nul.status, nul.body], [200, { count: 0, items: [] }]);

    // The body of "add a member" is optional; a title of exactly 64 characters is fine.
    assert.equal((await t.request('PUT', `${members}/${bob.id}`, { token: admin.token })).status, 204);
    assert.equal((await t.request('PUT', `${members}/${bob.id}`, { token: admin.token, raw: 'null' })).status, 204);
    assert.deepEqual(await teamMemberRoles(admin.api, org.id, team.id), { [bob.id]: 'member' });
    const long = await admin.api.orgs.createOrganizationTeam(org.id, { title: 'z'.repeat(64) });
    assert.equal(long.data.title.length, 64);
    // Unknown users in the path are 404s, like unknown teams.
    await expectStatus(admin.api.orgs.addMemberToOrganizationTeamById(org.id, team.id, 'ghost-user', {}), 404);
    await expectStatus(admin.api.orgs.listTeamsForOrganizationMember(org.id, 'ghost-user'), 404);
    // Without a token: 401.
    assert.equal((await t.request('GET', teams)).status, 401);
  });
});
