import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import { after, before, describe, test } from 'node:test';
import { OpenAPISpecVisibility, type OpenAPISpec } from '@gitbook/api';
import * as factories from './support/factories.ts';
import { expectStatus, startTestServer, type TestServer, type TestUser } from './support/server.ts';
import { eventually, settleJobs } from './support/wait.ts';

// Specs are served by a local server on 127.0.0.1. The Folio under test may reach 127.0.0.1/32
// only (FETCH_ALLOW_CIDRS), not the rest of loopback nor private ranges: so a redirect from
// 127.0.0.1 to 127.0.0.2 is a redirect to an address the configuration refuses.
let t: TestServer;
let specs: Server;
let base: string;
/** Path → [content type, body] served by the spec server; tests change it as they go. */
const served = new Map<string, [string, string] | { redirect: string } | { delayMs: number }>();

before(async () => {
  specs = createServer((req, res) => {
    const entry = served.get(req.url ?? '');
    if (!entry) {
      res.statusCode = 404;
      return res.end('not found');
    }
    if ('redirect' in entry) {
      res.writeHead(302, { location: entry.redirect });
      return res.end();
    }
    if ('delayMs' in entry) {
      const timer = setTimeout(() => res.end('{}'), entry.delayMs);
      res.on('close', () => clearTimeout(timer));
      return;
    }
    res.writeHead(200, { 'content-type': entry[0] });
    res.end(entry[1]);
  });
  await new Promise<void>((resolve) => specs.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(specs.address() as { port: number }).port}`;
  t = await startTestServer({ fetchAllowPrivate: false, fetchAllowCidrs: ['127.0.0.1/32'], fetchTimeoutMs: 4000, openapiRefreshMs: 0 });
});
after(async () => {
  await t?.close();
  specs?.closeAllConnections();
  await new Promise((resolve) => specs?.close(resolve));
});

const json = (value: unknown): [string, string] => ['application/json', JSON.stringify(value, null, 2)];
const yaml = (text: string): [string, string] => ['application/yaml', text];

/** Runs the job queue until idle (processing is a job) and returns the spec, which must have been processed since `since`. */
async function processed(user: TestUser, orgId: string, slug: string, since: Date): Promise<OpenAPISpec> {
  await settleJobs(t);
  const { data } = await user.api.orgs.getOpenApiSpecBySlug(orgId, slug);
  assert.ok(data.processingState === 'complete' && data.lastProcessedAt && new Date(data.lastProcessedAt) >= since, `spec ${slug} processed: ${JSON.stringify(data)}`);
  return data;
}

/** Creates a spec from a URL and waits for its processing. */
async function addSpec(user: TestUser, orgId: string, slug: string, path: string) {
  const since = new Date(Date.now() - 5);
  const { data, status } = await user.api.orgs.createOpenApiSpec(orgId, { slug, source: { url: base + path } });
  assert.equal(status, 201);
  assert.equal(data.processingState, 'pending');
  assert.equal(data.slug, slug);
  return processed(user, orgId, slug, since);
}

async function putSpec(user: TestUser, orgId: string, slug: string, source: { url: string } | { text: string }) {
  const since = new Date(Date.now() - 5);
  const { data } = await user.api.orgs.createOrUpdateOpenApiSpecBySlug(orgId, slug, { source });
  assert.equal(data.processingState, 'pending');
  return processed(user, orgId, slug, since);
}

const swagger2 = {
  swagger: '2.0',
  info: { title: 'Petstore', version: '1.0.0' },
  host: 'petstore.example.com',
  basePath: '/v1',
  paths: {
    '/pets/{petId}': {
      get: {
        operationId: 'getPet',
        summary: 'Get a pet',
        parameters: [{ name: 'petId', in: 'path', required: true, type: 'string' }],
        responses: { 200: { description: 'The pet', schema: { $ref: '#/definitions/Pet' } } },
      },
    },
  },
  definitions: { Pet: { type: 'object', required: ['name'], properties: { name: { type: 'string' } } } },
};

const split30 = {
  '/split/api/openapi.yaml': `openapi: 3.0.3
info:
  title: Split
  version: "1"
paths:
  /pets:
    post:
      summary: Add a pet
      requestBody:
        content:
          application/json:
            schema:
              $ref: "./schemas/pet.yaml#/Pet"
      responses:
        "201":
          description: Created
        default:
          $ref: "../common/errors.yaml#/Error"
`,
  '/split/api/schemas/pet.yaml': `Pet:
  type: object
  properties:
    name:
      type: string
    owner:
      $ref: "owner.yaml"
`,
  '/split/api/schemas/owner.yaml': `type: object
properties:
  email:
    type: string
`,
  '/split/common/errors.yaml': `Error:
  description: An error
  content:
    application/json:
      schema:
        type: object
`,
};

/** An OpenAPI 3.1 document with `n` operations (n/2 paths, get and put on each). */
function big31(n: number) {
  const paths: Record<string, unknown> = {};
  for (let i = 0; i < n / 2; i++) {
    paths[`/items${i}/{id}`] = {
      parameters: [{ name: 'id', in: 'path', required: true, schema: { type: 'string' } }],
      get: { operationId: `getItem${i}`, summary: `Get item ${i}`, responses: { 200: { description: 'ok', content: { 'application/json': { schema: { $ref: '#/components/schemas/Item' } } } } } },
      put: {
        operationId: `putItem${i}`,
        summary: `Replace item ${i}`,
        requestBody: { content: { 'application/json': { schema: { $ref: '#/components/schemas/Item' } } } },
        responses: { 204: { description: 'done' } },
      },
    };
  }
  return {
    openapi: '3.1.0',
    info: { title: 'Big', version: '3.1' },
    paths,
    webhooks: { itemChanged: { post: { summary: 'An item changed', requestBody: { content: { 'application/json': { schema: { $ref: '#/components/schemas/Item' } } } }, responses: { 200: { description: 'ok' } } } } },
    components: { schemas: { Item: { type: 'object', properties: { id: { type: 'string' }, size: { type: ['integer', 'null'] } } } } },
  };
}

describe('OpenAPI specs', () => {
  test('a Swagger 2.0 JSON file: processed into a version whose content and raw root read back', async () => {
    served.set('/petstore.json', json(swagger2));
    const { admin, org } = await factories.newOrg(t);
    const spec = await addSpec(admin, org.id, 'petstore', '/petstore.json');
    assert.equal(spec.lastProcessErrorCode, undefined);
    assert.deepEqual(spec.lastProcessedErrors, []);
    assert.ok(spec.lastVersion);
    assert.equal(spec.sourceURL, `${base}/petstore.json`);
    assert.deepEqual(spec.permissions, { view: true, edit: true });
    assert.equal(spec.urls.location, `${t.url}/v1/orgs/${org.id}/openapi/petstore`);

    const { data: latest } = await admin.api.orgs.getLatestOpenApiSpecVersion(org.id, 'petstore');
    assert.equal(latest.id, spec.lastVersion);
    assert.equal(latest.url, `${base}/petstore.json`);
    const { data: byId } = await admin.api.orgs.getOpenApiSpecVersionById(org.id, 'petstore', latest.id);
    assert.deepEqual(byId, latest);

    const { data: content } = await admin.api.orgs.getLatestOpenApiSpecVersionContent(org.id, 'petstore');
    assert.deepEqual(Object.keys(content.filesystem), ['petstore.json']);
    assert.deepEqual((content.filesystem as Record<string, unknown>)['petstore.json'], swagger2);
    assert.equal(content.urls.source, `${base}/petstore.json`);
    assert.equal(content.urls.public, null);
    const { data: raw } = await admin.api.orgs.getLatestOpenApiSpecVersionContentRaw(org.id, 'petstore');
    assert.deepEqual(raw, { text: served.get('/petstore.json')![1 as never], format: 'json' });

    const { data: list } = await admin.api.orgs.listOpenApiSpecs(org.id);
    assert.deepEqual(list.items.map((s) => s.slug), ['petstore']);
    assert.equal(list.count, 1);
  });

  test('an OpenAPI 3.0 YAML spec split across files: every file referenced (relative, nested, parent folder) is fetched and kept', async () => {
    for (const [path, text] of Object.entries(split30)) served.set(path, yaml(text));
    const { admin, org } = await factories.newOrg(t);
    const spec = await addSpec(admin, org.id, 'split', '/split/api/openapi.yaml');
    assert.deepEqual(spec.lastProcessedErrors, [], JSON.stringify(spec.lastProcessedErrors));
    const { data: content } = await admin.api.orgs.getOpenApiSpecVersionContentById(org.id, 'split', spec.lastVersion!);
    const fs = content.filesystem as Record<string, any>;
    assert.deepEqual(Object.keys(fs).sort(), ['../common/errors.yaml', 'openapi.yaml', 'schemas/owner.yaml', 'schemas/pet.yaml']);
    assert.equal(fs['openapi.yaml'].paths['/pets'].post.requestBody.content['application/json'].schema.$ref, './schemas/pet.yaml#/Pet');
    assert.equal(fs['schemas/owner.yaml'].properties.email.type, 'string');
    const { data: raw } = await admin.api.orgs.getLatestOpenApiSpecVersionContentRaw(org.id, 'split');
    assert.equal(raw.format, 'yaml');
    assert.equal(raw.text, split30['/split/api/openapi.yaml']);
  });

  test('a 3.1 document of 400 operations and a webhook is processed', async () => {
    served.set('/big31.json', json(big31(400)));
    const { admin, org } = await factories.newOrg(t);
    const spec = await addSpec(admin, org.id, 'big', '/big31.json');
    assert.deepEqual(spec.lastProcessedErrors, []);
    const { data: content } = await admin.api.orgs.getLatestOpenApiSpecVersionContent(org.id, 'big');
    assert.equal(Object.keys((content.filesystem as any)['big31.json'].paths).length, 200);
  });

  test('an invalid spec: PARSE_ERROR with the file, JSON pointer and line of each problem; no version', async () => {
    served.set(
      '/invalid.yaml',
      yaml(`openapi: 3.0.3
info:
  title: Broken
paths:
  /pets:
    get:
      responses:
        "200":
          descriptio: typo
  /owners:
    get:
      responses:
        "200":
          $ref: "#/components/responses/Missing"
`),
    );
    const { admin, org } = await factories.newOrg(t);
    const spec = await addSpec(admin, org.id, 'invalid', '/invalid.yaml');
    assert.equal(spec.lastProcessErrorCode, 'PARSE_ERROR');
    assert.equal(spec.lastVersion, undefined);
    const errors = spec.lastProcessedErrors as { message: string; code: string; pointer?: string; line?: number; file?: string }[];
    assert.ok(spec.lastProcessedErrorCount! >= 3, JSON.stringify(errors));
    const missingVersion = errors.find((e) => e.pointer === '/info');
    assert.equal(missingVersion?.line, 2);
    assert.match(missingVersion!.message, /^invalid\.yaml line 2 at \/info: .*version/);
    const typo = errors.find((e) => e.pointer === '/paths/~1pets/get/responses/200' && /descriptio/.test(e.message));
    assert.equal(typo?.line, 8, JSON.stringify(errors));
    const dangling = errors.find((e) => /leads nowhere/.test(e.message));
    assert.equal(dangling?.pointer, '/paths/~1owners/get/responses/200/$ref');
    assert.equal(dangling?.line, 14);
    await expectStatus(admin.api.orgs.getLatestOpenApiSpecVersion(org.id, 'invalid'), 404);
    await expectStatus(admin.api.orgs.getLatestOpenApiSpecVersionContentRaw(org.id, 'invalid'), 404);

    // Swagger 2.0 rules the schema cannot express (the library's checks), located too.
    const missingParam = { ...swagger2, paths: { '/pets/{petId}': { get: { responses: { 200: { description: 'ok' } } } } } };
    served.set('/missing-param.json', json(missingParam));
    const checked = await addSpec(admin, org.id, 'missing-param', '/missing-param.json');
    assert.equal(checked.lastProcessErrorCode, 'PARSE_ERROR');
    const [spec2] = checked.lastProcessedErrors as { message: string; pointer?: string; line?: number }[];
    assert.match(spec2!.message, /missing path parameter/);
    assert.equal(spec2!.pointer, '/paths/~1pets~1{petId}/get');
    const text = json(missingParam)[1].split('\n');
    assert.equal(spec2!.line, text.findIndex((l) => l.includes('"get"')) + 1);

    // Not YAML at all: the parser's line.
    served.set('/garbage.yaml', yaml('openapi: 3.0.3\ninfo: [unclosed\npaths: {}\n'));
    const garbage = await addSpec(admin, org.id, 'garbage', '/garbage.yaml');
    assert.equal(garbage.lastProcessErrorCode, 'PARSE_ERROR');
    assert.ok((garbage.lastProcessedErrors![0] as { line?: number }).line! >= 2);
  });

  test('YAML alias bombs and deeply nested documents are refused without expanding them', async () => {
    const bomb = ['openapi: 3.0.3', 'a: &a ["x","x","x","x","x","x","x","x","x"]'];
    for (let i = 1; i < 12; i++) bomb.push(`${String.fromCharCode(97 + i)}: &${String.fromCharCode(97 + i)} [${Array(9).fill(`*${String.fromCharCode(96 + i)}`).join(',')}]`);
    served.set('/bomb.yaml', yaml(bomb.join('\n') + '\n'));
    served.set('/deep.yaml', yaml(`openapi: 3.0.3\nx: ${'['.repeat(100_000)}\n`));
    served.set('/deep.json', json({}));
    served.set('/deep.json', ['application/json', `{"openapi":"3.0.3","x":${'['.repeat(100_000)}${']'.repeat(100_000)}}`]);
    const { admin, org } = await factories.newOrg(t);
    const bombed = await addSpec(admin, org.id, 'bomb', '/bomb.yaml');
    assert.equal(bombed.lastProcessErrorCode, 'PARSE_ERROR');
    assert.match(bombed.lastProcessedErrors![0]!.message, /alias/i);
    for (const path of ['/deep.yaml', '/deep.json']) {
      const deep = await addSpec(admin, org.id, path.slice(1).replace('.', '-'), path);
      assert.equal(deep.lastProcessErrorCode, 'PARSE_ERROR');
      assert.match(deep.lastProcessedErrors![0]!.message, /nests deeper/);
    }
  });

  test('a slow server: FETCH_TIMEOUT after FETCH_TIMEOUT_MS, and the last good version is kept', async () => {
    served.set('/slow-ok.json', json(swagger2));
    const { admin, org } = await factories.newOrg(t);
    const good = await addSpec(admin, org.id, 'slow', '/slow-ok.json');
    served.set('/slow.json', { delayMs: 30_000 });
    const started = Date.now();
    const since = new Date(started - 5);
    const { data: pending } = await admin.api.orgs.createOrUpdateOpenApiSpecBySlug(org.id, 'slow', { source: { url: `${base}/slow.json` } });
    assert.equal(pending.processingState, 'pending');
    // While the job waits for the slow server (at least FETCH_TIMEOUT_MS), the spec says so.
    const state = await eventually(
      async () => {
        const now = (await admin.api.orgs.getOpenApiSpecBySlug(org.id, 'slow')).data.processingState as string;
        return now !== 'pending' && now;
      },
      { what: 'the worker to take the spec', timeoutMs: 15_000 },
    );
    assert.equal(state, 'progress');
    // The server would answer after 30 s (with a body that is no spec): FETCH_TIMEOUT says the deadline cut it first.
    const spec = await processed(admin, org.id, 'slow', since);
    assert.equal(spec.lastProcessErrorCode, 'FETCH_TIMEOUT');
    assert.match(spec.lastProcessedErrors![0]!.message, /4000 ms/);
    assert.equal(spec.lastVersion, good.lastVersion);
  });

  test('redirects to private, link-local or loopback addresses are refused, in any notation', async () => {
    const port = (specs.address() as { port: number }).port;
    const { admin, org } = await factories.newOrg(t);
    const targets = [
      `http://127.0.0.2:${port}/petstore.json`,
      'http://169.254.169.254/latest/meta-data/',
      `http://[::ffff:127.0.0.2]:${port}/petstore.json`,
      `http://2130706434:${port}/petstore.json`, // 127.0.0.2 in decimal
      `http://0177.0.0.2:${port}/petstore.json`, // 127.0.0.2 in octal
      `http://[::1]:${port}/petstore.json`,
      'http://10.0.0.1/spec.json',
    ];
    served.set('/petstore.json', json(swagger2));
    for (const [i, target] of targets.entries()) {
      served.set(`/redirect${i}`, { redirect: target });
      const spec = await addSpec(admin, org.id, `redirect-${i}`, `/redirect${i}`);
      assert.equal(spec.lastProcessErrorCode, 'FETCH_ERROR', target);
      assert.match(spec.lastProcessedErrors![0]!.message, /private address/, target);
    }
    // The same spec without the redirect is fetched: the refusal is the redirect's target.
    const direct = await addSpec(admin, org.id, 'direct', '/petstore.json');
    assert.equal(direct.lastProcessErrorCode, undefined);
    // A $ref to a private address is refused too.
    served.set('/ref-private.json', json({ ...swagger2, definitions: { Pet: { $ref: `http://127.0.0.2:${port}/pet.json` } } }));
    const viaRef = await addSpec(admin, org.id, 'ref-private', '/ref-private.json');
    assert.equal(viaRef.lastProcessErrorCode, 'FETCH_ERROR');
    // And nothing reads local files.
    served.set('/ref-file.json', json({ ...swagger2, definitions: { Pet: { $ref: 'file:///etc/passwd' } } }));
    const viaFile = await addSpec(admin, org.id, 'ref-file', '/ref-file.json');
    assert.notEqual(viaFile.lastProcessErrorCode, undefined);
    assert.equal(viaFile.lastVersion, undefined);
  });

  test('an unchanged re-fetch stores no version; a changed one does and latest moves; text sources too', async () => {
    served.set('/versions.json', json(swagger2));
    const { admin, org } = await factories.newOrg(t);
    const first = await addSpec(admin, org.id, 'versioned', '/versions.json');
    const again = await putSpec(admin, org.id, 'versioned', { url: `${base}/versions.json` });
    assert.equal(again.lastVersion, first.lastVersion);
    let { data: versions } = await admin.api.orgs.listOpenApiSpecVersions(org.id, 'versioned');
    assert.equal(versions.count, 1);

    served.set('/versions.json', json({ ...swagger2, info: { title: 'Petstore', version: '2.0.0' } }));
    const changed = await putSpec(admin, org.id, 'versioned', { url: `${base}/versions.json` });
    assert.notEqual(changed.lastVersion, first.lastVersion);
    ({ data: versions } = await admin.api.orgs.listOpenApiSpecVersions(org.id, 'versioned'));
    assert.deepEqual(versions.items.map((v) => v.id), [changed.lastVersion, first.lastVersion]);
    const { data: latest } = await admin.api.orgs.getLatestOpenApiSpecVersion(org.id, 'versioned');
    assert.equal(latest.id, changed.lastVersion);
    const { data: oldContent } = await admin.api.orgs.getOpenApiSpecVersionContentById(org.id, 'versioned', first.lastVersion!);
    assert.equal((oldContent.filesystem as any)['versions.json'].info.version, '1.0.0');
    const { data: page1 } = await admin.api.orgs.listOpenApiSpecVersions(org.id, 'versioned', { limit: 1 });
    assert.equal(page1.items[0]!.id, changed.lastVersion);
    const { data: page2 } = await admin.api.orgs.listOpenApiSpecVersions(org.id, 'versioned', { limit: 1, page: page1.next!.page });
    assert.equal(page2.items[0]!.id, first.lastVersion);

    // A spec given as text, created by PUT (201).
    const text = 'openapi: 3.1.0\ninfo: {title: Text, version: "1"}\npaths: {}\n';
    const created = await admin.api.orgs.createOrUpdateOpenApiSpecBySlug(org.id, 'as-text', { source: { text } });
    assert.equal(created.status, 201);
    const fromText = await processed(admin, org.id, 'as-text', new Date(Date.parse(created.data.createdAt) - 5));
    assert.equal(fromText.sourceURL, undefined);
    assert.ok(fromText.lastVersion, JSON.stringify(fromText.lastProcessedErrors));
    const { data: raw } = await admin.api.orgs.getLatestOpenApiSpecVersionContentRaw(org.id, 'as-text');
    assert.deepEqual(raw, { text, format: 'yaml' });
  });

  test('URL sources are refreshed periodically (OPENAPI_REFRESH_INTERVAL_MS)', async () => {
    served.set('/refresh.json', json(swagger2));
    const { admin, org } = await factories.newOrg(t);
    // An interval no first processing outlasts, even on a loaded machine (at 200 ms the refresh
    // came due while the spec was still being added, and the check found it in progress).
    t.server.services.config.openapiRefreshMs = 60_000;
    try {
      const first = await addSpec(admin, org.id, 'refreshed', '/refresh.json');
      served.set('/refresh.json', json({ ...swagger2, info: { title: 'Petstore', version: '3.0.0' } }));
      // The refresh is a job queued OPENAPI_REFRESH_INTERVAL_MS ahead: move the clock there and run it.
      t.clock.advance(60_000);
      await settleJobs(t);
      const latest = (await admin.api.orgs.getOpenApiSpecBySlug(org.id, 'refreshed')).data.lastVersion;
      assert.notEqual(latest, first.lastVersion);
    } finally {
      t.server.services.config.openapiRefreshMs = 0;
      await admin.api.orgs.deleteOpenApiSpecBySlug(org.id, 'refreshed');
    }
  });

  test('permissions, visibility, conflicts and delete', async () => {
    served.set('/perm.json', json(swagger2));
    const { admin, org } = await factories.newOrg(t);
    await addSpec(admin, org.id, 'perm', '/perm.json');
    const reader = await factories.newMember(t, org.id, 'read');
    const creator = await factories.newMember(t, org.id, 'create');
    const guest = await factories.newMember(t, org.id, null);
    const outsider = await t.user('Outsider');

    const { data: seen } = await reader.api.orgs.getOpenApiSpecBySlug(org.id, 'perm');
    assert.deepEqual(seen.permissions, { view: true, edit: false });
    await expectStatus(reader.api.orgs.createOpenApiSpec(org.id, { slug: 'nope', source: { url: `${base}/perm.json` } }), 403);
    await expectStatus(reader.api.orgs.updateOpenApiSpecBySlug(org.id, 'perm', { visibility: OpenAPISpecVisibility.Public }), 403);
    await expectStatus(reader.api.orgs.deleteOpenApiSpecBySlug(org.id, 'perm'), 403);
    await expectStatus(guest.api.orgs.getOpenApiSpecBySlug(org.id, 'perm'), 404);
    assert.equal((await guest.api.orgs.listOpenApiSpecs(org.id)).data.count, 0);
    await expectStatus(outsider.api.orgs.getOpenApiSpecBySlug(org.id, 'perm'), 404);
    await expectStatus(outsider.api.orgs.listOpenApiSpecs(org.id), 404);
    await expectStatus(admin.api.orgs.createOpenApiSpec(org.id, { slug: 'perm', source: { url: `${base}/perm.json` } }), 409);
    const bad = await t.request('POST', `/v1/orgs/${org.id}/openapi`, { token: admin.token, body: { slug: 'not a slug', source: { url: `${base}/perm.json` } } });
    assert.equal(bad.status, 400);
    const ftp = await t.request('POST', `/v1/orgs/${org.id}/openapi`, { token: admin.token, body: { slug: 'ftp', source: { url: 'ftp://example.com/x' } } });
    assert.equal(ftp.status, 400);

    const { data: made } = await creator.api.orgs.updateOpenApiSpecBySlug(org.id, 'perm', { visibility: OpenAPISpecVisibility.Public });
    assert.equal(made.visibility, 'public');
    const { data: forGuest } = await guest.api.orgs.getOpenApiSpecBySlug(org.id, 'perm');
    assert.deepEqual(forGuest.permissions, { view: true, edit: false });
    const { data: content } = await guest.api.orgs.getLatestOpenApiSpecVersionContent(org.id, 'perm');
    assert.equal(content.urls.public, `${base}/perm.json`);

    const deleted = await creator.api.orgs.deleteOpenApiSpecBySlug(org.id, 'perm');
    assert.equal(deleted.status, 204);
    await expectStatus(admin.api.orgs.getOpenApiSpecBySlug(org.id, 'perm'), 404);
    await expectStatus(admin.api.orgs.listOpenApiSpecVersions(org.id, 'perm'), 404);
    assert.equal((await admin.api.orgs.deleteOpenApiSpecBySlug(org.id, 'perm')).status, 204);
  });
});

describe('OpenAPI blocks in pages', () => {
  test('read with computed=true, blocks resolve against the latest version by slug (also legacy blocks by source URL)', async () => {
    for (const [path, text] of Object.entries(split30)) served.set(path, yaml(text));
    served.set('/pages-big.json', json(big31(20)));
    const { admin, org } = await factories.newOrg(t);
    await addSpec(admin, org.id, 'pets', '/split/api/openapi.yaml');
    await addSpec(admin, org.id, 'items', '/pages-big.json');
    const space = await factories.newSpace(admin, org.id, 'API');
    const markdown = [
      '# Reference',
      '',
      '{% openapi-operation spec="pets" path="/pets" method="post" %}',
      '',
      '{% openapi-operation spec="items" path="/items3/{id}" method="get" %}',
      '',
      '{% openapi-schemas spec="items" schemas="Item,Nope" %}',
      '',
      '{% openapi-webhook spec="items" name="itemChanged" method="post" %}',
      '',
      `{% openapi src="${base}/pages-big.json" path="/items1/{id}" method="put" %}`,
      '',
      '{% openapi-operation spec="missing" path="/x" method="get" %}',
      '',
    ].join('\n');
    await factories.mergeChanges(admin, space.id, [{ operation: 'insert_page', title: 'Reference', document: { markdown } }], { subject: 'Reference' });
    const { data: pages } = await admin.api.spaces.listPages(space.id);
    const pageId = pages.pages[0]!.id;

    const plain = (await admin.api.spaces.getPageById(space.id, pageId, { format: 'document' })).data as any;
    assert.ok(plain.document.nodes.every((n: any) => n.data?.resolved === undefined));

    const { data } = (await admin.api.spaces.getPageById(space.id, pageId, { format: 'document', computed: true } as never)) as { data: any };
    const blocks = data.document.nodes.filter((n: any) => n.type !== 'heading-1');
    const [postPets, getItem, schemas, webhook, legacy, missing] = blocks.map((b: any) => b.data.resolved);
    assert.equal(postPets.spec.slug, 'pets');
    assert.equal(postPets.operation.summary, 'Add a pet');
    // References across files are followed: ./schemas/pet.yaml, then owner.yaml from there, and ../common/errors.yaml.
    const petSchema = postPets.operation.requestBody.content['application/json'].schema;
    assert.equal(petSchema.properties.owner.properties.email.type, 'string');
    assert.equal(postPets.operation.responses.default.description, 'An error');
    assert.equal(getItem.operation.summary, 'Get item 3');
    assert.deepEqual(getItem.operation.parameters, [{ name: 'id', in: 'path', required: true, schema: { type: 'string' } }]);
    assert.equal(getItem.operation.responses['200'].content['application/json'].schema.properties.id.type, 'string');
    assert.deepEqual(Object.keys(schemas.schemas), ['Item']);
    assert.match(schemas.error, /Nope/);
    assert.equal(webhook.operation.summary, 'An item changed');
    assert.equal(legacy.operation.summary, 'Replace item 1');
    assert.equal(legacy.operation.requestBody.content['application/json'].schema.type, 'object');
    assert.match(missing.error, /missing/);

    // Guests cannot read private specs through a page either.
    const guest = await factories.newMember(t, org.id, null);
    await admin.api.spaces.updateSpaceById(space.id, { visibility: 'public' } as never);
    const { data: asGuest } = (await guest.api.spaces.getPageById(space.id, pageId, { format: 'document', computed: true } as never)) as { data: any };
    const first = asGuest.document.nodes.find((n: any) => n.type === 'openapi-operation');
    assert.equal(first.data.resolved.operation, undefined);
    assert.match(first.data.resolved.error, /No OpenAPI spec/);
  });
});
