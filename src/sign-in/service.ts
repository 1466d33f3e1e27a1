import { randomBytes } from 'node:crypto';
import { hashToken, issueApiToken, revokeApiToken, type TokenCache } from '../platform/auth.ts';
import type { Services } from '../platform/context.ts';
import type { Db } from '../platform/db/database.ts';
import type { UserRow } from '../platform/db/schema.ts';
import { BadRequestError, HttpError, UnauthorizedError } from '../platform/errors.ts';
import { newId } from '../platform/ids.ts';
import type { Urls } from '../platform/urls.ts';
import { findUserByIdOrEmail } from '../users/store.ts';
import { checkPasswordRules, hashPassword, needsRehash, verifyNothing, verifyPassword } from './password-hash.ts';
import * as store from './store.ts';
import type { SignInThrottle } from './throttle.ts';

/** How long a password setup link stays valid. */
export const SETUP_LINK_TTL_MS = 24 * 3600 * 1000;
/** The name of the API token behind an app session, as `GET /v1/user/tokens` lists it. */
export const SESSION_TOKEN_NAME = 'App session';
/** The one answer to a wrong email or a wrong password: it must not tell which. */
export const WRONG_CREDENTIALS = 'Email or password is incorrect';
const INVALID_LINK = 'This password setup link is invalid, expired or already used: ask an administrator for a new one (`folio users setup-link`), or to set your password with `folio users set-password`';

type SessionServices = Pick<Services, 'db' | 'config' | 'now' | 'tokenCache'>;

export interface Session {
  user: UserRow;
  /** The session token (the cookie's value), returned only here; only its hash is stored. */
  token: string;
  tokenId: string;
  expiresAt: Date;
}

/** Opens an app session: an expiring API token kept as a hash, revoked by sign-out. */
async function openSession(services: SessionServices, db: Db, user: UserRow): Promise<Session> {
  const expiresAt = new Date(services.now() + services.config.appSessionTtlMs);
  const { token, info } = await issueApiToken(db, user.id, { name: SESSION_TOKEN_NAME, expiresAt, appSession: true });
  return { user, token, tokenId: info.id, expiresAt };
}

/**
 * Signs in with email and password. A wrong email and a wrong password get the same 401 and cost
 * the same time (a dummy hash is verified when there is no account or no password). Failures are
 * counted per account and per address; past the limit, attempts are refused with 429.
 */
export async function signInWithPassword(
  services: SessionServices,
  throttle: SignInThrottle,
  input: { email: string; password: string; address: string },
): Promise<Session> {
  const email = input.email.trim().toLowerCase();
  throttle.check(email, input.address);
  const user = await store.userByEmail(services.db, email);
  const stored = user?.password_hash;
  const valid = stored ? await verifyPassword(input.password, stored) : await verifyNothing(input.password);
  if (!user || !stored || !valid) {
    throttle.fail(email, input.address);
    throw new UnauthorizedError(WRONG_CREDENTIALS);
  }
  throttle.succeed(email);
  // Parameters raised since this hash was made: store a stronger one now that the password is known.
  if (needsRehash(stored)) await store.replacePasswordHash(services.db, user.id, stored, await hashPassword(input.password));
  return openSession(services, services.db, user);
}

/** Ends an app session on the server: its token is revoked and this process forgets it at once. */
export async function signOut(services: Pick<Services, 'db' | 'tokenCache'>, tokenId: string): Promise<void> {
  await revokeApiToken(services.db, tokenId, { cache: services.tokenCache });
}

/**
 * A new password for `userId`: stored, the user's pending setup links dropped and their open app
 * sessions ended (someone who knew the old password is signed out), in the caller's transaction.
 * Returns the ended sessions' token hashes, for `forget` once committed.
 */
async function replacePassword(trx: Db, userId: string, hash: string, now: Date): Promise<string[]> {
  await store.setPasswordHash(trx, userId, hash);
  await store.dropSetupTokens(trx, userId);
  return store.revokeAppSessions(trx, userId, now);
}

/** This process stops trusting the ended sessions at once (others within AUTH_CACHE_TTL_MS). */
function forget(cache: TokenCache | undefined, hashes: string[]): void {
  for (const hash of hashes) cache?.delete(hash);
}

/**
 * Sets the password of a user (by email or id), as `folio users set-password` does. Pending setup
 * links of the user stop working and their app sessions end.
 */
export async function setPassword(db: Db, who: string, password: string, cache?: TokenCache): Promise<UserRow> {
  checkPasswordRules(password);
  const user = await findUserByIdOrEmail(db, who);
  if (!user) throw new HttpError(404, `No user with id or email "${who}"`);
  const hash = await hashPassword(password);
  forget(cache, await db.transaction().execute((trx) => replacePassword(trx, user.id, hash, new Date(cache?.now() ?? Date.now()))));
  return user;
}

/**
 * A one-time link where the user chooses their password, valid SETUP_LINK_TTL_MS. The token is
 * in the URL's fragment, which browsers never send, so it stays out of every access log; only its
 * hash is stored.
 */
export async function createPasswordSetupLink(
  services: { db: Db; urls: Urls; now?: () => number },
  userId: string,
): Promise<{ url: string; expiresAt: Date }> {
  const token = randomBytes(32).toString('base64url');
  const createdAt = new Date(services.now?.() ?? Date.now());
  const expiresAt = new Date(createdAt.getTime() + SETUP_LINK_TTL_MS);
  await store.insertSetupToken(services.db, { id: newId(), userId, tokenHash: hashToken(token), createdAt, expiresAt });
  return { url: `${services.urls.app('/password-setup')}#token=${token}`, expiresAt };
}

/**
 * Whom a setup link is for, before it is used: the page says which account the password is for
 * (and password managers file it under that email), and a dead link is said at once, not after a
 * password was typed.
 */
export async function passwordSetupAccount(services: Pick<SessionServices, 'db' | 'now'>, token: string): Promise<{ email: string; displayName: string }> {
  const user = await store.setupTokenUser(services.db, hashToken(token), new Date(services.now()));
  if (!user) throw new BadRequestError(INVALID_LINK);
  return { email: user.email, displayName: user.display_name };
}

/**
 * Uses a setup link: sets the password, marks the link used (once: a second use is refused) and
 * opens a session.
 */
export async function completePasswordSetup(services: SessionServices, token: string, password: string): Promise<Session> {
  checkPasswordRules(password);
  const hash = await hashPassword(password);
  const now = new Date(services.now());
  const done = await services.db.transaction().execute(async (trx) => {
    const user = await store.consumeSetupToken(trx, hashToken(token), now);
    if (!user) return undefined;
    const ended = await replacePassword(trx, user.id, hash, now);
    return { ended, session: await openSession(services, trx, user) };
  });
  if (!done) throw new BadRequestError(INVALID_LINK);
  forget(services.tokenCache, done.ended);
  return done.session;
}
