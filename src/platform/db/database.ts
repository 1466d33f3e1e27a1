import { PGlite } from '@electric-sql/pglite';
import { pg_trgm } from '@electric-sql/pglite/contrib/pg_trgm';
import { CompiledQuery, Kysely, Migrator, PostgresDialect, sql, type Migration, type MigrationProvider, type RawBuilder } from 'kysely';
import pg from 'pg';
import { MEMORY_DATA_DIR, type Config } from '../config.ts';
import { DataDirLock } from './lock.ts';
import * as m0001 from './migrations/0001_foundation.ts';
import * as m0002 from './migrations/0002_collections_spaces.ts';
import * as m0003 from './migrations/0003_space_counts.ts';
import * as m0004 from './migrations/0004_content.ts';
import * as m0005 from './migrations/0005_comments.ts';
import * as m0006 from './migrations/0006_search.ts';
import * as m0007 from './migrations/0007_token_lifecycle.ts';
import * as m0008 from './migrations/0008_space_documents.ts';
import * as m0009 from './migrations/0009_openapi.ts';
import * as m0015 from './migrations/0015_integrations.ts';
import * as m0010 from './migrations/0010_sites.ts';
import * as m0011 from './migrations/0011_git_sync.ts';
import * as m0012 from './migrations/0012_saml.ts';
import * as m0013 from './migrations/0013_insights.ts';
import * as m0014 from './migrations/0014_translations.ts';
import * as m0016 from './migrations/0016_content_tokens.ts';
import * as m0017 from './migrations/0017_site_content_tokens.ts';
import * as m0018 from './migrations/0018_translation_page_fingerprints.ts';
import * as m0019 from './migrations/0019_passwords.ts';
import * as m0020 from './migrations/0020_search_languages.ts';
import * as m0021 from './migrations/0021_oidc.ts';
import * as m0022 from './migrations/0022_object_storage.ts';
import * as m0023 from './migrations/0023_site_mcp_servers.ts';
import * as m0024 from './migrations/0024_ask_site_questions.ts';
import * as m0025 from './migrations/0025_organization_language.ts';
import * as m0026 from './migrations/0026_collab_documents.ts';
import * as m0027 from './migrations/0027_mcp_headers_sealed.ts';
import * as m0028 from './migrations/0028_import_runs.ts';
import * as m0029 from './migrations/0029_site_event_sessions.ts';
import * as m0030 from './migrations/0030_ask_embeddings.ts';
import * as m0031 from './migrations/0031_pdf_exports.ts';
import { PGliteDialect } from './pglite-dialect.ts';
import type { Database } from './schema.ts';

export type Db = Kysely<Database>;

/** An open database: Kysely over PGlite (embedded) or PostgreSQL, plus how to close it. */
export interface DatabaseHandle {
  db: Db;
  engine: 'pglite' | 'postgres';
  /**
   * Runs a fixed statement that the hottest paths repeat on every request. On PostgreSQL it is a
   * named prepared statement, so the server plans it once per connection instead of per request
   * (planning that join cost more than running it).
   */
  prepared: Prepared;
  close(): Promise<void>;
}

export type Prepared = <R>(name: string, text: string, params: unknown[]) => Promise<R[]>;

/** Connections of a PostgreSQL pool: open in all, idle among them, and queries waiting for one. */
export interface PoolStats {
  total: number;
  idle: number;
  waiting: number;
}

const pools = new WeakMap<Db, pg.Pool>();

/** The connection pool of a database opened on PostgreSQL; undefined on PGlite (one in-process session, no pool). */
export function poolStats(db: Db): PoolStats | undefined {
  const pool = pools.get(db);
  return pool && { total: pool.totalCount, idle: pool.idleCount, waiting: pool.waitingCount };
}

/**
 * Extensions PGlite loads with the database (PostgreSQL has them as contrib modules): pg_trgm for
 * search's trigram similarity. Every PGlite opened on Folio's data passes these.
 */
export const PGLITE_EXTENSIONS = { pg_trgm };

/** Migrations are listed statically so they work bundled, on PGlite, and without a file scan. */
const migrations: Record<string, Migration> = {
  '0001_foundation': m0001,
  '0002_collections_spaces': m0002,
  '0003_space_counts': m0003,
  '0004_content': m0004,
  '0005_comments': m0005,
  '0006_search': m0006,
  '0007_token_lifecycle': m0007,
  '0008_space_documents': m0008,
  '0009_openapi': m0009,
  '0015_integrations': m0015,
  '0010_sites': m0010,
  '0011_git_sync': m0011,
  '0012_saml': m0012,
  '0013_insights': m0013,
  '0014_translations': m0014,
  '0016_content_tokens': m0016,
  '0017_site_content_tokens': m0017,
  '0018_translation_page_fingerprints': m0018,
  '0019_passwords': m0019,
  '0020_search_languages': m0020,
  '0021_oidc': m0021,
  '0022_object_storage': m0022,
  '0023_site_mcp_servers': m0023,
  '0024_ask_site_questions': m0024,
  '0025_organization_language': m0025,
  '0026_collab_documents': m0026,
  '0027_mcp_headers_sealed': m0027,
  '0028_import_runs': m0028,
  '0029_site_event_sessions': m0029,
  '0030_ask_embeddings': m0030,
  '0031_pdf_exports': m0031,
};

class StaticMigrationProvider implements MigrationProvider {
  async getMigrations() {
    return migrations;
  }
}

// PostgreSQL returns int8 (counts, identities) as strings; our values fit in a JS number.
const pgTypes = {
  getTypeParser(oid: number, format?: any) {
    if (oid === pg.types.builtins.INT8) return (value: string) => Number(value);
    return pg.types.getTypeParser(oid, format);
  },
};

export async function openDatabase(
  config: Pick<Config, 'databaseUrl' | 'dataDir'> & Partial<Pick<Config, 'databasePoolMax'>>,
  purpose: string,
  opts: {
    /**
     * With `DATA_DIR=memory://`, the database's contents at the start, as PGlite's `dumpDataDir`
     * wrote them (a test server starts from a migrated template this way, with no files to copy).
     */
    initialData?: Blob | undefined;
  } = {},
): Promise<DatabaseHandle> {
  if (config.databaseUrl) {
    const pool = new pg.Pool({ connectionString: config.databaseUrl, max: config.databasePoolMax ?? 10, types: pgTypes });
    // An idle connection closed by the server (restart, failover) must not crash the process:
    // the pool drops it and the next query opens a new one.
    pool.on('error', (err) => process.emitWarning(`PostgreSQL connection error: ${err.message}`));
    const db = new Kysely<Database>({ dialect: new PostgresDialect({ pool }) });
    pools.set(db, pool);
    const prepared: Prepared = async (name, text, values) => (await pool.query({ name, text, values })).rows;
    return { db, engine: 'postgres', prepared, close: () => db.destroy() };
  }
  const inMemory = config.dataDir === MEMORY_DATA_DIR;
  // Only a directory can be opened by two processes at once; memory belongs to this one.
  const lock = inMemory ? { release() {} } : DataDirLock.acquire(config.dataDir, purpose);
  try {
    const client = inMemory
      ? await PGlite.create({ loadDataDir: opts.initialData, extensions: PGLITE_EXTENSIONS })
      : await PGlite.create(config.dataDir, { extensions: PGLITE_EXTENSIONS });
    const db = new Kysely<Database>({ dialect: new PGliteDialect(client) });
    // PGlite runs in this process: its statements go through the same serialized session as the rest.
    const prepared: Prepared = async <R>(_name: string, text: string, params: unknown[]) =>
      (await db.executeQuery<R>(CompiledQuery.raw(text, params))).rows;
    return {
      db,
      engine: 'pglite',
      prepared,
      close: async () => {
        try {
          await db.destroy();
        } finally {
          lock.release();
        }
      },
    };
  } catch (err) {
    lock.release();
    throw err;
  }
}

/** Which engine a database opened by openDatabase runs on. */
export function engineOf(db: Db): 'pglite' | 'postgres' {
  return pools.has(db) ? 'postgres' : 'pglite';
}

/** The names of every migration this Folio knows, in the order they apply (Kysely's: by name). */
export function migrationNames(): string[] {
  return Object.keys(migrations).sort((a, b) => a.localeCompare(b));
}

/**
 * Migrates on a connection inside a transaction its caller opened and will commit or roll back (a
 * restore: the schema, the rows and the later migrations land together or not at all): to the
 * migration `name`, or to the latest.
 */
export async function migrateWithin(conn: Kysely<any>, name?: string): Promise<string[]> {
  const migrator = new Migrator({ db: conn, provider: new StaticMigrationProvider(), disableTransactions: true });
  const { error, results } = name ? await migrator.migrateTo(name) : await migrator.migrateToLatest();
  if (error) throw error;
  return (results ?? []).filter((r) => r.status === 'Success').map((r) => r.migrationName);
}

/** Brings the schema to the latest migration; safe to run at every start and from several processes. */
export async function migrate(db: Db): Promise<string[]> {
  // Every start lands here: when all migrations are recorded, one query says so (the Migrator
  // would take the lock and run several statements to find nothing to do).
  if (await allMigrationsApplied(db)) return [];
  // Serialize concurrent starts against one PostgreSQL (N API processes booting together).
  return db.connection().execute(async (conn) => {
    await sql`SELECT pg_advisory_lock(727274)`.execute(conn);
    try {
      const migrator = new Migrator({ db: conn, provider: new StaticMigrationProvider() });
      const { error, results } = await migrator.migrateToLatest();
      if (error) throw error;
      return (results ?? []).filter((r) => r.status === 'Success').map((r) => r.migrationName);
    } finally {
      await sql`SELECT pg_advisory_unlock(727274)`.execute(conn);
    }
  });
}

async function allMigrationsApplied(db: Db): Promise<boolean> {
  try {
    const rows = await sql<{ name: string }>`SELECT name FROM kysely_migration`.execute(db);
    const applied = new Set(rows.rows.map((r) => r.name));
    return Object.keys(migrations).every((name) => applied.has(name));
  } catch {
    return false; // a new database: no migration table yet
  }
}

/** A JSON value for a jsonb column (drivers would otherwise turn JS arrays into SQL arrays). */
export function json<T>(value: T): RawBuilder<T> {
  return sql<T>`${JSON.stringify(value)}::jsonb`;
}
