import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { changeRequestWith, mergeChanges, newSpace, orgWithSpace } from './support/factories.ts';
import { startTestServer, type TestServer, type TestUser } from './support/server.ts';

let t: TestServer;
before(async () => {
  t = await startTestServer();
});
after(async () => {
  await t?.close();
});

interface LinkItem {
  status: string;
  relation: string;
  url: string;
  organization: string;
  space: string;
  page: { id: string; title: string; path: string };
  targetReference: Record<string, string>;
}
interface Listing {
  items: LinkItem[];
  count: number;
  next?: { page: string };
  stats: { total: number; broken: { total: number; changeRequest: number } };
}

async function get<T = Listing>(user: TestUser, path: string, status = 200): Promise<T> {
  const res = await t.request('GET', path, { token: user.token });
  assert.equal(res.status, status, `GET ${path}: ${JSON.stringify(res.body)}`);
  return res.body as T;
}

/**
 * A space with a target page (one heading anchor), a file, and a page linking to every kind of
 * target, existing and missing.
 */
async function setup() {
  const { admin: ann, org, space } = await orgWithSpace(t);
  await mergeChanges(ann, space.id, [
    { operation: 'insert_page', title: 'Target', document: { markdown: 'Intro.\n\n## Install steps\n\nRun it.\n' } },
    { operation: 'insert_files', files: [{ name: 'notes.txt', contentType: 'text/plain', base64: Buffer.from('notes').toString('base64') }] },
  ]);
  const targetId = (await ann.api.spaces.listPages(space.id)).data.pages[0]!.id;
  const fileId = (await ann.api.spaces.listFiles(space.id)).data.items[0]!.id;
  const inApp = `${t.url}/app/s/${space.id}`;
  const markdown = [
    `- [existing page](/pages/${targetId})`,
    `- [missing page](/pages/nope)`,
    `- [existing anchor](/pages/${targetId}#install-steps)`,
    `- [missing anchor](/pages/${targetId}#nowhere)`,
    `- [existing file](/files/${fileId})`,
    `- [missing file](/files/nofile)`,
    `- [external](https://example.com/docs)`,
    `- [in app](${inApp})`,
    `- [relative](target.md)`,
    `- [relative missing](missing.md)`,
    `- [same page](#local)`,
    '',
    '## Local',
    '',
    'Here.',
    '',
  ].join('\n');
  await mergeChanges(ann, space.id, [{ operation: 'insert_page', title: 'Links', document: { markdown } }]);
  const pages = (await ann.api.spaces.listPages(space.id)).data.pages;
  const linksId = pages.find((p) => p.title === 'Links')!.id;
  return { ann, org, space, targetId, fileId, linksId, inApp };
}

describe('links', () => {
  test('space listing: status, targets and stats of every kind of link', async () => {
    const { ann, org, space, targetId, fileId, linksId, inApp } = await setup();
    const body = await get(ann, `/v1/spaces/${space.id}/links`);
    assert.deepEqual(
      body.items.map((l) => [l.url, l.status]),
      [
        [`/pages/${targetId}`, 'ok'],
        ['/pages/nope', 'broken'],
        [`/pages/${targetId}#install-steps`, 'ok'],
        [`/pages/${targetId}#nowhere`, 'broken'],
        [`/files/${fileId}`, 'ok'],
        ['/files/nofile', 'broken'],
        ['https://example.com/docs', 'ok'],
        [inApp, 'in-app'],
        // Stored by id once written (see src/content/page-links.ts).
        [`/pages/${targetId}`, 'ok'],
        ['missing.md', 'broken'],
        ['#local', 'ok'],
      ],
    );
    assert.equal(body.count, 11);
    assert.equal(body.next, undefined);
    assert.deepEqual(body.stats, { total: 11, broken: { total: 4, changeRequest: 0 } });
    for (const link of body.items) {
      assert.equal(link.relation, 'reference');
      assert.equal(link.organization, org.id);
      assert.equal(link.space, space.id);
      assert.deepEqual(link.page, { id: linksId, title: 'Links', path: 'links' });
    }
    const refs = body.items.map((l) => l.targetReference);
    assert.deepEqual(refs[0], { kind: 'page', page: targetId, space: space.id });
    assert.deepEqual(refs[1], { kind: 'page', page: 'nope', space: space.id });
    assert.deepEqual(refs[2], { kind: 'anchor', anchor: 'install-steps', page: targetId, space: space.id });
    assert.deepEqual(refs[4], { kind: 'file', file: fileId, space: space.id });
    assert.deepEqual(refs[6], { kind: 'url', url: 'https://example.com/docs' });
    assert.deepEqual(refs[7], { kind: 'url', url: inApp });
    assert.deepEqual(refs[8], { kind: 'page', page: targetId, space: space.id });
    assert.deepEqual(refs[10], { kind: 'anchor', anchor: 'local', page: linksId, space: space.id });
  });

  test('status filter and paging', async () => {
    const { ann, space } = await setup();
    const broken = await get(ann, `/v1/spaces/${space.id}/links?status=broken`);
    assert.deepEqual(broken.items.map((l) => l.url), ['/pages/nope', broken.items[1]!.url, '/files/nofile', 'missing.md']);
    assert.match(broken.items[1]!.url, /#nowhere$/);
    assert.equal(broken.count, 4);
    assert.deepEqual(broken.stats, { total: 11, broken: { total: 4, changeRequest: 0 } });
    assert.deepEqual((await get(ann, `/v1/spaces/${space.id}/links?status=in-app`)).items.map((l) => l.status), ['in-app']);
    assert.equal((await get(ann, `/v1/spaces/${space.id}/links?status=ok`)).count, 6);
    await get(ann, `/v1/spaces/${space.id}/links?status=weird`, 400);

    const all = (await get(ann, `/v1/spaces/${space.id}/links`)).items.map((l) => l.url);
    const seen: string[] = [];
    let cursor: string | undefined;
    let pages = 0;
    do {
      const body = await get(ann, `/v1/spaces/${space.id}/links?limit=4${cursor ? `&page=${cursor}` : ''}`);
      assert.equal(body.count, 11);
      assert.ok(body.items.length <= 4);
      seen.push(...body.items.map((l) => l.url));
      cursor = body.next?.page;
      pages++;
    } while (cursor);
    assert.equal(pages, 3);
    assert.deepEqual(seen, all);
    await get(ann, `/v1/spaces/${space.id}/links?page=not-a-cursor`, 400);
    await get(ann, `/v1/spaces/${space.id}/links?limit=0`, 400);
    await get(ann, `/v1/spaces/${space.id}/links?limit=1001`, 400);
  });

  test('page listing', async () => {
    const { ann, space, targetId, linksId } = await setup();
    const links = await get(ann, `/v1/spaces/${space.id}/content/page/${linksId}/links?limit=2`);
    assert.equal(links.count, 11);
    assert.equal(links.items.length, 2);
    assert.ok(links.next);
    assert.deepEqual(links.stats, { total: 11, broken: { total: 4, changeRequest: 0 } });
    const broken = await get(ann, `/v1/spaces/${space.id}/content/page/${linksId}/links?status=broken`);
    assert.equal(broken.count, 4);
    const target = await get(ann, `/v1/spaces/${space.id}/content/page/${targetId}/links`);
    assert.deepEqual(target.items, []);
    assert.deepEqual(target.stats, { total: 0, broken: { total: 0, changeRequest: 0 } });
    await get(ann, `/v1/spaces/${space.id}/content/page/nope/links`, 404);
  });

  test('file backlinks: the pages referencing a file', async () => {
    const { ann, org, space, fileId, linksId } = await setup();
    // A second page referencing the file twice (a link and an image) is listed once.
    await mergeChanges(ann, space.id, [
      { operation: 'insert_page', title: 'Gallery', document: { markdown: `[notes](/files/${fileId})\n\n![img](/files/${fileId})\n` } },
      { operation: 'insert_page', title: 'Unrelated', document: { markdown: '[x](https://example.com)\n' } },
    ]);
    const { data: current } = await ann.api.spaces.getSpaceById(space.id);
    const galleryId = (await ann.api.spaces.listPages(space.id)).data.pages.find((p) => p.title === 'Gallery')!.id;
    const body = await get<{ items: Record<string, unknown>[]; count: number; next?: { page: string } }>(
      ann,
      `/v1/spaces/${space.id}/content/files/${fileId}/backlinks`,
    );
    assert.equal(body.count, 2);
    assert.deepEqual(body.items, [
      {
        kind: 'page',
        organization: org.id,
        space: space.id,
        versionContext: { type: 'revision', revision: current.revision },
        page: { id: linksId, title: 'Links', path: 'links' },
        file: fileId,
      },
      {
        kind: 'page',
        organization: org.id,
        space: space.id,
        versionContext: { type: 'revision', revision: current.revision },
        page: { id: galleryId, title: 'Gallery', path: 'gallery' },
        file: fileId,
      },
    ]);
    const first = await get<{ items: { page: { id: string } }[]; count: number; next?: { page: string } }>(
      ann,
      `/v1/spaces/${space.id}/content/files/${fileId}/backlinks?limit=1`,
    );
    assert.deepEqual(first.items.map((i) => i.page.id), [linksId]);
    const second = await get<{ items: { page: { id: string } }[]; next?: { page: string } }>(
      ann,
      `/v1/spaces/${space.id}/content/files/${fileId}/backlinks?limit=1&page=${first.next!.page}`,
    );
    assert.deepEqual(second.items.map((i) => i.page.id), [galleryId]);
    assert.equal(second.next, undefined);
    await get(ann, `/v1/spaces/${space.id}/content/files/nofile/backlinks`, 404);
  });

  test('broken links in open change requests are counted apart', async () => {
    const { ann, space, targetId, linksId } = await setup();
    // An open change request adding a page with one broken and one good link, and deleting the target
    // page (which breaks links of an unchanged page: not counted, that page is not in the change).
    const cr = await changeRequestWith(ann, space.id, [
      { operation: 'insert_page', title: 'Draft', document: { markdown: `[gone](/pages/gone) and [fine](/pages/${linksId})\n` } },
    ]);
    // A second open change request editing the Links page: its 4 broken links count too.
    await changeRequestWith(ann, space.id, [{ operation: 'update_page', page: linksId, title: 'Links (edited)' }]);
    const body = await get(ann, `/v1/spaces/${space.id}/links`);
    assert.deepEqual(body.stats, { total: 11, broken: { total: 4, changeRequest: 5 } });
    const page = await get(ann, `/v1/spaces/${space.id}/content/page/${linksId}/links`);
    assert.equal(page.stats.broken.changeRequest, 4);
    const target = await get(ann, `/v1/spaces/${space.id}/content/page/${targetId}/links`);
    assert.equal(target.stats.broken.changeRequest, 0);
    // Archived change requests no longer count.
    await ann.api.spaces.updateChangeRequestById(space.id, cr.id, { status: 'archived' as never });
    assert.deepEqual((await get(ann, `/v1/spaces/${space.id}/links`)).stats.broken, { total: 4, changeRequest: 4 });
  });

  test('links into other spaces, relative paths from a nested page, other schemes', async () => {
    const { ann, org, space, targetId, linksId } = await setup();
    const other = await newSpace(ann, org.id, 'Other');
    await mergeChanges(ann, other.id, [{ operation: 'insert_page', title: 'Elsewhere', document: { markdown: '## Part\n\nText.\n' } }]);
    const elsewhereId = (await ann.api.spaces.listPages(other.id)).data.pages[0]!.id;
    // A space Ann cannot read: its pages count as missing (their existence is not revealed).
    const bob = await t.user('Bob');
    const { data: bobOrg } = await bob.api.orgs.createOrganization({ title: 'Bob' });
    const hidden = await newSpace(bob, bobOrg.id, 'Hidden');
    await mergeChanges(bob, hidden.id, [{ operation: 'insert_page', title: 'Secret', document: { markdown: 'Shh.\n' } }]);
    const secretId = (await bob.api.spaces.listPages(hidden.id)).data.pages[0]!.id;
    const markdown = [
      `[other](/spaces/${other.id}/pages/${elsewhereId})`,
      `[other anchor](/spaces/${other.id}/pages/${elsewhereId}#part)`,
      `[other missing](/spaces/${other.id}/pages/nope)`,
      `[hidden](/spaces/${hidden.id}/pages/${secretId})`,
      '[up](../links.md)',
      '[sibling](./sibling.md)',
      '[parent](README.md#install-steps)',
      '[mail](mailto:someone@example.com)',
      `[space](/spaces/${other.id})`,
      '[gone space](/spaces/nope)',
    ].join('\n\n');
    await mergeChanges(ann, space.id, [{ operation: 'insert_page', into: targetId, title: 'Child', document: { markdown } }]);
    const childId = (await ann.api.spaces.getPageByPath(space.id, 'target/child')).data.id;
    const body = await get(ann, `/v1/spaces/${space.id}/content/page/${childId}/links`);
    assert.deepEqual(
      body.items.map((l) => [l.url, l.status]),
      [
        [`/spaces/${other.id}/pages/${elsewhereId}`, 'ok'],
        [`/spaces/${other.id}/pages/${elsewhereId}#part`, 'ok'],
        [`/spaces/${other.id}/pages/nope`, 'broken'],
        [`/spaces/${hidden.id}/pages/${secretId}`, 'broken'],
        [`/pages/${linksId}`, 'ok'],
        ['./sibling.md', 'broken'],
        [`/pages/${targetId}#install-steps`, 'ok'],
        ['mailto:someone@example.com', 'ok'],
        [`/spaces/${other.id}`, 'ok'],
        ['/spaces/nope', 'broken'],
      ],
    );
    assert.deepEqual(body.items[0]!.targetReference, { kind: 'page', page: elsewhereId, space: other.id });
    assert.deepEqual(body.items[4]!.targetReference, { kind: 'page', page: linksId, space: space.id });
    assert.deepEqual(body.items[6]!.targetReference, { kind: 'anchor', anchor: 'install-steps', page: targetId, space: space.id });
    assert.deepEqual(body.items[8]!.targetReference, { kind: 'space', space: other.id });
    assert.deepEqual(body.items[0]!.page, { id: childId, title: 'Child', path: 'target/child' });
    assert.deepEqual((await get(ann, `/v1/spaces/${space.id}/links`)).stats, { total: 21, broken: { total: 8, changeRequest: 0 } });
  });

  test('unknown and invisible spaces are 404', async () => {
    const { space, fileId, linksId } = await setup();
    const bob = await t.user('Bob');
    await get(bob, `/v1/spaces/${space.id}/links`, 404);
    await get(bob, `/v1/spaces/${space.id}/content/page/${linksId}/links`, 404);
    await get(bob, `/v1/spaces/${space.id}/content/files/${fileId}/backlinks`, 404);
    await get(bob, '/v1/spaces/nope/links', 404);
    const res = await t.request('GET', `/v1/spaces/${space.id}/links`);
    assert.equal(res.status, 401);
  });

  test('the operations are documented in the OpenAPI output', async () => {
    const doc = await t.request('GET', '/v1/openapi.json');
    assert.equal(doc.status, 200);
    const paths = doc.body.paths as Record<string, Record<string, { operationId?: string }>>;
    assert.equal(paths['/v1/spaces/{spaceId}/links']?.get?.operationId, 'listSpaceLinks');
    assert.equal(paths['/v1/spaces/{spaceId}/content/page/{pageId}/links']?.get?.operationId, 'listPageLinks');
    assert.equal(paths['/v1/spaces/{spaceId}/content/files/{fileId}/backlinks']?.get?.operationId, 'listFileBacklinks');
  });
});
