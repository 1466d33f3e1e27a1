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
