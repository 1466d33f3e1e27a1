import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { GitBookAPI } from '@gitbook/api';
import { ContentEditor, putDocuments } from '../src/content/model.ts';
import { newOrg, newMember } from './support/factories.ts';
import { validatingFetch } from './support/official-schema.ts';
import { folioEnv, runCli, serve } from './support/process.ts';
import { freshDatabaseConfig, startTestServer, type TestServer } from './support/server.ts';

/**
 * Regression tests for what an adversarial review found in the content code (issue 17, findings
 * 1-4 and 9). Each test that could hang runs under a time limit, so a regression fails instead of
 * stalling the suite.
 */

let t: TestServer;
before(async () => {
  t = await startTestServer();
});
after(async () => {
  await t?.close();
});

const LIMIT = { timeout: 60_000 };

async function spaceWithPage(title = 'Acme') {
  const { admin, org } = await newOrg(t, title);
  const editor = await newMember(t, org.id, 'edit', 'Eddie Editor');
  const { data: space } = await admin.api.orgs.createSpace(org.id, { title: 'Docs' });
  const { data: cr } = await editor.api.spaces.createChangeRequest(space.id, { subject: 'setup' });
  const insert = await t.request('POST', `/v1/spaces/${space.id}/change-requests/${cr.id}/content`, {
    token: editor.token,
    body: { changes: [{ operation: 'insert_page', title: 'Existing', document: { markdown: 'Original text.\n' } }] },
  });
  assert.equal(insert.status, 200, JSON.stringify(insert.body));
  const { data: pages } = await editor.api.spaces.listPagesInChangeRequest(space.id, cr.id);
  const page = pages.pages[0]!;
  return { admin, org, editor, space, cr, page };
}

const edit = (s: { space: { id: string }; cr: { id: string }; editor: { token: string } }, changes: unknown[]) =>
  t.request('POST', `/v1/spaces/${s.space.id}/change-requests/${s.cr.id}/content`, { token: s.editor.token, body: { changes } });

const health = () => t.request('GET', '/healthz');

describe('finding 1: page ids are the server\'s', () => {
  test('insert_page naming an existing page as its own id and parent is refused; the server keeps answering', LIMIT, async () => {
    const s = await spaceWithPage();
    const res = await edit(s, [{ operation: 'insert_page', id: s.page.id, into: s.page.id, title: 'cycle', document: { markdown: 'c' } }]);
    assert.equal(res.status, 400, JSON.stringify(res.body));
    assert.match(res.body.error.message, /id/);
    const { data: page } = await s.editor.api.spaces.getPageInChangeRequestById(s.space.id, s.cr.id, s.page.id, { format: 'markdown' });
    assert.equal(page.title, 'Existing');
    assert.deepEqual((page as { pages: unknown[] }).pages, []);
    assert.equal((await health()).status, 200);
  });

  test('insert_page with a caller-chosen id is refused', LIMIT, async () => {
    const s = await spaceWithPage();
    const res = await edit(s, [{ operation: 'insert_page', id: 'my-own-id', title: 'Mine', document: { markdown: 'x' } }]);
    assert.equal(res.status, 400);
  });

  test('a page inserted under a page gets a fresh id and both read back', LIMIT, async () => {
    const s = await spaceWithPage();
    const res = await edit(s, [{ operation: 'insert_page', into: s.page.id, title: 'Child', document: { markdown: 'child' } }]);
    assert.equal(res.status, 200);
    const { data: parent } = await s.editor.api.spaces.getPageInChangeRequestById(s.space.id, s.cr.id, s.page.id, { format: 'markdown' });
    const children = (parent as { pages: { id: string; title: string }[] }).pages;
    assert.equal(children.length, 1);
    assert.notEqual(children[0]!.id, s.page.id);
    assert.equal(children[0]!.title, 'Child');
  });

  test('pages nest at most 50 deep', LIMIT, async () => {
    const s = await spaceWithPage();
    let parent = s.page.id;
    for (let depth = 2; depth <= 50; depth++) {
      const res = await t.request('POST', `/v1/spaces/${s.space.id}/change-requests/${s.cr.id}/content?compat=false`, {
        token: s.editor.token,
        body: { changes: [{ operation: 'insert_page', into: parent, title: `Level ${depth}`, document: { markdown: '' } }] },
      });
      assert.equal(res.status, 200, `depth ${depth}: ${JSON.stringify(res.body)}`);
      parent = res.body.changes[0].page.id;
    }
    const tooDeep = await edit(s, [{ operation: 'insert_page', into: parent, title: 'Level 51', document: { markdown: '' } }]);
    assert.equal(tooDeep.status, 400);
    assert.match(tooDeep.body.error.message, /50 levels/);
  });
});

describe('finding 2: stored references belong to the caller', () => {
  test('update_page cannot point a page at another organization\'s document', LIMIT, async () => {
    const victim = await spaceWithPage('Victim');
    await edit(victim, [{ operation: 'update_page', page: victim.page.id, document: { markdown: 'Top secret roadmap.\n' } }]);
    const [secretHash] = await putDocuments(t.server.services.db, null, ['Top secret roadmap.\n']);
    const attacker = await spaceWithPage('Attacker');
    for (const doc of [secretHash, 'no-such-document', 42, null]) {
      const res = await edit(attacker, [{ operation: 'update_page', page: attacker.page.id, doc }]);
      assert.equal(res.status, 400, `doc=${JSON.stringify(doc)}: ${JSON.stringify(res.body)}`);
      assert.doesNotMatch(JSON.stringify(res.body), /secret/i);
    }
    const { data: page } = await attacker.editor.api.spaces.getPageInChangeRequestById(attacker.space.id, attacker.cr.id, attacker.page.id, { format: 'markdown' });
    assert.equal((page as { markdown: string }).markdown.trim(), 'Original text.');
  });
});

describe('finding 3 and 9: limits on what a page may make the server parse', () => {
  const cases: [string, string, RegExp][] = [
    ['2,000 nested block quotes', `${'>'.repeat(2000)} deep\n`, /nested more than 100/],
    ['32,000 nested block quotes', `${'>'.repeat(32000)} deep\n`, /nested more than 100/],
    ['nested lists on one line', `${'- '.repeat(500)}x\n`, /nested more than 100/],
    ['16,000 emphasis markers in a paragraph', `${'*a'.repeat(16000)}\n`, /emphasis markers/],
    ['a table of 1,000 columns', `|${' c |'.repeat(1000)}\n|${'---|'.repeat(1000)}\n|${' v |'.repeat(1000)}\n`, /1000 columns/],
  ];
  for (const [name, markdown, message] of cases) {
    test(`${name}: 400 naming the limit, on write`, LIMIT, async () => {
      const s = await spaceWithPage();
      const res = await edit(s, [{ operation: 'update_page', page: s.page.id, document: { markdown } }]);
      assert.equal(res.status, 400, JSON.stringify(res.body).slice(0, 300));
      assert.match(res.body.error.message, message);
      assert.equal((await health()).status, 200);
    });
  }

  test('stored markdown past the limits (from before them) still reads, as plain paragraphs', LIMIT, async () => {
    const s = await spaceWithPage();
    // Bypass the API to store what it now refuses, as an older version could have.
    const db = t.server.services.db;
    const row = await db.selectFrom('change_requests').innerJoin('revisions', 'revisions.id', 'change_requests.revision').select(['revisions.root']).where('change_requests.id', '=', s.cr.id).executeTakeFirstOrThrow();
    const editor = new ContentEditor(db, row.root);
    const [doc] = await putDocuments(db, null, [`${'>'.repeat(5000)} deep\n\nafter\n`]);
    await editor.updatePage(s.page.id, { doc: doc! });
    const root = await editor.commit(db);
    await db.updateTable('revisions').set({ root }).where('root', '=', row.root).execute();
    const { data: page } = await s.editor.api.spaces.getPageInChangeRequestById(s.space.id, s.cr.id, s.page.id, { format: 'document' });
    const nodes = (page as { document: { nodes: { type: string }[] } }).document.nodes;
    assert.equal(nodes.length, 2);
    assert.ok(nodes.every((n) => n.type === 'paragraph'));
  });

  test('a page of 1.9 MB of paragraphs reads back in full', { timeout: 120_000 }, async () => {
    const s = await spaceWithPage();
    const markdown = Array.from({ length: 26_000 }, (_, i) => `Paragraph ${i} with plain words in it to look like real text.`).join('\n\n');
    const res = await edit(s, [{ operation: 'update_page', page: s.page.id, document: { markdown } }]);
    assert.equal(res.status, 200, JSON.stringify(res.body).slice(0, 300));
    const { data: page } = await s.editor.api.spaces.getPageInChangeRequestById(s.space.id, s.cr.id, s.page.id, { format: 'document' });
    assert.equal((page as { document: { nodes: unknown[] } }).document.nodes.length, 26_000);
  });
});

describe('large pages are searchable', () => {
  test('a page of 1.8 MB of varied words merges and is found (its text is indexed up to a bound)', { timeout: 120_000 }, async () => {
    const s = await spaceWithPage();
    // Varied words make a tsvector larger than PostgreSQL accepts (1 MB) if the whole page were indexed.
    const words = Array.from({ length: 200_000 }, (_, i) => `w${((i * 2654435761) % 2 ** 32).toString(36)}`);
    const lines: string[] = [];
    for (let i = 0; i < words.length; i += 20) lines.push(words.slice(i, i + 20).join(' '));
    const markdown = `Findme marker.\n\n${lines.join('\n\n')}\n`;
    const res = await edit(s, [{ operation: 'update_page', page: s.page.id, document: { markdown } }]);
    assert.equal(res.status, 200, JSON.stringify(res.body).slice(0, 300));
    await s.admin.api.spaces.mergeChangeRequest(s.space.id, s.cr.id);
    const { data: found } = await s.admin.api.spaces.searchSpaceContent(s.space.id, { query: 'findme' });
    assert.equal(found.items.length, 1);
  });
});

describe('finding 4: depth and size limits on every rich-text document', () => {
  const nested = (depth: number) => {
    let node: Record<string, unknown> = { object: 'text', leaves: [{ object: 'leaf', text: 'deep', marks: [] }] };
    for (let i = 0; i < depth; i++) node = { object: 'block', type: 'blockquote', data: {}, nodes: [node] };
    return { object: 'document', data: {}, nodes: [node] };
  };

  // JSON.stringify itself overflows on such depth: the body is written as text.
  const nestedJson = (depth: number) =>
    `{"object":"document","data":{},"nodes":[${'{"object":"block","type":"blockquote","data":{},"nodes":['.repeat(depth)}` +
    `{"object":"text","leaves":[{"object":"leaf","text":"deep","marks":[]}]}${']}'.repeat(depth)}]}`;

  test('agent instructions nested 10,000 deep: 400 naming the limit', LIMIT, async () => {
    const { admin, org } = await newOrg(t);
    const res = await t.request('PUT', `/v1/orgs/${org.id}/agent-instructions`, { token: admin.token, raw: `{"instructions":${nestedJson(10_000)}}` });
    assert.equal(res.status, 400, JSON.stringify(res.body).slice(0, 300));
    assert.match(res.body.error.message, /deep|nest/i);
  });

  test('agent instructions nested 60 blocks deep: 400 naming the document limit', LIMIT, async () => {
    const { admin, org } = await newOrg(t);
    const res = await t.request('PUT', `/v1/orgs/${org.id}/agent-instructions`, { token: admin.token, body: { instructions: nested(60) } });
    assert.equal(res.status, 400, JSON.stringify(res.body).slice(0, 300));
    assert.match(res.body.error.message, /50 levels/);
  });

  test('a comment with a document nested 10,000 deep: 400, not a stack overflow', LIMIT, async () => {
    const s = await spaceWithPage();
    const res = await t.request('POST', `/v1/spaces/${s.space.id}/comments`, { token: s.admin.token, raw: `{"body":{"document":${nestedJson(10_000)}}}` });
    assert.equal(res.status, 400);
    assert.doesNotMatch(res.body.error.message, /call stack/);
  });

  test('a comment whose markdown nests 2,000 quotes: 400 naming the limit', LIMIT, async () => {
    const s = await spaceWithPage();
    const res = await t.request('POST', `/v1/spaces/${s.space.id}/comments`, { token: s.admin.token, body: { body: { markdown: `${'>'.repeat(2000)} x` } } });
    assert.equal(res.status, 400);
    assert.match(res.body.error.message, /nested more than 100/);
  });

  test('a change-request description nested 60 deep: 400', LIMIT, async () => {
    const s = await spaceWithPage();
    const res = await t.request('PATCH', `/v1/spaces/${s.space.id}/change-requests/${s.cr.id}`, { token: s.editor.token, body: { description: nested(60) } });
    assert.equal(res.status, 400);
    assert.match(res.body.error.message, /50 levels/);
  });

  test('a page document nested within the limits is accepted', LIMIT, async () => {
    const s = await spaceWithPage();
    const res = await edit(s, [{ operation: 'update_page', page: s.page.id, document: { document: nested(10) } }]);
    assert.equal(res.status, 200, JSON.stringify(res.body).slice(0, 300));
  });
});

describe('large pages through the real server process', () => {
  // bin/folio registers its TypeScript loader in code, which worker threads do not inherit: a
  // conversion worker that could not load once ended the whole process on the first large page.
  test('bin/folio serve converts a large page on a worker thread and keeps serving', { timeout: 120_000 }, async () => {
    const db = await freshDatabaseConfig(undefined, { migrated: true });
    const env = folioEnv(db.config.databaseUrl ? { DATABASE_URL: db.config.databaseUrl } : { DATA_DIR: db.config.dataDir! });
    const made = await runCli(['users', 'create', '--email', 'large.pages@example.com', '--name', 'Lara'], env);
    assert.equal(made.code, 0, made.stderr);
    const { token } = JSON.parse(made.stdout) as { token: string };
    const server = await serve(env);
    try {
      const api = new GitBookAPI({ authToken: token, endpoint: server.url, serviceBinding: { fetch: validatingFetch } as never });
      const { data: org } = await api.orgs.createOrganization({ title: 'Large pages' });
      const { data: space } = await api.orgs.createSpace(org.id, { title: 'Docs' });
      const { data: cr } = await api.spaces.createChangeRequest(space.id, { subject: 'big' });
      const markdown = Array.from({ length: 2_000 }, (_, i) => `## Part ${i}\n\nParagraph ${i} of a page well over the inline size.`).join('\n\n');
      await api.spaces.updateChangeRequestContent(space.id, cr.id, {
        changes: [{ operation: 'insert_page', title: 'Big', document: { markdown } }] as never,
      });
      const { data: tree } = await api.spaces.listPagesInChangeRequest(space.id, cr.id);
      const { data: page } = await api.spaces.getPageInChangeRequestById(space.id, cr.id, tree.pages[0]!.id, { format: 'document' });
      assert.equal((page as { document: { nodes: unknown[] } }).document.nodes.length, 4_000);
      await api.spaces.mergeChangeRequest(space.id, cr.id);
      const { data: found } = await api.spaces.searchSpaceContent(space.id, { query: 'Paragraph 1999' });
      assert.ok(found.items.length > 0);
      assert.equal((await fetch(`${server.url}/healthz`)).status, 200);
    } finally {
      await server.stop();
      await db.cleanup();
    }
  });
});
