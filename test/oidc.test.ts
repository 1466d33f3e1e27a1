import assert from 'node:assert/strict';
import { createHmac, generateKeyPairSync, randomBytes, sign as rsaSign, type KeyObject } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Writable } from 'node:stream';
import { after, before, describe, test } from 'node:test';
import Provider from 'oidc-provider';
import { newOrg } from './support/factories.ts';
import { startTestServer, type TestServer, type TestUser } from './support/server.ts';

/**
 * OpenID Connect sign-in against two identity providers started here on 127.0.0.1:
 *  - a real one, `oidc-provider` (the whole flow: discovery, authorization with PKCE, the code
 *    exchange, a signed ID token, UserInfo), whose interaction step signs in `nextAccount`;
 *  - a fake one whose token endpoint answers whatever ID token the test forged, so each forgery
 *    (wrong issuer, audience, nonce, expired, `alg: none`, HMAC key confusion) is refused, and the
 *    log says why (each test checks the reason, so a token refused for an unrelated cause fails).
 */

const logs: string[] = [];
const logStream = new Writable({
  write(chunk, _enc, done) {
    logs.push(...String(chunk).split('\n').filter(Boolean));
    done();
  },
});

let t: TestServer;
before(async () => {
  t = await startTestServer({ logLevel: 'info' }, { logStream });
});
after(async () => {
  await t?.close();
});

function listen(handler: (req: IncomingMessage, res: ServerResponse) => void): Promise<{ server: Server; url: string }> {
  const server = createServer(handler);
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve({ server, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}` })));
}

// ---- A browser: one cookie jar per origin, redirects followed by hand ----------------------------

class Browser {
  private readonly jars = new Map<string, Map<string, string>>();

  cookie(origin: string, name: string): string | undefined {
    return this.jars.get(origin)?.get(name);
  }

  setCookie(origin: string, name: string, value: string): void {
    const jar = this.jars.get(origin) ?? new Map<string, string>();
    jar.set(name, value);
    this.jars.set(origin, jar);
  }

  async get(url: string): Promise<Response> {
    const target = new URL(url);
    const jar = this.jars.get(target.origin);
    const headers: Record<string, string> = {};
    if (jar?.size) headers.cookie = [...jar].map(([k, v]) => `${k}=${v}`).join('; ');
    const res = await fetch(target, { redirect: 'manual', headers });
    for (const line of res.headers.getSetCookie()) {
      const [pair] = line.split(';');
      const eq = pair!.indexOf('=');
      const name = pair!.slice(0, eq);
      const value = pair!.slice(eq + 1);
      const jarOf = this.jars.get(target.origin) ?? new Map<string, string>();
      if (/Max-Age=0\b/i.test(line) || value === '') jarOf.delete(name);
      else jarOf.set(name, value);
      this.jars.set(target.origin, jarOf);
    }
    return res;
  }

  /** Follows redirects until `stop` says so (or a non-redirect answer); returns the last answer and its URL. */
  async follow(url: string, stop: (url: URL) => boolean = () => false): Promise<{ res: Response; url: URL }> {
    let current = new URL(url);
    for (let hops = 0; hops < 20; hops++) {
      if (hops > 0 && stop(current)) return { res: new Response(null, { status: 299 }), url: current };
      const res = await this.get(current.toString());
      const location = res.headers.get('location');
      if (res.status < 300 || res.status >= 400 || !location) return { res, url: current };
      await res.arrayBuffer();
      current = new URL(location, current);
    }
    throw new Error('too many redirects');
  }
}

// ---- The real OpenID provider --------------------------------------------------------------------

const CLIENT_ID = 'folio-test';
const CLIENT_SECRET = 'a-long-client-secret-for-the-test-provider-0123456789';
let nextAccount = 'alice';
const emailOfAccount = (account: string) => `${account}@oidc.example`;

interface RealIdp {
  issuer: string;
  close(): Promise<void>;
}

async function startRealIdp(redirectURIs: string[]): Promise<RealIdp> {
  let provider!: Provider;
  const { server, url } = await listen((req, res) => {
    if (req.url?.startsWith('/interaction/')) {
      // The login (and consent) screen: signs in whoever the test chose, and grants Folio what it asked.
      void (async () => {
        const details = await provider.interactionDetails(req, res);
        const grant = new provider.Grant({ accountId: nextAccount, clientId: String(details.params.client_id) });
        grant.addOIDCScope(String(details.params.scope));
        const grantId = await grant.save();
        await provider.interactionFinished(req, res, { login: { accountId: nextAccount }, consent: { grantId } }, { mergeWithLastSubmission: false });
      })().catch((err) => {
        res.statusCode = 500;
        res.end(String(err));
      });
      return;
    }
    provider.callback()(req, res);
  });
  provider = new Provider(url, {
    clients: [
      {
        client_id: CLIENT_ID,
        client_secret: CLIENT_SECRET,
        redirect_uris: redirectURIs,
        grant_types: ['authorization_code'],
        response_types: ['code'],
        token_endpoint_auth_method: 'client_secret_basic',
      },
    ],
    async findAccount(_ctx, sub) {
      return { accountId: sub, claims: async () => ({ sub, email: emailOfAccount(sub), email_verified: true, name: `${sub[0]!.toUpperCase()}${sub.slice(1)} Example` }) };
    },
    claims: { openid: ['sub'], email: ['email', 'email_verified'], profile: ['name'] },
    features: { devInteractions: { enabled: false } },
    pkce: { required: () => true },
    cookies: { keys: [randomBytes(32).toString('hex')] },
  });
  // Quiet: oidc-provider reports refused requests as events, not logs.
  provider.on('server_error', (_ctx, err) => console.error('oidc-provider server_error', err));
  return { issuer: url, close: () => new Promise((resolve) => server.close(() => resolve())) };
}

// ---- Folio's side ---------------------------------------------------------------------------------

interface OidcProvider {
  id: string;
  orgId: string;
  admin: TestUser;
  service: { redirectURI: string; startURL: string };
}

async function api(user: TestUser, method: string, path: string, body?: unknown) {
  return t.request(method, path, { token: user.token, ...(body !== undefined ? { body } : {}) });
}

async function newProvider(issuer: string, opts: { secret?: string | null; teamId?: boolean } = {}): Promise<OidcProvider> {
  const { admin, org } = await newOrg(t, 'OIDC Inc');
  const { data: team } = await admin.api.orgs.createOrganizationTeam(org.id, { title: 'Newcomers' });
  const created = await api(admin, 'POST', `/v1/orgs/${org.id}/oidc`, {
    label: 'Company login',
    issuer,
    clientID: CLIENT_ID,
    clientSecret: opts.secret === undefined ? CLIENT_SECRET : opts.secret,
    defaultTeam: team.id,
    defaultRole: 'edit',
  });
  assert.equal(created.status, 201, JSON.stringify(created.body));
  assert.equal(created.body.status, 'active');
  return { id: created.body.id, orgId: org.id, admin, service: created.body.service };
}

let idp: RealIdp;
const registered: string[] = [];

function refusalsSince(mark: number) {
  return logs
    .slice(mark)
    .map((l) => JSON.parse(l))
    .filter((l) => l.msg === 'OIDC sign-in refused');
}

async function expectRefusedPage(res: Response, mark: number, reason: RegExp, status?: number): Promise<void> {
  const text = await res.text();
  assert.ok(res.status >= 400 && res.status < 500, `refused with a 4xx, got ${res.status}: ${text.slice(0, 300)}`);
  if (status) assert.equal(res.status, status);
  assert.equal(res.headers.getSetCookie().filter((c) => c.startsWith('folio_session=') || c.startsWith('folio_sso_session=')).length, 0, 'no session cookie');
  assert.match(text, /^<!doctype html>/);
  assert.match(text, /Sign-in failed/);
  assert.doesNotMatch(text, /\bat .+\.(ts|js):\d+/, 'no stack trace');
  const refusals = refusalsSince(mark);
  assert.equal(refusals.length, 1, `one refusal logged (got ${JSON.stringify(refusals)})`);
  assert.match(refusals[0].reason, reason);
  assert.doesNotMatch(JSON.stringify(refusals[0]), /eyJ|client_secret|folio_/, 'no token or secret in the log');
}

describe('OpenID Connect providers (API)', () => {
  test('create, get, list, update, delete; the secret is never shown; pending until issuer and client id; listed for sign-in when active and enabled', async () => {
    const { admin, org } = await newOrg(t, 'Providers Inc');
    const created = await api(admin, 'POST', `/v1/orgs/${org.id}/oidc`, { label: 'Keycloak' });
    assert.equal(created.status, 201, JSON.stringify(created.body));
    assert.equal(created.body.status, 'pending');
    assert.equal(created.body.object, 'oidc-provider');
    assert.equal(created.body.defaultRole, 'read');
    assert.equal(created.body.clientSecretSet, false);
    assert.match(created.body.service.redirectURI, new RegExp(`/sso/oidc/${created.body.id}/callback$`));
    assert.match(created.body.service.startURL, new RegExp(`/sso/oidc/${created.body.id}/start$`));
    assert.deepEqual((await t.request('GET', `/v1/orgs/${org.id}/sso`)).body.items, []);

    const path = `/v1/orgs/${org.id}/oidc/${created.body.id}`;
    for (const issuer of ['http://idp.example.com', 'ftp://idp.example.com', 'not a url', 'https://u:p@idp.example.com', 'https://idp.example.com/?x=1']) {
      const bad = await api(admin, 'PATCH', path, { issuer });
      assert.equal(bad.status, 400, `${issuer} refused`);
    }
    assert.equal((await api(admin, 'PATCH', path, { clientId: 'typo' })).status, 400, 'unknown fields are refused');
    const updated = await api(admin, 'PATCH', path, { issuer: 'https://sso.example.com/realms/acme', clientID: 'folio', clientSecret: 's3cret-value' });
    assert.equal(updated.status, 200, JSON.stringify(updated.body));
    assert.equal(updated.body.status, 'active');
    assert.equal(updated.body.clientSecretSet, true);
    assert.doesNotMatch(JSON.stringify(updated.body), /s3cret-value/);
    // Stored encrypted.
    const row = await t.server.services.db.selectFrom('oidc_providers').selectAll().where('id', '=', created.body.id).executeTakeFirstOrThrow();
    assert.ok(row.client_secret_sealed?.startsWith('v1.'));
    assert.ok(!row.client_secret_sealed!.includes('s3cret'));

    assert.deepEqual((await api(admin, 'GET', path)).body, updated.body);
    assert.deepEqual((await api(admin, 'GET', `/v1/orgs/${org.id}/oidc`)).body.items.map((i: { id: string }) => i.id), [created.body.id]);
    const logins = (await t.request('GET', `/v1/orgs/${org.id}/sso`)).body.items;
    assert.deepEqual(logins, [{ id: created.body.id, label: 'Keycloak', startURL: created.body.service.startURL }]);
    // The app's sign-in screen offers it, with `next`.
    const options = await t.request('GET', `/app/api/sign-in/options?next=${encodeURIComponent(`/app/o/${org.id}/spaces`)}`);
    assert.equal(options.status, 200);
    assert.equal(options.body.sso.length, 1);
    assert.equal(options.body.sso[0].label, 'Keycloak');
    assert.equal(new URL(options.body.sso[0].startURL).searchParams.get('next'), `/app/o/${org.id}/spaces`);

    // Disabled: not offered, its start refused.
    const disabled = await api(admin, 'PATCH', path, { enabled: false });
    assert.equal(disabled.body.status, 'disabled');
    assert.deepEqual((await t.request('GET', `/v1/orgs/${org.id}/sso`)).body.items, []);
    const start = await fetch(created.body.service.startURL, { redirect: 'manual' });
    assert.equal(start.status, 403);
    assert.match(await start.text(), /turned off/);

    // Removing the secret makes a public client.
    assert.equal((await api(admin, 'PATCH', path, { clientSecret: null })).body.clientSecretSet, false);

    // Members who are not admins see nothing.
    const member = await t.user('Member');
    await t.server.services.db.insertInto('members').values({ organization_id: org.id, user_id: member.id, role: 'edit', joined_at: new Date(), last_seen_at: null }).execute();
    assert.equal((await api(member, 'GET', path)).status, 403);
    assert.equal((await api(member, 'POST', `/v1/orgs/${org.id}/oidc`, { label: 'x' })).status, 403);

    assert.equal((await api(admin, 'DELETE', path)).status, 204);
    assert.equal((await api(admin, 'GET', path)).status, 404);
  });
});

describe('signing in through a real OpenID provider (oidc-provider)', () => {
  let providers: OidcProvider[];
  before(async () => {
    // Folio's providers first (placeholder issuer), then the IdP with their redirect URIs, then
    // the providers pointed at it: oidc-provider checks redirect_uri against its registration.
    providers = [];
    for (let i = 0; i < 4; i++) providers.push(await newProvider('http://127.0.0.1:9/placeholder'));
    registered.push(...providers.map((p) => p.service.redirectURI));
    idp = await startRealIdp(registered);
    for (const p of providers) {
      const res = await api(p.admin, 'PATCH', `/v1/orgs/${p.orgId}/oidc/${p.id}`, { issuer: idp.issuer });
      assert.equal(res.status, 200, JSON.stringify(res.body));
    }
  });
  after(async () => {
    await idp?.close();
  });

  async function signIn(p: OidcProvider, browser: Browser, next?: string) {
    const start = next === undefined ? p.service.startURL : `${p.service.startURL}?next=${encodeURIComponent(next)}`;
    const folioOrigin = new URL(t.url).origin;
    // Stop once the browser is sent back to Folio's callback, to look at it.
    const { url: callback } = await browser.follow(start, (u) => u.origin === folioOrigin && u.pathname.endsWith('/callback'));
    assert.match(callback.pathname, /\/callback$/, `came back to the callback (at ${callback})`);
    const res = await browser.get(callback.toString());
    return { res, callback };
  }

  test('the whole flow: PKCE and nonce sent, code exchanged, account made just in time, app session open, back to next', async () => {
    const p = providers[0]!;
    const browser = new Browser();
    nextAccount = `alice${randomBytes(3).toString('hex')}`;
    const next = '/app/o/x/some-page?tab=1';

    // The authorization request Folio makes.
    const started = await browser.get(`${p.service.startURL}?next=${encodeURIComponent(next)}`);
    assert.equal(started.status, 302);
    const auth = new URL(started.headers.get('location')!);
    assert.equal(auth.origin, idp.issuer);
    assert.equal(auth.searchParams.get('response_type'), 'code');
    assert.equal(auth.searchParams.get('client_id'), CLIENT_ID);
    assert.equal(auth.searchParams.get('redirect_uri'), p.service.redirectURI);
    assert.equal(auth.searchParams.get('code_challenge_method'), 'S256');
    assert.ok(auth.searchParams.get('code_challenge'));
    assert.ok(auth.searchParams.get('state'));
    assert.ok(auth.searchParams.get('nonce'));
    assert.deepEqual(auth.searchParams.get('scope')!.split(' ').sort(), ['email', 'openid', 'profile']);
    const binding = started.headers.getSetCookie().find((c) => c.startsWith('folio_oidc_browser='))!;
    for (const attribute of ['Path=/sso/oidc', 'HttpOnly', 'SameSite=Lax']) assert.ok(binding.split('; ').includes(attribute), `${attribute} in ${binding}`);

    const folioOrigin = new URL(t.url).origin;
    const { url: callback } = await browser.follow(auth.toString(), (u) => u.origin === folioOrigin);
    assert.equal(callback.pathname, new URL(p.service.redirectURI).pathname);
    assert.ok(callback.searchParams.get('code'));
    const res = await browser.get(callback.toString());
    assert.equal(res.status, 303, await res.clone().text());
    assert.equal(res.headers.get('location'), next);
    const appCookie = browser.cookie(folioOrigin, 'folio_session');
    assert.ok(appCookie, 'app session cookie set');
    assert.ok(browser.cookie(folioOrigin, 'folio_sso_session'), '/sso session cookie set');

    const session = await t.request('GET', '/app/api/session', { headers: { cookie: `folio_session=${appCookie}` } });
    assert.equal(session.status, 200, JSON.stringify(session.body));
    assert.equal(session.body.user.email, emailOfAccount(nextAccount));
    assert.equal(session.body.user.displayName, `${nextAccount[0]!.toUpperCase()}${nextAccount.slice(1)} Example`);
    assert.equal(session.body.ssoOrganization, p.orgId);
    // Member with the provider's default role, marked SSO, in its default team.
    const member = await t.server.services.db
      .selectFrom('members')
      .selectAll()
      .where('organization_id', '=', p.orgId)
      .where('user_id', '=', session.body.user.id)
      .executeTakeFirstOrThrow();
    assert.equal(member.role, 'edit');
    assert.equal(member.sso, true);

    // The same person again: the same user (linked by sub), no new account; no next: the organization.
    const again = await signIn(p, browser);
    assert.equal(again.res.status, 303);
    assert.equal(again.res.headers.get('location'), `/app/o/${p.orgId}`);
    const second = await t.request('GET', '/app/api/session', { headers: { cookie: `folio_session=${browser.cookie(folioOrigin, 'folio_session')}` } });
    assert.equal(second.body.user.id, session.body.user.id);

    // The callback URL cannot be used twice (the state is consumed).
    const mark = logs.length;
    await expectRefusedPage(await browser.get(callback.toString()), mark, /no pending sign-in/);
  });

  test('state: missing, unknown, or from another browser: refused', async () => {
    const p = providers[1]!;
    nextAccount = 'bob';
    let mark = logs.length;
    await expectRefusedPage(await fetch(`${p.service.redirectURI}?code=abc`, { redirect: 'manual' }), mark, /without state/);
    mark = logs.length;
    await expectRefusedPage(await fetch(`${p.service.redirectURI}?code=abc&state=made-up`, { redirect: 'manual' }), mark, /no pending sign-in/);

    // A genuine callback URL opened by another browser (login CSRF): refused.
    const victim = new Browser();
    const attacker = new Browser();
    const folioOrigin = new URL(t.url).origin;
    const started = await attacker.get(p.service.startURL);
    const { url: callback } = await attacker.follow(started.headers.get('location')!, (u) => u.origin === folioOrigin);
    mark = logs.length;
    await expectRefusedPage(await victim.get(callback.toString()), mark, /no browser-binding cookie/, 403);
    const other = new Browser();
    other.setCookie(folioOrigin, 'folio_oidc_browser', randomBytes(32).toString('base64url'));
    const started2 = await attacker.get(p.service.startURL);
    const { url: callback2 } = await attacker.follow(started2.headers.get('location')!, (u) => u.origin === folioOrigin);
    mark = logs.length;
    await expectRefusedPage(await other.get(callback2.toString()), mark, /another browser/, 403);
  });

  test('a next outside the app is dropped: the organization opens instead', async () => {
    const p = providers[2]!;
    for (const next of ['https://evil.example/app', '//evil.example/app', '/v1/user', '/app/api/session']) {
      nextAccount = `carol${randomBytes(3).toString('hex')}`;
      const { res } = await signIn(p, new Browser(), next);
      assert.equal(res.status, 303, next);
      assert.equal(res.headers.get('location'), `/app/o/${p.orgId}`, `${next} dropped`);
    }
  });

  test('an account that reaches another organization is not taken over; a denied authorization is a clear page', async () => {
    const p = providers[3]!;
    // Someone whose email the IdP will assert, and who is a member elsewhere.
    const local = `dave${randomBytes(3).toString('hex')}`;
    const elsewhere = await t.user('Dave', { email: emailOfAccount(local) });
    await newOrgOf(elsewhere);
    nextAccount = local;
    const mark = logs.length;
    const { res } = await signIn(p, new Browser());
    await expectRefusedPage(res, mark, /exists outside this organization/, 403);

    // The provider answers an error (the person refused, or the IdP failed).
    const browser = new Browser();
    const started = await browser.get(p.service.startURL);
    const state = new URL(started.headers.get('location')!).searchParams.get('state')!;
    const mark2 = logs.length;
    await expectRefusedPage(await browser.get(`${p.service.redirectURI}?error=access_denied&state=${state}`), mark2, /access_denied/, 403);
  });

  async function newOrgOf(user: TestUser) {
    await user.api.orgs.createOrganization({ title: 'Elsewhere' });
  }
});

// ---- Forged ID tokens, through a fake provider whose token endpoint answers them ------------------

const b64 = (value: unknown) => Buffer.from(typeof value === 'string' ? value : JSON.stringify(value)).toString('base64url');

interface FakeIdp {
  issuer: string;
  publicPem: string;
  /** The ID token the token endpoint answers next. */
  idToken: string;
  rs256(claims: Record<string, unknown>, header?: Record<string, unknown>, key?: KeyObject): string;
  close(): Promise<void>;
}

async function startFakeIdp(): Promise<FakeIdp> {
  const { privateKey, publicKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
  const jwk = { ...publicKey.export({ format: 'jwk' }), kid: 'k1', alg: 'RS256', use: 'sig' };
  const fake: Partial<FakeIdp> & { idToken: string } = { idToken: '' };
  const { server, url } = await listen((req, res) => {
    const path = new URL(req.url!, url).pathname;
    const json = (body: unknown) => {
      res.setHeader('content-type', 'application/json');
      res.setHeader('cache-control', 'no-store');
      res.end(JSON.stringify(body));
    };
    if (path === '/.well-known/openid-configuration') {
      return json({
        issuer: url,
        authorization_endpoint: `${url}/auth`,
        token_endpoint: `${url}/token`,
        jwks_uri: `${url}/jwks`,
        response_types_supported: ['code'],
        subject_types_supported: ['public'],
        // Claims to accept what the attacks need: Folio must refuse them anyway.
        id_token_signing_alg_values_supported: ['RS256', 'HS256', 'none'],
        code_challenge_methods_supported: ['S256'],
        token_endpoint_auth_methods_supported: ['client_secret_basic'],
      });
    }
    if (path === '/jwks') return json({ keys: [jwk] });
    if (path === '/token') {
      req.resume();
      return json({ access_token: 'at-' + randomBytes(8).toString('hex'), token_type: 'Bearer', expires_in: 300, id_token: fake.idToken });
    }
    res.statusCode = 404;
    res.end();
  });
  fake.issuer = url;
  fake.publicPem = publicKey.export({ format: 'pem', type: 'spki' }).toString();
  fake.rs256 = (claims, header = {}, key = privateKey) => {
    const input = `${b64({ alg: 'RS256', typ: 'JWT', kid: 'k1', ...header })}.${b64(claims)}`;
    return `${input}.${rsaSign('sha256', Buffer.from(input), key).toString('base64url')}`;
  };
  fake.close = () => new Promise((resolve) => server.close(() => resolve()));
  return fake as FakeIdp;
}

function hs256(claims: Record<string, unknown>, key: string, kid = 'k1'): string {
  const input = `${b64({ alg: 'HS256', typ: 'JWT', kid })}.${b64(claims)}`;
  return `${input}.${createHmac('sha256', key).update(input).digest('base64url')}`;
}

describe('forged ID tokens are refused', () => {
  let fake: FakeIdp;
  let p: OidcProvider;
  before(async () => {
    fake = await startFakeIdp();
    p = await newProvider(fake.issuer);
  });
  after(async () => {
    await fake?.close();
  });

  /** Starts a sign-in, makes the token endpoint answer `forge(nonce)`, and opens the callback. */
  async function callbackWith(forge: (nonce: string) => string) {
    const browser = new Browser();
    const started = await browser.get(p.service.startURL);
    assert.equal(started.status, 302, await started.clone().text());
    const auth = new URL(started.headers.get('location')!);
    fake.idToken = forge(auth.searchParams.get('nonce')!);
    return browser.get(`${p.service.redirectURI}?code=c${randomBytes(6).toString('hex')}&state=${auth.searchParams.get('state')}`);
  }

  const now = () => Math.floor(Date.now() / 1000);
  const claims = (nonce: string, extra: Record<string, unknown> = {}) => ({
    iss: fake.issuer,
    aud: CLIENT_ID,
    sub: `forged-${randomBytes(4).toString('hex')}`,
    email: `${randomBytes(4).toString('hex')}@fake.example`,
    email_verified: true,
    nonce,
    iat: now(),
    exp: now() + 300,
    ...extra,
  });

  test('control: a genuine token of the fake provider signs in (so the refusals below are for their own reason)', async () => {
    const res = await callbackWith((nonce) => fake.rs256(claims(nonce)));
    assert.equal(res.status, 303, await res.clone().text());
    assert.equal(res.headers.get('location'), `/app/o/${p.orgId}`);
  });

  test('SSO enforcement applies as for SAML: the OIDC session reaches its enforcing organization, an ordinary token of the same person does not', async () => {
    const res = await callbackWith((nonce) => fake.rs256(claims(nonce)));
    assert.equal(res.status, 303);
    const appCookie = res.headers.getSetCookie().find((c) => c.startsWith('folio_session='))!.split(';')[0]!;
    const session = await t.request('GET', '/app/api/session', { headers: { cookie: appCookie } });
    assert.equal(session.body.ssoOrganization, p.orgId);
    const { createApiToken } = await import('../src/platform/auth.ts');
    const plain = await createApiToken(t.server.services.db, session.body.user.id);
    assert.equal((await t.request('GET', `/v1/orgs/${p.orgId}`, { token: plain })).status, 200);
    await p.admin.api.orgs.updateOrganizationById(p.orgId, { sso: true });
    try {
      assert.equal((await t.request('GET', `/v1/orgs/${p.orgId}`, { token: plain })).status, 403);
      assert.equal((await t.request('GET', `/v1/orgs/${p.orgId}`, { headers: { cookie: appCookie } })).status, 200);
      // The admin's ordinary token keeps working (the recovery path).
      await p.admin.api.orgs.getOrganizationById(p.orgId);
    } finally {
      await p.admin.api.orgs.updateOrganizationById(p.orgId, { sso: false });
    }
  });

  const cases: [string, (nonce: string) => string, RegExp][] = [
    ['wrong issuer', (nonce) => fake.rs256(claims(nonce, { iss: 'https://evil.example' })), /"iss"/],
    ['wrong audience', (nonce) => fake.rs256(claims(nonce, { aud: 'someone-else' })), /"aud"/],
    ['wrong nonce', (nonce) => fake.rs256(claims(`${nonce}x`)), /"nonce"/],
    ['no nonce', (nonce) => fake.rs256(claims(nonce, { nonce: undefined })), /"nonce"/],
    ['expired', (nonce) => fake.rs256(claims(nonce, { iat: now() - 7200, exp: now() - 3600 })), /"exp"/],
    ['alg: none', (nonce) => `${b64({ alg: 'none', typ: 'JWT' })}.${b64(claims(nonce))}.`, /unsupported JWS "alg"/],
    ['HS256 signed with the provider\'s public key (key confusion)', (nonce) => hs256(claims(nonce), fake.publicPem), /unsupported JWS algorithm/],
    ['HS256 signed with the client secret', (nonce) => hs256(claims(nonce), CLIENT_SECRET), /unsupported JWS algorithm/],
    ['signed by another key', (nonce) => fake.rs256(claims(nonce), {}, generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey), /signature verification failed/],
    ['payload changed after signing', (nonce) => {
      const good = fake.rs256(claims(nonce));
      const [h, , s] = good.split('.');
      return `${h}.${b64(claims(nonce, { email: 'ceo@fake.example' }))}.${s}`;
    }, /signature verification failed/],
    ['not a JWT', () => 'not-a-jwt', /Invalid JWT/],
  ];
  for (const [name, forge, reason] of cases) {
    test(name, async () => {
      const mark = logs.length;
      await expectRefusedPage(await callbackWith(forge), mark, reason);
    });
  }

  test('an email the provider says is unverified is refused', async () => {
    const mark = logs.length;
    await expectRefusedPage(await callbackWith((nonce) => fake.rs256(claims(nonce, { email_verified: false }))), mark, /email_verified/, 403);
  });

  test('an unreachable provider is a clear page, not a 500', async () => {
    const { admin, org } = await newOrg(t, 'Down Inc');
    const created = await api(admin, 'POST', `/v1/orgs/${org.id}/oidc`, { label: 'Down', issuer: 'http://127.0.0.1:9', clientID: 'x' });
    const mark = logs.length;
    const res = await fetch(created.body.service.startURL, { redirect: 'manual' });
    assert.equal(res.status, 502);
    assert.match(await res.text(), /could not read the identity provider/);
    assert.match(refusalsSince(mark)[0].reason, /discovery/);
  });
});
