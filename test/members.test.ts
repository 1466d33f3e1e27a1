import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { MemberRole } from '@gitbook/api';
import { addMember, orgWithPersonas, PERSONAS, personaName, statusOf, type Persona } from './support/factories.ts';
import { expectStatus, startTestServer, type TestServer } from './support/server.ts';

let t: TestServer;
before(async () => {
  t = await startTestServer();
});
after(async () => {
  await t?.close();
});

describe('members', () => {
  test('list, get, change role, mark SSO and remove through the official client', async () => {
    const ann = await t.user('Ann');
    const bob = await t.user('Bob');
    const { data: org } = await ann.api.orgs.createOrganization({ title: 'Acme' });
    await addMember(t, org.id, bob, 'read');

    const { data: list } = await ann.api.orgs.listMembersInOrganizationById(org.id);
    assert.equal(list.count, 2);
    // Default order: most recently joined first.
    assert.deepEqual(list.items.map((m) => m.id), [bob.id, ann.id]);
    assert.equal(list.items[0]!.user.displayName, 'Bob');
    assert.equal(list.items[0]!.role, 'read');
    assert.equal(list.items[1]!.role, 'admin');

    const { data: member } = await ann.api.orgs.getMemberInOrganizationById(org.id, bob.id);
    assert.equal(member.user.email, bob.email);
    assert.equal(member.teams, 0);

    const { data: promoted } = await ann.api.orgs.updateMemberInOrganizationById(org.id, bob.id, { role: MemberRole.Edit });
    assert.equal(promoted.role, 'edit');
    const { data: guest } = await ann.api.orgs.updateMemberInOrganizationById(org.id, bob.id, { role: null });
    assert.equal(guest.role, null);

    const { data: sso } = await ann.api.orgs.setUserAsSsoMemberForOrganization(org.id, bob.id);
    assert.equal(sso.sso, true);

    const { data: spaces } = await ann.api.orgs.listSpacesForOrganizationMember(org.id, bob.id);
    assert.deepEqual(spaces.items, []);

    const removed = await ann.api.orgs.removeMemberFromOrganizationById(org.id, bob.id);
    assert.equal(removed.status, 204);
    await expectStatus(ann.api.orgs.getMemberInOrganizationById(org.id, bob.id), 404);
    await expectStatus(bob.api.orgs.getOrganizationById(org.id), 404);
    // Deleting again is still a 204.
    assert.equal((await ann.api.orgs.removeMemberFromOrganizationById(org.id, bob.id)).status, 204);
  });

  test('filters: role (including guests), search on name and email, sort by name and last seen', async () => {
    const ann = await t.user('Ann Admin');
    const { data: org } = await ann.api.orgs.createOrganization({ title: 'Filters' });
    const zed = await t.user('zed Reader', { email: `zed.${Date.now()}@reader.test` });
    const carl = await t.user('Carl Guest');
    const bea = await t.user('Bea Editor');
    await addMember(t, org.id, zed, 'read', { lastSeenAt: new Date('2026-01-01T00:00:00Z') });
    await addMember(t, org.id, carl, null);
    await addMember(t, org.id, bea, 'edit', { lastSeenAt: new Date('2026-02-01T00:00:00Z') });

    const ids = async (query: Parameters<typeof ann.api.orgs.listMembersInOrganizationById>[1]) =>
      (await ann.api.orgs.listMembersInOrganizationById(org.id, query)).data.items.map((m) => m.id);

    assert.deepEqual(await ids({ role: 'guest' as never }), [carl.id]);
    assert.deepEqual(await ids({ role: MemberRole.Edit }), [bea.id]);
    assert.deepEqual(await ids({ search: 'READER.TEST' }), [zed.id]);
    assert.deepEqual(await ids({ search: 'bea' }), [bea.id]);
    assert.deepEqual(await ids({ search: '%' }), []);
    assert.deepEqual(await ids({ sort: 'name' as never, order: 'asc' as never }), [ann.id, bea.id, carl.id, zed.id]);
    // Ann was seen when she created the organization; lastSeenAt lists only members ever seen.
    assert.deepEqual(await ids({ sort: 'lastSeenAt' as never, order: 'asc' as never }), [zed.id, bea.id, ann.id]);

    await carl.api.orgs.getOrganizationById(org.id);
    await carl.api.orgs.updateOrganizationMemberLastSeenAt(org.id);
    const seen = await ids({ sort: 'lastSeenAt' as never });
    assert.equal(seen[0], carl.id);
  });

  test('paging across several pages with inserts in between sees every member once', async () => {
    const ann = await t.user('Ann');
    const { data: org } = await ann.api.orgs.createOrganization({ title: 'Paging' });
    const initial = [ann.id];
    for (let i = 0; i < 7; i++) {
      const u = await t.user(`Member ${i}`);
      await addMember(t, org.id, u, 'read');
      initial.push(u.id);
    }
    const seen: string[] = [];
    let page: string | undefined;
    let pages = 0;
    do {
      const { data } = await ann.api.orgs.listMembersInOrganizationById(org.id, { limit: 3, order: 'asc' as never, ...(page ? { page } : {}) });
      seen.push(...data.items.map((m) => m.id));
      page = data.next?.page;
      pages++;
      // A new member joins while we page: it sorts last (newest) and must appear exactly once.
      if (pages === 1) {
        const late = await t.user('Late joiner');
        await addMember(t, org.id, late, 'read');
        initial.push(late.id);
      }
    } while (page);
    assert.deepEqual(seen, initial);
    assert.equal(pages, 3);
    await expectStatus(ann.api.orgs.listMembersInOrganizationById(org.id, { page: 'garbage' }), 400);
  });

  test('the last admin can be neither demoted nor removed; a member cannot raise their own role', async () => {
    const ann = await t.user('Ann');
    const bob = await t.user('Bob');
    const { data: org } = await ann.api.orgs.createOrganization({ title: 'Admins' });
    await addMember(t, org.id, bob, 'edit');
    await expectStatus(ann.api.orgs.updateMemberInOrganizationById(org.id, ann.id, { role: MemberRole.Read }), 400);
    await expectStatus(ann.api.orgs.removeMemberFromOrganizationById(org.id, ann.id), 400);
    await expectStatus(bob.api.orgs.updateMemberInOrganizationById(org.id, bob.id, { role: MemberRole.Admin }), 403);
    // With a second admin, the first may step down.
    await ann.api.orgs.updateMemberInOrganizationById(org.id, bob.id, { role: MemberRole.Admin });
    const { data: me } = await ann.api.orgs.updateMemberInOrganizationById(org.id, ann.id, { role: MemberRole.Read });
    assert.equal(me.role, 'read');
    // Non-admins may leave by themselves.
    assert.equal((await ann.api.orgs.removeMemberFromOrganizationById(org.id, ann.id)).status, 204);
    await expectStatus(ann.api.orgs.getOrganizationById(org.id), 404);
  });

  test('two admins demoting each other at once leave one admin', async () => {
    const ann = await t.user('Ann');
    const bob = await t.user('Bob');
    const { data: org } = await ann.api.orgs.createOrganization({ title: 'Race' });
    await addMember(t, org.id, bob, 'admin');
    const results = await Promise.all([
      statusOf(ann.api.orgs.updateMemberInOrganizationById(org.id, bob.id, { role: MemberRole.Read })),
      statusOf(bob.api.orgs.updateMemberInOrganizationById(org.id, ann.id, { role: MemberRole.Read })),
    ]);
    const admins = await t.server.services.db
      .selectFrom('members')
      .select('user_id')
      .where('organization_id', '=', org.id)
      .where('role', '=', 'admin')
      .execute();
    assert.equal(admins.length, 1, `statuses ${results}`);
  });

  test('bad input is a 4xx naming what to fix', async () => {
    const ann = await t.user('Ann');
    const { data: org } = await ann.api.orgs.createOrganization({ title: 'Bad input' });
    const patch = (body: unknown) => t.request('PATCH', `/v1/orgs/${org.id}/members/${ann.id}`, { token: ann.token, body });
    let res = await patch({ role: 'owner' });
    assert.equal(res.status, 400);
    assert.match(res.body.error.message, /role/);
    res = await patch({ role: 5 });
    assert.equal(res.status, 400);
    res = await t.request('PATCH', `/v1/orgs/${org.id}/members/nobody`, { token: ann.token, body: { role: 'read' } });
    assert.equal(res.status, 404);
    res = await t.request('GET', `/v1/orgs/${org.id}/members?limit=0`, { token: ann.token });
    assert.equal(res.status, 400);
    res = await t.request('GET', `/v1/orgs/${org.id}/members?limit=1001`, { token: ann.token });
    assert.equal(res.status, 400);
    assert.match(res.body.error.message, /limit/);
    res = await t.request('GET', `/v1/orgs/${org.id}/members?sort=age`, { token: ann.token });
    assert.equal(res.status, 400);
    res = await t.request('GET', `/v1/orgs/${org.id}/members?role=owner`, { token: ann.token });
    assert.equal(res.status, 400);
  });

  test('permission matrix: each role × each member operation', async () => {
    const { org, people, owner } = await orgWithPersonas(t);
    const target = await t.user('Target');
    const { addMember: add } = await import('./support/factories.ts');
    await add(t, org.id, target, 'read');
    const insider = (p: Persona) => p !== null && p !== 'outsider';
    const expected: Record<string, (p: Persona) => number> = {
      list: (p) => (p === 'outsider' ? 404 : p === null ? 403 : 200),
      get: (p) => (p === 'outsider' ? 404 : p === null ? 403 : 200),
      getSelf: (p) => (p === 'outsider' ? 404 : 200),
      update: (p) => (p === 'outsider' ? 404 : p === 'admin' ? 200 : 403),
      sso: (p) => (p === 'outsider' ? 404 : p === 'admin' ? 200 : 403),
      spaces: (p) => (p === 'outsider' ? 404 : insider(p) ? 200 : 403),
      ping: (p) => (p === 'outsider' ? 404 : 200),
      removeOther: (p) => (p === 'outsider' ? 404 : p === 'admin' ? 204 : 403),
    };
    for (const persona of PERSONAS) {
      const user = people.get(persona)!;
      const api = user.api.orgs;
      const got: Record<string, number> = {
        list: await statusOf(api.listMembersInOrganizationById(org.id)),
        get: await statusOf(api.getMemberInOrganizationById(org.id, owner.id)),
        getSelf: await statusOf(api.getMemberInOrganizationById(org.id, user.id)),
        update: await statusOf(api.updateMemberInOrganizationById(org.id, target.id, { role: MemberRole.Read })),
        sso: await statusOf(api.setUserAsSsoMemberForOrganization(org.id, target.id)),
        spaces: await statusOf(api.listSpacesForOrganizationMember(org.id, target.id)),
        ping: await statusOf(api.updateOrganizationMemberLastSeenAt(org.id)),
        removeOther: await statusOf(api.removeMemberFromOrganizationById(org.id, target.id)),
      };
      for (const [op, status] of Object.entries(got)) {
        assert.equal(status, expected[op]!(persona), `${personaName(persona)} ${op}`);
      }
      if (got.removeOther === 204) await add(t, org.id, target, 'read');
    }
  });
});
