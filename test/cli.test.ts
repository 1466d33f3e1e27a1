/**
 * End-to-end tests of the `folio` executable: each test spawns the real ./bin/folio (as an operator
 * would run it) with its own DATA_DIR and PORT, and talks to it over HTTP.
 *
 * The CLI tests run on the embedded database (DATABASE_URL is removed from the child environment);
 * one test runs on PostgreSQL when TEST_DATABASE_URL is set.
 */
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { after, before, describe, test } from 'node:test';
import pg from 'pg';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const BIN = './bin/folio';
/** Upper bound for one CLI command or one server start (PGlite's first start runs initdb, ~3-6 s). */
const PROCESS_TIMEOUT_MS = 60_000;

/** Folio's own settings, removed from the inherited environment so the tests are not steered by the caller's. */
const FOLIO_ENV = [
  'DATABASE_URL',
  'DATA_DIR',
  'PORT',
  'HOST',
  'PUBLIC_URL',
  'APP_URL',
  'LOG_LEVEL',
  'RATE_LIMIT_MAX',
  'RATE_LIMIT_WINDOW_MS',
  'BODY_LIMIT',
  'JOB_POLL_MS',
  'WORKERS',
  // Set by node's test runner for its own children; the CLI is not a test file.
  'NODE_TEST_CONTEXT',
];

function childEnv(vars: Record<string, string>): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env };
  for (const name of FOLIO_ENV) delete env[name];
  return { ...env, LOG_LEVEL: 'silent', ...vars };
}

/** A TCP port that was free a moment ago (listen on 0, read it, close). */
async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.unref();
    srv.on('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const address = srv.address();
      const port = typeof address === 'object' && address ? address.port : 0;
      srv.close(() => resolve(port));
    });
  });
}

function tempDir(): string {
  return mkdtempSync(join(tmpdir(), 'folio-cli-test-'));
}

/** Every process a test started and has not seen exit, so `after` can end it if a test failed midway. */
const running = new Set<ChildProcess>();

interface CliResult {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

/** Runs `./bin/folio ...args` to completion. */
function runCli(args: string[], env: NodeJS.ProcessEnv): Promise<CliResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(BIN, args, { cwd: ROOT, env, stdio: ['ignore', 'pipe', 'pipe'] });
    running.add(child);
    let stdout = '';
    let stderr = '';
    child.stdout!.setEncoding('utf8').on('data', (d: string) => (stdout += d));
    child.stderr!.setEncoding('utf8').on('data', (d: string) => (stderr += d));
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`folio ${args.join(' ')} did not finish in ${PROCESS_TIMEOUT_MS} ms; stderr:\n${stderr}`));
    }, PROCESS_TIMEOUT_MS);
    child.on('error', (err) => {
      clearTimeout(timer);
      running.delete(child);
      reject(err);
    });
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      running.delete(child);
      resolve({ code, signal, stdout, stderr });
    });
  });
}

/** Parses stdout that must be exactly one JSON line. */
function oneJsonLine(out: string): any {
  assert.ok(out.endsWith('\n'), `stdout must end with a newline: ${JSON.stringify(out)}`);
  const lines = out.slice(0, -1).split('\n');
  assert.equal(lines.length, 1, `stdout must be one line, got ${JSON.stringify(out)}`);
  return JSON.parse(lines[0]!);
}

async function waitFor(what: string, check: () => boolean | Promise<boolean>, timeoutMs = PROCESS_TIMEOUT_MS): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (await check()) return;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

interface Served {
  child: ChildProcess;
  url: string;
  port: number;
  stderr(): string;
  stdout(): string;
  /** Resolves with the exit code (or signal name) when the process ends. */
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  /** Sends the signal and waits for the process to end. */
  stop(signal?: NodeJS.Signals): Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

/** Starts `./bin/folio serve` and waits until /healthz answers and the start-up banner is printed. */
async function serve(vars: Record<string, string>): Promise<Served> {
  const port = await freePort();
  const env = childEnv({ HOST: '127.0.0.1', PORT: String(port), ...vars });
  const child = spawn(BIN, ['serve'], { cwd: ROOT, env, stdio: ['ignore', 'pipe', 'pipe'] });
  running.add(child);
  let stdout = '';
  let stderr = '';
  child.stdout!.setEncoding('utf8').on('data', (d: string) => (stdout += d));
  child.stderr!.setEncoding('utf8').on('data', (d: string) => (stderr += d));
  let done: { code: number | null; signal: NodeJS.Signals | null } | undefined;
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => {
    child.on('close', (code, signal) => {
      running.delete(child);
      done = { code, signal };
      resolve(done);
    });
  });
  const url = `http://127.0.0.1:${port}`;
  try {
    await waitFor(`folio serve on ${url}`, async () => {
      if (done) throw new Error(`folio serve exited early (${done.code ?? done.signal}); stderr:\n${stderr}`);
      if (!stderr.includes('API reference:')) return false;
      try {
        const res = await fetch(`${url}/healthz`);
        return res.status === 200;
      } catch {
        return false; // not listening yet
      }
    });
  } catch (err) {
    child.kill('SIGKILL');
    throw err;
  }
  return {
    child,
    url,
    port,
    stderr: () => stderr,
    stdout: () => stdout,
    exited,
    async stop(signal = 'SIGTERM') {
      if (!done) child.kill(signal);
      const timer = setTimeout(() => child.kill('SIGKILL'), PROCESS_TIMEOUT_MS);
      try {
        return await exited;
      } finally {
        clearTimeout(timer);
      }
    },
  };
}

async function http(method: string, url: string, opts: { token?: string; body?: unknown } = {}) {
  const headers: Record<string, string> = {};
  if (opts.token) headers.authorization = `Bearer ${opts.token}`;
  if (opts.body !== undefined) headers['content-type'] = 'application/json';
  const res = await fetch(url, { method, headers, ...(opts.body !== undefined ? { body: JSON.stringify(opts.body) } : {}) });
  const text = await res.text();
  let body: any = text;
  try {
    body = text ? JSON.parse(text) : undefined;
  } catch {
    // not JSON: keep the text
  }
  return { status: res.status, body, headers: res.headers, text };
}

after(async () => {
  // Only reached with live processes when a test failed midway.
  for (const child of running) child.kill('SIGKILL');
});

/** The lines `folio serve` prints on stderr once it listens (and, with no user yet, the first-user hint). */
function assertBanner(server: Served, where: string): void {
  const err = server.stderr();
  assert.ok(err.includes(`Folio listening on ${server.url} (${where})`), err);
  assert.ok(err.includes(`API reference: ${server.url}/docs`), err);
  assert.ok(err.includes(`OpenAPI: ${server.url}/v1/openapi.json`), err);
}

describe('folio CLI on the embedded database', () => {
  let dataDir: string;
  let env: NodeJS.ProcessEnv;
  let cliPort: number;
  const email = `ann.${randomBytes(3).toString('hex')}@example.com`;
  let user: { id: string; token: string };
  const tokens: string[] = [];
  let server: Served | undefined;
  let orgId: string;
  /** From `tokens create --name --expires-in` (still live) and a token revoked with `tokens revoke`. */
  const lifecycle: { named?: string; revoked?: string } = {};

  before(async () => {
    dataDir = tempDir();
    cliPort = await freePort();
    env = childEnv({ DATA_DIR: dataDir, PORT: String(cliPort), HOST: '127.0.0.1' });
  });
  after(async () => {
    await server?.stop('SIGKILL');
    rmSync(dataDir, { recursive: true, force: true });
  });

  test('serve on an empty data dir tells where it listens and how to create the first user', { timeout: PROCESS_TIMEOUT_MS }, async () => {
    assert.deepEqual(readdirSync(dataDir), []);
    server = await serve({ DATA_DIR: dataDir });
    await waitFor('the first-user hint', () => server!.stderr().includes('and start it again'), 10_000);
    assertBanner(server, `embedded database in ${dataDir}`);
    assert.match(server.stderr(), /No users yet/);
    assert.match(server.stderr(), /\.\/bin\/folio users create --email \S+ --name/);
    assert.equal(server.stdout(), '', 'serve keeps stdout clean');
    assert.ok(existsSync(join(dataDir, 'PG_VERSION')), 'the embedded database is created in DATA_DIR');

    const health = await http('GET', `${server.url}/healthz`);
    assert.equal(health.status, 200);
    assert.deepEqual(health.body, { ok: true });
    const ready = await http('GET', `${server.url}/readyz`);
    assert.equal(ready.status, 200);
    assert.deepEqual(ready.body, { ok: true });

    const spec = await http('GET', `${server.url}/v1/openapi.json`);
    assert.equal(spec.status, 200);
    assert.match(spec.headers.get('content-type') ?? '', /^application\/json/);
    assert.match(spec.body.openapi, /^3\./);
    assert.equal(typeof spec.body.paths, 'object');
    assert.ok(Object.keys(spec.body.paths).length > 0, 'the document lists paths');
    assert.ok(spec.body.paths['/v1/orgs/{organizationId}']?.get, 'GET /v1/orgs/{organizationId} is documented');
    assert.ok(spec.body.paths['/v1/user']?.get, 'GET /v1/user is documented');

    const docs = await http('GET', `${server.url}/docs`);
    assert.equal(docs.status, 200);
    assert.match(docs.headers.get('content-type') ?? '', /^text\/html/);
    assert.match(docs.text, /<html/i);

    assert.equal((await http('GET', `${server.url}/v1/user`)).status, 401, 'the API needs a token');

    const stopped = await server.stop('SIGTERM');
    assert.deepEqual(stopped, { code: 0, signal: null }, server.stderr());
    server = undefined;
    assert.ok(!existsSync(join(dataDir, 'folio.lock')), 'the lock is released at exit');
  });

  test('migrate prints JSON and exits 0', { timeout: PROCESS_TIMEOUT_MS }, async () => {
    const res = await runCli(['migrate'], env);
    assert.equal(res.code, 0, res.stderr);
    // serve already brought the schema up to date: nothing is left to apply.
    assert.deepEqual(oneJsonLine(res.stdout), { applied: [] });
    assert.ok(!existsSync(join(dataDir, 'folio.lock')), 'the lock is released when the command ends');
  });

  test('users create prints the user and a token as one JSON line', { timeout: PROCESS_TIMEOUT_MS }, async () => {
    const res = await runCli(['users', 'create', '--email', email, '--name', 'Ann Example'], env);
    assert.equal(res.code, 0, res.stderr);
    const out = oneJsonLine(res.stdout);
    assert.deepEqual(Object.keys(out).sort(), ['token', 'user']);
    assert.equal(out.user.object, 'user');
    assert.equal(typeof out.user.id, 'string');
    assert.ok(out.user.id.length > 0);
    assert.equal(out.user.displayName, 'Ann Example');
    assert.equal(out.user.email, email);
    // PUBLIC_URL defaults to http://HOST:PORT.
    assert.equal(out.user.urls.location, `http://127.0.0.1:${cliPort}/v1/users/${out.user.id}`);
    assert.equal(typeof out.token, 'string');
    assert.ok(out.token.length >= 20, `token looks too short: ${out.token}`);
    user = { id: out.user.id, token: out.token };
    tokens.push(out.token);
  });

  test('users create refuses an email that is taken (in any case)', { timeout: PROCESS_TIMEOUT_MS }, async () => {
    const res = await runCli(['users', 'create', '--email', email.toUpperCase(), '--name', 'Ann Again'], env);
    assert.notEqual(res.code, 0);
    assert.equal(res.stdout, '');
    assert.match(res.stderr, /already exists/);
    assert.ok(res.stderr.includes(email), res.stderr);
    assert.doesNotMatch(res.stderr, /\n\s+at /, 'a clear message, not a stack trace');
  });

  test('users create without --email exits 2 with the usage', { timeout: PROCESS_TIMEOUT_MS }, async () => {
    const res = await runCli(['users', 'create', '--name', 'Nobody'], env);
    assert.equal(res.code, 2);
    assert.equal(res.stdout, '');
    assert.match(res.stderr, /--email/);
    assert.match(res.stderr, /Usage: folio/);
    const unknown = await runCli(['users', 'create', '--email', 'x@example.com', '--name', 'X', '--admin', 'yes'], env);
    assert.equal(unknown.code, 2, 'an unknown option is a usage error');
    assert.match(unknown.stderr, /Usage: folio/);
  });

  test('tokens create by user id and by email prints a new token', { timeout: PROCESS_TIMEOUT_MS }, async () => {
    for (const who of [user.id, email.toUpperCase()]) {
      const res = await runCli(['tokens', 'create', '--user', who], env);
      assert.equal(res.code, 0, res.stderr);
      const out = oneJsonLine(res.stdout);
      assert.deepEqual(Object.keys(out).sort(), ['createdAt', 'id', 'token']);
      assert.equal(typeof out.token, 'string');
      assert.ok(!tokens.includes(out.token), 'each token is new');
      tokens.push(out.token);
    }
  });

  test('tokens create for an unknown user fails with a message', { timeout: PROCESS_TIMEOUT_MS }, async () => {
    const res = await runCli(['tokens', 'create', '--user', 'nobody@example.com'], env);
    assert.notEqual(res.code, 0);
    assert.equal(res.stdout, '');
    assert.match(res.stderr, /No user with id or email "nobody@example\.com"/);
    const missing = await runCli(['tokens', 'create'], env);
    assert.equal(missing.code, 2);
    assert.match(missing.stderr, /--user/);
  });

  test('tokens create --name --expires-in, tokens list and tokens revoke', { timeout: 4 * PROCESS_TIMEOUT_MS }, async () => {
    const before = Date.now();
    const named = await runCli(['tokens', 'create', '--user', email, '--name', 'CI deploy', '--expires-in', '30d'], env);
    assert.equal(named.code, 0, named.stderr);
    const made = oneJsonLine(named.stdout);
    assert.equal(made.name, 'CI deploy');
    const expires = Date.parse(made.expiresAt) - before;
    assert.ok(expires > 29.9 * 86_400_000 && expires < 30.1 * 86_400_000, `expires in ${expires} ms`);
    const doomed = oneJsonLine((await runCli(['tokens', 'create', '--user', user.id], env)).stdout);

    const revoke = await runCli(['tokens', 'revoke', doomed.id], env);
    assert.equal(revoke.code, 0, revoke.stderr);
    const revoked = oneJsonLine(revoke.stdout).revoked;
    assert.equal(revoked.id, doomed.id);
    assert.ok(revoked.revokedAt);
    const twice = await runCli(['tokens', 'revoke', doomed.id], env);
    assert.equal(twice.code, 1);
    assert.match(twice.stderr, /No live token with id/);

    const listed = await runCli(['tokens', 'list', '--user', email], env);
    assert.equal(listed.code, 0, listed.stderr);
    const list = oneJsonLine(listed.stdout);
    assert.equal(list.count, tokens.length + 2);
    assert.ok(!tokens.concat(made.token, doomed.token).some((tok) => listed.stdout.includes(tok)), 'token values are never listed');
    const byId = new Map(list.items.map((i: { id: string }) => [i.id, i]));
    assert.equal((byId.get(made.id) as { expiresAt: string }).expiresAt, made.expiresAt);
    assert.equal((byId.get(doomed.id) as { revokedAt: string }).revokedAt, revoked.revokedAt);

    for (const bad of [['--expires-in', 'soon'], ['--expires-in', '0d']]) {
      const res = await runCli(['tokens', 'create', '--user', email, ...bad], env);
      assert.equal(res.code, 1);
      assert.match(res.stderr, /Invalid duration/);
    }
    assert.equal((await runCli(['tokens', 'revoke'], env)).code, 2, 'revoke without an id is a usage error');
    assert.equal((await runCli(['tokens', 'list'], env)).code, 2, 'list without --user is a usage error');
    lifecycle.named = made.token;
    lifecycle.revoked = doomed.token;
  });

  test('serve: every token from the CLI authenticates GET /v1/user', { timeout: PROCESS_TIMEOUT_MS }, async () => {
    server = await serve({ DATA_DIR: dataDir });
    assertBanner(server, `embedded database in ${dataDir}`);
    assert.ok(!server.stderr().includes('No users yet'), 'a data dir with a user does not ask to create one');
    assert.equal(tokens.length, 3);
    for (const token of tokens) {
      const res = await http('GET', `${server.url}/v1/user`, { token });
      assert.equal(res.status, 200, res.text);
      assert.equal(res.body.object, 'user');
      assert.equal(res.body.id, user.id);
      assert.equal(res.body.email, email);
      assert.equal(res.body.displayName, 'Ann Example');
      assert.equal(res.body.urls.location, `${server.url}/v1/users/${user.id}`);
    }
    const wrong = await http('GET', `${server.url}/v1/user`, { token: 'folio_not-a-token' });
    assert.equal(wrong.status, 401);

    const created = await http('POST', `${server.url}/v1/orgs`, { token: user.token, body: { title: 'Acme' } });
    assert.equal(created.status, 201, created.text);
    assert.equal(created.body.title, 'Acme');
    orgId = created.body.id;
  });

  test('serve: a token revoked with the CLI is refused, a named expiring one works', { timeout: PROCESS_TIMEOUT_MS }, async () => {
    assert.ok(server && lifecycle.named && lifecycle.revoked, 'the server and tokens of the previous tests');
    const revoked = await http('GET', `${server.url}/v1/user`, { token: lifecycle.revoked });
    assert.equal(revoked.status, 401);
    const named = await http('GET', `${server.url}/v1/user`, { token: lifecycle.named });
    assert.equal(named.status, 200, named.text);
    const own = await http('GET', `${server.url}/v1/user/tokens`, { token: lifecycle.named });
    assert.equal(own.status, 200, own.text);
    assert.ok(own.body.items.some((i: { name?: string; current: boolean }) => i.name === 'CI deploy' && i.current));
  });

  test('while serve runs, a CLI command on the same data dir is refused by the lock', { timeout: PROCESS_TIMEOUT_MS }, async () => {
    assert.ok(server, 'the server of the previous test runs');
    const lockPath = join(dataDir, 'folio.lock');
    const holder = JSON.parse(readFileSync(lockPath, 'utf8'));
    assert.equal(holder.pid, server.child.pid);

    const res = await runCli(['users', 'create', '--email', 'bob@example.com', '--name', 'Bob'], env);
    assert.equal(res.code, 1);
    assert.equal(res.stdout, '');
    assert.match(res.stderr, /data directory .* is in use by another Folio process/);
    assert.ok(res.stderr.includes(dataDir), res.stderr);
    assert.ok(res.stderr.includes(`pid ${server.child.pid}`), res.stderr);

    // The refused process left the lock and the database alone: the server goes on working.
    assert.deepEqual(JSON.parse(readFileSync(lockPath, 'utf8')), holder);
    assert.equal((await http('GET', `${server.url}/readyz`)).status, 200);
    const me = await http('GET', `${server.url}/v1/user`, { token: user.token });
    assert.equal(me.status, 200, me.text);
    const org = await http('GET', `${server.url}/v1/orgs/${orgId}`, { token: user.token });
    assert.equal(org.status, 200, org.text);
    assert.equal(org.body.title, 'Acme');
    const second = await http('POST', `${server.url}/v1/orgs`, { token: user.token, body: { title: 'Beta' } });
    assert.equal(second.status, 201, second.text);
    const list = await http('GET', `${server.url}/v1/orgs`, { token: user.token });
    assert.equal(list.status, 200, list.text);
    assert.deepEqual(list.body.items.map((o: { title: string }) => o.title).sort(), ['Acme', 'Beta']);
  });

  test('SIGTERM stops serve with exit 0, releases the lock, and the data survives a restart', { timeout: 2 * PROCESS_TIMEOUT_MS }, async () => {
    assert.ok(server, 'the server of the previous test runs');
    const stopped = await server.stop('SIGTERM');
    assert.deepEqual(stopped, { code: 0, signal: null }, server.stderr());
    assert.match(server.stderr(), /SIGTERM: finishing in-flight requests/);
    assert.ok(!existsSync(join(dataDir, 'folio.lock')), 'the lock file is removed');
    server = undefined;

    // The lock is released: a CLI command works now.
    const res = await runCli(['tokens', 'create', '--user', email], env);
    assert.equal(res.code, 0, res.stderr);
    const { token } = oneJsonLine(res.stdout);

    server = await serve({ DATA_DIR: dataDir });
    const org = await http('GET', `${server.url}/v1/orgs/${orgId}`, { token });
    assert.equal(org.status, 200, org.text);
    assert.equal(org.body.id, orgId);
    assert.equal(org.body.title, 'Acme');
    const list = await http('GET', `${server.url}/v1/orgs`, { token: user.token });
    assert.equal(list.status, 200, list.text);
    assert.deepEqual(list.body.items.map((o: { title: string }) => o.title).sort(), ['Acme', 'Beta']);

    const again = await server.stop('SIGINT');
    assert.deepEqual(again, { code: 0, signal: null }, server.stderr());
    assert.ok(!existsSync(join(dataDir, 'folio.lock')));
    server = undefined;
  });
});

const TEST_DATABASE_URL = process.env.TEST_DATABASE_URL;
const NO_POSTGRES = 'TEST_DATABASE_URL is not set (e.g. postgres://postgres@127.0.0.1:5432/postgres)';

describe('folio CLI on PostgreSQL', () => {
  const name = `folio_cli_test_${randomBytes(6).toString('hex')}`;
  let created = false;
  let env: NodeJS.ProcessEnv;
  let dataDir: string;
  let databaseUrl: string;
  let migrated: CliResult;
  let server: Served | undefined;

  before(async () => {
    if (!TEST_DATABASE_URL) return;
    const client = new pg.Client({ connectionString: TEST_DATABASE_URL });
    await client.connect();
    try {
      await client.query(`CREATE DATABASE ${name}`);
      created = true;
    } finally {
      await client.end();
    }
    const url = new URL(TEST_DATABASE_URL);
    url.pathname = `/${name}`;
    databaseUrl = url.toString();
    dataDir = tempDir();
    env = childEnv({ DATABASE_URL: databaseUrl, DATA_DIR: dataDir, PORT: '8080' });
  });
  after(async () => {
    await server?.stop('SIGKILL');
    if (dataDir) rmSync(dataDir, { recursive: true, force: true });
    if (!created) return;
    const client = new pg.Client({ connectionString: TEST_DATABASE_URL });
    await client.connect();
    try {
      await client.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
    } finally {
      await client.end();
    }
  });

  test('migrate on a fresh PostgreSQL database prints JSON and exits 0', { skip: TEST_DATABASE_URL ? false : NO_POSTGRES, timeout: PROCESS_TIMEOUT_MS }, async () => {
    migrated = await runCli(['migrate'], env);
    assert.equal(migrated.code, 0, migrated.stderr);
    const out = oneJsonLine(migrated.stdout);
    assert.ok(Array.isArray(out.applied), migrated.stdout);
    for (const m of out.applied) assert.equal(typeof m, 'string');
  });

  test(
    'migrate on a fresh database reports the migrations it applied',
    { skip: TEST_DATABASE_URL ? false : NO_POSTGRES },
    () => {
      assert.ok(JSON.parse(migrated.stdout).applied.includes('0001_foundation'), migrated.stdout);
    },
  );

  test('users create and serve share the database; the CLI works while serve runs', { skip: TEST_DATABASE_URL ? false : NO_POSTGRES, timeout: 2 * PROCESS_TIMEOUT_MS }, async () => {
    const email = `pg.${randomBytes(3).toString('hex')}@example.com`;
    const made = await runCli(['users', 'create', '--email', email, '--name', 'Pat'], env);
    assert.equal(made.code, 0, made.stderr);
    const { user, token } = oneJsonLine(made.stdout);
    assert.equal(user.object, 'user');
    assert.equal(user.email, email);
    assert.equal(user.displayName, 'Pat');
    assert.equal(user.urls.location, `http://127.0.0.1:8080/v1/users/${user.id}`);

    server = await serve({ DATABASE_URL: databaseUrl, DATA_DIR: dataDir, AUTH_CACHE_TTL_MS: '500' });
    assertBanner(server, 'PostgreSQL (DATABASE_URL)');
    assert.ok(!server.stderr().includes('No users yet'));
    assert.ok(!server.stderr().includes(name), 'the connection string is not printed');
    const me = await http('GET', `${server.url}/v1/user`, { token });
    assert.equal(me.status, 200, me.text);
    assert.equal(me.body.id, user.id);
    assert.equal((await http('GET', `${server.url}/readyz`)).status, 200);

    // On PostgreSQL several processes share the database: no lock, the CLI works while the server runs.
    const more = await runCli(['tokens', 'create', '--user', email], env);
    assert.equal(more.code, 0, more.stderr);
    const second = oneJsonLine(more.stdout).token;
    const org = await http('POST', `${server.url}/v1/orgs`, { token: second, body: { title: 'Acme' } });
    assert.equal(org.status, 201, org.text);
    assert.equal(org.body.title, 'Acme');

    // A token revoked from the CLI stops working in the running server within AUTH_CACHE_TTL_MS.
    const revoke = await runCli(['tokens', 'revoke', oneJsonLine(more.stdout).id], env);
    assert.equal(revoke.code, 0, revoke.stderr);
    await waitFor('the revoked token to be refused', async () => (await http('GET', `${server!.url}/v1/user`, { token: second })).status === 401, 2000);
    assert.equal((await http('GET', `${server.url}/v1/user`, { token })).status, 200, 'other tokens still work');

    const stopped = await server.stop('SIGTERM');
    assert.deepEqual(stopped, { code: 0, signal: null }, server.stderr());
    server = undefined;
    assert.deepEqual(readdirSync(dataDir), [], 'the embedded data dir is not used');
  });
});
