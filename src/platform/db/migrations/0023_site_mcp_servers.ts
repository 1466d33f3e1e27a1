import { sql, type Kysely } from 'kysely';

/**
 * The MCP servers connected to a site (listSiteMcpServers and the rest, src/mcp/): other MCP
 * servers whose tools the site's own MCP server (`<site>/~gitbook/mcp`) offers to its visitors,
 * each under an optional adaptive-content condition. `headers` are sent to that server with every
 * call (its credentials): only the site's administrators read them back.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await sql`
    CREATE TABLE site_mcp_servers (
      id text PRIMARY KEY,
      seq bigint GENERATED ALWAYS AS IDENTITY UNIQUE,
      organization_id text NOT NULL,
      site_id text NOT NULL REFERENCES sites(id) ON DELETE CASCADE,
      name text NOT NULL,
      url text NOT NULL,
      transport text NOT NULL,
      headers jsonb NOT NULL DEFAULT '{}',
      condition text,
      created_at timestamptz(3) NOT NULL,
      updated_at timestamptz(3)
    );
    CREATE INDEX site_mcp_servers_site ON site_mcp_servers (site_id, seq);
  `.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`DROP TABLE site_mcp_servers`.execute(db);
}
