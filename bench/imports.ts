/**
 * Benchmark: an import run of a zipped Markdown folder must finish 1,000 pages in under 2 minutes
 * and grow linearly: 2,000 pages in at most 2.3 times the 1,000-page time. The folder is generated
 * (sections of chapters of pages, each page with a hint, a titled code block, a link to a sibling
 * and, every 25th page, an image), zipped, uploaded with generateStorageUploadURL and imported
 * through startImportRun into a new space; the time is from the start request to the run's
 * completion (the revision written), and to the job's end (search re-indexed).
 *
 *   npm run bench:imports                                   # embedded database (PGlite)
 *   BENCH_DATABASE_URL=postgres://… npm run bench:imports   # PostgreSQL
 *   BENCH_PAGES=1000 BENCH_ROUNDS=1
 */
import { loadConfig } from '../src/platform/config.ts';
import { startServer } from '../src/server.ts';
import { createUser } from '../src/users/service.ts';
import { apiCaller, folderZip, freshDatabaseConfig } from './support.ts';

const N = Number(process.env.BENCH_PAGES ?? 1000);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 1);

let peakRss = 0;
const sampler = setInterval(() => (peakRss = Math.max(peakRss, process.memoryUsage().rss)), 20);
sampler.unref();

/** A page of the generated folder: front matter, a link to a sibling, a hint of each kind, a titled code block. */
const importPage = (salt: string) => (title: string, sibling: string, image: boolean) =>
  `---\ndescription: About ${title}\n---\n\n# ${title}\n\n${title} (${salt}): the first paragraph, with **bold** text and a [sibling](${sibling}).\n\n` +
  `!!! note "Remember"\n    An admonition that becomes a hint.\n\n:::tip\nA Docusaurus tip.\n:::\n\n` +
  '```js title="example.js"\nconsole.log("hello");\n```\n\n- a list\n- of items\n' +
  (image ? `\n![diagram](../../images/diagram.png)\n` : '');

/** The image the generated folder's pages show (its bytes only: imports do not decode it). */
const diagram = (salt: string) => Buffer.concat([Buffer.from([0x89, 0x50, 0x4e, 0x47]), Buffer.from(salt)]);

async function main() {
  const db = await freshDatabaseConfig(process.env.BENCH_DATABASE_URL);
  const server = await startServer(
    { ...loadConfig({}), port: 0, logLevel: process.env.BENCH_LOG_LEVEL ?? 'silent', rateLimitMax: 1e9, databaseUrl: undefined, jobPollMs: 20, ...db.config },
    { purpose: 'bench' },
  );
  server.services.config.publicUrl = server.url;
  try {
    const store = server.services.db;
    const { token } = await createUser(store, { email: `bench.${Date.now()}@example.com`, name: 'Bench' });
    const call = apiCaller(server.url, token);
    const org = await call('POST', '/v1/orgs', { title: 'Bench' });

    const importOnce = async (count: number, round: number) => {
      const name = `import-${count}-${round}`;
      const zip = folderZip(count, name, importPage(name), diagram(name));
      const space = await call('POST', `/v1/orgs/${org.id}/spaces`, { title: name });
      const up = await call('POST', `/v1/orgs/${org.id}/storage/upload`, { file: { name: `${name}.zip`, type: 'application/zip', size: zip.length }, kind: 'import_file' });
      const put = await fetch(up.url, { method: "PUT", body: new Uint8Array(zip), headers: { 'content-type': 'application/zip' } });
      if (!put.ok) throw new Error(`upload: ${put.status} ${await put.text()}`);
      const start = performance.now();
      const run = await call('POST', `/v1/org/${org.id}/imports`, { source: { type: 'file', files: [up.key] }, target: { space: space.id } });
      for (;;) {
        const pending = await store.selectFrom('jobs').select('id').where('type', '=', 'import.run').where('status', 'in', ['queued', 'running']).execute();
        if (!pending.length) break;
        await new Promise((r) => setTimeout(r, 20));
      }
      const total = performance.now() - start;
      const done = await call('GET', `/v1/org/${org.id}/imports/${run.id}`);
      if (done.status !== 'completed') throw new Error(`import ${done.status}: ${done.reason}`);
      const ms = new Date(done.completedAt).getTime() - new Date(done.createdAt).getTime();
      console.log(
        `  ${count} pages (zip ${(zip.length / 1024).toFixed(0)} KiB): completed after ${(ms / 1000).toFixed(2)} s, job done (search re-indexed) after ${(total / 1000).toFixed(2)} s; ` +
          `found ${done.progress.pagesFound}, converted ${done.progress.pagesConverted}, failed ${done.progress.pagesFailed}, ${done.warnings.length} warnings`,
      );
      return total;
    };

    const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
    const times = new Map<number, number[]>();
    await importOnce(100, -1); // warm-up
    for (let round = 0; round < ROUNDS; round++) {
      for (const count of [N, 2 * N]) (times.get(count) ?? times.set(count, []).get(count)!).push(await importOnce(count, round));
    }
    const t1 = median(times.get(N)!);
    const t2 = median(times.get(2 * N)!);
    console.log(`\nmedian import (to the job's end): ${N} pages ${(t1 / 1000).toFixed(2)} s (goal: under 120 s), ${2 * N} pages ${(t2 / 1000).toFixed(2)} s`);
    console.log(`ratio ${2 * N}/${N}: ${(t2 / t1).toFixed(2)} (goal: at most 2.3)`);
    console.log(`peak memory (RSS): ${(peakRss / 1024 / 1024).toFixed(0)} MB`);
  } finally {
    await server.close();
    await db.cleanup();
  }
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
