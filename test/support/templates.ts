import { createHash, randomBytes } from 'node:crypto';
import { cpSync } from 'node:fs';
import { appendFile, cp, mkdtemp, readFile, readdir, rename, rm, stat, writeFile } from 'node:fs/promises';
import { PGlite } from '@electric-sql/pglite';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { migrate, openDatabase, PGLITE_EXTENSIONS } from '../../src/platform/db/database.ts';

/**
 * Test databases are copies of templates made once: creating an embedded database (PGlite's
 * initdb) costs seconds and migrating it more, while copying a finished data directory costs a
 * fraction of a second. On PostgreSQL, `CREATE DATABASE … TEMPLATE` does the same.
 *
 * Templates are keyed by a hash of what shapes them (the migrations, the migration list and the
 * PGlite version), so they are reused across runs and rebuilt as soon as a migration changes.
 * Building is race-free without locks: each builder works under its own name and renames the result
 * into place; a loser of the race throws its copy away.
 */

const root = fileURLToPath(new URL('../../', import.meta.url));
const PREFIX = 'folio-test-template-';

let keyPromise: Promise<string> | undefined;

/** A short hash of the migrations, the migration list, the PGlite version and this file. */
export function templateKey(): Promise<string> {
  return (keyPromise ??= (async () => {
    const hash = createHash('sha256');
    const migrationsDir = join(root, 'src/platform/db/migrations');
    const files = (await readdir(migrationsDir)).sort().map((f) => join(migrationsDir, f));
    files.push(join(root, 'src/platform/db/database.ts'), join(root, 'node_modules/@electric-sql/pglite/package.json'), fileURLToPath(import.meta.url));
    for (const file of files) {
      hash.update(file.slice(root.length)).update('\0').update(await readFile(file)).update('\0');
    }
    return hash.digest('hex').slice(0, 12);
  })());
}

async function exists(path: string): Promise<boolean> {
  try {
    await stat(path);
    return true;
  } catch {
    return false;
  }
}

/**
 * Builds a PGlite data directory under a private name, then renames it to `dir` (unless another
 * process got there first). The migrated template starts as a copy of the empty one: one initdb.
 */
async function buildPgliteTemplate(dir: string, migrated: boolean): Promise<void> {
  const building = await mkdtemp(`${dir}.building-`);
  try {
    if (migrated) await cp(await pgliteTemplate(false), building, { recursive: true });
    const handle = await openDatabase({ databaseUrl: undefined, dataDir: building }, 'test template');
    try {
      if (migrated) await migrate(handle.db);
    } finally {
      await handle.close();
    }
    try {
      await rename(building, dir);
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code;
      if (code !== 'EEXIST' && code !== 'ENOTEMPTY') throw err;
    }
  } finally {
    await rm(building, { recursive: true, force: true });
  }
}

/** Removes templates of other keys left by earlier runs (older than an hour, so a run in progress keeps its own). */
async function pruneOldPgliteTemplates(keep: string): Promise<void> {
  const entries = await readdir(tmpdir()).catch(() => [] as string[]);
  for (const name of entries) {
    if (!name.startsWith(PREFIX) || name.includes(keep)) continue;
    const path = join(tmpdir(), name);
    const info = await stat(path).catch(() => undefined);
    if (info && Date.now() - info.mtimeMs > 3_600_000) await rm(path, { recursive: true, force: true });
  }
}

const pgliteTemplates = new Map<string, Promise<string>>();

/** The directory of a PGlite template (empty, or migrated to the latest migration), built on first use. */
export function pgliteTemplate(migrated: boolean): Promise<string> {
  const kind = migrated ? 'migrated' : 'empty';
  let promise = pgliteTemplates.get(kind);
  if (!promise) {
    promise = (async () => {
      const key = await templateKey();
      const dir = join(tmpdir(), `${PREFIX}${key}-${kind}`);
      if (!(await exists(dir))) {
        await pruneOldPgliteTemplates(key);
        await buildPgliteTemplate(dir, migrated);
      }
      return dir;
    })();
    pgliteTemplates.set(kind, promise);
  }
  return promise;
}

let dumpPromise: Promise<string> | undefined;

/**
 * The migrated template as one file, as PGlite's `dumpDataDir` writes it: a test server loads it
 * into an in-memory database (DATA_DIR=memory://), which costs a fraction of copying and later
 * removing the template's ~1,100 files, and whose writes never reach the disk.
 */
export function pgliteTemplateDump(): Promise<string> {
  return (dumpPromise ??= (async () => {
    const dir = await pgliteTemplate(true);
    const path = `${dir}.tar`;
    if (await exists(path)) return path;
    // Dumped from a private copy (opening a directory writes to it; others may be copying the template).
    const copy = await mkdtemp(`${dir}.dumping-`);
    try {
      await cp(dir, copy, { recursive: true });
      // Every test server on PGlite starts from this dump; two changes take a third off a start's
      // CPU (600 ms to 400). Its shared buffers are set up at every start: 16 MB instead of 128
      // hold a test's data. And it has no template0 and template1 (a third of the dump): nothing
      // creates a database in a test server's PGlite.
      await appendFile(join(copy, 'postgresql.conf'), '\n# test/support/templates.ts: the dump test servers start from\nshared_buffers = 16MB\n');
      const client = await PGlite.create(copy, { extensions: PGLITE_EXTENSIONS });
      await client.exec('ALTER DATABASE template0 IS_TEMPLATE false; ALTER DATABASE template1 IS_TEMPLATE false');
      await client.exec('DROP DATABASE template0');
      await client.exec('DROP DATABASE template1');
      const dump = await client.dumpDataDir('none');
      await client.close();
      const building = `${copy}.tar`;
      await writeFile(building, Buffer.from(await dump.arrayBuffer()));
      await rename(building, path);
    } finally {
      await rm(copy, { recursive: true, force: true });
    }
    return path;
  })());
}

/** A new PGlite data directory: a copy of the template. */
export async function copyPgliteTemplate(migrated: boolean): Promise<string> {
  const template = await pgliteTemplate(migrated);
  const dataDir = await mkdtemp(join(tmpdir(), 'folio-test-'));
  // The synchronous copy takes about half the CPU time of the asynchronous one (~1,100 files).
  cpSync(template, dataDir, { recursive: true });
  return dataDir;
}

/** Runs `fn` with a client on the administration database `admin`. */
async function withClient<T>(admin: string, fn: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: admin });
  await client.connect();
  try {
    return await fn(client);
  } finally {
    await client.end();
  }
}

function databaseUrl(admin: string, name: string): string {
  const url = new URL(admin);
  url.pathname = `/${name}`;
  return url.toString();
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * Retries statements that PostgreSQL refuses while another session is still connected to the
 * database involved (55006 object_in_use): a pool that has just ended may not have left yet.
 */
async function whileInUse<T>(fn: () => Promise<T>): Promise<T> {
  for (let attempt = 0; ; attempt++) {
    try {
      return await fn();
    } catch (err) {
      if ((err as { code?: string }).code !== '55006' || attempt >= 100) throw err;
      await sleep(50);
    }
  }
}

const postgresTemplates = new Map<string, Promise<string>>();

/** The name of the migrated template database on the server `admin`, built on first use. */
export function postgresTemplate(admin: string): Promise<string> {
  let promise = postgresTemplates.get(admin);
  if (!promise) {
    promise = (async () => {
      const name = `folio_template_${await templateKey()}`;
      const found = await withClient(admin, (c) => c.query('SELECT 1 FROM pg_database WHERE datname = $1', [name]));
      if (found.rowCount) return name;
      const building = `${name}_${randomBytes(4).toString('hex')}`;
      await withClient(admin, (c) => c.query(`CREATE DATABASE ${building}`));
      try {
        const handle = await openDatabase({ databaseUrl: databaseUrl(admin, building), dataDir: '' }, 'test template');
        try {
          await migrate(handle.db);
        } finally {
          await handle.close();
        }
        await withClient(admin, (c) =>
          whileInUse(async () => {
            try {
              await c.query(`ALTER DATABASE ${building} RENAME TO ${name}`);
            } catch (err) {
              // 42P04 duplicate_database: another run built the same template first.
              if ((err as { code?: string }).code !== '42P04') throw err;
            }
          }),
        );
      } finally {
        await withClient(admin, (c) => c.query(`DROP DATABASE IF EXISTS ${building} WITH (FORCE)`));
      }
      return name;
    })();
    postgresTemplates.set(admin, promise);
  }
  return promise;
}

/** Creates a PostgreSQL database for one test file (a copy of the migrated template, or empty) and returns its URL. */
export async function createPostgresDatabase(admin: string, name: string, migrated: boolean): Promise<string> {
  const template = migrated ? await postgresTemplate(admin) : undefined;
  await withClient(admin, (c) =>
    whileInUse(() => c.query(template ? `CREATE DATABASE ${name} TEMPLATE ${template}` : `CREATE DATABASE ${name}`)),
  );
  return databaseUrl(admin, name);
}

/** Builds every template the suite will use, once, before the test files start (the runner's global set-up). */
export async function prepareTemplates(admin: string | undefined = process.env.TEST_DATABASE_URL): Promise<void> {
  if (admin) await postgresTemplate(admin);
  else await pgliteTemplateDump();
}
