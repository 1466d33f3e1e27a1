/**
 * Platform hardening (issue 17): bounded JSON bodies and strict fields, health checks outside the
 * rate limits, HTTP timeouts against slow clients, made-up tokens counted against the address,
 * non-ASCII file names, Fastify's own errors in our shape, token listing, expiry and revocation.
 *
 * Tests that need distinct client addresses connect from different loopback addresses
 * (127.0.0.x): the rate limiter counts anonymous callers by address.
 */
import assert from 'node:assert/strict';
import { createHash, randomBytes } from 'node:crypto';
import { request as httpRequest } from 'node:http';
import { connect, type Socket } from 'node:net';
import { PassThrough } from 'node:stream';
import { after, before, describe, test } from 'node:test';
import { sql } from 'kysely';
import { buildFolioApp } from '../src/routes.ts';
import { revokeApiToken } from '../src/platform/auth.ts';
import { editChangeRequest, newOrg, newSpace, openChangeRequest } from './support/factories.ts';
import { startTestServer, type TestServer } from './support/server.ts';
import { eventually } from './support/wait.ts';

let t: TestServer;
let logs = '';
/** A server with a small rate limit, short HTTP timeouts and a small limiter table. */
let limited: TestServer;
const LIMIT = 30;
const TIMEOUTS = { httpHeadersTimeoutMs: 1000, httpRequestTimeoutMs: 1500, httpKeepAliveTimeoutMs: 1000, httpIdleTimeoutMs: 2000 };

before(async () => {
  const stream = new PassThrough();
  stream.on('data', (chunk) => (logs += chunk.toString()));
  // Started together: most of a start is waiting on the database, which two starts share well.
  const started = await Promise.allSettled([
    startTestServer({ logLevel: 'info', authCacheTtlMs: 1000 }, { logStream: stream }),
    startTestServer({ rateLimitMax: LIMIT, rateLimitWindowMs: 60_000, rateLimitMaxKeys: 50, ...TIMEOUTS }),
  ]);
  [t, limited] = started.map((s) => (s.status === 'fulfilled' ? s.value : undefined!));
  const failed = started.find((s) => s.status === 'rejected');
  if (failed) throw failed.reason;
});
after(async () => {
  await t?.close();
  await limited?.close();
});

/** Arrays nested `depth` levels: [[[...]]] (2 bytes a level, so 500,000 levels fit the body limit). */
const nestedArrays = (depth: number) => '['.repeat(depth) + ']'.repeat(depth);

/** A rich-text document whose blocks nest `levels` deep (blockquote in blockquote ... paragraph). */
function deepDocument(levels: number) {
  let node: Record<string, unknown> = {
    object: 'block',
    type: 'paragraph',
    nodes: [{ object: 'text', leaves: [{ object: 'leaf', text: 'deep', marks: [{ object: 'mark', type: 'bold' }] }] }],
  };
  for (let i = 1; i < levels; i++) node = { object: 'block', type: 'blockquote', nodes: [node] };
  return { object: 'document', data: {}, nodes: [node] };
}

/** The JSON text of deepDocument(levels), built as text: JSON.stringify itself overflows at 10,000 levels. */
function deepDocumentJson(levels: number): string {
  const inner = JSON.stringify(deepDocument(1).nodes[0]);
  const open = '{"object":"block","type":"blockquote","nodes":[';
  return `{"object":"document","data":{},"nodes":[${open.repeat(levels - 1)}${inner}${']}'.repeat(levels - 1)}]}`;
}

/** One raw HTTP request from a chosen loopback address. */
function rawGet(server: TestServer, path: string, opts: { from?: string; token?: string } = {}): Promise<{ status: number; headers: Record<string, unknown>; body: string }> {
  const url = new URL(server.url);
  return new Promise((resolve, reject) => {
    const req = httpRequest(
      {
        host: url.hostname,
        port: url.port,
        path,
        method: 'GET',
        agent: false,
        ...(opts.from ? { localAddress: opts.from } : {}),
        headers: opts.token ? { authorization: `Bearer ${opts.token}` } : {},
      },
      (res) => {
        let body = '';
        res.setEncoding('utf8');
        res.on('data', (d) => (body += d));
        res.on('end', () => resolve({ status: res.statusCode!, headers: res.headers, body }));
      },
    );
    req.on('error', reject);
    req.end();
  });
}

/** Opens a socket and resolves, once it is closed by the server, with how long that took. */
function openSocket(server: TestServer, from: string): { socket: Socket; closed: Promise<{ ms: number; received: string }> } {
  const url = new URL(server.url);
  const started = Date.now();
  const socket = connect({ host: url.hostname, port: Number(url.port), localAddress: from });
  let received = '';
  socket.setEncoding('utf8');
  socket.on('data', (d: string) => (received += d));
  socket.on('error', () => {});
  const closed = new Promise<{ ms: number; received: string }>((resolve) => socket.on('close', () => resolve({ ms: Date.now() - started, received })));
  return { socket, closed };
}

/** Resolves with the value, or with 'timeout' after `ms`. */
function within<T>(promise: Promise<T>, ms: number): Promise<T | 'timeout'> {
  let timer: NodeJS.Timeout;
  return Promise.race([promise, new Promise<'timeout'>((r) => (timer = setTimeout(() => r('timeout'), ms)))]).finally(() => clearTimeout(timer));
}

describe('JSON bodies are bounded and strict', () => {
  test('a body nested deeper than the limit is refused before it is parsed, with the limit in the message', async () => {
    const u = await t.user();
    const started = Date.now();
    const res = await t.request('POST', '/v1/orgs', { token: u.token, raw: `{"title":"Deep","extra":${nestedArrays(500_000)}}` });
    assert.equal(res.status, 400, JSON.stringify(res.body).slice(0, 300));
    assert.equal(res.body.error.code, 400);
    assert.match(res.body.error.message, /deeper than 128 levels/);
    assert.ok(Date.now() - started < 5000, 'refused quickly');
    const arrays = await t.request('POST', '/v1/orgs', { token: u.token, raw: `{"title":"Deep","x":${'['.repeat(129)}${']'.repeat(129)}}` });
    assert.equal(arrays.status, 400);
    assert.match(arrays.body.error.message, /128/);
    assert.equal((await u.api.orgs.listOrganizationsForAuthenticatedUser()).data.count, 0, 'nothing was created');
  });

  test('deeply nested rich text: 10,000 levels are a 400 naming the limit; 50 block levels pass', { timeout: 30_000 }, async () => {
    const { admin, org } = await newOrg(t);
    const deep = await t.request('PUT', `/v1/orgs/${org.id}/agent-instructions`, { token: admin.token, raw: `{"instructions":${deepDocumentJson(10_000)}}` });
    assert.equal(deep.status, 400, JSON.stringify(deep.body).slice(0, 300));
    assert.match(deep.body.error.message, /128 levels/);

    const space = await newSpace(admin, org.id, 'Notes');
    const comment = await t.request('POST', `/v1/spaces/${space.id}/comments`, { token: admin.token, raw: `{"body":{"document":${deepDocumentJson(5_000)}}}` });
    assert.equal(comment.status, 400, JSON.stringify(comment.body).slice(0, 300));
    assert.match(comment.body.error.message, /128 levels/);

    // Brackets inside strings (escaped quotes and backslashes included) are text, not nesting.
    const brackets = deepDocument(1) as unknown as { nodes: { nodes: { leaves: { text: string }[] }[] }[] };
    brackets.nodes[0]!.nodes[0]!.leaves[0]!.text = `\\"\\${'[{'.repeat(1000)}`;
    const raw = JSON.stringify({ instructions: brackets });
    assert.ok(raw.includes('\\\\\\"\\\\[{[{'), raw.slice(0, 200));
    const text = await t.request('PUT', `/v1/orgs/${org.id}/agent-instructions`, { token: admin.token, raw });
    assert.equal(text.status, 200, JSON.stringify(text.body).slice(0, 300));

    assert.deepEqual(JSON.parse(deepDocumentJson(50)), deepDocument(50));
    // Raw requests: the official-schema check of the test client costs time exponential in block depth.
    const put = await t.request('PUT', `/v1/orgs/${org.id}/agent-instructions`, { token: admin.token, body: { instructions: deepDocument(50) } });
    assert.equal(put.status, 200, JSON.stringify(put.body).slice(0, 300));
    const read = await t.request('GET', `/v1/orgs/${org.id}/agent-instructions`, { token: admin.token });
    assert.equal(read.status, 200);
    let depth = 0;
    let node = read.body.instructions.nodes[0] as { type?: string; nodes?: unknown[] } | undefined;
    while (node && node.type) {
      depth++;
      node = node.nodes?.[0] as typeof node;
    }
    assert.equal(depth, 50, 'stored as sent');
  });

  test('unknown fields are refused, naming the field, at the top and nested', async () => {
    const u = await t.user();
    const top = await t.request('POST', '/v1/orgs', { token: u.token, body: { title: 'Acme', bogusField: 'x' } });
    assert.equal(top.status, 400);
    assert.match(top.body.error.message, /unknown field "bogusField"/);
    const patch = await t.request('PATCH', `/v1/users/${u.id}`, { token: u.token, body: { displayName: 'Ann', isAdmin: true } });
    assert.equal(patch.status, 400);
    assert.match(patch.body.error.message, /unknown field "isAdmin"/);

    const { admin, org } = await newOrg(t);
    const nested = await t.request('PUT', `/v1/orgs/${org.id}/agent-instructions`, {
      token: admin.token,
      body: { instructions: { object: 'document', data: {}, nodes: [], hidden: { a: 1 } } },
    });
    assert.equal(nested.status, 400);
    assert.match(nested.body.error.message, /instructions: unknown field "hidden"/);

    const space = await newSpace(admin, org.id, 'Files');
    const cr = await openChangeRequest(admin, space.id, 'x');
    const file = await t.request('POST', `/v1/spaces/${space.id}/change-requests/${cr.id}/content`, {
      token: admin.token,
      body: { changes: [{ operation: 'insert_files', files: [{ name: 'a.txt', base64: 'eA==', owner: 'someone' }] }] },
    });
    assert.equal(file.status, 400);
    assert.match(file.body.error.message, /unknown field "owner"/);

    // Nothing was created by the refused calls.
    const { data: orgs } = await u.api.orgs.listOrganizationsForAuthenticatedUser();
    assert.equal(orgs.count, 0);
  });
});

describe('health checks, rate limits and slow clients', () => {
  test('slow clients are cut off: body drips, header drips, idle and kept-alive connections close within the timeouts', { timeout: 30_000 }, async () => {
    const drips: { closed: Promise<{ ms: number; received: string }>; stop(): void }[] = [];
    for (let i = 0; i < 5; i++) {
      const { socket, closed } = openSocket(limited, '127.0.0.20');
      socket.write(`POST /v1/orgs HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 100000\r\n\r\n`);
      const timer = setInterval(() => socket.writable && socket.write('{'), 100);
      drips.push({ closed, stop: () => clearInterval(timer) });
    }
    const headerDrip = openSocket(limited, '127.0.0.20');
    const text = 'GET /healthz HTTP/1.1\r\nHost: x\r\n' + 'X-Slow: a\r\n'.repeat(1000);
    let n = 0;
    const headerTimer = setInterval(() => headerDrip.socket.writable && headerDrip.socket.write(text[n++ % text.length]!), 50);
    const idle = openSocket(limited, '127.0.0.20');
    const keptAlive = openSocket(limited, '127.0.0.20');
    keptAlive.socket.write('GET /healthz HTTP/1.1\r\nHost: x\r\nConnection: keep-alive\r\n\r\n');

    const bound = TIMEOUTS.httpIdleTimeoutMs + 3000;
    try {
      for (const drip of drips) {
        const closed = await within(drip.closed, bound);
        assert.notEqual(closed, 'timeout', 'a body dripping one byte every 100 ms is cut off');
        if (closed !== 'timeout') assert.ok(closed.ms >= TIMEOUTS.httpRequestTimeoutMs - 100, `closed after ${closed.ms} ms`);
      }
      const header = await within(headerDrip.closed, bound);
      assert.notEqual(header, 'timeout', 'headers dripping are cut off');
      const idleClosed = await within(idle.closed, bound);
      assert.notEqual(idleClosed, 'timeout', 'a connection that sends nothing is closed');
      const kept = await within(keptAlive.closed, bound);
      assert.notEqual(kept, 'timeout', 'an idle kept-alive connection is closed');
      if (kept !== 'timeout') assert.match(kept.received, /^HTTP\/1.1 200/, 'the request itself was answered');
    } finally {
      for (const drip of drips) drip.stop();
      clearInterval(headerTimer);
    }
    // The server still serves.
    assert.equal((await rawGet(limited, '/healthz', { from: '127.0.0.21' })).status, 200);
  });

  test('after an anonymous flood from one address, /healthz and /readyz still answer 200 and are not counted', async () => {
    const from = '127.0.0.30';
    let throttled = 0;
    for (let i = 0; i < LIMIT + 5; i++) if ((await rawGet(limited, '/v1/user', { from })).status === 429) throttled++;
    assert.equal(throttled, 5, 'the flood itself is throttled');
    for (let i = 0; i < 3 * LIMIT; i++) {
      const health = await rawGet(limited, '/healthz', { from });
      assert.equal(health.status, 200, health.body);
      assert.equal(health.headers['x-ratelimit-remaining'], undefined, 'health checks are outside the limits');
    }
    assert.equal((await rawGet(limited, '/readyz', { from })).status, 200);

    // Health checks do not use up an address's allowance.
    const other = '127.0.0.31';
    for (let i = 0; i < 2 * LIMIT; i++) assert.equal((await rawGet(limited, '/healthz', { from: other })).status, 200);
    const first = await rawGet(limited, '/v1/user', { from: other });
    assert.equal(first.status, 401);
    assert.equal(first.headers['x-ratelimit-remaining'], String(LIMIT - 1));
  });

  test('made-up bearer tokens count against the address; a valid token keeps its own allowance', async () => {
    const from = '127.0.0.40';
    const statuses: number[] = [];
    for (let i = 0; i < LIMIT + 10; i++) {
      statuses.push((await rawGet(limited, '/v1/user', { from, token: randomBytes(9000).toString('base64url') })).status);
    }
    assert.deepEqual(statuses.slice(0, LIMIT), Array(LIMIT).fill(401));
    assert.deepEqual(statuses.slice(LIMIT), Array(10).fill(429), 'over the limit, every made-up token gets 429');
    // Public routes count made-up tokens against the address too.
    const blob = await rawGet(limited, '/v1/blobs/abc/x.txt', { from, token: 'folio_made-up' });
    assert.equal(blob.status, 429);

    // A real token has its own window, also from an address that is throttled.
    const u = await limited.user();
    const me = await rawGet(limited, '/v1/user', { from: '127.0.0.41', token: u.token });
    assert.equal(me.status, 200, me.body);
    const again = await rawGet(limited, '/v1/user', { from, token: u.token });
    assert.equal(again.status, 200, again.body);
    assert.equal(again.headers['x-ratelimit-remaining'], String(LIMIT - 2));
  });

  test('limiter state stays bounded, and is keyed by a hash, never by the token', async () => {
    const limiter = limited.server.app.rateLimiter;
    const token = randomBytes(9000).toString('base64url');
    for (let i = 0; i < 80; i++) {
      await rawGet(limited, '/v1/user', { from: `127.0.1.${i + 1}`, token });
      assert.ok(limiter.size <= 50, `limiter holds ${limiter.size} entries`);
    }
    assert.equal(limiter.size, 50);
    const u = await limited.user();
    assert.equal((await rawGet(limited, '/v1/user', { from: '127.0.2.1', token: u.token })).status, 200);
    for (const key of limiter.keys()) {
      assert.ok(key.length <= 80, `short keys: ${key.slice(0, 40)}…`);
      assert.ok(!key.includes(u.token) && !key.includes(token.slice(0, 60)));
    }
  });
});

describe('file names', () => {
  test('non-ASCII file names download with an RFC 6266 / 5987 Content-Disposition', async () => {
    const { admin, org } = await newOrg(t);
    const space = await newSpace(admin, org.id, 'Files');
    const cr = await openChangeRequest(admin, space.id, 'Files');
    const names = ['☃.txt', '日本語.png', 'emoji-😀.pdf', 'café.txt', 'quote "and" back\\slash.txt', 'plain name.txt'];
    const files = names.map((name, i) => ({ name, contentType: 'application/octet-stream', base64: Buffer.from(`file ${i}`).toString('base64') }));
    await editChangeRequest(admin, space.id, cr.id, [{ operation: 'insert_files', files }]);
    const { data: listed } = await admin.api.spaces.listFilesInChangeRequestById(space.id, cr.id);
    assert.equal(listed.items.length, names.length);
    for (const [i, name] of names.entries()) {
      const file = listed.items.find((f) => f.name === name);
      assert.ok(file, `file ${name} listed`);
      const res = await fetch(file.downloadURL);
      assert.equal(res.status, 200, `${name}: ${await res.clone().text()}`);
      assert.equal(await res.text(), `file ${i}`);
      const disposition = res.headers.get('content-disposition') ?? '';
      const star = /filename\*=UTF-8''([^;]+)/.exec(disposition);
      assert.ok(star, `${name}: ${disposition}`);
      assert.equal(decodeURIComponent(star[1]!), name, 'filename* decodes to the name');
      const plain = /filename="((?:[^"\\]|\\.)*)"/.exec(disposition);
      assert.ok(plain, `${name}: an ASCII fallback: ${disposition}`);
      assert.match(plain[1]!, /^[\x20-\x7e]*$/, 'the fallback is printable ASCII');
      assert.ok(/^inline;/.test(disposition));
      if (name === 'café.txt') assert.equal(plain[1], 'cafe.txt', 'accents are dropped from the fallback');
    }
  });

  test("Fastify's own errors (an invalid header value, a malformed URL) answer in our shape with a request id", async () => {
    const app = await buildFolioApp(t.server.services, { logLevel: 'silent' });
    app.get('/bad-header', { config: { public: true } }, async (_req, reply) => reply.header('x-name', '☃').send('x'));
    try {
      const res = await app.inject({ method: 'GET', url: '/bad-header' });
      assert.equal(res.statusCode, 500);
      assert.deepEqual(res.json(), { error: { code: 500, message: 'Internal server error' } });
      assert.match(String(res.headers['x-request-id']), /^[0-9a-f-]{36}$/);
    } finally {
      await app.close();
    }
    const bad = await t.request('GET', '/v1/orgs/%E0%A4%A');
    assert.equal(bad.status, 400);
    assert.equal(bad.body.error.code, 400);
    assert.match(bad.headers.get('x-request-id') ?? '', /^[0-9a-f-]{36}$/);
  });
});

describe('API tokens: listing, expiry, revocation', () => {
  const me = async (token: string) => (await t.request('GET', '/v1/user', { token })).status;
  /** Waits until the request that answered `res` has written its last log line (its completion, written after the answer). */
  const logged = (res: { headers: Headers }) => {
    const reqId = res.headers.get('x-request-id');
    return eventually(() => logs.split('\n').some((line) => line.includes(`"reqId":"${reqId}"`) && line.includes('request completed')), { what: 'the request to be logged' });
  };

  test('a user lists, creates and revokes their own tokens; token values are shown once', async () => {
    const ann = await t.user('Ann');
    const created = await t.request('POST', '/v1/user/tokens', { token: ann.token, body: { name: 'CI' } });
    assert.equal(created.status, 201, JSON.stringify(created.body));
    assert.equal(created.body.object, 'api-token');
    assert.equal(created.body.name, 'CI');
    assert.match(created.body.token, /^folio_/);
    assert.equal(created.body.expiresAt, undefined);
    const ci = created.body.token as string;
    assert.equal(await me(ci), 200);

    const list = await t.request('GET', '/v1/user/tokens', { token: ci });
    assert.equal(list.status, 200);
    assert.equal(list.body.count, 2, 'the token from users create and the new one');
    const text = JSON.stringify(list.body);
    assert.ok(!text.includes(ci) && !text.includes(ann.token), 'listings never show token values');
    for (const item of list.body.items) assert.deepEqual(Object.keys(item).filter((k) => k === 'token' || k === 'hash'), []);
    assert.deepEqual(list.body.items.map((i: { name?: string; current: boolean }) => [i.name ?? null, i.current]), [['CI', true], [null, false]]);

    // Another user's token ids are not theirs to revoke: 204, and nothing happens.
    const bob = await t.user('Bob');
    const bobs = await t.request('GET', '/v1/user/tokens', { token: bob.token });
    assert.equal((await t.request('DELETE', `/v1/user/tokens/${bobs.body.items[0].id}`, { token: ann.token })).status, 204);
    assert.equal(await me(bob.token), 200);

    // Revocation is effective at once in this process, although the token was just cached.
    assert.equal(await me(ci), 200);
    assert.equal((await t.request('DELETE', `/v1/user/tokens/${created.body.id}`, { token: ann.token })).status, 204);
    const refused = await t.request('GET', '/v1/user', { token: ci });
    assert.equal(refused.status, 401);
    assert.match(refused.body.error.message, /revoked/);
    const after = await t.request('GET', '/v1/user/tokens', { token: ann.token });
    assert.deepEqual(after.body.items.map((i: { id: string }) => i.id), [list.body.items[1].id]);
  });

  test('expired tokens are refused, also when cached; a token cannot mint one that outlives it', async () => {
    const ann = await t.user('Ann');
    // An hour ahead: however slow the machine, the token is live until the clock is moved past it.
    const expiresAt = new Date(Date.now() + 3600_000).toISOString();
    const short = await t.request('POST', '/v1/user/tokens', { token: ann.token, body: { expiresAt } });
    assert.equal(short.status, 201, JSON.stringify(short.body));
    assert.equal(short.body.expiresAt, expiresAt);
    const token = short.body.token as string;
    assert.equal(await me(token), 200);

    const longer = await t.request('POST', '/v1/user/tokens', { token, body: { expiresAt: new Date(Date.now() + 86_400_000).toISOString() } });
    assert.equal(longer.status, 400);
    assert.match(longer.body.error.message, /expiry of the token making the request/);
    const inherited = await t.request('POST', '/v1/user/tokens', { token, body: {} });
    assert.equal(inherited.status, 201);
    assert.equal(inherited.body.expiresAt, expiresAt, 'a token made by an expiring token expires with it');

    t.clock.advance(3600_000 + 1000);
    assert.equal(await me(token), 401, 'expired');
    assert.equal(await me(inherited.body.token), 401, 'expired with its maker');
    assert.equal(await me(ann.token), 200);

    const past = await t.request('POST', '/v1/user/tokens', { token: ann.token, body: { expiresAt: '2001-01-01T00:00:00Z' } });
    assert.equal(past.status, 400);
    assert.match(past.body.error.message, /future/);
    const unknown = await t.request('POST', '/v1/user/tokens', { token: ann.token, body: { scope: 'admin' } });
    assert.equal(unknown.status, 400);
    assert.match(unknown.body.error.message, /unknown field "scope"/);
  });

  test('a revocation made by another process is honoured within AUTH_CACHE_TTL_MS', async () => {
    const ann = await t.user('Ann');
    const created = await t.request('POST', '/v1/user/tokens', { token: ann.token, body: { name: 'elsewhere' } });
    const token = created.body.token as string;
    assert.equal(await me(token), 200);
    // As `folio tokens revoke` does from another process: the database only, not this process's cache.
    assert.ok(await revokeApiToken(t.server.services.db, created.body.id));
    assert.equal(await me(token), 200, 'still trusted from the cache for up to AUTH_CACHE_TTL_MS (1 s here)');
    t.clock.advance(1100);
    assert.equal(await me(token), 401);
  });

  test('secrets in query parameters are redacted in logs', async () => {
    const u = await t.user();
    const secrets = ['api-key-secret-1', 'apikey-secret-2', 't-secret-3', 'token-secret-4'];
    await t.request('GET', `/v1/user?api_key=${secrets[0]}&apikey=${secrets[1]}&t=${secrets[2]}&token=${secrets[3]}&page=visible-page`, { token: u.token });
    await logged(await t.request('GET', `/v1/user?x=1&T=${secrets[2]}`, { token: u.token }));
    for (const secret of secrets) assert.ok(!logs.includes(secret), `${secret} in logs`);
    assert.ok(logs.includes('page=visible-page'), 'other parameters stay readable');
    assert.ok(logs.includes('api_key=[redacted]'));
  });

  test('real tokens never reach the logs, in headers or query strings, on success or error', async () => {
    const ann = await t.user('Ann');
    const created = await t.request('POST', '/v1/user/tokens', { token: ann.token, body: { name: 'logged?' } });
    assert.equal(created.status, 201);
    const minted = created.body.token as string;
    const tokens = [ann.token, minted];
    for (const token of tokens) {
      for (const name of ['token', 'api_key', 'apikey', 't', 'API_KEY']) {
        await t.request('GET', `/v1/user?${name}=${encodeURIComponent(token)}`, { token });
        await t.request('GET', `/v1/user?${name}=${encodeURIComponent(token)}`); // 401
        await t.request('GET', `/v1/nothing-here?x=1&${name}=${encodeURIComponent(token)}`, { token }); // 404
      }
      await t.request('POST', '/v1/orgs', { token, body: { title: 42 } }); // 400
      await t.request('GET', '/v1/user', { headers: { authorization: `Bearer ${token}`, cookie: `session=${token}` } });
      await t.request('GET', '/v1/user', { headers: { authorization: `token ${token}` } }); // not a bearer: 401
    }
    // A revoked token, and one the server has never seen, are not logged either.
    const revoke = await t.request('DELETE', `/v1/user/tokens/${created.body.id}`, { token: ann.token });
    assert.ok(revoke.status < 300, JSON.stringify(revoke.body));
    assert.equal(await me(minted), 401);
    const unknown = `folio_${randomBytes(24).toString('base64url')}`;
    const refusedUnknown = await t.request('GET', '/v1/user', { token: unknown });
    assert.equal(refusedUnknown.status, 401);
    await logged(refusedUnknown);
    assert.match(logs, /"url":"\/v1\/user\?token=\[redacted\]"/, 'the requests were logged');
    for (const token of [...tokens, unknown]) assert.ok(!logs.includes(token), 'a token in the logs');
  });

  test('tokens are stored only as hashes: no row of any table holds a token', async () => {
    const ann = await t.user('Ann');
    const created = await t.request('POST', '/v1/user/tokens', { token: ann.token, body: { name: 'stored?' } });
    assert.equal(created.status, 201);
    const db = t.server.services.db;
    const rows = await db.selectFrom('api_tokens').selectAll().where('user_id', '=', ann.id).execute();
    assert.equal(rows.length, 2);
    const hashes = [ann.token, created.body.token as string].map((tok) => createHash('sha256').update(tok).digest('hex'));
    assert.deepEqual(rows.map((r) => r.token_hash).sort(), [...hashes].sort(), 'the hash of each token, not the token');
    // Every table, every row as text: neither token appears anywhere in the database.
    const tables = await sql<{ name: string }>`
      SELECT table_name AS name FROM information_schema.tables
      WHERE table_schema = current_schema() AND table_type = 'BASE TABLE'`.execute(db);
    assert.ok(tables.rows.some((r) => r.name === 'api_tokens'));
    const holding = async (name: string, text: string) =>
      (await sql<{ n: number }>`SELECT count(*)::int AS n FROM ${sql.table(name)} AS r WHERE strpos(r::text, ${text}) > 0`.execute(db)).rows[0]!.n;
    assert.equal(await holding('api_tokens', hashes[0]!), 1, 'the scan finds what a row holds');
    for (const token of [ann.token, created.body.token as string]) {
      for (const { name } of tables.rows) assert.equal(await holding(name, token), 0, `a token in table ${name}`);
    }
  });
});
