import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import { after, before, describe, test } from 'node:test';
import * as factories from './support/factories.ts';
import { textOf } from './support/content.ts';
import { expectStatus, startTestServer, type TestServer, type TestUser } from './support/server.ts';
import { fakeEngine, type FakeEngine } from './support/translation-engine.ts';
import { settleJobs } from './support/wait.ts';

// Computed content: getComputedDocument and getComputedRevision, from an OpenAPI spec of the
// organization (builtin:openapi) and from an integration installed on the space. Every answer
// goes through the official client, which checks it against the official schema.

let t: TestServer;
let specServer: Server;
let specBase: string;
let engine: FakeEngine;

before(async () => {
  // One spec is fetched from a URL (only such a spec, once public, has a download link).
  specServer = createServer((_req, res) => {
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(JSON.stringify(petstore));
  });
  await new Promise<void>((resolve) => specServer.listen(0, '127.0.0.1', resolve));
  specBase = `http://127.0.0.1:${(specServer.address() as { port: number }).port}`;
  engine = await fakeEngine('libretranslate');
  t = await startTestServer({
    fetchAllowPrivate: false,
    fetchAllowCidrs: ['127.0.0.1/32'],
    openapiRefreshMs: 0,
    integrationTimeoutMs: 8000,
    // Translations, for the translation dependencies an integration gets resolved.
    translationEngine: 'libretranslate',
    translationEngineUrl: engine.url,
  });
});
after(async () => {
  await t?.close();
  specServer?.closeAllConnections();
  await new Promise((resolve) => specServer?.close(resolve));
  engine?.server.close();
});

const petstore = {
  openapi: '3.0.3',
  info: { title: 'Petstore', version: '1.2.3', description: 'A sample API.\n\nSecond paragraph.' },
  tags: [
    { name: 'pets', description: 'Everything about **pets**', 'x-page-title': 'Pets' },
    { name: 'store' },
  ],
  paths: {
    '/pets': {
      get: { tags: ['pets'], summary: 'List pets', responses: { '200': { description: 'ok' } } },
      post: { tags: ['pets'], summary: 'Add a pet', responses: { '201': { description: 'created' } } },
    },
    '/pets/{id}': {
      parameters: [{ name: 'id', in: 'path', required: true, schema: { type: 'string' } }],
      get: { tags: ['pets'], summary: 'Get a pet', responses: { '200': { description: 'ok', content: { 'application/json': { schema: { $ref: '#/components/schemas/Pet' } } } } } },
    },
    '/orders': { post: { tags: ['store'], summary: 'Place an order', responses: { '200': { description: 'ok' } } } },
    '/health': { get: { summary: 'Health check', responses: { '200': { description: 'ok' } } } },
    '/internal': { get: { tags: ['pets'], summary: 'Internal', 'x-internal': true, responses: { '200': { description: 'ok' } } } },
  },
  components: {
    schemas: {
      Pet: { type: 'object', properties: { id: { type: 'string' }, name: { type: 'string' } } },
      Order: { type: 'object', properties: { id: { type: 'string' } } },
    },
  },
};

/** Creates a spec (from text, or a URL) and processes its first version (a job). */
async function addSpec(user: TestUser, orgId: string, slug: string, source: { text: string } | { url: string }) {
  await user.api.orgs.createOpenApiSpec(orgId, { slug, source });
  await settleJobs(t);
  const { data } = await user.api.orgs.getOpenApiSpecBySlug(orgId, slug);
  if (data.lastProcessErrorCode) throw new Error(`spec ${slug} failed: ${JSON.stringify(data.lastProcessedErrors)}`);
  assert.equal(data.processingState, 'complete', `spec ${slug} processed`);
  assert.ok(data.lastVersion, `spec ${slug} has a version`);
  return data;
}

const specDep = (slug: string) => ({ spec: { ref: { kind: 'openapi' as const, spec: slug } } });
const openapiDoc = (slug: string, props: Record<string, unknown>) => ({ type: 'builtin:openapi' as const, dependencies: specDep(slug), props }) as never;

/** A document without its keys, to compare content. */
function withoutKeys(value: any): any {
  if (Array.isArray(value)) return value.map(withoutKeys);
  if (value && typeof value === 'object') return Object.fromEntries(Object.entries(value).filter(([k]) => k !== 'key').map(([k, v]) => [k, withoutKeys(v)]));
  return value;
}

function keysOf(value: any): string[] {
  if (Array.isArray(value)) return value.flatMap(keysOf);
  if (value && typeof value === 'object') return [...(typeof value.key === 'string' ? [value.key] : []), ...Object.values(value).flatMap(keysOf)];
  return [];
}

let shared: Promise<{ admin: TestUser; org: { id: string }; space: { id: string } }> | undefined;
/** One organization with the petstore spec (as text) and a space, for the OpenAPI tests. */
function petstoreOrg() {
  shared ??= (async () => {
    const { admin, org } = await factories.newOrg(t);
    await addSpec(admin, org.id, 'pets', { text: JSON.stringify(petstore) });
    const space = await factories.newSpace(admin, org.id, 'API');
    return { admin, org, space };
  })();
  return shared;
}

describe('getComputedDocument from an OpenAPI spec', () => {
  test('operation, operations of a tag, tag, info and models documents hold the blocks pages write', async () => {
    const { admin, space } = await petstoreOrg();
    const compute = async (props: Record<string, unknown>, seed = 's1') => (await admin.api.spaces.getComputedDocument(space.id, { source: openapiDoc('pets', props), seed })).data as any;

    const op = await compute({ doc: 'operation', page: '/pets/{id}', method: 'get' });
    assert.equal(op.object, 'document');
    assert.equal(op.nodes.length, 1);
    assert.equal(op.nodes[0].type, 'openapi-operation');
    assert.deepEqual(op.nodes[0].data, { ref: { kind: 'openapi', spec: 'pets' }, path: '/pets/{id}', method: 'get' });
    assert.equal(typeof op.nodes[0].key, 'string');

    const ops = await compute({ doc: 'operations', page: 'pets' });
    assert.equal(ops.nodes[0].type, 'paragraph');
    assert.equal(textOf(ops.nodes[0]), 'Everything about pets');
    assert.deepEqual(ops.nodes[0].nodes[0].leaves[1].marks.map((m: any) => m.type), ['bold']);
    const blocks = ops.nodes.slice(1);
    // The operations of the tag in the spec's order; the x-internal one is left out.
    assert.deepEqual(blocks.map((b: any) => `${b.type} ${b.data.method} ${b.data.path}`), [
      'openapi-operation get /pets',
      'openapi-operation post /pets',
      'openapi-operation get /pets/{id}',
    ]);

    const tag = await compute({ doc: 'tag', page: 'pets' });
    assert.deepEqual(tag.nodes.map(textOf), ['Everything about pets']);
    const untagged = await compute({ doc: 'operations', page: 'store' });
    assert.deepEqual(untagged.nodes.map((b: any) => b.data.path), ['/orders']);

    const info = await compute({ doc: 'info', page: 'info' });
    assert.deepEqual(info.nodes.map((b: any) => [b.type, textOf(b)]), [
      ['heading-1', 'Petstore'],
      ['paragraph', 'A sample API.'],
      ['paragraph', 'Second paragraph.'],
      ['paragraph', 'Version: 1.2.3'],
    ]);

    const models = await compute({ doc: 'models' });
    assert.equal(models.nodes.length, 1);
    assert.equal(models.nodes[0].type, 'openapi-schemas');
    assert.deepEqual(models.nodes[0].data.ref, { kind: 'openapi', spec: 'pets' });
    assert.deepEqual(models.nodes[0].data.schemas, ['Pet', 'Order']);

    // Same seed, same document (keys included); another seed, other keys, same content.
    assert.deepEqual(await compute({ doc: 'operations', page: 'pets' }), ops);
    const reseeded = await compute({ doc: 'operations', page: 'pets' }, 's2');
    assert.deepEqual(withoutKeys(reseeded), withoutKeys(ops));
    const before = new Set(keysOf(ops));
    assert.ok(keysOf(reseeded).length > 0 && keysOf(reseeded).every((k) => !before.has(k)), 'another seed gives other keys');
  });

  test('a computed document stored as a page resolves against the spec like a hand-written one', async () => {
    const { admin, space } = await petstoreOrg();
    const { data: doc } = await admin.api.spaces.getComputedDocument(space.id, { source: openapiDoc('pets', { doc: 'operation', page: '/pets/{id}', method: 'get' }), seed: 'x' });
    const cr = await factories.changeRequestWith(admin, space.id, [{ operation: 'insert_page', title: 'Get a pet', document: { document: doc } }], { subject: 'Reference' });
    const { data: page } = (await admin.api.spaces.getPageInChangeRequestByPath(space.id, cr.id, 'get-a-pet', { format: 'markdown' } as never)) as { data: any };
    assert.match(page.markdown, /\{% openapi-operation spec="pets" path="\/pets\/\{id\}" method="get" %\}/);
    const { data: read } = (await admin.api.spaces.getPageInChangeRequestById(space.id, cr.id, page.id, { format: 'document', computed: true } as never)) as { data: any };
    const resolved = read.document.nodes[0].data.resolved;
    assert.equal(resolved.operation.summary, 'Get a pet');
    assert.equal(resolved.operation.responses['200'].content['application/json'].schema.properties.name.type, 'string');
  });

  test('bad sources are 400s naming the field; a missing spec, tag or operation is a 404; the space must be readable', async () => {
    const { admin, org, space } = await petstoreOrg();
    const call = (source: unknown, seed = 's') => admin.api.spaces.getComputedDocument(space.id, { source: source as never, seed });
    await expectStatus(call(openapiDoc('nope', { doc: 'models' })), 404, /no OpenAPI spec with the slug "nope"/);
    await expectStatus(call(openapiDoc('pets', { doc: 'operation', page: '/nope', method: 'get' })), 404, /no GET operation at "\/nope"/);
    await expectStatus(call(openapiDoc('pets', { doc: 'operations', page: 'nope' })), 404, /no tag "nope"/);
    await expectStatus(call(openapiDoc('pets', { doc: 'bogus' })), 400, /source\.props\.doc: must be one of/);
    await expectStatus(call(openapiDoc('pets', { doc: 'operation', page: '/pets' })), 400, /source\.props\.method/);
    await expectStatus(call(openapiDoc('pets', { doc: 'operations' })), 400, /source\.props\.page: required/);
    await expectStatus(call({ type: 'builtin:openapi', props: { doc: 'models' } }), 400, /source\.dependencies\.spec: required/);
    await expectStatus(call({ type: 'builtin:openapi', props: { doc: 'models' }, dependencies: { spec: { ref: { kind: 'space', space: 'x' } } } }), 400, /source\.dependencies\.spec: must be/);
    await expectStatus(call({ type: 'magic' }), 400, /"magic" is not a content source type/);
    await expectStatus(call({ type: 'builtin:openapi', dependencies: specDep('pets'), props: { doc: 'models' }, extra: 1 }), 400, /unknown field "extra"/);
    const noSeed = await t.request('POST', `/v1/spaces/${space.id}/content/computed/document`, { token: admin.token, body: { source: { type: 'builtin:openapi' } } });
    assert.equal(noSeed.status, 400);
    assert.match(noSeed.body.error.message, /seed/);
    // A spec whose processing failed has no version to compute from.
    await admin.api.orgs.createOpenApiSpec(org.id, { slug: 'broken', source: { text: 'openapi: [unclosed' } });
    await settleJobs(t);
    assert.equal((await admin.api.orgs.getOpenApiSpecBySlug(org.id, 'broken')).data.processingState, 'complete', 'the broken spec was processed');
    await expectStatus(call(openapiDoc('broken', { doc: 'models' })), 409, /"broken" has no processed version yet/);
    // Someone who cannot read the space does not learn it exists.
    const outsider = await t.user('Outsider');
    await expectStatus(outsider.api.spaces.getComputedDocument(space.id, { source: openapiDoc('pets', { doc: 'models' }), seed: 's' }), 404, /Space not found/);
    // A guest who may read the space sees no private spec of the organization.
    const guest = await factories.newMember(t, org.id, null, 'Guest');
    await factories.grantDirect(t, org.id, { space: space.id }, { user: guest.id }, 'read');
    await expectStatus(guest.api.spaces.getComputedDocument(space.id, { source: openapiDoc('pets', { doc: 'models' }), seed: 's' }), 404, /no OpenAPI spec with the slug "pets"/);
  });
});

describe('getComputedRevision from an OpenAPI spec', () => {
  test('by tag: a page per tag, a page per untagged operation, a Models page; ids follow the seed', async () => {
    const { admin, space } = await petstoreOrg();
    const compute = async (props: Record<string, unknown>, seed: string) => (await admin.api.spaces.getComputedRevision(space.id, { source: openapiDoc('pets', props), seed })).data as any;
    const revision = await compute({ models: true }, 'seed-a');
    assert.deepEqual(revision.files, []);
    assert.deepEqual(revision.reusableContents, []);
    assert.deepEqual(revision.pages.map((p: any) => [p.title, p.slug, p.path, p.type]), [
      ['Pets', 'pets', 'pets', 'document'],
      ['store', 'store', 'store', 'document'],
      ['Health check', 'health-check', 'health-check', 'document'],
      ['Models', 'models', 'models', 'document'],
    ]);
    const [pets, store, health, models] = revision.pages;
    assert.deepEqual(pets.document.nodes.filter((n: any) => n.type === 'openapi-operation').map((n: any) => n.data.path), ['/pets', '/pets', '/pets/{id}']);
    assert.deepEqual(store.document.nodes.map((n: any) => n.data.path), ['/orders']);
    assert.deepEqual(health.document.nodes.map((n: any) => [n.data.method, n.data.path]), [['get', '/health']]);
    assert.deepEqual(models.document.nodes[0].data.schemas, ['Pet', 'Order']);
    assert.ok(revision.pages.every((p: any) => /^[0-9A-Za-z]{20}$/.test(p.id) && p.pages.length === 0));
    assert.equal(new Set(revision.pages.map((p: any) => p.id)).size, 4);

    // Deterministic: the same seed gives the same answer, another seed other ids for the same pages.
    assert.deepEqual(await compute({ models: true }, 'seed-a'), revision);
    const other = await compute({ models: true }, 'seed-b');
    assert.deepEqual(other.pages.map((p: any) => p.title), revision.pages.map((p: any) => p.title));
    assert.ok(other.pages.every((p: any, i: number) => p.id !== revision.pages[i].id));
    // A page's document is getComputedDocument of its props, seeded with the page's id.
    const { data: alone } = await admin.api.spaces.getComputedDocument(space.id, { source: openapiDoc('pets', { doc: 'operations', page: 'pets' }), seed: pets.id });
    assert.deepEqual(alone, pets.document);
    // Without models, no Models page.
    assert.deepEqual((await compute({ models: false }, 'seed-a')).pages.map((p: any) => p.title), ['Pets', 'store', 'Health check']);
  });

  test('by operation: a page per tag with a page per operation below it', async () => {
    const { admin, space } = await petstoreOrg();
    const { data } = (await admin.api.spaces.getComputedRevision(space.id, { source: openapiDoc('pets', { models: false, grouping: 'by-operation' }), seed: 'ops' })) as { data: any };
    const [pets, store, health] = data.pages;
    assert.equal(pets.title, 'Pets');
    assert.deepEqual(pets.document.nodes.map(textOf), ['Everything about pets']);
    assert.deepEqual(pets.pages.map((p: any) => [p.title, p.path]), [
      ['List pets', 'pets/list-pets'],
      ['Add a pet', 'pets/add-a-pet'],
      ['Get a pet', 'pets/get-a-pet'],
    ]);
    assert.deepEqual(pets.pages[2].document.nodes[0].data, { ref: { kind: 'openapi', spec: 'pets' }, path: '/pets/{id}', method: 'get' });
    assert.deepEqual(store.pages.map((p: any) => p.title), ['Place an order']);
    assert.equal(health.title, 'Health check');
  });

  test('downloadLink links to a public spec\'s source URL; bad props are 400s', async () => {
    const { admin, org, space } = await petstoreOrg();
    await addSpec(admin, org.id, 'remote', { url: `${specBase}/openapi.json` });
    const compute = async (slug: string) =>
      ((await admin.api.spaces.getComputedRevision(space.id, { source: openapiDoc(slug, { models: false, downloadLink: true }), seed: 'dl' })).data as any).pages;
    // Private (and a spec given as text has no address at all): no link.
    assert.ok((await compute('remote')).every((p: any) => p.type !== 'link'));
    assert.ok((await compute('pets')).every((p: any) => p.type !== 'link'));
    await admin.api.orgs.updateOpenApiSpecBySlug(org.id, 'remote', { visibility: 'public' as never });
    const link = (await compute('remote')).find((p: any) => p.type === 'link');
    assert.deepEqual(link.target, { kind: 'url', url: `${specBase}/openapi.json` });
    assert.equal(link.title, 'Download the Petstore specification');

    const call = (props: unknown) => admin.api.spaces.getComputedRevision(space.id, { source: openapiDoc('pets', props as never), seed: 's' });
    await expectStatus(call({}), 400, /source\.props\.models: required/);
    await expectStatus(call({ models: true, grouping: 'by-path' }), 400, /source\.props\.grouping/);
    await expectStatus(admin.api.spaces.getComputedRevision(space.id, { source: openapiDoc('nope', { models: true }), seed: 's' }), 404, /no OpenAPI spec/);
  });
});

// An integration script as workerd runs it: it reads the multipart body @gitbook/runtime reads and
// answers the content events as `createContentSource` does.
const script = `
export default {
  async fetch(request) {
    const form = await request.formData();
    const event = JSON.parse(form.get('event'));
    const props = event.props || {};
    if (props.fail) return new Response(JSON.stringify({ error: 'the source is down' }), { status: 500 });
    if (event.type === 'content_compute_document' && props.recurse) {
      // Asks Folio, with its installation token, for the very computation it is answering.
      const env = JSON.parse(form.get('environment'));
      const res = await fetch(env.apiEndpoint + '/v1/spaces/' + event.spaceId + '/content/computed/document', {
        method: 'POST',
        headers: { authorization: 'Bearer ' + env.apiTokens.installation, 'content-type': 'application/json' },
        body: JSON.stringify({ source: { type: 'integration:' + props.recurse + ':' + event.sourceId, props }, seed: 's' }),
      });
      const body = await res.json();
      return Response.json({ document: { markdown: 'Inner ' + res.status + ': ' + (body.error ? body.error.message : 'answered') } });
    }
    if (event.type === 'content_compute_document') {
      const self = event.dependencies.self;
      const tr = event.dependencies.tr;
      const translated = tr ? ' Translation ' + (tr.value ? [tr.value.space, tr.value.revision, tr.value.language].join(' ') : 'none') + '.' : '';
      return Response.json({ document: { markdown: '# ' + props.title + '\\n\\nSpace ' + (self ? self.value.id : 'none') + ' from ' + event.sourceId + '.' + translated + '\\n' } });
    }
    if (event.type === 'content_compute_revision') {
      if (props.bad) return Response.json({ pages: [{ type: 'document', markdown: 'no title' }] });
      return Response.json({
        pages: [
          { type: 'document', title: 'Intro', markdown: 'Hello **there**' },
          { id: 'deep1', type: 'document', title: 'Computed', computed: { type: event.sourceId === 'pages' ? 'integration:' + props.name + ':pages' : 'x', props: { title: 'Deep' } },
            pages: [{ type: 'link', title: 'Home', target: { kind: 'url', url: 'https://example.com/' } }] },
          { type: 'group', title: 'Group', pages: [{ type: 'document', title: 'In group', document: { object: 'document', data: {}, nodes: [{ object: 'block', type: 'paragraph', data: {}, nodes: [{ object: 'text', leaves: [{ object: 'leaf', text: 'JSON body', marks: [] }] }] }] } }] },
          { type: 'computed', title: 'Reference', computed: { type: 'builtin:openapi', dependencies: { spec: { ref: { kind: 'openapi', spec: 'pets' } } }, props: { models: true } } },
          ...(props.translation ? [{ type: 'document', title: 'Translated', computed: { type: 'builtin:translation', props: { space: props.space, document: props.document }, dependencies: { translation: { ref: { kind: 'translation', translation: props.translation } } } } }] : []),
        ],
        files: [{ name: 'logo.png', contentType: 'image/png', downloadURL: 'https://example.com/logo.png', size: 3 }],
      });
    }
    // Other events (installation_setup…) are taken, so none is retried while the server closes.
    return new Response('OK');
  },
};`;

describe('computed content from an integration', () => {
  test('the integration installed on the space computes documents and revisions; failures are 404 or 502 saying why', async () => {
    const { admin, org, space } = await petstoreOrg();
    const { name } = await factories.newIntegration(admin, org.id, {
      title: 'Pages',
      scopes: ['space:content:read'],
      script,
      contentSources: [{ id: 'pages', title: 'Pages', configuration: { componentId: 'pages' } }],
    });
    const source = (props: Record<string, unknown>, dependencies?: Record<string, unknown>) => ({ type: `integration:${name}:pages`, props, ...(dependencies ? { dependencies } : {}) }) as never;

    // Not installed on the space yet.
    await expectStatus(admin.api.spaces.getComputedDocument(space.id, { source: source({ title: 'X' }), seed: 's' }), 404, new RegExp(`"${name}" is not installed on this space`));
    const { data: inst } = await admin.api.integrations.installIntegration(name, { organization: org.id });
    await admin.api.integrations.installIntegrationOnSpace(name, inst.id, { space: space.id });
    // The setup events go to the script first: a runtime started for them is then the one the
    // computations use (two dispatches starting one integration's runtime at once each start one).
    await settleJobs(t);
    const setupEvents = (await admin.api.integrations.listIntegrationEvents(name)).data.items as any[];
    assert.ok(setupEvents.length >= 2 && setupEvents.every((e) => e.status === 'success'), `setup events delivered: ${JSON.stringify(setupEvents.map((e) => [e.payload.type, e.status]))}`);

    const { data: doc } = (await admin.api.spaces.getComputedDocument(space.id, { source: source({ title: 'Hello' }, { self: { ref: { kind: 'space', space: space.id } } }), seed: 's' })) as { data: any };
    assert.deepEqual(doc.nodes.map((n: any) => [n.type, textOf(n)]), [
      ['heading-1', 'Hello'],
      ['paragraph', `Space ${space.id} from pages.`],
    ]);
    // A translation dependency is resolved to the translation's result: none before it has run (or
    // for a translation that does not exist), its target space, revision and language after.
    const handbook = await factories.newSpace(admin, org.id, 'Handbook');
    await factories.mergeChanges(admin, handbook.id, [{ operation: 'insert_page', title: 'Hello', document: { markdown: 'Hello world.\n' } }], { subject: 'Write' });
    const { data: translation } = await admin.api.orgs.createTranslation(org.id, { language: 'fr' as never, source: { space: handbook.id, language: 'en' as never } });
    const trDoc = async () => {
      const dependencies = { tr: { ref: { kind: 'translation', translation: translation.id } }, missing: { ref: { kind: 'translation', translation: 'nope' } } };
      const { data } = (await admin.api.spaces.getComputedDocument(space.id, { source: source({ title: 'T' }, dependencies), seed: 's' })) as { data: any };
      return textOf(data.nodes[1]);
    };
    assert.equal(await trDoc(), 'Space none from pages. Translation none.');
    await admin.api.orgs.runTranslation(org.id, translation.id);
    await settleJobs(t);
    const { data: ran } = (await admin.api.orgs.getTranslation(org.id, translation.id)) as { data: any };
    assert.ok(ran.status === 'completed' && !ran.error, `translation run finished: ${JSON.stringify(ran)}`);
    const result = ran.result;
    assert.equal(await trDoc(), `Space none from pages. Translation ${result.space} ${result.revision} fr.`);
    // A page of the integration's revision computed from the translation gets the translated document.
    const hello = ((await admin.api.spaces.listPages(handbook.id)).data.pages[0] as any).documentId;
    const translatedPages = ((await admin.api.spaces.getComputedRevision(space.id, { source: source({ name, translation: translation.id, space: handbook.id, document: hello }), seed: 'r' })).data as any).pages;
    assert.deepEqual(translatedPages.at(-1).document.nodes.map(textOf), ['HELLO WORLD.']);
    await expectStatus(
      admin.api.spaces.getComputedRevision(space.id, { source: source({ name, translation: translation.id, space: handbook.id, document: 'nope' }), seed: 'r' }),
      502,
      /pages\[4\]\.computed\.props\.document: no document "nope"/,
    );
    await expectStatus(
      admin.api.spaces.getComputedDocument(space.id, { source: source({ title: 'T' }, { tr: { ref: { kind: 'translation' } } }), seed: 's' }),
      400,
      /source\.dependencies\.tr\.ref\.translation: required/,
    );

    // A handler asking Folio for the computation it is answering is refused at once (not left to
    // wait on itself until the integration timeout).
    const started = Date.now();
    const { data: loop } = (await admin.api.spaces.getComputedDocument(space.id, { source: source({ recurse: name }), seed: 's' })) as { data: any };
    assert.match(textOf(loop.nodes[0]), /^Inner 409: The integration ".*" asked for the computation it is answering/);
    assert.ok(Date.now() - started < 10_000, 'answered well before the integration timeout');

    const events = (await admin.api.integrations.listIntegrationEvents(name)).data.items as any[];
    const computeEvent = events.find((e) => e.payload.type === 'content_compute_document');
    assert.equal(computeEvent?.status, 'success');
    assert.equal(computeEvent.payload.spaceId, space.id);

    const { data: revision } = (await admin.api.spaces.getComputedRevision(space.id, { source: source({ name }), seed: 'r' })) as { data: any };
    const [intro, computed, group, reference] = revision.pages;
    assert.equal(intro.title, 'Intro');
    assert.equal(intro.slug, 'intro');
    assert.deepEqual(intro.document.nodes.map(textOf), ['Hello there']);
    assert.equal(computed.id, 'deep1');
    // The page's computed source was asked of the integration: its document is that answer.
    assert.deepEqual(computed.document.nodes.map(textOf), ['Deep', `Space none from pages.`]);
    assert.deepEqual(computed.pages.map((p: any) => [p.type, p.title, p.target]), [['link', 'Home', { kind: 'url', url: 'https://example.com/' }]]);
    assert.equal(group.type, 'group');
    assert.deepEqual(group.pages.map((p: any) => [p.path, p.document.nodes.map(textOf)]), [['group/in-group', ['JSON body']]]);
    assert.equal(reference.type, 'computed');
    assert.equal(reference.computed.type, 'builtin:openapi');
    assert.equal(revision.files.length, 1);
    assert.equal(revision.files[0].name, 'logo.png');
    assert.match(revision.files[0].id, /^[0-9A-Za-z]{20}$/);
    // Ids the integration leaves out come from the seed.
    const again = ((await admin.api.spaces.getComputedRevision(space.id, { source: source({ name }), seed: 'r' })).data as any).pages;
    assert.deepEqual(again.map((p: any) => p.id), revision.pages.map((p: any) => p.id));

    // An installation token that may only read the space computes too: computing stores nothing.
    const { data: tok } = await admin.api.integrations.createIntegrationInstallationToken(name, inst.id);
    const { data: viaToken } = (await t.client(tok.token).spaces.getComputedDocument(space.id, { source: source({ title: 'Via token' }), seed: 's' })) as { data: any };
    assert.equal(textOf(viaToken.nodes[0]), 'Via token');

    await expectStatus(admin.api.spaces.getComputedDocument(space.id, { source: source({ fail: true }), seed: 's' }), 502, /failed to compute the content \(it answered 500: the source is down\)/);
    await expectStatus(admin.api.spaces.getComputedRevision(space.id, { source: source({ bad: true }), seed: 's' }), 502, /pages\[0\]\.title: required/);
    await expectStatus(admin.api.spaces.getComputedDocument(space.id, { source: { type: `integration:${name}:pages` } as never, seed: 's' }), 400, /source\.props: required/);
    await expectStatus(
      admin.api.spaces.getComputedDocument(space.id, { source: { type: `integration:${name}:other`, props: {} } as never, seed: 's' }),
      404,
      /declares no content source "other" \(its content sources: pages\)/,
    );
  });
});
