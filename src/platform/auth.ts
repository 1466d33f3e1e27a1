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

/**
 * Recently authenticated tokens, so a client making many calls costs one token lookup every few
 * seconds rather than one per request. Entries expire after `ttlMs` (0 disables the cache); the
 * cache is cleared whenever a user changes, so profiles are never served stale by this process.
 */
export class TokenCache {
  private readonly entries = new Map<string, { user: UserRow; expires: number }>();
  constructor(
    private readonly ttlMs: number,
    private readonly maxEntries = 10_000,
  ) {}

  get(hash: string): UserRow | undefined {
    const entry = this.entries.get(hash);
    if (!entry) return undefined;
    if (entry.expires > Date.now()) return entry.user;
    this.entries.delete(hash);
    return undefined;
  }

  set(hash: string, user: UserRow): void {
    if (this.ttlMs <= 0) return;
    // Oldest first: a Map iterates in insertion order.
    if (this.entries.size >= this.maxEntries) this.entries.delete(this.entries.keys().next().value!);
    this.entries.set(hash, { user, expires: Date.now() + this.ttlMs });
  }

  clear(): void {
    this.entries.clear();
  }
}

/** The user a bearer token belongs to, or undefined for an unknown token. */
export async function userForToken(db: Db, token: string, cache?: TokenCache): Promise<UserRow | undefined> {
  const hash = hashToken(token);
  const cached = cache?.get(hash);
  if (cached) return cached;
  const user = await db
    .selectFrom('api_tokens')
    .innerJoin('users', 'users.id', 'api_tokens.user_id')
    .selectAll('users')
    .where('api_tokens.token_hash', '=', hash)
    .executeTakeFirst();
  if (user) cache?.set(hash, user);
  return user;
}

export function bearerToken(header: string | undefined): string | undefined {
  if (!header) return undefined;
  const match = /^Bearer\s+(\S+)\s*$/i.exec(header);
  return match?.[1];
}
