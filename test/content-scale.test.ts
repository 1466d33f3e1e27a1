import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { sql } from 'kysely';
import { bulkPages } from './support/content.ts';
import { startTestServer, type TestServer } from './support/server.ts';

let t: TestServer;
before(async () => {
  t = await startTestServer();
});
after(async () => {
  await t?.close();
});

async function rows(table: 'tree_nodes' | 'documents') {
  const r = await sql<{ n: number }>`SELECT count(*)::int AS n FROM ${sql.table(table)}`.execute(t.server.services.db);
  return r.rows[0]!.n;
}

test('editing one page of a 10,000-page space stores only what changed, and merges cleanly', async () => {
  const ann = await t.user('Ann');
  const { data: org } = await ann.api.orgs.createOrganization({ title: 'Big docs' });
  const { data: space } = await ann.api.orgs.createSpace(org.id, { title: 'Big' });
  const ids = await bulkPages(t.server.services.db, { id: space.id, organization_id: org.id }, 100, 99);
  assert.equal(ids.length, 10_000);

  const target = ids[5000]!;
  const { data: page } = await ann.api.spaces.getPageById(space.id, target, { format: 'markdown' });
  assert.equal((page as { markdown: string }).markdown, 'Some text.\n\nMore text.\n');
  assert.match((page as { path: string }).path, /^page-\d+\/page-\d+$/);

  const { data: cr } = await ann.api.spaces.createChangeRequest(space.id, { subject: 'One page' });
  const nodesBefore = await rows('tree_nodes');
  const docsBefore = await rows('documents');
  await ann.api.spaces.updateChangeRequestContent(space.id, cr.id, {
    changes: [{ operation: 'update_page', page: target, document: { markdown: 'Some text.\n\nNew text.\n' } } as never],
  });
  const written = (await rows('tree_nodes')) - nodesBefore;
  // One leaf and the branches above it: a handful of nodes, not a copy of 10,000 pages.
  assert.ok(written > 0 && written <= 6, `${written} tree nodes written for a one-page edit`);
  assert.equal((await rows('documents')) - docsBefore, 1);

  assert.equal((await ann.api.spaces.mergeChangeRequest(space.id, cr.id)).data.result, 'merge');
  const { data: after } = await ann.api.spaces.getPageById(space.id, target, { format: 'markdown' });
  assert.equal((after as { markdown: string }).markdown, 'Some text.\n\nNew text.\n');
  const { data: other } = await ann.api.spaces.getPageById(space.id, ids[42]!, { format: 'markdown' });
  assert.equal((other as { markdown: string }).markdown, 'Some text.\n\nMore text.\n');
});
