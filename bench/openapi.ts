/**
 * Benchmark: processing OpenAPI specs of about 5 MB and 10 MB (issue 10). A local HTTP server on
 * 127.0.0.1 serves each spec (OpenAPI 3.1, JSON, operations sharing component schemas); Folio's
 * processing job fetches, parses, resolves, validates and stores it, as a spec created through the
 * API is. Each size, as JSON and as YAML, is processed BENCH_ROUNDS times (median), through processSource (the job's
 * work without the database) and once end to end through the API and the job. Prints the ratio of
 * the 10 MB cost to the 5 MB cost (goal: at most 2.3) and the process's peak memory (RSS).
 *
 *   npm run bench:openapi                                                     # embedded database
 *   BENCH_DATABASE_URL=postgres://… npm run bench:openapi                     # PostgreSQL
 */
import { createServer } from 'node:http';
import jsyaml from 'js-yaml';
import { loadConfig } from '../src/platform/config.ts';
import { processSource } from '../src/openapi/process.ts';
import { startServer } from '../src/server.ts';
import { createUser } from '../src/users/service.ts';
import { freshDatabaseConfig } from './support.ts';

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);

/** An OpenAPI 3.1 document of about `bytes` bytes of JSON. */
function specOf(bytes: number): string {
  const schemas: Record<string, unknown> = {};
  for (let i = 0; i < 50; i++) {
    schemas[`Model${i}`] = { type: 'object', required: ['id'], properties: { id: { type: 'string' }, count: { type: 'integer' }, next: { $ref: `#/components/schemas/Model${(i + 1) % 50}` } } };
  }
  const paths: Record<string, unknown> = {};
  const doc = { openapi: '3.1.0', info: { title: 'Bench', version: '1' }, paths, components: { schemas } };
  let size = JSON.stringify(doc).length;
  for (let i = 0; size < bytes; i++) {
    const item = {
      parameters: [{ name: 'id', in: 'path', required: true, schema: { type: 'string' } }],
      get: {
        operationId: `get${i}`,
        summary: `Read resource ${i}`,
        description: `Returns resource ${i} with its fields. `.repeat(4),
        parameters: [{ name: 'fields', in: 'query', schema: { type: 'array', items: { type: 'string' } } }],
        responses: { 200: { description: 'ok', content: { 'application/json': { schema: { $ref: `#/components/schemas/Model${i % 50}` } } } }, 404: { description: 'missing' } },
      },
      put: {
        operationId: `put${i}`,
        summary: `Replace resource ${i}`,
        requestBody: { content: { 'application/json': { schema: { $ref: `#/components/schemas/Model${i % 50}` } } } },
        responses: { 204: { description: 'done' } },
      },
    };
    paths[`/resources${i}/{id}`] = item;
    size += JSON.stringify(item).length + 30;
  }
  return JSON.stringify(doc);
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

async function main() {
  const bodies = new Map([5, 10].map((mb) => [`/spec-${mb}.json`, specOf(mb * 1_000_000)]));
  // The same documents as YAML (about the same size: YAML drops the quotes and braces, adds indentation).
  for (const mb of [5, 10]) bodies.set(`/spec-${mb}.yaml`, jsyaml.dump(JSON.parse(bodies.get(`/spec-${mb}.json`)!), { noRefs: true, lineWidth: -1 }));
  const server = createServer((req, res) => {
    const body = bodies.get(req.url ?? '');
    res.writeHead(body ? 200 : 404, { 'content-type': 'application/json' });
    res.end(body ?? '');
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const base = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
  let peak = process.memoryUsage().rss;
  const sampler = setInterval(() => (peak = Math.max(peak, process.memoryUsage().rss)), 20);
  const limits = { fetchAllowPrivate: false, fetchAllowCidrs: ['127.0.0.1/32'], fetchTimeoutMs: 120_000, fetchMaxRequestBytes: 25 * 1024 * 1024 };

  for (const ext of ['json', 'yaml']) {
    const times = new Map<number, number>();
    for (const mb of [5, 10]) {
      const path = `/spec-${mb}.${ext}`;
      const runs: number[] = [];
      for (let i = 0; i < ROUNDS + 1; i++) {
        const started = performance.now();
        const outcome = await processSource({ url: base + path }, limits);
        if (!outcome.ok) throw new Error(JSON.stringify(outcome.errors));
        if (i > 0) runs.push(performance.now() - started); // the first run warms up
      }
      times.set(mb, median(runs));
      console.log(`processing ${(bodies.get(path)!.length / 1e6).toFixed(1)} MB of ${ext.toUpperCase()}: ${median(runs).toFixed(0)} ms (median of ${ROUNDS})`);
    }
    console.log(`ratio ${ext.toUpperCase()} 10 MB / 5 MB: ${(times.get(10)! / times.get(5)!).toFixed(2)} (goal: at most 2.3)`);
  }

  // End to end: POST the spec, wait for the job to store its version.
  const db = await freshDatabaseConfig(process.env.BENCH_DATABASE_URL);
  const config = { ...loadConfig({}), port: 0, logLevel: 'silent', jobPollMs: 20, fetchAllowCidrs: ['127.0.0.1/32'], fetchTimeoutMs: 120_000, openapiRefreshMs: 0, ...db.config };
  const folio = await startServer(config, { purpose: 'bench' });
  try {
    const { token } = await createUser(folio.database.db, { email: 'bench@example.com', name: 'Bench' });
    const call = async (method: string, path: string, body?: unknown) => {
      const res = await fetch(`${folio.url}/v1${path}`, { method, headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' }, ...(body ? { body: JSON.stringify(body) } : {}) });
      return res.json() as Promise<any>;
    };
    const org = await call('POST', '/orgs', { title: 'Bench' });
    for (const mb of [5, 10]) {
      const started = performance.now();
      await call('POST', `/orgs/${org.id}/openapi`, { slug: `spec-${mb}`, source: { url: `${base}/spec-${mb}.json` } });
      let spec: any;
      do {
        await new Promise((r) => setTimeout(r, 20));
        spec = await call('GET', `/orgs/${org.id}/openapi/spec-${mb}`);
      } while (spec.processingState !== 'complete');
      if (!spec.lastVersion) throw new Error(JSON.stringify(spec.lastProcessedErrors));
      console.log(`end to end (API, job, database) ${mb} MB: ${(performance.now() - started).toFixed(0)} ms`);
    }
  } finally {
    await folio.close();
    await db.cleanup();
  }
  clearInterval(sampler);
  console.log(`peak memory (RSS): ${(peak / 1024 / 1024).toFixed(0)} MB`);
  server.close();
}

await main();
