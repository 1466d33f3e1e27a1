import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { MemberRole, type InviteLinkToOrganization, type OrganizationInviteLink } from '@gitbook/api';
import type { RoleOrGuest } from '../src/platform/db/schema.ts';
import { inviteIsRedundant } from '../src/platform/policy.ts';
import { createUser } from '../src/users/service.ts';
import { expectStatus, startTestServer, type TestServer, type TestUser } from './support/server.ts';

let t: TestServer;
before(async () => {
  t = await startTestServer();
});
after(async () => {
  await t?.close();
});

const db = () => t.server.services.db;

/** Organization invite links are the only kind Folio creates; narrows the official union type. */
function orgInvite(invite: OrganizationInviteLink): InviteLinkToOrganization {
  assert.ok('role' in invite, `expected an organization invite, got ${JSON.stringify(invite)}`);
  return invite;
}

async function membership(organizationId: string, userId: string) {
  return db()
    .selectFrom('members')
    .select(['role', 'sso', 'disabled'])
    .where('organization_id', '=', organizationId)
    .where('user_id', '=', userId)
    .executeTakeFirst();
}

async function pendingInvites(organizationId: string) {
  return db()
    .selectFrom('email_invites')
    .select(['email', 'role', 'sso', 'invited_by'])
    .where('organization_id', '=', organizationId)
    .orderBy('email')
    .execute();
}

/** Adds a member directly in the database, so permission tests do not depend on the feature under test. */
async function addMember(organizationId: string, user: TestUser, role: RoleOrGuest) {
  await db()
    .insertInto('members')
    .values({ organization_id: organizationId, user_id: user.id, role, joined_at: new Date(), last_seen_at: null })
    .execute();
}

async function newOrg(title = 'Invite Org') {
  const admin = await t.user('Admin');
  const { data: org } = await admin.api.orgs.createOrganization({ title });
  return { admin, org };
}

describe('invite links', () => {
  test('create, get, list with paging, update (role and level) and delete', async () => {
    const { admin, org } = await newOrg();

    const created = await admin.api.orgs.createOrganizationInvite(org.id, { role: MemberRole.Read });
    assert.equal(created.status, 201);
    const read = orgInvite(created.data);
    assert.equal(read.object, 'invite');
    assert.equal(read.role, 'read');
    assert.equal(read.redundant, true);
    assert.equal(created.headers.get('location'), `${t.url}/v1/orgs/${org.id}/link-invites/${read.id}`);

    const guest = orgInvite((await admin.api.orgs.createOrganizationInvite(org.id, { role: null })).data);
    assert.equal(guest.role, null);
    assert.notEqual(guest.id, read.id);

    const got = orgInvite((await admin.api.orgs.getOrganizationInviteLink(org.id, read.id)).data);
    assert.deepEqual(got, { object: 'invite', id: read.id, role: 'read', redundant: true });

    const { data: list } = await admin.api.orgs.listOrganizationInviteLinks(org.id);
    assert.equal(list.count, 2);
    assert.deepEqual(list.items.map((i) => i.id), [read.id, guest.id]);
    assert.equal(list.next, undefined);

    const { data: first } = await admin.api.orgs.listOrganizationInviteLinks(org.id, { limit: 1 });
    assert.deepEqual(first.items.map((i) => i.id), [read.id]);
    assert.equal(first.count, 2);
    assert.ok(first.next?.page);
    const { data: second } = await admin.api.orgs.listOrganizationInviteLinks(org.id, { limit: 1, page: first.next.page });
    assert.deepEqual(second.items.map((i) => i.id), [guest.id]);
    assert.equal(second.next, undefined);

    const byRole = orgInvite((await admin.api.orgs.updateOrganizationInviteById(org.id, read.id, { role: MemberRole.Edit })).data);
    assert.equal(byRole.role, 'edit');
    const byLevel = orgInvite((await admin.api.orgs.updateOrganizationInviteById(org.id, read.id, { level: MemberRole.Comment })).data);
    assert.equal(byLevel.role, 'comment');
    const toGuest = orgInvite((await admin.api.orgs.updateOrganizationInviteById(org.id, read.id, { role: null })).data);
    assert.equal(toGuest.role, null);
    assert.equal(orgInvite((await admin.api.orgs.getOrganizationInviteLink(org.id, read.id)).data).role, null);

    const deleted = await admin.api.orgs.deleteOrganizationInviteById(org.id, read.id);
    assert.equal(deleted.status, 204);
    await expectStatus(admin.api.orgs.getOrganizationInviteLink(org.id, read.id), 404);
    await expectStatus(admin.api.orgs.updateOrganizationInviteById(org.id, read.id, { role: MemberRole.Read }), 404);
    // Deleting is idempotent.
    assert.equal((await admin.api.orgs.deleteOrganizationInviteById(org.id, read.id)).status, 204);
    assert.equal((await admin.api.orgs.deleteOrganizationInviteById(org.id, 'never-existed')).status, 204);
    const raw = await t.request('DELETE', `/v1/orgs/${org.id}/link-invites/${guest.id}`, { token: admin.token });
    assert.equal(raw.status, 204);
    assert.equal(raw.body, undefined);

    const { data: empty } = await admin.api.orgs.listOrganizationInviteLinks(org.id);
    assert.equal(empty.count, 0);
    assert.deepEqual(empty.items, []);
  });

  test('invites are scoped to their organization', async () => {
    const { admin, org } = await newOrg('Org A');
    const { data: other } = await admin.api.orgs.createOrganization({ title: 'Org B' });
    const invite = orgInvite((await admin.api.orgs.createOrganizationInvite(other.id, { role: MemberRole.Edit })).data);

    await expectStatus(admin.api.orgs.getOrganizationInviteLink(org.id, invite.id), 404);
    await expectStatus(admin.api.orgs.updateOrganizationInviteById(org.id, invite.id, { role: MemberRole.Admin }), 404);
    await admin.api.orgs.deleteOrganizationInviteById(org.id, invite.id);
    assert.equal((await admin.api.orgs.listOrganizationInviteLinks(org.id)).data.count, 0);

    // Nothing happened to it through the other organization's id.
    const still = orgInvite((await admin.api.orgs.getOrganizationInviteLink(other.id, invite.id)).data);
    assert.equal(still.role, 'edit');
  });

  test('redundant: the caller already holds the role or a stronger one', async () => {
    const { admin, org } = await newOrg();
    // Admins hold every role, so every invite they can see is redundant for them.
    for (const role of [MemberRole.Admin, MemberRole.Create, MemberRole.Read, null]) {
      const invite = orgInvite((await admin.api.orgs.createOrganizationInvite(org.id, { role })).data);
      assert.equal(invite.redundant, true, `invite ${role}`);
    }
    const { data: list } = await admin.api.orgs.listOrganizationInviteLinks(org.id);
    assert.deepEqual(list.items.map((i) => i.redundant), [true, true, true, true]);

    const as = (role: RoleOrGuest) => ({ role, ownsTeam: false });
    assert.equal(inviteIsRedundant('read', as('read')), true);
    assert.equal(inviteIsRedundant('read', as('comment')), true);
    assert.equal(inviteIsRedundant('edit', as('comment')), false);
    assert.equal(inviteIsRedundant('review', as('edit')), false);
    assert.equal(inviteIsRedundant('edit', as('review')), true);
    assert.equal(inviteIsRedundant('admin', as('create')), false);
    assert.equal(inviteIsRedundant('read', as(null)), false);
    assert.equal(inviteIsRedundant(null, as(null)), true);
    assert.equal(inviteIsRedundant(null, as('read')), true);
    assert.equal(inviteIsRedundant(null, undefined), false);
    assert.equal(inviteIsRedundant('read', undefined), false);
  });
});

describe('joining with an invite link', () => {
  test('a new user joins with the invite role and sees the organization', async () => {
    const { admin, org } = await newOrg();
    const invite = orgInvite((await admin.api.orgs.createOrganizationInvite(org.id, { role: MemberRole.Edit })).data);
    const joiner = await t.user('Joiner');
    await expectStatus(joiner.api.orgs.getOrganizationById(org.id), 404);

    const res = await joiner.api.orgs.joinOrganizationWithInvite(org.id, invite.id);
    assert.equal(res.status, 200);
    assert.deepEqual(res.data, {});
    assert.deepEqual(await membership(org.id, joiner.id), { role: 'edit', sso: false, disabled: false });
    const { data: seen } = await joiner.api.orgs.getOrganizationById(org.id);
    assert.equal(seen.permissions.admin, false);
    assert.equal(seen.permissions.view, true);

    // Joining again changes nothing.
    await joiner.api.orgs.joinOrganizationWithInvite(org.id, invite.id);
    assert.equal((await membership(org.id, joiner.id))?.role, 'edit');
  });

  test('a guest invite makes the joiner a guest', async () => {
    const { admin, org } = await newOrg();
    const invite = orgInvite((await admin.api.orgs.createOrganizationInvite(org.id, { role: null })).data);
    const joiner = await t.user('Guest');
    await joiner.api.orgs.joinOrganizationWithInvite(org.id, invite.id);
    const row = await membership(org.id, joiner.id);
    assert.ok(row);
    assert.equal(row.role, null);
  });

  test('an existing member is raised to the invite role but never lowered', async () => {
    const { admin, org } = await newOrg();
    const invite = async (role: MemberRole | null) =>
      orgInvite((await admin.api.orgs.createOrganizationInvite(org.id, { role })).data).id;
    const readInvite = await invite(MemberRole.Read);
    const reviewInvite = await invite(MemberRole.Review);
    const guestInvite = await invite(null);

    const creator = await t.user('Creator');
    await addMember(org.id, creator, 'create');
    await creator.api.orgs.joinOrganizationWithInvite(org.id, reviewInvite);
    assert.equal((await membership(org.id, creator.id))?.role, 'create');

    const reader = await t.user('Reader');
    await addMember(org.id, reader, 'read');
    await reader.api.orgs.joinOrganizationWithInvite(org.id, guestInvite);
    assert.equal((await membership(org.id, reader.id))?.role, 'read');
    await reader.api.orgs.joinOrganizationWithInvite(org.id, reviewInvite);
    assert.equal((await membership(org.id, reader.id))?.role, 'review');
    await reader.api.orgs.joinOrganizationWithInvite(org.id, readInvite);
    assert.equal((await membership(org.id, reader.id))?.role, 'review');

    const guest = await t.user('Guest');
    await addMember(org.id, guest, null);
    await guest.api.orgs.joinOrganizationWithInvite(org.id, readInvite);
    assert.equal((await membership(org.id, guest.id))?.role, 'read');

    await admin.api.orgs.joinOrganizationWithInvite(org.id, guestInvite);
    assert.equal((await membership(org.id, admin.id))?.role, 'admin');
  });

  test('invite links disabled in the organization: 403 until enabled again', async () => {
    const { admin, org } = await newOrg();
    const invite = orgInvite((await admin.api.orgs.createOrganizationInvite(org.id, { role: MemberRole.Comment })).data);
    await admin.api.orgs.updateOrganizationById(org.id, { inviteLinks: false });
    const joiner = await t.user('Joiner');

    const res = await t.request('POST', `/v1/orgs/${org.id}/invites/${invite.id}`, { token: joiner.token });
    assert.equal(res.status, 403);
    assert.equal(res.body.error.code, 403);
    assert.match(res.body.error.message, /invite links are disabled/i);
    await expectStatus(joiner.api.orgs.joinOrganizationWithInvite(org.id, invite.id), 403);
    assert.equal(await membership(org.id, joiner.id), undefined);

    await admin.api.orgs.updateOrganizationById(org.id, { inviteLinks: true });
    await joiner.api.orgs.joinOrganizationWithInvite(org.id, invite.id);
    assert.equal((await membership(org.id, joiner.id))?.role, 'comment');
  });

  test('unknown, deleted and other-organization invites are 404', async () => {
    const { admin, org } = await newOrg();
    const { data: other } = await admin.api.orgs.createOrganization({ title: 'Other' });
    const otherInvite = orgInvite((await admin.api.orgs.createOrganizationInvite(other.id, { role: MemberRole.Read })).data);
    const invite = orgInvite((await admin.api.orgs.createOrganizationInvite(org.id, { role: MemberRole.Read })).data);
    await admin.api.orgs.deleteOrganizationInviteById(org.id, invite.id);
    const joiner = await t.user('Joiner');

    await expectStatus(joiner.api.orgs.joinOrganizationWithInvite(org.id, 'no-such-invite'), 404);
    await expectStatus(joiner.api.orgs.joinOrganizationWithInvite(org.id, invite.id), 404);
    await expectStatus(joiner.api.orgs.joinOrganizationWithInvite(org.id, otherInvite.id), 404);
    await expectStatus(joiner.api.orgs.joinOrganizationWithInvite('no-such-org', otherInvite.id), 404);
    assert.equal(await membership(org.id, joiner.id), undefined);
    assert.equal(await membership(other.id, joiner.id), undefined);

    // The other organization's invite still works where it belongs.
    await joiner.api.orgs.joinOrganizationWithInvite(other.id, otherInvite.id);
    assert.equal((await membership(other.id, joiner.id))?.role, 'read');
  });

  test('a disabled member cannot re-enable themselves with an invite', async () => {
    const { admin, org } = await newOrg();
    const invite = orgInvite((await admin.api.orgs.createOrganizationInvite(org.id, { role: MemberRole.Admin })).data);
    const member = await t.user('Disabled');
    await addMember(org.id, member, 'read');
    await db().updateTable('members').set({ disabled: true }).where('organization_id', '=', org.id).where('user_id', '=', member.id).execute();
    await expectStatus(member.api.orgs.joinOrganizationWithInvite(org.id, invite.id), 403);
    assert.deepEqual(await membership(org.id, member.id), { role: 'read', sso: false, disabled: true });
  });

  test('a token is required', async () => {
    const { admin, org } = await newOrg();
    const invite = orgInvite((await admin.api.orgs.createOrganizationInvite(org.id, { role: MemberRole.Read })).data);
    const res = await t.request('POST', `/v1/orgs/${org.id}/invites/${invite.id}`);
    assert.equal(res.status, 401);
    assert.equal((await t.request('GET', `/v1/orgs/${org.id}/link-invites`)).status, 401);
  });
});

describe('inviting by email', () => {
  test('existing users become members at once, with a role per entry', async () => {
    const { admin, org } = await newOrg();
    const bob = await t.user('Bob');
    const carol = await t.user('Carol');
    const dave = await t.user('Dave', { email: `dave.${Date.now()}@example.com` });

    const { data } = await admin.api.orgs.inviteUsersToOrganization(org.id, {
      emails: [bob.email.toUpperCase(), { email: carol.email, role: MemberRole.Edit }, { email: dave.email, role: null }],
      role: MemberRole.Comment,
    });
    assert.deepEqual(data, { users: [bob.id, carol.id, dave.id], invited: 3 });
    assert.deepEqual(await membership(org.id, bob.id), { role: 'comment', sso: false, disabled: false });
    assert.deepEqual(await membership(org.id, carol.id), { role: 'edit', sso: false, disabled: false });
    assert.deepEqual(await membership(org.id, dave.id), { role: null, sso: false, disabled: false });
    assert.deepEqual(await pendingInvites(org.id), []);

    const { data: seen } = await carol.api.orgs.getOrganizationById(org.id);
    assert.equal(seen.id, org.id);
  });

  test('existing members are left unchanged and not reported as added', async () => {
    const { admin, org } = await newOrg();
    const bob = await t.user('Bob');
    await addMember(org.id, bob, 'review');
    const erin = await t.user('Erin');

    const { data } = await admin.api.orgs.inviteUsersToOrganization(org.id, {
      emails: [admin.email, bob.email, erin.email, erin.email.toUpperCase()],
      role: MemberRole.Read,
      sso: true,
    });
    assert.deepEqual(data, { users: [erin.id], invited: 3 });
    assert.equal((await membership(org.id, admin.id))?.role, 'admin');
    assert.deepEqual(await membership(org.id, bob.id), { role: 'review', sso: false, disabled: false });
    assert.deepEqual(await membership(org.id, erin.id), { role: 'read', sso: true, disabled: false });
  });

  test('an address given twice counts once, and its first entry decides the role', async () => {
    const { admin, org } = await newOrg();
    const frank = await t.user('Frank');
    const pending = `twice.${Date.now()}@example.com`;
    const { data } = await admin.api.orgs.inviteUsersToOrganization(org.id, {
      emails: [{ email: frank.email, role: MemberRole.Edit }, frank.email.toUpperCase(), pending.toUpperCase(), { email: pending, role: MemberRole.Admin }],
      role: MemberRole.Read,
    });
    assert.deepEqual(data, { users: [frank.id], invited: 2 });
    assert.equal((await membership(org.id, frank.id))?.role, 'edit');
    assert.deepEqual(await pendingInvites(org.id), [{ email: pending, role: 'read', sso: false, invited_by: admin.id }]);
  });

  test("without a role, the organization's default role applies", async () => {
    const { admin, org } = await newOrg();
    await admin.api.orgs.updateOrganizationById(org.id, { defaultRole: MemberRole.Review });
    const bob = await t.user('Bob');
    const { data } = await admin.api.orgs.inviteUsersToOrganization(org.id, { emails: [bob.email] });
    assert.deepEqual(data.users, [bob.id]);
    assert.equal((await membership(org.id, bob.id))?.role, 'review');

    const pendingEmail = `later.${Date.now()}@example.com`;
    await admin.api.orgs.inviteUsersToOrganization(org.id, { emails: [pendingEmail] });
    assert.equal((await pendingInvites(org.id))[0]?.role, 'review');
  });

  test('unknown emails wait as pending invites until the account is created', async () => {
    const { admin, org } = await newOrg();
    const email = `New.Person.${Date.now()}@Example.TEST`;
    const normalized = email.toLowerCase();

    const first = await admin.api.orgs.inviteUsersToOrganization(org.id, { emails: [{ email, role: MemberRole.Create }] });
    assert.deepEqual(first.data, { users: [], invited: 1 });
    assert.deepEqual(await pendingInvites(org.id), [{ email: normalized, role: 'create', sso: false, invited_by: admin.id }]);

    // Re-inviting updates the pending role rather than adding a second invite.
    const again = await admin.api.orgs.inviteUsersToOrganization(org.id, { emails: [email], role: MemberRole.Review, sso: true });
    assert.deepEqual(again.data, { users: [], invited: 1 });
    assert.deepEqual(await pendingInvites(org.id), [{ email: normalized, role: 'review', sso: true, invited_by: admin.id }]);

    const { user } = await createUser(db(), { email, name: 'New Person' });
    assert.deepEqual(await membership(org.id, user.id), { role: 'review', sso: true, disabled: false });
    assert.deepEqual(await pendingInvites(org.id), []);
  });

  test('a pending guest invite makes a guest member', async () => {
    const { admin, org } = await newOrg();
    const email = `guest.${Date.now()}@example.com`;
    await admin.api.orgs.inviteUsersToOrganization(org.id, { emails: [email], role: null });
    const { user } = await createUser(db(), { email, name: 'Guest' });
    const row = await membership(org.id, user.id);
    assert.ok(row);
    assert.equal(row.role, null);
  });

  test('existing users and unknown emails in one call', async () => {
    const { admin, org } = await newOrg();
    const bob = await t.user('Bob');
    const unknown = `mixed.${Date.now()}@example.com`;
    const { data } = await admin.api.orgs.inviteUsersToOrganization(org.id, {
      emails: [unknown, { email: bob.email, role: MemberRole.Admin }],
      role: MemberRole.Edit,
    });
    assert.deepEqual(data, { users: [bob.id], invited: 2 });
    assert.equal((await membership(org.id, bob.id))?.role, 'admin');
    assert.deepEqual(await pendingInvites(org.id), [{ email: unknown, role: 'edit', sso: false, invited_by: admin.id }]);
  });
});

describe('invite permissions', () => {
  const roles: { name: string; role: RoleOrGuest | 'outsider' }[] = [
    { name: 'admin', role: 'admin' },
    { name: 'create', role: 'create' },
    { name: 'review', role: 'review' },
    { name: 'edit', role: 'edit' },
    { name: 'comment', role: 'comment' },
    { name: 'read', role: 'read' },
    { name: 'guest', role: null },
    { name: 'outsider', role: 'outsider' },
  ];

  for (const { name, role } of roles) {
    test(`${name}: exact status of every invite operation`, async () => {
      const { admin, org } = await newOrg();
      const caller = role === 'admin' ? await t.user('Second admin') : await t.user(name);
      if (role !== 'outsider') await addMember(org.id, caller, role);
      const invite = orgInvite((await admin.api.orgs.createOrganizationInvite(org.id, { role: MemberRole.Read })).data);

      const manage = role === 'admin' ? null : role === 'outsider' ? 404 : 403;
      const expect = async (call: () => Promise<{ status: number }>, ok: number) => {
        if (manage === null) assert.equal((await call()).status, ok);
        else await expectStatus(call(), manage);
      };
      const api = caller.api.orgs;
      const invitee = `invitee.${name}.${Date.now()}@example.com`;

      await expect(() => api.listOrganizationInviteLinks(org.id), 200);
      await expect(() => api.createOrganizationInvite(org.id, { role: MemberRole.Edit }), 201);
      await expect(() => api.getOrganizationInviteLink(org.id, invite.id), 200);
      await expect(() => api.updateOrganizationInviteById(org.id, invite.id, { role: MemberRole.Comment }), 200);
      await expect(() => api.inviteUsersToOrganization(org.id, { emails: [invitee] }), 200);
      await expect(() => api.deleteOrganizationInviteById(org.id, 'missing'), 204);
      await expect(() => api.deleteOrganizationInviteById(org.id, invite.id), 204);

      // Refused callers changed nothing.
      const invites = await db().selectFrom('invite_links').select(['id', 'role']).where('organization_id', '=', org.id).execute();
      const pending = await pendingInvites(org.id);
      if (manage === null) {
        assert.equal(invites.length, 1);
        assert.equal(invites[0]!.role, 'edit');
        assert.deepEqual(pending.map((p) => p.email), [invitee]);
      } else {
        assert.deepEqual(invites, [{ id: invite.id, role: 'read' }]);
        assert.deepEqual(pending, []);
      }

      // Anyone holding a valid invite may join, members and outsiders alike.
      const joinable = orgInvite((await admin.api.orgs.createOrganizationInvite(org.id, { role: MemberRole.Comment })).data);
      assert.equal((await caller.api.orgs.joinOrganizationWithInvite(org.id, joinable.id)).status, 200);
      const expected = role === 'outsider' || role === null || role === 'read' ? 'comment' : role;
      assert.equal((await membership(org.id, caller.id))?.role, expected);
    });
  }
});

describe('invite input validation', () => {
  async function setup() {
    const { admin, org } = await newOrg();
    const invite = orgInvite((await admin.api.orgs.createOrganizationInvite(org.id, { role: MemberRole.Read })).data);
    const send = (method: string, path: string, body?: unknown, raw?: string) =>
      t.request(method, `/v1/orgs/${org.id}${path}`, {
        token: admin.token,
        ...(body !== undefined ? { body } : {}),
        ...(raw !== undefined ? { raw } : {}),
      });
    return { admin, org, invite, send };
  }

  function expect400(res: { status: number; body: any }, mentions: RegExp, what: string) {
    assert.equal(res.status, 400, `${what}: expected 400, got ${res.status} ${JSON.stringify(res.body)}`);
    assert.equal(res.body.error.code, 400, what);
    assert.match(res.body.error.message, mentions, what);
  }

  test('creating an invite', async () => {
    const { org, send } = await setup();
    expect400(await send('POST', '/link-invites', { role: 'owner' }), /role/, 'unknown role');
    expect400(await send('POST', '/link-invites', { role: 5 }), /role/, 'number role');
    expect400(await send('POST', '/link-invites', {}), /role/, 'missing role');
    expect400(await send('POST', '/link-invites'), /body/, 'no body');
    expect400(await send('POST', '/link-invites', undefined, '{"role":'), /JSON/, 'malformed JSON');
    expect400(await send('POST', '/link-invites', ['read']), /body/, 'array body');
    for (const body of [{ space: 'abc', level: 'read' }, { collection: 'abc', level: 'read' }, { role: 'read', space: 'abc' }]) {
      expect400(await send('POST', '/link-invites', body), /only organization invites are supported/i, JSON.stringify(body));
    }
    const count = await db().selectFrom('invite_links').select(db().fn.countAll<number>().as('n')).where('organization_id', '=', org.id).executeTakeFirstOrThrow();
    assert.equal(Number(count.n), 1);
  });

  test('updating an invite', async () => {
    const { admin, org, invite, send } = await setup();
    expect400(await send('PATCH', `/link-invites/${invite.id}`, { role: 'owner' }), /role/, 'unknown role');
    expect400(await send('PATCH', `/link-invites/${invite.id}`, { level: 3 }), /body\.level/, 'number level');
    expect400(await send('PATCH', `/link-invites/${invite.id}`, { role: 'read', level: 'owner' }), /body\.level/, 'bad level beside a role');
    expect400(await send('PATCH', `/link-invites/${invite.id}`, {}), /role/, 'empty body');
    expect400(await send('PATCH', `/link-invites/${invite.id}`), /body/, 'no body');
    expect400(await send('PATCH', `/link-invites/${invite.id}`, { role: true }), /role/, 'boolean role');
    expect400(await send('PATCH', `/link-invites/${'x'.repeat(101)}`, { role: 'read' }), /inviteId/, 'overlong invite id');
    const missing = await send('PATCH', '/link-invites/no-such-invite', { role: 'read' });
    assert.equal(missing.status, 404);
    assert.equal(missing.body.error.code, 404);
    await expectStatus(admin.api.orgs.getOrganizationInviteLink(org.id, 'no-such-invite'), 404);
    assert.equal(orgInvite((await admin.api.orgs.getOrganizationInviteLink(org.id, invite.id)).data).role, 'read');
  });

  test('listing invites', async () => {
    const { send } = await setup();
    expect400(await send('GET', '/link-invites?limit=0'), /limit/, 'limit 0');
    expect400(await send('GET', '/link-invites?limit=abc'), /limit/, 'limit abc');
    expect400(await send('GET', '/link-invites?limit=1001'), /limit/, 'limit too large');
    expect400(await send('GET', '/link-invites?page=not-a-cursor'), /page/, 'bad cursor');
    assert.equal((await send('GET', '/link-invites?limit=1')).status, 200);
  });

  test('inviting by email', async () => {
    const { org, send } = await setup();
    const ok = `ok.${Date.now()}@example.com`;
    const cases: [unknown, RegExp][] = [
      [{}, /emails/],
      [{ emails: [] }, /emails/],
      [{ emails: ok }, /emails/],
      [{ emails: ['not-an-email'] }, /emails\.0.*email/],
      [{ emails: [ok, 'two@@example.com'] }, /emails\.1/],
      [{ emails: [{ email: 'bad' }] }, /emails\.0\.email/],
      [{ emails: [{ role: 'read' }] }, /emails\.0.*email/],
      [{ emails: [{ email: ok, role: 'owner' }] }, /emails\.0\.role/],
      [{ emails: [5] }, /emails\.0/],
      [{ emails: [null] }, /emails\.0/],
      [{ emails: Array.from({ length: 101 }, (_, i) => `p${i}@example.com`) }, /emails/],
      [{ emails: [ok], role: 'owner' }, /role/],
      [{ emails: [ok], role: 7 }, /role/],
      [{ emails: [ok], sso: 'yes' }, /sso/],
      [{ emails: [`${'a'.repeat(320)}@example.com`] }, /emails\.0/],
    ];
    for (const [body, mentions] of cases) expect400(await send('POST', '/invites', body), mentions, JSON.stringify(body).slice(0, 80));
    expect400(await send('POST', '/invites'), /body/, 'no body');
    // Nothing was half-applied.
    assert.deepEqual(await pendingInvites(org.id), []);
    const members = await db().selectFrom('members').select('user_id').where('organization_id', '=', org.id).execute();
    assert.equal(members.length, 1);
  });

  test('joining with an overlong invite id', async () => {
    const { org } = await setup();
    const joiner = await t.user('Joiner');
    expect400(await t.request('POST', `/v1/orgs/${org.id}/invites/${'x'.repeat(101)}`, { token: joiner.token }), /inviteId/, 'overlong');
  });
});

test('the API description documents the invite operations', async () => {
  const res = await t.request('GET', '/v1/openapi.json');
  assert.equal(res.status, 200);
  const ops = Object.values(res.body.paths as Record<string, Record<string, { operationId?: string }>>).flatMap((p) =>
    Object.values(p).map((o) => o.operationId),
  );
  for (const id of [
    'listOrganizationInviteLinks',
    'createOrganizationInvite',
    'getOrganizationInviteLink',
    'updateOrganizationInviteById',
    'deleteOrganizationInviteById',
    'joinOrganizationWithInvite',
    'inviteUsersToOrganization',
  ]) {
    assert.ok(ops.includes(id), id);
  }
});
