import { sql, type Kysely } from 'kysely';

/**
 * API tokens can be named, expire and be revoked. A revoked token keeps its row (with when it was
 * revoked) so a listing still shows it; neither an expired nor a revoked token authenticates.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await sql`
    ALTER TABLE api_tokens
      ADD COLUMN name text,
      ADD COLUMN expires_at timestamptz(3),
      ADD COLUMN revoked_at timestamptz(3);
  `.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`ALTER TABLE api_tokens DROP COLUMN revoked_at, DROP COLUMN expires_at, DROP COLUMN name;`.execute(db);
}
