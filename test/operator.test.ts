import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { startTestServer, type TestServer } from './support/server.ts';
import { settleJobs } from './support/wait.ts';

const ALLOWED = 'https://docs.example.com';
const METRICS_TOKEN = 'scrape-secret';

/** Defaults: CORS and metrics off. */
let plain: TestServer;
/** An operator's set-up: one allowed origin, metrics behind a token, a small body limit. */
let configured: TestServer;
/** Metrics without a token and a tiny rate limit: /metrics and the health checks must stay reachable. */
let limited: TestServer;

before(async () => {
  const started = await Promise.allSettled([
    startTestServer(),
    startTestServer({ corsOrigins: [ALLOWED, 'http://localhost:3000'], metrics: true, metricsToken: METRICS_TOKEN, bodyLimit: 2048 }),
    startTestServer({ metrics: true, rateLimitMax: 2 }),
  ]);
  // Servers that did start are kept for `after` to close, even when another failed to.
  [plain, configured, limited] = started.map((s) => (s.status === 'fulfilled' ? s.value : undefined!));
  const failed = started.find((s) => s.status === 'rejected');
  if (failed) throw failed.reason;
});
after(async () => {
  await Promise.all([plain?.close(), configured?.close(), limited?.close()]);
});

function assertErrorShape(res: { status: number; body: any; headers: Headers }, status: number): string {
  assert.equal(res.status, status, JSON.stringify(res.body));
  assert.equal(res.body.error.code, status);
  assert.equal(typeof res.body.error.message, 'string');
  assert.match(res.headers.get('x-request-id') ?? '', /^[0-9a-f-]{36}$/);
  return res.body.error.message;
}

async function scrape(server: TestServer, token?: string): Promise<string> {
  const res = await server.request('GET', '/metrics', token ? { headers: { authorization: `Bearer ${token}` } } : {});
  assert.equal(res.status, 200, String(res.body));
  assert.match(res.headers.get('content-type') ?? '', /^text\/plain/);
  return res.body as string;
}

/** The value of one sample, e.g. `folio_jobs{type="x",status="queued"}`; undefined when absent. */
function sample(text: string, name: string, labels: Record<string, string> = {}): number | undefined {
  for (const line of text.split('\n')) {
    if (!line.startsWith(`${name}{`) && !line.startsWith(`${name} `)) continue;
    const labelText = line.slice(name.length).match(/^\{(.*)\}/)?.[1] ?? '';
    if (Object.entries(labels).every(([k, v]) => labelText.includes(`${k}="${v}"`))) return Number(line.split(' ').at(-1));
  }
  return undefined;
}

describe('the API reference', () => {
  test('every operation of /v1/openapi.json has a summary and a description', async () => {
    const res = await plain.request('GET', '/v1/openapi.json');
    assert.equal(res.status, 200);
    const missing: string[] = [];
    let count = 0;
    for (const [path, ops] of Object.entries<Record<string, any>>(res.body.paths)) {
      for (const [method, op] of Object.entries(ops)) {
        count++;
        const name = `${method.toUpperCase()} ${path} (${op.operationId ?? 'no operationId'})`;
        if (typeof op.summary !== 'string' || op.summary.trim() === '') missing.push(`${name}: summary`);
        if (typeof op.description !== 'string' || op.description.trim() === '') missing.push(`${name}: description`);
      }
    }
    assert.ok(count > 100, `only ${count} operations`);
    assert.deepEqual(missing, []);
  });

  test('the table fills routes without an operationId by method and path, and never overrides a route\'s own words', async () => {
    const { applyOperationDocs } = await import('../src/platform/operation-docs.ts');
    const root = { method: 'GET', url: '/', handler: () => {} } as Parameters<typeof applyOperationDocs>[0];
    applyOperationDocs(root);
    assert.equal((root.schema as { summary?: string }).summary, 'About this server');
    const own = { method: 'GET', url: '/x', schema: { operationId: 'getSpaceById', summary: 'Mine' }, handler: () => {} } as Parameters<typeof applyOperationDocs>[0];
    applyOperationDocs(own);
    assert.equal((own.schema as { summary?: string }).summary, 'Mine');
    assert.match((own.schema as { description?: string }).description ?? '', /space/);
  });

  test('the health and readiness checks are documented and need no token', async () => {
    const res = await plain.request('GET', '/v1/openapi.json');
    for (const path of ['/healthz', '/readyz']) {
      const op = res.body.paths[path]?.get;
      assert.ok(op, `${path} in the document`);
      assert.deepEqual(op.security, []);
    }
    assert.equal((await plain.request('GET', '/healthz')).status, 200);
    assert.equal((await plain.request('GET', '/readyz')).status, 200);
  });
});

describe('errors say what to fix', () => {
  test('415 names the expected content type and the one sent', async () => {
    const u = await plain.user();
    const res = await plain.request('POST', '/v1/orgs', { token: u.token, raw: 'title=x', headers: { 'content-type': 'application/x-www-form-urlencoded' } });
    const message = assertErrorShape(res, 415);
    assert.match(message, /application\/x-www-form-urlencoded/);
    assert.match(message, /Content-Type: application\/json/);
  });

  test('a JSON body sent as text/plain is told to send Content-Type: application/json', async () => {
    const u = await plain.user();
    const res = await plain.request('POST', '/v1/orgs', { token: u.token, raw: '{"title":"Acme"}', headers: { 'content-type': 'text/plain;charset=UTF-8' } });
    const message = assertErrorShape(res, 415);
    assert.match(message, /text\/plain/);
    assert.match(message, /looks like JSON/);
    assert.match(message, /send Content-Type: application\/json/);
    const other = await plain.request('POST', '/v1/orgs', { token: u.token, raw: 'hello', headers: { 'content-type': 'text/plain' } });
    assert.match(assertErrorShape(other, 415), /Content-Type: application\/json/);
  });

  test('413 names the limit in bytes and the setting that raises it', async () => {
    const u = await configured.user();
    const res = await configured.request('POST', '/v1/orgs', { token: u.token, body: { title: 'x'.repeat(5000) } });
    const message = assertErrorShape(res, 413);
    assert.match(message, /2048 bytes/);
    assert.match(message, /BODY_LIMIT/);
  });
});

describe('CORS', () => {
  test('off by default: no CORS headers, and OPTIONS is an unknown route', async () => {
    const res = await plain.request('GET', '/healthz', { headers: { origin: ALLOWED } });
    assert.equal(res.headers.get('access-control-allow-origin'), null);
    const preflight = await plain.request('OPTIONS', '/v1/user', { headers: { origin: ALLOWED, 'access-control-request-method': 'GET' } });
    assertErrorShape(preflight, 404);
    assert.equal(preflight.headers.get('access-control-allow-origin'), null);
  });

  test('a preflight from an allowed origin is answered without a token and never counted', async () => {
    const res = await configured.request('OPTIONS', '/v1/orgs', {
      headers: { origin: ALLOWED, 'access-control-request-method': 'POST', 'access-control-request-headers': 'authorization,content-type' },
    });
    assert.equal(res.status, 204);
    assert.equal(res.headers.get('access-control-allow-origin'), ALLOWED);
    const methods = res.headers.get('access-control-allow-methods') ?? '';
    for (const m of ['GET', 'POST', 'PUT', 'PATCH', 'DELETE']) assert.ok(methods.includes(m), methods);
    const headers = (res.headers.get('access-control-allow-headers') ?? '').toLowerCase();
    assert.ok(headers.includes('authorization') && headers.includes('content-type'), headers);
    assert.equal(res.headers.get('access-control-max-age'), '600');
    assert.equal(res.headers.get('x-ratelimit-limit'), null, 'a preflight is not rate-limited');
    assert.match(res.headers.get('vary') ?? '', /Origin/i);
  });

  test('answers, errors included, let the browser read the request id and rate-limit headers', async () => {
    const u = await configured.user();
    const ok = await configured.request('GET', '/v1/user', { token: u.token, headers: { origin: ALLOWED } });
    assert.equal(ok.status, 200);
    assert.equal(ok.headers.get('access-control-allow-origin'), ALLOWED);
    const exposed = (ok.headers.get('access-control-expose-headers') ?? '').toLowerCase();
    for (const h of ['x-request-id', 'x-ratelimit-limit', 'x-ratelimit-remaining', 'x-ratelimit-reset', 'retry-after']) assert.ok(exposed.includes(h), exposed);
    const denied = await configured.request('GET', '/v1/user', { headers: { origin: 'http://localhost:3000' } });
    assertErrorShape(denied, 401);
    assert.equal(denied.headers.get('access-control-allow-origin'), 'http://localhost:3000');
  });

  test('another origin gets no Access-Control-Allow-Origin', async () => {
    const res = await configured.request('OPTIONS', '/v1/orgs', { headers: { origin: 'https://evil.example', 'access-control-request-method': 'POST' } });
    assert.equal(res.headers.get('access-control-allow-origin'), null);
    const get = await configured.request('GET', '/healthz', { headers: { origin: 'https://evil.example' } });
    assert.equal(get.headers.get('access-control-allow-origin'), null);
  });

  test('CORS_ORIGINS accepts * and origins, and refuses a URL with a path', async () => {
    const { loadConfig } = await import('../src/platform/config.ts');
    assert.deepEqual(loadConfig({}).corsOrigins, []);
    assert.deepEqual(loadConfig({ CORS_ORIGINS: '*' }).corsOrigins, ['*']);
    assert.deepEqual(loadConfig({ CORS_ORIGINS: 'https://a.example, http://localhost:3000/' }).corsOrigins, ['https://a.example', 'http://localhost:3000']);
    assert.throws(() => loadConfig({ CORS_ORIGINS: 'https://a.example/app' }), /CORS_ORIGINS/);
  });
});

describe('metrics', () => {
  test('off by default', async () => {
    assertErrorShape(await plain.request('GET', '/metrics'), 404);
  });

  test('with METRICS_TOKEN, /metrics wants that bearer token (an API token is not enough)', async () => {
    assert.match(assertErrorShape(await configured.request('GET', '/metrics'), 401), /METRICS_TOKEN/);
    const u = await configured.user();
    assertErrorShape(await configured.request('GET', '/metrics', { token: u.token }), 401);
    await scrape(configured, METRICS_TOKEN);
  });

  test('requests are counted and timed by route pattern and status class, never by URL', async () => {
    const u = await configured.user();
    const org = await configured.request('POST', '/v1/orgs', { token: u.token, body: { title: 'Metrics' } });
    assert.equal(org.status, 201);
    for (let i = 0; i < 3; i++) assert.equal((await configured.request('GET', `/v1/orgs/${org.body.id}`, { token: u.token })).status, 200);
    await configured.request('GET', '/v1/orgs/no-such-org', { token: u.token });
    await configured.request('GET', `/v1/not-a-route/${'x'.repeat(20)}`, { token: u.token });
    const text = await scrape(configured, METRICS_TOKEN);
    const route = { method: 'GET', route: '/v1/orgs/:organizationId' };
    assert.ok((sample(text, 'folio_http_requests_total', { ...route, status_class: '2xx' }) ?? 0) >= 3, text);
    assert.ok((sample(text, 'folio_http_requests_total', { ...route, status_class: '4xx' }) ?? 0) >= 1);
    assert.ok((sample(text, 'folio_http_request_duration_seconds_count', { ...route, status_class: '2xx' }) ?? 0) >= 3);
    assert.ok(sample(text, 'folio_http_request_duration_seconds_bucket', { ...route, status_class: '2xx', le: '+Inf' }) !== undefined);
    assert.ok((sample(text, 'folio_http_requests_total', { route: 'unmatched', status_class: '4xx' }) ?? 0) >= 1);
    assert.ok(!text.includes(org.body.id), 'no id of a URL in the labels');
    assert.ok(!text.includes('no-such-org') && !text.includes('not-a-route'));
    assert.ok(sample(text, 'process_cpu_seconds_total') !== undefined, 'process metrics');
  });

  test('job queue depth and failures', async () => {
    const { jobs } = configured.server.services;
    jobs.register('operator-test-fails', async () => {
      throw new Error('always fails');
    }, { maxAttempts: 1 });
    await jobs.enqueue('operator-test-later', {}, { runAt: new Date(Date.now() + 3600_000) });
    await jobs.enqueue('operator-test-fails', {});
    await settleJobs(configured);
    const text = await scrape(configured, METRICS_TOKEN);
    assert.equal(sample(text, 'folio_job_failures_total', { type: 'operator-test-fails', outcome: 'failed' }), 1, text);
    assert.equal(sample(text, 'folio_jobs', { type: 'operator-test-later', status: 'queued' }), 1);
    assert.equal(sample(text, 'folio_jobs', { type: 'operator-test-fails' }), undefined, 'a failed job has left the queue');
    assert.equal(typeof sample(text, 'folio_jobs_due'), 'number');
    assert.equal(typeof sample(text, 'folio_jobs_oldest_due_age_seconds'), 'number');
  });

  test('database pool on PostgreSQL; PGlite has none', async () => {
    const text = await scrape(configured, METRICS_TOKEN);
    if (process.env.TEST_DATABASE_URL) {
      assert.equal(sample(text, 'folio_database_info', { engine: 'postgres' }), 1);
      const total = sample(text, 'folio_db_pool_connections', { state: 'total' });
      assert.ok(total !== undefined && total >= 1, text);
      assert.equal(typeof sample(text, 'folio_db_pool_connections', { state: 'idle' }), 'number');
      assert.equal(typeof sample(text, 'folio_db_pool_connections', { state: 'waiting' }), 'number');
    } else {
      assert.equal(sample(text, 'folio_database_info', { engine: 'pglite' }), 1);
      assert.equal(sample(text, 'folio_db_pool_connections'), undefined);
    }
  });

  test('/metrics and the health checks are never rate-limited', async () => {
    for (let i = 0; i < 6; i++) {
      const res = await limited.request('GET', '/metrics');
      assert.equal(res.status, 200);
      assert.equal(res.headers.get('x-ratelimit-limit'), null);
      assert.equal((await limited.request('GET', '/healthz')).status, 200);
      assert.equal((await limited.request('GET', '/readyz')).status, 200);
    }
    const statuses = [];
    for (let i = 0; i < 3; i++) statuses.push((await limited.request('GET', '/v1/user')).status);
    assert.deepEqual(statuses, [401, 401, 429], 'the API itself is limited');
  });
});
