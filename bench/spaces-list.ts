/**
 * Benchmark: the cost of one page of `GET /v1/orgs/{id}/spaces` must not grow with the number of
 * spaces. Two organizations in the same run, one with 1,000 spaces and one with 10,000; for each,
 * the latency of the first page and of a page deep in the list (reached through real cursors).
 * Prints p50/p95 and the ratio 10,000/1,000 (goal: under 1.5).
 *
 *   npm run bench:spaces                                   # embedded database (PGlite)
 *   BENCH_DATABASE_URL=postgres://… npm run bench:spaces   # PostgreSQL
 */
import { loadConfig } from '../src/platform/config.ts';
import { startServer } from '../src/server.ts';
import { createUser } from '../src/users/service.ts';
import { bulkSpaces } from '../test/support/bulk.ts';
import { freshDatabaseConfig, percentile } from './support.ts';

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 200);
const LIMIT = 50;


async function main() {
  const db = await freshDatabaseConfig(process.env.BENCH_DATABASE_URL);
  const server = await startServer({ ...loadConfig({}), port: 0, logLevel: 'silent', rateLimitMax: 1e9, databaseUrl: undefined, ...db.config }, { purpose: 'bench' });
  try {
    const { user, token } = await createUser(server.services.db, { email: `bench.${Date.now()}@example.com`, name: 'Bench' });
    const headers = { authorization: `Bearer ${token}`, 'content-type': 'application/json' };
    const get = async (path: string) => {
      const res = await fetch(server.url + path, { headers });
      if (!res.ok) throw new Error(`${path}: ${res.status} ${await res.text()}`);
      return res.json() as Promise<{ next?: { page: string }; items: unknown[] }>;
    };
    const sizes = [1_000, 10_000];
    const results: Record<number, { first: number[]; deep: number[] }> = {};
    for (const size of sizes) {
      const org = await (await fetch(`${server.url}/v1/orgs`, { method: 'POST', headers, body: JSON.stringify({ title: `Org ${size}` }) })).json();
      await bulkSpaces(server.services.db, org.id, size, user.id);
      // A cursor about 90% of the way through the list, reached the way a client would.
      let cursor: string | undefined;
      const step = size / 20;
      for (let seen = 0; seen < size * 0.9; seen += step) cursor = (await get(`/v1/orgs/${org.id}/spaces?limit=${step}${cursor ? `&page=${cursor}` : ''}`)).next?.page;
      const first: number[] = [];
      const deep: number[] = [];
      for (let i = 0; i < ROUNDS + 20; i++) {
        let start = performance.now();
        await get(`/v1/orgs/${org.id}/spaces?limit=${LIMIT}`);
        const a = performance.now() - start;
        start = performance.now();
        await get(`/v1/orgs/${org.id}/spaces?limit=${LIMIT}&page=${cursor}`);
        const b = performance.now() - start;
        if (i >= 20) {
          first.push(a);
          deep.push(b);
        }
      }
      results[size] = { first: first.sort((x, y) => x - y), deep: deep.sort((x, y) => x - y) };
    }
    const engine = process.env.BENCH_DATABASE_URL ? 'PostgreSQL' : 'PGlite (embedded)';
    console.log(`\nGET /v1/orgs/{id}/spaces?limit=${LIMIT}: one page in organizations of 1,000 and 10,000 spaces`);
    console.log(`engine: ${engine}; ${ROUNDS} sequential requests per case after 20 warm-up\n`);
    console.log('case'.padEnd(30) + 'p50 ms'.padStart(10) + 'p95 ms'.padStart(10));
    for (const size of sizes) {
      for (const kind of ['first', 'deep'] as const) {
        const s = results[size]![kind];
        console.log(`${size} spaces, ${kind} page`.padEnd(30) + percentile(s, 50).toFixed(2).padStart(10) + percentile(s, 95).toFixed(2).padStart(10));
      }
    }
    for (const kind of ['first', 'deep'] as const) {
      const ratio = percentile(results[10_000]![kind], 50) / percentile(results[1_000]![kind], 50);
      console.log(`\nratio p50 10,000/1,000 (${kind} page): ${ratio.toFixed(2)}   goal: < 1.5  (${ratio < 1.5 ? 'met' : 'NOT met'})`);
    }
  } finally {
    await server.close();
    await db.cleanup();
  }
}

await main();
