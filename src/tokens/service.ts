import { issueApiToken, revokeApiToken, type ApiTokenInfo } from '../platform/auth.ts';
import type { Ctx } from '../platform/context.ts';
import type { Db } from '../platform/db/database.ts';
import { BadRequestError, ConflictError } from '../platform/errors.ts';
import * as store from './store.ts';

/** Tokens one user may hold at once (neither revoked nor expired). */
export const MAX_LIVE_TOKENS = 100;

const UNITS: Record<string, number> = { s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000, w: 7 * 86_400_000 };

/** `90s`, `15m`, `12h`, `30d` or `2w` in milliseconds. */
export function parseDuration(text: string): number {
  const match = /^(\d{1,6})\s*([smhdw])$/.exec(text.trim());
  if (!match || Number(match[1]) === 0) throw new BadRequestError(`Invalid duration "${text}": use a positive number and a unit, such as 30d, 12h, 15m or 2w`);
  return Number(match[1]) * UNITS[match[2]!]!;
}

/** All tokens of a user, newest first, revoked and expired ones included. */
export async function listAllTokens(db: Db, userId: string): Promise<ApiTokenInfo[]> {
  return store.tokensOf(db, userId);
}

/** The caller's own tokens that still authenticate, newest first (at most MAX_LIVE_TOKENS); derived content tokens are not listed. */
export async function listLiveTokens(ctx: Ctx): Promise<ApiTokenInfo[]> {
  // Content tokens (derived by URL resolution, hours-long, gone with their parent) are not the user's own.
  return store.liveTokensOf(ctx.db, ctx.user.id, new Date(ctx.now()));
}

/**
 * Creates a token for `userId`. `limitTo`: the expiry of the token making the request, which the
 * new token may not outlive (a short-lived token cannot mint a longer-lived one).
 */
export async function createToken(
  db: Db,
  userId: string,
  input: { name?: string | undefined; expiresAt?: Date | undefined },
  limitTo?: Date | null,
  /** The organization whose SSO issued the token making the request: the new token carries it too. */
  ssoOrganizationId?: string | null,
  /** The time "in the future" and "live" are judged at (Services.now). */
  now = Date.now(),
): Promise<{ token: string; info: ApiTokenInfo }> {
  if (input.expiresAt && input.expiresAt.getTime() <= now) throw new BadRequestError('expiresAt must be in the future');
  let expiresAt = input.expiresAt ?? null;
  if (limitTo) {
    if (expiresAt && expiresAt > limitTo) {
      throw new BadRequestError(`expiresAt must not be later than the expiry of the token making the request (${limitTo.toISOString()})`);
    }
    expiresAt ??= limitTo;
  }
  return db.transaction().execute(async (trx) => {
    // Serializes creations for this user, so the count below stays true.
    await store.lockUser(trx, userId);
    if ((await store.liveTokenCount(trx, userId, new Date(now))) >= MAX_LIVE_TOKENS) {
      throw new ConflictError(`A user may hold at most ${MAX_LIVE_TOKENS} live tokens: revoke some first`);
    }
    return issueApiToken(trx, userId, { name: input.name ?? null, expiresAt, ssoOrganizationId: ssoOrganizationId ?? null });
  });
}

/** Revokes one of the caller's tokens; a token that is not the caller's (or not live) is left alone. */
export async function revokeOwnToken(ctx: Ctx, tokenId: string): Promise<void> {
  await revokeApiToken(ctx.db, tokenId, { userId: ctx.user.id, cache: ctx.tokenCache });
}
