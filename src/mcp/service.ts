import type { Ctx } from '../platform/context.ts';
import { BadRequestError, NotFoundError } from '../platform/errors.ts';
import type { PageRequest } from '../platform/paging.ts';
import { requireSite } from '../sites/access.ts';
import { presentMcpServer } from './presenter.ts';
import type { CreateSiteMcpServerInput, UpdateSiteMcpServerInput } from './schemas.ts';
import * as store from './store.ts';

/**
 * The MCP servers connected to a site. What they mean: the site's own MCP server
 * (`<site>/~gitbook/mcp`, see site-server.ts) also offers each connected server's tools to the
 * visitors its `condition` admits, calling it with its `headers` from Folio (a visitor never sees
 * them). Their headers are credentials, so only the site's administrators read or change them.
 */

/** At most this many servers per site: each is listed on every tools/list of the site's MCP server. */
export const MAX_SERVERS_PER_SITE = 20;

/** Headers Folio sets itself on every call to a connected server. */
const RESERVED = new Set([
  'host', 'content-length', 'content-type', 'accept', 'accept-encoding', 'connection', 'keep-alive', 'transfer-encoding', 'te', 'trailer', 'upgrade',
  'proxy-authorization', 'proxy-connection', 'mcp-session-id', 'mcp-protocol-version', 'last-event-id',
]);

function checkUrl(url: string, field = 'url'): string {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new BadRequestError(`${field}: not a valid URL`);
  }
  if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') throw new BadRequestError(`${field}: an MCP server is reached over http or https`);
  if (parsed.username || parsed.password) throw new BadRequestError(`${field}: put credentials in headers, not in the URL`);
  return parsed.href;
}

function checkHeaders(headers: Record<string, string>): Record<string, string> {
  const seen = new Set<string>();
  for (const name of Object.keys(headers)) {
    const lower = name.toLowerCase();
    if (RESERVED.has(lower)) throw new BadRequestError(`headers.${name}: Folio sets this header itself`);
    if (seen.has(lower)) throw new BadRequestError(`headers.${name}: the header is named twice (header names ignore case)`);
    seen.add(lower);
  }
  return headers;
}

const conditionOf = (condition: string | null | undefined) => (condition && condition.trim() ? condition : null);

export async function listSiteMcpServers(ctx: Ctx, organizationId: string, siteId: string, page: PageRequest) {
  const { site } = await requireSite(ctx, organizationId, siteId, 'admin', 'see the MCP servers of the site');
  const found = await store.pageMcpServers(ctx.db, ctx.config, site.organization_id, site.id, page);
  return { ...found, items: found.items.map((row) => presentMcpServer(ctx.urls, row)) };
}

export async function createSiteMcpServer(ctx: Ctx, organizationId: string, siteId: string, input: CreateSiteMcpServerInput) {
  const { site } = await requireSite(ctx, organizationId, siteId, 'admin', 'connect MCP servers to the site');
  const values = { name: input.name, url: checkUrl(input.url), transport: input.transport ?? 'sse', headers: checkHeaders(input.headers), condition: conditionOf(input.condition) };
  if ((await store.countMcpServers(ctx.db, site.organization_id, site.id)) >= MAX_SERVERS_PER_SITE) {
    throw new BadRequestError(`A site connects at most ${MAX_SERVERS_PER_SITE} MCP servers: delete one first`);
  }
  return presentMcpServer(ctx.urls, await store.insertMcpServer(ctx.db, ctx.config, site.organization_id, site.id, values));
}

export async function getSiteMcpServer(ctx: Ctx, organizationId: string, siteId: string, id: string) {
  const { site } = await requireSite(ctx, organizationId, siteId, 'admin', 'see the MCP servers of the site');
  const row = await store.findMcpServer(ctx.db, ctx.config, site.organization_id, site.id, id);
  if (!row) throw new NotFoundError('MCP server');
  return presentMcpServer(ctx.urls, row);
}

export async function updateSiteMcpServer(ctx: Ctx, organizationId: string, siteId: string, id: string, input: UpdateSiteMcpServerInput) {
  const { site } = await requireSite(ctx, organizationId, siteId, 'admin', 'change the MCP servers of the site');
  const row = await store.updateMcpServer(ctx.db, ctx.config, site.organization_id, site.id, id, {
    ...(input.name !== undefined ? { name: input.name } : {}),
    ...(input.url !== undefined ? { url: checkUrl(input.url) } : {}),
    ...(input.transport !== undefined ? { transport: input.transport } : {}),
    ...(input.headers !== undefined ? { headers: checkHeaders(input.headers) } : {}),
    // Absent: unchanged; null (or empty): removed.
    ...(input.condition !== undefined ? { condition: conditionOf(input.condition) } : {}),
  });
  if (!row) throw new NotFoundError('MCP server');
  return presentMcpServer(ctx.urls, row);
}

/** True when it was deleted, false when there was none (the official API answers 205 and 204). */
export async function deleteSiteMcpServer(ctx: Ctx, organizationId: string, siteId: string, id: string): Promise<boolean> {
  const { site } = await requireSite(ctx, organizationId, siteId, 'admin', 'delete MCP servers of the site');
  return store.deleteMcpServer(ctx.db, site.organization_id, site.id, id);
}
