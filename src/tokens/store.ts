import { liveTokens, TOKEN_INFO_COLUMNS, type ApiTokenInfo } from '../platform/auth.ts';
import type { Db } from '../platform/db/database.ts';

/**
 * The SQL of a user's API tokens. Tokens belong to a user, not to an organization: every query
 * takes the user id. Issuing and revoking stay in platform/auth.ts, beside authentication.
 */

/** All tokens of a user, newest first, revoked and expired ones included. */
export async function tokensOf(db: Db, userId: string): Promise<ApiTokenInfo[]> {
  return db.selectFrom('api_tokens').select(TOKEN_INFO_COLUMNS).where('user_id', '=', userId).orderBy('created_at', 'desc').orderBy('id').execute();
}

/** The user's own tokens that still authenticate at `now`, newest first; derived content tokens are not the user's own. */
export async function liveTokensOf(db: Db, userId: string, now: Date): Promise<ApiTokenInfo[]> {
  return db
    .selectFrom('api_tokens')
    .select(TOKEN_INFO_COLUMNS)
    .where('user_id', '=', userId)
    .where(liveTokens(now))
    .where('scope_space_id', 'is', null)
    .orderBy('created_at', 'desc')
    .orderBy('id')
    .execute();
}

/** How many of the user's own tokens still authenticate at `now`. */
export async function liveTokenCount(db: Db, userId: string, now: Date): Promise<number> {
  const live = await db
    .selectFrom('api_tokens')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .where('user_id', '=', userId)
    .where(liveTokens(now))
    .where('scope_space_id', 'is', null)
    .executeTakeFirstOrThrow();
  return Number(live.n);
}

/** Locks the user's row for the rest of the transaction: serializes token creations of one user. */
export async function lockUser(trx: Db, userId: string): Promise<void> {
  await trx.selectFrom('users').select('id').where('id', '=', userId).forUpdate().executeTakeFirst();
}
