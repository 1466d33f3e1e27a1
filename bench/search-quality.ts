/**
 * Quality of search (issue 27): MRR@10 and recall@10 of `GET /v1/spaces/{id}/search` over real
 * documentation, with labelled queries taken from the corpus itself, not written for the test.
 *
 * Corpora, read at run time from the mirrors under /work/.mirror (their text is not copied into
 * this repository; a corpus whose mirror is absent is skipped with a message):
 *
 *   en   GitbookIO/public-docs (HEAD): GitBook's own documentation, English
 *   fr   carlospolop/hacktricks, branch `fr`: HackTricks translated to French
 *   ja   carlospolop/hacktricks, branch `jp`: HackTricks translated to Japanese
 *
 * Each corpus is imported as one space (in its language) of at most BENCH_PAGES pages (a fixed,
 * evenly spread sample of the markdown files). Queries and the pages that answer them:
 *
 *   title      a page's title (its `# ` heading)        → the pages with that title
 *   heading    a `##`/`###` heading found on ≤ 3 pages  → the pages with that heading (or title)
 *   faq        the questions of GitBook's FAQ pages     → the page asking it (en only)
 *   typo       a title with one edit (deleted, swapped, doubled or replaced letter) in its longest
 *              word of 5+ letters                        → as the title
 *   prefix     a title whose last word is cut to 60% (typing) → as the title
 *
 * MRR@10: mean of 1/rank of the first answering page in the top 10 (0 if none); recall@10: share of
 * queries with an answering page in the top 10. The row "before" runs the same queries the way
 * search worked before issue 27 (english configuration for every space, websearch_to_tsquery,
 * no segmentation, no typos or prefixes), on the same pages.
 *
 *   npm run bench:search-quality                                  # embedded database (PGlite)
 *   BENCH_DATABASE_URL=postgres://… npm run bench:search-quality  # PostgreSQL
 *   BENCH_PAGES=300 (pages per corpus), BENCH_CORPORA=en,fr,ja, BENCH_VERBOSE=1 (misses listed)
 */
import { existsSync } from 'node:fs';
import { sql } from 'kysely';
import { loadConfig } from '../src/platform/config.ts';
import { startServer } from '../src/server.ts';
import { createUser } from '../src/users/service.ts';
import { bulkPages } from '../test/support/content.ts';
import { apiCaller, freshDatabaseConfig } from './support.ts';
import { git, pageOf, readBlobs, type Page } from './corpus.ts';

const PAGES = Number(process.env.BENCH_PAGES ?? 300);
const VERBOSE = process.env.BENCH_VERBOSE === '1';
const WANTED = new Set((process.env.BENCH_CORPORA ?? 'en,fr,ja').split(','));
const MAX_QUERIES = 250;

interface Corpus {
  key: string;
  label: string;
  language: string;
  gitDir: string;
  ref: string;
  /** Markdown files of the corpus (paths in the repository). */
  include: (path: string) => boolean;
  faq?: (path: string) => boolean;
}

const CORPORA: Corpus[] = [
  {
    key: 'en',
    label: 'GitbookIO/public-docs (en)',
    language: 'en',
    gitDir: '/work/.mirror/GitbookIO+public-docs/repo',
    ref: 'HEAD',
    include: (p) => /^(documentation|guides|developers|policies)\//.test(p) && !p.endsWith('SUMMARY.md') && !p.includes('/.gitbook/'),
    faq: (p) => /faq/i.test(p),
  },
  ...(['fr', 'ja'] as const).map((language) => ({
    key: language,
    label: `carlospolop/hacktricks@${language === 'ja' ? 'jp' : 'fr'} (${language})`,
    language,
    gitDir: '/work/.mirror/carlospolop+hacktricks/repo',
    ref: language === 'ja' ? 'jp' : 'fr',
    include: (p: string) => p.endsWith('.md') && !/(^|\/)(SUMMARY|LICENSE)\.md$/.test(p) && !p.startsWith('.') && !p.includes('/.gitbook/'),
  })),
];

type Query = { kind: string; text: string; answers: Set<number> };

function loadCorpus(corpus: Corpus): Page[] | undefined {
  if (!existsSync(corpus.gitDir)) return undefined;
  let files: string[];
  try {
    files = git(corpus.gitDir, ['ls-tree', '-r', '--name-only', corpus.ref]).toString().split('\n').filter((p) => p.endsWith('.md') && corpus.include(p)).sort();
  } catch {
    return undefined;
  }
  // An even spread over the sorted paths, so every part of the docs is represented.
  const step = Math.max(1, files.length / PAGES);
  const chosen = [...new Set(Array.from({ length: Math.min(PAGES, files.length) }, (_, i) => files[Math.floor(i * step)]!))];
  const faq = corpus.faq ? files.filter(corpus.faq).filter((f) => !chosen.includes(f)) : [];
  const paths = [...chosen, ...faq];
  return readBlobs(corpus.gitDir, corpus.ref, paths)
    .map((text, i) => pageOf(paths[i]!, text))
    .filter((p): p is Page => !!p);
}

// Deterministic pseudo-random choices.
let seed = 27;
const rand = () => (seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;

/** One edit in the longest word of 5+ letters (not its first letter), or undefined if none. */
function typo(text: string): string | undefined {
  const words = [...text.matchAll(/\p{L}{5,}/gu)].filter((m) => /^[\p{Script=Latin}]+$/u.test(m[0]));
  if (!words.length) return undefined;
  const word = words.reduce((a, b) => (b[0].length > a[0].length ? b : a));
  const w = word[0];
  const at = 1 + Math.floor(rand() * (w.length - 2));
  const kind = Math.floor(rand() * 4);
  const next = kind === 0 ? w.slice(0, at) + w.slice(at + 1) : kind === 1 ? w.slice(0, at) + w[at + 1] + w[at] + w.slice(at + 2) : kind === 2 ? w.slice(0, at) + w[at] + w.slice(at) : w.slice(0, at) + 'aeiou'[Math.floor(rand() * 5)] + w.slice(at + 1);
  if (next.toLowerCase() === w.toLowerCase()) return undefined;
  return text.slice(0, word.index) + next + text.slice(word.index! + w.length);
}

/** The title with its last word cut to 60%, as while typing (words of 6+ Latin letters only). */
function prefix(text: string): string | undefined {
  const m = /(\p{Script=Latin}{6,})\s*$/u.exec(text);
  if (!m) return undefined;
  return text.slice(0, m.index) + m[1]!.slice(0, Math.ceil(m[1]!.length * 0.6));
}

const norm = (s: string) => s.toLowerCase().replace(/\s+/g, ' ').trim();

function queriesOf(pages: Page[], corpus: Corpus): Query[] {
  const byTitle = new Map<string, Set<number>>();
  const byHeading = new Map<string, Set<number>>();
  pages.forEach((p, i) => {
    byTitle.set(norm(p.title), (byTitle.get(norm(p.title)) ?? new Set()).add(i));
    for (const h of p.headings) byHeading.set(norm(h), (byHeading.get(norm(h)) ?? new Set()).add(i));
  });
  const spread = <T>(list: T[]) => {
    const step = Math.max(1, list.length / MAX_QUERIES);
    return [...new Set(Array.from({ length: Math.min(MAX_QUERIES, list.length) }, (_, i) => list[Math.floor(i * step)]!))];
  };
  const queries: Query[] = [];
  const titles = spread([...byTitle.entries()]);
  for (const [title, answers] of titles) {
    const page = pages[[...answers][0]!]!;
    queries.push({ kind: 'title', text: page.title, answers });
    const t = typo(page.title);
    if (t) queries.push({ kind: 'typo', text: t, answers });
    const p = prefix(page.title);
    if (p && norm(p) !== title) queries.push({ kind: 'prefix', text: p, answers });
  }
  const isFaq = (i: number) => !!corpus.faq?.(pages[i]!.path);
  const headings = [...byHeading.entries()].filter(([h, on]) => on.size <= 3 && h.length >= 4);
  for (const [heading, on] of spread(headings.filter(([, on]) => ![...on].some(isFaq)))) {
    queries.push({ kind: 'heading', text: [...on].map((i) => pages[i]!.headings.find((h) => norm(h) === heading)!)[0]!, answers: new Set([...on, ...(byTitle.get(heading) ?? [])]) });
  }
  for (const [heading, on] of headings.filter(([, on]) => [...on].some(isFaq))) {
    if (heading.includes('?')) queries.push({ kind: 'faq', text: [...on].map((i) => pages[i]!.headings.find((h) => norm(h) === heading)!)[0]!, answers: on });
  }
  return queries;
}

type Scores = { n: number; rr: number; found: number };
const add = (s: Scores | undefined, rank: number | undefined): Scores => ({ n: (s?.n ?? 0) + 1, rr: (s?.rr ?? 0) + (rank ? 1 / rank : 0), found: (s?.found ?? 0) + (rank ? 1 : 0) });

async function main() {
  const db = await freshDatabaseConfig(process.env.BENCH_DATABASE_URL);
  const server = await startServer({ ...loadConfig({}), port: 0, logLevel: 'silent', rateLimitMax: 1e9, databaseUrl: undefined, ...db.config }, { purpose: 'bench' });
  const table: string[][] = [];
  try {
    const services = server.services;
    const { token } = await createUser(services.db, { email: `quality.${Date.now()}@example.com`, name: 'Bench' });
    const call = apiCaller(server.url, token);
    const org = await call('POST', '/v1/orgs', { title: 'Search quality' });
    for (const corpus of CORPORA.filter((c) => WANTED.has(c.key))) {
      const pages = loadCorpus(corpus);
      if (!pages) {
        console.log(`skipped ${corpus.label}: no mirror at ${corpus.gitDir} (or no ${corpus.ref})`);
        continue;
      }
      const space = await call('POST', `/v1/orgs/${org.id}/spaces`, { title: corpus.label, language: corpus.language });
      const started = performance.now();
      const ids = await bulkPages(services.db, { id: space.id, organization_id: org.id }, pages.length, 0, (n) => ({ title: pages[n]!.title, markdown: pages[n]!.markdown, description: pages[n]!.description }));
      const indexSeconds = (performance.now() - started) / 1000;
      const index = new Map(ids.map((id, i) => [id, i]));
      // The tsvectors search used before issue 27, computed once from the same rows' text.
      await sql`DROP TABLE IF EXISTS bench_before`.execute(services.db);
      await sql`
        CREATE TABLE bench_before AS
        SELECT page_id, title, setweight(to_tsvector('english', title), 'A') || setweight(to_tsvector('english', description), 'B') ||
          setweight(to_tsvector('english', (SELECT coalesce(string_agg((s->>'title') || ' ' || (s->>'body'), ' '), '') FROM jsonb_array_elements(sections) s)), 'C') AS tsv
        FROM search_pages WHERE space_id = ${space.id}`.execute(services.db);
      const queries = queriesOf(pages, corpus);
      const now = new Map<string, Scores>();
      const before = new Map<string, Scores>();
      const times: number[] = [];
      for (const q of queries) {
        const t0 = performance.now();
        const found = await call<{ items: { id: string }[] }>('GET', `/v1/spaces/${space.id}/search?limit=10&query=${encodeURIComponent(q.text.slice(0, 512))}`);
        times.push(performance.now() - t0);
        const rank = found.items.findIndex((item) => q.answers.has(index.get(item.id)!)) + 1 || undefined;
        now.set(q.kind, add(now.get(q.kind), rank));
        if (VERBOSE && rank !== 1) console.log(`  ${corpus.key} ${q.kind} rank ${rank ?? '-'}: ${q.text}  → ${found.items.slice(0, 3).map((i) => pages[index.get(i.id)!]!.title).join(' | ')}`);
        // Before issue 27: English stems for every language, no segmentation, no typos or prefixes.
        const old = await sql<{ page_id: string }>`
          SELECT page_id FROM bench_before p, websearch_to_tsquery('english', ${q.text}) q
          WHERE p.tsv @@ q ORDER BY ts_rank(p.tsv, q) DESC, p.title, p.page_id LIMIT 10`.execute(services.db);
        const oldRank = old.rows.findIndex((r) => q.answers.has(index.get(r.page_id)!)) + 1 || undefined;
        before.set(q.kind, add(before.get(q.kind), oldRank));
      }
      times.sort((a, b) => a - b);
      const p95 = times[Math.min(times.length - 1, Math.floor(times.length * 0.95))] ?? 0;
      console.log(`${corpus.label}: ${pages.length} pages indexed in ${indexSeconds.toFixed(1)} s, ${queries.length} queries, p95 ${p95.toFixed(1)} ms`);
      for (const kind of ['title', 'heading', 'faq', 'typo', 'prefix']) {
        const s = now.get(kind);
        if (!s) continue;
        const b = before.get(kind)!;
        table.push([corpus.key, kind, String(s.n), (s.rr / s.n).toFixed(3), (s.found / s.n).toFixed(3), (b.rr / b.n).toFixed(3), (b.found / b.n).toFixed(3)]);
      }
      const all = [...now.values()].reduce((a, s) => ({ n: a.n + s.n, rr: a.rr + s.rr, found: a.found + s.found }), { n: 0, rr: 0, found: 0 });
      const allBefore = [...before.values()].reduce((a, s) => ({ n: a.n + s.n, rr: a.rr + s.rr, found: a.found + s.found }), { n: 0, rr: 0, found: 0 });
      table.push([corpus.key, 'all', String(all.n), (all.rr / all.n).toFixed(3), (all.found / all.n).toFixed(3), (allBefore.rr / allBefore.n).toFixed(3), (allBefore.found / allBefore.n).toFixed(3)]);
    }
    const engine = process.env.BENCH_DATABASE_URL ? 'PostgreSQL' : 'PGlite (embedded)';
    console.log(`\nsearch quality; engine: ${engine}; goals: MRR@10 >= 0.8 and recall@10 >= 0.95 per language, typo recall@10 >= 0.9\n`);
    const head = ['corpus', 'queries', 'n', 'MRR@10', 'recall@10', 'before MRR', 'before recall'];
    const widths = [8, 9, 5, 9, 11, 12, 14];
    console.log(head.map((h, i) => (i < 2 ? h.padEnd(widths[i]!) : h.padStart(widths[i]!))).join(''));
    for (const row of table) console.log(row.map((c, i) => (i < 2 ? c.padEnd(widths[i]!) : c.padStart(widths[i]!))).join(''));
  } finally {
    await server.close();
    await db.cleanup();
  }
}

await main();
