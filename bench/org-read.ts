/**
 * Benchmark: authenticated `GET /v1/orgs/{id}` on Folio under load, against a baseline measured in
 * the same run: a bare Fastify server (no auth, no Folio code) reading the same organizations row by
 * primary key through the same database engine.
 *
 *   npm run bench                                   # embedded database (PGlite)
 *   BENCH_DATABASE_URL=postgres://postgres@127.0.0.1:5432/postgres npm run bench   # PostgreSQL
 *
 * Options (environment): BENCH_DURATION (seconds measured per server, default 10),
 * BENCH_WARMUP (seconds of warm-up per server, default 2), BENCH_CONNECTIONS (default 10),
 * BENCH_REDIS_URL (Folio counts rate limits in that Redis, as with REDIS_URL).
 *
 * Each server under test runs in its own child process (this file, started with a role argument),
 * and the load generator (autocannon) runs in this process. In-process would be simpler, but
 * autocannon is itself a busy JavaScript program: sharing one event loop with the server, it would
 * take CPU time from it and the numbers would mostly measure that contention. As child processes,
 * the server and the load generator each get their own core, and Folio and the baseline are
 * measured under the same conditions. The servers run one after the other, never at the same time
 * (and the embedded database allows one process per data directory anyway).
 *
 * The ratio folio/baseline is printed next to its goal (PostgreSQL >= 0.6, PGlite >= 0.5); the
 * bench reports, it does not fail on the goal. It exits non-zero only when something breaks
 * (a server does not start, or a request answers an error).
 */
import { fork, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import autocannon from 'autocannon';
import pg from 'pg';
import { freshDatabaseConfig } from './support.ts';

/** What the parent passes to a server child through its environment. */
interface Target {
  dataDir: string | undefined;
  databaseUrl: string | undefined;
}

type ChildMessage = { ready: true; url: string; token?: string } | { error: string };

const ROLE = process.argv[2];

// --------------------------------------------------------------------------------------------
// Child role 1: Folio itself, started the way `folio serve` starts it.
// --------------------------------------------------------------------------------------------
async function runFolio(target: Target): Promise<void> {
  const { loadConfig } = await import('../src/platform/config.ts');
  const { startServer } = await import('../src/server.ts');
  const { createUser } = await import('../src/users/service.ts');
  const config = {
    ...loadConfig({}),
    host: '127.0.0.1',
    port: 0,
    logLevel: 'silent',
    // High enough that the bench is never throttled.
    rateLimitMax: 1_000_000_000,
    // BENCH_REDIS_URL: rate limits counted in Redis (shared by processes, docs/scaling.md), to measure what that costs.
    ...(process.env.BENCH_REDIS_URL ? { redisUrl: process.env.BENCH_REDIS_URL, redisPrefix: `folio-bench-${randomBytes(4).toString('hex')}:` } : {}),
    ...(target.databaseUrl ? { databaseUrl: target.databaseUrl } : { databaseUrl: undefined, dataDir: target.dataDir! }),
  };
  const server = await startServer(config, { purpose: 'bench' });
  server.services.config.publicUrl = server.url;
  const { token } = await createUser(server.services.db, { email: `bench.${randomBytes(4).toString('hex')}@example.com`, name: 'Bench' });
  await serveUntilStopped(server.url, token, () => server.close());
}

// --------------------------------------------------------------------------------------------
// Child role 2: the baseline. Bare Fastify, no auth, no Folio code, one primary-key read.
// --------------------------------------------------------------------------------------------
async function runBaseline(target: Target): Promise<void> {
  const { default: Fastify } = await import('fastify');
  let query: (id: string) => Promise<Record<string, unknown> | undefined>;
  let close: () => Promise<void>;
  if (target.databaseUrl) {
    // Same pool size as Folio's (src/platform/db/database.ts).
    const pool = new pg.Pool({ connectionString: target.databaseUrl, max: 10 });
    query = async (id) => (await pool.query('SELECT * FROM organizations WHERE id = $1', [id])).rows[0];
    close = () => pool.end();
  } else {
    const { PGlite } = await import('@electric-sql/pglite');
    const db = await PGlite.create(target.dataDir!);
    query = async (id) => (await db.query<Record<string, unknown>>('SELECT * FROM organizations WHERE id = $1', [id])).rows[0];
    close = () => db.close();
  }
  const app = Fastify({ logger: false });
  app.get<{ Params: { id: string } }>('/orgs/:id', async (req, reply) => {
    const row = await query(req.params.id);
    if (!row) return reply.status(404).send({ error: { code: 404, message: 'not found' } });
    return row;
  });
  const url = await app.listen({ port: 0, host: '127.0.0.1' });
  await serveUntilStopped(url, undefined, async () => {
    await app.close();
    await close();
  });
}

/** Tells the parent where the server listens, then closes it when the parent says "stop". */
async function serveUntilStopped(url: string, token: string | undefined, stop: () => Promise<void>): Promise<void> {
  process.send!({ ready: true, url, ...(token ? { token } : {}) } satisfies ChildMessage);
  process.on('message', (msg) => {
    if (msg !== 'stop') return;
    stop().then(
      () => process.exit(0),
      (err) => {
        console.error(err);
        process.exit(1);
      },
    );
  });
  // If the parent dies, do not linger.
  process.on('disconnect', () => void stop().finally(() => process.exit(1)));
}

// --------------------------------------------------------------------------------------------
// Parent: orchestrates the database, the two servers and the load.
// --------------------------------------------------------------------------------------------
const DURATION = Number(process.env.BENCH_DURATION || 10);
const WARMUP = Number(process.env.BENCH_WARMUP || 2);
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS || 10);

interface Child {
  process: ChildProcess;
  url: string;
  token: string | undefined;
  stop(): Promise<void>;
}

function startChild(role: 'folio' | 'baseline', target: Target): Promise<Child> {
  return new Promise((resolve, reject) => {
    const child = fork(fileURLToPath(import.meta.url), [role], {
      execArgv: ['--import', 'tsx'],
      env: {
        ...process.env,
        BENCH_TARGET: JSON.stringify(target),
        LOG_LEVEL: 'silent',
        DATABASE_URL: '',
        NODE_ENV: 'production',
      },
      stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
    });
    const exited = new Promise<number | null>((r) => child.on('exit', (code) => r(code)));
    child.once('exit', (code) => reject(new Error(`${role} server exited before it was ready (code ${code})`)));
    child.once('message', (msg: ChildMessage) => {
      if ('error' in msg) return reject(new Error(`${role} server: ${msg.error}`));
      resolve({
        process: child,
        url: msg.url,
        token: msg.token,
        async stop() {
          if (child.exitCode === null && child.connected) child.send('stop');
          const timer = setTimeout(() => child.kill('SIGKILL'), 30_000);
          const code = await exited;
          clearTimeout(timer);
          if (code !== 0) throw new Error(`${role} server exited with code ${code}`);
        },
      });
    });
  });
}

interface Measured {
  rps: number;
  p50: number;
  p99: number;
  requests: number;
  non2xx: number;
  errors: number;
}

async function load(url: string, headers: Record<string, string>, seconds: number): Promise<Measured> {
  const result = await autocannon({ url, headers, connections: CONNECTIONS, duration: seconds });
  return {
    rps: result.requests.average,
    p50: result.latency.p50,
    p99: result.latency.p99,
    requests: result.requests.total,
    non2xx: result.non2xx,
    errors: result.errors,
  };
}

/** Checks one request answers 200 with the organization, warms up, then measures. */
async function measure(name: string, url: string, headers: Record<string, string>, orgId: string): Promise<Measured> {
  const probe = await fetch(url, { headers });
  const body = (await probe.json()) as { id?: string };
  if (probe.status !== 200 || body.id !== orgId) {
    throw new Error(`${name}: GET ${url} answered ${probe.status} ${JSON.stringify(body)}`);
  }
  process.stderr.write(`${name}: warming up ${WARMUP} s, then measuring ${DURATION} s...\n`);
  if (WARMUP > 0) await load(url, headers, WARMUP);
  const m = await load(url, headers, DURATION);
  if (m.non2xx > 0 || m.errors > 0) {
    throw new Error(`${name}: ${m.non2xx} non-2xx responses and ${m.errors} errors out of ${m.requests} requests`);
  }
  return m;
}


async function main(): Promise<void> {
  const admin = process.env.BENCH_DATABASE_URL;
  const engine = admin ? 'PostgreSQL' : 'PGlite (embedded)';
  const goal = admin ? 0.6 : 0.5;
  const cleanups: Array<() => Promise<void>> = [];
  const children: Child[] = [];
  try {
    let target: Target;
    const db = await freshDatabaseConfig(admin);
    cleanups.push(db.cleanup);
    target = { dataDir: db.config.dataDir, databaseUrl: db.config.databaseUrl };

    // Folio: a user (createUser, as `folio users create` does) and an org created over HTTP.
    const folio = await startChild('folio', target);
    children.push(folio);
    const auth = { authorization: `Bearer ${folio.token}` };
    const created = await fetch(`${folio.url}/v1/orgs`, {
      method: 'POST',
      headers: { ...auth, 'content-type': 'application/json' },
      body: JSON.stringify({ title: 'Bench Org' }),
    });
    const org = (await created.json()) as { id: string };
    if (created.status !== 201) throw new Error(`POST /v1/orgs answered ${created.status} ${JSON.stringify(org)}`);
    const folioResult = await measure('folio', `${folio.url}/v1/orgs/${org.id}`, auth, org.id);
    await folio.stop();
    children.pop();

    // Baseline: the same row, through the same engine (and for PGlite, the same data directory).
    const baseline = await startChild('baseline', target);
    children.push(baseline);
    const baselineResult = await measure('baseline', `${baseline.url}/orgs/${org.id}`, {}, org.id);
    await baseline.stop();
    children.pop();

    const ratio = folioResult.rps / baselineResult.rps;
    const row = (name: string, m: Measured) =>
      `${name.padEnd(34)}${m.rps.toFixed(1).padStart(10)}${String(m.p50).padStart(9)}${String(m.p99).padStart(9)}${String(m.requests).padStart(11)}`;
    console.log('');
    console.log(`GET /v1/orgs/{id}: Folio vs a bare Fastify primary-key read`);
    console.log(`engine: ${engine}; ${CONNECTIONS} connections, ${DURATION} s measured after ${WARMUP} s warm-up; node ${process.version}`);
    console.log('');
    console.log(`${''.padEnd(34)}${'req/s'.padStart(10)}${'p50 ms'.padStart(9)}${'p99 ms'.padStart(9)}${'requests'.padStart(11)}`);
    console.log(row('folio (auth + GET /v1/orgs/{id})', folioResult));
    console.log(row('baseline (bare Fastify, pk read)', baselineResult));
    console.log('');
    console.log(
      `ratio folio/baseline: ${ratio.toFixed(2)}   goal: >= ${goal} on ${admin ? 'PostgreSQL' : 'PGlite'}  ` +
        `(${ratio >= goal ? 'met' : 'NOT met'})`,
    );
  } finally {
    for (const child of children) child.process.kill('SIGKILL');
    for (const cleanup of cleanups.reverse()) await cleanup();
  }
}

if (ROLE === 'folio' || ROLE === 'baseline') {
  const target = JSON.parse(process.env.BENCH_TARGET ?? '{}') as Target;
  (ROLE === 'folio' ? runFolio(target) : runBaseline(target)).catch((err) => {
    process.send?.({ error: err instanceof Error ? (err.stack ?? err.message) : String(err) } satisfies ChildMessage);
    process.exit(1);
  });
} else {
  main().catch((err) => {
    console.error(err instanceof Error ? (err.stack ?? err.message) : err);
    process.exit(1);
  });
}
