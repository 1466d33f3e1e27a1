/**
 * Benchmark: a published site of 10,000 pages, read by many visitors. Measured in one run, against
 * the same server:
 *   - static:   a static file of the same size as the page, served from memory by the same server
 *               (the baseline: what serving bytes costs here);
 *   - cached:   one page, requested again and again (rendered once, then served from the cache);
 *   - uncached: every request a different page, each rendered for the first time.
 * Prints requests per second of each, the ratio cached/static (goal ≥ 0.5) and the p95 latency of
 * uncached pages (goal < 50 ms on this machine).
 *
 *   node --import tsx bench/site.ts
 *   BENCH_DURATION=10 BENCH_CONNECTIONS=10                    # seconds per measurement, connections
 *
 * The server runs in a child process and autocannon in this one, so that the load generator does
 * not take CPU time from the server it measures (see bench/org-read.ts).
 */
import { fork } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import autocannon from 'autocannon';
import { freshDatabaseConfig } from './support.ts';

const PAGES_PER_SECTION = 99;
const SECTIONS = 100; // 100 × (1 + 99) = 10,000 pages

type Ready = { url: string; base: string; cached: string; uncached: string[]; staticPath: string; bytes: number };

async function serve(): Promise<void> {
  const { loadConfig } = await import('../src/platform/config.ts');
  const { startServer } = await import('../src/server.ts');
  const { createUser } = await import('../src/users/service.ts');
  const { bulkPages } = await import('../test/support/content.ts');
  const target = JSON.parse(process.env.BENCH_TARGET!);
  let staticBody = Buffer.alloc(0);
  const server = await startServer(
    { ...loadConfig({}), host: '127.0.0.1', port: 0, logLevel: 'silent', rateLimitMax: 1_000_000_000, databaseUrl: undefined, dataDir: target.dataDir },
    {
      purpose: 'bench',
      // The baseline: bytes from memory, with the headers a page gets.
      extend: (app) =>
        app.get('/bench-static', { config: { public: true }, schema: { hide: true } }, async (_req, reply) =>
          reply.type('text/html; charset=utf-8').header('cache-control', 'public, max-age=0, must-revalidate').send(staticBody),
        ),
    },
  );
  server.services.config.publicUrl = server.url;
  const { token } = await createUser(server.services.db, { email: `bench.${randomBytes(4).toString('hex')}@example.com`, name: 'Bench' });
  const api = async (method: string, path: string, body?: unknown) => {
    const res = await fetch(`${server.url}/v1${path}`, { method, headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' }, ...(body ? { body: JSON.stringify(body) } : {}) });
    if (!res.ok) throw new Error(`${method} ${path}: ${res.status} ${await res.text()}`);
    return res.status === 204 ? undefined : res.json();
  };
  const org = await api('POST', '/orgs', { title: 'Bench' });
  const space = await api('POST', `/orgs/${org.id}/spaces`, { title: 'Big handbook' });
  const row = await server.services.db.selectFrom('spaces').selectAll().where('id', '=', space.id).executeTakeFirstOrThrow();
  await bulkPages(server.services.db, row, SECTIONS, PAGES_PER_SECTION, (n) => ({
    title: `Page ${n}`,
    markdown: `Some text for page ${n}.\n\n## Details\n\n\`\`\`js\nconst n = ${n};\n\`\`\`\n\n{% hint style="info" %}\nA hint.\n{% endhint %}\n`,
  }));
  const site = await api('POST', `/orgs/${org.id}/sites`, { title: 'Bench site' });
  await api('POST', `/orgs/${org.id}/sites/${site.id}/site-spaces`, { spaceId: space.id });
  await api('POST', `/orgs/${org.id}/sites/${site.id}/publish`, {});
  const base = `/${org.id}/${site.basename}/`;
  const { pages } = await api('GET', `/spaces/${space.id}/content/pages`);
  const paths: string[] = pages.flatMap((p: { path: string; pages: { path: string }[] }) => [p.path, ...p.pages.map((c) => c.path)]);
  const cached = `${base}${paths[1]}`;
  const page = await fetch(`${server.url}${cached}`);
  if (!page.ok) throw new Error(`page: ${page.status}`);
  staticBody = Buffer.from(await page.text());
  process.send!({ url: server.url, base, cached, uncached: paths.slice(2).map((p) => `${base}${p}`), staticPath: '/bench-static', bytes: staticBody.length } satisfies Ready);
  process.on('message', (m) => m === 'stop' && server.close().then(() => process.exit(0)));
  process.on('disconnect', () => void server.close().finally(() => process.exit(1)));
}

const DURATION = Number(process.env.BENCH_DURATION || 10);
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS || 10);

async function load(url: string, paths: string[] | string, duration = DURATION) {
  const list = Array.isArray(paths) ? paths : [paths];
  let i = 0;
  const result = await autocannon({
    url,
    connections: CONNECTIONS,
    duration,
    requests: [{ setupRequest: (req) => ({ ...req, path: list[i++ % list.length]! }) }],
  });
  if (result.non2xx || result.errors) throw new Error(`${result.non2xx} non-2xx answers, ${result.errors} errors`);
  return result;
}

async function main(): Promise<void> {
  if (process.argv[2] === 'serve') return serve();
  const database = await freshDatabaseConfig(undefined, { migrated: true });
  const child = fork(fileURLToPath(import.meta.url), ['serve'], { execArgv: ['--import', 'tsx'], env: { ...process.env, BENCH_TARGET: JSON.stringify({ dataDir: database.config.dataDir }), DATABASE_URL: '' }, stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
  const ready = await new Promise<Ready>((resolve, reject) => {
    child.once('message', (m) => resolve(m as Ready));
    child.once('exit', (code) => reject(new Error(`server exited (${code})`)));
  });
  console.log(`site of ${SECTIONS * (PAGES_PER_SECTION + 1)} pages; a page is ${ready.bytes} bytes; ${DURATION} s per measurement, ${CONNECTIONS} connections`);
  await load(ready.url, ready.staticPath, 2);
  const stat = await load(ready.url, ready.staticPath);
  await load(ready.url, ready.cached, 2);
  const cached = await load(ready.url, ready.cached);
  // Each uncached request is a page not rendered before (the list is longer than the run can use).
  const uncached = await load(ready.url, ready.uncached);
  const rps = (r: autocannon.Result) => r.requests.average;
  console.log(`static file   ${rps(stat).toFixed(0).padStart(7)} req/s   p97.5 ${r975(stat)} ms`);
  console.log(`cached page   ${rps(cached).toFixed(0).padStart(7)} req/s   p97.5 ${r975(cached)} ms   ratio to static ${(rps(cached) / rps(stat)).toFixed(2)} (goal ≥ 0.5)`);
  console.log(`uncached page ${rps(uncached).toFixed(0).padStart(7)} req/s   p97.5 ${r975(uncached)} ms (goal: p95 < 50 ms)   pages rendered: ${uncached.requests.total} of ${ready.uncached.length}`);
  child.send('stop');
  await new Promise((r) => child.once('exit', r));
  await database.cleanup();
}

function r975(r: autocannon.Result): number {
  return (r.latency as unknown as Record<string, number>).p97_5 ?? r.latency.p99;
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
