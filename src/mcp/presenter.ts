import type { McpServer } from './store.ts';
import type { Urls } from '../platform/urls.ts';

/** A connected MCP server as the API shows it (to the site's administrators: its headers included). */
export function presentMcpServer(urls: Urls, row: McpServer) {
  return {
    object: 'site-mcp-server' as const,
    id: row.id,
    name: row.name,
    url: row.url,
    transport: row.transport,
    headers: row.headers,
    ...(row.condition ? { condition: row.condition } : {}),
    urls: { location: urls.api(`/orgs/${row.organization_id}/sites/${row.site_id}/mcp-servers/${row.id}`) },
  };
}
