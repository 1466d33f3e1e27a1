import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { newOrg } from './support/factories.ts';
import { startTestServer, type TestServer } from './support/server.ts';

/** Page front matter through the API: written in markdown, served in the official page fields and as front matter again. */

let t: TestServer;
before(async () => {
  t = await startTestServer();
});
after(async () => {
  await t?.close();
});

const PAGE = `---
description: >-
  A folded description
  over two lines.
icon: book-open
hidden: true
noIndex: true
noRobotsIndex: true
cover: https://example.com/cover.png
coverY: 12
coverHeight: 300
layout:
  width: wide
  cover:
    visible: true
    size: full
  title:
    visible: false
  tableOfContents:
    visible: false
  outline:
    visible: true
metaLinks:
  canonical: https://example.com/canonical
if: visitor.claims.plan == "pro"
custom: kept as it is
---

# Setting up

Body text.
`;

test('front matter becomes the page fields, and comes back as front matter', async () => {
  const { admin, org } = await newOrg(t);
  const { data: space } = await admin.api.orgs.createSpace(org.id, { title: 'Docs' });
  const { data: cr } = await admin.api.spaces.createChangeRequest(space.id, { subject: 'front matter' });
  const res = await t.request('POST', `/v1/spaces/${space.id}/change-requests/${cr.id}/content?compat=false`, {
    token: admin.token,
    body: { changes: [{ operation: 'insert_page', document: { markdown: PAGE } }] },
  });
  assert.equal(res.status, 200, JSON.stringify(res.body));
  const pageId = res.body.changes[0].page.id as string;
  await admin.api.spaces.mergeChangeRequest(space.id, cr.id);

  const { data: page } = await admin.api.spaces.getPageById(space.id, pageId, { format: 'document' });
  const p = page as unknown as Record<string, any>;
  assert.equal(p.title, 'Setting up');
  assert.equal(p.description, 'A folded description over two lines.');
  assert.equal(p.icon, 'book-open');
  assert.equal(p.hidden, true);
  assert.equal(p.noIndex, true);
  assert.equal(p.noRobotsIndex, true);
  assert.deepEqual(p.cover, { ref: { kind: 'url', url: 'https://example.com/cover.png' }, yPos: 12, height: 300 });
  assert.equal(p.layout.width, 'wide');
  assert.equal(p.layout.coverSize, 'full');
  assert.equal(p.layout.title, false);
  assert.equal(p.layout.tableOfContents, false);
  assert.equal(p.layout.outline, true);
  assert.deepEqual(p.metaLinks, { canonical: { kind: 'url', url: 'https://example.com/canonical' } });
  assert.equal(p.document.nodes[0].type, 'paragraph');

  const { data: asMarkdown } = await admin.api.spaces.getPageById(space.id, pageId, { format: 'markdown' });
  const markdown = (asMarkdown as { markdown: string }).markdown;
  assert.match(markdown, /^---\n/);
  for (const line of ['description: A folded description over two lines.', 'icon: book-open', 'hidden: true', 'noIndex: true', 'coverY: 12', 'coverHeight: 300', 'if: visitor.claims.plan == "pro"', 'custom: kept as it is']) {
    assert.ok(markdown.includes(line), `${line} in\n${markdown}`);
  }
  assert.ok(markdown.endsWith('\nBody text.\n'), markdown);

  // Writing the markdown read back changes nothing.
  const { data: cr2 } = await admin.api.spaces.createChangeRequest(space.id, { subject: 'again' });
  const again = await t.request('POST', `/v1/spaces/${space.id}/change-requests/${cr2.id}/content`, {
    token: admin.token,
    body: { changes: [{ operation: 'update_page', page: pageId, document: { markdown } }] },
  });
  assert.equal(again.status, 200, JSON.stringify(again.body));
  const { data: reread } = await admin.api.spaces.getPageInChangeRequestById(space.id, cr2.id, pageId, { format: 'markdown' });
  assert.equal((reread as { markdown: string }).markdown, markdown);
});
