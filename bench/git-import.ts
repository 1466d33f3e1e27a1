/**
 * Benchmark: a git import must grow linearly with the repository. Repositories of N and 2N pages
 * (N = 2,000 by default: 10 sections of 10 chapters, the pages spread below the chapters, a
 * SUMMARY.md, front matter on every page) are served by a real `git http-backend` on 127.0.0.1 and
 * imported through the API (POST /git/import, then the background job to its end: fetch, read,
 * convert, write the revision, re-index search). Baseline, in the same run: a bulk insert of the
 * same pages' rows (documents and content-tree nodes, written straight through the content model).
 *
 * Prints the medians, the ratios import(2N)/import(N) (goal: at most 2.3) and import/bulk insert
 * (goal: at most 3), and the peak memory (RSS) of the process.
 *
 *   npm run bench:git                                                   # embedded database (PGlite)
 *   BENCH_DATABASE_URL=postgres://… npm run bench:git                   # PostgreSQL
 *   BENCH_PAGES=2000 BENCH_ROUNDS=3
 */
import { generateNKeysBetween } from 'fractional-indexing';
import { ContentEditor, EMPTY, putDocuments, type PageEntry } from '../src/content/model.ts';
import { loadConfig } from '../src/platform/config.ts';
import { newId } from '../src/platform/ids.ts';
import { startServer } from '../src/server.ts';
import { createUser } from '../src/users/service.ts';
import { startGitServer } from '../test/support/git-server.ts';
import { apiCaller, freshDatabaseConfig } from './support.ts';

const N = Number(process.env.BENCH_PAGES ?? 2000);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);

let peakRss = 0;
const sampler = setInterval(() => (peakRss = Math.max(peakRss, process.memoryUsage().rss)), 20);
sampler.unref();

interface GenPage {
  path: string;
  title: string;
  parent: number | null;
  text: string;
}

/** The pages of a repository of `count` pages; `salt` makes every run's documents new to the database. */
function generate(count: number, salt: string): GenPage[] {
  const pages: GenPage[] = [];
  const body = (title: string) =>
    `---\ndescription: About ${title}\n---\n\n# ${title}\n\n${title} (${salt}): the first paragraph of this page.\n\nA second paragraph, with **bold** text and a [link](https://example.com).\n\n- a list\n- of items\n`;
  for (let s = 0; s < 10 && pages.length < count; s++) pages.push({ path: `section-${s}/README.md`, title: `Section ${s}`, parent: null, text: body(`Section ${s}`) });
  const sections = pages.length;
  for (let s = 0; s < sections; s++) {
    for (let c = 0; c < 10 && pages.length < count; c++) pages.push({ path: `section-${s}/chapter-${c}/README.md`, title: `Chapter ${s}.${c}`, parent: s, text: body(`Chapter ${s}.${c}`) });
  }
  const chapters = pages.length - sections;
  for (let i = 0; pages.length < count; i++) {
    const chapter = sections + (i % chapters);
    const dir = pages[chapter]!.path.replace(/README\.md$/, '');
    pages.push({ path: `${dir}page-${i}.md`, title: `Page ${i}`, parent: chapter, text: body(`Page ${i}`) });
  }
  return pages;
}

function summary(pages: GenPage[]): string {
  const children = new Map<number | null, number[]>();
  pages.forEach((p, i) => children.set(p.parent, [...(children.get(p.parent) ?? []), i]));
  const lines = ['# Table of contents', ''];
  const walk = (parent: number | null, depth: number) => {
    for (const i of children.get(parent) ?? []) {
      lines.push(`${'  '.repeat(depth)}* [${pages[i]!.title}](${pages[i]!.path})`);
      walk(i, depth + 1);
    }
  };
  walk(null, 0);
  return `${lines.join('\n')}\n`;
}

async function main() {
  const db = await freshDatabaseConfig(process.env.BENCH_DATABASE_URL);
  const server = await startServer(
    { ...loadConfig({}), port: 0, logLevel: process.env.BENCH_LOG_LEVEL ?? 'silent', rateLimitMax: 1e9, databaseUrl: undefined, jobPollMs: 20, fetchAllowPrivate: true, ...db.config },
    { purpose: 'bench' },
  );
  const git = await startGitServer('bench', 'bench-pass');
  try {
    const store = server.services.db;
    const { token } = await createUser(store, { email: `bench.${Date.now()}@example.com`, name: 'Bench' });
    const call = apiCaller(server.url, token);
    const org = await call('POST', '/v1/orgs', { title: 'Bench' });

    const importOnce = async (count: number, round: number) => {
      const name = `repo-${count}-${round}`;
      git.createRepo(name);
      const pages = generate(count, name);
      git.commit(name, { ...Object.fromEntries(pages.map((p) => [p.path, p.text])), 'SUMMARY.md': summary(pages) }, 'pages');
      const space = await call('POST', `/v1/orgs/${org.id}/spaces`, { title: name });
      const startedAt = Date.now();
      const start = performance.now();
      await call('POST', `/v1/spaces/${space.id}/git/import`, { url: git.urlOf(name), ref: 'refs/heads/main' });
      // The job then re-indexes search for the new pages (as after a merge), still in the job.
      for (;;) {
        const pending = await store.selectFrom('jobs').select('id').where('type', '=', 'git.import').where('status', 'in', ['queued', 'running']).execute();
        if (!pending.length) break;
        await new Promise((r) => setTimeout(r, 10));
      }
      const total = performance.now() - start;
      // Imported: fetch, read, convert, write and commit the revision (its creation time, stamped in
      // the committing transaction; polling would be delayed by the re-index on the same thread).
      const row = await store.selectFrom('spaces').innerJoin('revisions', 'revisions.id', 'spaces.revision_id').select('revisions.created_at').where('spaces.id', '=', space.id).executeTakeFirstOrThrow();
      const ms = row.created_at.getTime() - startedAt;
      console.log(`  ${count} pages: space on the imported revision after ${(ms / 1000).toFixed(2)} s, job done (search re-indexed) after ${(total / 1000).toFixed(2)} s`);
      const info = await call('GET', `/v1/spaces/${space.id}/git/info`);
      if (info.operation?.state !== 'success') throw new Error(`import failed: ${info.operation?.error}`);
      return ms;
    };

    // The same pages' rows written directly: documents, then one commit of the content tree.
    const bulkOnce = async (count: number, round: number) => {
      const pages = generate(count, `bulk-${count}-${round}`);
      const space = await call('POST', `/v1/orgs/${org.id}/spaces`, { title: `bulk ${count} ${round}` });
      const start = performance.now();
      const docs = await putDocuments(store, space.id, pages.map((p) => p.text));
      const now = new Date().toISOString();
      const ids = pages.map(() => newId());
      const editor = new ContentEditor(store, EMPTY);
      const children = new Map<string | null, string[]>();
      pages.forEach((p, i) => {
        const parent = p.parent === null ? null : ids[p.parent]!;
        children.set(parent, [...(children.get(parent) ?? []), ids[i]!]);
      });
      for (const [parent, list] of children) {
        const keys = generateNKeysBetween(null, null, list.length);
        list.forEach((id, i) => {
          const index = ids.indexOf(id);
          const entry: PageEntry = { id, type: 'document', title: pages[index]!.title, slug: `p-${index}`, parent, pos: keys[i]!, doc: docs[index]!, createdAt: now, updatedAt: now };
          editor.putPage(entry);
        });
        await editor.setChildren(parent, list);
      }
      await editor.commit(store);
      return performance.now() - start;
    };

    const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
    const times = { import: new Map<number, number[]>(), bulk: new Map<number, number[]>() };
    await importOnce(200, -1); // warm-up
    for (let round = 0; round < ROUNDS; round++) {
      for (const count of [N, 2 * N]) {
        const imp = await importOnce(count, round);
        const bulk = await bulkOnce(count, round);
        (times.import.get(count) ?? times.import.set(count, []).get(count)!).push(imp);
        (times.bulk.get(count) ?? times.bulk.set(count, []).get(count)!).push(bulk);
        console.log(`round ${round}: ${count} pages: import ${(imp / 1000).toFixed(2)} s, bulk insert ${(bulk / 1000).toFixed(2)} s`);
      }
    }
    const imp1 = median(times.import.get(N)!);
    const imp2 = median(times.import.get(2 * N)!);
    const bulk2 = median(times.bulk.get(2 * N)!);
    const bulk1 = median(times.bulk.get(N)!);
    console.log(`\nmedian import: ${N} pages ${(imp1 / 1000).toFixed(2)} s, ${2 * N} pages ${(imp2 / 1000).toFixed(2)} s`);
    console.log(`median bulk insert: ${N} pages ${(bulk1 / 1000).toFixed(2)} s, ${2 * N} pages ${(bulk2 / 1000).toFixed(2)} s`);
    console.log(`ratio import ${2 * N}/${N}: ${(imp2 / imp1).toFixed(2)} (goal: at most 2.3)`);
    console.log(`ratio import/bulk insert: ${(imp1 / bulk1).toFixed(2)} at ${N}, ${(imp2 / bulk2).toFixed(2)} at ${2 * N} (goal: at most 3)`);
    console.log(`peak memory (RSS of this process; git runs in child processes): ${(peakRss / 1024 / 1024).toFixed(0)} MB`);
  } finally {
    await git.close();
    await server.close();
    await db.cleanup();
  }
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
