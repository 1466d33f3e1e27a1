import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { SiteVisibility } from '@gitbook/api';
import * as factories from './support/factories.ts';
import { statusOf } from './support/factories.ts';
import { expectStatus, startTestServer, type TestServer, type TestUser } from './support/server.ts';

let t: TestServer;
before(async () => {
  t = await startTestServer();
});
after(async () => {
  await t?.close();
});

const newOrg = (title = 'Sites Inc') => factories.newOrg(t, title);

async function newSpace(user: TestUser, organizationId: string, title = 'Space') {
  return (await user.api.orgs.createSpace(organizationId, { title })).data;
}

async function newSite(user: TestUser, organizationId: string, body: Parameters<TestUser['api']['orgs']['createSite']>[1] = {}) {
  return (await user.api.orgs.createSite(organizationId, { title: 'Docs', ...body })).data;
}

/** Raw HTTP (for what the official client cannot send or the official document lacks). */
function raw(user: TestUser | undefined, method: string, path: string, body?: unknown) {
  return t.request(method, `/v1${path}`, { ...(user ? { token: user.token } : {}), ...(body !== undefined ? { body } : {}) });
}

async function expect400(promise: Promise<{ status: number; body: any }>, mentions: RegExp) {
  const res = await promise;
  assert.equal(res.status, 400, JSON.stringify(res.body));
  assert.equal(res.body.error.code, 400);
  assert.match(res.body.error.message, mentions);
}

describe('sites', () => {
  test('create, read, list, update, publish, unpublish and delete a site', async () => {
    const { admin, org } = await newOrg();
    const space = await newSpace(admin, org.id, 'Getting Started');
    const site = await newSite(admin, org.id, { title: 'Product Docs', spaces: [space.id] });
    assert.equal(site.type, 'basic');
    assert.equal(site.basename, 'product-docs');
    assert.equal(site.visibility, 'public');
    assert.equal(site.published, false);
    assert.equal(site.siteSpaces, 1);
    assert.equal(site.urls.published, undefined);
    assert.deepEqual(site.permissions, {
      view: true, access: true, edit: true, create: true, admin: true, installIntegration: true, viewAdaptiveSchema: true, editAdaptiveSchema: true,
    });

    // Basenames stay unique in the organization.
    const twin = await newSite(admin, org.id, { title: 'Product Docs' });
    assert.equal(twin.basename, 'product-docs-2');

    const { data: got } = await admin.api.orgs.getSiteById(org.id, site.id);
    assert.equal(got.id, site.id);

    const { data: published } = await admin.api.orgs.publishSite(org.id, site.id);
    assert.ok('published' in published && published.published);
    assert.equal((published as typeof site).urls.published, `${t.url}/${org.id}/product-docs/`);

    const { data: list } = await admin.api.orgs.listSites(org.id, { published: true });
    assert.deepEqual(list.items.map((s) => s.id), [site.id]);
    assert.equal((await admin.api.orgs.listSites(org.id, { space: space.id })).data.count, 1);
    assert.equal((await admin.api.orgs.listSites(org.id, { title: 'docs' })).data.count, 2);
    const firstPage = (await admin.api.orgs.listSites(org.id, { limit: 1 })).data;
    assert.equal(firstPage.count, 2);
    const secondPage = (await admin.api.orgs.listSites(org.id, { limit: 1, page: firstPage.next!.page })).data;
    assert.notEqual(secondPage.items[0]!.id, firstPage.items[0]!.id);

    const { data: updated } = await admin.api.orgs.updateSiteById(org.id, site.id, {
      title: 'Renamed',
      visibility: SiteVisibility.Unlisted,
      basename: 'renamed',
      proxy: 'example.com/docs',
      adaptiveContent: { enabled: true },
    });
    assert.equal(updated.title, 'Renamed');
    assert.equal(updated.basename, 'renamed');
    assert.deepEqual(updated.proxy, { origin: 'example.com/docs', target: `${t.url}/${org.id}/renamed/` });
    assert.equal(updated.urls.published, 'https://example.com/docs/');
    assert.equal(updated.adaptiveContent?.enabled, true);
    assert.equal((await admin.api.orgs.updateSiteById(org.id, site.id, { proxy: null })).data.proxy, undefined);
    // A basename another site uses is a conflict.
    await expectStatus(admin.api.orgs.updateSiteById(org.id, twin.id, { basename: 'renamed' }), 409);

    const { data: off } = await admin.api.orgs.unpublishSite(org.id, site.id);
    assert.equal(off.published, false);
    assert.equal(off.urls.published, undefined);

    await admin.api.orgs.deleteSiteById(org.id, site.id);
    await expectStatus(admin.api.orgs.getSiteById(org.id, site.id), 404);
    assert.equal(await statusOf(admin.api.orgs.deleteSiteById(org.id, site.id)), 204);
    // The space itself stays.
    assert.equal((await admin.api.spaces.getSpaceById(space.id)).data.id, space.id);
  });

  test('hostnames are unique across the server, with a 409 when taken', async () => {
    const a = await newOrg('Org A');
    const b = await newOrg('Org B');
    const siteA = await newSite(a.admin, a.org.id);
    const siteB = await newSite(b.admin, b.org.id);
    const set = (user: TestUser, org: string, site: string, hostname: unknown) => raw(user, 'PATCH', `/orgs/${org}/sites/${site}`, { hostname });
    const ok = await set(a.admin, a.org.id, siteA.id, 'Docs.Example.com');
    assert.equal(ok.status, 200);
    assert.equal(ok.body.hostname, 'docs.example.com');
    const taken = await set(b.admin, b.org.id, siteB.id, 'docs.example.com');
    assert.equal(taken.status, 409);
    assert.match(taken.body.error.message, /hostname/);
    await expect400(set(b.admin, b.org.id, siteB.id, 'localhost'), /hostname.*docs\.example\.com/);
    assert.equal((await set(a.admin, a.org.id, siteA.id, null)).body.hostname, undefined);
    assert.equal((await set(b.admin, b.org.id, siteB.id, 'docs.example.com')).status, 200);
  });

  test('bad inputs get a 400 that says what to fix', async () => {
    const { admin, org } = await newOrg();
    const site = await newSite(admin, org.id);
    const other = await newOrg('Other');
    const foreignSpace = await newSpace(other.admin, other.org.id);
    const base = `/orgs/${org.id}/sites/${site.id}`;
    await expect400(raw(admin, 'PATCH', base, { proxy: 'https://example.com' }), /proxy.*example\.com\/docs/);
    await expect400(raw(admin, 'PATCH', base, { basename: 'Not OK!' }), /basename/);
    await expect400(raw(admin, 'PATCH', base, { visibility: 'secret' }), /visibility/);
    await expect400(raw(admin, 'POST', `/orgs/${org.id}/sites`, { title: 'x' }), /title/);
    await expect400(raw(admin, 'POST', `${base}/site-spaces`, { spaceId: foreignSpace.id }), /spaceId: space .* not found in this organization/);
    await expect400(raw(admin, 'PATCH', base, { defaultSiteSpace: 'nope' }), /defaultSiteSpace/);
    await expect400(raw(admin, 'PATCH', base, { defaultSiteSection: 'nope' }), /defaultSiteSection/);
    await expect400(raw(admin, 'POST', `${base}/publish`), /add a space/);
    const space = await newSpace(admin, org.id);
    const { data: ss } = await admin.api.orgs.addSpaceToSite(org.id, site.id, { spaceId: space.id });
    await expect400(raw(admin, 'PATCH', `${base}/site-spaces/${ss.id}`, { path: '' }), /path/);
    await expect400(raw(admin, 'PATCH', `${base}/site-spaces/${ss.id}`, { path: 'x'.repeat(101) }), /path/);
    await expect400(raw(admin, 'PATCH', `${base}/site-spaces/${ss.id}`, { condition: 'x'.repeat(1025) }), /condition/);
    await expect400(raw(admin, 'PATCH', `${base}/site-spaces/${ss.id}`, { path: 'a/b' }), /path: use letters/);
    await expect400(raw(admin, 'POST', `${base}/site-spaces`, { spaceId: space.id, sectionId: 'nope' }), /sectionId/);
  });

  test('permissions: admins manage, members with create edit the structure, readers read, guests and outsiders see nothing', async () => {
    const { owner, org, people } = await factories.orgWithPersonas(t);
    const space = await newSpace(owner, org.id);
    const site = await newSite(owner, org.id, { spaces: [space.id] });
    const reader = people.get('read')!;
    const creator = people.get('create')!;
    const { data: asReader } = await reader.api.orgs.getSiteById(org.id, site.id);
    assert.equal(asReader.permissions.view, true);
    assert.equal(asReader.permissions.admin, false);
    assert.equal(asReader.permissions.create, false);
    await expectStatus(reader.api.orgs.addSpaceToSite(org.id, site.id, { spaceId: space.id }), 403);
    await expectStatus(reader.api.orgs.createSite(org.id, { title: 'Mine' }), 403);
    const { data: added } = await creator.api.orgs.addSpaceToSite(org.id, site.id, { spaceId: space.id });
    assert.equal(added.default, false);
    await expectStatus(creator.api.orgs.publishSite(org.id, site.id), 403);
    await expectStatus(creator.api.orgs.updateSiteById(org.id, site.id, { visibility: SiteVisibility.Unlisted }), 403);
    assert.equal((await creator.api.orgs.updateSiteById(org.id, site.id, { title: 'By creator' })).data.title, 'By creator');
    await expectStatus(creator.api.orgs.listSiteShareLinks(org.id, site.id), 403);
    await expectStatus(people.get(null)!.api.orgs.getSiteById(org.id, site.id), 404);
    await expectStatus(people.get('outsider')!.api.orgs.getSiteById(org.id, site.id), 404);
    await expectStatus(people.get('outsider')!.api.orgs.listSites(org.id), 404);
  });
});

describe('site spaces and sections', () => {
  test('site spaces get unique paths, the first is the default, removing the default promotes another', async () => {
    const { admin, org } = await newOrg();
    const a = await newSpace(admin, org.id, 'Guides');
    const b = await newSpace(admin, org.id, 'Guides');
    const site = await newSite(admin, org.id);
    const { data: ssA } = await admin.api.orgs.addSpaceToSite(org.id, site.id, { spaceId: a.id });
    const { data: ssB } = await admin.api.orgs.addSpaceToSite(org.id, site.id, { spaceId: b.id });
    assert.equal(ssA.path, 'guides');
    assert.equal(ssB.path, 'guides-2');
    assert.equal(ssA.default, true);
    assert.equal(ssB.default, false);
    assert.equal(ssA.space.id, a.id);
    const { data: defaults } = await admin.api.orgs.listSiteSpaces(org.id, site.id, { default: true });
    assert.deepEqual(defaults.items.map((s) => s.id), [ssA.id]);
    assert.equal((await admin.api.orgs.listSiteSpaces(org.id, site.id, { default: false })).data.items[0]!.id, ssB.id);
    // Paths are unique in their container.
    const clash = await raw(admin, 'PATCH', `/orgs/${org.id}/sites/${site.id}/site-spaces/${ssB.id}`, { path: 'guides' });
    assert.equal(clash.status, 409);
    const { data: patched } = await admin.api.orgs.updateSiteSpaceById(org.id, site.id, ssB.id, { path: 'v2', condition: 'visitor.claims.beta', hidden: true });
    assert.deepEqual([patched.path, patched.condition, patched.hidden], ['v2', 'visitor.claims.beta', true]);
    const { data: cleared } = await admin.api.orgs.updateSiteSpaceById(org.id, site.id, ssB.id, { condition: null });
    assert.equal(cleared.condition, undefined);
    assert.equal(cleared.hidden, true);
    // URLs follow publication.
    await admin.api.orgs.publishSite(org.id, site.id);
    const { data: listed } = await admin.api.orgs.listSiteSpaces(org.id, site.id);
    const urls = Object.fromEntries(listed.items.map((s) => [s.id, s.urls.published]));
    assert.equal(urls[ssA.id], `${t.url}/${org.id}/docs/`);
    assert.equal(urls[ssB.id], `${t.url}/${org.id}/docs/v2/`);
    await admin.api.orgs.deleteSiteSpaceById(org.id, site.id, ssA.id);
    const { data: after } = await admin.api.orgs.listSiteSpaces(org.id, site.id);
    assert.deepEqual(after.items.map((s) => [s.id, s.default]), [[ssB.id, true]]);
  });

  test('deleting a space removes its site spaces', async () => {
    const { admin, org } = await newOrg();
    const a = await newSpace(admin, org.id, 'A');
    const b = await newSpace(admin, org.id, 'B');
    const site = await newSite(admin, org.id, { spaces: [a.id, b.id] });
    await admin.api.spaces.deleteSpaceById(a.id);
    const { data } = await admin.api.orgs.listSiteSpaces(org.id, site.id);
    assert.deepEqual(data.items.map((s) => [s.space.id, s.default]), [[b.id, true]]);
    assert.equal((await admin.api.orgs.getSiteById(org.id, site.id)).data.siteSpaces, 1);
  });

  test('sections: the first takes the root content and is the default; paths, defaults, delete', async () => {
    const { admin, org } = await newOrg();
    const root = await newSpace(admin, org.id, 'Home');
    const api = await newSpace(admin, org.id, 'API Reference');
    const v2 = await newSpace(admin, org.id, 'API v2');
    const site = await newSite(admin, org.id, { spaces: [root.id] });
    const { data: first } = await admin.api.orgs.addSectionToSite(org.id, site.id, { spaceId: api.id, icon: 'gear' });
    assert.equal(first.default, true);
    assert.equal(first.title, 'API Reference');
    assert.equal(first.path, 'api-reference');
    assert.equal(first.icon, 'gear');
    assert.deepEqual(first.siteSpaces.map((s) => s.space.id), [root.id, api.id]);
    const { data: second } = await admin.api.orgs.addSectionToSite(org.id, site.id, { spaceId: v2.id, title: 'Version 2' });
    assert.equal(second.default, false);
    // A site space added without a section goes to the default section.
    const { data: extra } = await admin.api.orgs.addSpaceToSite(org.id, site.id, { spaceId: v2.id });
    assert.equal(extra.section, first.id);
    const { data: changed } = await admin.api.orgs.updateSiteSectionById(org.id, site.id, second.id, {
      title: 'V2',
      path: 'v2',
      description: 'Second version',
      condition: 'visitor.claims.unsigned.beta',
    });
    assert.deepEqual([changed.title, changed.path, changed.description, changed.condition], ['V2', 'v2', 'Second version', 'visitor.claims.unsigned.beta']);
    assert.equal((await raw(admin, 'PATCH', `/orgs/${org.id}/sites/${site.id}/sections/${second.id}`, { path: 'api-reference' })).status, 409);
    const { data: madeDefault } = await admin.api.orgs.updateSiteById(org.id, site.id, { defaultSiteSection: second.id });
    assert.equal(madeDefault.id, site.id);
    const { data: sections } = await admin.api.orgs.listSiteSections(org.id, site.id);
    assert.deepEqual(sections.items.map((s) => [s.id, s.default]), [[first.id, false], [second.id, true]]);
    await admin.api.orgs.deleteSiteSectionById(org.id, site.id, second.id);
    const { data: left } = await admin.api.orgs.listSiteSections(org.id, site.id);
    assert.deepEqual(left.items.map((s) => [s.id, s.default]), [[first.id, true]]);
    // defaultSiteSpace on a sectioned site: a site space of the default section.
    const { data: site2 } = await admin.api.orgs.updateSiteById(org.id, site.id, { defaultSiteSpace: extra.id });
    assert.equal(site2.siteSpaces, 3);
    const { data: after } = await admin.api.orgs.listSiteSections(org.id, site.id);
    assert.deepEqual(after.items[0]!.siteSpaces.filter((s) => s.default).map((s) => s.id), [extra.id]);
  });
});


