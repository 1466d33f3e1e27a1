import { sql, type Kysely } from 'kysely';
import type { Db } from '../database.ts';
import { decryptSecret, encryptSecret, secretKeyFromEnvironment } from '../../secrets.ts';

/**
 * The headers of the MCP servers connected to sites are credentials: they are kept sealed with
 * the instance's secret key (src/platform/secrets.ts, as git credentials are) in
 * `headers_sealed`, the JSON object encrypted; the plain `headers` column goes. Existing rows are
 * sealed here, with GIT_SECRET_KEY from the environment, or the key kept in the database.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await sql`ALTER TABLE site_mcp_servers ADD COLUMN headers_sealed text`.execute(db);
  const key = secretKeyFromEnvironment();
  const rows = await db.selectFrom('site_mcp_servers').select(['id', 'headers']).execute();
  for (const row of rows as { id: string; headers: unknown }[]) {
    const sealed = await encryptSecret(db as Db, key, JSON.stringify(row.headers ?? {}));
    await db.updateTable('site_mcp_servers').set({ headers_sealed: sealed }).where('id', '=', row.id).execute();
  }
  await sql`ALTER TABLE site_mcp_servers ALTER COLUMN headers_sealed SET NOT NULL`.execute(db);
  await sql`ALTER TABLE site_mcp_servers DROP COLUMN headers`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`ALTER TABLE site_mcp_servers ADD COLUMN headers jsonb NOT NULL DEFAULT '{}'`.execute(db);
  const key = secretKeyFromEnvironment();
  const rows = await db.selectFrom('site_mcp_servers').select(['id', 'headers_sealed']).execute();
  for (const row of rows as { id: string; headers_sealed: string }[]) {
    const headers = await decryptSecret(db as Db, key, row.headers_sealed);
    await db.updateTable('site_mcp_servers').set({ headers: sql`${headers}::jsonb` }).where('id', '=', row.id).execute();
  }
  await sql`ALTER TABLE site_mcp_servers DROP COLUMN headers_sealed`.execute(db);
}
