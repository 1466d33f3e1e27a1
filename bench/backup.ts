/**
 * Benchmark: `folio backup` of a running server's database and `folio restore` of it.
 *
 *   npm run bench:backup                     embedded database (PGlite)
 *   BENCH_DATABASE_URL=postgres://… npm run bench:backup
 *   BENCH_PAGES=20000 BENCH_BLOBS=40         size of the data (pages of ~2 KB, blobs of 1 MB)
 *
 * Builds a space of BENCH_PAGES pages and BENCH_BLOBS files in a server, then takes a backup while
 * a client keeps reading `GET /v1/orgs/{id}` from that server, and prints: the backup's time, size
 * and rows; the client's p50, p99 and slowest answer before and during the backup (on PGlite the
 * backup shares the server's one database session: this says how long requests wait for it); the
 * time to restore it into an empty target.
 */
import { randomBytes } from 'node:crypto';
import { rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { restoreInto, writeBackup } from '../src/platform/db/backup.ts';
import { freshDatabaseConfig, startTestServer } from '../test/support/server.ts';
import { bulkPages } from '../test/support/content.ts';
import { percentile } from './support.ts';

const PAGES = Number(process.env.BENCH_PAGES || 20_000);
const BLOBS = Number(process.env.BENCH_BLOBS || 40);
const DATABASE_URL = process.env.BENCH_DATABASE_URL;

async function main(): Promise<void> {
  if (DATABASE_URL) process.env.TEST_DATABASE_URL = DATABASE_URL;
  // On PGlite, a data directory (the server's database in memory would not say what a real one costs).
  const own = DATABASE_URL ? undefined : await freshDatabaseConfig(undefined, { migrated: true });
  const t = await startTestServer(own ? { dataDir: own.config.dataDir! } : {});
  const out = join(tmpdir(), `folio-bench-${randomBytes(4).toString('hex')}.backup.gz`);
  const restoredDir = join(tmpdir(), `folio-bench-restored-${randomBytes(4).toString('hex')}`);
  let restoredDb: string | undefined;
  try {
    const user = await t.user('Bench');
    const { data: org } = await user.api.orgs.createOrganization({ title: 'Bench' });
    const { data: space } = await user.api.orgs.createSpace(org.id, { title: 'Big' });
    const db = t.server.services.db;
    const row = await db.selectFrom('spaces').selectAll().where('id', '=', space.id).executeTakeFirstOrThrow();
    const text = 'Folio keeps documentation in revisions. '.repeat(50);
    const sections = Math.max(1, Math.round(PAGES / 200));
    await bulkPages(db, row, sections, Math.round(PAGES / sections) - 1, (n) => ({ title: `Page ${n}`, markdown: `# Page ${n}\n\n${text}${n}\n` }));
    for (let i = 0; i < BLOBS; i++) {
      const data = randomBytes(1 << 20);
      await db.insertInto('blobs').values({ hash: `bench-${i}-${randomBytes(8).toString('hex')}`, data, size: data.length }).execute();
    }

    const probe = async (until: () => boolean) => {
      const times: number[] = [];
      let failed = 0;
      while (!until()) {
        const started = performance.now();
        try {
          const res = await fetch(`${t.url}/v1/orgs/${org.id}`, { headers: { authorization: `Bearer ${user.token}` } });
          await res.arrayBuffer();
          if (!res.ok) failed++;
        } catch {
          // A keep-alive connection the server closed while its event loop was held (a long PGlite statement).
          failed++;
        }
        times.push(performance.now() - started);
      }
      return Object.assign(times.sort((a, b) => a - b), { failed });
    };
    const line = (label: string, times: number[] & { failed: number }) =>
      console.log(`${label.padEnd(34)}${String(times.length).padStart(8)}${percentile(times, 50).toFixed(1).padStart(9)}${percentile(times, 99).toFixed(1).padStart(9)}${times.at(-1)!.toFixed(0).padStart(9)}${String(times.failed).padStart(8)}`);

    const quietUntil = Date.now() + 3000;
    const quiet = await probe(() => Date.now() > quietUntil);
    let done = false;
    const during = probe(() => done);
    const summary = await writeBackup(db, out, { folio: 'bench', shared: true }).finally(() => (done = true));
    const busy = await during;
    const engine = DATABASE_URL ? 'PostgreSQL' : 'PGlite';
    console.log(`${engine}: ${PAGES} pages, ${BLOBS} blobs of 1 MB`);
    console.log(`backup: ${summary.seconds} s, ${(statSync(out).size / 1e6).toFixed(1)} MB compressed, ${summary.tables} tables, ${summary.rows} rows`);
    console.log(`${'GET /v1/orgs/{id} (ms)'.padEnd(34)}${'count'.padStart(8)}${'p50'.padStart(9)}${'p99'.padStart(9)}${'max'.padStart(9)}${'failed'.padStart(8)}`);
    line('  before the backup (3 s)', quiet);
    line('  during the backup', busy);

    let target: { databaseUrl: string | undefined; dataDir: string };
    if (DATABASE_URL) {
      const name = `folio_bench_restore_${randomBytes(4).toString('hex')}`;
      const admin = new pg.Client({ connectionString: DATABASE_URL });
      await admin.connect();
      await admin.query(`CREATE DATABASE ${name}`);
      await admin.end();
      const url = new URL(DATABASE_URL);
      url.pathname = `/${name}`;
      restoredDb = name;
      target = { databaseUrl: url.toString(), dataDir: restoredDir };
    } else {
      target = { databaseUrl: undefined, dataDir: restoredDir };
    }
    const restored = await restoreInto(target, out);
    console.log(`restore: ${restored.seconds} s (${restored.rows} rows), into ${DATABASE_URL ? 'a new database' : 'a new data directory (creating the database included)'}`);
  } finally {
    await t.close();
    await own?.cleanup();
    rmSync(out, { force: true });
    rmSync(restoredDir, { recursive: true, force: true });
    if (restoredDb) {
      const admin = new pg.Client({ connectionString: DATABASE_URL });
      await admin.connect();
      await admin.query(`DROP DATABASE IF EXISTS ${restoredDb} WITH (FORCE)`);
      await admin.end();
    }
  }
}

await main();
