/**
 * Soak: a mixed workload from many clients against two API processes and one worker on one
 * PostgreSQL, for minutes, as a company runs Folio at scale (issue 29).
 *
 *   npm run bench:soak                       10 minutes, 50 clients
 *   npm run bench:soak -- --minutes 2 --clients 50
 *
 * It creates a database on BENCH_DATABASE_URL's server (default postgres://postgres@127.0.0.1:5432/postgres),
 * starts `WORKERS=false folio serve` twice and `folio worker` once on it (the real ./bin/folio),
 * seeds an organization (spaces of pages, a published site), then each client loops over a
 * weighted mix, alternating between the two API processes:
 *
 *   read      a space, its page list, or one page's document          35%
 *   search    a space's full-text search                               15%
 *   site      a page of the published site (cached, or re-rendered after a merge) 20%
 *   comment   a comment posted on a space, then the space's comments    10%
 *   edit      the client's own page edited in its open change request  12%
 *   merge     that change request merged (and a new one opened)         8%
 *
 * Each client edits its own page, so merges never conflict: a 409 would be a bug, as a 5xx is.
 * It prints throughput, p50 and p99 per kind, answers by status class (goal: no 5xx, no network
 * errors), and the resident memory (RSS, from /proc) of every process after start, after
 * warm-up (the first tenth of the run, at least 20 s) and at the end (goal: no growth after
 * warm-up beyond 10%). The database is dropped at the end.
 */
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import pg from 'pg';
import { folioEnv, serve, type ServeProcess } from '../test/support/process.ts';
import { freePort, percentile, rssMb } from './support.ts';

const { values: args } = parseArgs({ options: { minutes: { type: 'string' }, clients: { type: 'string' } } });
const MINUTES = Number(args.minutes ?? 10);
const CLIENTS = Number(args.clients ?? 50);
const ADMIN_URL = process.env.BENCH_DATABASE_URL || 'postgres://postgres@127.0.0.1:5432/postgres';
const SPACES = 5;
const PAGES = 20;

type Kind = 'read' | 'search' | 'site' | 'comment' | 'edit' | 'merge';
const MIX: [Kind, number][] = [['read', 35], ['search', 15], ['site', 20], ['comment', 10], ['edit', 12], ['merge', 8]];
const WORDS = ['install', 'configure', 'token', 'merge', 'review', 'publish', 'search', 'backup', 'quota', 'webhook'];

function pick<T>(list: T[]): T {
  return list[Math.floor(Math.random() * list.length)]!;
}

function kindAt(r: number): Kind {
  for (const [kind, weight] of MIX) {
    if (r < weight) return kind;
    r -= weight;
  }
  return 'read';
}


class Stats {
  times = new Map<Kind, number[]>();
  status = new Map<string, number>();
  errors = 0;
  firstErrors: string[] = [];
  record(kind: Kind, ms: number) {
    let list = this.times.get(kind);
    if (!list) this.times.set(kind, (list = []));
    list.push(ms);
  }
  answer(status: number, what: string, body: string) {
    const cls = `${Math.floor(status / 100)}xx`;
    this.status.set(cls, (this.status.get(cls) ?? 0) + 1);
    if (status >= 400 && this.firstErrors.length < 10) this.firstErrors.push(`${status} ${what}: ${body.slice(0, 200)}`);
  }
}

async function main(): Promise<void> {
  const name = `folio_soak_${randomBytes(4).toString('hex')}`;
  const admin = new pg.Client({ connectionString: ADMIN_URL });
  await admin.connect();
  await admin.query(`CREATE DATABASE ${name}`);
  const url = new URL(ADMIN_URL);
  url.pathname = `/${name}`;
  const dataDir = mkdtempSync(join(tmpdir(), 'folio-soak-'));
  const processes: { label: string; proc: ServeProcess }[] = [];
  try {
    const common = { DATABASE_URL: url.toString(), DATA_DIR: dataDir, RATE_LIMIT_MAX: '10000000', LOG_LEVEL: 'warn' };
    // The first API process migrates the new database and creates the administrator; the others then start on it.
    const api1 = await serve(folioEnv({ ...common, WORKERS: 'false', PORT: await freePort() }));
    processes.push({ label: 'api 1', proc: api1 });
    const [api2, worker] = await Promise.all([
      serve(folioEnv({ ...common, WORKERS: 'false', PORT: await freePort() })),
      serve(folioEnv({ ...common, JOB_POLL_MS: '200' }), 'worker'),
    ]);
    processes.push({ label: 'api 2', proc: api2 }, { label: 'worker', proc: worker });
    const token = /shown only now:\n\n {2}(folio_\S+)\n/.exec(api1.stderr())?.[1];
    if (!token) throw new Error(`no administrator token in:\n${api1.stderr()}`);
    const bases = [api1.url, api2.url];
    const stats = new Stats();

    /** One call; its time is recorded under `kind`, its status counted. Throws on a non-2xx. */
    const call = async (kind: Kind | undefined, base: string, method: string, path: string, body?: unknown, raw = false): Promise<any> => {
      const started = performance.now();
      let res: Response;
      try {
        res = await fetch(base + path, {
          method,
          headers: { authorization: `Bearer ${token}`, ...(body !== undefined ? { 'content-type': 'application/json' } : {}) },
          ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
        });
      } catch (err) {
        stats.errors++;
        if (stats.firstErrors.length < 10) stats.firstErrors.push(`network ${method} ${path}: ${(err as Error).message}`);
        throw err;
      }
      const text = await res.text();
      if (kind) {
        stats.record(kind, performance.now() - started);
        stats.answer(res.status, `${method} ${path}`, text);
      }
      if (!res.ok) throw new Error(`${method} ${path}: ${res.status} ${text.slice(0, 300)}`);
      return raw ? text : text ? JSON.parse(text) : undefined;
    };
    const setup = (method: string, path: string, body?: unknown) => call(undefined, api1.url, method, path, body);

    // Seed: spaces of pages, each client's own page in the first spaces, a site publishing the first space.
    const org = await setup('POST', '/v1/orgs', { title: 'Soak' });
    const spaces: { id: string; pages: string[] }[] = [];
    for (let s = 0; s < SPACES; s++) {
      const space = await setup('POST', `/v1/orgs/${org.id}/spaces`, { title: `Space ${s}` });
      const cr = await setup('POST', `/v1/spaces/${space.id}/change-requests`, { subject: 'Seed' });
      const changes = Array.from({ length: PAGES }, (_, p) => ({
        operation: 'insert_page',
        title: `Page ${s}.${p}`,
        document: { markdown: `# Page ${s}.${p}\n\nHow to ${pick(WORDS)} and ${pick(WORDS)} in Folio.\n\n- one\n- two\n\n\`\`\`js\nconst x = ${p};\n\`\`\`\n` },
      }));
      for (let c = s; c < CLIENTS; c += SPACES) changes.push({ operation: 'insert_page', title: `Client ${c}`, document: { markdown: `Client ${c}'s page.\n` } });
      await setup('POST', `/v1/spaces/${space.id}/change-requests/${cr.id}/content`, { changes });
      await setup('POST', `/v1/spaces/${space.id}/change-requests/${cr.id}/merge`);
      const { pages } = await setup('GET', `/v1/spaces/${space.id}/content/pages`);
      spaces.push({ id: space.id, pages: pages.map((p: { id: string }) => p.id) });
    }
    const site = await setup('POST', `/v1/orgs/${org.id}/sites`, { title: 'Soak site' });
    await setup('POST', `/v1/orgs/${org.id}/sites/${site.id}/site-spaces`, { spaceId: spaces[0]!.id });
    await setup('POST', `/v1/orgs/${org.id}/sites/${site.id}/publish`, {});
    const { pages: sitePages } = await setup('GET', `/v1/spaces/${spaces[0]!.id}/content/pages`);
    const sitePaths: string[] = sitePages.map((p: { path: string }) => `/${org.id}/${site.basename}/${p.path}`);
    const pageOf = new Map<number, string>();
    for (const [s, space] of spaces.entries()) {
      const { pages } = await setup('GET', `/v1/spaces/${space.id}/content/pages`);
      for (const p of pages as { id: string; title: string }[]) {
        const m = /^Client (\d+)$/.exec(p.title);
        if (m && Number(m[1]) % SPACES === s) pageOf.set(Number(m[1]), p.id);
      }
    }

    const memory = new Map<string, number[]>(processes.map((p) => [p.label, [Math.round(rssMb(p.proc.child.pid!))]]));
    const sample = () => processes.forEach((p) => memory.get(p.label)!.push(Math.round(rssMb(p.proc.child.pid!))));
    const durationMs = MINUTES * 60_000;
    const warmupMs = Math.max(20_000, durationMs / 10);
    console.log(`soak: ${CLIENTS} clients, ${MINUTES} min, 2 API processes + 1 worker on PostgreSQL (${name}); seeded ${SPACES} spaces of ${PAGES + CLIENTS / SPACES} pages and a site`);
    const started = Date.now();
    const end = started + durationMs;
    let measuredFrom = 0;
    let measured = 0;
    const warm = setTimeout(() => {
      sample();
      measuredFrom = Date.now();
      measured = [...stats.times.values()].reduce((n, l) => n + l.length, 0);
      stats.times.clear();
    }, warmupMs);

    const client = async (c: number) => {
      const s = c % SPACES;
      const space = spaces[s]!;
      const myPage = pageOf.get(c)!;
      let cr: string | undefined;
      let edits = 0;
      for (let i = 0; Date.now() < end; i++) {
        const base = bases[(c + i) % 2]!;
        const kind = kindAt(Math.random() * 100);
        try {
          switch (kind) {
            case 'read': {
              const target = pick(spaces);
              const r = Math.random();
              if (r < 0.3) await call(kind, base, 'GET', `/v1/spaces/${target.id}`);
              else if (r < 0.6) await call(kind, base, 'GET', `/v1/spaces/${target.id}/content/pages`);
              else await call(kind, base, 'GET', `/v1/spaces/${target.id}/content/page/${pick(target.pages)}`);
              break;
            }
            case 'search':
              await call(kind, base, 'GET', `/v1/spaces/${pick(spaces).id}/search?query=${pick(WORDS)}`);
              break;
            case 'site':
              await call(kind, base, 'GET', pick(sitePaths), undefined, true);
              break;
            case 'comment':
              await call(kind, base, 'POST', `/v1/spaces/${space.id}/comments`, { body: { markdown: `Comment ${c}.${i}` } });
              await call(kind, base, 'GET', `/v1/spaces/${space.id}/comments?limit=20`);
              break;
            case 'edit':
            case 'merge': {
              if (!cr) cr = (await call(kind, base, 'POST', `/v1/spaces/${space.id}/change-requests`, { subject: `Client ${c}` })).id;
              if (kind === 'edit' || edits === 0) {
                await call(kind, base, 'POST', `/v1/spaces/${space.id}/change-requests/${cr}/content`, {
                  changes: [{ operation: 'update_page', page: myPage, document: { markdown: `Client ${c}'s page, edit ${i}: ${pick(WORDS)}.\n` } }],
                });
                edits++;
              }
              if (kind === 'merge') {
                await call(kind, base, 'POST', `/v1/spaces/${space.id}/change-requests/${cr}/merge`);
                cr = undefined;
                edits = 0;
              }
              break;
            }
          }
        } catch {
          // Counted by call(); the client goes on.
        }
      }
    };
    await Promise.all(Array.from({ length: CLIENTS }, (_, c) => client(c)));
    clearTimeout(warm);
    sample();
    const seconds = (Date.now() - measuredFrom) / 1000;

    const rows = MIX.map(([kind]) => {
      const t = (stats.times.get(kind) ?? []).sort((a, b) => a - b);
      return { kind, count: t.length, perSecond: t.length / seconds, p50: t.length ? percentile(t, 50) : NaN, p99: t.length ? percentile(t, 99) : NaN };
    });
    const total = rows.reduce((n, r) => n + r.count, 0);
    console.log(`\nafter ${(warmupMs / 1000).toFixed(0)} s of warm-up (${measured} requests), measured ${seconds.toFixed(0)} s:`);
    console.log('kind'.padEnd(10) + 'requests'.padStart(10) + 'req/s'.padStart(9) + 'p50 ms'.padStart(9) + 'p99 ms'.padStart(9));
    for (const r of rows) console.log(r.kind.padEnd(10) + String(r.count).padStart(10) + r.perSecond.toFixed(1).padStart(9) + r.p50.toFixed(0).padStart(9) + r.p99.toFixed(0).padStart(9));
    console.log('all'.padEnd(10) + String(total).padStart(10) + (total / seconds).toFixed(1).padStart(9));
    console.log(`answers (whole run): ${[...stats.status.entries()].sort().map(([k, v]) => `${k} ${v}`).join(', ')}; network errors ${stats.errors}`);
    if (stats.firstErrors.length) console.log(`first failures:\n  ${stats.firstErrors.join('\n  ')}`);
    console.log('\nRSS (MB)  after start  after warm-up  end    growth after warm-up');
    for (const [label, m] of memory) {
      const [start, warmed, last] = [m[0]!, m[1] ?? NaN, m.at(-1)!];
      console.log(`${label.padEnd(10)}${String(start).padStart(11)}${String(warmed).padStart(15)}${String(last).padStart(6)}${`${(((last - warmed) / warmed) * 100).toFixed(1)}%`.padStart(10)}`);
    }
    const fiveXX = stats.status.get('5xx') ?? 0;
    console.log(`\ngoals: no 5xx (${fiveXX}), no growth after warm-up beyond 10%`);
  } finally {
    await Promise.all(processes.map((p) => p.proc.stop()));
    await admin.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`).catch(() => {});
    await admin.end();
    rmSync(dataDir, { recursive: true, force: true });
  }
}

await main();
