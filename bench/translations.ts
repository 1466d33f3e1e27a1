/**
 * Benchmark: re-running the translation of a 1,000-page space after a one-page edit must send only
 * that page's changed segments to the engine and take at most 1.5× the time of translating one
 * page alone (issue 15). Two source spaces are built in the same run (1,000 pages, and 1 page of
 * the same shape), each translated once in full; then every round edits one page of each space
 * through a merged change request and times a run of each translation, from `POST …/run` until the
 * translation reports the run done (job pick-up, tree diff, translation memory, engine, change
 * request, merge). The engine is a LibreTranslate-compatible fake on 127.0.0.1 that counts texts.
 *
 *   npm run bench:translations                                                # embedded database (PGlite)
 *   BENCH_DATABASE_URL=postgres://… npm run bench:translations                # PostgreSQL
 *   BENCH_ROUNDS=10 BENCH_WARMUP=2                                            # rounds
 */
import { createServer } from 'node:http';
import { generateNKeysBetween } from 'fractional-indexing';
import { ContentEditor, EMPTY, putDocuments, type PageEntry } from '../src/content/model.ts';
import { loadConfig } from '../src/platform/config.ts';
import { json, type Db } from '../src/platform/db/database.ts';
import { newId } from '../src/platform/ids.ts';
import { startServer } from '../src/server.ts';
import { createUser } from '../src/users/service.ts';
import { freshDatabaseConfig, percentile } from './support.ts';

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 10);
const WARMUP = Number(process.env.BENCH_WARMUP ?? 2);

const body = (title: string, n: number, space: number) =>
  `${title}: the first paragraph of this page in space ${space}, revision ${n}.\n\n## Details\n\nA second paragraph, with **bold** text, \`inline code\` and a [link](https://example.com).\n\n- a list\n- of items\n\n\`\`\`js\nconsole.log("code stays");\n\`\`\`\n`;

/** Writes `count` pages (10 sections, their chapters, then pages below the chapters) as one revision. */
async function fillSpace(db: Db, space: { id: string; organization_id: string; revision_id: string }, count: number, userId: string): Promise<string[]> {
  const editor = new ContentEditor(db, EMPTY);
  const now = new Date().toISOString();
  const entries: Omit<PageEntry, 'doc' | 'pos'>[] = [];
  const children = new Map<string | null, string[]>();
  const add = (parent: string | null, title: string, slug: string) => {
    const id = newId();
    entries.push({ id, type: 'document', title, slug, parent, createdAt: now, updatedAt: now });
    children.set(parent, [...(children.get(parent) ?? []), id]);
    return id;
  };
  if (count === 1) add(null, 'Page 0', 'page-0');
  else {
    const sections = Array.from({ length: 10 }, (_, s) => add(null, `Section ${s}`, `section-${s}`));
    const chapters = sections.flatMap((section, s) => Array.from({ length: 10 }, (_, c) => add(section, `Chapter ${s}.${c}`, `chapter-${c}`)));
    for (let i = 0; entries.length < count; i++) add(chapters[i % chapters.length]!, `Page ${i}`, `page-${i}`);
  }
  const docs = await putDocuments(db, space.id, entries.map((e) => body(e.title, 0, count)));
  const byId = new Map(entries.map((e, i) => [e.id, { ...e, doc: docs[i]! }]));
  for (const [parent, ids] of children) {
    const keys = generateNKeysBetween(null, null, ids.length);
    ids.forEach((id, i) => editor.putPage({ ...byId.get(id)!, pos: keys[i]! }));
    await editor.setChildren(parent, ids);
  }
  const root = await editor.commit(db);
  const revision = newId();
  await db
    .insertInto('revisions')
    .values({ id: revision, space_id: space.id, organization_id: space.organization_id, parents: json([space.revision_id]), type: 'edits', root, created_by: userId, created_at: new Date(), message: null })
    .execute();
  await db.updateTable('spaces').set({ revision_id: revision }).where('id', '=', space.id).execute();
  return entries.filter((e) => e.title.startsWith('Page ')).map((e) => e.id);
}

async function main() {
  let texts = 0;
  const engine = createServer((req, res) => {
    let raw = '';
    req.on('data', (c) => (raw += c));
    req.on('end', () => {
      const q: string[] = JSON.parse(raw).q;
      texts += q.length;
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ translatedText: q.map((t) => t.toUpperCase()) }));
    });
  });
  await new Promise<void>((resolve) => engine.listen(0, '127.0.0.1', resolve));
  const engineUrl = `http://127.0.0.1:${(engine.address() as { port: number }).port}`;
  const db = await freshDatabaseConfig(process.env.BENCH_DATABASE_URL);
  const server = await startServer(
    { ...loadConfig({}), port: 0, logLevel: 'silent', rateLimitMax: 1e9, databaseUrl: undefined, jobPollMs: 5, fetchAllowPrivate: true, translationEngine: 'libretranslate', translationEngineUrl: engineUrl, ...db.config },
    { purpose: 'bench' },
  );
  try {
    const store = server.services.db;
    const { user, token } = await createUser(store, { email: `bench.${Date.now()}@example.com`, name: 'Bench' });
    const call = async (method: string, path: string, payload?: unknown) => {
      const headers = { authorization: `Bearer ${token}`, ...(payload !== undefined ? { 'content-type': 'application/json' } : {}) };
      const res = await fetch(server.url + path, { method, headers, ...(payload !== undefined ? { body: JSON.stringify(payload) } : {}) });
      const text = await res.text();
      if (res.status >= 300) throw new Error(`${method} ${path}: ${res.status} ${text}`);
      return text ? JSON.parse(text) : undefined;
    };
    const org = await call('POST', '/v1/orgs', { title: 'Bench' });
    const setups: { size: number; space: { id: string }; pages: string[]; translation: { id: string }; times: number[]; texts: number[] }[] = [];
    for (const size of [1_000, 1]) {
      const space = await call('POST', `/v1/orgs/${org.id}/spaces`, { title: `${size} pages` });
      const row = await store.selectFrom('spaces').selectAll().where('id', '=', space.id).executeTakeFirstOrThrow();
      const pages = await fillSpace(store, row, size, user.id);
      const translation = await call('POST', `/v1/orgs/${org.id}/translations`, { language: 'fr', source: { space: space.id, language: 'en' } });
      setups.push({ size, space, pages, translation, times: [] as number[], texts: [] as number[] });
    }
    const run = async (s: (typeof setups)[number]) => {
      const before = (await call('GET', `/v1/orgs/${org.id}/translations/${s.translation.id}`)).stats.runs;
      const sent = texts;
      const started = performance.now();
      await call('POST', `/v1/orgs/${org.id}/translations/${s.translation.id}/run`);
      for (;;) {
        const current = await call('GET', `/v1/orgs/${org.id}/translations/${s.translation.id}`);
        if (current.stats.runs > before && current.status !== 'running') {
          if (current.error) throw new Error(current.error.message);
          return { ms: performance.now() - started, texts: texts - sent };
        }
        await new Promise((r) => setTimeout(r, 2));
      }
    };
    for (const s of setups) {
      const full = await run(s);
      console.log(`${s.size} page(s): first full run ${full.ms.toFixed(0)} ms, ${full.texts} texts sent`);
    }
    for (let round = 0; round < WARMUP + ROUNDS; round++) {
      for (const s of setups) {
        const page = s.pages[round % s.pages.length]!;
        const { id: cr } = await call('POST', `/v1/spaces/${s.space.id}/change-requests`, { subject: 'Edit' });
        await call('POST', `/v1/spaces/${s.space.id}/change-requests/${cr}/content`, { changes: [{ operation: 'update_page', page, document: { markdown: body('Edited page', round + 1, s.size) } }] });
        await call('POST', `/v1/spaces/${s.space.id}/change-requests/${cr}/merge`);
        const result = await run(s);
        if (round >= WARMUP) {
          s.times.push(result.ms);
          s.texts.push(result.texts);
        }
      }
    }
    const p50 = (xs: number[]) => percentile([...xs].sort((a, b) => a - b), 50);
    const p95 = (xs: number[]) => percentile([...xs].sort((a, b) => a - b), 95);
    for (const s of setups) {
      console.log(`${String(s.size).padStart(5)} page(s), re-run after a one-page edit: p50 ${p50(s.times).toFixed(0)} ms, p95 ${p95(s.times).toFixed(0)} ms, texts sent per run: ${[...new Set(s.texts)].join(', ')}`);
    }
    const ratio = p50(setups[0]!.times) / p50(setups[1]!.times);
    const maxTexts = Math.max(...setups[0]!.texts);
    console.log(`ratio 1,000 pages / 1 page (p50): ${ratio.toFixed(2)} (goal: at most 1.5)`);
    console.log(`texts sent by a re-run of the 1,000-page space: at most ${maxTexts} (the edited page changes one paragraph)`);
    if (ratio > 1.5 || maxTexts > 2) process.exitCode = 1;
  } finally {
    await server.close();
    await db.cleanup();
    engine.close();
  }
}

await main();
