import { createHash, randomBytes } from 'node:crypto';
import type { FastifyRequest } from 'fastify';
import { sql, type ExpressionBuilder } from 'kysely';
import type { Db } from './db/database.ts';
import type { ApiTokensTable, Database, UserRow } from './db/schema.ts';
import { newId } from './ids.ts';
import { RESYNC, type Bus } from './bus.ts';

const TOKEN_PREFIX = 'folio_';

export function hashToken(token: string): string {
  return createHash('sha256').update(token).digest('hex');
}

/** A token's row without its hash and its content-token scope: what listings show. */
export type ApiTokenInfo = Omit<
  ApiTokensTable,
  'token_hash' | 'scope_space_id' | 'parent_token_id' | 'scope_site_id' | 'scope_site_visibility' | 'scope_share_link_id' | 'scope_site_key_hash' | 'app_session'
>;

/**
 * Creates an API token for a user, optionally named and expiring. Only its hash is stored: the
 * token itself is returned here once and can never be shown again.
 */
export async function issueApiToken(
  db: Db,
  userId: string,
  opts: { name?: string | null | undefined; expiresAt?: Date | null | undefined; ssoOrganizationId?: string | null | undefined; appSession?: boolean } = {},
): Promise<{ token: string; info: ApiTokenInfo }> {
  const token = TOKEN_PREFIX + randomBytes(30).toString('base64url');
  const info: ApiTokenInfo = {
    id: newId(),
    user_id: userId,
    name: opts.name ?? null,
    created_at: new Date(),
    expires_at: opts.expiresAt ?? null,
    revoked_at: null,
    sso_organization_id: opts.ssoOrganizationId ?? null,
  };
  await db.insertInto('api_tokens').values({ ...info, token_hash: hashToken(token), scope_space_id: null, parent_token_id: null, scope_site_id: null, scope_site_visibility: null, scope_share_link_id: null, scope_site_key_hash: null, app_session: opts.appSession ?? false })
    .execute();
  return { token, info };
}

/** Creates a token that never expires (the one `users create` prints). */
export async function createApiToken(db: Db, userId: string): Promise<string> {
  return (await issueApiToken(db, userId)).token;
}

/** The columns of a token a listing shows (never the hash). */
/** The condition on `api_tokens` rows that still authenticate at `at`: not revoked, and not expired. */
export function liveTokens(at: Date) {
  return (eb: ExpressionBuilder<Database, 'api_tokens'>) =>
    eb.and([eb('api_tokens.revoked_at', 'is', null), eb.or([eb('api_tokens.expires_at', 'is', null), eb('api_tokens.expires_at', '>', at)])]);
}

export const TOKEN_INFO_COLUMNS = ['id', 'user_id', 'name', 'created_at', 'expires_at', 'revoked_at', 'sso_organization_id'] as const;

/**
 * Revokes a token (of `userId` only, when given). Returns its row, or undefined when there was no
 * such live token. This process's cache forgets the token at once, and other processes as soon as
 * the bus tells them (src/platform/bus.ts); with no bus across processes, when their entry expires.
 */
export async function revokeApiToken(
  db: Db,
  tokenId: string,
  opts: { userId?: string; cache?: TokenCache | undefined } = {},
): Promise<ApiTokenInfo | undefined> {
  let query = db
    .updateTable('api_tokens')
    .set({ revoked_at: new Date() })
    .where('id', '=', tokenId)
    .where('revoked_at', 'is', null);
  if (opts.userId !== undefined) query = query.where('user_id', '=', opts.userId);
  const row = await query.returning([...TOKEN_INFO_COLUMNS, 'token_hash']).executeTakeFirst();
  if (!row) return undefined;
  opts.cache?.delete(row.token_hash);
  opts.cache?.deleteDerived(row.id);
  const { token_hash: _hash, ...info } = row;
  return info;
}

/** Who a valid token authenticates, and which token it is. */
export interface Authenticated {
  user: UserRow;
  tokenId: string;
  tokenExpiresAt: Date | null;
  /** The organization whose single sign-on issued the token; null for an ordinary token. */
  ssoOrganizationId: string | null;
  /**
   * Organizations this token may not reach: they enforce single sign-on (`sso: true`), the user is
   * an SSO member there and not an admin, and the token was not obtained through their SSO.
   */
  ssoBlocked: string[];
  /** For a content token, the one space whose content it may read (see src/sites/content-token.ts). */
  scopeSpaceId: string | null;
  /** For a content token, the token it was derived from. */
  parentTokenId: string | null;
  /** For a content token resolved through a site: what that site granted (see src/sites/content-token.ts). */
  scopeSite: SiteGrant | null;
}

/**
 * A site's grant to a content token: the site, its visibility when given, the share link used (a
 * share-link site), a hash of the key that signed the visitor's JWT (a visitor-auth site).
 */
export interface SiteGrant {
  siteId: string;
  visibility: string;
  shareLinkId: string | null;
  keyHash: string | null;
}

/** The bus topic of token invalidations: `h:<hash>` one token, `p:<token id>` the tokens derived from it, `*` all. */
export const TOKENS_TOPIC = 'tokens';

/**
 * Recently authenticated tokens, so a client making many calls costs one token lookup every few
 * seconds rather than one per request. Entries expire after `ttlMs` (0 disables the cache); the
 * cache is cleared whenever a user changes, so profiles are never served stale.
 *
 * With a bus (src/platform/bus.ts), whatever one process forgets (a revoked token, a cleared cache)
 * every other process forgets as soon as the message arrives, not after `ttlMs`. A lookup that
 * raced an invalidation (it read the row before the change committed, and finishes after the
 * message) is not cached: `set` is given the generation read before the lookup.
 */
export class TokenCache {
  private readonly entries = new Map<string, { auth: Authenticated; expires: number }>();
  private readonly maxEntries: number;
  private readonly bus: Bus | undefined;
  /** Counts invalidations, local and remote: a lookup started before one must not be cached. */
  generation = 0;
  /** The clock entries expire by (Services.now). */
  readonly now: () => number;
  constructor(
    private readonly ttlMs: number,
    opts: { maxEntries?: number; now?: () => number; bus?: Bus } = {},
  ) {
    this.maxEntries = opts.maxEntries ?? 10_000;
    this.now = opts.now ?? Date.now;
    this.bus = opts.bus;
    this.bus?.subscribe(TOKENS_TOPIC, (message) => this.forget(message));
  }

  get(hash: string): Authenticated | undefined {
    const entry = this.entries.get(hash);
    if (!entry) return undefined;
    if (entry.expires > this.now()) return entry.auth;
    this.entries.delete(hash);
    return undefined;
  }

  /** Caches a lookup, unless an invalidation arrived since `generation` was read (before the lookup). */
  set(hash: string, auth: Authenticated, generation = this.generation): void {
    if (this.ttlMs <= 0 || generation !== this.generation) return;
    // Oldest first: a Map iterates in insertion order.
    if (this.entries.size >= this.maxEntries) this.entries.delete(this.entries.keys().next().value!);
    // Never trusted past the token's own expiry.
    const expires = Math.min(this.now() + this.ttlMs, auth.tokenExpiresAt?.getTime() ?? Infinity);
    this.entries.set(hash, { auth, expires });
  }

  delete(hash: string): void {
    this.invalidate(`h:${hash}`);
  }

  /** Forgets the content tokens derived from a token (when it is revoked). */
  deleteDerived(tokenId: string): void {
    this.invalidate(`p:${tokenId}`);
  }

  clear(): void {
    this.invalidate(RESYNC);
  }

  /** Forgets here at once, and in every other process through the bus. */
  private invalidate(message: string): void {
    if (this.bus) void this.bus.publish(TOKENS_TOPIC, message);
    else this.forget(message);
  }

  private forget(message: string): void {
    this.generation++;
    if (message.startsWith('h:')) this.entries.delete(message.slice(2));
    else if (message.startsWith('p:')) {
      const tokenId = message.slice(2);
      for (const [hash, entry] of this.entries) if (entry.auth.parentTokenId === tokenId) this.entries.delete(hash);
    } else this.entries.clear();
  }
}

/**
 * The user and token a bearer token authenticates, from its hash (`hashToken`, computed once per
 * request by the rate limiter); undefined for an unknown, expired or revoked token. Expiry is judged
 * by the cache's clock when there is a cache (Services.now), else by Date.now.
 */
export async function authenticateTokenHash(db: Db, hash: string, cache?: TokenCache): Promise<Authenticated | undefined> {
  const cached = cache?.get(hash);
  if (cached) return cached;
  const generation = cache?.generation;
  const row = await db
    .selectFrom('api_tokens')
    .innerJoin('users', 'users.id', 'api_tokens.user_id')
    .selectAll('users')
    .select([
      'api_tokens.id as token_id',
      'api_tokens.expires_at as token_expires_at',
      'api_tokens.sso_organization_id as token_sso_org',
      'api_tokens.scope_space_id as scope_space_id',
      'api_tokens.parent_token_id as parent_token_id',
      'api_tokens.scope_site_id as scope_site_id',
      'api_tokens.scope_site_visibility as scope_site_visibility',
      'api_tokens.scope_share_link_id as scope_share_link_id',
      'api_tokens.scope_site_key_hash as scope_site_key_hash',
    ])
    .select(
      sql<string[]>`ARRAY(SELECT m.organization_id FROM members m JOIN organizations o ON o.id = m.organization_id
        WHERE m.user_id = users.id AND o.sso AND m.sso AND m.role IS DISTINCT FROM 'admin'
        AND o.id IS DISTINCT FROM api_tokens.sso_organization_id)`.as('sso_blocked'),
    )
    .where('api_tokens.token_hash', '=', hash)
    .where(liveTokens(new Date(cache?.now() ?? Date.now())))
    // A derived (content) token stops when the token it was derived from is revoked (it never
    // outlives that token's expiry: its own is set no later).
    .where((eb) =>
      eb.or([
        eb('api_tokens.parent_token_id', 'is', null),
        eb.exists(
          eb.selectFrom('api_tokens as parent').select('parent.id').whereRef('parent.id', '=', 'api_tokens.parent_token_id').where('parent.revoked_at', 'is', null),
        ),
      ]),
    )
    .executeTakeFirst();
  if (!row) return undefined;
  const { token_id, token_expires_at, token_sso_org, sso_blocked, scope_space_id, parent_token_id, scope_site_id, scope_site_visibility, scope_share_link_id, scope_site_key_hash, ...user } =
    row;
  const auth: Authenticated = {
    user,
    tokenId: token_id,
    tokenExpiresAt: token_expires_at,
    ssoOrganizationId: token_sso_org,
    ssoBlocked: sso_blocked ?? [],
    scopeSpaceId: scope_space_id,
    parentTokenId: parent_token_id,
    scopeSite: scope_site_id ? { siteId: scope_site_id, visibility: scope_site_visibility ?? '', shareLinkId: scope_share_link_id, keyHash: scope_site_key_hash } : null,
  };
  cache?.set(hash, auth, generation);
  return auth;
}

/**
 * Whether the request is authenticated by the onRequest hook of buildApp: a known route that is
 * neither public nor the docs. The rate limiter asks the same, to leave the token's count to it.
 */
export function authenticates(req: FastifyRequest): boolean {
  return !req.routeOptions.config?.public && !!req.routeOptions.url && !req.url.startsWith('/docs');
}

export function bearerToken(header: string | undefined): string | undefined {
  if (!header) return undefined;
  const match = /^Bearer\s+(\S+)\s*$/i.exec(header);
  return match?.[1];
}
