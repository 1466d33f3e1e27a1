import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, test } from 'node:test';
import { deflateSync } from 'node:zlib';
import { ContentEditor } from '../src/content/model.ts';
import { json } from '../src/platform/db/database.ts';
import { newId } from '../src/platform/ids.ts';
import { type Change, editChangeRequest, mergeChanges, newSpace, openChangeRequest, orgWithSpace } from './support/factories.ts';
import { expectStatus, startTestServer, type TestServer, type TestUser } from './support/server.ts';

let t: TestServer;
before(async () => {
  t = await startTestServer();
});
after(async () => {
  await t?.close();
});

/** The page fields these tests read (the client's page type is a union of page kinds). */
type PageView = {
  id: string;
  title: string;
  slug: string;
  path: string;
  description?: string;
  markdown?: string;
  document?: { object: string; nodes: { type: string; nodes?: unknown[] }[] };
  git?: { oid: string; path: string };
  pages: PageView[];
  urls: { app: string };
};
type FileView = { id: string; name: string; contentType: string; downloadURL: string; size: number; dimensions?: { width: number; height: number }; git?: { path: string } };

const md = (markdown: string) => ({ markdown });
const insertPage = (title: string) => ({ operation: 'insert_page', title, document: { markdown: `${title}.\n` } });
const c = (change: Record<string, unknown>) => change as unknown as Change;

/** Raw edit, for answers the client would throw on. */
function rawEdit(user: TestUser, spaceId: string, crId: string, body: unknown) {
  return t.request('POST', `/v1/spaces/${spaceId}/change-requests/${crId}/content`, { token: user.token, body });
}

async function pagesOf(user: TestUser, spaceId: string): Promise<PageView[]> {
  return (await user.api.spaces.listPages(spaceId)).data.pages as unknown as PageView[];
}

async function crPages(user: TestUser, spaceId: string, crId: string): Promise<PageView[]> {
  return (await user.api.spaces.listPagesInChangeRequest(spaceId, crId)).data.pages as unknown as PageView[];
}

function flatten(pages: PageView[]): PageView[] {
  return pages.flatMap((p) => [p, ...flatten(p.pages)]);
}

function byTitle(pages: PageView[], title: string): PageView {
  const found = flatten(pages).find((p) => p.title === title);
  assert.ok(found, `page "${title}" in ${JSON.stringify(flatten(pages).map((p) => p.title))}`);
  return found;
}

/** Titles as a nested outline: [title, [children…]]. */
function outline(pages: PageView[]): unknown[] {
  return pages.map((p) => (p.pages.length ? [p.title, outline(p.pages)] : p.title));
}

async function crPageMarkdown(user: TestUser, spaceId: string, crId: string, pageId: string): Promise<string> {
  const { data } = await user.api.spaces.getPageInChangeRequestById(spaceId, crId, pageId, { format: 'markdown' });
  return (data as unknown as PageView).markdown!;
}

/** A valid PNG of the given size (one grey pixel row repeated), built without an image library. */
function png(width: number, height: number): Buffer {
  const crcTable = Array.from({ length: 256 }, (_, n) => {
    let c = n;
    for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
    return c >>> 0;
  });
  const crc = (buf: Buffer) => {
    let c = 0xffffffff;
    for (const b of buf) c = crcTable[(c ^ b) & 0xff]! ^ (c >>> 8);
    return (c ^ 0xffffffff) >>> 0;
  };
  const chunk = (type: string, data: Buffer) => {
    const len = Buffer.alloc(4);
    len.writeUInt32BE(data.length);
    const body = Buffer.concat([Buffer.from(type, 'ascii'), data]);
    const sum = Buffer.alloc(4);
    sum.writeUInt32BE(crc(body));
    return Buffer.concat([len, body, sum]);
  };
  const ihdr = Buffer.alloc(13);
  ihdr.writeUInt32BE(width, 0);
  ihdr.writeUInt32BE(height, 4);
  ihdr[8] = 8; // bit depth
  ihdr[9] = 0; // greyscale
  const raw = Buffer.concat(Array.from({ length: height }, () => Buffer.concat([Buffer.from([0]), Buffer.alloc(width, 0x80)])));
  return Buffer.concat([
    Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
    chunk('IHDR', ihdr),
    chunk('IDAT', deflateSync(raw)),
    chunk('IEND', Buffer.alloc(0)),
  ]);
}

/**
 * Sets the space's variables. There is no official operation for variables yet, so this writes the
 * `v` key of the content tree directly and makes the result the space's revision.
 */
async function setSpaceVariables(spaceId: string, variables: Record<string, string>) {
  const db = t.server.services.db;
  const space = await db.selectFrom('spaces').selectAll().where('id', '=', spaceId).executeTakeFirstOrThrow();
  const current = await db.selectFrom('revisions').selectAll().where('id', '=', space.revision_id).executeTakeFirstOrThrow();
  const editor = new ContentEditor(db, current.root);
  editor.setRaw('v', variables);
  const root = await editor.commit(db);
  const id = newId();
  await db
    .insertInto('revisions')
    .values({ id, space_id: space.id, organization_id: space.organization_id, parents: json([current.id]), type: 'edits', root, created_by: null, created_at: new Date(), message: null })
    .execute();
  await db.updateTable('spaces').set({ revision_id: id }).where('id', '=', space.id).execute();
  return id;
}

/** A local HTTP server answering fixed bytes per path. */
async function fileServer(files: Record<string, { type: string; body: Buffer; chunked?: boolean }>): Promise<{ url: string; server: Server; hits: () => number }> {
  let hits = 0;
  const server = createServer((req, res) => {
    hits++;
    if (req.url === '/redirect') {
      res.writeHead(302, { location: '/logo.png' }).end();
      return;
    }
    const file = files[req.url ?? ''];
    if (!file) {
      res.writeHead(404).end('nope');
      return;
    }
    if (file.chunked) {
      // No length announced: the reader finds out the size as the bytes arrive.
      res.writeHead(200, { 'content-type': file.type });
      for (let i = 0; i < file.body.length; i += 1024 * 1024) res.write(file.body.subarray(i, i + 1024 * 1024));
      res.end();
      return;
    }
    res.writeHead(200, { 'content-type': file.type, 'content-length': file.body.length }).end(file.body);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, server, hits: () => hits };
}

const TREE: Change[] = [
  c({ operation: 'insert_page', ref: 'guide', title: 'Guide', document: md('Welcome to the guide.\n') }),
  c({ operation: 'insert_page', into: 'guide', title: 'Install', document: md('Run `npm ci`.\n') }),
  c({ operation: 'insert_page', into: 'guide', ref: 'config', title: 'Config', document: md('Settings.\n') }),
  c({ operation: 'insert_page', into: 'config', title: 'Advanced', document: md('Deep settings.\n') }),
  c({ operation: 'insert_page', title: 'FAQ', document: md('Questions.\n') }),
];

describe('content reads', () => {
  test('the space content: revision, pages tree, git paths, metadata=false', async () => {
    const { admin: ann, space } = await orgWithSpace(t);
    const initial = await ann.api.spaces.getCurrentRevision(space.id);
    assert.equal(initial.data.id, space.revision);
    assert.deepEqual(initial.data.pages, []);
    assert.deepEqual(initial.data.files, []);
    assert.deepEqual(initial.data.parents, []);

    const merged = await mergeChanges(ann, space.id, TREE);
    const { data: revision } = await ann.api.spaces.getCurrentRevision(space.id);
    assert.equal(revision.object, 'revision');
    assert.equal(revision.id, merged);
    assert.equal(revision.type, 'merge');
    assert.equal(revision.parents.length, 2);
    assert.equal(revision.parents[0], space.revision);
    assert.deepEqual(revision.variables, {});
    assert.deepEqual(revision.files, []);
    assert.match(revision.urls.app, new RegExp(`/s/${space.id}/revisions/${merged}$`));
    assert.ok(!Number.isNaN(Date.parse(revision.createdAt)));
    const pages = revision.pages as unknown as PageView[];
    assert.deepEqual(outline(pages), [['Guide', ['Install', ['Config', ['Advanced']]]], 'FAQ']);
    assert.deepEqual(
      flatten(pages).map((p) => [p.title, p.path, p.git?.path]),
      [
        ['Guide', 'guide', 'guide/README.md'],
        ['Install', 'guide/install', 'guide/install.md'],
        ['Config', 'guide/config', 'guide/config/README.md'],
        ['Advanced', 'guide/config/advanced', 'guide/config/advanced.md'],
        ['FAQ', 'faq', 'faq.md'],
      ],
    );
    for (const p of flatten(pages)) {
      assert.match(p.git!.oid, /^[0-9a-f]{40}$/);
      assert.ok(p.urls.app.endsWith(`/${p.path}`), p.urls.app);
    }
    // The same text has the same git blob id in every read.
    assert.equal(byTitle(pages, 'Install').markdown, 'Run `npm ci`.\n');

    const { data: bare } = await ann.api.spaces.getCurrentRevision(space.id, { metadata: false });
    assert.equal(JSON.stringify(bare).includes('"git"'), false);
    const listed = await pagesOf(ann, space.id);
    assert.deepEqual(outline(listed), outline(pages));
    assert.deepEqual(flatten(listed).map((p) => p.git?.path), flatten(pages).map((p) => p.git?.path));
    const { data: bareList } = await ann.api.spaces.listPages(space.id, { metadata: false });
    assert.equal(JSON.stringify(bareList).includes('"git"'), false);
  });

  test('a page by id and by path, in markdown and as a document', async () => {
    const { admin: ann, space } = await orgWithSpace(t);
    await mergeChanges(ann, space.id, [
      ...TREE,
      c({ operation: 'insert_page', title: 'Rich', document: md('# Ignored title line\n\nA **bold** start.\n\n## Part\n\n- one\n- two\n\n```js\nx()\n```\n\n> quoted\n') }),
    ]);
    const pages = await pagesOf(ann, space.id);
    const guide = byTitle(pages, 'Guide');
    const advanced = byTitle(pages, 'Advanced');

    const { data: byId } = await ann.api.spaces.getPageById(space.id, advanced.id, { format: 'markdown' });
    const page = byId as unknown as PageView;
    assert.equal(page.id, advanced.id);
    assert.equal(page.title, 'Advanced');
    assert.equal(page.path, 'guide/config/advanced');
    assert.equal(page.markdown, 'Deep settings.\n');
    assert.equal(page.document, undefined);
    assert.equal(page.git?.path, 'guide/config/advanced.md');

    // A page read carries its children as a tree, with their paths.
    const { data: guideRead } = await ann.api.spaces.getPageById(space.id, guide.id, { format: 'markdown' });
    const g = guideRead as unknown as PageView;
    assert.deepEqual(outline(g.pages), ['Install', ['Config', ['Advanced']]]);
    assert.deepEqual(flatten(g.pages).map((p) => p.path), ['guide/install', 'guide/config', 'guide/config/advanced']);
    assert.equal(g.git?.path, 'guide/README.md');

    const { data: asDoc } = await ann.api.spaces.getPageById(space.id, byTitle(pages, 'Ignored title line').id, { format: 'document' });
    const doc = (asDoc as unknown as PageView).document!;
    assert.equal((asDoc as unknown as PageView).markdown, undefined);
    assert.equal(doc.object, 'document');
    assert.deepEqual(doc.nodes.map((n) => n.type), ['paragraph', 'heading-1', 'list-unordered', 'code', 'blockquote']);
    // Without a format the page comes as a document (the official default).
    const { data: dflt } = await ann.api.spaces.getPageById(space.id, advanced.id);
    assert.equal((dflt as unknown as PageView).document?.nodes[0]?.type, 'paragraph');
    // The git blob id does not depend on the format asked for.
    const { data: docGit } = await ann.api.spaces.getPageById(space.id, advanced.id, { format: 'document' });
    assert.equal((docGit as unknown as PageView).git?.oid, page.git?.oid);

    const { data: byPath } = await ann.api.spaces.getPageByPath(space.id, 'guide/config/advanced', { format: 'markdown' });
    assert.equal(byPath.id, advanced.id);
    assert.equal((byPath as unknown as PageView).markdown, 'Deep settings.\n');
    assert.equal((await ann.api.spaces.getPageByPath(space.id, 'guide/config')).data.id, byTitle(pages, 'Config').id);
    assert.equal((await ann.api.spaces.getPageByPath(space.id, 'faq')).data.id, byTitle(pages, 'FAQ').id);
    const { data: noGit } = await ann.api.spaces.getPageByPath(space.id, 'guide', { metadata: false });
    assert.equal(JSON.stringify(noGit).includes('"git"'), false);

    // Paths are matched slug by slug: a trailing slash or an encoded one still finds the page; a
    // literal '%' is just an unknown slug.
    for (const path of ['guide/config/', 'guide%2Fconfig']) {
      const res = await t.request('GET', `/v1/spaces/${space.id}/content/path/${path}`, { token: ann.token });
      assert.equal(res.body.id, byTitle(pages, 'Config').id, path);
    }
    for (const path of ['100%25', 'guide/%25zz', 'Guide']) {
      const res = await t.request('GET', `/v1/spaces/${space.id}/content/path/${path}`, { token: ann.token });
      assert.equal(res.status, 404, path);
    }
    await expectStatus(ann.api.spaces.getPageByPath(space.id, 'guide/nope'), 404);
    await expectStatus(ann.api.spaces.getPageByPath(space.id, 'advanced'), 404);
    await expectStatus(ann.api.spaces.getPageByPath(space.id, 'guide/config/advanced/deeper'), 404);
    await expectStatus(ann.api.spaces.getPageById(space.id, 'no-such-page'), 404);
    // Unknown query values are refused, not ignored.
    const bad = await t.request('GET', `/v1/spaces/${space.id}/content/page/${advanced.id}?format=html`, { token: ann.token });
    assert.equal(bad.status, 400);
    assert.match(bad.body.error.message, /format/);
  });

  test('evaluated=true resolves space variables; false leaves expressions', async () => {
    const { admin: ann, space } = await orgWithSpace(t);
    await mergeChanges(ann, space.id, [
      c({ operation: 'insert_page', title: 'Vars', document: md('Hello <code class="expression">space.vars.product</code>, see <code class="expression">space.vars.missing</code>.\n') }),
    ]);
    await setSpaceVariables(space.id, { product: 'Folio' });
    const { data: revision } = await ann.api.spaces.getCurrentRevision(space.id);
    assert.deepEqual(revision.variables, { product: 'Folio' });
    assert.equal(revision.type, 'edits');
    const id = (await pagesOf(ann, space.id))[0]!.id;

    const raw = (await ann.api.spaces.getPageById(space.id, id, { format: 'markdown' })).data as unknown as PageView;
    assert.equal(raw.markdown, 'Hello <code class="expression">space.vars.product</code>, see <code class="expression">space.vars.missing</code>.\n');
    const notEvaluated = (await ann.api.spaces.getPageById(space.id, id, { format: 'markdown', evaluated: false })).data as unknown as PageView;
    assert.equal(notEvaluated.markdown, raw.markdown);
    const evaluated = (await ann.api.spaces.getPageById(space.id, id, { format: 'markdown', evaluated: true })).data as unknown as PageView;
    // Unknown variables stay as they were.
    assert.equal(evaluated.markdown, 'Hello Folio, see <code class="expression">space.vars.missing</code>.\n');

    const docRaw = (await ann.api.spaces.getPageById(space.id, id, { format: 'document' })).data as unknown as PageView;
    assert.match(JSON.stringify(docRaw.document), /"type":"expression".*"expression":"space.vars.product"/);
    const docEval = (await ann.api.spaces.getPageById(space.id, id, { format: 'document', evaluated: true })).data as unknown as PageView;
    assert.match(JSON.stringify(docEval.document), /Hello Folio, see /);
    assert.doesNotMatch(JSON.stringify(docEval.document), /space.vars.product/);
    // By path too.
    const byPath = (await ann.api.spaces.getPageByPath(space.id, 'vars', { format: 'markdown', evaluated: true })).data as unknown as PageView;
    assert.equal(byPath.markdown, evaluated.markdown);
  });

  test('revisions by id: each revision keeps its own content', async () => {
    const { admin: ann, space } = await orgWithSpace(t);
    const first = await mergeChanges(ann, space.id, [c({ operation: 'insert_page', title: 'One', document: md('First text.\n') })]);
    const pageId = (await pagesOf(ann, space.id))[0]!.id;
    const second = await mergeChanges(ann, space.id, [
      c({ operation: 'update_page', page: pageId, document: md('Second text.\n') }),
      c({ operation: 'insert_page', title: 'Two', document: md('More.\n') }),
    ]);

    const { data: r0 } = await ann.api.spaces.getRevisionById(space.id, space.revision);
    assert.deepEqual(r0.pages, []);
    const { data: r1 } = await ann.api.spaces.getRevisionById(space.id, first);
    assert.equal(r1.id, first);
    assert.equal(r1.type, 'merge');
    assert.deepEqual((r1.pages as unknown as PageView[]).map((p) => p.title), ['One']);
    const { data: r2 } = await ann.api.spaces.getRevisionById(space.id, second);
    assert.deepEqual((r2.pages as unknown as PageView[]).map((p) => p.title), ['One', 'Two']);
    assert.equal(r2.parents[0], first);

    const { data: p1 } = await ann.api.spaces.getPageInRevisionById(space.id, first, pageId, { format: 'markdown' });
    assert.equal((p1 as unknown as PageView).markdown, 'First text.\n');
    const { data: p2 } = await ann.api.spaces.getPageInRevisionById(space.id, second, pageId, { format: 'markdown' });
    assert.equal((p2 as unknown as PageView).markdown, 'Second text.\n');
    const { data: byPath } = await ann.api.spaces.getPageInRevisionByPath(space.id, first, 'one', { format: 'markdown' });
    assert.equal((byPath as unknown as PageView).markdown, 'First text.\n');
    await expectStatus(ann.api.spaces.getPageInRevisionByPath(space.id, first, 'two'), 404);
    await expectStatus(ann.api.spaces.getPageInRevisionById(space.id, space.revision, pageId), 404);
    const { data: listed } = await ann.api.spaces.listPagesInRevisionById(space.id, first);
    assert.deepEqual((listed.pages as unknown as PageView[]).map((p) => p.title), ['One']);
    const { data: noFiles } = await ann.api.spaces.listFilesInRevisionById(space.id, first);
    assert.deepEqual(noFiles.items, []);
    assert.equal(noFiles.count, 0);

    await expectStatus(ann.api.spaces.getRevisionById(space.id, 'no-such-revision'), 404);
    // A revision of another space is not found through this one.
    const { data: other } = await ann.api.orgs.createSpace((await ann.api.spaces.getSpaceById(space.id)).data.organization, { title: 'Other' });
    await expectStatus(ann.api.spaces.getRevisionById(other.id, first), 404);
    await expectStatus(ann.api.spaces.listPagesInRevisionById(other.id, first), 404);
  });

  test("a change request's content: edits, then update from the space", async () => {
    const { admin: ann, space } = await orgWithSpace(t);
    await mergeChanges(ann, space.id, TREE);
    const faq = byTitle(await pagesOf(ann, space.id), 'FAQ');
    const cr = await openChangeRequest(ann, space.id);
    const { data: start } = await ann.api.spaces.getRevisionOfChangeRequestById(space.id, cr.id);
    assert.equal(start.id, (await ann.api.spaces.getSpaceById(space.id)).data.revision);

    const edited = await editChangeRequest(ann, space.id, cr.id, [
      c({ operation: 'update_page', page: faq.id, document: md('Answers.\n') }),
      c({ operation: 'insert_page', into: faq.id, title: 'Billing', document: md('Money.\n') }),
    ]);
    const { data: rev } = await ann.api.spaces.getRevisionOfChangeRequestById(space.id, cr.id);
    assert.equal(rev.id, edited.revision);
    assert.equal(rev.type, 'edits');
    assert.deepEqual(rev.parents, [start.id]);
    assert.deepEqual(outline(rev.pages as unknown as PageView[]), [['Guide', ['Install', ['Config', ['Advanced']]]], ['FAQ', ['Billing']]]);
    assert.equal(byTitle(rev.pages as unknown as PageView[], 'FAQ').git?.path, 'faq/README.md');
    // Read by number as well as by id.
    assert.equal((await ann.api.spaces.getRevisionOfChangeRequestById(space.id, String(cr.number))).data.id, edited.revision);

    // The change request sees its edits; the space does not.
    assert.equal(await crPageMarkdown(ann, space.id, cr.id, faq.id), 'Answers.\n');
    const live = (await ann.api.spaces.getPageById(space.id, faq.id, { format: 'markdown' })).data as unknown as PageView;
    assert.equal(live.markdown, 'Questions.\n');
    assert.equal(live.git?.path, 'faq.md');
    const billing = (await ann.api.spaces.getPageInChangeRequestByPath(space.id, cr.id, 'faq/billing', { format: 'markdown' })).data as unknown as PageView;
    assert.equal(billing.markdown, 'Money.\n');
    await expectStatus(ann.api.spaces.getPageByPath(space.id, 'faq/billing'), 404);
    const crList = await crPages(ann, space.id, cr.id);
    assert.deepEqual(flatten(crList).map((p) => p.path).sort(), ['faq', 'faq/billing', 'guide', 'guide/config', 'guide/config/advanced', 'guide/install']);
    await expectStatus(ann.api.spaces.getPageInChangeRequestById(space.id, cr.id, 'no-such-page'), 404);
    await expectStatus(ann.api.spaces.getRevisionOfChangeRequestById(space.id, 'no-such-cr'), 404);
    await expectStatus(ann.api.spaces.getRevisionOfChangeRequestById(space.id, '99'), 404);

    // Another change merges into the space; the update makes an `update` revision with two parents.
    const merged = await mergeChanges(ann, space.id, [c({ operation: 'insert_page', title: 'News', document: md('Fresh.\n') })]);
    const { data: pulled } = await ann.api.spaces.updateChangeRequest(space.id, cr.id);
    assert.equal(pulled.result, 'update');
    const { data: updated } = await ann.api.spaces.getRevisionOfChangeRequestById(space.id, cr.id);
    assert.equal(updated.id, pulled.revision);
    assert.equal(updated.type, 'update');
    assert.deepEqual([...updated.parents].sort(), [edited.revision, merged].sort());
    assert.deepEqual((updated.pages as unknown as PageView[]).map((p) => p.title), ['Guide', 'FAQ', 'News']);
    assert.equal(await crPageMarkdown(ann, space.id, cr.id, faq.id), 'Answers.\n');
  });
});

describe('files', () => {
  test('base64 files: listing, paging, reading, bytes and image dimensions', async () => {
    const { admin: ann, space } = await orgWithSpace(t);
    const image = png(3, 2);
    const text = Buffer.from('plain text\n');
    const cr = await openChangeRequest(ann, space.id);
    await editChangeRequest(ann, space.id, cr.id, [
      c({
        operation: 'insert_files',
        files: [
          { name: 'pixel.png', contentType: 'image/png', base64: image.toString('base64') },
          { name: 'notes.txt', contentType: 'text/plain', base64: text.toString('base64') },
        ],
      }),
    ]);
    const { data: all } = await ann.api.spaces.listFilesInChangeRequestById(space.id, cr.id);
    assert.equal(all.count, 2);
    assert.equal(all.next, undefined);
    const files = all.items as FileView[];
    const pixel = files.find((f) => f.name === 'pixel.png')!;
    const notes = files.find((f) => f.name === 'notes.txt')!;
    assert.deepEqual([pixel.contentType, pixel.size, pixel.dimensions], ['image/png', image.length, { width: 3, height: 2 }]);
    assert.deepEqual([notes.contentType, notes.size, notes.dimensions], ['text/plain', text.length, undefined]);
    assert.equal(notes.git?.path, '.gitbook/assets/notes.txt');

    // The bytes are served exactly, with a safe content type.
    const download = await fetch(pixel.downloadURL);
    assert.equal(download.status, 200);
    assert.equal(download.headers.get('content-type'), 'image/png');
    assert.deepEqual(Buffer.from(await download.arrayBuffer()), image);
    assert.equal(Buffer.from(await (await fetch(notes.downloadURL)).arrayBuffer()).toString(), 'plain text\n');

    // Paging, one file at a time.
    const { data: first } = await ann.api.spaces.listFilesInChangeRequestById(space.id, cr.id, { limit: 1 });
    assert.equal(first.items.length, 1);
    assert.equal(first.count, 2);
    assert.ok(first.next?.page);
    const { data: second } = await ann.api.spaces.listFilesInChangeRequestById(space.id, cr.id, { limit: 1, page: first.next!.page });
    assert.equal(second.items.length, 1);
    assert.equal(second.next, undefined);
    assert.deepEqual([first.items[0]!.id, second.items[0]!.id].sort(), files.map((f) => f.id).sort());
    const badCursor = await t.request('GET', `/v1/spaces/${space.id}/change-requests/${cr.id}/content/files?page=garbage`, { token: ann.token });
    assert.equal(badCursor.status, 400);

    const { data: one } = await ann.api.spaces.getFileInChangeRequestById(space.id, cr.id, pixel.id);
    assert.deepEqual(one, pixel);
    const { data: noGit } = await ann.api.spaces.getFileInChangeRequestById(space.id, cr.id, pixel.id, { metadata: false });
    assert.equal((noGit as FileView).git, undefined);
    await expectStatus(ann.api.spaces.getFileInChangeRequestById(space.id, cr.id, 'no-such-file'), 404);
    // Not in the space before the merge; there after it, in the revision too.
    await expectStatus(ann.api.spaces.getFileById(space.id, pixel.id), 404);
    const merged = (await ann.api.spaces.mergeChangeRequest(space.id, cr.id)).data.revision;
    assert.deepEqual((await ann.api.spaces.getFileById(space.id, pixel.id)).data, pixel);
    const { data: spaceFiles } = await ann.api.spaces.listFiles(space.id, { limit: 1 });
    assert.equal(spaceFiles.count, 2);
    assert.equal(spaceFiles.items.length, 1);
    const { data: revision } = await ann.api.spaces.getCurrentRevision(space.id);
    assert.deepEqual((revision.files as FileView[]).map((f) => f.name).sort(), ['notes.txt', 'pixel.png']);
    assert.deepEqual((await ann.api.spaces.getFileInRevisionById(space.id, merged, notes.id)).data, notes);
    assert.equal((await ann.api.spaces.listFilesInRevisionById(space.id, merged)).data.count, 2);
    await expectStatus(ann.api.spaces.getFileInRevisionById(space.id, space.revision, notes.id), 404);
  });

  test('base64 limits and malformed file entries are refused with 400, nothing applied', async () => {
    const { admin: ann, space } = await orgWithSpace(t);
    const cr = await openChangeRequest(ann, space.id);
    const file = (f: Record<string, unknown>) => ({ changes: [{ operation: 'insert_files', files: [{ name: 'f.bin', ...f }] }] });
    const cases: [string, unknown, RegExp][] = [
      ['over 1 MB', file({ contentType: 'application/octet-stream', base64: Buffer.alloc(1024 * 1024 + 1).toString('base64') }), /larger than/],
      ['no contentType', file({ base64: Buffer.from('x').toString('base64') }), /contentType/],
      ['bad base64', file({ contentType: 'text/plain', base64: '!!not base64!!' }), /base64/],
      ['no source', file({ contentType: 'text/plain' }), /url or base64/],
      ['two sources', file({ contentType: 'text/plain', base64: 'eA==', url: 'https://example.com/x' }), /url or base64/],
      ['not a URL', file({ url: 'not a url' }), /url/],
      ['ftp URL', file({ url: 'ftp://example.com/x' }), /http/],
      ['empty name', { changes: [{ operation: 'insert_files', files: [{ name: '', contentType: 'text/plain', base64: 'eA==' }] }] }, /name/],
      ['no files', { changes: [{ operation: 'insert_files', files: [] }] }, /files/],
      ['files not an array', { changes: [{ operation: 'insert_files', files: 'x' }] }, /files/],
    ];
    for (const [name, body, message] of cases) {
      const res = await rawEdit(ann, space.id, cr.id, body);
      assert.equal(res.status, 400, `${name}: ${JSON.stringify(res.body)}`);
      assert.match(res.body.error.message, message, name);
    }
    // Exactly 1 MB is accepted.
    await editChangeRequest(ann, space.id, cr.id, [c({ operation: 'insert_files', files: [{ name: 'big.bin', contentType: 'application/octet-stream', base64: Buffer.alloc(1024 * 1024, 7).toString('base64') }] })]);
    const { data } = await ann.api.spaces.listFilesInChangeRequestById(space.id, cr.id);
    assert.deepEqual(data.items.map((f) => [f.name, f.size]), [['big.bin', 1024 * 1024]]);
  });

  test('URLs on private addresses are refused by default', async () => {
    const { admin: ann, space } = await orgWithSpace(t);
    const local = await fileServer({ '/a.txt': { type: 'text/plain', body: Buffer.from('secret') } });
    try {
      const cr = await openChangeRequest(ann, space.id);
      const port = new URL(local.url).port;
      const urls = [
        `${local.url}/a.txt`,
        `http://localhost:${port}/a.txt`,
        // Other spellings of the loopback address.
        `http://2130706433:${port}/a.txt`,
        `http://127.1:${port}/a.txt`,
        `http://[::ffff:127.0.0.1]:${port}/a.txt`,
        `http://[::1]:${port}/a.txt`,
        'http://10.0.0.1/x',
        'http://169.254.169.254/latest/meta-data',
        'http://[fd00::1]/x',
        'http://[64:ff9b::a9fe:a9fe]/x',
      ];
      for (const url of urls) {
        const res = await rawEdit(ann, space.id, cr.id, { changes: [{ operation: 'insert_files', files: [{ name: 'a.txt', url }] }] });
        assert.equal(res.status, 400, url);
        assert.match(res.body.error.message, /private address/, url);
      }
      assert.equal(local.hits(), 0);
      assert.equal((await ann.api.spaces.getChangeRequestById(space.id, cr.id)).data.revision, cr.revision);
    } finally {
      local.server.closeAllConnections();
      local.server.close();
    }
  });

  test('URLs are fetched when private addresses are allowed, and refs link pages and files', async () => {
    const open = await startTestServer({ fetchAllowPrivate: true });
    const image = png(5, 4);
    const local = await fileServer({
      '/logo.png': { type: 'image/png', body: image },
      '/data.csv': { type: 'text/csv; charset=utf-8', body: Buffer.from('a,b\n1,2\n') },
      '/huge.bin': { type: 'application/octet-stream', body: Buffer.alloc(10 * 1024 * 1024 + 1) },
      '/huge-chunked.bin': { type: 'application/octet-stream', body: Buffer.alloc(10 * 1024 * 1024 + 1), chunked: true },
    });
    try {
      const ann = await open.user('Ann');
      const { data: org } = await ann.api.orgs.createOrganization({ title: 'Docs' });
      const space = await newSpace(ann, org.id, 'Handbook');
      const cr = await openChangeRequest(ann, space.id, 'Files');
      await ann.api.spaces.updateChangeRequestContent(space.id, cr.id, {
        changes: [
          // The page comes first: refs resolve whatever the order of the operations.
          c({ operation: 'insert_page', title: 'Home', document: md('![Logo](./logo)\n\nSee [the guide](./guide.md) and [data](./data).\n') }),
          c({
            operation: 'insert_files',
            files: [
              { ref: 'logo', name: 'logo.png', url: `${local.url}/logo.png` },
              { ref: 'data', name: 'data.csv', url: `${local.url}/data.csv`, contentType: 'text/x-csv' },
            ],
          }),
          c({ operation: 'insert_page', ref: 'guide', title: 'Guide', document: md('Guide text.\n') }),
        ],
      });
      const { data: listed } = await ann.api.spaces.listFilesInChangeRequestById(space.id, cr.id);
      const files = listed.items as FileView[];
      const logo = files.find((f) => f.name === 'logo.png')!;
      const data = files.find((f) => f.name === 'data.csv')!;
      assert.deepEqual([logo.contentType, logo.size, logo.dimensions], ['image/png', image.length, { width: 5, height: 4 }]);
      // A given contentType overrides the server's.
      assert.equal(data.contentType, 'text/x-csv');
      assert.deepEqual(Buffer.from(await (await fetch(logo.downloadURL)).arrayBuffer()), image);
      assert.equal(await (await fetch(data.downloadURL)).text(), 'a,b\n1,2\n');

      const { data: pagesData } = await ann.api.spaces.listPagesInChangeRequest(space.id, cr.id);
      const pages = pagesData.pages as unknown as PageView[];
      const home = byTitle(pages, 'Home');
      const guide = byTitle(pages, 'Guide');
      const { data: homeRead } = await ann.api.spaces.getPageInChangeRequestById(space.id, cr.id, home.id, { format: 'markdown', 'format.markdown.refs': 'stable' });
      assert.equal((homeRead as unknown as PageView).markdown, `![Logo](/files/${logo.id})\n\nSee [the guide](/pages/${guide.id}) and [data](/files/${data.id}).\n`);
      const { data: homeDoc } = await ann.api.spaces.getPageInChangeRequestById(space.id, cr.id, home.id, { format: 'document' });
      const text = JSON.stringify((homeDoc as unknown as PageView).document);
      assert.match(text, new RegExp(`"kind":"file","file":"${logo.id}"`));
      assert.match(text, new RegExp(`"kind":"page","page":"${guide.id}"`));

      // A URL that answers an error, or more than 10 MB, is a 400 naming it; nothing is applied.
      const head = (await ann.api.spaces.getChangeRequestById(space.id, cr.id)).data.revision;
      for (const [path, message] of [['/missing', /answered 404/], ['/huge.bin', /larger than/], ['/huge-chunked.bin', /larger than/]] as const) {
        const res = await open.request('POST', `/v1/spaces/${space.id}/change-requests/${cr.id}/content`, {
          token: ann.token,
          body: { changes: [insertPage('Not applied'), { operation: 'insert_files', files: [{ name: 'x', url: `${local.url}${path}` }] }] },
        });
        assert.equal(res.status, 400, path);
        assert.match(res.body.error.message, message, path);
        assert.match(res.body.error.message, /changes\[1\] \(insert_files\)/, path);
      }
      assert.equal((await ann.api.spaces.getChangeRequestById(space.id, cr.id)).data.revision, head);
    } finally {
      local.server.closeAllConnections();
      local.server.close();
      await open.close();
    }
  });
});

describe('editing pages', () => {
  test('update_page: title and slug, move with into/at, never under itself', async () => {
    const { admin: ann, space } = await orgWithSpace(t);
    await mergeChanges(ann, space.id, TREE);
    const cr = await openChangeRequest(ann, space.id);
    const pages = await crPages(ann, space.id, cr.id);
    const [guide, install, config, advanced, faq] = ['Guide', 'Install', 'Config', 'Advanced', 'FAQ'].map((n) => byTitle(pages, n));

    // A new title gives a new slug (so a new path); an explicit slug keeps the title.
    await editChangeRequest(ann, space.id, cr.id, [c({ operation: 'update_page', page: install!.id, title: 'Setup Steps' })]);
    let read = (await ann.api.spaces.getPageInChangeRequestById(space.id, cr.id, install!.id, { format: 'markdown' })).data as unknown as PageView;
    assert.deepEqual([read.title, read.slug, read.path, read.markdown], ['Setup Steps', 'setup-steps', 'guide/setup-steps', 'Run `npm ci`.\n']);
    await editChangeRequest(ann, space.id, cr.id, [c({ operation: 'update_page', page: install!.id, slug: 'setup' })]);
    read = (await ann.api.spaces.getPageInChangeRequestById(space.id, cr.id, install!.id)).data as unknown as PageView;
    assert.deepEqual([read.title, read.path], ['Setup Steps', 'guide/setup']);
    // A slug taken by a sibling is refused.
    const taken = await rawEdit(ann, space.id, cr.id, { changes: [{ operation: 'update_page', page: install!.id, slug: 'config' }] });
    assert.equal(taken.status, 400);
    assert.match(taken.body.error.message, /slug "config"/);
    const badSlug = await rawEdit(ann, space.id, cr.id, { changes: [{ operation: 'update_page', page: install!.id, slug: 'Not A Slug' }] });
    assert.equal(badSlug.status, 400);
    assert.match(badSlug.body.error.message, /slug/);

    // Move FAQ under Guide at index 0; then Advanced to the root at index 0.
    await editChangeRequest(ann, space.id, cr.id, [
      c({ operation: 'update_page', page: faq!.id, into: guide!.id, at: 0 }),
      c({ operation: 'update_page', page: advanced!.id, into: null, at: 0 }),
    ]);
    let tree = await crPages(ann, space.id, cr.id);
    assert.deepEqual(outline(tree), ['Advanced', ['Guide', ['FAQ', 'Setup Steps', 'Config']]]);
    assert.equal(byTitle(tree, 'FAQ').path, 'guide/faq');
    assert.equal(byTitle(tree, 'Config').git?.path, 'guide/config.md');
    // `at` alone reorders among the same siblings.
    await editChangeRequest(ann, space.id, cr.id, [c({ operation: 'update_page', page: config!.id, at: 0 })]);
    tree = await crPages(ann, space.id, cr.id);
    assert.deepEqual(outline(tree), ['Advanced', ['Guide', ['Config', 'FAQ', 'Setup Steps']]]);

    // Under itself or a descendant: refused, nothing applied.
    const head = (await ann.api.spaces.getChangeRequestById(space.id, cr.id)).data.revision;
    for (const into of [guide!.id, config!.id]) {
      const res = await rawEdit(ann, space.id, cr.id, { changes: [{ operation: 'update_page', page: guide!.id, into }] });
      assert.equal(res.status, 400);
      assert.match(res.body.error.message, /under itself/);
    }
    const unknownParent = await rawEdit(ann, space.id, cr.id, { changes: [{ operation: 'update_page', page: guide!.id, into: 'nope' }] });
    assert.equal(unknownParent.status, 400);
    assert.match(unknownParent.body.error.message, /nope/);
    assert.equal((await ann.api.spaces.getChangeRequestById(space.id, cr.id)).data.revision, head);

    // The space keeps its original tree until the merge.
    assert.deepEqual(outline(await pagesOf(ann, space.id)), [['Guide', ['Install', ['Config', ['Advanced']]]], 'FAQ']);
  });

  test('delete_page removes the subtree; revert_page restores, resets and removes', async () => {
    const { admin: ann, space } = await orgWithSpace(t);
    await mergeChanges(ann, space.id, TREE);
    const cr = await openChangeRequest(ann, space.id);
    const pages = await crPages(ann, space.id, cr.id);
    const [install, config] = ['Install', 'Config'].map((n) => byTitle(pages, n));

    await editChangeRequest(ann, space.id, cr.id, [
      c({ operation: 'delete_page', page: config!.id }),
      c({ operation: 'update_page', page: install!.id, title: 'Setup', document: md('Changed.\n') }),
      c({ operation: 'insert_page', title: 'Extra', document: md('New.\n') }),
    ]);
    let tree = await crPages(ann, space.id, cr.id);
    assert.deepEqual(outline(tree), [['Guide', ['Setup']], 'FAQ', 'Extra']);
    await expectStatus(ann.api.spaces.getPageInChangeRequestByPath(space.id, cr.id, 'guide/config/advanced'), 404);
    await expectStatus(ann.api.spaces.getPageInChangeRequestById(space.id, cr.id, byTitle(pages, 'Advanced').id), 404);
    // Deleting it again: the page is gone, so the batch is refused.
    const again = await rawEdit(ann, space.id, cr.id, { changes: [{ operation: 'delete_page', page: config!.id }] });
    assert.equal(again.status, 400);
    assert.match(again.body.error.message, new RegExp(config!.id));

    const extra = byTitle(tree, 'Extra');
    await editChangeRequest(ann, space.id, cr.id, [
      c({ operation: 'revert_page', page: config!.id }),
      c({ operation: 'revert_page', page: install!.id }),
      c({ operation: 'revert_page', page: extra.id }),
    ]);
    tree = await crPages(ann, space.id, cr.id);
    assert.deepEqual(outline(tree), [['Guide', ['Install', ['Config', ['Advanced']]]], 'FAQ']);
    assert.equal(byTitle(tree, 'Advanced').path, 'guide/config/advanced');
    assert.equal(await crPageMarkdown(ann, space.id, cr.id, install!.id), 'Run `npm ci`.\n');

    // Revert to a given revision: the page as it was there.
    const before = (await ann.api.spaces.getChangeRequestById(space.id, cr.id)).data.revision;
    await editChangeRequest(ann, space.id, cr.id, [c({ operation: 'update_page', page: install!.id, document: md('Third.\n') })]);
    await editChangeRequest(ann, space.id, cr.id, [c({ operation: 'update_page', page: install!.id, document: md('Fourth.\n') })]);
    const third = (await ann.api.spaces.getRevisionOfChangeRequestById(space.id, cr.id)).data.parents[0]!;
    await editChangeRequest(ann, space.id, cr.id, [c({ operation: 'revert_page', page: install!.id, revision: third })]);
    assert.equal(await crPageMarkdown(ann, space.id, cr.id, install!.id), 'Third.\n');
    const unknown = await rawEdit(ann, space.id, cr.id, { changes: [{ operation: 'revert_page', page: install!.id, revision: 'no-such-revision' }] });
    assert.equal(unknown.status, 400);
    assert.match(unknown.body.error.message, /no-such-revision/);
    assert.notEqual(before, third);
  });

  test('frontmatter and a leading heading become page metadata', async () => {
    const { admin: ann, space } = await orgWithSpace(t);
    const cr = await openChangeRequest(ann, space.id);
    await editChangeRequest(ann, space.id, cr.id, [
      c({ operation: 'insert_page', document: md('---\ntitle: From Frontmatter\ndescription: "Short summary"\n---\n\n# Not the title\n\nBody.\n') }),
      c({ operation: 'insert_page', title: 'Given title', document: md('# Heading Title\n\nText.\n') }),
      c({ operation: 'insert_page', document: md('No heading here.\n') }),
    ]);
    const pages = await crPages(ann, space.id, cr.id);
    assert.deepEqual(pages.map((p) => [p.title, p.slug]), [
      ['From Frontmatter', 'from-frontmatter'],
      ['Heading Title', 'heading-title'],
      ['Untitled', 'untitled'],
    ]);
    assert.equal(pages[0]!.description, 'Short summary');
    // The markdown read gives the metadata back as front matter; the title is the page's own field.
    assert.equal(await crPageMarkdown(ann, space.id, cr.id, pages[0]!.id), '---\ndescription: Short summary\n---\n\n# Not the title\n\nBody.\n');
    assert.equal(await crPageMarkdown(ann, space.id, cr.id, pages[1]!.id), 'Text.\n');
    // On update too.
    await editChangeRequest(ann, space.id, cr.id, [c({ operation: 'update_page', page: pages[2]!.id, document: md('# Renamed\n\nNew body.\n') })]);
    const read = (await ann.api.spaces.getPageInChangeRequestById(space.id, cr.id, pages[2]!.id, { format: 'markdown' })).data as unknown as PageView;
    assert.deepEqual([read.title, read.path, read.markdown], ['Renamed', 'renamed', 'New body.\n']);
  });

  test('a page body given as a JSON document is stored as markdown', async () => {
    const { admin: ann, space } = await orgWithSpace(t);
    const cr = await openChangeRequest(ann, space.id);
    const text = (t: string) => ({ object: 'text', leaves: [{ object: 'leaf', text: t, marks: [] }] });
    const document = {
      object: 'document',
      data: {},
      nodes: [
        { object: 'block', type: 'heading-1', key: 'h', data: {}, nodes: [text('Intro')] },
        { object: 'block', type: 'paragraph', key: 'p', data: {}, nodes: [text('From a '), { object: 'text', leaves: [{ object: 'leaf', text: 'document', marks: [{ object: 'mark', type: 'bold', data: {} }] }] }, text('.')] },
      ],
    };
    await editChangeRequest(ann, space.id, cr.id, [c({ operation: 'insert_page', title: 'Doc', document: { document } })]);
    const page = (await crPages(ann, space.id, cr.id))[0]!;
    // A JSON document's heading stays in the body: only markdown reads a title from it.
    assert.equal(page.title, 'Doc');
    assert.equal(await crPageMarkdown(ann, space.id, cr.id, page.id), '## Intro\n\nFrom a **document**.\n');
    const { data } = await ann.api.spaces.getPageInChangeRequestById(space.id, cr.id, page.id, { format: 'document' });
    assert.deepEqual((data as unknown as PageView).document!.nodes.map((n) => n.type), ['heading-1', 'paragraph']);
    // An empty body is an empty page.
    await editChangeRequest(ann, space.id, cr.id, [c({ operation: 'update_page', page: page.id, document: {} })]);
    assert.equal(await crPageMarkdown(ann, space.id, cr.id, page.id), '');
  });

  test('compat=false answers the affected pages and the inserted files', async () => {
    const { admin: ann, space } = await orgWithSpace(t);
    await mergeChanges(ann, space.id, [c({ operation: 'insert_page', title: 'Old', document: md('Old.\n') }), c({ operation: 'insert_page', title: 'Gone', document: md('Gone.\n') })]);
    const [old, gone] = await pagesOf(ann, space.id);
    const cr = await openChangeRequest(ann, space.id);
    const { data } = await ann.api.spaces.updateChangeRequestContent(
      space.id,
      cr.id,
      {
        changes: [
          c({ operation: 'insert_page', ref: 'intro', title: 'Intro', document: md('Hi.\n') }),
          c({ operation: 'update_page', page: old!.id, title: 'Older' }),
          c({ operation: 'insert_page', title: 'Temp', into: 'intro', document: md('Temp.\n') }),
          c({ operation: 'delete_page', page: gone!.id }),
          c({ operation: 'update_page', page: old!.id, into: 'intro' }),
          c({ operation: 'insert_files', files: [{ name: 'a.txt', contentType: 'text/plain', base64: Buffer.from('abc').toString('base64') }] }),
        ],
      },
      { compat: false },
    );
    const result = data as unknown as {
      changeRequest: { id: string; revision: string };
      changes: { object: string; ref?: string; page: string | { id: string; urls: { location: string } } }[];
      insertedFiles: FileView[];
    };
    assert.equal(result.changeRequest.id, cr.id);
    const pages = await crPages(ann, space.id, cr.id);
    const intro = byTitle(pages, 'Intro');
    const temp = byTitle(pages, 'Temp');
    assert.deepEqual(
      result.changes.map((ch) => [ch.object, typeof ch.page === 'string' ? ch.page : ch.page.id, ch.ref]),
      [
        ['created_page', intro.id, 'intro'],
        ['updated_page', old!.id, undefined],
        ['created_page', temp.id, undefined],
        ['deleted_page', gone!.id, undefined],
      ],
    );
    const location = (result.changes[0]!.page as { urls: { location: string } }).urls.location;
    const followed = await fetch(location, { headers: { authorization: `Bearer ${ann.token}` } });
    assert.equal(((await followed.json()) as { id: string }).id, intro.id);
    assert.deepEqual(result.insertedFiles.map((f) => [f.name, f.size]), [['a.txt', 3]]);
    assert.equal(await (await fetch(result.insertedFiles[0]!.downloadURL)).text(), 'abc');
    assert.deepEqual(outline(pages), [['Intro', ['Temp', 'Older']]]);
    // The default answer is the change request itself.
    const { data: plain } = await ann.api.spaces.updateChangeRequestContent(space.id, cr.id, { changes: [c({ operation: 'update_page', page: temp.id, title: 'T2' })] });
    assert.equal((plain as { object: string }).object, 'change-request');
  });

  test('a batch is atomic and holds at most 50 changes', async () => {
    const { admin: ann, space } = await orgWithSpace(t);
    await mergeChanges(ann, space.id, [c({ operation: 'insert_page', title: 'Keep', document: md('Original.\n') })]);
    const keep = (await pagesOf(ann, space.id))[0]!;
    const cr = await openChangeRequest(ann, space.id);
    const res = await rawEdit(ann, space.id, cr.id, {
      changes: [
        { operation: 'insert_page', title: 'First', document: { markdown: 'one\n' } },
        { operation: 'update_page', page: keep.id, document: { markdown: 'Changed.\n' } },
        { operation: 'update_page', page: 'missing-page', title: 'Nope' },
      ],
    });
    assert.equal(res.status, 400);
    assert.match(res.body.error.message, /changes\[2\].*missing-page/);
    const { data: after } = await ann.api.spaces.getChangeRequestById(space.id, cr.id);
    assert.equal(after.revision, cr.revision);
    assert.deepEqual((await crPages(ann, space.id, cr.id)).map((p) => p.title), ['Keep']);
    assert.equal(await crPageMarkdown(ann, space.id, cr.id, keep.id), 'Original.\n');

    const insert = (i: number) => ({ operation: 'insert_page', title: `P${i}`, document: { markdown: `${i}\n` } });
    const tooMany = await rawEdit(ann, space.id, cr.id, { changes: Array.from({ length: 51 }, (_, i) => insert(i)) });
    assert.equal(tooMany.status, 400);
    assert.match(tooMany.body.error.message, /changes/);
    const none = await rawEdit(ann, space.id, cr.id, { changes: [] });
    assert.equal(none.status, 400);
    await editChangeRequest(ann, space.id, cr.id, Array.from({ length: 50 }, (_, i) => insert(i) as unknown as Change));
    assert.equal((await crPages(ann, space.id, cr.id)).length, 51);
  });
});
