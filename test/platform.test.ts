import assert from 'node:assert/strict';
import { PassThrough } from 'node:stream';
import { after, before, describe, test } from 'node:test';
import { jwtVerify } from 'jose';
import { checkResponse, SchemaMismatchError } from './support/official-schema.ts';
import { startTestServer, type TestServer } from './support/server.ts';
import { eventually } from './support/wait.ts';

let t: TestServer;
let logs = '';
before(async () => {
  const stream = new PassThrough();
  stream.on('data', (chunk) => (logs += chunk.toString()));
  t = await startTestServer({ logLevel: 'info', bodyLimit: 4096 }, { logStream: stream });
});
after(async () => {
  await t?.close();
});

describe('HTTP conventions', () => {
  test('missing or unknown tokens answer 401 with the error shape', async () => {
    let res = await t.request('GET', '/v1/user');
    assert.equal(res.status, 401);
    assert.equal(res.body.error.code, 401);
    assert.match(res.body.error.message, /Bearer/);
    res = await t.request('GET', '/v1/user', { token: 'folio_not-a-real-token' });
    assert.equal(res.status, 401);
    res = await t.request('GET', '/v1/user', { headers: { authorization: 'Basic abc' } });
    assert.equal(res.status, 401);
  });

  test('malformed JSON is 400, too large a body 413, unknown route 404, wrong content type 415', async () => {
    const u = await t.user();
    let res = await t.request('POST', '/v1/orgs', { token: u.token, raw: '{"title": "x' });
    assert.equal(res.status, 400);
    assert.match(res.body.error.message, /JSON/);
    res = await t.request('POST', '/v1/orgs', { token: u.token, body: { title: 'x'.repeat(5000) } });
    assert.equal(res.status, 413);
    assert.equal(res.body.error.code, 413);
    res = await t.request('GET', '/v1/nothing-here', { token: u.token });
    assert.equal(res.status, 404);
    assert.equal(res.body.error.code, 404);
    res = await t.request('POST', '/v1/orgs', { token: u.token, raw: 'title=x', headers: { 'content-type': 'application/x-www-form-urlencoded' } });
    assert.equal(res.status, 415);
    assert.equal(res.body.error.code, 415);
  });

  test('schema violations are 400 and name the field', async () => {
    const u = await t.user();
    let res = await t.request('POST', '/v1/orgs', { token: u.token, body: { title: 42 } });
    assert.equal(res.status, 400);
    assert.match(res.body.error.message, /title/);
    res = await t.request('POST', '/v1/orgs', { token: u.token, body: {} });
    assert.equal(res.status, 400);
    assert.match(res.body.error.message, /title/);
    res = await t.request('POST', '/v1/orgs', { token: u.token });
    assert.equal(res.status, 400);
  });

  test('every response carries a request id and rate-limit headers', async () => {
    const u = await t.user();
    const res = await t.request('GET', '/v1/user', { token: u.token });
    assert.equal(res.status, 200);
    assert.match(res.headers.get('x-request-id') ?? '', /^[0-9a-f-]{36}$/);
    assert.equal(res.headers.get('x-ratelimit-limit'), '100000');
    assert.ok(Number(res.headers.get('x-ratelimit-remaining')) < 100000);
    assert.ok(res.headers.get('x-ratelimit-reset'));
    const missing = await t.request('GET', '/v1/nothing-here', { token: u.token });
    assert.ok(missing.headers.get('x-ratelimit-limit'));
  });

  test('tokens and credentials in URLs never reach the logs', async () => {
    const u = await t.user();
    await t.request('GET', '/v1/user?token=sekrit-value&x=1', { token: u.token });
    const last = await t.request('GET', '/v1/users/someone?url=https://bob:hunter2@example.com/repo.git', { token: u.token });
    // The last line a request logs is its completion, which may be written after the answer arrives.
    const reqId = last.headers.get('x-request-id');
    await eventually(() => logs.split('\n').some((line) => line.includes(`"reqId":"${reqId}"`) && line.includes('request completed')), { what: 'the request to be logged' });
    assert.ok(logs.includes('"reqId"'), 'structured logs with request ids');
    assert.ok(!logs.includes(u.token), 'token in logs');
    assert.ok(!logs.includes('sekrit-value'), 'token query parameter in logs');
    assert.ok(!logs.includes('hunter2'), 'credentials of a URL in logs');
    assert.ok(logs.includes('[redacted]'));
  });

  test('health, readiness, OpenAPI document and API reference', async () => {
    assert.equal((await t.request('GET', '/healthz')).status, 200);
    assert.equal((await t.request('GET', '/readyz')).status, 200);
    const doc = await t.request('GET', '/v1/openapi.json');
    assert.equal(doc.status, 200);
    assert.equal(doc.body.openapi, '3.1.0');
    const operationIds = Object.values<Record<string, { operationId?: string }>>(doc.body.paths).flatMap((ops) =>
      Object.values(ops).map((o) => o.operationId),
    );
    for (const id of ['getOrganizationById', 'listMembersInOrganizationById', 'getAuthenticatedUser']) {
      assert.ok(operationIds.includes(id), `${id} documented`);
    }
    assert.ok(doc.body.paths['/v1/orgs/{organizationId}'].patch.requestBody, 'request bodies documented');
    const docs = await fetch(`${t.url}/docs/`);
    assert.equal(docs.status, 200);
    assert.match(await docs.text(), /<html/i);
  });

  test("every route's schemas compile: a server asked to compile them at start starts and serves", async () => {
    // Servers compile a route's validators and serializers on its first request; a schema that
    // cannot compile would fail only there. Compiling all of them here fails the tests instead.
    const eager = await startTestServer({}, { compileSchemasAtStart: true });
    try {
      const eve = await eager.user('Eve');
      const { data } = await eve.api.user.getAuthenticatedUser();
      assert.equal(data.displayName, 'Eve');
    } finally {
      await eager.close();
    }
  });

  test('the official-schema check rejects a response that does not match', () => {
    // Every mismatch is named, not only the first one the check stopped at.
    assert.throws(
      () => checkResponse('GET', `${t.url}/v1/orgs/abc`, 200, JSON.stringify({ object: 'organization', id: 'abc' })),
      (err: Error) => err instanceof SchemaMismatchError && /getOrganizationById 200/.test(err.message) && (err.message.match(/must have required property/g) ?? []).length > 1,
    );
    assert.throws(() => checkResponse('GET', `${t.url}/v1/orgs/abc`, 404, JSON.stringify({ message: 'no' })), SchemaMismatchError);
    assert.throws(() => checkResponse('DELETE', `${t.url}/v1/orgs/abc/members/x`, 200, '{}'), SchemaMismatchError);
  });
});

describe('users', () => {
  test('the authenticated user, users sharing an organization, and nobody else', async () => {
    const ann = await t.user('Ann');
    const bob = await t.user('Bob');
    const stranger = await t.user('Stranger');
    const { data: me } = await ann.api.user.getAuthenticatedUser();
    assert.equal(me.id, ann.id);
    assert.equal(me.displayName, 'Ann');
    assert.equal(me.urls.location, `${t.url}/v1/users/${ann.id}`);
    const { data: org } = await ann.api.orgs.createOrganization({ title: 'Shared' });
    await t.server.services.db
      .insertInto('members')
      .values({ organization_id: org.id, user_id: bob.id, role: 'read', joined_at: new Date(), last_seen_at: null })
      .onConflict((oc) => oc.doNothing())
      .execute();
    const { data: seen } = await bob.api.users.getUserById(ann.id);
    assert.equal(seen.displayName, 'Ann');
    const denied = await stranger.api.users.getUserById(ann.id).catch((e) => e.response.status);
    assert.equal(denied, 404);
    const { data: renamed } = await ann.api.users.updateUserById(ann.id, { displayName: 'Ann B.' });
    assert.equal(renamed.displayName, 'Ann B.');
    const forbidden = await bob.api.users.updateUserById(ann.id, { displayName: 'Hacked' }).catch((e) => e.response.status);
    assert.equal(forbidden, 403);
  });
});

describe('joining by email domain, email-domain lookup, ping and agent instructions', () => {
  test('a user whose verified domain is allowed joins with the default role', async () => {
    const ann = await t.user('Ann');
    const { data: org } = await ann.api.orgs.createOrganization({ title: 'Domain Org', emailDomains: ['corp.test'] });
    await ann.api.orgs.updateOrganizationById(org.id, { defaultRole: 'edit' as never });
    const carol = await t.user('Carol', { email: `carol.${Date.now()}@corp.test` });
    const dave = await t.user('Dave', { email: `dave.${Date.now()}@elsewhere.test` });

    const { data: found } = await carol.api.emailDomains.getOrganizationsForEmailDomain('corp.test');
    assert.deepEqual(found.organizations.map((o) => o.id), [org.id]);
    const { data: hidden } = await dave.api.emailDomains.getOrganizationsForEmailDomain('corp.test');
    assert.deepEqual(hidden.organizations, []);

    assert.equal((await carol.api.orgs.joinOrganization(org.id)).status, 204);
    const { data: member } = await ann.api.orgs.getMemberInOrganizationById(org.id, carol.id);
    assert.equal(member.role, 'edit');
    // Joining twice changes nothing.
    assert.equal((await carol.api.orgs.joinOrganization(org.id)).status, 204);

    // An organization that does not accept the caller answers exactly as a missing one does,
    // so an outsider cannot learn which organizations exist.
    const refused = await dave.api.orgs.joinOrganization(org.id).catch((e) => e);
    const missing = await dave.api.orgs.joinOrganization('no-such-org').catch((e) => e);
    assert.equal(refused.response.status, 404);
    assert.equal(missing.response.status, 404);
    assert.equal(refused.message.replace(org.id, 'ID'), missing.message.replace('no-such-org', 'ID'));
  });

  test('ping records last activity and returns signed claims', async () => {
    const ann = await t.user('Ann');
    const { data: org } = await ann.api.orgs.createOrganization({ title: 'Ping' });
    const before = new Date();
    const { data } = await ann.api.orgs.updateOrganizationMemberLastSeenAt(org.id);
    const claims = (data as { serviceVisitorClaims: string }).serviceVisitorClaims;
    const { payload } = await jwtVerify(claims, t.server.services.signingKey);
    assert.equal(payload.sub, ann.id);
    assert.equal(payload.organization, org.id);
    assert.equal(payload.role, 'admin');
    const { data: member } = await ann.api.orgs.getMemberInOrganizationById(org.id, ann.id);
    assert.ok(new Date(member.lastSeenAt!) >= new Date(before.getTime() - 1));
    await assert.rejects(jwtVerify(claims, new Uint8Array(32)));
  });

  test('agent instructions: members read, admins write', async () => {
    const ann = await t.user('Ann');
    const rita = await t.user('Rita');
    const { data: org } = await ann.api.orgs.createOrganization({ title: 'Agents' });
    await t.server.services.db
      .insertInto('members')
      .values({ organization_id: org.id, user_id: rita.id, role: 'read', joined_at: new Date(), last_seen_at: null })
      .execute();
    const { data: empty } = await rita.api.orgs.getOrganizationAgentInstructions(org.id);
    assert.deepEqual(empty.instructions.nodes, []);
    const document = {
      object: 'document' as const,
      data: {},
      nodes: [{ object: 'block', type: 'paragraph', data: {}, nodes: [{ object: 'text', leaves: [{ object: 'leaf', text: 'Be concise', marks: [] }] }] }],
    };
    const { data: saved } = await ann.api.orgs.updateOrganizationAgentInstructions(org.id, { instructions: document as never });
    assert.equal(saved.updatedBy, ann.id);
    const { data: read } = await rita.api.orgs.getOrganizationAgentInstructions(org.id);
    assert.deepEqual(read.instructions.nodes, document.nodes);
    const denied = await rita.api.orgs
      .updateOrganizationAgentInstructions(org.id, { instructions: document as never })
      .catch((e) => e.response.status);
    assert.equal(denied, 403);
    const bad = await t.request('PUT', `/v1/orgs/${org.id}/agent-instructions`, { token: ann.token, body: { instructions: { object: 'doc' } } });
    assert.equal(bad.status, 400);
  });
});

describe('rate limits', () => {
  let limited: TestServer;
  before(async () => {
    limited = await startTestServer({ rateLimitMax: 3, rateLimitWindowMs: 60_000 });
  });
  after(async () => {
    await limited?.close();
  });

  test('past the limit a token gets 429 with Retry-After; other tokens are unaffected', async () => {
    const ann = await limited.user('Ann');
    const bob = await limited.user('Bob');
    const statuses: number[] = [];
    let last;
    for (let i = 0; i < 4; i++) {
      last = await limited.request('GET', '/v1/user', { token: ann.token });
      statuses.push(last.status);
    }
    assert.deepEqual(statuses, [200, 200, 200, 429]);
    assert.equal(last!.body.error.code, 429);
    assert.ok(Number(last!.headers.get('retry-after')) > 0);
    assert.equal(last!.headers.get('x-ratelimit-remaining'), '0');
    assert.equal((await limited.request('GET', '/v1/user', { token: bob.token })).status, 200);

    // Once the window is over (on the server's clock), the token has its allowance again.
    limited.clock.advance(60_000);
    const next = await limited.request('GET', '/v1/user', { token: ann.token });
    assert.equal(next.status, 200);
    assert.equal(next.headers.get('x-ratelimit-remaining'), '2');
  });
});
