import assert from 'node:assert/strict';
import { createServer, type IncomingMessage, type Server as HttpServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, test } from 'node:test';
import { SiteMcpServerTransport } from '@gitbook/api';
import { SignJWT } from 'jose';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { CallToolRequestSchema, ListToolsRequestSchema, type CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { sql, type Kysely } from 'kysely';
import * as sealing from '../src/platform/db/migrations/0027_mcp_headers_sealed.ts';
import { mergePages, newMember, newOrg, newSpace, pagesChanges } from './support/factories.ts';
import { expectStatus, startTestServer, type TestServer } from './support/server.ts';
import { publishedSite } from './support/site.ts';

/**
 * MCP servers (src/mcp/): the official MCP client (the SDK's Client over Streamable HTTP) against
 * a published site's server at <site>/~gitbook/mcp and the organization's at
 * /v1/orgs/{id}/mcp, and the site MCP server settings through the official API client.
 */

let t: TestServer;
before(async () => {
  // Sites read on every request (each change shows at once); connected MCP servers on 127.0.0.1.
  t = await startTestServer({ siteCacheTtlMs: 0, fetchAllowPrivate: true });
});
after(async () => t?.close());

async function connect(url: string, token?: string): Promise<Client> {
  const client = new Client({ name: 'folio-test', version: '1.0.0' });
  await client.connect(new StreamableHTTPClientTransport(new URL(url), token ? { requestInit: { headers: { authorization: `Bearer ${token}` } } } : {}));
  return client;
}

async function call(client: Client, name: string, args: Record<string, unknown> = {}) {
  const result = (await client.callTool({ name, arguments: args })) as CallToolResult;
  const text = result.content.map((c) => (c.type === 'text' ? c.text : '')).join('\n');
  return { text, isError: !!result.isError, data: result.structuredContent as any };
}

const PAGES = [
  { title: 'Welcome', markdown: 'Welcome to the handbook.\n' },
  { title: 'Guides', markdown: 'All guides.\n' },
  { title: 'Setup', parent: 'Guides', markdown: 'Install the **zeppelin** toolkit.\n\n## Configure\n\nEdit the file.\n' },
];

test("a published site's MCP server searches, reads pages and lists the contents; an unpublished site has none", async () => {
  const { admin, org } = await newOrg(t);
  const { site, base } = await publishedSite(t, admin, org.id, PAGES, { title: 'Handbook' });
  const client = await connect(`${t.url}${base}~gitbook/mcp`);
  const { tools } = await client.listTools();
  assert.deepEqual(tools.map((x) => x.name).sort(), ['read_page', 'search_documentation', 'table_of_contents']);

  const found = await call(client, 'search_documentation', { query: 'zeppelin' });
  assert.equal(found.isError, false);
  const hit = found.data.results[0];
  assert.equal(hit.title, 'Setup');
  assert.equal(hit.url.split('#')[0], `${t.url}${base}guides/setup`);
  assert.match(hit.snippet, /zeppelin/);

  // A page by the address search gave, and by its path; as the site's markdown page serves it.
  const page = await call(client, 'read_page', { path: hit.url });
  assert.match(page.text, /# Setup/);
  assert.match(page.text, /Install the \*\*zeppelin\*\* toolkit/);
  assert.equal((await call(client, 'read_page', { path: 'guides/setup' })).text, page.text);
  assert.equal(page.text, (await t.request('GET', `${base}guides/setup.md`)).body);
  const missing = await call(client, 'read_page', { path: 'nowhere' });
  assert.equal(missing.isError, true);
  assert.match(missing.text, /Page not found/);

  const toc = await call(client, 'table_of_contents');
  assert.match(toc.text, /\[Welcome\]\(.*\)/);
  assert.match(toc.text, /\n {2}- \[Setup\]\([^)]*guides\/setup\)/);
  await client.close();

  await admin.api.orgs.unpublishSite(org.id, site.id, {} as never);
  await assert.rejects(connect(`${t.url}${base}~gitbook/mcp`), /404/);
});

test("a share-link site's MCP server needs its key and a visitor-auth site's a visitor token, as their pages do", async () => {
  const { admin, org } = await newOrg(t);
  const shared = await publishedSite(t, admin, org.id, [{ title: 'Internal', markdown: 'The **quokka** plan.\n' }], { title: 'Shared', visibility: 'share-link' });
  const { data: link } = await admin.api.orgs.createSiteShareLink(org.id, shared.site.id, { name: 'partners' });
  const key = new URL(link.urls.published!).searchParams.get('share')!;
  const endpoint = `${t.url}${shared.base}~gitbook/mcp`;

  await assert.rejects(connect(endpoint), /404/);
  await assert.rejects(connect(`${endpoint}?share=not-the-key`), /404/);
  for (const client of [await connect(`${endpoint}?share=${key}`), await connect(endpoint, key)]) {
    assert.match((await call(client, 'search_documentation', { query: 'quokka' })).text, /Internal/);
    assert.match((await call(client, 'read_page', { path: '' })).text, /The \*\*quokka\*\* plan/);
    await client.close();
  }
  // A deactivated link opens nothing, here as on the pages.
  await admin.api.orgs.updateSiteShareLinkById(org.id, shared.site.id, link.id, { active: false });
  await assert.rejects(connect(`${endpoint}?share=${key}`), /404/);

  // A visitor-auth site: a token its backend signed, whose claims decide adaptive content.
  const authed = await publishedSite(t, admin, org.id, [{ title: 'Plans', markdown: 'For everyone.\n\n{% if visitor.claims.plan === "pro" %}\nPro features are on.\n{% endif %}\n' }, { title: 'Pro', markdown: '---\nif: visitor.claims.plan === "pro"\n---\n\nThe **pro** console.\n' }], { title: 'Members', visibility: 'visitor-auth' });
  const { data: auth } = await admin.api.orgs.getSitePublishingAuthById(org.id, authed.site.id);
  const sign = (claims: Record<string, unknown>) => new SignJWT(claims).setProtectedHeader({ alg: 'HS256' }).setExpirationTime('1h').sign(new TextEncoder().encode((auth as { privateKey: string }).privateKey));
  const members = `${t.url}${authed.base}~gitbook/mcp`;
  await assert.rejects(connect(members), /401/);
  const pro = await connect(members, await sign({ plan: 'pro' }));
  assert.match((await call(pro, 'read_page', { path: 'pro' })).text, /The \*\*pro\*\* console/);
  const free = await connect(`${members}?jwt_token=${await sign({ plan: 'free' })}`);
  assert.equal((await call(free, 'read_page', { path: 'pro' })).isError, true);
  // Blocks under a condition the visitor does not meet are left out of the markdown, as from the page.
  assert.match((await call(pro, 'read_page', { path: 'plans' })).text, /For everyone\.[\s\S]*Pro features are on\./);
  const plans = (await call(free, 'read_page', { path: 'plans' })).text;
  assert.match(plans, /For everyone\./);
  assert.doesNotMatch(plans, /Pro features|visitor\.claims/);
  assert.doesNotMatch((await call(free, 'table_of_contents')).text, /Pro/);
  // Nor are they found or quoted by the site's search: only the visitor who meets the condition
  // finds the page by its words.
  assert.match((await call(pro, 'search_documentation', { query: 'features' })).text, /Plans/);
  assert.doesNotMatch((await call(free, 'search_documentation', { query: 'features' })).text, /Plans/);
  const everyone = (await call(free, 'search_documentation', { query: 'everyone' })).text;
  assert.match(everyone, /Plans/);
  assert.doesNotMatch(everyone, /Pro features/);
  await pro.close();
  await free.close();
});

test("the organization's MCP server: an editor searches, opens a change request and edits a page; a reader cannot edit", async () => {
  const { admin, org } = await newOrg(t);
  const space = await newSpace(admin, org.id, 'Runbooks');
  await mergePages(t, admin, space.id, pagesChanges([{ title: 'Deploy', markdown: 'Deploy with the **walrus** script.\n' }]), { subject: 'content' });
  const editor = await newMember(t, org.id, 'edit', 'Ed Editor');
  const reader = await newMember(t, org.id, 'read', 'Rae Reader');
  const endpoint = `${t.url}/v1/orgs/${org.id}/mcp`;

  const ed = await connect(endpoint, editor.token);
  const names = (await ed.listTools()).tools.map((x) => x.name);
  for (const name of ['search', 'read_page', 'list_pages', 'list_change_requests', 'get_change_request', 'create_change_request', 'edit_page']) assert.ok(names.includes(name), name);
  assert.ok(!names.includes('merge_change_request'), 'an editor may not merge: no merge tool');

  const found = await call(ed, 'search', { query: 'walrus' });
  assert.equal(found.data.results[0].title, 'Deploy');
  assert.equal(found.data.results[0].spaceId, space.id);

  const opened = await call(ed, 'create_change_request', { spaceId: space.id, subject: 'Safer deploys' });
  assert.equal(opened.isError, false, opened.text);
  const cr = opened.data.changeRequest;
  const edited = await call(ed, 'edit_page', { spaceId: space.id, changeRequest: String(cr.number), page: 'deploy', markdown: '# Deploy\n\nDeploy with the **narwhal** script, twice.\n' });
  assert.equal(edited.isError, false, edited.text);

  // The edit is in the change request, as the API reads it, and not yet in the space.
  const { data: inCr } = await admin.api.spaces.getPageInChangeRequestByPath(space.id, cr.id, 'deploy', { format: 'markdown' } as never);
  assert.match((inCr as { markdown: string }).markdown, /\*\*narwhal\*\* script, twice/);
  assert.match((await call(ed, 'read_page', { spaceId: space.id, page: 'deploy' })).text, /walrus/);
  const listed = await call(ed, 'list_change_requests', { spaceId: space.id });
  assert.equal(listed.data.changeRequests[0].subject, 'Safer deploys');
  const detail = await call(ed, 'get_change_request', { spaceId: space.id, changeRequest: cr.id });
  assert.equal(detail.data.changes[0].page.title, 'Deploy');
  await ed.close();

  const rd = await connect(endpoint, reader.token);
  const readerTools = (await rd.listTools()).tools.map((x) => x.name);
  assert.ok(readerTools.includes('search') && !readerTools.includes('edit_page') && !readerTools.includes('create_change_request'));
  // Called anyway, the API's own rules refuse it.
  const refused = await call(rd, 'edit_page', { spaceId: space.id, changeRequest: cr.id, page: 'deploy', markdown: 'Vandalized.\n' });
  assert.equal(refused.isError, true);
  await rd.close();

  // An admin may merge, so has the tool, and merging works.
  const ad = await connect(endpoint, admin.token);
  assert.equal((await call(ad, 'merge_change_request', { spaceId: space.id, changeRequest: cr.id })).isError, false);
  assert.match((await call(ad, 'read_page', { spaceId: space.id, page: 'deploy' })).text, /narwhal/);
  await ad.close();

  // No token, or an outsider: refused like any /v1 call.
  await assert.rejects(connect(endpoint), /401/);
  await assert.rejects(connect(endpoint, (await t.user('Outsider')).token), /404/);
});

/** A small MCP server on 127.0.0.1 with one tool, recording the headers of each call. */
async function externalMcpServer(): Promise<{ url: string; seen: IncomingMessage['headers'][]; close: () => Promise<void> }> {
  const seen: IncomingMessage['headers'][] = [];
  const http: HttpServer = createServer(async (req, res) => {
    seen.push(req.headers);
    const server = new Server({ name: 'weather', version: '1.0.0' }, { capabilities: { tools: {} } });
    server.setRequestHandler(ListToolsRequestSchema, async () => ({
      tools: [{ name: 'forecast', description: 'The weather forecast of a city', inputSchema: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] } }],
    }));
    server.setRequestHandler(CallToolRequestSchema, async (request) => ({ content: [{ type: 'text', text: `Sunny in ${String(request.params.arguments?.city)}` }] }));
    const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
    await server.connect(transport);
    await transport.handleRequest(req, res);
  });
  await new Promise<void>((resolve) => http.listen(0, '127.0.0.1', resolve));
  return { url: `http://127.0.0.1:${(http.address() as AddressInfo).port}/mcp`, seen, close: () => new Promise((resolve) => http.close(() => resolve())) };
}

test("a site's MCP server settings: CRUD through the official client, and the connected server's tools offered on the site", async () => {
  const { admin, org } = await newOrg(t);
  const { site, base } = await publishedSite(t, admin, org.id, PAGES, { title: 'Docs' });
  const external = await externalMcpServer();
  try {
    const { data: created, status } = await admin.api.orgs.createSiteMcpServer(org.id, site.id, { name: 'Weather', url: external.url, transport: SiteMcpServerTransport.Http, headers: { 'x-api-key': 'sekret' } });
    assert.equal(status, 201);
    assert.equal(created.object, 'site-mcp-server');
    assert.deepEqual(created.headers, { 'x-api-key': 'sekret' });
    assert.equal((await admin.api.orgs.getSiteMcpServerById(org.id, site.id, created.id)).data.url, external.url);
    const { data: list } = await admin.api.orgs.listSiteMcpServers(org.id, site.id);
    assert.deepEqual(list.items.map((s) => s.id), [created.id]);

    // The headers are credentials: sealed at rest with the instance's secret key, never in plain text.
    const db = t.server.services.db;
    const stored = async () => (await db.selectFrom('site_mcp_servers').select('headers_sealed').where('id', '=', created.id).executeTakeFirstOrThrow()).headers_sealed;
    assert.match(await stored(), /^v1\./);
    assert.ok(!(await stored()).includes('sekret'));
    // Rows from before the migration (plain headers) are sealed by it, and read back the same.
    await sealing.down(db as Kysely<any>);
    const plain = await sql<{ headers: unknown }>`SELECT headers FROM site_mcp_servers WHERE id = ${created.id}`.execute(db);
    assert.deepEqual(plain.rows[0]!.headers, { 'x-api-key': 'sekret' });
    await sealing.up(db as Kysely<any>);
    assert.ok(!(await stored()).includes('sekret'));
    assert.deepEqual((await admin.api.orgs.getSiteMcpServerById(org.id, site.id, created.id)).data.headers, { 'x-api-key': 'sekret' });

    // Its tools join the site's own, and calls reach it with its headers (never shown to visitors).
    const client = await connect(`${t.url}${base}~gitbook/mcp`);
    const names = (await client.listTools()).tools.map((x) => x.name);
    assert.ok(names.includes('weather__forecast'), names.join());
    assert.equal((await call(client, 'weather__forecast', { city: 'Lyon' })).text, 'Sunny in Lyon');
    assert.ok(external.seen.length > 0 && external.seen.every((h) => h['x-api-key'] === 'sekret'));

    // A condition the visitor does not meet hides it; null removes the condition again.
    const { data: conditioned } = await admin.api.orgs.updateSiteMcpServerById(org.id, site.id, created.id, { condition: 'visitor.claims.plan === "pro"' });
    assert.equal(conditioned.condition, 'visitor.claims.plan === "pro"');
    assert.equal(conditioned.transport, 'http', 'what a change does not name stays as it was');
    assert.ok(!(await client.listTools()).tools.some((x) => x.name === 'weather__forecast'));
    assert.equal((await call(client, 'weather__forecast', { city: 'Lyon' })).isError, true);
    const { data: cleared } = await admin.api.orgs.updateSiteMcpServerById(org.id, site.id, created.id, { condition: null, name: 'Meteo' });
    assert.equal(cleared.condition, undefined);
    assert.ok((await client.listTools()).tools.some((x) => x.name === 'meteo__forecast'));
    await client.close();

    // Members who are not admins see none of it (headers are credentials); bad input is a 400.
    const editor = await newMember(t, org.id, 'create', 'Cy Creator');
    await expectStatus(editor.api.orgs.listSiteMcpServers(org.id, site.id), 403);
    await expectStatus(admin.api.orgs.createSiteMcpServer(org.id, site.id, { name: 'X', url: 'ftp://example.com/mcp', headers: {} }), 400, /http or https/);
    await expectStatus(admin.api.orgs.createSiteMcpServer(org.id, site.id, { name: 'X', url: 'https://example.com/mcp', headers: { Host: 'evil' } }), 400, /Folio sets this header/);

    assert.equal((await admin.api.orgs.deleteSiteMcpServerById(org.id, site.id, created.id)).status, 205);
    assert.equal((await admin.api.orgs.deleteSiteMcpServerById(org.id, site.id, created.id)).status, 204);
    await expectStatus(admin.api.orgs.getSiteMcpServerById(org.id, site.id, created.id), 404);
  } finally {
    await external.close();
  }
});
