import { createHash, randomBytes } from 'node:crypto';
import type { Db } from './db/database.ts';
import type { UserRow } from './db/schema.ts';
import { newId } from './ids.ts';

const TOKEN_PREFIX = 'folio_';

export function hashToken(token: string): string {
  return createHash('sha256').update(token).digest('hex');
}

/** Creates an API token for a user. Only its hash is stored: the token itself is shown once. */
export async function createApiToken(db: Db, userId: string): Promise<string> {
  const token = TOKEN_PREFIX + randomBytes(30).toString('base64url');
  await db
    .insertInto('api_tokens')
    .values({ id: newId(), user_id: userId, token_hash: hashToken(token), created_at: new Date() })
    .execute();
  return token;
}

/** The user a bearer token belongs to, or undefined for an unknown token. */
export async function userForToken(db: Db, token: string): Promise<UserRow | undefined> {
  return db
    .selectFrom('api_tokens')
    .innerJoin('users', 'users.id', 'api_tokens.user_id')
    .selectAll('users')
    .where('api_tokens.token_hash', '=', hashToken(token))
    .executeTakeFirst();
}

export function bearerToken(header: string | undefined): string | undefined {
  if (!header) return undefined;
  const match = /^Bearer\s+(\S+)\s*$/i.exec(header);
  return match?.[1];
}
