import { createReadStream, createWriteStream, existsSync, readdirSync, renameSync, rmSync, rmdirSync } from 'node:fs';
import { open, stat } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { setTimeout as sleep } from 'node:timers/promises';
import { createGunzip, createGzip } from 'node:zlib';
import { randomBytes } from 'node:crypto';
import { CompiledQuery, sql, type Kysely } from 'kysely';
import type { Config } from '../config.ts';
import { HttpError } from '../errors.ts';
import { engineOf, migrateWithin, migrationNames, openDatabase, type Db } from './database.ts';

/**
 * Logical backups of Folio's database, the same on both engines (PGlite and PostgreSQL), so a
 * backup of one restores into the other.
 *
 * The file is gzip-compressed JSON lines:
 *
 *   {"format":"folio-backup","version":1,"createdAt":…,"folio":…,"engine":…,"migrations":[…]}
 *   {"section":"table","name":"users","columns":["id",…]}
 *   {"id":"…",…}                            one line per row, as PostgreSQL's row_to_json wrote it
 *   {"end":"table","name":"users","rows":2}
 *   …                                       every table, parents before children
 *   {"section":"sequences","items":[{"name":…,"value":…,"called":…}]}
 *   {"section":"<kind>",…} … {"end":"<kind>",…}   sections other parts add (see BackupSection)
 *   {"end":"backup","tables":41,"rows":1234}
 *
 * Rows are read in one snapshot (every table at the same instant) and never parsed in JavaScript:
 * PostgreSQL turns each row into JSON text on the way out (bytea as hex, timestamps as ISO text,
 * jsonb as JSON, arrays as arrays) and back through json_populate_recordset on the way in, so
 * values, big integers included, round-trip exactly. Neither side holds more than a batch of rows
 * in memory. A file without its last line (a copy cut short) is refused.
 */
export const BACKUP_FORMAT = 'folio-backup';
export const BACKUP_VERSION = 1;

export interface BackupHeader {
  format: typeof BACKUP_FORMAT;
  version: number;
  createdAt: string;
  /** The Folio version that wrote it. */
  folio: string;
  engine: 'pglite' | 'postgres';
  /** The migrations applied to the database it was taken from: the schema its rows fit. */
  migrations: string[];
}

/**
 * A section another part of Folio adds to backups, read in the same snapshot as the tables: e.g.
 * the manifest of files kept in an object store outside the database (the key, size and hash of
 * each object), so a restore can check the store still holds every object the rows refer to.
 * `query` is one SELECT; each of its rows is written as a JSON line.
 */
export interface BackupSection {
  kind: string;
  /** Written in the section's first line (e.g. which store, which bucket). */
  meta: Record<string, unknown>;
  query: string;
}

/** What restore does with a section of a given kind; a section without one is refused. */
export type SectionHandler = (meta: Record<string, unknown>, rows: AsyncIterable<unknown>) => Promise<void>;

export interface BackupSummary {
  out: string;
  bytes: number;
  tables: number;
  rows: number;
  migration: string | undefined;
  seconds: number;
}

/**
 * Content-addressed tables whose rows are only ever inserted (keyed by the hash of what they hold,
 * never updated, never deleted: nothing collects them today). On PGlite a backup reads them after
 * its snapshot, a batch at a time, instead of materializing them in the snapshot's commit, which
 * would hold the server's one session for as long as copying them takes: what it reads is then a
 * superset of the snapshot's rows, identical where they overlap, and rows added since are unused
 * content. A change that deletes from one of them (a garbage collection) must take it off this list.
 */
const APPEND_ONLY_TABLES = ['blobs', 'documents', 'tree_nodes'];
/** About how many bytes of an append-only table one statement reads on PGlite. */
const KEYSET_BATCH_BYTES = 1 << 20;

/** Tables the migrations own: restore recreates them by migrating, never from rows. */
const MIGRATION_TABLES = ['kysely_migration', 'kysely_migration_lock'];

/** A backup or restore refused or failed for a reason the operator can act on (said in its message). */
export class BackupError extends HttpError {
  constructor(message: string) {
    super(400, message);
  }
}

const ident = (name: string) => `"${name.replace(/"/g, '""')}"`;

interface TablePlan {
  name: string;
  columns: string[];
}

/** The tables of the current schema, parents before children (by foreign keys), and their stored columns. */
async function readTables(db: Kysely<any>): Promise<TablePlan[]> {
  const { rows: tables } = await sql<{ name: string }>`
    SELECT c.relname AS name FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
    WHERE c.relkind IN ('r', 'p') AND n.nspname = current_schema() AND NOT c.relispartition
    ORDER BY c.relname`.execute(db);
  const { rows: columns } = await sql<{ table: string; column: string }>`
    SELECT c.relname AS table, a.attname AS column
    FROM pg_attribute a JOIN pg_class c ON c.oid = a.attrelid JOIN pg_namespace n ON n.oid = c.relnamespace
    WHERE n.nspname = current_schema() AND c.relkind IN ('r', 'p') AND a.attnum > 0 AND NOT a.attisdropped AND a.attgenerated = ''
    ORDER BY c.relname, a.attnum`.execute(db);
  const { rows: edges } = await sql<{ child: string; parent: string }>`
    SELECT c.relname AS child, p.relname AS parent
    FROM pg_constraint k JOIN pg_class c ON c.oid = k.conrelid JOIN pg_class p ON p.oid = k.confrelid
    JOIN pg_namespace n ON n.oid = c.relnamespace
    WHERE k.contype = 'f' AND n.nspname = current_schema()`.execute(db);
  const names = tables.map((t) => t.name).filter((n) => !MIGRATION_TABLES.includes(n));
  const parents = new Map(names.map((n) => [n, new Set<string>()]));
  for (const e of edges) if (e.child !== e.parent) parents.get(e.child)?.add(e.parent);
  // Depth-first topological order; a cycle (none today) would just be cut where it is met.
  const ordered: string[] = [];
  const seen = new Set<string>();
  const visit = (n: string) => {
    if (seen.has(n)) return;
    seen.add(n);
    for (const p of parents.get(n) ?? []) visit(p);
    ordered.push(n);
  };
  names.forEach(visit);
  const byTable = new Map<string, string[]>();
  for (const c of columns) byTable.set(c.table, [...(byTable.get(c.table) ?? []), c.column]);
  return ordered.map((name) => ({ name, columns: byTable.get(name) ?? [] }));
}

/** Rows fetched per round trip: fewer when rows are large (file bytes), more when they are small. */
class BatchSize {
  value = 10;
  adapt(bytes: number): void {
    if (bytes > 2 << 20) this.value = Math.max(1, this.value >> 1);
    else if (bytes < 512 << 10) this.value = Math.min(5000, this.value * 4);
  }
}

/**
 * Writes a backup of the database to `out` (replaced only once the new file is complete: it is
 * written beside it under a temporary name, flushed, then renamed).
 *
 * Consistency: every table is read in one snapshot. On PostgreSQL that is one REPEATABLE READ, READ
 * ONLY transaction on one connection for the whole backup; the server's other connections keep
 * working. PGlite has a single session that the server's requests share, so the backup declares a
 * cursor WITH HOLD per table in one transaction and commits it: PostgreSQL materializes the
 * snapshot's rows then (spilling to temporary files beyond work_mem), and the rows are then
 * fetched a batch at a time, each fetch a short turn of the session between the server's requests.
 * The content-addressed tables, the bulk of a database, are not materialized (APPEND_ONLY_TABLES).
 */
export async function writeBackup(
  db: Db,
  out: string,
  opts: {
    folio: string;
    sections?: BackupSection[];
    /**
     * A server's requests share this database's session (PGlite in `folio serve`): pause after each
     * read as long as it took, so they never wait long for the session.
     */
    shared?: boolean;
  },
): Promise<BackupSummary> {
  const started = performance.now();
  const engine = engineOf(db);
  const sections = opts.sections ?? [];
  const tmp = join(dirname(out), `.${basename(out)}.${randomBytes(4).toString('hex')}.partial`);
  let tables = 0;
  let rows = 0;
  let migration: string | undefined;
  // Cursors are named per backup: on PGlite two backups (and the server) share one session.
  const prefix = `folio_backup_${randomBytes(4).toString('hex')}`;
  const cursors: string[] = [];

  /** Reads the next rows of one part of the backup, as JSON lines; none left: []. */
  type Reader = (n: number) => Promise<string[]>;
  async function* lines(plan: TablePlan[], header: BackupHeader, sequences: unknown[], readers: Reader[]): AsyncGenerator<string> {
    yield JSON.stringify(header) + '\n';
    const drain = async function* (read: Reader): AsyncGenerator<string, number> {
      const size = new BatchSize();
      let count = 0;
      for (;;) {
        const begun = performance.now();
        const batch = await read(size.value);
        // On PGlite each read takes the session the server's requests share: leave it to them
        // for as long again, so a request waits for one read at most per query it makes.
        if (opts.shared && engine === 'pglite') await sleep(performance.now() - begun);
        if (batch.length === 0) return count;
        let bytes = 0;
        let chunk = '';
        for (const line of batch) {
          // Only a `json` (not jsonb) column could carry a raw line break, as whitespace between
          // tokens (JSON strings cannot hold one): a space means the same there.
          chunk += (line.includes('\n') || line.includes('\r') ? line.replace(/[\r\n]/g, ' ') : line) + '\n';
          bytes += line.length;
        }
        size.adapt(bytes);
        count += batch.length;
        yield chunk;
      }
    };
    for (const [i, table] of plan.entries()) {
      yield JSON.stringify({ section: 'table', name: table.name, columns: table.columns }) + '\n';
      const n = yield* drain(readers[i]!);
      yield JSON.stringify({ end: 'table', name: table.name, rows: n }) + '\n';
      tables++;
      rows += n;
    }
    yield JSON.stringify({ section: 'sequences', items: sequences }) + '\n';
    for (const [i, s] of sections.entries()) {
      yield JSON.stringify({ ...s.meta, section: s.kind }) + '\n';
      const n = yield* drain(readers[plan.length + i]!);
      yield JSON.stringify({ end: s.kind, rows: n }) + '\n';
    }
    yield JSON.stringify({ end: 'backup', tables, rows }) + '\n';
  }

  const cursor = (via: Kysely<any>, name: string): Reader => async (n) =>
    (await sql<{ j: string }>`${sql.raw(`FETCH FORWARD ${n} FROM ${name}`)}`.execute(via)).rows.map((r) => r.j);

  /**
   * Rows of an append-only table by primary key, outside the snapshot: each statement reads at most
   * `n` rows and about KEYSET_BATCH_BYTES (at least one row), so no read holds PGlite's session long.
   */
  const keyset = (via: Kysely<any>, table: TablePlan): Reader => {
    let last: string | undefined;
    const columns = table.columns.map(ident).join(', ');
    return async (n) => {
      const after = last === undefined ? sql`` : sql`WHERE hash > ${last}`;
      const { rows } = await sql<{ j: string; k: string }>`
        SELECT row_to_json(r)::text AS j, r.hash AS k FROM (
          SELECT ${sql.raw(columns)} FROM (
            SELECT *, sum(pg_column_size(t.*)) OVER (ORDER BY hash) - pg_column_size(t.*) AS before
            FROM (SELECT ${sql.raw(columns)} FROM ${sql.raw(ident(table.name))} ${after} ORDER BY hash LIMIT ${n}) t
          ) w WHERE before < ${KEYSET_BATCH_BYTES} ORDER BY hash
        ) r`.execute(via);
      last = rows.at(-1)?.k ?? last;
      return rows.map((r) => r.j);
    };
  };

  /**
   * In the snapshot's transaction: what to read, and a reader for each part. `hold`: PGlite, where
   * cursors are declared WITH HOLD and read through `via` after the transaction commits.
   */
  async function prepare(conn: Kysely<any>, hold: boolean, via: Kysely<any>) {
    const { rows: schema } = await sql<{ found: boolean }>`SELECT to_regclass('kysely_migration') IS NOT NULL AS found`.execute(conn);
    if (!schema[0]?.found) throw new BackupError('The database has no Folio schema yet (no migration was applied): nothing to back up');
    const plan = await readTables(conn);
    const { rows: applied } = await sql<{ name: string }>`SELECT name FROM kysely_migration ORDER BY name`.execute(conn);
    const { rows: sequences } = await sql<{ name: string; value: string; called: boolean }>`
      SELECT sequencename AS name, COALESCE(last_value, start_value)::text AS value, last_value IS NOT NULL AS called
      FROM pg_sequences WHERE schemaname = current_schema() ORDER BY sequencename`.execute(conn);
    const withHold = hold ? 'WITH HOLD' : '';
    const readers: Reader[] = [];
    const declare = async (query: string) => {
      const name = `${prefix}_${cursors.length}`;
      cursors.push(name);
      await sql.raw(`DECLARE ${name} NO SCROLL CURSOR ${withHold} FOR SELECT row_to_json(r)::text AS j FROM (${query}) r`).execute(conn);
      readers.push(cursor(via, name));
    };
    for (const t of plan) {
      if (hold && APPEND_ONLY_TABLES.includes(t.name) && t.columns.includes('hash')) readers.push(keyset(via, t));
      else await declare(`SELECT ${t.columns.map(ident).join(', ')} FROM ${ident(t.name)}`);
    }
    for (const s of sections) await declare(s.query);
    const names = applied.map((r) => r.name);
    migration = names.at(-1);
    const header: BackupHeader = {
      format: BACKUP_FORMAT,
      version: BACKUP_VERSION,
      createdAt: new Date().toISOString(),
      folio: opts.folio,
      engine,
      migrations: names,
    };
    return { plan, header, sequences, readers };
  }

  const write = (source: AsyncIterable<string>) =>
    pipeline(Readable.from(source), createGzip({ level: 6 }), createWriteStream(tmp, { mode: 0o600 }));

  try {
    if (engine === 'postgres') {
      await db.connection().execute(async (conn) => {
        await sql`BEGIN ISOLATION LEVEL REPEATABLE READ, READ ONLY`.execute(conn);
        try {
          const { plan, header, sequences, readers } = await prepare(conn, false, conn);
          await write(lines(plan, header, sequences, readers));
          await sql`COMMIT`.execute(conn);
        } catch (err) {
          await sql`ROLLBACK`.execute(conn).catch(() => {});
          throw err;
        }
      });
    } else {
      const prepared = await db.connection().execute(async (conn) => {
        await sql`BEGIN ISOLATION LEVEL REPEATABLE READ, READ ONLY`.execute(conn);
        try {
          const p = await prepare(conn, true, db);
          await sql`COMMIT`.execute(conn);
          return p;
        } catch (err) {
          await sql`ROLLBACK`.execute(conn).catch(() => {});
          throw err;
        }
      });
      try {
        // Each FETCH takes the session for one statement: the server's requests run in between.
        await write(lines(prepared.plan, prepared.header, prepared.sequences, prepared.readers));
      } finally {
        // Held cursors live until closed: free what they materialized (each fully read one too).
        for (const cursor of cursors) await sql.raw(`CLOSE ${cursor}`).execute(db).catch(() => {});
      }
    }
    const handle = await open(tmp, 'r');
    try {
      await handle.sync();
    } finally {
      await handle.close();
    }
    renameSync(tmp, out);
  } catch (err) {
    rmSync(tmp, { force: true });
    throw err;
  }
  const { size } = await stat(out);
  return { out, bytes: size, tables, rows, migration, seconds: Math.round((performance.now() - started) / 100) / 10 };
}

/** The lines of a backup file, decompressed, one at a time; a damaged file throws from the iteration. */
async function* readLines(file: string): AsyncGenerator<string> {
  const gunzip = createGunzip();
  // A read or decompression error ends the iteration below with that error.
  pipeline(createReadStream(file), gunzip).catch(() => {});
  gunzip.setEncoding('utf8');
  // A line (a row with file bytes) may span many chunks: each chunk is scanned once.
  let pending: string[] = [];
  for await (const chunk of gunzip as AsyncIterable<string>) {
    let start = 0;
    for (let nl = chunk.indexOf('\n'); nl >= 0; nl = chunk.indexOf('\n', start)) {
      pending.push(chunk.slice(start, nl));
      yield pending.join('');
      pending = [];
      start = nl + 1;
    }
    if (start < chunk.length) pending.push(chunk.slice(start));
  }
  if (pending.length) yield pending.join('');
}

function parseLine(line: string, what: string): any {
  try {
    return JSON.parse(line);
  } catch {
    throw new BackupError(`The backup is damaged: ${what} is not JSON`);
  }
}

/** Reads and checks a backup's first line. */
export async function readBackupHeader(file: string): Promise<BackupHeader> {
  const it = readLines(file);
  try {
    const first = await it.next().catch((err: Error) => {
      throw new BackupError(`${file} is not a Folio backup (${err.message})`);
    });
    return checkHeader(first.done ? undefined : first.value, file);
  } finally {
    await it.return(undefined);
  }
}

function checkHeader(line: string | undefined, file: string): BackupHeader {
  const header = line === undefined ? undefined : (() => { try { return JSON.parse(line); } catch { return undefined; } })();
  if (!header || typeof header !== 'object' || header.format !== BACKUP_FORMAT) throw new BackupError(`${file} is not a Folio backup (folio backup --out FILE writes one)`);
  if (header.version !== BACKUP_VERSION) {
    throw new BackupError(`${file} is a Folio backup of format version ${header.version}; this Folio reads version ${BACKUP_VERSION}: restore it with the Folio version that wrote it (${header.folio})`);
  }
  if (!Array.isArray(header.migrations) || !header.migrations.every((m: unknown) => typeof m === 'string')) {
    throw new BackupError(`${file} is damaged: its first line does not list its migrations`);
  }
  const known = migrationNames();
  const unknown = (header.migrations as string[]).filter((m) => !known.includes(m));
  if (unknown.length) {
    throw new BackupError(`${file} was written by a newer Folio (${header.folio}: migrations ${unknown.join(', ')} are unknown here): upgrade Folio, then restore`);
  }
  const latest = [...header.migrations].sort((a: string, b: string) => a.localeCompare(b)).at(-1);
  const expected = latest ? known.filter((m) => m.localeCompare(latest) <= 0) : [];
  if (expected.length !== header.migrations.length) throw new BackupError(`${file} lists a set of migrations no Folio version had: it was altered`);
  return header;
}

/**
 * Runs `fn` in one transaction on one connection: Kysely's own transactions cannot hold the
 * migrator, which a restore runs inside its transaction.
 */
async function inTransaction<T>(db: Db, fn: (conn: Kysely<any>) => Promise<T>): Promise<T> {
  return db.connection().execute(async (conn) => {
    await sql`BEGIN`.execute(conn);
    try {
      const result = await fn(conn);
      await sql`COMMIT`.execute(conn);
      return result;
    } catch (err) {
      await sql`ROLLBACK`.execute(conn).catch(() => {});
      throw err;
    }
  });
}

/** Tables and sequences in the current schema: restore goes into an empty database only. */
async function countRelations(db: Db): Promise<number> {
  const { rows } = await sql<{ n: number }>`
    SELECT count(*)::int AS n FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
    WHERE n.nspname = current_schema() AND c.relkind IN ('r', 'p', 'S', 'v', 'm')`.execute(db);
  return rows[0]!.n;
}

export interface RestoreSummary {
  tables: number;
  rows: number;
  /** The backup's schema version, and the one the database has now (later migrations applied after the load). */
  migration: string | undefined;
  migratedTo: string | undefined;
  seconds: number;
}

/** Largest batch of rows sent in one INSERT, in characters of JSON. */
const INSERT_BATCH_CHARS = 4 << 20;
const INSERT_BATCH_ROWS = 2000;

/**
 * Loads a backup into an empty database, in one transaction (a failure leaves it empty): migrates
 * it to the backup's schema version, loads every table's rows with foreign keys dropped and user
 * triggers disabled (re-added and re-enabled at the end, so PostgreSQL checks every reference
 * once), sets the sequences, then applies the migrations that came after the backup.
 */
export async function restoreBackup(db: Db, file: string, opts: { sections?: Record<string, SectionHandler> } = {}): Promise<RestoreSummary> {
  const started = performance.now();
  if ((await countRelations(db)) > 0) throw new BackupError('The target database is not empty: restore goes into an empty database only');
  const it = readLines(file);
  let lineNo = 0;
  const next = async (): Promise<string | undefined> => {
    let r: IteratorResult<string>;
    try {
      r = await it.next();
    } catch (err) {
      throw new BackupError(`The backup ${file} is damaged or cut short (${(err as Error).message})`);
    }
    if (r.done) return undefined;
    lineNo++;
    return r.value;
  };
  try {
    const header = checkHeader(await next(), file);
    const latest = header.migrations.at(-1);
    let tables = 0;
    let rows = 0;
    let ended = false;
    let applied: string[] = [];
    await inTransaction(db, async (trx) => {
      if (latest) await migrateWithin(trx, latest);
      const { rows: fks } = await sql<{ table: string; name: string; def: string }>`
        SELECT c.relname AS table, k.conname AS name, pg_get_constraintdef(k.oid) AS def
        FROM pg_constraint k JOIN pg_class c ON c.oid = k.conrelid JOIN pg_namespace n ON n.oid = c.relnamespace
        WHERE k.contype = 'f' AND n.nspname = current_schema()`.execute(trx);
      for (const fk of fks) await sql.raw(`ALTER TABLE ${ident(fk.table)} DROP CONSTRAINT ${ident(fk.name)}`).execute(trx);
      const target = new Map((await readTables(trx)).map((t) => [t.name, t.columns]));
      for (const t of target.keys()) await sql.raw(`ALTER TABLE ${ident(t)} DISABLE TRIGGER USER`).execute(trx);

      for (let line = await next(); line !== undefined; line = await next()) {
        const head = parseLine(line, `line ${lineNo}`);
        // An altered line (null, a number, a list) is refused as damage, not met as a TypeError.
        if (!head || typeof head !== 'object' || Array.isArray(head)) throw new BackupError(`The backup is damaged: line ${lineNo} starts no section`);
        if (head.end === 'backup') {
          if (head.tables !== tables || head.rows !== rows) throw new BackupError(`The backup is damaged: it announces ${head.tables} tables and ${head.rows} rows, it holds ${tables} and ${rows}`);
          ended = true;
          break;
        }
        if (head.section === 'table') {
          const columns = target.get(head.name);
          if (!columns) throw new BackupError(`The backup has a table "${head.name}" that its schema version does not have: it was altered`);
          if (!Array.isArray(head.columns)) throw new BackupError(`The backup is damaged: table "${head.name}" lists no columns`);
          const missing = (head.columns as string[]).filter((c) => !columns.includes(c));
          if (missing.length) throw new BackupError(`The backup's table "${head.name}" has columns ${missing.join(', ')} that its schema version does not have`);
          const list = (head.columns as string[]).map(ident).join(', ');
          const insert = `INSERT INTO ${ident(head.name)} (${list}) OVERRIDING SYSTEM VALUE SELECT ${list} FROM json_populate_recordset(NULL::${ident(head.name)}, $1::json)`;
          let batch: string[] = [];
          let chars = 0;
          let count = 0;
          const send = async () => {
            if (!batch.length) return;
            await trx.executeQuery(CompiledQuery.raw(insert, [`[${batch.join(',')}]`]));
            count += batch.length;
            batch = [];
            chars = 0;
          };
          for (let row = await next(); ; row = await next()) {
            if (row === undefined) throw new BackupError(`The backup is cut short in table "${head.name}"`);
            if (row.startsWith('{"end":"table"')) {
              await send();
              const end = parseLine(row, `line ${lineNo}`);
              if (end.name !== head.name || end.rows !== count) throw new BackupError(`The backup is damaged: table "${head.name}" announces ${end.rows} rows, it holds ${count}`);
              break;
            }
            batch.push(row);
            chars += row.length;
            if (chars > INSERT_BATCH_CHARS || batch.length >= INSERT_BATCH_ROWS) await send();
          }
          tables++;
          rows += count;
          continue;
        }
        if (head.section === 'sequences') {
          if (!Array.isArray(head.items)) throw new BackupError(`The backup is damaged: line ${lineNo} lists no sequences`);
          for (const s of head.items as { name: string; value: string; called: boolean }[]) {
            await sql`SELECT setval(${ident(s.name)}::regclass, ${s.value}::bigint, ${s.called})`.execute(trx);
          }
          continue;
        }
        if (typeof head.section === 'string') {
          const kind: string = head.section;
          const handler = opts.sections?.[kind];
          if (!handler) throw new BackupError(`The backup has a "${kind}" section this Folio cannot restore: restore it with the Folio version that wrote it (${header.folio})`);
          const { section: _s, ...meta } = head;
          async function* sectionRows(): AsyncGenerator<unknown> {
            for (let row = await next(); ; row = await next()) {
              if (row === undefined) throw new BackupError(`The backup is cut short in its "${kind}" section`);
              const value = parseLine(row, `line ${lineNo}`);
              if (value && typeof value === 'object' && value.end === kind) return;
              yield value;
            }
          }
          await handler(meta, sectionRows());
          continue;
        }
        throw new BackupError(`The backup is damaged: line ${lineNo} starts no section`);
      }
      if (!ended) throw new BackupError(`The backup ${file} is cut short: its last line is missing (a copy that did not finish?)`);
      for (const t of target.keys()) await sql.raw(`ALTER TABLE ${ident(t)} ENABLE TRIGGER USER`).execute(trx);
      // Every reference is checked here, once per constraint.
      for (const fk of fks) await sql.raw(`ALTER TABLE ${ident(fk.table)} ADD CONSTRAINT ${ident(fk.name)} ${fk.def}`).execute(trx);
      applied = await migrateWithin(trx);
    });
    return {
      tables,
      rows,
      migration: latest,
      migratedTo: applied.at(-1) ?? latest,
      seconds: Math.round((performance.now() - started) / 100) / 10,
    };
  } finally {
    await it.return(undefined);
  }
}

/**
 * `folio restore FILE`: into DATABASE_URL's database when it is set (it must have no tables), else
 * into DATA_DIR, which must not exist or be empty. An embedded restore is built in a directory
 * beside DATA_DIR and renamed into place at the end, so DATA_DIR never holds half a restore.
 */
export async function restoreInto(
  config: Pick<Config, 'databaseUrl' | 'dataDir'>,
  file: string,
  opts: { sections?: Record<string, SectionHandler> } = {},
): Promise<RestoreSummary & { into: string }> {
  if (!existsSync(file)) throw new BackupError(`No such file: ${file}`);
  await readBackupHeader(file);
  if (config.databaseUrl) {
    const handle = await openDatabase(config, 'restore');
    try {
      const n = await countRelations(handle.db);
      if (n > 0) {
        throw new BackupError(
          `The database of DATABASE_URL is not empty (${n} tables and sequences): restore goes into an empty database only. ` +
            'Create one (createdb folio_restored) and point DATABASE_URL at it.',
        );
      }
      return { ...(await restoreBackup(handle.db, file, opts)), into: 'PostgreSQL (DATABASE_URL)' };
    } finally {
      await handle.close();
    }
  }
  const dataDir = config.dataDir;
  if (existsSync(dataDir) && readdirSync(dataDir).length > 0) {
    const held = existsSync(join(dataDir, 'folio.lock')) ? ' (a Folio process is using it)' : '';
    throw new BackupError(
      `The data directory ${dataDir} is not empty${held}: restore goes into an empty or new directory only. ` +
        'Set DATA_DIR to a new directory (and start Folio on it once restored), or move the old one aside.',
    );
  }
  const building = `${dataDir.replace(/\/+$/, '')}.restoring-${randomBytes(4).toString('hex')}`;
  try {
    const handle = await openDatabase({ databaseUrl: undefined, dataDir: building }, 'restore');
    let summary: RestoreSummary;
    try {
      summary = await restoreBackup(handle.db, file, opts);
    } finally {
      await handle.close();
    }
    if (existsSync(dataDir)) rmdirSync(dataDir); // empty (checked above); fails if something appeared since
    renameSync(building, dataDir);
    return { ...summary, into: dataDir };
  } catch (err) {
    rmSync(building, { recursive: true, force: true });
    throw err;
  }
}
