import { sql } from 'kysely';
import type { Db } from '../platform/db/database.ts';
import type { UserRow } from '../platform/db/schema.ts';

// Users and their passwords belong to no organization: these queries are keyed by user or email.

/** The user with this (normalized) email, with their password hash. */
export function userByEmail(db: Db, email: string): Promise<UserRow | undefined> {
  return db.selectFrom('users').selectAll().where(sql`lower(email)`, '=', email).executeTakeFirst();
}

export async function setPasswordHash(db: Db, userId: string, hash: string): Promise<void> {
  await db.updateTable('users').set({ password_hash: hash }).where('id', '=', userId).execute();
}

/** Replaces a hash only if it is still the one verified (a concurrent change of password wins). */
export async function replacePasswordHash(db: Db, userId: string, previous: string, hash: string): Promise<void> {
  await db.updateTable('users').set({ password_hash: hash }).where('id', '=', userId).where('password_hash', '=', previous).execute();
}

export async function insertSetupToken(db: Db, row: { id: string; userId: string; tokenHash: string; createdAt: Date; expiresAt: Date }): Promise<void> {
  await db
    .insertInto('password_setup_tokens')
    .values({ id: row.id, user_id: row.userId, token_hash: row.tokenHash, created_at: row.createdAt, expires_at: row.expiresAt, used_at: null })
    .execute();
}

/**
 * Marks a setup token used, atomically, if it is unused and not expired at `now`; returns its user
 * (undefined when the token is unknown, used or expired).
 */
export async function consumeSetupToken(db: Db, tokenHash: string, now: Date): Promise<UserRow | undefined> {
  const used = await db
    .updateTable('password_setup_tokens')
    .set({ used_at: now })
    .where('token_hash', '=', tokenHash)
    .where('used_at', 'is', null)
    .where('expires_at', '>', now)
    .returning('user_id')
    .executeTakeFirst();
  if (!used) return undefined;
  return db.selectFrom('users').selectAll().where('id', '=', used.user_id).executeTakeFirst();
}

/** The person a setup link that is neither used nor expired was made for (the link stays as it is). */
export async function setupTokenUser(db: Db, tokenHash: string, now: Date): Promise<UserRow | undefined> {
  return db
    .selectFrom('password_setup_tokens')
    .innerJoin('users', 'users.id', 'password_setup_tokens.user_id')
    .selectAll('users')
    .where('password_setup_tokens.token_hash', '=', tokenHash)
    .where('password_setup_tokens.used_at', 'is', null)
    .where('password_setup_tokens.expires_at', '>', now)
    .executeTakeFirst();
}

/** Ends every live app session of a user; returns their token hashes (for the token cache). */
export async function revokeAppSessions(db: Db, userId: string, now: Date): Promise<string[]> {
  const rows = await db
    .updateTable('api_tokens')
    .set({ revoked_at: now })
    .where('user_id', '=', userId)
    .where('app_session', '=', true)
    .where('revoked_at', 'is', null)
    .returning('token_hash')
    .execute();
  return rows.map((r) => r.token_hash);
}

/** Drops a user's other links once one is used or a password is set: an old link must not reset it. */
export async function dropSetupTokens(db: Db, userId: string): Promise<void> {
  await db.deleteFrom('password_setup_tokens').where('user_id', '=', userId).where('used_at', 'is', null).execute();
}
