import assert from 'node:assert/strict';
import { createHmac } from 'node:crypto';
import { createServer, type IncomingMessage } from 'node:http';
import { after, before, describe, test } from 'node:test';
import { bundleIntegration, eventsUntil } from './support/integrations.ts';
import { integrationSigningSecret } from '../src/integrations/secrets.ts';
import { runInSandbox } from '../src/integrations/sandbox.ts';
import { startTestServer, type TestServer, type TestUser } from './support/server.ts';

let t: TestServer;
let script: string;
before(async () => {
  t = await startTestServer({ integrationRetryBaseMs: 50, integrationTimeoutMs: 8000 });
  script = await bundleIntegration('integration');
});
after(async () => {
  await t?.close();
});

type Change = Parameters<TestUser['api']['spaces']['updateChangeRequestContent']>[2]['changes'][number];

async function mergeSomething(user: TestUser, spaceId: string, title: string) {
  const { data: cr } = await user.api.spaces.createChangeRequest(spaceId, { subject: title });
  await user.api.spaces.updateChangeRequestContent(spaceId, cr.id, { changes: [{ operation: 'insert_page', title, document: { markdown: `${title}\n` } } as Change] });
  return (await user.api.spaces.mergeChangeRequest(spaceId, cr.id)).data;
}

/** Publishes through the official client (the body is written as JSON, with plain strings for its enums). */
const publish = (user: TestUser, name: string, body: Record<string, unknown>) => user.api.integrations.publishIntegration(name, body as never);

describe('integration scripts', () => {
  test('a @gitbook/runtime integration runs in workerd, calls Folio back with its installation token, logs into the trace', async () => {
    const ann = await t.user('Ann');
    const { data: org } = await ann.api.orgs.createOrganization({ title: 'Runners' });
    const { data: space } = await ann.api.orgs.createSpace(org.id, { title: 'Docs' });
    const name = `runner-${Date.now().toString(36)}`;
    await publish(ann, name, { title: 'Runner', organization: org.id, scopes: ['space:content:write'], script, secrets: { GREETING: 'Hello' } });
    const { data: inst } = await ann.api.integrations.installIntegration(name, { organization: org.id });
    await ann.api.integrations.installIntegrationOnSpace(name, inst.id, { space: space.id });
    const merged = await mergeSomething(ann, space.id, 'First page');
    const events = await eventsUntil(ann, name, (items) => items.some((e) => e.payload.type === 'space_content_updated'));
    const types = events.map((e) => e.payload.type).reverse();
    assert.deepEqual(types, ['installation_setup', 'space_installation_setup', 'space_content_updated']);
    const updated = events.find((e) => e.payload.type === 'space_content_updated')!;
    assert.equal(updated.status, 'success');
    assert.equal((updated.payload as unknown as { revisionId: string }).revisionId, merged.revision);
    const { data: detail } = await ann.api.integrations.getIntegrationEvent(name, updated.id);
    const messages = detail.trace!.logs.map((l) => l.message).join('\n');
    assert.match(messages, new RegExp(`space ${space.id} now at revision ${merged.revision}`));
    assert.match(messages, /comment posted/);
    assert.ok(detail.trace!.logs.some((l) => l.level === 'warn'));
    const { data: comments } = await ann.api.spaces.listCommentsInSpace(space.id);
    const posted = comments.items.find((c) => JSON.stringify(c.body).includes(`Hello: merged revision ${merged.revision}`));
    assert.ok(posted, 'the script posted its comment');
    assert.equal(posted.postedBy.displayName, 'Runner');
    // The public endpoint forwards to the script's fetch handler (no token needed).
    const endpoint = (await ann.api.integrations.getIntegrationInstallationById(name, inst.id)).data.urls.publicEndpoint;
    const res = await fetch(`${endpoint}?q=1`);
    assert.equal(res.status, 200);
    assert.equal(await res.text(), `hello from ${new URL(endpoint).pathname}`);
    const fetched = (await ann.api.integrations.listIntegrationEvents(name)).data.items.find((e) => e.payload.type === 'fetch');
    assert.equal(fetched?.status, 'success');
    const missing = await fetch(endpoint.replace(inst.id, 'nope'));
    assert.equal(missing.status, 404);
  });

  test('public endpoints of the integration and of its installations take every method and path below them, as a runtime router expects', async () => {
    const ann = await t.user('Ann');
    const { data: org } = await ann.api.orgs.createOrganization({ title: 'Endpoints' });
    const name = `endpoint-${Date.now().toString(36)}`;
    const { data: integration } = await publish(ann, name, { title: 'Endpoint', organization: org.id, script: await bundleIntegration('public-endpoint') });
    const { data: inst } = await ann.api.integrations.installIntegration(name, { organization: org.id });
    const own = integration.urls.publicEndpoint;
    const installation = inst.urls.publicEndpoint;
    const call = async (url: string, init: RequestInit = {}) => {
      const res = await fetch(url, { redirect: 'manual', ...init });
      const text = await res.text();
      return { status: res.status, headers: res.headers, text, json: () => JSON.parse(text) };
    };

    // The integration's own endpoint (no installation in the environment).
    const root = await call(own);
    assert.equal(root.status, 200, root.text);
    assert.deepEqual(root.json(), { method: 'GET', route: '/', query: '', contentType: null, body: '', installation: null, integration: name });
    const recorded = (await ann.api.integrations.listIntegrationEvents(name)).data.items.filter((e) => e.payload.type === 'fetch');
    assert.equal(recorded.length, 1);
    assert.equal(recorded[0]!.status, 'success');
    assert.equal(recorded[0]!.installationId, undefined);

    // An OAuth callback below it: path and query reach the script; its redirect comes back (not its cookie).
    const callback = await call(`${own}/oauth/callback?code=abc%20123&state=${encodeURIComponent(JSON.stringify({ installationId: inst.id }))}`);
    assert.equal(callback.status, 302, callback.text);
    assert.equal(callback.headers.get('location'), 'https://app.example.com/done?code=abc 123');
    assert.equal(callback.headers.get('set-cookie'), null);
    assert.match(callback.headers.get('content-security-policy') ?? '', /^sandbox\b/);

    // Below an installation's endpoint, with every method; bodies of any type arrive byte for byte.
    const hook = `${installation}/webhooks/github?delivery=7&x=a%2Fb`;
    const json = '{"action":  "opened", "n": 1}';
    const posted = await call(hook, { method: 'POST', headers: { 'content-type': 'application/json' }, body: json });
    assert.equal(posted.status, 200, posted.text);
    assert.deepEqual(posted.json(), { method: 'POST', route: '/webhooks/github', query: '?delivery=7&x=a%2Fb', contentType: 'application/json', body: json, installation: inst.id, integration: name });
    const form = await call(`${installation}/slack/commands`, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: 'command=%2Fdocs&text=hello' });
    assert.equal(form.status, 200, form.text);
    assert.deepEqual([form.json().route, form.json().body, form.json().contentType], ['/slack/commands', 'command=%2Fdocs&text=hello', 'application/x-www-form-urlencoded']);
    for (const method of ['PUT', 'PATCH', 'DELETE', 'OPTIONS']) {
      const res = await call(`${installation}/items/42?v=1`, { method, headers: { 'content-type': 'text/plain' }, ...(method === 'OPTIONS' ? {} : { body: `${method} body` }) });
      assert.equal(res.status, 200, `${method}: ${res.text}`);
      assert.deepEqual([res.json().method, res.json().route, res.json().query, res.json().body], [method, '/items/42', '?v=1', method === 'OPTIONS' ? '' : `${method} body`]);
    }
    const head = await call(`${installation}/items/42`, { method: 'HEAD' });
    assert.equal(head.status, 200);
    assert.equal(head.text, '');
    // The script's own status passes through.
    assert.equal((await call(`${installation}/missing`)).status, 404);

    // Unknown integrations and installations are 404s, below the endpoint too.
    assert.equal((await call(own.replace(name, `${name}-nope`))).status, 404);
    assert.equal((await call(`${own.replace(name, `${name}-nope`)}/oauth/callback?code=1`)).status, 404);
    assert.equal((await call(`${installation.replace(inst.id, 'nope')}/webhooks/github`, { method: 'POST', body: '{}' })).status, 404);
  });

  test('a crashing or endless script is recorded as failed after retries and does not block the API', async () => {
    const ann = await t.user('Ann');
    const { data: org } = await ann.api.orgs.createOrganization({ title: 'Crashers' });
    const name = `crash-${Date.now().toString(36)}`;
    t.server.services.config.integrationTimeoutMs = 1500;
    t.server.services.config.integrationMaxAttempts = 3;
    try {
      await publish(ann, name, {
        title: 'Crash',
        organization: org.id,
        script: 'export default { async fetch() { console.log("spinning"); while (true) {} } };',
      });
      const started = Date.now();
      await ann.api.integrations.installIntegration(name, { organization: org.id });
      // The API answers while the script spins.
      for (let i = 0; i < 5; i++) await ann.api.user.getAuthenticatedUser();
      assert.ok(Date.now() - started < 1500, 'the API answered while the script ran');
      const events = await eventsUntil(ann, name, (items) => items.length === 1, 60_000);
      assert.equal(events[0]!.status, 'failed');
      const { data: detail } = await ann.api.integrations.getIntegrationEvent(name, events[0]!.id!);
      const attempts = new Set(detail.trace!.logs.map((l) => /^\[attempt (\d+)\]/.exec(l.message ?? "")?.[1]));
      assert.equal(attempts.size, t.server.services.config.integrationMaxAttempts);
      assert.match(detail.trace!.logs.map((l) => l.message).join('\n'), /did not answer within 1500 ms/);
    } finally {
      t.server.services.config.integrationTimeoutMs = 8000;
      t.server.services.config.integrationMaxAttempts = 5;
    }
  });

  test('a script past INTEGRATION_MEMORY_MB is stopped and says so; other integrations keep their runtime', async () => {
    const ann = await t.user('Ann');
    const { data: org } = await ann.api.orgs.createOrganization({ title: 'Hogs' });
    const stamp = Date.now().toString(36);
    const calm = `calm-${stamp}`;
    const hog = `hog-${stamp}`;
    const { config } = t.server.services;
    const saved = { memory: config.integrationMemoryMb, attempts: config.integrationMaxAttempts };
    config.integrationMemoryMb = 48;
    config.integrationMaxAttempts = 2;
    try {
      // Counts the events its runtime has handled: a restarted runtime would count from 1 again.
      await publish(ann, calm, { title: 'Calm', organization: org.id, script: 'let handled = 0; export default { async fetch() { handled++; return new Response(`handled ${handled}`); } };' });
      // Keeps 512 MB reachable (strings and filled array buffers), then answers: without a
      // memory limit its event would succeed.
      await publish(ann, hog, {
        title: 'Hog',
        organization: org.id,
        script: `const kept = [];
export default { async fetch() {
  for (let i = 0; i < 512; i++) {
    if (i % 2) { const strings = []; for (let j = 0; j < 2048; j++) strings.push(('#' + i + '.' + j).repeat(60)); kept.push(strings); }
    else { const bytes = new Uint8Array(1 << 20); bytes.fill(i); kept.push(bytes); }
  }
  return new Response('kept ' + kept.length);
} };`,
      });
      const { data: calmInst } = await ann.api.integrations.installIntegration(calm, { organization: org.id });
      await eventsUntil(ann, calm, (items) => items.length === 1 && items[0]!.status === 'success');

      const started = Date.now();
      await ann.api.integrations.installIntegration(hog, { organization: org.id });
      for (let i = 0; i < 5; i++) await ann.api.user.getAuthenticatedUser();
      assert.ok(Date.now() - started < 1500, 'the API answered while the script allocated');
      const events = await eventsUntil(ann, hog, (items) => items.length === 1 && items[0]!.status !== 'pending');
      assert.equal(events[0]!.status, 'failed');
      const { data: detail } = await ann.api.integrations.getIntegrationEvent(hog, events[0]!.id);
      const stopped = detail.trace!.logs.filter((l) => /^\[attempt \d+\] The script used more than 48 MB of memory; it was stopped$/.test(l.message ?? ''));
      // Every attempt ran in a fresh runtime and was stopped for its memory again.
      assert.equal(stopped.length, 2, JSON.stringify(detail.trace!.logs));

      // The other integration's runtime was not touched: same process, its count goes on.
      const endpoint = (await ann.api.integrations.getIntegrationInstallationById(calm, calmInst.id)).data.urls.publicEndpoint;
      const res = await fetch(endpoint);
      assert.equal(res.status, 200);
      assert.equal(await res.text(), 'handled 2');
    } finally {
      config.integrationMemoryMb = saved.memory;
      config.integrationMaxAttempts = saved.attempts;
    }
  });

  test('a script past INTEGRATION_CPU_MS is stopped; time spent waiting is not CPU time', async () => {
    const ann = await t.user('Ann');
    const { data: org } = await ann.api.orgs.createOrganization({ title: 'Spinners' });
    const config = t.server.services.config;
    const saved = { cpu: config.integrationCpuMs, attempts: config.integrationMaxAttempts, timeout: config.integrationTimeoutMs };
    config.integrationCpuMs = 300;
    config.integrationMaxAttempts = 1;
    config.integrationTimeoutMs = 8000;
    try {
      const spinner = `spin-${Date.now().toString(36)}`;
      const waiter = `wait-${Date.now().toString(36)}`;
      await publish(ann, spinner, { title: 'Spinner', organization: org.id, script: 'export default { async fetch() { const end = Date.now() + 6000; while (Date.now() < end) {} return new Response("done"); } };' });
      // Waits 1.2 s, four times its CPU limit, on a timer: no CPU spent, so it answers.
      await publish(ann, waiter, { title: 'Waiter', organization: org.id, script: 'export default { async fetch() { await new Promise((r) => setTimeout(r, 1200)); return new Response("waited"); } };' });
      await ann.api.integrations.installIntegration(spinner, { organization: org.id });
      await ann.api.integrations.installIntegration(waiter, { organization: org.id });
      const spun = await eventsUntil(ann, spinner, (items) => items.length === 1 && items[0]!.status !== 'pending');
      assert.equal(spun[0]!.status, 'failed');
      // Stopped by its CPU time (not by the 8 s time limit, whose message differs). No wall-clock
      // bound here: on a loaded machine installing and starting workerd alone can take seconds.
      const { data: detail } = await ann.api.integrations.getIntegrationEvent(spinner, spun[0]!.id);
      assert.match(detail.trace!.logs.map((l) => l.message).join('\n'), /The script used more than 300 ms of CPU time; it was stopped/);
      const waited = await eventsUntil(ann, waiter, (items) => items.length === 1 && items[0]!.status !== 'pending');
      assert.equal(waited[0]!.status, 'success');
    } finally {
      config.integrationCpuMs = saved.cpu;
      config.integrationMaxAttempts = saved.attempts;
      config.integrationTimeoutMs = saved.timeout;
    }
  });

  test('concurrent first dispatches to a script share one runtime', async () => {
    // Counts what its runtime has handled: two runtimes would both answer "handled 1".
    const counting = 'let handled = 0; export default { async fetch() { handled++; return new Response(`handled ${handled}`); } };';
    const limits = { timeoutMs: 8000, subrequests: 0, memoryMb: 128, cpuMs: 5000 };
    const request = { body: new Uint8Array(), contentType: 'text/plain' };
    const refuse = async () => new Response('no', { status: 403 });
    const key = `crowd-${Date.now().toString(36)}`;
    // Three dispatches in the same tick, before any runtime for the key exists.
    const answers = await Promise.all([1, 2, 3].map(() => runInSandbox(key, counting, request, limits, refuse)));
    assert.deepEqual(answers.map((a) => a.body).sort(), ['handled 1', 'handled 2', 'handled 3']);
  });

  test('development mode sends signed events to the tunnel; private addresses only with FETCH_ALLOW_PRIVATE', async () => {
    const received: { body: Buffer; signature: string; event: { eventId: string; type: string } }[] = [];
    const tunnel = createServer(async (req: IncomingMessage, res) => {
      const chunks: Buffer[] = [];
      for await (const c of req) chunks.push(c as Buffer);
      const body = Buffer.concat(chunks);
      const form = await new Request('http://x', { method: 'POST', body, headers: { 'content-type': req.headers['content-type']! } }).formData();
      received.push({ body, signature: String(req.headers['x-folio-signature']), event: JSON.parse(String(form.get('event'))) });
      res.end('ok');
    });
    await new Promise<void>((r) => tunnel.listen(0, '127.0.0.1', r));
    const port = (tunnel.address() as { port: number }).port;
    try {
      const ann = await t.user('Ann');
      const { data: org } = await ann.api.orgs.createOrganization({ title: 'Devs' });
      const { data: space } = await ann.api.orgs.createSpace(org.id, { title: 'Docs' });
      const name = `dev-${Date.now().toString(36)}`;
      await publish(ann, name, { title: 'Dev', organization: org.id, scopes: ['space:content:read'] });
      await ann.api.integrations.setIntegrationDevelopmentMode(name, { tunnelUrl: `http://127.0.0.1:${port}/events` });
      // Loopback is private: refused by default.
      const { data: inst } = await ann.api.integrations.installIntegration(name, { organization: org.id });
      const refused = await eventsUntil(ann, name, (items) => items.length === 1 && items[0]!.status === 'failed');
      const { data: trace } = await ann.api.integrations.getIntegrationEvent(name, refused[0]!.id);
      assert.match(trace.trace!.logs.map((l) => l.message).join('\n'), /private address/);
      assert.equal(received.length, 0);
      t.server.services.config.fetchAllowPrivate = true;
      try {
        await ann.api.integrations.updateIntegrationInstallation(name, inst.id, { space_selection: 'all' } as never);
        await mergeSomething(ann, space.id, 'Page');
        await eventsUntil(ann, name, (items) => items.filter((e) => e.status === 'success').length === 2);
      } finally {
        t.server.services.config.fetchAllowPrivate = false;
      }
      assert.deepEqual(received.map((r) => r.event.type), ['installation_setup', 'space_content_updated']);
      const row = await t.server.services.db.selectFrom('integrations').select('id').where('name', '=', name).executeTakeFirstOrThrow();
      const secret = integrationSigningSecret(t.server.services.signingKey, row.id);
      for (const r of received) {
        const [, ts, mac] = /^t=(\d+),v1=([0-9a-f]{64})$/.exec(r.signature)!;
        assert.equal(mac, createHmac('sha256', secret).update(`${ts}.`).update(r.body).digest('hex'));
        assert.ok(Math.abs(Number(ts) - Date.now() / 1000) < 60);
      }
      assert.equal(new Set(received.map((r) => r.event.eventId)).size, received.length);
      await ann.api.integrations.disableIntegrationDevelopmentMode(name);
      const after = await t.server.services.db.selectFrom('integrations').select('dev_tunnel_url').where('id', '=', row.id).executeTakeFirstOrThrow();
      assert.equal(after.dev_tunnel_url, null);
    } finally {
      tunnel.close();
    }
  });
});
