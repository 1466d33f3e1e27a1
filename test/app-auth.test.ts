/**
 * Signing in to the app over HTTP (/app/api): password sign-in, the session cookie on the app's
 * routes and on /v1, throttling, sign-out, the CSRF rule for cookie-authenticated writes, password
 * setup links, and `folio users set-password` reading the password from standard input.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { askAdminSocket } from '../src/platform/admin-socket.ts';
import { createPasswordSetupLink, setPassword, SETUP_LINK_TTL_MS } from '../src/sign-in/service.ts';
import { MAX_FAILURES, WINDOW_MS } from '../src/sign-in/throttle.ts';
import { folioEnv, runCli } from './support/process.ts';
import { freshDatabaseConfig, startTestServer, type TestServer, type TestUser } from './support/server.ts';

const CSRF = { 'x-folio-csrf': '1' };
const WRONG = 'Email or password is incorrect';

let t: TestServer;
before(async () => {
  t = await startTestServer();
});
after(async () => {
  await t?.close();
});

/** A user with a password. */
async function userWithPassword(password = 'correct horse battery'): Promise<TestUser & { password: string }> {
  const user = await t.user('Pat Password');
  await setPassword(t.server.services.db, user.email, password);
  return { ...user, password };
}

function signIn(email: string, password: string, headers: Record<string, string> = CSRF) {
  return t.request('POST', '/app/api/sign-in', { body: { email, password }, headers });
}

/** The `Cookie` header that sends back the session an answer set. */
function sessionOf(res: { headers: Headers }): string {
  const match = /(?:^|,\s*)folio_session=([^;]*)/.exec(res.headers.get('set-cookie') ?? '');
  assert.ok(match?.[1], `a session cookie was set (got ${res.headers.get('set-cookie')})`);
  return `folio_session=${match[1]}`;
}

/** Lets every throttle window of earlier tests end, so each test starts with a clean count. */
function freshThrottleWindows() {
  t.clock.advance(WINDOW_MS + 1000);
}

describe('password sign-in', () => {
  test('signs in, sets a session cookie that authenticates the app and /v1', async () => {
    const user = await userWithPassword();
    // The email is found whatever its case.
    const res = await signIn(user.email.toUpperCase(), user.password);
    assert.equal(res.status, 200, JSON.stringify(res.body));
    assert.equal(res.body.object, 'session');
    assert.equal(res.body.user.id, user.id);
    assert.equal(res.body.user.email, user.email);
    assert.ok(Date.parse(res.body.expiresAt) > t.clock.now());
    const setCookie = res.headers.get('set-cookie')!;
    assert.match(setCookie, /^folio_session=folio_[\w-]+; /);
    for (const attribute of ['Path=/', 'HttpOnly', 'SameSite=Lax']) assert.ok(setCookie.split('; ').includes(attribute), `${attribute} in ${setCookie}`);
    assert.ok(!/Secure/.test(setCookie), 'no Secure over plain http');
    assert.equal(res.headers.get('cache-control'), 'no-store');

    const cookie = sessionOf(res);
    const session = await t.request('GET', '/app/api/session', { headers: { cookie } });
    assert.equal(session.status, 200);
    assert.equal(session.body.user.id, user.id);
    assert.equal(session.body.ssoOrganization, undefined, 'a password session');
    // The same cookie authenticates reads of the API (the app talks to /v1).
    const me = await t.request('GET', '/v1/user', { headers: { cookie } });
    assert.equal(me.status, 200);
    assert.equal(me.body.id, user.id);
    // The session is a token of the user, listed (and revocable) like the others.
    const tokens = await t.request('GET', '/v1/user/tokens', { token: user.token });
    assert.ok(tokens.body.items.some((i: { name?: string }) => i.name === 'App session'));
  });

  test('the cookie is Secure when PUBLIC_URL is https', async () => {
    const user = await userWithPassword();
    const config = t.server.services.config;
    const publicUrl = config.publicUrl;
    config.publicUrl = 'https://docs.example.com';
    try {
      const res = await signIn(user.email, user.password);
      assert.equal(res.status, 200);
      assert.ok(res.headers.get('set-cookie')!.split('; ').includes('Secure'));
    } finally {
      config.publicUrl = publicUrl;
    }
  });

  test('a wrong password and an unknown email get the same answer', async () => {
    freshThrottleWindows();
    const user = await userWithPassword();
    const noPassword = await t.user('No Password Yet');
    const answers = await Promise.all([
      signIn(user.email, 'not the password'),
      signIn(`nobody.${user.email}`, user.password),
      signIn(noPassword.email, user.password),
    ]);
    for (const res of answers) {
      assert.equal(res.status, 401);
      assert.deepEqual(res.body, { error: { code: 401, message: WRONG } });
      assert.equal(res.headers.get('set-cookie'), null);
    }
  });

  test('no session: GET /app/api/session answers 401', async () => {
    const res = await t.request('GET', '/app/api/session');
    assert.equal(res.status, 401);
    assert.equal(res.body.error.code, 401);
    const forged = await t.request('GET', '/app/api/session', { headers: { cookie: 'folio_session=folio_made_up' } });
    assert.equal(forged.status, 401);
    assert.match(forged.body.error.message, /sign in again/);
  });

  test('the session ends when its time is up', async () => {
    const user = await userWithPassword();
    const cookie = sessionOf(await signIn(user.email, user.password));
    assert.equal((await t.request('GET', '/app/api/session', { headers: { cookie } })).status, 200);
    t.clock.advance(t.server.services.config.appSessionTtlMs + 1000);
    assert.equal((await t.request('GET', '/app/api/session', { headers: { cookie } })).status, 401);
  });

  test('the request body is checked: a missing field is named', async () => {
    const res = await t.request('POST', '/app/api/sign-in', { body: { email: 'a@example.com' }, headers: CSRF });
    assert.equal(res.status, 400);
    assert.match(res.body.error.message, /password/);
  });
});

describe('throttling', () => {
  test(`after ${MAX_FAILURES} failures an account is refused with 429 and Retry-After until the window ends`, async () => {
    freshThrottleWindows();
    const user = await userWithPassword();
    for (let i = 0; i < MAX_FAILURES; i++) assert.equal((await signIn(user.email, `wrong ${i}`)).status, 401);
    // Even the right password is refused now: guessing cannot go on.
    const refused = await signIn(user.email, user.password);
    assert.equal(refused.status, 429);
    assert.match(refused.body.error.message, /Too many failed sign-in attempts/);
    const retryAfter = Number(refused.headers.get('retry-after'));
    assert.ok(retryAfter > 0 && retryAfter <= WINDOW_MS / 1000, `Retry-After ${retryAfter}`);
    t.clock.advance(retryAfter * 1000);
    assert.equal((await signIn(user.email, user.password)).status, 200);
  });

  test(`after ${MAX_FAILURES} failures from one address, that address is refused for every account`, async () => {
    freshThrottleWindows();
    const user = await userWithPassword();
    for (let i = 0; i < MAX_FAILURES; i++) assert.equal((await signIn(`unknown${i}@example.com`, 'whatever pw')).status, 401);
    const refused = await signIn(user.email, user.password);
    assert.equal(refused.status, 429);
    assert.ok(Number(refused.headers.get('retry-after')) > 0);
    freshThrottleWindows();
    assert.equal((await signIn(user.email, user.password)).status, 200);
  });
});

describe('sign-out', () => {
  test('ends the session on the server and clears the cookie', async () => {
    freshThrottleWindows();
    const user = await userWithPassword();
    const cookie = sessionOf(await signIn(user.email, user.password));
    const out = await t.request('POST', '/app/api/sign-out', { headers: { cookie, ...CSRF } });
    assert.equal(out.status, 204);
    assert.match(out.headers.get('set-cookie')!, /^folio_session=; Path=\/; HttpOnly; SameSite=Lax; Max-Age=0/);
    // The old cookie, replayed, no longer works anywhere.
    assert.equal((await t.request('GET', '/app/api/session', { headers: { cookie } })).status, 401);
    assert.equal((await t.request('GET', '/v1/user', { headers: { cookie } })).status, 401);
    assert.equal((await t.request('POST', '/app/api/sign-out', { headers: { cookie, ...CSRF } })).status, 401);
  });

  test('with a bearer token it is refused: API tokens are revoked through /v1/user/tokens', async () => {
    const user = await t.user();
    const res = await t.request('POST', '/app/api/sign-out', { token: user.token });
    assert.equal(res.status, 400);
    assert.equal((await t.request('GET', '/v1/user', { token: user.token })).status, 200, 'the token still works');
  });
});

describe('CSRF', () => {
  test('sign-in needs the custom header or an Origin of this server', async () => {
    freshThrottleWindows();
    const user = await userWithPassword();
    const bare = await signIn(user.email, user.password, {});
    assert.equal(bare.status, 403);
    assert.match(bare.body.error.message, /x-folio-csrf/);
    assert.equal((await signIn(user.email, user.password, { origin: 'https://evil.example' })).status, 403);
    assert.equal((await signIn(user.email, user.password, { origin: new URL(t.url).origin })).status, 200);
  });

  test('writes authenticated by the session cookie need the header or a matching Origin, on /v1 too', async () => {
    const user = await userWithPassword();
    const cookie = sessionOf(await signIn(user.email, user.password));
    const body = { title: 'Cookie Inc' };
    // Reads need nothing more than the cookie.
    assert.equal((await t.request('GET', '/v1/orgs', { headers: { cookie } })).status, 200);
    const refused = await t.request('POST', '/v1/orgs', { body, headers: { cookie } });
    assert.equal(refused.status, 403);
    assert.match(refused.body.error.message, /cross-site request forgery/);
    assert.equal((await t.request('POST', '/v1/orgs', { body, headers: { cookie, origin: 'https://evil.example' } })).status, 403);
    assert.equal((await t.request('POST', '/app/api/sign-out', { headers: { cookie } })).status, 403);
    assert.equal((await t.request('GET', '/app/api/session', { headers: { cookie } })).status, 200, 'the refused sign-out did not end the session');
    const created = await t.request('POST', '/v1/orgs', { body, headers: { cookie, ...CSRF } });
    assert.equal(created.status, 201);
    assert.equal((await t.request('POST', '/v1/orgs', { body, headers: { cookie, origin: new URL(t.url).origin } })).status, 201);
    // A bearer token is not a cookie: no CSRF rule for it.
    assert.equal((await t.request('POST', '/v1/orgs', { body, token: user.token })).status, 201);
  });
});

describe('password setup links', () => {
  async function link(user: TestUser) {
    const { url, expiresAt } = await createPasswordSetupLink(t.server.services, user.id);
    assert.ok(url.startsWith(`${t.url}/app/password-setup#token=`), url);
    return { token: new URL(url).hash.slice('#token='.length), expiresAt };
  }
  const setUp = (token: string, password: string) => t.request('POST', '/app/api/password-setup', { body: { token, password }, headers: CSRF });

  test('sets the password once and opens a session; a second use is refused', async () => {
    freshThrottleWindows();
    const user = await t.user('New Admin');
    const { token, expiresAt } = await link(user);
    assert.equal(expiresAt.getTime() - t.clock.now() <= SETUP_LINK_TTL_MS, true);
    // Whom the link is for, asked without using it (twice: it stays usable).
    const check = () => t.request('POST', '/app/api/password-setup/check', { body: { token }, headers: CSRF });
    for (let i = 0; i < 2; i++) {
      const account = await check();
      assert.equal(account.status, 200, JSON.stringify(account.body));
      assert.deepEqual(account.body, { email: user.email, displayName: 'New Admin' });
    }
    assert.equal((await t.request('POST', '/app/api/password-setup/check', { body: { token } })).status, 403, 'CSRF header needed');
    const wrong = await t.request('POST', '/app/api/password-setup/check', { body: { token: `${token}x` }, headers: CSRF });
    assert.equal(wrong.status, 400);
    assert.match(wrong.body.error.message, /invalid, expired or already used/);
    const short = await setUp(token, 'short');
    assert.equal(short.status, 400);
    assert.match(short.body.error.message, /at least 8 characters/);

    const res = await setUp(token, 'a good long password');
    assert.equal(res.status, 200, JSON.stringify(res.body));
    assert.equal(res.body.user.id, user.id);
    const cookie = sessionOf(res);
    assert.equal((await t.request('GET', '/app/api/session', { headers: { cookie } })).body.user.id, user.id);
    assert.equal((await signIn(user.email, 'a good long password')).status, 200);

    assert.equal((await check()).status, 400, 'a used link answers no account');
    const again = await setUp(token, 'another password');
    assert.equal(again.status, 400);
    assert.match(again.body.error.message, /invalid, expired or already used/);
    assert.equal((await signIn(user.email, 'another password')).status, 401, 'the second use changed nothing');
  });

  test('expires after 24 hours, and needs the CSRF header', async () => {
    const user = await t.user();
    const { token } = await link(user);
    assert.equal((await t.request('POST', '/app/api/password-setup', { body: { token, password: 'a good long password' } })).status, 403);
    t.clock.advance(SETUP_LINK_TTL_MS + 1000);
    const res = await setUp(token, 'a good long password');
    assert.equal(res.status, 400);
    assert.match(res.body.error.message, /expired/);
  });

  test('setting a password otherwise makes pending links stop working and ends open sessions', async () => {
    freshThrottleWindows();
    const user = await userWithPassword('the old password');
    const cookie = sessionOf(await signIn(user.email, 'the old password'));
    assert.equal((await t.request('GET', '/app/api/session', { headers: { cookie } })).status, 200);
    const { token } = await link(user);
    await setPassword(t.server.services.db, user.id, 'set by the admin', t.server.services.tokenCache);
    assert.equal((await setUp(token, 'a good long password')).status, 400);
    assert.equal((await t.request('GET', '/app/api/session', { headers: { cookie } })).status, 401, 'the session opened with the old password ended');
    assert.equal((await t.request('GET', '/v1/user', { token: user.token })).status, 200, 'API tokens are not sessions: they stay');
    assert.equal((await signIn(user.email, 'set by the admin')).status, 200);
  });
});

test('the routes are in the API reference', async () => {
  const doc = (await t.request('GET', '/v1/openapi.json')).body;
  for (const [path, method] of [['/app/api/sign-in', 'post'], ['/app/api/password-setup', 'post'], ['/app/api/sign-out', 'post'], ['/app/api/session', 'get']] as const) {
    const op = doc.paths[path]?.[method];
    assert.ok(op?.summary && op.description, `${method} ${path} is documented`);
  }
  assert.deepEqual(doc.components.securitySchemes.session, { type: 'apiKey', in: 'cookie', name: 'folio_session' });
});

test('folio users set-password reads the password from standard input, on a data directory and through the admin socket', async () => {
  const { config, cleanup } = await freshDatabaseConfig(undefined, { migrated: true });
  try {
    const first = await startTestServer(config);
    const user = await first.user('Cli User');
    await first.close();

    const env = folioEnv(config.databaseUrl ? { DATABASE_URL: config.databaseUrl } : { DATA_DIR: config.dataDir! });
    const res = await runCli(['users', 'set-password', '--email', user.email], env, { input: 'typed on stdin 1\n' });
    assert.equal(res.code, 0, res.stderr);
    const out = JSON.parse(res.stdout);
    assert.equal(out.passwordSet, true);
    assert.equal(out.user.id, user.id);
    assert.ok(!res.stdout.includes('typed on stdin'), 'the password is never printed');

    // A running server answers the same command over its socket (embedded database only).
    const socket = !config.databaseUrl;
    const second = await startTestServer(config, { adminSocket: socket } as never);
    try {
      const post = (email: string, password: string) =>
        second.request('POST', '/app/api/sign-in', { body: { email, password }, headers: CSRF });
      const signedIn = await post(user.email, 'typed on stdin 1');
      assert.equal(signedIn.status, 200);
      if (socket) {
        const cookie = sessionOf(signedIn);
        assert.equal((await second.request('GET', '/app/api/session', { headers: { cookie } })).status, 200);
        await assert.rejects(askAdminSocket(config.dataDir!, { command: 'users set-password', user: user.email, password: 'short' }), /at least 8 characters/);
        const asked = await askAdminSocket(config.dataDir!, { command: 'users set-password', user: user.email, password: 'changed over the socket' });
        assert.equal(asked.reached, true);
        assert.equal((await post(user.email, 'typed on stdin 1')).status, 401);
        assert.equal((await post(user.email, 'changed over the socket')).status, 200);
        // The server ran the command: its cache forgot the ended session at once.
        assert.equal((await second.request('GET', '/app/api/session', { headers: { cookie } })).status, 401);
      }
    } finally {
      await second.close();
    }
  } finally {
    await cleanup();
  }
});

describe('markdown pasted into the editor (POST /app/api/markdown)', () => {
  test('answers the document the markdown reads as, for a session only, within its size', async () => {
    freshThrottleWindows();
    const user = await userWithPassword();
    const cookie = sessionOf(await signIn(user.email, user.password));
    const convert = (markdown: string, headers: Record<string, string> = { cookie, ...CSRF }) => t.request('POST', '/app/api/markdown', { body: { markdown }, headers });

    const res = await convert('## Install\n\n- one\n- two\n');
    assert.equal(res.status, 200, JSON.stringify(res.body));
    assert.equal(res.body.document.object, 'document');
    assert.deepEqual(res.body.document.nodes.map((n: { type: string }) => n.type), ['heading-1', 'list-unordered']);

    assert.equal((await convert('# Hi', {})).status, 401, 'no session, no conversion');
    const big = await convert('x'.repeat(500_001));
    assert.equal(big.status, 400);
    assert.match(big.body.error.message, /markdown/);
  });
});
