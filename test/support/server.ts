import { openAsBlob, rmSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
import { GitBookAPI } from '@gitbook/api';
import pg from 'pg';
import { loadConfig, MEMORY_DATA_DIR, type Config } from '../../src/platform/config.ts';
import { startServer, type RunningServer } from '../../src/server.ts';
import { createUser } from '../../src/users/service.ts';
import { validatingFetch } from './official-schema.ts';
import { copyPgliteTemplate, createPostgresDatabase, pgliteTemplateDump } from './templates.ts';

/**
 * Test database: a fresh PostgreSQL database when TEST_DATABASE_URL is set (dropped afterwards),
 * else a fresh embedded PGlite directory. Each test file gets its own, so files never share state.
 * With `migrated`, it is a copy of a template migrated once per migration set (test/support/templates.ts)
 * instead of an empty database, so migrate() has nothing left to do.
 */
export async function freshDatabaseConfig(
  admin: string | undefined = process.env.TEST_DATABASE_URL,
  opts: { migrated?: boolean } = {},
): Promise<{ config: Partial<Config>; cleanup: () => Promise<void> }> {
  const migrated = opts.migrated ?? false;
  if (admin) {
    const name = `folio_test_${randomBytes(6).toString('hex')}`;
    const databaseUrl = await createPostgresDatabase(admin, name, migrated);
    return {
      config: { databaseUrl },
      cleanup: async () => {
        const c = new pg.Client({ connectionString: admin });
        await c.connect();
        // The server's pool has ended, but its sockets may still be closing: let them go before
        // dropping, so no connection is killed under a client that would report it.
        for (let i = 0; i < 40; i++) {
          const { rows } = await c.query('SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = $1', [name]);
          if (rows[0].n === 0) break;
          await new Promise((r) => setTimeout(r, 50));
        }
        await c.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
        await c.end();
      },
    };
  }
  const dataDir = await copyPgliteTemplate(migrated);
  return {
    config: { databaseUrl: undefined, dataDir },
    cleanup: async () => rmSync(dataDir, { recursive: true, force: true }),
  };
}

export interface TestUser {
  id: string;
  email: string;
  token: string;
  /** The official client, pointed at the test server; every response is checked against the official schema. */
  api: GitBookAPI;
}

/**
 * The test server's clock: real time plus an offset the test moves forward with `advance(ms)`,
 * so a test that waits for a token to expire or a rate-limit window to end takes no time. It never
 * goes backwards, so time-stamps written by the server keep their order.
 */
export interface TestClock {
  now(): number;
  advance(ms: number): void;
}

export function testClock(): TestClock {
  let offset = 0;
  return {
    now: () => Date.now() + offset,
    advance(ms: number) {
      if (!(ms >= 0)) throw new Error(`a test clock only moves forward (asked ${ms} ms)`);
      offset += ms;
    },
  };
}

export interface TestServer {
  url: string;
  server: RunningServer;
  /** The server's clock (Services.now): `t.clock.advance(ms)` instead of sleeping. */
  clock: TestClock;
  /** Creates a user (as `folio users create` does) with a unique email. */
  user(name?: string, opts?: { email?: string }): Promise<TestUser>;
  client(token: string): GitBookAPI;
  /** Raw HTTP for what the client cannot send (malformed bodies, wrong types, missing tokens). */
  request(method: string, path: string, opts?: { token?: string; body?: unknown; raw?: string; headers?: Record<string, string> }): Promise<{ status: number; body: any; headers: Headers }>;
  close(): Promise<void>;
}

export async function startTestServer(
  overrides: Partial<Config> = {},
  opts: { logStream?: NodeJS.WritableStream; compileSchemasAtStart?: boolean } = {},
): Promise<TestServer> {
  // On the embedded database, a test server's database lives in memory, loaded from the migrated
  // template's dump, unless the test asks for a directory of its own.
  const inMemory = !process.env.TEST_DATABASE_URL && overrides.dataDir === undefined && overrides.databaseUrl === undefined;
  const db = inMemory
    ? { config: { databaseUrl: undefined, dataDir: MEMORY_DATA_DIR }, cleanup: async () => {} }
    : await freshDatabaseConfig(undefined, { migrated: true });
  const initialData = inMemory ? await openAsBlob(await pgliteTemplateDump()) : undefined;
  const config: Config = {
    ...loadConfig({}),
    port: 0,
    host: '127.0.0.1',
    logLevel: process.env.TEST_LOG_LEVEL ?? 'silent',
    rateLimitMax: 100_000,
    jobPollMs: 50,
    // A bundled test process holds eight servers at once and four processes run side by side: at
    // ten connections each they went past PostgreSQL's max_connections (100). Five keep a process
    // under the fifty that five servers of ten used to reach.
    databasePoolMax: 5,
    // A cheap password hash (scrypt N = 2^10, ~2 ms instead of ~90): the app's tests hash and
    // verify hundreds of passwords. test/sign-in-cost.test.ts checks the setting itself.
    passwordHashCost: 10,
    ...db.config,
    ...overrides,
  };
  const clock = testClock();
  let server: Awaited<ReturnType<typeof startServer>>;
  try {
    server = await startServer(config, { purpose: 'test', now: clock.now, ...(initialData ? { initialData } : {}), ...opts });
  } catch (err) {
    await db.cleanup();
    throw err;
  }
  // PUBLIC_URL must be the listening address for urls.* to be followable.
  server.services.config.publicUrl = server.url;
  server.services.config.appUrl = server.url;
  const url = server.url;
  const client = (token: string) =>
    new GitBookAPI({ authToken: token, endpoint: url, serviceBinding: { fetch: validatingFetch } as never });
  let counter = 0;
  return {
    url,
    server,
    clock,
    client,
    async user(name = 'Test User', opts = {}) {
      counter++;
      const email = opts.email ?? `user${counter}.${randomBytes(4).toString('hex')}@example.com`;
      const { user, token } = await createUser(server.services.db, { email, name: `${name}` });
      return { id: user.id, email: user.email, token, api: client(token) };
    },
    async request(method, path, opts = {}) {
      const headers: Record<string, string> = { ...(opts.headers ?? {}) };
      if (opts.token) headers.authorization = `Bearer ${opts.token}`;
      let body: string | undefined;
      if (opts.raw !== undefined) body = opts.raw;
      else if (opts.body !== undefined) body = JSON.stringify(opts.body);
      if (body !== undefined && !headers['content-type']) headers['content-type'] = 'application/json';
      const res = await fetch(url + path, { method, headers, ...(body !== undefined ? { body } : {}) });
      const text = await res.text();
      let parsed: unknown = text;
      try {
        parsed = text ? JSON.parse(text) : undefined;
      } catch {
        // not JSON: keep the text
      }
      return { status: res.status, body: parsed, headers: res.headers };
    },
    async close() {
      await server.close();
      await db.cleanup();
    },
  };
}

/** Asserts that a call through the official client fails with the given HTTP status. */
export async function expectStatus(promise: Promise<unknown>, status: number, message?: RegExp): Promise<void> {
  try {
    await promise;
  } catch (err) {
    const { response, errorMessage } = err as { response?: Response; errorMessage?: string };
    if (response?.status !== status) throw new Error(`expected HTTP ${status}, got ${response?.status ?? String(err)}${errorMessage ? `: ${errorMessage}` : ''}`);
    // The official client's error carries the answer's message.
    if (message && !message.test(String(errorMessage))) throw new Error(`expected HTTP ${status} saying ${message}, got: ${errorMessage}`);
    return;
  }
  throw new Error(`expected HTTP ${status}, but the call succeeded`);
}
