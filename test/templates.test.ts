import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { addMember, mergeChanges, openChangeRequest, orgWithSpace } from './support/factories.ts';
import { expectStatus, startTestServer, type TestServer, type TestUser } from './support/server.ts';

let t: TestServer;
before(async () => {
  t = await startTestServer();
});
after(async () => {
  await t?.close();
});

type Tree = { id: string; title: string; path: string; pages?: Tree[] };

async function pages(user: TestUser, spaceId: string): Promise<Tree[]> {
  return (await user.api.spaces.listPages(spaceId)).data.pages as Tree[];
}

async function markdown(user: TestUser, spaceId: string, pageId: string): Promise<string> {
  const { data } = await user.api.spaces.getPageById(spaceId, pageId, { format: 'markdown', 'format.markdown.refs': 'stable' });
  return (data as { markdown: string }).markdown;
}

const outline = (tree: Tree[]): unknown[] => tree.map((p) => (p.pages?.length ? [p.title, outline(p.pages)] : p.title));

/** A space whose content holds one PNG file; answers its id. */
async function spaceWithLogo(user: TestUser, spaceId: string): Promise<string> {
  const png = Buffer.from('89504e470d0a1a0a0000000d49484452000000010000000108060000001f15c4890000000d4944415478da63f8cfc0f01f0005000201a5b3a1f40000000049454e44ae426082', 'hex');
  await mergeChanges(user, spaceId, [{ operation: 'insert_files', files: [{ name: 'logo.png', contentType: 'image/png', base64: png.toString('base64') }] }], { subject: 'Logo' });
  const { data: files } = await user.api.spaces.listFiles(spaceId);
  return files.items[0]!.id;
}

describe('templates', () => {
  test('getting-started: nested pages merged into the space, linking to each other', async () => {
    const { admin: ann, space } = await orgWithSpace(t);
    const res = await ann.api.spaces.applyTemplateToSpace(space.id, { id: 'getting-started' });
    assert.equal(res.status, 201);
    const tree = await pages(ann, space.id);
    assert.deepEqual(outline(tree), [['Getting started', ['Installation', 'Quick start', 'Next steps']], 'FAQ']);
    assert.deepEqual(tree[0]!.pages!.map((p) => p.path), ['getting-started/installation', 'getting-started/quick-start', 'getting-started/next-steps']);
    // Links between the template's pages point at the pages created.
    const intro = await markdown(ann, space.id, tree[0]!.id);
    assert.ok(intro.includes(`](/pages/${tree[0]!.pages![0]!.id})`), intro);
    assert.match(await markdown(ann, space.id, tree[0]!.pages![0]!.id), /npm install/);
    // Applied through a change request that is merged.
    const { data: merged } = await ann.api.spaces.listChangeRequestsForSpace(space.id, { status: 'merged' as never });
    assert.equal(merged.items.length, 1);
    assert.match(merged.items[0]!.subject, /Getting started/);
    const { data: after } = await ann.api.spaces.getSpaceById(space.id);
    assert.equal(after.revision, merged.items[0]!.revisionMerged);
  });

  test('api-reference and changelog land after existing pages', async () => {
    const { admin: ann, space } = await orgWithSpace(t);
    await ann.api.spaces.applyTemplateToSpace(space.id, { id: 'api-reference' });
    await ann.api.spaces.applyTemplateToSpace(space.id, { id: 'changelog' });
    const tree = await pages(ann, space.id);
    assert.deepEqual(outline(tree), ['API overview', 'Authentication', ['Endpoints', ['List items', 'Create an item']], 'Errors', 'Changelog']);
    assert.match(await markdown(ann, space.id, tree[1]!.id), /Authorization: Bearer/);
    const log = await markdown(ann, space.id, tree[4]!.id);
    const today = new Date().toISOString().slice(0, 10);
    assert.ok(log.includes(`## ${today}`), log);
    assert.equal(log.match(/^## \d{4}-\d{2}-\d{2}$/gm)?.length, 2);
    // Applying a template again adds its pages once more, with unique paths.
    await ann.api.spaces.applyTemplateToSpace(space.id, { id: 'changelog' });
    assert.deepEqual((await pages(ann, space.id)).slice(4).map((p) => p.path), ['changelog', 'changelog-2']);
  });

  test('into a change request: the space is unchanged until the merge', async () => {
    const { admin: ann, space } = await orgWithSpace(t);
    const cr = await openChangeRequest(ann, space.id, 'Docs');
    const res = await ann.api.spaces.applyTemplateToSpace(space.id, { id: 'api-reference', changeRequestId: cr.id });
    assert.equal(res.status, 201);
    assert.deepEqual(await pages(ann, space.id), []);
    const { data: inCr } = await ann.api.spaces.listPagesInChangeRequest(space.id, cr.id);
    assert.deepEqual(inCr.pages.map((p) => p.title), ['API overview', 'Authentication', 'Endpoints', 'Errors']);
    // By number too.
    await ann.api.spaces.applyTemplateToSpace(space.id, { id: 'changelog', changeRequestId: String(cr.number) });
    await ann.api.spaces.mergeChangeRequest(space.id, cr.id);
    assert.deepEqual((await pages(ann, space.id)).map((p) => p.title), ['API overview', 'Authentication', 'Endpoints', 'Errors', 'Changelog']);
    // A merged change request takes no more content.
    const refused = await t.request('POST', `/v1/spaces/${space.id}/content/template`, { token: ann.token, body: { id: 'changelog', changeRequestId: cr.id } });
    assert.equal(refused.status, 400);
    const missing = await t.request('POST', `/v1/spaces/${space.id}/content/template`, { token: ann.token, body: { id: 'changelog', changeRequestId: 'nope' } });
    assert.equal(missing.status, 404);
  });

  test('contentRefs: the given file is placed where the template references it', async () => {
    const { admin: ann, space } = await orgWithSpace(t);
    const fileId = await spaceWithLogo(ann, space.id);
    await ann.api.spaces.applyTemplateToSpace(space.id, { id: 'getting-started', params: { contentRefs: { logo: { kind: 'file', file: fileId } } } });
    const tree = await pages(ann, space.id);
    const intro = await markdown(ann, space.id, tree[0]!.id);
    assert.ok(intro.replace(/^---\n[\s\S]*?\n---\n\n/, '').startsWith(`![logo](/files/${fileId})`), intro);
    // The document form references the file.
    const { data: doc } = await ann.api.spaces.getPageById(space.id, tree[0]!.id, { format: 'document' });
    assert.ok(JSON.stringify(doc).includes(fileId));
    // Without the ref, no image.
    await ann.api.spaces.applyTemplateToSpace(space.id, { id: 'changelog', params: { contentRefs: { logo: { kind: 'file', file: fileId, space: space.id } } } });
    assert.match(await markdown(ann, space.id, (await pages(ann, space.id)).at(-1)!.id), new RegExp(`^(?:---\\n[\\s\\S]*?\\n---\\n\\n)?!\\[logo\\]\\(/files/${fileId}\\)`));
  });

  test('bad requests: unknown template, unknown or missing files, other kinds; nothing is written', async () => {
    const { admin: ann, space } = await orgWithSpace(t);
    const fileId = await spaceWithLogo(ann, space.id);
    const before = (await ann.api.spaces.getSpaceById(space.id)).data.revision;
    const post = (body: unknown) => t.request('POST', `/v1/spaces/${space.id}/content/template`, { token: ann.token, body });

    const unknown = await post({ id: 'brochure' });
    assert.equal(unknown.status, 400);
    assert.match(unknown.body.error.message, /getting-started, api-reference, changelog/);
    await expectStatus(ann.api.spaces.applyTemplateToSpace(space.id, { id: 'brochure' }), 400);

    const missingFile = await post({ id: 'getting-started', params: { contentRefs: { logo: { kind: 'file', file: 'nope' } } } });
    assert.equal(missingFile.status, 400);
    assert.match(missingFile.body.error.message, /contentRefs\.logo: file nope not found/);
    const unknownName = await post({ id: 'getting-started', params: { contentRefs: { banner: { kind: 'file', file: fileId } } } });
    assert.equal(unknownName.status, 400);
    assert.match(unknownName.body.error.message, /banner.*places: logo/);
    const pageRef = await post({ id: 'getting-started', params: { contentRefs: { logo: { kind: 'page', page: 'x' } } } });
    assert.equal(pageRef.status, 400);
    const otherSpace = await post({ id: 'getting-started', params: { contentRefs: { logo: { kind: 'file', file: fileId, space: 'elsewhere' } } } });
    assert.equal(otherSpace.status, 400);
    assert.equal((await post({})).status, 400);
    assert.equal((await post({ id: 42 })).status, 400);

    assert.equal((await ann.api.spaces.getSpaceById(space.id)).data.revision, before);
    // No change request was left behind.
    for (const status of ['open', 'archived'] as const) {
      assert.deepEqual((await ann.api.spaces.listChangeRequestsForSpace(space.id, { status: status as never })).data.items, []);
    }
  });

  test('permissions: readers get 403, outsiders 404, a locked space 403, editors apply into change requests', async () => {
    const { admin: ann, org, space } = await orgWithSpace(t);
    const bob = await t.user('Bob');
    const eve = await t.user('Eve');
    const cat = await t.user('Cat');
    await addMember(t, org.id, bob, 'read');
    await addMember(t, org.id, cat, 'edit');
    const post = (user: TestUser, body: unknown) => t.request('POST', `/v1/spaces/${space.id}/content/template`, { token: user.token, body });

    assert.equal((await post(bob, { id: 'changelog' })).status, 403);
    assert.equal((await post(eve, { id: 'changelog' })).status, 404);
    assert.equal((await t.request('POST', `/v1/spaces/${space.id}/content/template`, { body: { id: 'changelog' } })).status, 401);
    // Changing the space's content is a merge: an editor applies into a change request instead.
    assert.equal((await post(cat, { id: 'changelog' })).status, 403);
    const cr = await openChangeRequest(cat, space.id, 'Changelog');
    assert.equal((await post(cat, { id: 'changelog', changeRequestId: cr.id })).status, 201);
    assert.equal((await post(bob, { id: 'changelog', changeRequestId: cr.id })).status, 403);

    await ann.api.spaces.updateSpaceById(space.id, { editMode: 'locked' as never });
    assert.equal((await post(ann, { id: 'changelog' })).status, 403);
    assert.equal((await post(ann, { id: 'changelog', changeRequestId: cr.id })).status, 403);
    assert.deepEqual(await pages(ann, space.id), []);
  });
});

describe('change requests created from a template', () => {
  test('the template lands in the new change request; an unknown template creates nothing', async () => {
    const { admin: ann, space } = await orgWithSpace(t);
    const { data: cr } = await ann.api.spaces.createChangeRequest(space.id, { subject: 'Start', template: { id: 'changelog' } } as never);
    assert.notEqual(cr.revision, cr.revisionInitial);
    const { data: head } = await ann.api.spaces.listPagesInChangeRequest(space.id, cr.id);
    assert.deepEqual(head.pages.map((p) => p.title), ['Changelog']);
    assert.deepEqual(await pages(ann, space.id), []);

    const res = await t.request('POST', `/v1/spaces/${space.id}/change-requests`, { token: ann.token, body: { subject: 'Bad', template: { id: 'nope' } } });
    assert.equal(res.status, 400);
    assert.match(res.body.error.message, /template/);
    const { data: all } = await ann.api.spaces.listChangeRequestsForSpace(space.id);
    assert.deepEqual(all.items.map((c) => c.id), [cr.id]);
  });
});
