import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { MemberRole } from '@gitbook/api';
import { expectStatus, startTestServer, type TestServer } from './support/server.ts';

let t: TestServer;
before(async () => {
  t = await startTestServer();
});
after(async () => {
  await t?.close();
});

describe('organizations', () => {
  test('create, get, list and update an organization through the official client', async () => {
    const ann = await t.user('Ann');
    const { data: created } = await ann.api.orgs.createOrganization({ title: 'Acme Docs' });
    assert.equal(created.title, 'Acme Docs');
    assert.equal(created.permissions.admin, true);
    assert.equal(created.urls.location, `${t.url}/v1/orgs/${created.id}`);

    const { data: got } = await ann.api.orgs.getOrganizationById(created.id);
    assert.equal(got.id, created.id);

    const { data: list } = await ann.api.orgs.listOrganizationsForAuthenticatedUser();
    assert.deepEqual(list.items.map((o) => o.id), [created.id]);
    assert.equal(list.count, 1);

    const { data: updated } = await ann.api.orgs.updateOrganizationById(created.id, {
      title: 'Acme',
      emailDomains: ['acme.test'],
      hostname: 'acme-docs',
      defaultRole: MemberRole.Comment,
      sso: true,
      ai: true,
      inviteLinks: false,
      logo: 'https://acme.test/logo.png',
      mergeRules: { type: 'rules', rules: [{ rule: 'require_specific_reviewers', users: [ann.id] }] },
    });
    assert.equal(updated.title, 'Acme');
    assert.deepEqual(updated.emailDomains, ['acme.test']);
    assert.equal(updated.hostname, 'acme-docs');
    assert.equal(updated.defaultRole, 'comment');
    assert.equal(updated.sso, true);
    assert.equal(updated.inviteLinks, false);
    assert.equal(updated.urls.logo, 'https://acme.test/logo.png');
    assert.deepEqual(updated.mergeRules, { type: 'rules', rules: [{ rule: 'require_specific_reviewers', users: [ann.id] }] });
  });

  test('outsiders get 404 and never learn an organization exists', async () => {
    const ann = await t.user('Ann');
    const bob = await t.user('Bob');
    const { data: org } = await ann.api.orgs.createOrganization({ title: 'Secret' });
    await expectStatus(bob.api.orgs.getOrganizationById(org.id), 404);
    await expectStatus(bob.api.orgs.getOrganizationById('does-not-exist'), 404);
    await expectStatus(bob.api.orgs.updateOrganizationById(org.id, { title: 'Mine' }), 404);
  });
});

describe('joining by email domain', () => {
  test('an organization that would not admit the caller answers exactly as a missing one', async () => {
    const ann = await t.user('Ann');
    const { data: org } = await ann.api.orgs.createOrganization({ title: 'Domain Co' });
    await ann.api.orgs.updateOrganizationById(org.id, { emailDomains: ['domain-co.test'] });
    const outsider = await t.user('Out');
    await expectStatus(outsider.api.orgs.joinOrganization(org.id), 404, /not found/);
    await expectStatus(outsider.api.orgs.joinOrganization('no-such-organization'), 404, /not found/);
    const existing = await t.request('POST', `/v1/orgs/${org.id}/join`, { token: outsider.token });
    const missing = await t.request('POST', '/v1/orgs/no-such-organization/join', { token: outsider.token });
    assert.deepEqual([existing.status, existing.body], [missing.status, missing.body]);
    await expectStatus(outsider.api.orgs.getOrganizationById(org.id), 404);
    // Someone of an allowed domain joins (with the organization's default role); joining again changes nothing.
    const insider = await t.user('In', { email: `in.${Date.now().toString(36)}@domain-co.test` });
    await insider.api.orgs.joinOrganization(org.id);
    await insider.api.orgs.joinOrganization(org.id);
    assert.equal((await insider.api.orgs.getOrganizationById(org.id)).data.id, org.id);
  });
});

describe('organization permissions and input', () => {
  test('permission matrix: each role × each organization operation', async () => {
    const { orgWithPersonas, PERSONAS, personaName, statusOf } = await import('./support/factories.ts');
    const { org, people } = await orgWithPersonas(t);
    const doc = { object: 'document', data: {}, nodes: [] } as never;
    for (const persona of PERSONAS) {
      const api = people.get(persona)!.api;
      const outsider = persona === 'outsider';
      const admin = persona === 'admin';
      const expected = {
        get: outsider ? 404 : 200,
        update: outsider ? 404 : admin ? 200 : 403,
        ping: outsider ? 404 : 200,
        readInstructions: outsider ? 404 : 200,
        writeInstructions: outsider ? 404 : admin ? 200 : 403,
        list: 200,
      };
      const got = {
        get: await statusOf(api.orgs.getOrganizationById(org.id)),
        update: await statusOf(api.orgs.updateOrganizationById(org.id, { ai: true })),
        ping: await statusOf(api.orgs.updateOrganizationMemberLastSeenAt(org.id)),
        readInstructions: await statusOf(api.orgs.getOrganizationAgentInstructions(org.id)),
        writeInstructions: await statusOf(api.orgs.updateOrganizationAgentInstructions(org.id, { instructions: doc })),
        list: await statusOf(api.orgs.listOrganizationsForAuthenticatedUser()),
      };
      assert.deepEqual(got, expected, personaName(persona));
      if (!outsider) {
        const { data } = await api.orgs.getOrganizationById(org.id);
        assert.equal(data.permissions.admin, admin, `${personaName(persona)} admin flag`);
        assert.equal(data.permissions.createContent, admin || persona === 'create', `${personaName(persona)} createContent`);
        assert.equal(data.permissions.listMembers, persona !== null, `${personaName(persona)} listMembers`);
      }
    }
  });

  test('bad input on create and update bodies is a 4xx naming the field', async () => {
    const ann = await t.user('Ann');
    const { data: org } = await ann.api.orgs.createOrganization({ title: 'Inputs' });
    const cases: [string, unknown, RegExp][] = [
      ['POST /v1/orgs', { title: 'A' }, /title/],
      ['POST /v1/orgs', { title: 'x'.repeat(256) }, /title/],
      ['POST /v1/orgs', { title: ['Acme'] }, /title/],
      ['POST /v1/orgs', { title: 'Acme', emailDomains: 'acme.test' }, /emailDomains/],
      ['POST /v1/orgs', { title: 'Acme', emailDomains: ['not a domain'] }, /emailDomains/],
      [`PATCH /v1/orgs/${org.id}`, { title: 7 }, /title/],
      [`PATCH /v1/orgs/${org.id}`, { hostname: 'UPPER case' }, /hostname/],
      [`PATCH /v1/orgs/${org.id}`, { hostname: 'ab' }, /hostname/],
      [`PATCH /v1/orgs/${org.id}`, { defaultRole: 'owner' }, /defaultRole/],
      [`PATCH /v1/orgs/${org.id}`, { sso: 'yes' }, /sso/],
      [`PATCH /v1/orgs/${org.id}`, { logo: 'not a url' }, /logo/],
      [`PATCH /v1/orgs/${org.id}`, { mergeRules: { type: 'sometimes' } }, /mergeRules/],
      [`PATCH /v1/orgs/${org.id}`, { mergeRules: { type: 'rules', rules: [{ rule: 'require_specific_reviewers', users: ['nobody'] }] } }, /nobody/],
      [`PATCH /v1/orgs/${org.id}`, { defaultContent: { type: 'site', site: 'no-such-site' } }, /site/],
    ];
    for (const [route, body, pattern] of cases) {
      const [method, path] = route.split(' ') as [string, string];
      const res = await t.request(method, path, { token: ann.token, body });
      assert.equal(res.status, 400, `${route} ${JSON.stringify(body)} → ${JSON.stringify(res.body)}`);
      assert.equal(res.body.error.code, 400);
      assert.match(res.body.error.message, pattern, `${route} ${JSON.stringify(body)}`);
    }
    // Nothing was half-written by the refused updates.
    const { data: after } = await ann.api.orgs.getOrganizationById(org.id);
    assert.equal(after.title, 'Inputs');
    assert.deepEqual(after.mergeRules, { type: 'none' });

    // A hostname is unique across organizations.
    const { data: other } = await ann.api.orgs.createOrganization({ title: 'Other' });
    await ann.api.orgs.updateOrganizationById(org.id, { hostname: 'taken-name' });
    await expectStatus(ann.api.orgs.updateOrganizationById(other.id, { hostname: 'taken-name' }), 409);
  });

  test('listing organizations pages with stable cursors while new ones are created', async () => {
    const ann = await t.user('Ann');
    const created: string[] = [];
    for (let i = 0; i < 5; i++) created.push((await ann.api.orgs.createOrganization({ title: `Org ${i}` })).data.id);
    const seen: string[] = [];
    let page: string | undefined;
    let first = true;
    do {
      const { data } = await ann.api.orgs.listOrganizationsForAuthenticatedUser({ limit: 2, ...(page ? { page } : {}) });
      assert.equal(data.count, created.length);
      seen.push(...data.items.map((o) => o.id));
      page = data.next?.page;
      if (first) {
        created.push((await ann.api.orgs.createOrganization({ title: 'Late' })).data.id);
        first = false;
      }
    } while (page);
    assert.deepEqual(seen, created);
  });
});
