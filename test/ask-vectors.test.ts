import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import { after, before, test } from 'node:test';
import { sql } from 'kysely';
import { grantDirect, mergePages, newOrg, newMember, newSpace, newSite, pagesChanges, mergeChanges } from './support/factories.ts';
import { startTestServer, type TestServer, type TestUser } from './support/server.ts';
import { settleJobs } from './support/wait.ts';
import { queueStaleEmbeddings } from '../src/ask/vectors.ts';

/**
 * Ask with vector retrieval: a fake OpenAI-compatible engine on 127.0.0.1 serves `/embeddings`
 * (vectors from a small bag of concepts, so "erase" and "delete" are near although no search
 * stems one into the other) and `/chat/completions` (recording what it is sent). A question whose
 * words are not in the page finds it only with embeddings; only readable text reaches the chat
 * model; an edit re-embeds only the section that changed; an engine failure fails the job, not
 * the edit.
 */

/** Words of one concept share a dimension; other words fall into hashed dimensions. */
const CONCEPTS = [
  ['delete', 'deleting', 'remove', 'removal', 'erase', 'erasing', 'purge', 'retire', 'retiring'],
  ['workspace', 'workspaces', 'project', 'projects'],
  ['invoice', 'invoices', 'billing', 'bill', 'payment', 'charged'],
  ['monthly', 'month', 'weekly', 'week', 'often'],
  ['cancel', 'terminate', 'subscription', 'plan'],
];
const HASHED = 16;
const STOP = new Set(['how', 'can', 'the', 'and', 'with', 'its', 'you', 'your', 'what', 'does', 'from', 'for', 'this', 'that', 'are', 'all']);

function fakeVector(text: string): number[] {
  const v = new Array(CONCEPTS.length + HASHED).fill(0);
  for (const word of text.toLowerCase().match(/[a-z0-9-]+/g) ?? []) {
    if (word.length < 3 || STOP.has(word)) continue;
    const concept = CONCEPTS.findIndex((c) => c.includes(word));
    if (concept >= 0) v[concept] += 3;
    else v[CONCEPTS.length + (createHash('md5').update(word).digest()[0]! % HASHED)] += 1;
  }
  return v;
}

interface FakeEngine {
  url: string;
  server: Server;
  /** Every text sent to /embeddings. */
  embedded: string[];
  /** The user messages sent to /chat/completions. */
  prompts: string[];
  /** When set, /embeddings answers 503. */
  failing: boolean;
}

async function fakeEngine(): Promise<FakeEngine> {
  const engine: FakeEngine = { url: '', server: undefined as never, embedded: [], prompts: [], failing: false };
  engine.server = createServer((req, res) => {
    let body = '';
    req.on('data', (c) => (body += c));
    req.on('end', () => {
      const parsed = JSON.parse(body);
      if (req.headers.authorization !== 'Bearer sk-test') return void res.writeHead(401).end();
      if (req.url === '/v1/embeddings' && parsed.model === 'fake-embed') {
        if (engine.failing) return void res.writeHead(503, { 'content-type': 'application/json' }).end('{"error":{"message":"overloaded"}}');
        const inputs: string[] = Array.isArray(parsed.input) ? parsed.input : [parsed.input];
        engine.embedded.push(...inputs);
        res.writeHead(200, { 'content-type': 'application/json' });
        // Reversed order with indexes: the client must sort by index.
        return void res.end(JSON.stringify({ data: inputs.map((text, index) => ({ index, embedding: fakeVector(text) })).reverse() }));
      }
      if (req.url === '/v1/chat/completions' && parsed.model === 'fake-chat') {
        engine.prompts.push(parsed.messages.filter((m: { role: string }) => m.role === 'user').map((m: { content: string }) => m.content).join('\n'));
        res.writeHead(200, { 'content-type': 'text/event-stream' });
        res.write(`data: ${JSON.stringify({ choices: [{ delta: { content: 'Open the settings and choose Delete [1].' } }] })}\n\n`);
        return void res.end('data: [DONE]\n\n');
      }
      res.writeHead(404).end();
    });
  });
  await new Promise<void>((resolve) => engine.server.listen(0, '127.0.0.1', resolve));
  engine.url = `http://127.0.0.1:${(engine.server.address() as { port: number }).port}/v1`;
  return engine;
}

let t: TestServer;
let engine: FakeEngine;
let admin: TestUser;
let guest: TestUser;
let orgId: string;
let handbook: { id: string; pageId: string };
let vaultId: string;

const QUESTION = 'How can I erase my project?';
const HANDBOOK_PAGE = '## Removal\n\nTo delete a workspace open its settings and choose Delete.\n\n## Billing\n\nInvoices arrive monthly.\n';

before(async () => {
  engine = await fakeEngine();
  t = await startTestServer({ aiEngineUrl: engine.url, aiEngineKey: 'sk-test', aiModel: 'fake-chat', aiEmbeddingModel: 'fake-embed', fetchAllowPrivate: true, siteCacheTtlMs: 0 });
  const made = await newOrg(t);
  admin = made.admin;
  orgId = made.org.id;
  const space = await newSpace(admin, orgId, 'Handbook');
  const { pageIds } = await mergePages(t, admin, space.id, pagesChanges([{ title: 'Retiring a workspace', markdown: HANDBOOK_PAGE }]));
  handbook = { id: space.id, pageId: Object.values(pageIds)[0] as string };
  const vault = await newSpace(admin, orgId, 'Vault');
  vaultId = vault.id;
  await mergePages(t, admin, vault.id, pagesChanges([{ title: 'Purge procedure', markdown: 'Erase every project with the code VAULT-SECRET-42.\n' }]));
  await settleJobs(t);
  guest = await newMember(t, orgId, null, 'Guest');
  await grantDirect(t, orgId, { space: handbook.id }, { user: guest.id }, 'read');
});
after(async () => {
  await t?.close();
  await new Promise((resolve) => engine?.server.close(resolve));
});

const sectionRows = (spaceId: string) => t.server.services.db.selectFrom('ask_sections').select(['page_id', 'section_title', 'hash']).where('space_id', '=', spaceId).orderBy('section_title').execute();

test('merged pages are embedded section by section in the background', async () => {
  const rows = await sectionRows(handbook.id);
  assert.deepEqual(rows.map((r) => r.section_title), ['Billing', 'Removal']);
  assert.ok(engine.embedded.some((text) => text.startsWith('Retiring a workspace › Removal\n\nTo delete a workspace')), engine.embedded.join(' | '));
  assert.equal((await sectionRows(vaultId)).length, 1);
});

test('a question whose words are not in the page finds it only with embeddings', async () => {
  const config = t.server.services.config;
  engine.prompts.length = 0;
  const { data } = await guest.api.orgs.askInOrganization(orgId, { query: QUESTION }, { format: 'markdown' });
  assert.deepEqual(
    data.answer!.sources.map((s) => s.type === 'page' && [s.space, s.page]),
    [[handbook.id, handbook.pageId]],
  );
  assert.equal(engine.prompts.length, 1);
  assert.match(engine.prompts[0]!, /To delete a workspace open its settings/);
  assert.doesNotMatch(engine.prompts[0]!, /VAULT-SECRET-42|Purge procedure/, 'nothing of a space the guest cannot read reaches the model');

  // The same question without an embedding model: search alone finds no readable page.
  const model = config.aiEmbeddingModel;
  config.aiEmbeddingModel = undefined;
  try {
    engine.prompts.length = 0;
    const { data: without } = await guest.api.orgs.askInOrganization(orgId, { query: QUESTION }, { format: 'markdown' });
    assert.deepEqual(without.answer!.sources, []);
    assert.equal(engine.prompts.length, 0, 'nothing matched: no model is called');
  } finally {
    config.aiEmbeddingModel = model;
  }
});

test('a member never gets a source from a space they cannot read; a reader with both gets both', async () => {
  // The vault's page is the closest of all to the question (it says "erase" and "project"), yet the guest cannot read it.
  const { data } = await guest.api.orgs.askInOrganization(orgId, { query: 'erase project purge' }, { format: 'markdown' });
  assert.ok(data.answer!.sources.every((s) => s.type === 'page' && s.space === handbook.id), JSON.stringify(data.answer!.sources));
  engine.prompts.length = 0;
  const { data: mine } = await admin.api.orgs.askInOrganization(orgId, { query: QUESTION }, { format: 'markdown' });
  const spaces = new Set(mine.answer!.sources.map((s) => s.type === 'page' && s.space));
  assert.ok(spaces.has(vaultId), 'the admin reads the vault: the filter is the caller\'s');
  assert.match(engine.prompts[0]!, /VAULT-SECRET-42/);
});

test("a site's visitor gets passages of what the site shows them only", async () => {
  // Beside the handbook, pages whose vectors are close to the question but that a visitor without
  // claims may not read: a hidden page, and text under a condition they do not meet.
  const extra = await newSpace(admin, orgId, 'Public extras');
  await mergePages(t, admin, extra.id, pagesChanges([
    { title: 'Internal purge', markdown: '---\nhidden: true\n---\n\nErase a project with HIDDEN-TOOL-7.\n' },
    { title: 'Pro corner', markdown: 'For everyone.\n\n{% if visitor.claims.plan === "pro" %}\nErase a project with PRO-ONLY-99.\n{% endif %}\n' },
  ]));
  await settleJobs(t);
  assert.equal((await sectionRows(extra.id)).length, 2, 'both pages are embedded (their whole text)');
  const site = await newSite(admin, orgId, { title: 'Public handbook', visibility: 'public', spaces: [handbook.id, extra.id] });
  const visitor = await t.user('Visitor');
  engine.prompts.length = 0;
  const events = [];
  for await (const e of await visitor.api.orgs.streamAskInSite(orgId, site.id, { question: QUESTION, scope: { mode: 'all' } })) events.push(e as { answer: { sources: { space: string }[] } });
  assert.deepEqual(events.at(-1)!.answer.sources.map((s) => s.space), [handbook.id]);
  assert.match(engine.prompts[0]!, /To delete a workspace/);
  assert.doesNotMatch(engine.prompts[0]!, /VAULT-SECRET-42|HIDDEN-TOOL-7|Internal purge|PRO-ONLY-99|Pro corner/);
});

test('an edit re-embeds only the section whose text changed', async () => {
  const before = await sectionRows(handbook.id);
  engine.embedded.length = 0;
  await mergeChanges(admin, handbook.id, [{ operation: 'update_page', page: handbook.pageId, document: { markdown: HANDBOOK_PAGE.replace('Invoices arrive monthly.', 'Invoices arrive weekly, by email.') } }]);
  await settleJobs(t);
  assert.deepEqual(engine.embedded, ['Retiring a workspace › Billing\n\nInvoices arrive weekly, by email.']);
  const after = await sectionRows(handbook.id);
  assert.deepEqual(after.map((r) => r.section_title), ['Billing', 'Removal']);
  assert.equal(after.find((r) => r.section_title === 'Removal')!.hash, before.find((r) => r.section_title === 'Removal')!.hash);
  assert.notEqual(after.find((r) => r.section_title === 'Billing')!.hash, before.find((r) => r.section_title === 'Billing')!.hash);
});

test('a page merged after vectors were read (and kept in memory) is found at once', async () => {
  const question = 'How do I cancel my plan?';
  const { data: before } = await guest.api.orgs.askInOrganization(orgId, { query: question }, { format: 'markdown' });
  assert.deepEqual(before.answer!.sources, [], 'no section shares anything with the question yet');
  const { pageIds } = await mergePages(t, admin, handbook.id, pagesChanges([{ title: 'Leaving', markdown: 'Terminate the subscription from the organization settings.\n' }]));
  await settleJobs(t);
  const { data: after } = await guest.api.orgs.askInOrganization(orgId, { query: question }, { format: 'markdown' });
  assert.deepEqual(
    after.answer!.sources.map((s) => s.type === 'page' && s.page),
    [Object.values(pageIds)[0]],
  );
});

test('a copied space reuses the vectors of its texts; a start embeds what is missing', async () => {
  engine.embedded.length = 0;
  const res = await t.request('POST', `/v1/spaces/${handbook.id}/duplicate`, { token: admin.token });
  assert.ok(res.status < 300, JSON.stringify(res.body));
  const copy = (res.body as { id: string }).id;
  await settleJobs(t);
  assert.deepEqual((await sectionRows(copy)).map((r) => r.hash), (await sectionRows(handbook.id)).map((r) => r.hash));
  assert.deepEqual(engine.embedded, [], 'no text of a copy is sent again');

  // Vectors lost (a job that failed for good, a model changed): the pass at start embeds what is missing, and only that.
  const db = t.server.services.db;
  await db.deleteFrom('ask_sections').where('space_id', 'in', [handbook.id, copy]).where('section_title', '=', 'Removal').execute();
  await db.deleteFrom('ask_embedding_state').where('space_id', 'in', [handbook.id, copy]).execute();
  const queued = await queueStaleEmbeddings(db, t.server.services.jobs, 'fake-embed');
  assert.ok(queued >= 2, `${queued} spaces queued`);
  assert.equal(await queueStaleEmbeddings(db, t.server.services.jobs, 'fake-embed'), 0, 'not queued twice');
  await settleJobs(t);
  assert.deepEqual(engine.embedded, ['Retiring a workspace › Removal\n\nTo delete a workspace open its settings and choose Delete.']);
  assert.ok((await sectionRows(handbook.id)).some((r) => r.section_title === 'Removal'));
  assert.ok((await sectionRows(copy)).some((r) => r.section_title === 'Removal'));
  assert.equal(await queueStaleEmbeddings(db, t.server.services.jobs, 'fake-embed'), 0, 'every space is up to date');
});

test('an engine failure fails the embedding job, not the edit, and Ask answers from search meanwhile', async () => {
  engine.failing = true;
  try {
    const space = await newSpace(admin, orgId, 'Later');
    const { pageIds } = await mergePages(t, admin, space.id, pagesChanges([{ title: 'Archiving', markdown: 'Archive a workspace from its menu.\n' }]));
    assert.equal(Object.keys(pageIds).length, 1, 'the merge went through');
    await settleJobs(t);
    const job = await t.server.services.db.selectFrom('jobs').select(['status', 'last_error', 'attempts']).where('type', '=', 'ask.embed').where(sql`payload->>'spaceId'`, '=', space.id).orderBy('id', 'desc').executeTakeFirst();
    assert.ok(job, 'an embedding job was queued');
    assert.match(job!.last_error ?? '', /503|overloaded/);
    assert.equal((await sectionRows(space.id)).length, 0);
    // The question cannot be embedded either: search alone answers.
    const { data } = await admin.api.orgs.askInOrganization(orgId, { query: 'archive a workspace' }, { format: 'markdown' });
    assert.ok(data.answer!.sources.some((s) => s.type === 'page' && s.space === space.id));
  } finally {
    engine.failing = false;
  }
});
