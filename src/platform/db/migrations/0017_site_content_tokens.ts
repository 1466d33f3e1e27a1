import { sql, type Kysely } from 'kysely';

/**
 * A content token resolved through a site also reads what that site publishes: a visitor who is not
 * a member of the space behind a public, unlisted, share-link or visitor-auth site gets a token that
 * reads the space's current content while the site still publishes it to them. The grant is kept as
 * it was given (the site, its visibility then, the share link used, a hash of the key that signed the
 * visitor's JWT) and checked again at each use.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await sql`
    ALTER TABLE api_tokens
      ADD COLUMN scope_site_id text REFERENCES sites(id) ON DELETE CASCADE,
      ADD COLUMN scope_site_visibility text,
      ADD COLUMN scope_share_link_id text REFERENCES site_share_links(id) ON DELETE CASCADE,
      ADD COLUMN scope_site_key_hash text;
  `.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`ALTER TABLE api_tokens DROP COLUMN scope_site_key_hash, DROP COLUMN scope_share_link_id, DROP COLUMN scope_site_visibility, DROP COLUMN scope_site_id;`.execute(db);
}
