import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { SiteVisibility } from '@gitbook/api';
import * as factories from './support/factories.ts';
import { statusOf } from './support/factories.ts';
import { expectStatus, startTestServer, type TestServer, type TestUser } from './support/server.ts';
import { officialSchema, officialSpec } from './support/official-schema.ts';

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

  test('spaceId null creates the space with its site space, from a template; a refused request leaves nothing behind', async () => {
    const { admin, org } = await newOrg();
    const site = await newSite(admin, org.id);
    const base = `/orgs/${org.id}/sites/${site.id}`;
    const spacesNow = async () => (await admin.api.orgs.listSpacesInOrganizationById(org.id)).data.items.map((s) => s.title).sort();
    const { data: fresh } = await admin.api.orgs.addSpaceToSite(org.id, site.id, { spaceId: null, title: 'Release notes', template: { id: 'changelog' } });
    assert.equal(fresh.space.title, 'Release notes');
    assert.equal(fresh.space.organization, org.id);
    assert.equal(fresh.default, true);
    // The new space holds the template's pages, and is the site's.
    const { data: pages } = await admin.api.spaces.listPages(fresh.space.id);
    assert.ok(pages.pages.length > 0, 'the template placed its pages');
    assert.deepEqual((await admin.api.orgs.listSiteSpaces(org.id, site.id)).data.items.map((s) => s.space.id), [fresh.space.id]);
    // Without a template or title: an empty "Untitled" space.
    const { data: plain } = await admin.api.orgs.addSpaceToSite(org.id, site.id, { spaceId: null });
    assert.equal(plain.space.title, 'Untitled');
    assert.equal(plain.default, false);
    assert.deepEqual(await spacesNow(), ['Release notes', 'Untitled']);

    // Refused: an unknown template, a missing section, a template whose references cannot be placed
    // (it fails after the space was created), drafts, custom home pages; no space is left over.
    await expect400(raw(admin, 'POST', `${base}/site-spaces`, { spaceId: null, template: { id: 'nope' } }), /id: unknown template "nope"/);
    await expect400(raw(admin, 'POST', `${base}/site-spaces`, { spaceId: null, sectionId: 'nope' }), /sectionId/);
    await expect400(raw(admin, 'POST', `${base}/site-spaces`, { spaceId: null, template: { id: 'getting-started', params: { contentRefs: { logo: { kind: 'file', file: 'missing' } } } } }), /logo/);
    await expect400(raw(admin, 'POST', `${base}/site-spaces`, { spaceId: null, draft: true }), /draft/);
    await expect400(raw(admin, 'POST', `${base}/site-spaces`, { spaceId: null, pageId: 'home' }), /pageId/);
    await expect400(raw(admin, 'POST', `${base}/site-spaces`, { spaceId: plain.space.id, title: 'Renamed' }), /spaceId null/);
    assert.deepEqual(await spacesNow(), ['Release notes', 'Untitled']);
    assert.equal((await admin.api.orgs.listSiteSpaces(org.id, site.id)).data.items.length, 2);
    // Creating needs what adding needs: readers may not.
    const reader = await factories.newMember(t, org.id, 'read', 'Rae Reader');
    await expectStatus(reader.api.orgs.addSpaceToSite(org.id, site.id, { spaceId: null }), 403);
    assert.deepEqual(await spacesNow(), ['Release notes', 'Untitled']);
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



async function publishPages(user: TestUser, spaceId: string, changes: unknown[]) {
  const { data: cr } = await user.api.spaces.createChangeRequest(spaceId, { subject: 'Content' });
  await user.api.spaces.updateChangeRequestContent(spaceId, cr.id, { changes: changes as never });
  await user.api.spaces.mergeChangeRequest(spaceId, cr.id);
}

describe('publishing and access', () => {
  test('published content site: structure, customizations, scripts; share links rotate and revoke', async () => {
    const { admin, org } = await newOrg();
    const visitor = await t.user('Visitor');
    const space = await newSpace(admin, org.id, 'Guide');
    const site = await newSite(admin, org.id, { spaces: [space.id], visibility: SiteVisibility.ShareLink });
    await admin.api.orgs.publishSite(org.id, site.id);

    const { data: mine } = await admin.api.orgs.getPublishedContentSite(org.id, site.id);
    assert.equal(mine.object, 'published-content-site');
    assert.equal(mine.site.id, site.id);
    assert.equal(mine.structure.type, 'siteSpaces');
    assert.equal(mine.structure.structure.length, 1);
    assert.deepEqual(mine.scripts, []);
    assert.equal(mine.customizations.site.styling.theme, 'clean');

    // A visitor needs an active share key.
    await expectStatus(visitor.api.orgs.getPublishedContentSite(org.id, site.id), 404);
    const { data: link } = await admin.api.orgs.createSiteShareLink(org.id, site.id, { name: 'Partners' });
    assert.equal(link.active, true);
    const key = new URL(link.urls.published!).searchParams.get('share')!;
    assert.ok(Buffer.from(key, 'base64url').length >= 16, 'at least 128 bits');
    const { data: seen } = await visitor.api.orgs.getPublishedContentSite(org.id, site.id, { shareKey: key });
    assert.equal(seen.site.id, site.id);
    assert.equal(seen.site.permissions.view, false);
    assert.match((seen.structure.structure[0] as { urls: { published: string } }).urls.published, new RegExp(`share=${key}`));
    assert.equal((await visitor.api.orgs.listSiteSpaces(org.id, site.id, { shareKey: key })).data.count, 1);
    assert.equal((await visitor.api.orgs.getSiteStructure(org.id, site.id, { shareKey: key })).data.structure.length, 1);
    await expectStatus(visitor.api.orgs.getSiteById(org.id, site.id), 404);

    // Rotation: a new link works, the old one revoked (turned off, then deleted) does not.
    const { data: next } = await admin.api.orgs.createSiteShareLink(org.id, site.id, { name: 'Partners 2' });
    const nextKey = new URL(next.urls.published!).searchParams.get('share')!;
    assert.notEqual(nextKey, key);
    const { data: off } = await admin.api.orgs.updateSiteShareLinkById(org.id, site.id, link.id, { active: false });
    assert.equal(off.active, false);
    await expectStatus(visitor.api.orgs.getPublishedContentSite(org.id, site.id, { shareKey: key }), 404);
    assert.equal((await admin.api.orgs.updateSiteShareLinkById(org.id, site.id, link.id, { active: true, name: 'Back' })).data.name, 'Back');
    assert.equal((await visitor.api.orgs.getPublishedContentSite(org.id, site.id, { shareKey: key })).status, 200);
    await admin.api.orgs.deleteSiteShareLinkById(org.id, site.id, link.id);
    await expectStatus(visitor.api.orgs.getPublishedContentSite(org.id, site.id, { shareKey: key }), 404);
    assert.equal((await visitor.api.orgs.getPublishedContentSite(org.id, site.id, { shareKey: nextKey })).status, 200);
    const { data: links } = await admin.api.orgs.listSiteShareLinks(org.id, site.id);
    assert.deepEqual(links.items.map((l) => l.id), [next.id]);
    assert.equal((await admin.api.orgs.listSiteShareLinks(org.id, site.id, { search: 'nothing' })).data.count, 0);

    // Unpublished: visitors see nothing even with a key; public sites need none.
    await admin.api.orgs.unpublishSite(org.id, site.id);
    await expectStatus(visitor.api.orgs.getPublishedContentSite(org.id, site.id, { shareKey: nextKey }), 404);
    await admin.api.orgs.updateSiteById(org.id, site.id, { visibility: SiteVisibility.Public });
    await admin.api.orgs.publishSite(org.id, site.id);
    assert.equal((await visitor.api.orgs.getPublishedContentSite(org.id, site.id)).status, 200);
  });

  test('customization: site settings over defaults, site-space overrides patched and reset', async () => {
    const { admin, org } = await newOrg();
    const space = await newSpace(admin, org.id);
    const site = await newSite(admin, org.id, { spaces: [space.id] });
    const ssId = (await admin.api.orgs.listSiteSpaces(org.id, site.id)).data.items[0]!.id;
    const { data: initial } = await admin.api.orgs.getSiteCustomizationById(org.id, site.id);
    assert.equal(initial.updatedAt, undefined);
    const { data: set } = await admin.api.orgs.updateSiteCustomizationById(org.id, site.id, {
      title: 'Branded',
      styling: { theme: 'bold', primaryColor: { light: '#ff0000', dark: '#00ff00' } },
      announcement: { enabled: true, message: 'Hello visitors', style: 'info' },
    } as never);
    assert.equal(set.title, 'Branded');
    assert.equal(set.styling.theme, 'bold');
    assert.equal(set.styling.corners, 'rounded', 'defaults fill what was not set');
    assert.ok(set.updatedAt);
    const { data: over } = await admin.api.orgs.overrideSiteSpaceCustomizationById(org.id, site.id, ssId, { title: 'Variant', styling: { theme: 'muted' } } as never);
    assert.equal(over.title, 'Variant');
    assert.equal(over.styling.theme, 'muted');
    assert.equal(over.styling.primaryColor.light, '#ff0000');
    const { data: reset } = await admin.api.orgs.overrideSiteSpaceCustomizationById(org.id, site.id, ssId, { title: null } as never);
    assert.equal(reset.title, 'Branded');
    assert.equal(reset.styling.theme, 'muted');
    assert.equal((await admin.api.orgs.getSiteSpaceCustomizationById(org.id, site.id, ssId)).data.styling.theme, 'muted');
    const published = (await admin.api.orgs.getPublishedContentSite(org.id, site.id)).data;
    assert.equal(published.customizations.siteSpaces[ssId]!.styling.theme, 'muted');
    await admin.api.orgs.deleteSiteSpaceCustomizationById(org.id, site.id, ssId);
    assert.equal((await admin.api.orgs.getSiteSpaceCustomizationById(org.id, site.id, ssId)).data.styling.theme, 'bold');
    await expect400(raw(admin, 'PUT', `/orgs/${org.id}/sites/${site.id}/customization`, { styling: { primaryColor: { light: 'red', dark: '#000' } } }), /primaryColor/);
    await expect400(raw(admin, 'PUT', `/orgs/${org.id}/sites/${site.id}/customization`, { colour: 'red' }), /unknown field "colour"/);
  });

  test('customization: what a read returns goes back unchanged, with every field of the official input kept', async () => {
    const { admin, org } = await newOrg();
    const site = await newSite(admin, org.id);
    const member = await factories.newMember(t, org.id, 'read', 'Reader');
    const link = { title: 'Docs', localizedTitle: { fr: 'Docs FR' }, to: { kind: 'url', url: 'https://example.com/docs' } };
    const font = { id: 'brand', custom: true, fontFamily: 'Brand Sans', fontFaces: [{ weight: 400, sources: [{ url: 'https://example.com/brand.woff2', format: 'woff2' }] }] };
    // One value for every property of SiteCustomizationSettingsInput, deprecated ones included.
    const every = {
      title: 'Branded docs',
      localizedTitle: { fr: 'Docs de marque', de: 'Markendokumente' },
      styling: {
        theme: 'gradient',
        primaryColor: { light: '#112233', dark: '#445566' },
        tint: { color: { light: '#abcdef', dark: '#fedcba' } },
        infoColor: { light: '#010101', dark: '#020202' },
        successColor: { light: '#030303', dark: '#040404' },
        warningColor: { light: '#050505', dark: '#060606' },
        dangerColor: { light: '#070707', dark: '#080808' },
        corners: 'circular',
        depth: 'flat',
        links: 'accent',
        font,
        headingFont: 'Poppins',
        monospaceFont: 'JetBrainsMono',
        background: 'match',
        icons: 'duotone',
        codeTheme: { default: { light: 'github-light', dark: 'github-dark' }, openapi: { light: 'nord', dark: 'dracula' } },
        sidebar: { background: 'filled', list: 'pill' },
        search: 'subtle',
      },
      internationalization: { locale: 'fr' },
      favicon: { icon: { light: 'https://example.com/icon-light.png', dark: 'https://example.com/icon-dark.png' } },
      header: {
        preset: 'custom',
        logo: { light: 'https://example.com/logo-light.png', dark: 'https://example.com/logo-dark.png' },
        primaryLink: { kind: 'url', url: 'https://example.com' },
        backgroundColor: { light: '#0a0a0a', dark: '#0b0b0b' },
        linkColor: { light: '#0c0c0c', dark: '#0d0d0d' },
        links: [{ title: 'Product', localizedTitle: { fr: 'Produit' }, style: 'button-primary', to: { kind: 'url', url: 'https://example.com/p' }, links: [link], condition: 'visitor.claims.pro' }],
      },
      footer: { logo: { light: 'https://example.com/f-light.png', dark: 'https://example.com/f-dark.png' }, groups: [{ title: 'More', localizedTitle: { fr: 'Plus' }, links: [link] }], copyright: '© Example' },
      announcement: { enabled: true, message: 'New release', localizedMessage: { fr: 'Nouvelle version' }, link, style: 'success' },
      themes: { default: 'dark', toggeable: false },
      feedback: { enabled: true },
      ai: { mode: 'assistant', greeting: 'Ask me anything', localizedGreeting: { fr: 'Demandez-moi' }, suggestions: ['How do I start?'], instructions: 'Answer briefly.' },
      advancedCustomization: { enabled: false },
      pageActions: { items: ['pdf', 'markdown'] },
      externalLinks: { target: 'blank' },
      pagination: { enabled: false },
      trademark: { enabled: false },
      privacyPolicy: { url: 'https://example.com/privacy' },
      socialPreview: { url: 'https://example.com/preview.png' },
      socialAccounts: [{ platform: 'github', handle: 'example', display: { footer: true, header: false } }],
      insights: { trackingCookie: false },
    };
    const input = officialSchema('SiteCustomizationSettingsInput');
    assert.ok(input(every), input.errors());
    assert.deepEqual(propertiesMissing(officialSpec.components.schemas.SiteCustomizationSettingsInput, every), [], 'the sample sets every field of the official input');

    const { data: set } = await admin.api.orgs.updateSiteCustomizationById(org.id, site.id, every as never);
    assertKept(every, set);
    const { data: read } = await admin.api.orgs.getSiteCustomizationById(org.id, site.id);
    assertKept(every, read);
    assert.ok(read.updatedAt);
    // What the read returned, sent back as it is (updatedAt, defaults and deprecated fields included).
    const { data: again } = await admin.api.orgs.updateSiteCustomizationById(org.id, site.id, read as never);
    const { updatedAt: _first, ...before } = read;
    const { updatedAt: _second, ...after } = again;
    assert.deepEqual(after, before);
    assert.deepEqual((await admin.api.orgs.getSiteCustomizationById(org.id, site.id)).data, again);

    // null headings font (the main font) is a value, kept as such.
    const { data: mainFont } = await admin.api.orgs.updateSiteCustomizationById(org.id, site.id, { ...every, styling: { ...every.styling, headingFont: null } } as never);
    assert.equal(mainFont.styling.headingFont, null);

    // The assistant's instructions are for those who customize the site: not for readers, not on the published site.
    assert.equal((await admin.api.orgs.getSiteCustomizationById(org.id, site.id)).data.ai.instructions, 'Answer briefly.');
    assert.equal((await member.api.orgs.getSiteCustomizationById(org.id, site.id)).data.ai.instructions, undefined);
    assert.equal((await member.api.orgs.getSiteCustomizationById(org.id, site.id)).data.ai.greeting, 'Ask me anything');
    assert.equal((await admin.api.orgs.getPublishedContentSite(org.id, site.id)).data.customizations.site.ai.instructions, undefined);
  });

  test('adaptive schema: validated on PUT with a 400 that says what to fix; template conditions from the claims', async () => {
    const { admin, org } = await newOrg();
    const site = await newSite(admin, org.id);
    const { data: empty } = await admin.api.orgs.getSiteAdaptiveSchema(org.id, site.id);
    assert.equal(empty.object, 'site-adaptive-schema');
    const jsonSchema = {
      $schema: 'http://json-schema.org/draft-07/schema#',
      type: 'object',
      properties: {
        isAdmin: { type: 'boolean', description: 'The visitor administers an account' },
        unsigned: {
          type: 'object',
          description: 'Unsigned claims of the site visitor.',
          properties: { isBetaUser: { type: 'boolean', description: 'Joined the beta' } },
          additionalProperties: false,
        },
      },
      additionalProperties: false,
    };
    const { data: saved } = await admin.api.orgs.updateSiteAdaptiveSchema(org.id, site.id, { jsonSchema } as never);
    assert.deepEqual(saved.jsonSchema, jsonSchema);
    const { data: conditions } = await admin.api.orgs.listSiteAdaptiveTemplateConditions(org.id, site.id);
    assert.deepEqual(conditions.items, [
      { description: 'The visitor administers an account', condition: 'visitor.claims.isAdmin' },
      { description: 'Joined the beta', condition: 'visitor.claims.unsigned.isBetaUser' },
    ]);
    const put = (schema: unknown) => raw(admin, 'PUT', `/orgs/${org.id}/sites/${site.id}/adaptive-schema`, { jsonSchema: schema });
    await expect400(put({ ...jsonSchema, $schema: 'https://json-schema.org/draft/2020-12/schema' }), /draft-07/);
    await expect400(put({ ...jsonSchema, additionalProperties: true }), /additionalProperties.*false/);
    await expect400(put({ ...jsonSchema, properties: { age: { type: 'number', description: 'Age' } } }), /claim "age".*boolean/);
    await expect400(put({ ...jsonSchema, properties: { beta: { type: 'boolean' } } }), /claim "beta" needs a non-empty "description"/);
    await expect400(put({ ...jsonSchema, properties: { unsigned: { type: 'object', properties: { x: { type: 'string', description: 'x' } }, additionalProperties: false } } }), /unsigned: claim "x"/);
    await expect400(put({ ...jsonSchema, required: ['isAdmin'] }), /unexpected keywords required/);
    await expect400(put({ type: 'array' }), /"type" must be "object"/);
    const reader = await factories.newMember(t, org.id, 'read');
    await expectStatus(reader.api.orgs.getSiteAdaptiveSchema(org.id, site.id), 403);
  });

  test('publishing auth: the visitor key is readable by admins, regenerated, with fallback and logout URLs', async () => {
    const { admin, org } = await newOrg();
    const site = await newSite(admin, org.id, { visibility: SiteVisibility.VisitorAuth });
    const { data: auth } = await admin.api.orgs.getSitePublishingAuthById(org.id, site.id);
    assert.equal(auth.object, 'publishing-auth');
    assert.ok(Buffer.from(auth.privateKey, 'base64url').length >= 16);
    const { data: updated } = await admin.api.orgs.updateSitePublishingAuthById(org.id, site.id, {
      backend: 'custom',
      fallbackURL: 'https://login.example.com/',
      logoutURL: 'https://login.example.com/out',
    } as never);
    assert.equal(updated.fallbackURL, 'https://login.example.com/');
    assert.equal(updated.privateKey, auth.privateKey);
    const { data: cleared } = await admin.api.orgs.updateSitePublishingAuthById(org.id, site.id, { backend: 'custom', fallbackURL: null } as never);
    assert.equal(cleared.fallbackURL, undefined);
    assert.equal(cleared.logoutURL, 'https://login.example.com/out');
    const { data: fresh } = await admin.api.orgs.regenerateSitePublishingAuthById(org.id, site.id);
    assert.notEqual(fresh.privateKey, auth.privateKey);
    await expect400(raw(admin, 'PATCH', `/orgs/${org.id}/sites/${site.id}/publishing/auth`, { backend: 'custom', fallbackURL: 'javascript:alert(1)' }), /fallbackURL/);
    const creator = await factories.newMember(t, org.id, 'create');
    await expectStatus(creator.api.orgs.getSitePublishingAuthById(org.id, site.id), 403);
  });

  test('redirects: create, bulk upsert, list, update, delete, and resolution by source', async () => {
    const { admin, org } = await newOrg();
    const space = await newSpace(admin, org.id, 'Guide');
    await publishPages(admin, space.id, [
      { operation: 'insert_page', ref: 'install', title: 'Install', document: { markdown: 'Install it.\n' } },
      { operation: 'insert_page', into: 'install', title: 'Linux', document: { markdown: 'On Linux.\n' } },
    ]);
    const site = await newSite(admin, org.id, { spaces: [space.id] });
    const ss = (await admin.api.orgs.listSiteSpaces(org.id, site.id)).data.items[0]!;
    const base = `${t.url}/${org.id}/docs/`;

    const { data: exact } = await admin.api.orgs.createSiteRedirect(org.id, site.id, {
      source: '/old-install',
      destination: { kind: 'path', spaceId: space.id, path: 'install/linux' },
      permanent: true,
    } as never);
    assert.equal(exact.destination.kind, 'site-page');
    assert.equal(exact.permanent, true);
    const { data: wildcard } = await admin.api.orgs.createSiteRedirect(org.id, site.id, {
      source: '/blog/*',
      captureWildcard: true,
      destination: { kind: 'external', url: 'https://blog.example.com' },
    } as never);
    await admin.api.orgs.createSiteRedirect(org.id, site.id, { source: '/blog/special', destination: { kind: 'site-space', siteSpaceId: ss.id } } as never);

    const lookup = async (source: string) => (await admin.api.orgs.getSiteRedirectBySource(org.id, site.id, { source })).data;
    assert.equal((await lookup('/old-install')).target, `${base}install/linux`);
    assert.equal((await lookup('/blog/2020/post')).target, 'https://blog.example.com/2020/post');
    assert.equal((await lookup('/blog/2020/post')).redirect.id, wildcard.id);
    assert.equal((await lookup('/blog/special')).target, base, 'exact beats wildcard');
    await expectStatus(admin.api.orgs.getSiteRedirectBySource(org.id, site.id, { source: '/nowhere' }), 404);

    // Taken sources conflict; bad sources and destinations are 400s naming the field.
    assert.equal((await raw(admin, 'POST', `/orgs/${org.id}/sites/${site.id}/redirects`, { source: '/old-install', destination: { kind: 'site-space', siteSpaceId: ss.id } })).status, 409);
    await expect400(raw(admin, 'POST', `/orgs/${org.id}/sites/${site.id}/redirects`, { source: 'no-slash', destination: { kind: 'site-space', siteSpaceId: ss.id } }), /source/);
    await expect400(raw(admin, 'POST', `/orgs/${org.id}/sites/${site.id}/redirects`, { source: '/x', destination: { kind: 'site-space', siteSpaceId: 'nope' } }), /destination\.siteSpaceId/);
    await expect400(raw(admin, 'POST', `/orgs/${org.id}/sites/${site.id}/redirects`, { source: '/x', destination: { kind: 'path', spaceId: space.id, path: 'missing' } }), /destination\.path: no page/);

    // Bulk: a draft, a publication of it, an update and a deletion in one call.
    const { data: bulk } = await admin.api.orgs.bulkUpsertSiteRedirects(org.id, site.id, {
      redirects: [
        { source: '/draft-me', intent: 'draft', destination: { kind: 'site-space', siteSpaceId: ss.id } },
        { source: '/old-install', destination: { kind: 'external', url: 'https://example.com/install' } },
        { source: '/blog/special', destination: null },
      ],
    } as never);
    assert.deepEqual(bulk.results.map((r) => [r.status, r.source, r.draft]), [
      ['created', '/draft-me', true],
      ['updated', '/old-install', false],
      ['deleted', '/blog/special', false],
    ]);
    await expectStatus(admin.api.orgs.getSiteRedirectBySource(org.id, site.id, { source: '/draft-me' }), 404);
    const { data: pub } = await admin.api.orgs.bulkUpsertSiteRedirects(org.id, site.id, { redirects: [{ source: '/draft-me', intent: 'publish' }] } as never);
    assert.equal(pub.results[0]!.status, 'published');
    assert.equal((await lookup('/draft-me')).target, base);
    assert.equal((await lookup('/blog/special')).redirect.id, wildcard.id);

    const { data: live } = await admin.api.orgs.listSiteRedirects(org.id, site.id, { orderBy: 'source' as never });
    assert.deepEqual(live.items.map((r) => r.source), ['/blog/*', '/draft-me', '/old-install']);
    const { data: firstPage } = await admin.api.orgs.listSiteRedirects(org.id, site.id, { limit: 2 });
    const { data: secondPage } = await admin.api.orgs.listSiteRedirects(org.id, site.id, { limit: 2, page: firstPage.next!.page });
    assert.equal(new Set([...firstPage.items, ...secondPage.items].map((r) => r.id)).size, 3);
    assert.equal((await admin.api.orgs.listSiteRedirects(org.id, site.id, { draft: true })).data.count, 0);

    const { data: changed } = await admin.api.orgs.updateSiteRedirectById(org.id, site.id, exact.id, { source: '/older-install' });
    assert.equal(changed.source, '/older-install');
    assert.ok(changed.updatedAt);
    await admin.api.orgs.deleteSiteRedirectById(org.id, site.id, exact.id);
    await expectStatus(admin.api.orgs.getSiteRedirectBySource(org.id, site.id, { source: '/older-install' }), 404);
  });

  test('site search covers the site spaces in scope', async () => {
    const { admin, org } = await newOrg();
    const guide = await newSpace(admin, org.id, 'Guide');
    const api = await newSpace(admin, org.id, 'API');
    const outside = await newSpace(admin, org.id, 'Outside');
    await publishPages(admin, guide.id, [{ operation: 'insert_page', title: 'Zebra crossing', document: { markdown: 'About zebras.\n' } }]);
    await publishPages(admin, api.id, [{ operation: 'insert_page', title: 'Zebra endpoint', document: { markdown: 'The zebra API.\n' } }]);
    await publishPages(admin, outside.id, [{ operation: 'insert_page', title: 'Zebra elsewhere', document: { markdown: 'Not on the site.\n' } }]);
    const site = await newSite(admin, org.id, { spaces: [guide.id, api.id] });
    const [ssGuide, ssApi] = (await admin.api.orgs.listSiteSpaces(org.id, site.id)).data.items;
    const search = async (body: object) => (await admin.api.orgs.searchSiteContent(org.id, site.id, { query: 'zebra', ...body } as never)).data.items.map((i) => i.id).sort();
    assert.deepEqual(await search({ scope: { mode: 'all' } }), [guide.id, api.id].sort());
    assert.deepEqual(await search({ scope: { mode: 'default' } }), [guide.id]);
    assert.deepEqual(await search({ scope: { mode: 'default', currentSiteSpace: ssApi!.id } }), [guide.id, api.id].sort());
    assert.deepEqual(await search({ scope: { mode: 'default', currentSiteSpace: ssApi!.id, restrictTo: 'currentSiteSpace' } }), [api.id]);
    assert.deepEqual(await search({ scope: { mode: 'specific', siteSpaceIds: [ssApi!.id] } }), [api.id]);
    void ssGuide;
    await expect400(raw(admin, 'POST', `/orgs/${org.id}/sites/${site.id}/search`, { query: 'zebra', scope: { mode: 'specific', siteSpaceIds: ['nope'] } }), /siteSpaceIds\[0\]/);
  });
});

describe('published URLs', () => {
  test('resolve a URL to site, section, site space and page; redirects; share keys', async () => {
    const { admin, org } = await newOrg();
    const visitor = await t.user('Visitor');
    const guide = await newSpace(admin, org.id, 'Guide');
    const v2 = await newSpace(admin, org.id, 'Guide v2');
    await publishPages(admin, guide.id, [
      { operation: 'insert_page', ref: 'install', title: 'Install', document: { markdown: 'Install it.\n' } },
      { operation: 'insert_page', into: 'install', title: 'Linux', document: { markdown: 'On Linux.\n' } },
    ]);
    const site = await newSite(admin, org.id, { spaces: [guide.id] });
    const { data: section } = await admin.api.orgs.addSectionToSite(org.id, site.id, { spaceId: guide.id, title: 'Guides' });
    const { data: other } = await admin.api.orgs.addSectionToSite(org.id, site.id, { spaceId: v2.id, title: 'Reference' });
    await admin.api.orgs.publishSite(org.id, site.id);
    const base = `${t.url}/${org.id}/docs/`;

    const { data: page } = await visitor.api.urls.resolvePublishedContentByUrl({ url: `${base}install/linux` });
    assert.ok('siteSpace' in page);
    assert.equal(page.site, site.id);
    assert.equal(page.siteSection, section.id);
    assert.equal(page.space, guide.id);
    assert.equal(page.pathname, 'install/linux');
    assert.equal(page.siteBasePath, `/${org.id}/docs/`);
    assert.equal(page.canonicalUrl, `${base}install/linux`);
    // A content token: it reads the resolved space only (test/content-token.test.ts), not its owner's profile.
    const reader = t.client(page.apiToken);
    await expectStatus(reader.user.getAuthenticatedUser(), 403);

    const { data: ref } = await visitor.api.urls.getPublishedContentByUrl({ url: `${base}reference/` });
    assert.ok('siteSpace' in ref);
    assert.equal(ref.siteSection, other.id);
    assert.equal(ref.space, v2.id);
    assert.equal(ref.pathname, '');
    assert.equal(ref.basePath, `/${org.id}/docs/reference/`);

    await expectStatus(visitor.api.urls.resolvePublishedContentByUrl({ url: `${base}nope` }), 404);
    await admin.api.orgs.createSiteRedirect(org.id, site.id, { source: '/nope', destination: { kind: 'site-section', siteSectionId: other.id } } as never);
    const { data: redirect } = await visitor.api.urls.resolvePublishedContentByUrl({ url: `${base}nope` });
    assert.deepEqual(redirect, { target: 'content', redirect: `${base}reference/` });
    await expectStatus(visitor.api.urls.resolvePublishedContentByUrl({ url: `${t.url}/${org.id}/elsewhere/` }), 404);

    // Share-link sites need an active key in the URL.
    await admin.api.orgs.updateSiteById(org.id, site.id, { visibility: SiteVisibility.ShareLink });
    await expectStatus(visitor.api.urls.resolvePublishedContentByUrl({ url: `${base}install` }), 404);
    const { data: link } = await admin.api.orgs.createSiteShareLink(org.id, site.id, { name: 'Friends' });
    const { data: shared } = await visitor.api.urls.resolvePublishedContentByUrl({ url: link.urls.published! });
    assert.ok('shareKey' in shared);
    assert.equal(shared.shareKey, new URL(link.urls.published!).searchParams.get('share'));
    await admin.api.orgs.unpublishSite(org.id, site.id);
    await expectStatus(visitor.api.urls.resolvePublishedContentByUrl({ url: link.urls.published! }), 404);
  });

  test('visitor-auth sites take HS256 JWTs signed with the site key; none, other algorithms, wrong keys and expired tokens are refused', async () => {
    const { SignJWT, UnsecuredJWT, generateKeyPair } = await import('jose');
    const { admin, org } = await newOrg();
    const visitor = await t.user('Visitor');
    const space = await newSpace(admin, org.id, 'Members area');
    const site = await newSite(admin, org.id, { spaces: [space.id], visibility: SiteVisibility.VisitorAuth });
    await admin.api.orgs.publishSite(org.id, site.id);
    const url = `${t.url}/${org.id}/docs/`;
    const key = (await admin.api.orgs.getSitePublishingAuthById(org.id, site.id)).data.privateKey;
    const sign = (secret: string, exp: string | number = '1h') =>
      new SignJWT({ role: 'customer' }).setProtectedHeader({ alg: 'HS256' }).setIssuedAt().setExpirationTime(exp).sign(new TextEncoder().encode(secret));
    const resolve = (jwtToken?: string) => visitor.api.urls.resolvePublishedContentByUrl({ url, ...(jwtToken ? { visitor: { jwtToken } } : {}) });

    assert.equal((await resolve(await sign(key))).status, 200);
    assert.equal((await visitor.api.urls.getPublishedContentByUrl({ url, visitorAuthToken: await sign(key) })).status, 200);
    await expectStatus(resolve(), 401);
    await expectStatus(resolve(await sign('not-the-key')), 401);
    await expectStatus(resolve(await sign(key, Math.floor(Date.now() / 1000) - 60)), 401);
    await expectStatus(resolve(new UnsecuredJWT({ role: 'customer' }).setExpirationTime('1h').encode()), 401);
    const { privateKey } = await generateKeyPair('RS256');
    await expectStatus(resolve(await new SignJWT({}).setProtectedHeader({ alg: 'RS256' }).setExpirationTime('1h').sign(privateKey)), 401);
    const hs512 = await new SignJWT({}).setProtectedHeader({ alg: 'HS512' }).setExpirationTime('1h').sign(new TextEncoder().encode(key));
    await expectStatus(resolve(hs512), 401);
    // Regenerating the key ends the old tokens.
    const old = await sign(key);
    const fresh = (await admin.api.orgs.regenerateSitePublishingAuthById(org.id, site.id)).data.privateKey;
    await expectStatus(resolve(old), 401);
    assert.equal((await resolve(await sign(fresh))).status, 200);
    // With a fallback URL, a refused visitor may be sent there instead.
    await admin.api.orgs.updateSitePublishingAuthById(org.id, site.id, { backend: 'custom', fallbackURL: 'https://login.example.com/' } as never);
    const { data: sent } = await visitor.api.urls.resolvePublishedContentByUrl({ url, redirectOnError: true, visitor: { jwtToken: old } });
    assert.deepEqual(sent, { target: 'external', site: site.id, redirect: 'https://login.example.com/' });
    // Members of the organization read without a visitor token.
    assert.equal((await admin.api.urls.resolvePublishedContentByUrl({ url })).status, 200);
  });
});

type Json = Record<string, any>;

/**
 * The properties an official schema declares that `value` does not set, as paths (`styling.tint`,
 * `header.links[].condition`). `$ref` and `allOf` are followed; of a `oneOf`/`anyOf`, the object
 * branches whose required properties `value` has; of an array, an item property counts as set when
 * one item sets it.
 */
function propertiesMissing(schema: Json, value: unknown, path = ''): string[] {
  const resolve = (s: Json): Json => (s.$ref ? resolve(officialSpec.components.schemas[s.$ref.split('/').pop()!]) : s);
  const node = resolve(schema);
  const missing = new Set<string>();
  for (const part of node.allOf ?? []) for (const m of propertiesMissing(part, value, path)) missing.add(m);
  for (const branch of [...(node.oneOf ?? []), ...(node.anyOf ?? [])]) {
    const b = resolve(branch);
    const isObject = value !== null && typeof value === 'object' && !Array.isArray(value);
    if (isObject && b.properties && (b.required ?? []).every((k: string) => k in (value as Json))) {
      for (const m of propertiesMissing(b, value, path)) missing.add(m);
    }
  }
  if (node.properties && value !== null && typeof value === 'object' && !Array.isArray(value)) {
    for (const [key, sub] of Object.entries<Json>(node.properties)) {
      const at = path ? `${path}.${key}` : key;
      if ((value as Json)[key] === undefined) missing.add(at);
      else for (const m of propertiesMissing(sub, (value as Json)[key], at)) missing.add(m);
    }
  }
  if (node.items && Array.isArray(value)) {
    if (!value.length) missing.add(`${path}[]`);
    const perItem = value.map((item) => new Set(propertiesMissing(node.items, item, `${path}[]`)));
    for (const m of perItem[0] ?? []) if (perItem.every((set) => set.has(m))) missing.add(m);
  }
  return [...missing].sort();
}

/** Every value set in `sent` reads back the same in `got` (objects compared key by key, the rest exactly). */
function assertKept(sent: unknown, got: unknown, path = 'customization'): void {
  if (sent !== null && typeof sent === 'object' && !Array.isArray(sent)) {
    assert.ok(got !== null && typeof got === 'object', `${path}: an object was set, got ${JSON.stringify(got)}`);
    for (const [key, value] of Object.entries(sent)) assertKept(value, (got as Json)[key], `${path}.${key}`);
    return;
  }
  assert.deepEqual(got, sent, `${path} was not kept`);
}
