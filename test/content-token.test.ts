import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { SignJWT } from 'jose';
import { SiteVisibility } from '@gitbook/api';
import { MAX_LIVE_TOKENS } from '../src/tokens/service.ts';
import * as factories from './support/factories.ts';
import { expectStatus, startTestServer, type TestServer, type TestUser } from './support/server.ts';

/**
 * The apiToken of a resolved published URL is a content token: it reads the resolved space's
 * content as far as its owner may, and nothing else.
 */

let t: TestServer;
before(async () => {
  t = await startTestServer();
});
after(async () => {
  await t?.close();
});

async function newSpace(user: TestUser, organizationId: string, title: string) {
  return (await user.api.orgs.createSpace(organizationId, { title })).data;
}

async function publishPages(user: TestUser, spaceId: string, changes: unknown[]) {
  const { data: cr } = await user.api.spaces.createChangeRequest(spaceId, { subject: 'Content' });
  await user.api.spaces.updateChangeRequestContent(spaceId, cr.id, { changes: changes as never });
  await user.api.spaces.mergeChangeRequest(spaceId, cr.id);
}

/**
 * An organization with a published site over one space ("Guide"), another space, and an editor.
 * The site is public unless `visibility` says otherwise.
 */
async function siteWithEditor(visibility: SiteVisibility = SiteVisibility.Public) {
  const { admin, org } = await factories.newOrg(t, 'Content Token Inc');
  const editor = await factories.newMember(t, org.id, 'edit', 'Edith Editor');
  const guide = await newSpace(admin, org.id, 'Guide');
  const other = await newSpace(admin, org.id, 'Internal notes');
  await publishPages(admin, guide.id, [{ operation: 'insert_page', title: 'Install', document: { markdown: 'Install the zebra tool.\n' } }]);
  const { data: site } = await admin.api.orgs.createSite(org.id, { title: 'Docs', spaces: [guide.id], visibility } as never);
  await admin.api.orgs.publishSite(org.id, site.id);
  return { admin, org, editor, guide, other, site, url: `${t.url}/${org.id}/${site.basename}/install` };
}

async function contentToken(user: { api: TestUser['api'] }, url: string): Promise<string> {
  const { data } = await user.api.urls.resolvePublishedContentByUrl({ url });
  assert.ok('apiToken' in data);
  return data.apiToken;
}

/** A raw call with a token, for answers the official client does not expose (messages, HEAD). */
function raw(token: string, method: string, path: string, body?: unknown) {
  return t.request(method, `/v1${path}`, { token, ...(body !== undefined ? { body } : {}) });
}

describe('content tokens', () => {
  test('read the resolved space and its content; nothing else', async () => {
    const { org, editor, guide, other, url } = await siteWithEditor();
    const token = await contentToken(editor, url);
    assert.notEqual(token, editor.token);
    assert.equal(await contentToken(editor, url), token, 'one token per caller token, space and hour');
    const reader = t.client(token);

    // Reads of the space: the space, its pages, a page, its document, a revision, search.
    const { data: space } = await reader.spaces.getSpaceById(guide.id);
    assert.equal(space.id, guide.id);
    // The permissions it advertises are those it has: read, although its owner may edit.
    assert.equal(space.permissions.view, true);
    assert.equal(space.permissions.edit, false);
    assert.equal((await editor.api.spaces.getSpaceById(guide.id)).data.permissions.edit, true);
    const { data: pages } = await reader.spaces.listPages(guide.id);
    assert.deepEqual(pages.pages.map((p) => p.title), ['Install']);
    const { data: page } = await reader.spaces.getPageByPath(guide.id, 'install');
    assert.equal(page.title, 'Install');
    await reader.spaces.getRevisionById(guide.id, space.revision);
    await reader.spaces.getPageDocumentInRevisionById(guide.id, space.revision, page.id);
    const { data: found } = await reader.spaces.searchSpaceContent(guide.id, { query: 'zebra' });
    assert.equal(found.items.length, 1);
    assert.equal((await raw(token, 'HEAD', `/spaces/${guide.id}/content/pages`)).status, 200);

    // Writes are refused, saying what the token is.
    const cr = await raw(token, 'POST', `/spaces/${guide.id}/change-requests`, { subject: 'Sneaky' });
    assert.equal(cr.status, 403);
    assert.match(cr.body.error.message, new RegExp(`read-only content token for space ${guide.id}`));
    await expectStatus(reader.spaces.createChangeRequest(guide.id, { subject: 'Sneaky' }), 403);
    await expectStatus(reader.spaces.updateSpaceById(guide.id, { title: 'Renamed' }), 403);
    await expectStatus(reader.spaces.postCommentInSpace(guide.id, { body: { markdown: 'hi' } } as never), 403);
    // Reads of the space that are not its content: drafts, discussions, who has access.
    await expectStatus(reader.spaces.listChangeRequestsForSpace(guide.id), 403);
    await expectStatus(reader.spaces.listCommentsInSpace(guide.id), 403);
    await expectStatus(reader.spaces.listPermissionsAggregateInSpace(guide.id), 403);
    assert.equal((await editor.api.spaces.getSpaceById(guide.id)).data.title, 'Guide', 'nothing changed');

    // Another space its owner reads is not found; so is any call on it, a write included.
    assert.equal((await editor.api.spaces.getSpaceById(other.id)).status, 200);
    await expectStatus(reader.spaces.getSpaceById(other.id), 404);
    await expectStatus(reader.spaces.listPages(other.id), 404);
    await expectStatus(reader.spaces.createChangeRequest(other.id, { subject: 'Sneaky' }), 404);

    // Nothing outside the space: the organization, the user, tokens, more content tokens.
    await expectStatus(reader.orgs.listSpacesInOrganizationById(org.id), 403);
    await expectStatus(reader.orgs.getOrganizationById(org.id), 403);
    await expectStatus(reader.user.getAuthenticatedUser(), 403);
    await expectStatus(reader.urls.resolvePublishedContentByUrl({ url }), 403);
    const minted = await raw(token, 'POST', '/user/tokens', { name: 'escalate' });
    assert.equal(minted.status, 403);
    assert.equal((await raw(token, 'GET', '/user/tokens')).status, 403);
  });

  test('stops working when its owner loses access to the space (and no site publishes it to them)', async () => {
    // A member resolving a share-link site without its key is granted nothing by the site.
    const { admin, org, editor, guide, url } = await siteWithEditor(SiteVisibility.ShareLink);
    const reader = t.client(await contentToken(editor, url));
    assert.equal((await reader.spaces.listPages(guide.id)).status, 200);
    await admin.api.orgs.removeMemberFromOrganizationById(org.id, editor.id);
    await expectStatus(reader.spaces.listPages(guide.id), 404);
    await expectStatus(reader.spaces.getSpaceById(guide.id), 404);
  });

  test('a visitor who is no member reads what a public site publishes: the current content, while the site shows it', async () => {
    const { admin, org, guide, other, site, url } = await siteWithEditor();
    const visitor = await t.user('Vera Visitor');
    // The space itself is private: the visitor's own token does not see it.
    await expectStatus(visitor.api.spaces.getSpaceById(guide.id), 404);
    const token = await contentToken(visitor, url);
    const reader = t.client(token);
    const { data: space } = await reader.spaces.getSpaceById(guide.id);
    assert.equal(space.visibility, 'private');
    assert.deepEqual(space.permissions.edit, false);
    const { data: page } = await reader.spaces.getPageByPath(guide.id, 'install');
    assert.equal(page.title, 'Install');
    assert.equal((await reader.spaces.getRevisionById(guide.id, space.revision)).data.id, space.revision);
    assert.equal((await reader.spaces.searchSpaceContent(guide.id, { query: 'zebra' })).data.items.length, 1);
    // Not the space's history: an earlier revision is not found (the site shows the current one).
    const earlier = (await admin.api.spaces.getRevisionById(guide.id, space.revision)).data.parents[0]!;
    assert.equal((await admin.api.spaces.getRevisionById(guide.id, earlier)).status, 200);
    await expectStatus(reader.spaces.getRevisionById(guide.id, earlier), 404);
    // Not what the site does not publish, nor anything but reads.
    await expectStatus(reader.spaces.getSpaceById(other.id), 404);
    await expectStatus(reader.spaces.createChangeRequest(guide.id, { subject: 'Sneaky' }), 403);
    await expectStatus(reader.spaces.listChangeRequestsForSpace(guide.id), 403);
    // A merge shows at once: the site publishes the current content.
    await publishPages(admin, guide.id, [{ operation: 'insert_page', title: 'Upgrade', document: { markdown: 'Upgrade it.\n' } }]);
    assert.deepEqual((await reader.spaces.listPages(guide.id)).data.pages.map((p) => p.title), ['Install', 'Upgrade']);

    // The grant lasts while the site gives it: a new audience ends it (coming back restores it),
    await admin.api.orgs.updateSiteById(org.id, site.id, { visibility: SiteVisibility.ShareLink });
    await expectStatus(reader.spaces.listPages(guide.id), 404);
    await admin.api.orgs.updateSiteById(org.id, site.id, { visibility: SiteVisibility.Public });
    assert.equal((await reader.spaces.listPages(guide.id)).status, 200);
    // as do unpublishing the site and taking the space off it.
    await admin.api.orgs.unpublishSite(org.id, site.id);
    await expectStatus(reader.spaces.listPages(guide.id), 404);
    await admin.api.orgs.publishSite(org.id, site.id);
    assert.equal((await reader.spaces.listPages(guide.id)).status, 200);
    const { data: siteSpaces } = await admin.api.orgs.listSiteSpaces(org.id, site.id);
    const { data: extra } = await admin.api.orgs.createSpace(org.id, { title: 'Elsewhere' });
    await admin.api.orgs.addSpaceToSite(org.id, site.id, { spaceId: extra.id } as never);
    await admin.api.orgs.deleteSiteSpaceById(org.id, site.id, siteSpaces.items[0]!.id);
    await expectStatus(reader.spaces.getSpaceById(guide.id), 404);
  });

  test('share-link and visitor-auth sites grant their admitted visitors, until the link or the key changes', async () => {
    const { admin, org, guide, site } = await siteWithEditor(SiteVisibility.ShareLink);
    const visitor = await t.user('Sam Shared');
    const { data: link } = await admin.api.orgs.createSiteShareLink(org.id, site.id, { name: 'Partners' });
    const shared = t.client(await contentToken(visitor, link.urls.published!));
    assert.equal((await shared.spaces.listPages(guide.id)).status, 200);
    await admin.api.orgs.updateSiteShareLinkById(org.id, site.id, link.id, { active: false });
    await expectStatus(shared.spaces.listPages(guide.id), 404);

    await admin.api.orgs.updateSiteById(org.id, site.id, { visibility: SiteVisibility.VisitorAuth });
    const key = (await admin.api.orgs.getSitePublishingAuthById(org.id, site.id)).data.privateKey;
    const expires = Math.floor(Date.now() / 1000) + 600;
    const jwtToken = await new SignJWT({}).setProtectedHeader({ alg: 'HS256' }).setExpirationTime(expires).sign(new TextEncoder().encode(key));
    const { data } = await visitor.api.urls.resolvePublishedContentByUrl({ url: `${t.url}/${org.id}/${site.basename}/`, visitor: { jwtToken } });
    assert.ok('apiToken' in data);
    const admitted = t.client(data.apiToken);
    assert.equal((await admitted.spaces.listPages(guide.id)).status, 200);
    // It never outlives the visitor's JWT.
    const row = await t.server.services.db.selectFrom('api_tokens').select('expires_at').where('scope_space_id', '=', guide.id).where('scope_site_visibility', '=', 'visitor-auth').executeTakeFirstOrThrow();
    assert.equal(row.expires_at?.getTime(), expires * 1000);
    // A new site key ends it.
    await admin.api.orgs.regenerateSitePublishingAuthById(org.id, site.id);
    await expectStatus(admitted.spaces.listPages(guide.id), 404);
  });

  test('are not the user\'s own tokens: not listed, not counted against the limit', async () => {
    const { editor, guide, url } = await siteWithEditor();
    const before = await raw(editor.token, 'GET', '/user/tokens');
    assert.equal(before.status, 200);
    assert.equal((await t.client(await contentToken(editor, url)).spaces.listPages(guide.id)).status, 200);
    const listed = await raw(editor.token, 'GET', '/user/tokens');
    assert.deepEqual(listed.body, before.body, 'the list is what it was');
    assert.equal(listed.body.count, 1);
    // The user's own tokens up to the limit can still be created, the content token notwithstanding.
    for (let i = 1; i < MAX_LIVE_TOKENS; i++) assert.equal((await raw(editor.token, 'POST', '/user/tokens', { name: `own ${i}` })).status, 201);
    assert.equal((await raw(editor.token, 'POST', '/user/tokens', { name: 'one too many' })).status, 409);
  });

  test('stops working when the token it was derived from is revoked', async () => {
    const { org, guide, url } = await siteWithEditor();
    const reviewer = await factories.newMember(t, org.id, 'read', 'Rita Reader');
    const created = await raw(reviewer.token, 'POST', '/user/tokens', { name: 'site front-end' });
    assert.equal(created.status, 201);
    const frontEnd = t.client(created.body.token);
    const reader = t.client(await contentToken({ api: frontEnd }, url));
    assert.equal((await reader.spaces.listPages(guide.id)).status, 200);
    assert.equal((await raw(reviewer.token, 'DELETE', `/user/tokens/${created.body.id}`)).status, 204);
    await expectStatus(reader.spaces.listPages(guide.id), 401);
    // The owner's other tokens are untouched.
    assert.equal((await reviewer.api.spaces.listPages(guide.id)).status, 200);
  });
});
