import { sql, type Kysely } from 'kysely';

/**
 * Content tokens: the `apiToken` of a resolved published URL is an API token restricted to reading
 * one space's content (`scope_space_id`), derived from the caller's token (`parent_token_id`): it
 * stops authenticating when that token is revoked or expires, and goes with it or with the space.
 * Tokens derived before this migration carried all the caller's powers; they are revoked (they
 * lived two hours at most, and new ones are derived differently, so they are never handed out again).
 */
export async function up(db: Kysely<any>): Promise<void> {
  await sql`
    ALTER TABLE api_tokens
      ADD COLUMN scope_space_id text REFERENCES spaces(id) ON DELETE CASCADE,
      ADD COLUMN parent_token_id text REFERENCES api_tokens(id) ON DELETE CASCADE;
    CREATE INDEX api_tokens_scope_space ON api_tokens (scope_space_id) WHERE scope_space_id IS NOT NULL;
    CREATE INDEX api_tokens_parent ON api_tokens (parent_token_id) WHERE parent_token_id IS NOT NULL;
    UPDATE api_tokens SET revoked_at = now()
      WHERE revoked_at IS NULL AND id LIKE 'c%' AND name LIKE 'published content %'
        AND expires_at IS NOT NULL AND expires_at <= created_at + interval '2 hours';
  `.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`ALTER TABLE api_tokens DROP COLUMN parent_token_id, DROP COLUMN scope_space_id;`.execute(db);
}
