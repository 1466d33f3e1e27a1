import { sql } from 'kysely';
import { json, type Db } from '../platform/db/database.ts';
import type { SiteMcpServerRow } from '../platform/db/schema.ts';
import { newId } from '../platform/ids.ts';
import { paginate, type PageRequest } from '../platform/paging.ts';

/** The SQL of the MCP servers connected to sites: every function takes the organization id and the site id. */

export interface McpServerValues {
  name: string;
  url: string;
  transport: 'sse' | 'http';
  headers: Record<string, string>;
  condition: string | null;
}

export async function insertMcpServer(db: Db, organizationId: string, siteId: string, v: McpServerValues, now = new Date()): Promise<SiteMcpServerRow> {
  return db
    .insertInto('site_mcp_servers')
    .values({ id: newId(), organization_id: organizationId, site_id: siteId, ...v, headers: json(v.headers), created_at: now, updated_at: null })
    .returningAll()
    .executeTakeFirstOrThrow();
}

export async function findMcpServer(db: Db, organizationId: string, siteId: string, id: string): Promise<SiteMcpServerRow | undefined> {
  return db.selectFrom('site_mcp_servers').selectAll().where('organization_id', '=', organizationId).where('site_id', '=', siteId).where('id', '=', id).executeTakeFirst();
}

export async function updateMcpServer(db: Db, organizationId: string, siteId: string, id: string, changes: Partial<McpServerValues>, now = new Date()) {
  const { headers, ...rest } = changes;
  return db
    .updateTable('site_mcp_servers')
    .set({ ...rest, ...(headers ? { headers: json(headers) } : {}), updated_at: now })
    .where('organization_id', '=', organizationId)
    .where('site_id', '=', siteId)
    .where('id', '=', id)
    .returningAll()
    .executeTakeFirst();
}

/** Deletes one; false when there was none. */
export async function deleteMcpServer(db: Db, organizationId: string, siteId: string, id: string): Promise<boolean> {
  const result = await db.deleteFrom('site_mcp_servers').where('organization_id', '=', organizationId).where('site_id', '=', siteId).where('id', '=', id).executeTakeFirst();
  return Number(result.numDeletedRows) > 0;
}

/** A page of a site's MCP servers, oldest first. */
export async function pageMcpServers(db: Db, organizationId: string, siteId: string, page: PageRequest) {
  const base = db.selectFrom('site_mcp_servers').selectAll().where('organization_id', '=', organizationId).where('site_id', '=', siteId);
  return paginate(base, { kind: 'site-mcp-servers', sortExpr: null, seqExpr: sql.ref('seq'), direction: 'asc' }, page);
}

/** Every MCP server of a site (a site has few), oldest first: what its served MCP server offers. */
export async function siteMcpServers(db: Db, organizationId: string, siteId: string): Promise<SiteMcpServerRow[]> {
  return db.selectFrom('site_mcp_servers').selectAll().where('organization_id', '=', organizationId).where('site_id', '=', siteId).orderBy('seq').limit(100).execute();
}
