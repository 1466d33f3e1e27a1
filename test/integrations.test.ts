import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { TestServer, TestUser } from './support/server.ts';
import { expectStatus, startTestServer } from './support/server.ts';
import { newMember } from './support/factories.ts';

let t: TestServer;
before(async () => {
  t = await startTestServer();
});
after(async () => {
  await t?.close();
});

export const PNG = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==';
let counter = 0;
const uniqueName = (base: string) => `${base}-${++counter}-${Date.now().toString(36)}`;

async function setup() {
  const ann = await t.user('Ann');
  const { data: org } = await ann.api.orgs.createOrganization({ title: 'Makers' });
  return { ann, org };
}

/** Publishes through the official client (the body is written as JSON, with plain strings for its enums). */
const publish = (user: TestUser, name: string, body: Record<string, unknown>) => user.api.integrations.publishIntegration(name, body as never);


/**
 * The calls of an access matrix: `ok` ones must succeed, the others be refused with 403 or 404;
 * `leaks()` counts refused ones that were allowed.
 */
function accessMatrix() {
  let leaks = 0;
  const expect = async (label: string, promise: Promise<unknown>, ok: boolean) => {
    try {
      await promise;
      if (!ok) {
        leaks++;
        assert.fail(`${label}: allowed`);
      }
    } catch (err) {
      const status = (err as { response?: Response }).response?.status;
      if (ok) assert.fail(`${label}: refused with ${status ?? err}`);
      assert.ok(status === 403 || status === 404, `${label}: ${status ?? err}`);
    }
  };
  return { expect, leaks: () => leaks };
}

describe('integration registry', () => {
  test('publish creates, a new publish bumps the version; secrets are never returned', async () => {
    const { ann, org } = await setup();
    const name = uniqueName('notify');
    const { data: first } = await publish(ann, name, {
      title: 'Notify',
      organization: org.id,
      scopes: ['space:content:read'],
      icon: PNG,
      previewImages: [PNG],
      visibility: 'unlisted',
      secrets: { TOKEN: 'very-secret' },
      configurations: { account: { properties: { channel: { type: 'string', title: 'Channel' } }, required: ['channel'] } },
      blocks: [{ id: 'card', title: 'Card', urlUnfurl: ['https://example.com/cards'] }],
    });
    assert.equal(first.version, 1);
    assert.equal(first.owner.id, org.id);
    assert.deepEqual(first.scopes, ['space:content:read']);
    assert.ok(first.urls.icon?.startsWith('data:image/png;base64,'));
    const { data: second } = await publish(ann, name, { title: 'Notify 2', scopes: ['space:content:write'] });
    assert.equal(second.version, 2);
    assert.equal(second.title, 'Notify 2');
    const raw = await t.request('GET', `/v1/integrations/${name}`, { token: ann.token });
    assert.ok(!JSON.stringify(raw.body).includes('very-secret'));
    const row = await t.server.services.db.selectFrom('integrations').select('secrets_encrypted').where('name', '=', name).executeTakeFirstOrThrow();
    assert.ok(row.secrets_encrypted && !row.secrets_encrypted.includes('very-secret'));
  });

  test('publishing is validated and reserved to admins of the organization', async () => {
    const { ann, org } = await setup();
    const name = uniqueName('checked');
    const bad = async (body: unknown, expected: RegExp) => {
      const res = await t.request('POST', `/v1/integrations/${name}`, { token: ann.token, body });
      assert.equal(res.status, 400, JSON.stringify(res.body));
      assert.match(res.body.error.message, expected);
    };
    await bad({ title: 'X1', organization: org.id, scopes: ['space:everything'] }, /scopes/);
    await bad({ title: 'Checked', organization: org.id, icon: Buffer.from('not an image').toString('base64') }, /icon/);
    await bad({ title: 'Checked', organization: org.id, icon: Buffer.alloc(600 * 1024, 1).toString('base64') }, /icon/);
    await bad({ title: 'Checked' }, /organization/);
    await bad({ title: 'Checked', organization: org.id, configurations: { account: { properties: { a: { type: 'string' } }, required: ['b'] } } }, /required/);
    await bad({ title: 'Checked', organization: org.id, blocks: [{ id: 'a', title: 'One' }, { id: 'a', title: 'Two' }] }, /blocks/);
    const invalidName = await t.request('POST', '/v1/integrations/bad%20name', { token: ann.token, body: { title: 'Bad', organization: org.id } });
    assert.equal(invalidName.status, 400);
    const editor = await newMember(t, org.id, 'edit', 'Ed');
    await expectStatus(publish(editor, name, { title: 'Checked', organization: org.id }), 403);
    const outsider = await t.user('Out');
    await expectStatus(publish(outsider, name, { title: 'Checked', organization: org.id }), 404);
  });

  test('visibility decides who lists, reads and installs; list filters', async () => {
    const { ann, org } = await setup();
    const tag = uniqueName('vis');
    await publish(ann, `${tag}-pub`, { title: 'Public one', organization: org.id, visibility: 'public', categories: ['analytics'], scopes: ['space:content:read'], blocks: [{ id: 'b', title: 'Block', urlUnfurl: ['https://cards.example.org/x'] }] });
    await publish(ann, `${tag}-unl`, { title: 'Unlisted', organization: org.id, visibility: 'unlisted' });
    await publish(ann, `${tag}-prv`, { title: 'Private', organization: org.id, visibility: 'private' });
    const other = await t.user('Other');
    const { data: otherOrg } = await other.api.orgs.createOrganization({ title: 'Others' });
    const seen = async (user: TestUser, query: Record<string, unknown> = {}) =>
      (await user.api.integrations.listIntegrations({ search: tag, limit: 100, ...query } as never)).data.items.map((i) => i.name).sort();
    assert.deepEqual(await seen(ann), [`${tag}-prv`, `${tag}-pub`, `${tag}-unl`]);
    assert.deepEqual(await seen(other), [`${tag}-pub`]);
    assert.deepEqual(await seen(ann, { category: 'analytics' }), [`${tag}-pub`]);
    assert.deepEqual(await seen(ann, { blocks: true }), [`${tag}-pub`]);
    assert.deepEqual(await seen(ann, { blocks: false }), [`${tag}-prv`, `${tag}-unl`]);
    assert.deepEqual(await seen(ann, { blockDomain: 'cards.example.org' }), [`${tag}-pub`]);
    assert.deepEqual(await seen(ann, { scope: 'space:content:read' }), [`${tag}-pub`]);
    assert.equal((await other.api.integrations.getIntegrationByName(`${tag}-unl`)).data.visibility, 'unlisted');
    await expectStatus(other.api.integrations.getIntegrationByName(`${tag}-prv`), 404);
    await expectStatus(other.api.integrations.installIntegration(`${tag}-prv`, { organization: otherOrg.id }), 404);
    const { data: inst } = await other.api.integrations.installIntegration(`${tag}-unl`, { organization: otherOrg.id });
    assert.equal(inst.target.organization, otherOrg.id);
    const available = (await other.api.orgs.listOrganizationIntegrations(otherOrg.id, { search: tag })).data.items.map((i) => i.name);
    assert.deepEqual(available, [`${tag}-pub`, `${tag}-unl`]);
    const { data: orgInst } = await other.api.orgs.listOrganizationInstallations(otherOrg.id);
    assert.equal(orgInst.items[0]!.installation.id, inst.id);
  });
});

describe('integration names and visibility across organizations', () => {
  test('an organization lists every public integration plus those it owns or installed, not only the installed ones', async () => {
    const { ann, org } = await setup();
    const tag = uniqueName('avail');
    await publish(ann, `${tag}-pub`, { title: 'Public one', organization: org.id, visibility: 'public' });
    await publish(ann, `${tag}-unl`, { title: 'Unlisted one', organization: org.id, visibility: 'unlisted' });
    await publish(ann, `${tag}-prv`, { title: 'Private one', organization: org.id, visibility: 'private' });
    const other = await t.user('Other');
    const { data: otherOrg } = await other.api.orgs.createOrganization({ title: 'Others' });
    await publish(other, `${tag}-own`, { title: 'Own private', organization: otherOrg.id, visibility: 'private' });
    await other.api.integrations.installIntegration(`${tag}-unl`, { organization: otherOrg.id });
    const availableTo = async (user: TestUser, orgId: string, query: Record<string, unknown> = {}) =>
      (await user.api.orgs.listOrganizationIntegrations(orgId, { search: tag, limit: 100, ...query } as never)).data.items.map((i) => i.name);
    // Nothing of these is installed in either organization but the unlisted one in the other.
    assert.deepEqual(await availableTo(ann, org.id), [`${tag}-prv`, `${tag}-pub`, `${tag}-unl`]);
    assert.deepEqual(await availableTo(other, otherOrg.id), [`${tag}-own`, `${tag}-pub`, `${tag}-unl`]);
    // The listing's filters apply, and it pages.
    assert.deepEqual(await availableTo(other, otherOrg.id, { owner: otherOrg.id }), [`${tag}-own`]);
    const first = (await other.api.orgs.listOrganizationIntegrations(otherOrg.id, { search: tag, limit: 2 })).data;
    assert.equal(first.count, 3);
    const second = (await other.api.orgs.listOrganizationIntegrations(otherOrg.id, { search: tag, limit: 2, page: first.next!.page })).data;
    assert.deepEqual([...first.items, ...second.items].map((i) => i.name), [`${tag}-own`, `${tag}-pub`, `${tag}-unl`]);
  });

  test('guests read only the integrations shared with everyone, not their organization\'s private ones', async () => {
    const { ann, org } = await setup();
    const tag = uniqueName('guestvis');
    await publish(ann, `${tag}-pub`, { title: 'Public one', organization: org.id, visibility: 'public' });
    await publish(ann, `${tag}-unl`, { title: 'Unlisted one', organization: org.id, visibility: 'unlisted' });
    await publish(ann, `${tag}-prv`, { title: 'Private one', organization: org.id, visibility: 'private' });
    const guest = await newMember(t, org.id, null, 'Guest');
    const reader = await newMember(t, org.id, 'read', 'Reader');
    await expectStatus(guest.api.integrations.getIntegrationByName(`${tag}-prv`), 404, /Integration not found/);
    await expectStatus(guest.api.integrations.listIntegrationInstallations(`${tag}-prv`), 404);
    assert.equal((await guest.api.integrations.getIntegrationByName(`${tag}-pub`)).data.name, `${tag}-pub`);
    assert.equal((await guest.api.integrations.getIntegrationByName(`${tag}-unl`)).data.name, `${tag}-unl`);
    const listed = (await guest.api.integrations.listIntegrations({ search: tag, limit: 100 })).data.items.map((i) => i.name);
    assert.deepEqual(listed, [`${tag}-pub`, `${tag}-unl`]);
    // Members with a role read them.
    assert.equal((await reader.api.integrations.getIntegrationByName(`${tag}-prv`)).data.visibility, 'private');
    assert.deepEqual((await reader.api.integrations.listIntegrations({ search: tag, limit: 100 })).data.items.map((i) => i.name), [`${tag}-prv`, `${tag}-pub`, `${tag}-unl`]);
  });

  test('publishing under a name another organization uses is a 409 that says nothing of whose it is', async () => {
    const { ann, org } = await setup();
    const tag = uniqueName('taken');
    await publish(ann, `${tag}-pub`, { title: 'Public one', organization: org.id, visibility: 'public' });
    await publish(ann, `${tag}-prv`, { title: 'Private one', organization: org.id, visibility: 'private' });
    const other = await t.user('Other');
    const { data: otherOrg } = await other.api.orgs.createOrganization({ title: 'Others' });
    const attempt = async (user: TestUser, name: string) => {
      const res = await t.request('POST', `/v1/integrations/${name}`, { token: user.token, body: { title: 'Mine', organization: otherOrg.id } });
      return { status: res.status, message: String(res.body?.error?.message ?? '').replace(name, '<name>') };
    };
    const onPublic = await attempt(other, `${tag}-pub`);
    const onPrivate = await attempt(other, `${tag}-prv`);
    assert.equal(onPublic.status, 409);
    assert.match(onPublic.message, /name not available/);
    assert.deepEqual(onPrivate, onPublic, 'a private and a public name answer alike');
    await expectStatus(publish(other, `${tag}-prv`, { title: 'Mine', organization: otherOrg.id }), 409, /name not available/);
    // A guest of the owner, who cannot see the private one, gets the same answer.
    const guest = await newMember(t, org.id, null, 'Guest');
    await expectStatus(publish(guest, `${tag}-prv`, { title: 'Mine', organization: org.id }), 409, /name not available/);
    // A free name publishes; the owner still publishes new versions; nothing changed hands.
    assert.equal((await publish(other, `${tag}-free`, { title: 'Free', organization: otherOrg.id })).data.owner.id, otherOrg.id);
    const { data: bumped } = await publish(ann, `${tag}-prv`, { title: 'Private one' });
    assert.equal(bumped.version, 2);
    assert.equal(bumped.owner.id, org.id);
    assert.equal(bumped.title, 'Private one');
  });
});

describe('installations', () => {
  test('configuration is validated; status pending until complete; uninstall removes space installations', async () => {
    const { ann, org } = await setup();
    const name = uniqueName('conf');
    await publish(ann, name, {
      title: 'Configured',
      organization: org.id,
      scopes: ['space:content:read'],
      configurations: {
        account: { properties: { channel: { type: 'string', enum: ['a', 'b'] }, count: { type: 'number' } }, required: ['channel'] },
        space: { properties: { label: { type: 'string' } } },
      },
    });
    const { data: inst } = await ann.api.integrations.installIntegration(name, { organization: org.id });
    assert.equal(inst.status, 'pending');
    await expectStatus(ann.api.integrations.updateIntegrationInstallation(name, inst.id, { configuration: { channel: 'c' } }), 400);
    await expectStatus(ann.api.integrations.updateIntegrationInstallation(name, inst.id, { configuration: { unknown: 1 } }), 400);
    await expectStatus(ann.api.integrations.updateIntegrationInstallation(name, inst.id, { configuration: { count: 'x' } }), 400);
    const { data: active } = await ann.api.integrations.updateIntegrationInstallation(name, inst.id, { configuration: { channel: 'a', count: 2 } });
    assert.equal(active.status, 'active');
    await expectStatus(ann.api.integrations.installIntegration(name, { organization: org.id }), 409);
    const { data: space } = await ann.api.orgs.createSpace(org.id, { title: 'Docs' });
    const { data: si } = await ann.api.integrations.installIntegrationOnSpace(name, inst.id, { space: space.id });
    assert.equal(si.space, space.id);
    const { data: updated } = await ann.api.integrations.updateIntegrationSpaceInstallation(name, inst.id, space.id, { configuration: { label: 'x' }, externalIds: ['ext-1'] });
    assert.deepEqual(updated.externalIds, ['ext-1']);
    assert.equal((await ann.api.integrations.listIntegrationSpaceInstallations(name, { externalId: 'ext-1' })).data.items.length, 1);
    assert.equal((await ann.api.integrations.getIntegrationInstallationById(name, inst.id)).data.spaces, 1);
    assert.deepEqual((await ann.api.spaces.listSpaceIntegrations(space.id)).data.items.map((i) => i.name), [name]);
    await ann.api.integrations.uninstallIntegration(name, inst.id);
    await expectStatus(ann.api.integrations.getIntegrationInstallationById(name, inst.id), 404);
    const left = await t.server.services.db.selectFrom('integration_space_installations').select('space_id').where('installation_id', '=', inst.id).execute();
    assert.equal(left.length, 0);
  });

  test('site installations: install, configure, list, uninstall (site_installation events)', async () => {
    const { ann, org } = await setup();
    const name = uniqueName('sites');
    await publish(ann, name, { title: 'On sites', organization: org.id, target: 'site', configurations: { site: { properties: { id: { type: 'string' } }, required: ['id'] } } });
    const { data: site } = await ann.api.orgs.createSite(org.id, { title: 'Docs' });
    const { data: inst } = await ann.api.integrations.installIntegration(name, { organization: org.id });
    const { data: si } = await ann.api.integrations.installIntegrationOnSite(name, inst.id, { siteId: site.id });
    assert.equal(si.status, 'pending');
    assert.equal(si.site, site.id);
    await expectStatus(ann.api.integrations.installIntegrationOnSite(name, inst.id, { siteId: site.id }), 409);
    const { data: configured } = await ann.api.integrations.updateIntegrationSiteInstallation(name, inst.id, site.id, { configuration: { id: 'x' } });
    assert.equal(configured.status, 'active');
    const { data: extended } = await ann.api.integrations.getIntegrationSiteInstallation(name, inst.id, site.id, { extended: true } as never);
    assert.equal(typeof extended.site === 'object' && extended.site.id, site.id);
    assert.equal((await ann.api.integrations.listIntegrationSiteInstallations(name)).data.items.length, 1);
    assert.deepEqual((await ann.api.orgs.listSiteIntegrations(org.id, site.id)).data.items.map((i) => i.name), [name]);
    await expectStatus(ann.api.integrations.installIntegrationOnSpace(name, inst.id, { space: (await ann.api.orgs.createSpace(org.id, { title: 'S' })).data.id }), 400);
    await ann.api.integrations.uninstallIntegrationFromSite(name, inst.id, site.id);
    await expectStatus(ann.api.integrations.getIntegrationSiteInstallation(name, inst.id, site.id), 404);
    const types = (await t.server.services.db.selectFrom('integration_events').select('payload').where('installation_id', '=', inst.id).orderBy('seq').execute()).map((e) => (e.payload as { type: string }).type);
    assert.deepEqual(types, ['installation_setup', 'site_installation_setup', 'site_installation_setup', 'site_installation_deleted']);
  });

  test('installation tokens: exactly the scopes, exactly the targets (scope × target matrix)', async () => {
    const { ann, org } = await setup();
    const { data: spaceA } = await ann.api.orgs.createSpace(org.id, { title: 'A' });
    const { data: spaceB } = await ann.api.orgs.createSpace(org.id, { title: 'B' });
    const { data: publicB } = await ann.api.orgs.createSpace(org.id, { title: 'Public', visibility: 'public' } as never);
    const other = await t.user('Other');
    const { data: otherOrg } = await other.api.orgs.createOrganization({ title: 'Elsewhere' });
    const { data: spaceC } = await other.api.orgs.createSpace(otherOrg.id, { title: 'C' });
    const comment = { body: { markdown: 'hi' } } as never;
    const { expect, leaks } = accessMatrix();
    for (const scopes of [['space:content:read'], ['space:content:write'], ['space:metadata:write'], ['page:feedback:read']] as const) {
      for (const selection of ['selected', 'all'] as const) {
        const name = uniqueName('matrix');
        await publish(ann, name, { title: 'Matrix', organization: org.id, scopes: [...scopes] });
        const { data: inst } = await ann.api.integrations.installIntegration(name, { organization: org.id });
        if (selection === 'all') await ann.api.integrations.updateIntegrationInstallation(name, inst.id, { space_selection: 'all' } as never);
        else await ann.api.integrations.installIntegrationOnSpace(name, inst.id, { space: spaceA.id });
        const { data: tok } = await ann.api.integrations.createIntegrationInstallationToken(name, inst.id);
        const api = t.client(tok.token);
        const read = scopes[0] !== 'page:feedback:read';
        const write = scopes[0] === 'space:content:write';
        const metadata = scopes[0] === 'space:metadata:write';
        const label = `${scopes[0]}/${selection}`;
        await expect(`${label} read A`, api.spaces.getSpaceById(spaceA.id), read);
        await expect(`${label} read B`, api.spaces.getSpaceById(spaceB.id), read && selection === 'all');
        await expect(`${label} read public`, api.spaces.getSpaceById(publicB.id), read && selection === 'all');
        await expect(`${label} read C`, api.spaces.getSpaceById(spaceC.id), false);
        await expect(`${label} comment A`, api.spaces.postCommentInSpace(spaceA.id, comment), write);
        await expect(`${label} comment B`, api.spaces.postCommentInSpace(spaceB.id, comment), write && selection === 'all');
        await expect(`${label} comment C`, api.spaces.postCommentInSpace(spaceC.id, comment), false);
        await expect(`${label} rename A`, api.spaces.updateSpaceById(spaceA.id, { title: 'Renamed' }), metadata);
        await expect(`${label} rename C`, api.spaces.updateSpaceById(spaceC.id, { title: 'Renamed' }), false);
        await expect(`${label} org`, api.orgs.getOrganizationById(org.id), false);
        await expect(`${label} org spaces`, api.orgs.listSpacesInOrganizationById(org.id), false);
        await expect(`${label} create org`, api.orgs.createOrganization({ title: 'Mine' }), false);
        await expect(`${label} new api token`, t.request('POST', '/v1/user/tokens', { token: tok.token, body: {} }).then((r) => (r.status < 300 ? r : Promise.reject({ response: { status: r.status } }))), false);
        await expect(`${label} other installation`, api.integrations.listIntegrationEvents(name), true);
        await expect(`${label} publish`, api.integrations.publishIntegration(name, { title: 'Hijack' } as never), false);
        await expect(`${label} install elsewhere`, api.integrations.installIntegration(name, { organization: otherOrg.id }), false);
        await expect(`${label} user`, api.user.getAuthenticatedUser(), true);
        // After uninstalling, the token is dead.
        await ann.api.integrations.uninstallIntegration(name, inst.id);
        const dead = await t.request('GET', `/v1/spaces/${spaceA.id}`, { token: tok.token });
        assert.equal(dead.status, 401);
      }
    }
    assert.equal(leaks(), 0);
  });
  test('installation tokens on sites: metadata and adaptive scopes, exactly the covered sites (scope × target matrix)', async () => {
    const { ann, org } = await setup();
    const { data: siteA } = await ann.api.orgs.createSite(org.id, { title: 'Site A' } as never);
    const { data: siteB } = await ann.api.orgs.createSite(org.id, { title: 'Site B' } as never);
    const other = await t.user('Other');
    const { data: otherOrg } = await other.api.orgs.createOrganization({ title: 'Elsewhere' });
    const { data: siteC } = await other.api.orgs.createSite(otherOrg.id, { title: 'Site C' } as never);
    const jsonSchema = { type: 'object', properties: { isAdmin: { type: 'boolean', description: 'An admin' } }, additionalProperties: false };
    const { expect, leaks } = accessMatrix();
    for (const scope of ['site:metadata:read', 'site:adaptive:write', 'space:content:write'] as const) {
      for (const selection of ['selected', 'all'] as const) {
        const name = uniqueName('sitematrix');
        await publish(ann, name, { title: 'Site matrix', organization: org.id, scopes: [scope] });
        const { data: inst } = await ann.api.integrations.installIntegration(name, { organization: org.id });
        if (selection === 'all') await ann.api.integrations.updateIntegrationInstallation(name, inst.id, { site_selection: 'all' } as never);
        else await ann.api.integrations.installIntegrationOnSite(name, inst.id, { siteId: siteA.id });
        const { data: tok } = await ann.api.integrations.createIntegrationInstallationToken(name, inst.id);
        const api = t.client(tok.token);
        const metadata = scope === 'site:metadata:read';
        const adaptive = scope === 'site:adaptive:write';
        const label = `${scope}/${selection}`;
        await expect(`${label} read A`, api.orgs.getSiteById(org.id, siteA.id), metadata);
        await expect(`${label} read B`, api.orgs.getSiteById(org.id, siteB.id), metadata && selection === 'all');
        await expect(`${label} read C`, api.orgs.getSiteById(otherOrg.id, siteC.id), false);
        await expect(`${label} structure A`, api.orgs.getSiteStructure(org.id, siteA.id), metadata);
        await expect(`${label} scripts A`, api.orgs.listSiteIntegrationScripts(org.id, siteA.id), metadata);
        await expect(`${label} share links A`, api.orgs.listSiteShareLinks(org.id, siteA.id), false);
        await expect(`${label} publishing auth A`, api.orgs.getSitePublishingAuthById(org.id, siteA.id), false);
        await expect(`${label} rename A`, api.orgs.updateSiteById(org.id, siteA.id, { title: 'Renamed' } as never), false);
        await expect(`${label} list sites`, api.orgs.listSites(org.id), false);
        await expect(`${label} adaptive A`, api.orgs.getSiteAdaptiveSchema(org.id, siteA.id), adaptive);
        await expect(`${label} write adaptive A`, api.orgs.updateSiteAdaptiveSchema(org.id, siteA.id, { jsonSchema } as never), adaptive);
        await expect(`${label} write adaptive B`, api.orgs.updateSiteAdaptiveSchema(org.id, siteB.id, { jsonSchema } as never), adaptive && selection === 'all');
        await expect(`${label} write adaptive C`, api.orgs.updateSiteAdaptiveSchema(otherOrg.id, siteC.id, { jsonSchema } as never), false);
        await ann.api.integrations.uninstallIntegration(name, inst.id);
        assert.equal((await t.request('GET', `/v1/orgs/${org.id}/sites/${siteA.id}`, { token: tok.token })).status, 401);
      }
    }
    assert.equal(leaks(), 0);
  });
});
