/**
 * End-to-end tests of the `folio` executable: each test spawns the real ./bin/folio (as an operator
 * would run it) with its own DATA_DIR and PORT, and talks to it over HTTP.
 *
 * Processes are the cost here (a server start is seconds, a command under one when a running
 * server answers it), so one server process serves many checks, in order.
 *
 * The CLI tests run on the embedded database (DATABASE_URL is removed from the child environment);
 * the last group runs on PostgreSQL when TEST_DATABASE_URL is set.
 */
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { serverBundle } from '../scripts/bundles.mjs';
import { folioEnv, killAll, PROCESS_TIMEOUT_MS, runCli, serve, type CliResult, type ServeProcess } from './support/process.ts';
import { eventually } from './support/wait.ts';

const childEnv = folioEnv;

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

/** Parses stdout that must be exactly one JSON line. */
function oneJsonLine(out: string): any {
  assert.ok(out.endsWith('\n'), `stdout must end with a newline: ${JSON.stringify(out)}`);
  const lines = out.slice(0, -1).split('\n');
  assert.equal(lines.length, 1, `stdout must be one line, got ${JSON.stringify(out)}`);
  return JSON.parse(lines[0]!);
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
  killAll();
});

/** The lines `folio serve` prints on stderr once it listens. */
function assertBanner(server: ServeProcess, where: string): void {
  const err = server.stderr();
  assert.ok(err.includes(`Folio listening on ${server.url} (${where})`), err);
  assert.ok(err.includes(`API reference: ${server.url}/docs`), err);
  assert.ok(err.includes(`OpenAPI: ${server.url}/v1/openapi.json`), err);
  assert.match(err, /^Ready in \d+\.\d s \(Ctrl-C stops\)$/m);
}

/** The API token `serve` prints when it creates the first administrator. */
function printedToken(stderr: string): string | undefined {
  return /shown only now:\n\n {2}(folio_\S+)\n/.exec(stderr)?.[1];
}

const NO_STACK = /\n\s+at /;

describe('folio help and usage', () => {
  test('--help, help <command> and <command> --help print usage on stdout and exit 0', { timeout: PROCESS_TIMEOUT_MS }, async () => {
    const env = childEnv({ DATA_DIR: join(tmpdir(), 'folio-cli-never-created') });
    const cases = [['--help'], ['-h'], ['help'], ['help', 'tokens', 'create'], ['help', 'tokens'], ['users', 'create', '--help'], ['serve', '-h'], ['tokens', '--help'], ['worker', '--help']];
    const results = await Promise.all(cases.map((args) => runCli(args, env)));
    results.forEach((res, i) => {
      const args = cases[i]!.join(' ');
      assert.equal(res.code, 0, `${args}: ${res.stderr}`);
      assert.equal(res.stderr, '', args);
      assert.match(res.stdout, /^Usage:/, args);
    });
    const [general, , , tokensCreate, tokensGroup, usersCreate, serveHelp] = results.map((r) => r.stdout);
    for (const command of ['serve', 'worker', 'users create', 'users setup-link', 'tokens create', 'tokens list', 'tokens revoke', 'migrate', 'help']) {
      assert.ok(general!.includes(`folio ${command}`), `the usage lists ${command}`);
    }
    assert.match(tokensCreate!, /^Usage: folio tokens create --user <id or email> \[--name N\] \[--expires-in 30d\]/);
    assert.match(tokensCreate!, /Durations:/);
    assert.match(tokensGroup!, /folio tokens list/);
    assert.match(tokensGroup!, /folio tokens revoke/);
    assert.match(usersCreate!, /^Usage: folio users create --email E --name N/);
    assert.match(serveHelp!, /FOLIO_ADMIN_EMAIL/);
    assert.ok(!existsSync(join(tmpdir(), 'folio-cli-never-created')), 'help opens no database');
  });

  test('bin/folio runs the bundle of the current sources, and the sources themselves alike (FOLIO_FROM_SOURCES=1)', { timeout: PROCESS_TIMEOUT_MS }, async () => {
    // The bundle of these sources (built by the test runner, or now): the path names their hash.
    const bundle = await serverBundle();
    assert.ok(bundle && existsSync(fileURLToPath(bundle)), `a bundle was built: ${bundle}`);
    assert.match(bundle, /\/build\/server\/[0-9a-f]{16}\/folio\.mjs$/);
    const env = childEnv({ DATA_DIR: join(tmpdir(), 'folio-cli-never-created') });
    const [fromBundle, fromSources] = await Promise.all([runCli(['help', 'tokens', 'create'], env), runCli(['help', 'tokens', 'create'], { ...env, FOLIO_FROM_SOURCES: '1' })]);
    assert.equal(fromBundle.code, 0, fromBundle.stderr);
    assert.equal(fromBundle.stderr, '');
    assert.deepEqual(fromSources, fromBundle);
  });

  test('unknown commands and options, missing arguments: exit 2, usage on stderr, nothing opened', { timeout: PROCESS_TIMEOUT_MS }, async () => {
    const dataDir = join(tmpdir(), `folio-cli-never-created-${randomBytes(3).toString('hex')}`);
    const env = childEnv({ DATA_DIR: dataDir });
    const cases: Array<[string[], RegExp]> = [
      [[], /No command given/],
      [['bogus'], /Unknown command "bogus"/],
      [['tokens'], /"tokens" needs a subcommand/],
      [['tokens', 'delete'], /Unknown command "tokens delete"/],
      [['help', 'nothing'], /Unknown command "nothing"/],
      [['serve', '--port', '9000'], /Unknown option '--port'/],
      [['serve', 'now'], /Unexpected argument "now"/],
      [['users', 'create', '--name', 'Nobody'], /users create needs --email/],
      [['users', 'create', '--email', 'x@example.com', '--name', 'X', '--admin', 'yes'], /Unknown option '--admin'/],
      [['tokens', 'create'], /tokens create needs --user/],
      [['tokens', 'list'], /tokens list needs --user/],
      [['tokens', 'revoke'], /tokens revoke needs one token id/],
      [['tokens', 'revoke', 'a', 'b'], /Unexpected argument "b"/],
    ];
    const results = await Promise.all(cases.map(([args]) => runCli(args, env)));
    results.forEach((res, i) => {
      const [args, message] = cases[i]!;
      assert.equal(res.code, 2, `${args.join(' ')}: ${res.stderr}`);
      assert.equal(res.stdout, '', args.join(' '));
      assert.match(res.stderr, message, args.join(' '));
      assert.match(res.stderr, /Usage: folio/, args.join(' '));
      assert.doesNotMatch(res.stderr, NO_STACK);
    });
    assert.ok(!existsSync(dataDir), 'a usage error opens no database');
  });

  test('worker refuses the embedded database with a message (exit 1)', { timeout: PROCESS_TIMEOUT_MS }, async () => {
    const dataDir = join(tmpdir(), `folio-cli-never-created-${randomBytes(3).toString('hex')}`);
    const res = await runCli(['worker'], childEnv({ DATA_DIR: dataDir }));
    assert.equal(res.code, 1, res.stderr);
    assert.match(res.stderr, /folio worker needs PostgreSQL \(DATABASE_URL\)/);
    assert.match(res.stderr, /serve already runs the background jobs/);
    assert.doesNotMatch(res.stderr, NO_STACK);
    assert.ok(!existsSync(dataDir));
  });

  test('serve on a port in use names PORT and HOST, without a stack trace and before creating the database', { timeout: PROCESS_TIMEOUT_MS }, async () => {
    const dataDir = tempDir();
    const busy = createServer();
    await new Promise<void>((resolve) => busy.listen(0, '127.0.0.1', resolve));
    try {
      const port = (busy.address() as { port: number }).port;
      const res = await runCli(['serve'], childEnv({ DATA_DIR: dataDir, HOST: '127.0.0.1', PORT: String(port) }));
      assert.equal(res.code, 1, res.stderr);
      assert.match(res.stderr, new RegExp(`Port ${port} on 127\\.0\\.0\\.1 is already in use`));
      assert.match(res.stderr, /Set PORT to a free port/);
      assert.match(res.stderr, /HOST/);
      assert.doesNotMatch(res.stderr, NO_STACK);
      assert.deepEqual(readdirSync(dataDir), [], 'no database was created');
    } finally {
      busy.close();
      rmSync(dataDir, { recursive: true, force: true });
    }
  });
});

describe('folio CLI on the embedded database', () => {
  let dataDir: string;
  let env: NodeJS.ProcessEnv;
  let port: number;
  const email = `ann.${randomBytes(3).toString('hex')}@example.com`;
  let admin: { token: string };
  let user: { id: string; token: string };
  const tokens: string[] = [];
  let server: ServeProcess | undefined;
  let orgId: string;

  before(async () => {
    dataDir = tempDir();
    port = await freePort();
    env = childEnv({ DATA_DIR: dataDir, PORT: String(port), HOST: '127.0.0.1' });
  });
  after(async () => {
    await server?.stop('SIGKILL');
    rmSync(dataDir, { recursive: true, force: true });
  });

  test('serve on an empty data dir says what it does, creates the first administrator and prints its token', { timeout: PROCESS_TIMEOUT_MS }, async () => {
    assert.deepEqual(readdirSync(dataDir), []);
    server = await serve(env);
    const err = server.stderr();
    assertBanner(server, `embedded database in ${dataDir}`);
    assert.ok(err.includes(`Creating the embedded database in ${dataDir}`), err);
    assert.match(err, /^Database created in \d+\.\d s$/m);
    assert.match(err, /^Migrations applied: 0001_foundation, .*0007_token_lifecycle/m);
    assert.ok(err.includes(`reach this server through ${join(dataDir, 'folio.sock')}`), err);
    assert.match(err, /created the administrator admin@localhost \(FOLIO_ADMIN_EMAIL\)/);
    const token = printedToken(err);
    assert.ok(token, err);
    assert.ok(err.includes(`curl -H "Authorization: Bearer ${token}" ${server.url}/v1/user`), 'a first curl to try');
    assert.equal(server.stdout(), '', 'serve keeps stdout clean');
    assert.ok(existsSync(join(dataDir, 'PG_VERSION')), 'the embedded database is created in DATA_DIR');
    admin = { token: token! };

    // Usable at once, without a restart.
    const me = await http('GET', `${server.url}/v1/user`, { token });
    assert.equal(me.status, 200, me.text);
    assert.equal(me.body.email, 'admin@localhost');
    assert.equal(me.body.displayName, 'Administrator');
    const org = await http('POST', `${server.url}/v1/orgs`, { token, body: { title: 'Acme' } });
    assert.equal(org.status, 201, org.text);
    orgId = org.body.id;
    assert.equal((await http('GET', `${server.url}/v1/user`)).status, 401, 'the API needs a token');

    // The one-time link where the administrator chooses a password, with its end; it works.
    const link = /choose the administrator's password here \(a one-time link, shown only now\):\n\n {2}(\S+)\n\nThe link works once, until (\S+) \(24 hours\)/.exec(err);
    assert.ok(link, err);
    assert.ok(link[1]!.startsWith(`${server.url}/app/password-setup#token=`), link[1]);
    const hoursLeft = (Date.parse(link[2]!) - Date.now()) / 3600_000;
    assert.ok(hoursLeft > 23 && hoursLeft <= 24, link[2]);
    assert.ok(err.includes('users setup-link --email admin@localhost'), 'what to do when the link is lost');
    const setup = await fetch(`${server.url}/app/api/password-setup`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-folio-csrf': '1' },
      body: JSON.stringify({ token: new URL(link[1]!).hash.slice('#token='.length), password: 'the first password' }),
    });
    assert.equal(setup.status, 200, await setup.text());

    // The administration socket: this OS user only.
    const socket = statSync(join(dataDir, 'folio.sock'));
    assert.ok(socket.isSocket());
    assert.equal(socket.mode & 0o777, 0o600);
  });

  test('GET / says what Folio is: JSON for API clients, a page for browsers; health, OpenAPI and docs answer', { timeout: PROCESS_TIMEOUT_MS }, async () => {
    assert.ok(server, 'the server of the previous test runs');
    const json = await http('GET', `${server.url}/`);
    assert.equal(json.status, 200);
    assert.match(json.headers.get('content-type') ?? '', /^application\/json/);
    assert.equal(json.body.name, 'Folio');
    assert.match(json.body.description, /GitBook REST API v1/);
    assert.deepEqual(json.body.links, {
      api: `${server.url}/v1`,
      docs: `${server.url}/docs`,
      openapi: `${server.url}/v1/openapi.json`,
      health: `${server.url}/healthz`,
      readiness: `${server.url}/readyz`,
    });
    const res = await fetch(`${server.url}/`, { headers: { accept: 'text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8' } });
    assert.equal(res.status, 200);
    assert.match(res.headers.get('content-type') ?? '', /^text\/html/);
    const html = await res.text();
    assert.match(html, /<title>Folio<\/title>/);
    for (const href of ['/docs', '/v1/openapi.json', '/healthz', '/readyz']) assert.ok(html.includes(`href="${server.url}${href}"`), href);
    const apiClient = await fetch(`${server.url}/`, { headers: { accept: 'application/json, text/html;q=0.5' } });
    assert.match(apiClient.headers.get('content-type') ?? '', /^application\/json/);

    assert.deepEqual((await http('GET', `${server.url}/healthz`)).body, { ok: true });
    assert.deepEqual((await http('GET', `${server.url}/readyz`)).body, { ok: true });
    const spec = await http('GET', `${server.url}/v1/openapi.json`);
    assert.equal(spec.status, 200);
    assert.match(spec.body.openapi, /^3\./);
    assert.ok(spec.body.paths['/v1/orgs/{organizationId}']?.get, 'GET /v1/orgs/{organizationId} is documented');
    const docs = await http('GET', `${server.url}/docs`);
    assert.equal(docs.status, 200);
    assert.match(docs.text, /<html/i);
  });

  test('while serve runs, users create goes through the server and its token works at once', { timeout: PROCESS_TIMEOUT_MS }, async () => {
    assert.ok(server, 'the server of the previous test runs');
    assert.equal(JSON.parse(readFileSync(join(dataDir, 'folio.lock'), 'utf8')).pid, server.child.pid, 'the server holds the data dir');
    const res = await runCli(['users', 'create', '--email', email, '--name', 'Ann Example'], env);
    assert.equal(res.code, 0, res.stderr);
    const out = oneJsonLine(res.stdout);
    assert.deepEqual(Object.keys(out).sort(), ['passwordSetup', 'token', 'user']);
    assert.ok(out.passwordSetup.url.startsWith(`${server.url}/app/password-setup#token=`), out.passwordSetup.url);
    assert.ok(Date.parse(out.passwordSetup.expiresAt) > Date.now());
    assert.equal(out.user.object, 'user');
    assert.equal(out.user.displayName, 'Ann Example');
    assert.equal(out.user.email, email);
    assert.equal(out.user.urls.location, `${server.url}/v1/users/${out.user.id}`);
    user = { id: out.user.id, token: out.token };
    tokens.push(out.token);

    const me = await http('GET', `${server.url}/v1/user`, { token: out.token });
    assert.equal(me.status, 200, me.text);
    assert.equal(me.body.id, user.id);

    const taken = await runCli(['users', 'create', '--email', email.toUpperCase(), '--name', 'Ann Again'], env);
    assert.equal(taken.code, 1);
    assert.equal(taken.stdout, '');
    assert.match(taken.stderr, /already exists/);
    assert.ok(taken.stderr.includes(email), taken.stderr);
    assert.doesNotMatch(taken.stderr, NO_STACK, 'a clear message, not a stack trace');
    const invalid = await runCli(['users', 'create', '--email', 'not-an-email', '--name', 'X'], env);
    assert.equal(invalid.code, 1);
    assert.match(invalid.stderr, /Invalid email address/);

    // users set-password too: the password read from standard input, the server's sessions ended at once.
    const signIn = (password: string) =>
      fetch(`${server!.url}/app/api/sign-in`, { method: 'POST', headers: { 'content-type': 'application/json', 'x-folio-csrf': '1' }, body: JSON.stringify({ email, password }) });
    const set = await runCli(['users', 'set-password', '--email', email], env, { input: 'set through the server\n' });
    assert.equal(set.code, 0, set.stderr);
    assert.equal(oneJsonLine(set.stdout).passwordSet, true);
    assert.ok(!set.stdout.includes('set through the server'), 'the password is never printed');
    assert.equal((await signIn('set through the server')).status, 200);

    // The link users create printed: set-password ended it. users setup-link makes a new one, which
    // works once, for this person.
    const setUp = (url: string, password: string) =>
      fetch(`${server!.url}/app/api/password-setup`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-folio-csrf': '1' },
        body: JSON.stringify({ token: new URLSearchParams(new URL(url).hash.slice(1)).get('token'), password }),
      });
    assert.equal((await setUp(out.passwordSetup.url, 'from the first link')).status, 400, 'setting the password ended the earlier link');
    const linked = await runCli(['users', 'setup-link', '--email', email.toUpperCase()], env);
    assert.equal(linked.code, 0, linked.stderr);
    const fresh = oneJsonLine(linked.stdout);
    assert.equal(fresh.user.id, user.id);
    assert.equal((await setUp(fresh.passwordSetup.url, 'chosen through the new link')).status, 200);
    assert.equal((await setUp(fresh.passwordSetup.url, 'and again')).status, 400, 'a link works once');
    assert.equal((await signIn('chosen through the new link')).status, 200);
    const nobody = await runCli(['users', 'setup-link', '--email', 'nobody@example.com'], env);
    assert.equal(nobody.code, 1);
    assert.match(nobody.stderr, /No user with id or email "nobody@example.com"/);
  });

  test('while serve runs, tokens create, list and revoke go through the server; a revoked token stops at once', { timeout: 2 * PROCESS_TIMEOUT_MS }, async () => {
    assert.ok(server && user, 'the server and user of the previous tests');
    for (const who of [user.id, email.toUpperCase()]) {
      const res = await runCli(['tokens', 'create', '--user', who], env);
      assert.equal(res.code, 0, res.stderr);
      const out = oneJsonLine(res.stdout);
      assert.deepEqual(Object.keys(out).sort(), ['createdAt', 'id', 'token']);
      assert.ok(!tokens.includes(out.token), 'each token is new');
      tokens.push(out.token);
    }
    const before = Date.now();
    const named = await runCli(['tokens', 'create', '--user', email, '--name', 'CI deploy', '--expires-in', '30d'], env);
    assert.equal(named.code, 0, named.stderr);
    const made = oneJsonLine(named.stdout);
    assert.equal(made.name, 'CI deploy');
    const expires = Date.parse(made.expiresAt) - before;
    assert.ok(expires > 29.9 * 86_400_000 && expires < 30.1 * 86_400_000, `expires in ${expires} ms`);
    const own = await http('GET', `${server.url}/v1/user/tokens`, { token: made.token });
    assert.equal(own.status, 200, own.text);
    assert.ok(own.body.items.some((i: { name?: string; current: boolean }) => i.name === 'CI deploy' && i.current));

    // Used once (so the server has it cached), then revoked: refused at the next request.
    const doomed = oneJsonLine((await runCli(['tokens', 'create', '--user', user.id], env)).stdout);
    assert.equal((await http('GET', `${server.url}/v1/user`, { token: doomed.token })).status, 200);
    const revoke = await runCli(['tokens', 'revoke', doomed.id], env);
    assert.equal(revoke.code, 0, revoke.stderr);
    const revoked = oneJsonLine(revoke.stdout).revoked;
    assert.equal(revoked.id, doomed.id);
    assert.ok(revoked.revokedAt);
    assert.equal((await http('GET', `${server.url}/v1/user`, { token: doomed.token })).status, 401);
    const twice = await runCli(['tokens', 'revoke', doomed.id], env);
    assert.equal(twice.code, 1);
    assert.match(twice.stderr, /No live token with id/);

    const listed = await runCli(['tokens', 'list', '--user', email], env);
    assert.equal(listed.code, 0, listed.stderr);
    const list = oneJsonLine(listed.stdout);
    // The sign-in of the previous test opened an app session, listed among the tokens too.
    const apiTokens = list.items.filter((i: { name?: string }) => i.name !== 'App session');
    assert.equal(apiTokens.length, tokens.length + 2);
    assert.equal(list.count, list.items.length);
    assert.ok(!tokens.concat(made.token, doomed.token).some((tok) => listed.stdout.includes(tok)), 'token values are never listed');
    const byId = new Map(list.items.map((i: { id: string }) => [i.id, i]));
    assert.equal((byId.get(made.id) as { expiresAt: string }).expiresAt, made.expiresAt);
    assert.equal((byId.get(doomed.id) as { revokedAt: string }).revokedAt, revoked.revokedAt);

    const failures = await Promise.all([
      runCli(['tokens', 'create', '--user', email, '--expires-in', 'soon'], env),
      runCli(['tokens', 'create', '--user', email, '--expires-in', '0d'], env),
      runCli(['tokens', 'create', '--user', 'nobody@example.com'], env),
    ]);
    for (const res of failures.slice(0, 2)) {
      assert.equal(res.code, 1, res.stderr);
      assert.match(res.stderr, /Invalid duration/);
    }
    assert.equal(failures[2]!.code, 1);
    assert.match(failures[2]!.stderr, /No user with id or email "nobody@example\.com"/);

    const migrated = await runCli(['migrate'], env);
    assert.equal(migrated.code, 0, migrated.stderr);
    assert.deepEqual(oneJsonLine(migrated.stdout), { applied: [] });
    for (const token of tokens) assert.equal((await http('GET', `${server.url}/v1/user`, { token })).status, 200);
  });

  test('SIGTERM stops serve with exit 0 and removes the lock and the socket; the CLI then opens the data dir itself', { timeout: 2 * PROCESS_TIMEOUT_MS }, async () => {
    assert.ok(server, 'the server of the previous tests runs');
    const stopped = await server.stop('SIGTERM');
    assert.deepEqual(stopped, { code: 0, signal: null }, server.stderr());
    assert.match(server.stderr(), /SIGTERM: finishing in-flight requests/);
    assert.ok(!existsSync(join(dataDir, 'folio.lock')), 'the lock file is removed');
    assert.ok(!existsSync(join(dataDir, 'folio.sock')), 'the socket is removed');
    server = undefined;

    const res = await runCli(['tokens', 'create', '--user', email], env);
    assert.equal(res.code, 0, res.stderr);
    tokens.push(oneJsonLine(res.stdout).token);
    assert.ok(!existsSync(join(dataDir, 'folio.lock')), 'the lock is released when the command ends');
  });

  test('a restart creates no administrator again, applies nothing, and the data and tokens are there', { timeout: PROCESS_TIMEOUT_MS }, async () => {
    server = await serve(env);
    assertBanner(server, `embedded database in ${dataDir}`);
    const err = server.stderr();
    assert.match(err, /^Database schema up to date$/m);
    assert.doesNotMatch(err, /Creating the embedded database|administrator/);
    assert.equal(printedToken(err), undefined);
    for (const token of [admin.token, ...tokens]) assert.equal((await http('GET', `${server.url}/v1/user`, { token })).status, 200);
    const org = await http('GET', `${server.url}/v1/orgs/${orgId}`, { token: admin.token });
    assert.equal(org.status, 200, org.text);
    assert.equal(org.body.title, 'Acme');
    const again = await server.stop('SIGINT');
    assert.deepEqual(again, { code: 0, signal: null }, server.stderr());
    server = undefined;
  });

  test('a data dir held by another process without a socket is refused by the lock, and left alone', { timeout: PROCESS_TIMEOUT_MS }, async () => {
    const lockPath = join(dataDir, 'folio.lock');
    // This test process is alive: as if another Folio command held the directory.
    const holder = { pid: process.pid, purpose: 'tokens create', since: new Date().toISOString() };
    writeFileSync(lockPath, JSON.stringify(holder));
    try {
      const res = await runCli(['users', 'create', '--email', 'bob@example.com', '--name', 'Bob'], env);
      assert.equal(res.code, 1);
      assert.equal(res.stdout, '');
      assert.match(res.stderr, /data directory .* is in use by another Folio process/);
      assert.ok(res.stderr.includes(`pid ${process.pid}`), res.stderr);
      assert.deepEqual(JSON.parse(readFileSync(lockPath, 'utf8')), holder);
    } finally {
      rmSync(lockPath, { force: true });
    }
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
  let server: ServeProcess | undefined;

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

    server = await serve(childEnv({ DATABASE_URL: databaseUrl, DATA_DIR: dataDir, AUTH_CACHE_TTL_MS: '500' }));
    assertBanner(server, 'PostgreSQL (DATABASE_URL)');
    assert.equal(printedToken(server.stderr()), undefined, 'a database with a user gets no administrator');
    assert.doesNotMatch(server.stderr(), /folio\.sock/, 'no socket: on PostgreSQL the CLI opens the database itself');
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
    await eventually(async () => (await http('GET', `${server!.url}/v1/user`, { token: second })).status === 401, { what: 'the revoked token to be refused', timeoutMs: 2000 });
    assert.equal((await http('GET', `${server.url}/v1/user`, { token })).status, 200, 'other tokens still work');

    const stopped = await server.stop('SIGTERM');
    assert.deepEqual(stopped, { code: 0, signal: null }, server.stderr());
    server = undefined;
    assert.deepEqual(readdirSync(dataDir), [], 'the embedded data dir is not used');
  });
  test('N serve (WORKERS=false) + M worker processes: every job runs exactly once', { skip: TEST_DATABASE_URL ? false : NO_POSTGRES, timeout: 2 * PROCESS_TIMEOUT_MS }, async () => {
    const client = new pg.Client({ connectionString: databaseUrl });
    await client.connect();
    const workers: ServeProcess[] = [];
    try {
      server = await serve(childEnv({ DATABASE_URL: databaseUrl, DATA_DIR: dataDir, WORKERS: 'false', JOB_POLL_MS: '20' }));
      assert.match(server.stderr(), /WORKERS=false/);
      // Jobs of a type the workers know (purging a space that is not there is a no-op).
      const count = 120;
      await client.query(
        `INSERT INTO jobs (type, payload, run_at, max_attempts, created_at)
         SELECT 'space.purge', jsonb_build_object('spaceId', 'none-' || i), now(), 5, now() FROM generate_series(1, $1) AS i`,
        [count],
      );
      await new Promise((r) => setTimeout(r, 300));
      // Only the jobs inserted here are counted: a server also queues its own periodic jobs (event pruning).
      const untouched = await client.query(`SELECT count(*)::int AS n FROM jobs WHERE type = 'space.purge' AND status = 'queued'`);
      assert.equal(untouched.rows[0].n, count, 'serve with WORKERS=false runs no job');

      workers.push(...(await Promise.all([1, 2].map(() => serve(childEnv({ DATABASE_URL: databaseUrl, DATA_DIR: dataDir, JOB_POLL_MS: '20' }), 'worker')))));
      for (const w of workers) {
        assert.match(w.stderr(), /Running background jobs only \(no HTTP API\)/);
        assert.match(w.stderr(), /^Ready in \d+\.\d s/m);
      }
      await eventually(async () => (await client.query(`SELECT count(*)::int AS n FROM jobs WHERE type = 'space.purge' AND status <> 'done'`)).rows[0].n === 0, { what: 'every job to be done', timeoutMs: 30_000 });
      // A claim adds one attempt: a job claimed by two workers would show two.
      const rows = await client.query(`SELECT attempts, count(*)::int AS n FROM jobs WHERE type = 'space.purge' GROUP BY attempts`);
      assert.deepEqual(rows.rows, [{ attempts: 1, n: count }]);
      for (const w of workers) assert.deepEqual(await w.stop('SIGTERM'), { code: 0, signal: null }, w.stderr());
      assert.deepEqual(await server.stop('SIGTERM'), { code: 0, signal: null }, server.stderr());
      server = undefined;
    } finally {
      for (const w of workers) await w.stop('SIGKILL');
      await client.end();
    }
  });
});
