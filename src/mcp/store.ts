import { sql } from 'kysely';
import type { Config } from '../platform/config.ts';
import type { Db } from '../platform/db/database.ts';
import type { SiteMcpServerRow } from '../platform/db/schema.ts';
import { newId } from '../platform/ids.ts';
import { paginate, type PageRequest } from '../platform/paging.ts';
import { decryptSecret, encryptSecret } from '../platform/secrets.ts';

/**
 * The SQL of the MCP servers connected to sites: every function takes the organization id and the
 * site id. Their headers are credentials: stored sealed with the instance's secret key (`key`),
 * opened as they are read.
 */

export interface McpServerValues {
  name: string;
  url: string;
  transport: 'sse' | 'http';
  headers: Record<string, string>;
  condition: string | null;
}

/** A connected MCP server with its headers opened. */
export type McpServer = Omit<SiteMcpServerRow, 'headers_sealed'> & { headers: Record<string, string> };

type SecretKey = Pick<Config, 'gitSecretKey'>;

async function opened(db: Db, key: SecretKey, row: SiteMcpServerRow): Promise<McpServer> {
  const { headers_sealed, ...rest } = row;
  return { ...rest, headers: JSON.parse(await decryptSecret(db, key, headers_sealed)) as Record<string, string> };
}

const sealed = async (db: Db, key: SecretKey, headers: Record<string, string>) => encryptSecret(db, key, JSON.stringify(headers));

export async function insertMcpServer(db: Db, key: SecretKey, organizationId: string, siteId: string, v: McpServerValues, now = new Date()): Promise<McpServer> {
  const { headers, ...rest } = v;
  const row = await db
    .insertInto('site_mcp_servers')
    .values({ id: newId(), organization_id: organizationId, site_id: siteId, ...rest, headers_sealed: await sealed(db, key, headers), created_at: now, updated_at: null })
    .returningAll()
    .executeTakeFirstOrThrow();
  return opened(db, key, row);
}

export async function findMcpServer(db: Db, key: SecretKey, organizationId: string, siteId: string, id: string): Promise<McpServer | undefined> {
  const row = await db.selectFrom('site_mcp_servers').selectAll().where('organization_id', '=', organizationId).where('site_id', '=', siteId).where('id', '=', id).executeTakeFirst();
  return row && opened(db, key, row);
}

export async function updateMcpServer(db: Db, key: SecretKey, organizationId: string, siteId: string, id: string, changes: Partial<McpServerValues>, now = new Date()): Promise<McpServer | undefined> {
  const { headers, ...rest } = changes;
  const row = await db
    .updateTable('site_mcp_servers')
    .set({ ...rest, ...(headers ? { headers_sealed: await sealed(db, key, headers) } : {}), updated_at: now })
    .where('organization_id', '=', organizationId)
    .where('site_id', '=', siteId)
    .where('id', '=', id)
    .returningAll()
    .executeTakeFirst();
  return row && opened(db, key, row);
}

/** Deletes one; false when there was none. */
export async function deleteMcpServer(db: Db, organizationId: string, siteId: string, id: string): Promise<boolean> {
  const result = await db.deleteFrom('site_mcp_servers').where('organization_id', '=', organizationId).where('site_id', '=', siteId).where('id', '=', id).executeTakeFirst();
  return Number(result.numDeletedRows) > 0;
}

/** A page of a site's MCP servers, oldest first. */
export async function pageMcpServers(db: Db, key: SecretKey, organizationId: string, siteId: string, page: PageRequest) {
  const base = db.selectFrom('site_mcp_servers').selectAll().where('organization_id', '=', organizationId).where('site_id', '=', siteId);
  const found = await paginate(base, { kind: 'site-mcp-servers', sortExpr: null, seqExpr: sql.ref('seq'), direction: 'asc' }, page);
  return { ...found, items: await Promise.all(found.items.map((row) => opened(db, key, row))) };
}

/** How many servers a site connects. */
export async function countMcpServers(db: Db, organizationId: string, siteId: string): Promise<number> {
  const row = await db
    .selectFrom('site_mcp_servers')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .where('organization_id', '=', organizationId)
    .where('site_id', '=', siteId)
    .executeTakeFirstOrThrow();
  return Number(row.n);
}

/** Every MCP server of a site (a site has few), oldest first: what its served MCP server offers. */
export async function siteMcpServers(db: Db, key: SecretKey, organizationId: string, siteId: string): Promise<McpServer[]> {
  const rows = await db.selectFrom('site_mcp_servers').selectAll().where('organization_id', '=', organizationId).where('site_id', '=', siteId).orderBy('seq').limit(100).execute();
  return Promise.all(rows.map((row) => opened(db, key, row)));
}
