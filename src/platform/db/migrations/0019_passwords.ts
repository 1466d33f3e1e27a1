import { sql, type Kysely } from 'kysely';

/**
 * Signing in to the app with a password (src/sign-in/): each user's password hash (scrypt, with its
 * salt and parameters in the value, so they can be raised later; null while no password is set),
 * the one-time links where a person chooses their password, kept as hashes of their tokens, and
 * which API tokens are app sessions (ended when the password changes).
 */
export async function up(db: Kysely<any>): Promise<void> {
  await sql`ALTER TABLE users ADD COLUMN password_hash text;`.execute(db);
  await sql`CREATE TABLE password_setup_tokens (
    id text PRIMARY KEY,
    user_id text NOT NULL REFERENCES users(id) ON DELETE CASCADE,
    token_hash text NOT NULL UNIQUE,
    created_at timestamptz(3) NOT NULL,
    expires_at timestamptz(3) NOT NULL,
    used_at timestamptz(3)
  );`.execute(db);
  await sql`CREATE INDEX password_setup_tokens_user ON password_setup_tokens (user_id);`.execute(db);
  await sql`ALTER TABLE api_tokens ADD COLUMN app_session boolean NOT NULL DEFAULT false;`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`ALTER TABLE api_tokens DROP COLUMN app_session;`.execute(db);
  await sql`DROP TABLE password_setup_tokens;`.execute(db);
  await sql`ALTER TABLE users DROP COLUMN password_hash;`.execute(db);
}
