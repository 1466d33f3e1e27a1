import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
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

/** An organization with a published site over one space ("Guide"), another space, and an editor. */
async function siteWithEditor() {
  const { admin, org } = await factories.newOrg(t, 'Content Token Inc');
  const editor = await factories.newMember(t, org.id, 'edit', 'Edith Editor');
  const guide = await newSpace(admin, org.id, 'Guide');
  const other = await newSpace(admin, org.id, 'Internal notes');
  await publishPages(admin, guide.id, [{ operation: 'insert_page', title: 'Install', document: { markdown: 'Install the zebra tool.\n' } }]);
  const { data: site } = await admin.api.orgs.createSite(org.id, { title: 'Docs', spaces: [guide.id] });
  await admin.api.orgs.publishSite(org.id, site.id);
  return { admin, org, editor, guide, other, url: `${t.url}/${org.id}/${site.basename}/install` };
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

  test('stops working when its owner loses access to the space', async () => {
    const { admin, org, editor, guide, url } = await siteWithEditor();
    const reader = t.client(await contentToken(editor, url));
    assert.equal((await reader.spaces.listPages(guide.id)).status, 200);
    await admin.api.orgs.removeMemberFromOrganizationById(org.id, editor.id);
    await expectStatus(reader.spaces.listPages(guide.id), 404);
    await expectStatus(reader.spaces.getSpaceById(guide.id), 404);
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
