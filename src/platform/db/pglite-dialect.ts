import { parse, protocol, type PGlite } from '@electric-sql/pglite';
import {
  CompiledQuery,
  PostgresAdapter,
  PostgresIntrospector,
  PostgresQueryCompiler,
  type DatabaseConnection,
  type Dialect,
  type Driver,
  type Kysely,
  type QueryResult,
} from 'kysely';

/**
 * Kysely dialect for PGlite.
 *
 * PGlite is one Postgres backend with one session. Kysely may hand out "connections" concurrently,
 * so without care two transactions would interleave their statements in the same session. This
 * driver serializes access: a connection is a lease on the single session, and the next caller
 * waits until the lease is released (after one query, or after a whole transaction). We wrote it
 * rather than using the `kysely-pglite` package because that driver shares the session without
 * such a lease.
 */
export class PGliteDialect implements Dialect {
  constructor(private readonly client: PGlite) {}
  createAdapter() {
    return new PostgresAdapter();
  }
  createDriver(): Driver {
    return new PGliteDriver(this.client);
  }
  createIntrospector(db: Kysely<any>) {
    return new PostgresIntrospector(db);
  }
  createQueryCompiler() {
    return new PostgresQueryCompiler();
  }
}

class PGliteDriver implements Driver {
  private queue: Promise<void> = Promise.resolve();
  private readonly connection: PGliteConnection;

  constructor(private readonly client: PGlite) {
    this.connection = new PGliteConnection(client);
  }

  async init(): Promise<void> {}

  async acquireConnection(): Promise<DatabaseConnection> {
    let release!: () => void;
    const previous = this.queue;
    this.queue = new Promise<void>((resolve) => (release = resolve));
    await previous;
    this.connection.release = release;
    return this.connection;
  }

  async releaseConnection(connection: DatabaseConnection): Promise<void> {
    const lease = connection as PGliteConnection;
    const release = lease.release;
    lease.release = undefined;
    release?.();
  }

  async beginTransaction(connection: DatabaseConnection): Promise<void> {
    await connection.executeQuery(CompiledQuery.raw('BEGIN'));
  }
  async commitTransaction(connection: DatabaseConnection): Promise<void> {
    await connection.executeQuery(CompiledQuery.raw('COMMIT'));
  }
  async rollbackTransaction(connection: DatabaseConnection): Promise<void> {
    await connection.executeQuery(CompiledQuery.raw('ROLLBACK'));
  }
  async destroy(): Promise<void> {
    // Wait for the current lease so a closing database never cuts a transaction in half.
    await this.queue;
    await this.client.close();
  }
}

class PGliteConnection implements DatabaseConnection {
  release: (() => void) | undefined;
  private readonly statements: StatementCache;
  constructor(private readonly client: PGlite) {
    this.statements = new StatementCache(client);
  }

  async executeQuery<R>(compiled: CompiledQuery): Promise<QueryResult<R>> {
    const result = StatementCache.accepts(compiled.sql, compiled.parameters.length)
      ? await this.statements.run(compiled.sql, compiled.parameters)
      : await this.script(compiled.sql);
    const affected = result.affectedRows;
    return {
      rows: result.rows as R[],
      ...(affected !== undefined ? { numAffectedRows: BigInt(affected) } : {}),
    };
  }

  /**
   * Parameterless scripts (migrations, BEGIN/COMMIT) may hold several statements, which only the
   * simple query protocol accepts; like PostgreSQL, the result is that of the last statement.
   */
  private async script(text: string): Promise<Results> {
    // A script that reshapes the schema may change what a remembered statement returns.
    if (RESHAPES_SCHEMA.test(text)) await this.statements.forgetAll();
    return (await this.client.exec(text)).at(-1) ?? { rows: [], affectedRows: 0, fields: [] };
  }

  // eslint-disable-next-line require-yield
  async *streamQuery<R>(): AsyncIterableIterator<QueryResult<R>> {
    throw new Error('PGlite does not support streaming queries');
  }
}

type Results = Awaited<ReturnType<PGlite['query']>>;
type BackendMessage = Awaited<ReturnType<PGlite['execProtocolStream']>>[number];

const RESHAPES_SCHEMA = /\b(create|alter|drop)\s/i;
const { serialize } = protocol;

interface Statement {
  name: string;
  paramTypes: number[];
  /** The statement's rowDescription, as its Describe answered once (none when it returns no rows). */
  description: BackendMessage[];
}

/**
 * Named prepared statements, one per SQL text, kept while they are in use.
 *
 * PGlite's `query()` parses and plans every statement anew and crosses into WebAssembly six times
 * per call (parse, describe, bind, describe, execute, sync). The server asks the same few hundred
 * statements again and again (the space by id, the member's role, the collection chain), so
 * this remembers each once as a prepared statement and then runs it with one message batch: bind,
 * execute, sync. Measured on the hot lookups: about a third of the time of `query()`.
 *
 * PostgreSQL keeps a prepared statement valid across schema changes by re-planning it; a script
 * that creates, alters or drops something forgets them all anyway, so that a statement whose
 * result would change shape is prepared again rather than refused.
 */
class StatementCache {
  /** At most this many statements stay prepared; the least recently used is closed first. */
  static readonly LIMIT = 256;
  private readonly byText = new Map<string, Statement>();
  private toClose: string[] = [];

  constructor(private readonly client: PGlite) {}

  /**
   * Statements with parameters always (the extended protocol takes one statement); parameterless
   * ones when they are plainly one query, not a script or a transaction command.
   */
  static accepts(text: string, parameterCount: number): boolean {
    if (parameterCount > 0) return true;
    return /^\s*(select|with|insert|update|delete)\b/i.test(text) && !text.includes(';');
  }

  async run(text: string, params: readonly unknown[]): Promise<Results> {
    try {
      return await this.client.runExclusive(() => this.runOnce(text, params));
    } catch (err) {
      // A statement prepared before the schema changed under it (a restore, another connection
      // to this database), or closed by someone else: forget it, and outside a transaction (which
      // the error did not abort) try once more with a fresh one.
      if (!isStaleStatement(err)) throw err;
      this.byText.delete(text);
      if (this.client.isInTransaction()) throw err;
      return this.client.runExclusive(() => this.runOnce(text, params));
    }
  }

  private async runOnce(text: string, params: readonly unknown[]): Promise<Results> {
    const statement = this.byText.get(text) ?? (await this.prepare(text));
    // Most recently used last, so the first key is the one to close when the cache is full.
    this.byText.delete(text);
    this.byText.set(text, statement);
    const values = params.map((value, i) => {
      if (value === null || value === undefined) return null;
      const serializer = this.client.serializers[statement.paramTypes[i]!];
      return serializer ? serializer(value) : String(value);
    });
    const closing = this.toClose.map((name) => serialize.close({ type: 'S', name }));
    this.toClose = [];
    const messages = await this.client.execProtocolStream(
      Buffer.concat([...closing, serialize.bind({ statement: statement.name, values }), serialize.execute({}), serialize.sync()]),
      { syncToFs: !this.client.isInTransaction() },
    );
    return parse.parseResults([...statement.description, ...messages], this.client.parsers)[0]!;
  }

  async forgetAll(): Promise<void> {
    if (this.byText.size === 0 && this.toClose.length === 0) return;
    this.byText.clear();
    this.toClose = [];
    await this.client.exec('DEALLOCATE ALL');
  }

  private async prepare(text: string): Promise<Statement> {
    const name = `folio_${++statementCounter}`;
    // One batch ending in Sync: if the statement is refused, the session is ready for the next.
    const answer = await this.client.execProtocolStream(Buffer.concat([serialize.parse({ name, text }), serialize.describe({ type: 'S', name }), serialize.sync()]), {
      syncToFs: false,
    });
    // Room for it (runOnce remembers it): the least recently used is closed with the next batch.
    if (this.byText.size >= StatementCache.LIMIT) {
      const [oldest, evicted] = this.byText.entries().next().value!;
      this.byText.delete(oldest);
      this.toClose.push(evicted.name);
    }
    return { name, paramTypes: parse.parseDescribeStatementResults(answer), description: answer.filter((m) => m.name === 'rowDescription') };
  }
}

/** Statement names are unique in the process: two Kysely instances may share one PGlite session. */
let statementCounter = 0;

/** "prepared statement does not exist", or "cached plan must not change result type". */
function isStaleStatement(err: unknown): boolean {
  const code = (err as { code?: string }).code;
  return code === '26000' || (code === '0A000' && /cached plan/.test((err as Error).message));
}
