import type { PGlite } from '@electric-sql/pglite';
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
  constructor(private readonly client: PGlite) {}

  async executeQuery<R>(compiled: CompiledQuery): Promise<QueryResult<R>> {
    // Parameterless scripts (migrations) may hold several statements, which only the simple
    // query protocol accepts; like PostgreSQL, the result is that of the last statement.
    const result =
      compiled.parameters.length === 0
        ? ((await this.client.exec(compiled.sql)).at(-1) ?? { rows: [] as R[], affectedRows: 0 })
        : await this.client.query<R>(compiled.sql, [...compiled.parameters]);
    const affected = result.affectedRows;
    return {
      rows: result.rows as R[],
      ...(affected !== undefined ? { numAffectedRows: BigInt(affected) } : {}),
    };
  }

  // eslint-disable-next-line require-yield
  async *streamQuery<R>(): AsyncIterableIterator<QueryResult<R>> {
    throw new Error('PGlite does not support streaming queries');
  }
}
