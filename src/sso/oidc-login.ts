import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import type { Configuration, IDToken } from 'openid-client';
import type { Services } from '../platform/context.ts';
import type { Db } from '../platform/db/database.ts';
import type { OidcProviderRow, UserRow } from '../platform/db/schema.ts';
import { isUniqueViolation } from '../platform/errors.ts';
import { appPathOf } from '../platform/app-paths.ts';
import { decryptSecret } from '../platform/secrets.ts';
import { admitAndOpenSession, displayNameOf, emailOf, resolveUser } from './accounts.ts';
import { SsoLoginError } from './errors.ts';
import * as store from './oidc-store.ts';
import { oidcProviderStatus, oidcServiceUrls } from './oidc-service.ts';

/**
 * Signing in through an OpenID Connect provider: authorization code flow with PKCE (S256), state
 * and nonce, through `openid-client` (discovery, the token request, and every check of the ID
 * token: issuer, audience, expiry, nonce, and its signature by a key of the provider's JWKS).
 *
 * The state, nonce and PKCE verifier of a sign-in are kept server-side (oidc_requests), consumed
 * by the one callback that presents the state, and bound to the browser that started it by the
 * hash of a random cookie (SameSite=Lax: the callback is a top-level GET navigation, so the
 * cookie is sent), so a callback URL made in one browser cannot sign in another (login CSRF).
 */

/** How long a started sign-in may wait for its callback. */
export const REQUEST_TTL_MS = 10 * 60_000;
/** How long a provider's discovery document (and the JWKS openid-client caches with it) is reused. */
const DISCOVERY_TTL_MS = 10 * 60_000;
/** Seconds before a request to the provider (discovery, token, JWKS) is given up. */
const PROVIDER_TIMEOUT_S = 10;
/** What Folio asks for: the subject, and the email and name that make the account. */
const SCOPE = 'openid email profile';

type OpenIdClient = typeof import('openid-client');
let clientModule: Promise<OpenIdClient> | undefined;
/** openid-client is loaded on the first OIDC sign-in, not at every start. */
const openIdClient = () => (clientModule ??= import('openid-client'));

interface CachedConfiguration {
  key: string;
  at: number;
  configuration: Promise<Configuration>;
}
const configurations = new Map<string, CachedConfiguration>();

/** The browser-binding cookie's value: 32 random bytes, base64url. */
const BROWSER_ID = /^[A-Za-z0-9_-]{43}$/;
export const BROWSER_COOKIE = 'folio_oidc_browser';

export function newBrowserId(current: string | undefined): string {
  return current && BROWSER_ID.test(current) ? current : randomBytes(32).toString('base64url');
}

const hashOf = (text: string) => createHash('sha256').update(text).digest('base64url');

function requireActive(provider: OidcProviderRow | undefined, providerId: string): OidcProviderRow {
  if (!provider) throw new SsoLoginError(`unknown OIDC provider ${providerId}`, 'This single sign-on link does not lead to any identity provider. Ask your administrator for the right one.', 404);
  const status = oidcProviderStatus(provider);
  if (status === 'pending') {
    throw new SsoLoginError('provider is pending (issuer or clientID missing)', 'This identity provider is not fully configured yet. An administrator must set its issuer and client id.');
  }
  if (status === 'disabled') throw new SsoLoginError('provider is disabled', 'Signing in through this identity provider is turned off. Ask your administrator.', 403);
  return provider;
}

/**
 * The openid-client configuration of a provider: its discovery document read from the issuer
 * (whose `issuer` must be the configured one, exactly), the client's credentials, and ID token
 * signatures always verified against the provider's JWKS (openid-client skips that by default for
 * tokens received over TLS; Folio checks them anyway, so a token endpoint answer alone never
 * suffices, and `alg: none` or an HMAC made with a public key or the client secret never verifies).
 */
async function configurationFor(services: Pick<Services, 'db' | 'config'>, provider: OidcProviderRow): Promise<Configuration> {
  const key = [provider.issuer, provider.client_id, provider.client_secret_sealed ?? '', provider.updated_at.getTime()].join('\0');
  const cached = configurations.get(provider.id);
  if (cached && cached.key === key && Date.now() - cached.at < DISCOVERY_TTL_MS) return cached.configuration;
  const configuration = (async () => {
    const client = await openIdClient();
    const secret = provider.client_secret_sealed ? await decryptSecret(services.db, services.config, provider.client_secret_sealed) : undefined;
    const issuer = new URL(provider.issuer!);
    const execute = [client.enableNonRepudiationChecks];
    // http is accepted only for a loopback issuer (checked when it was set: oidc-service.ts).
    if (issuer.protocol === 'http:') execute.push(client.allowInsecureRequests);
    return client.discovery(issuer, provider.client_id!, secret ? { client_secret: secret } : {}, secret ? client.ClientSecretBasic(secret) : client.None(), {
      execute,
      timeout: PROVIDER_TIMEOUT_S,
    });
  })();
  configurations.set(provider.id, { key, at: Date.now(), configuration });
  // A failed discovery is not kept: the next sign-in tries again.
  configuration.catch(() => {
    if (configurations.get(provider.id)?.configuration === configuration) configurations.delete(provider.id);
  });
  return configuration;
}

async function reachProvider(services: Pick<Services, 'db' | 'config'>, provider: OidcProviderRow): Promise<Configuration> {
  try {
    return await configurationFor(services, provider);
  } catch (err) {
    throw new SsoLoginError(
      `discovery of ${String(provider.issuer).slice(0, 200)} failed: ${describe(err)}`,
      'Folio could not read the identity provider\'s configuration. Try again in a moment; if it keeps failing, an administrator should check the provider\'s issuer URL.',
      502,
    );
  }
}

/** An error of openid-client in one line for the log: its code, message and cause (never a token). */
function describe(err: unknown): string {
  if (!(err instanceof Error)) return String(err).slice(0, 300);
  const code = 'code' in err && typeof err.code === 'string' ? `${err.code}: ` : '';
  const cause = err.cause instanceof Error ? ` (${err.cause.message})` : '';
  return `${code}${err.message}${cause}`.slice(0, 400);
}

/**
 * The provider's authorization URL for a new sign-in (state, nonce and S256 code challenge), the
 * sign-in remembered server-side with `next` (an app path, anything else dropped) and bound to
 * the browser whose cookie holds `browserId`.
 */
export async function startOidcLogin(
  services: Pick<Services, 'db' | 'config' | 'urls'>,
  providerId: string,
  next: string | undefined,
  browserId: string,
): Promise<string> {
  const provider = requireActive(await store.findProviderById(services.db, providerId), providerId);
  const configuration = await reachProvider(services, provider);
  const client = await openIdClient();
  const state = client.randomState();
  const nonce = client.randomNonce();
  const codeVerifier = client.randomPKCECodeVerifier();
  const now = new Date();
  await store.dropExpiredRequests(services.db, now);
  await store.saveRequest(services.db, {
    state,
    provider_id: provider.id,
    nonce,
    code_verifier: codeVerifier,
    browser_hash: hashOf(browserId),
    next_path: appPathOf(next) ?? null,
    created_at: now,
    expires_at: new Date(now.getTime() + REQUEST_TTL_MS),
  });
  return client
    .buildAuthorizationUrl(configuration, {
      redirect_uri: oidcServiceUrls(services.urls, provider.id).redirectURI,
      scope: SCOPE,
      state,
      nonce,
      code_challenge: await client.calculatePKCECodeChallenge(codeVerifier),
      code_challenge_method: 'S256',
    })
    .toString();
}

export interface OidcLoginResult {
  user: UserRow;
  organizationId: string;
  /** The app path the sign-in was started with, if any. */
  next: string | undefined;
  session: { token: string; expiresAt: Date };
  created: boolean;
}

function claimString(claims: Record<string, unknown>, name: string): string | undefined {
  const value = claims[name];
  return typeof value === 'string' ? value.trim() || undefined : undefined;
}

/** The email and name the ID token (or UserInfo) gives; an email the provider says it has not verified is refused. */
function personOf(claims: Record<string, unknown>): { email: string; name: string } {
  const email = emailOf(claimString(claims, 'email'));
  if (!email) {
    throw new SsoLoginError('no email claim in the ID token nor in UserInfo', 'The identity provider did not send your email address. Your administrator can let Folio read it (the "email" scope).');
  }
  if (claims.email_verified === false) {
    throw new SsoLoginError('email_verified is false', 'The identity provider says your email address is not verified. Verify it there, then sign in again.', 403);
  }
  const given = claimString(claims, 'given_name');
  const family = claimString(claims, 'family_name');
  const display = claimString(claims, 'name') ?? ([given, family].filter(Boolean).join(' ') || claimString(claims, 'preferred_username'));
  return { email, name: displayNameOf(display, email) };
}

/**
 * Completes a sign-in at the callback: the state must name a pending sign-in of this provider
 * started by this browser (used once); then openid-client checks the authorization response
 * (state, `iss` when the provider sends it), exchanges the code with the PKCE verifier, and
 * verifies the ID token (signature by the provider's JWKS, issuer, audience, expiry, nonce).
 * Then the person gets their account, membership and session, as with SAML.
 */
export async function completeOidcLogin(
  services: Pick<Services, 'db' | 'config' | 'urls' | 'tokenCache'>,
  providerId: string,
  query: string,
  browserId: string | undefined,
): Promise<OidcLoginResult> {
  const provider = requireActive(await store.findProviderById(services.db, providerId), providerId);
  const params = new URLSearchParams(query);
  const state = params.get('state');
  if (!state) throw new SsoLoginError('callback without state', 'This sign-in link is incomplete. Start again from your organization\'s login page.');
  const request = await store.consumeRequest(services.db, provider.id, state, new Date());
  if (!request) throw new SsoLoginError('state names no pending sign-in of this provider (unknown, used or expired)', 'This sign-in was already used or has expired. Start again from your organization\'s login page.');
  const fromThisBrowser =
    browserId !== undefined && Buffer.byteLength(hashOf(browserId)) === Buffer.byteLength(request.browser_hash) && timingSafeEqual(Buffer.from(hashOf(browserId)), Buffer.from(request.browser_hash));
  if (!fromThisBrowser) {
    throw new SsoLoginError(
      browserId === undefined ? 'no browser-binding cookie' : 'sign-in was started in another browser',
      'This sign-in was started in another browser (or cookies are blocked). Start again from your organization\'s login page in this browser.',
      403,
    );
  }
  const idpError = params.get('error');
  if (idpError) {
    const description = params.get('error_description');
    throw new SsoLoginError(
      `provider answered error ${idpError.slice(0, 100)}${description ? `: ${description.slice(0, 200)}` : ''}`,
      idpError === 'access_denied' ? 'The identity provider did not sign you in (access denied).' : 'The identity provider did not sign you in.',
      403,
    );
  }

  const configuration = await reachProvider(services, provider);
  const client = await openIdClient();
  // The URL the provider redirected to, as Folio published it (PUBLIC_URL may differ from how the
  // request arrived behind a proxy), with the parameters the provider added.
  const currentUrl = new URL(oidcServiceUrls(services.urls, provider.id).redirectURI);
  currentUrl.search = params.toString();
  let claims: IDToken | undefined;
  let accessToken: string | undefined;
  try {
    const tokens = await client.authorizationCodeGrant(configuration, currentUrl, {
      pkceCodeVerifier: request.code_verifier,
      expectedState: state,
      expectedNonce: request.nonce,
      idTokenExpected: true,
    });
    claims = tokens.claims();
    accessToken = tokens.access_token;
  } catch (err) {
    throw new SsoLoginError(`code exchange or ID token refused: ${describe(err)}`, 'The identity provider\'s answer could not be verified, so you were not signed in.');
  }
  if (!claims) throw new SsoLoginError('no ID token', 'The identity provider did not say who you are.');
  const subject = claims.sub;
  if (typeof subject !== 'string' || !subject || subject.length > 1024) throw new SsoLoginError('ID token has no usable sub', 'The identity provider did not say who you are.');
  let profile: Record<string, unknown> = claims;
  if (claimString(claims, 'email') === undefined && accessToken && configuration.serverMetadata().userinfo_endpoint) {
    // Some providers put the email and name only in the UserInfo answer (OpenID Connect allows it
    // when an access token is issued): read it, for the same subject (openid-client checks `sub`).
    try {
      profile = { ...(await client.fetchUserInfo(configuration, accessToken, subject)), sub: subject };
    } catch (err) {
      throw new SsoLoginError(`userinfo refused: ${describe(err)}`, 'Folio could not read your profile (email address) from the identity provider.');
    }
  }
  const person = personOf(profile);

  try {
    const result = await signIn(services, provider, subject, person);
    // The member is marked SSO now: SSO enforcement applies to their other tokens (see sso-gate.ts).
    services.tokenCache.clear();
    return { ...result, next: request.next_path ?? undefined };
  } catch (err) {
    // Two sign-ins of the same new person at once: one creates the account, the other is told to retry.
    if (isUniqueViolation(err)) throw new SsoLoginError('concurrent sign-in of the same person', 'Another sign-in for you was in progress. Start again.', 409);
    throw err;
  }
}

async function signIn(services: Pick<Services, 'db' | 'config'>, provider: OidcProviderRow, subject: string, person: { email: string; name: string }) {
  return services.db.transaction().execute(async (trx: Db) => {
    const now = new Date();
    const { user, created } = await resolveUser(trx, provider.organization_id, await store.linkedUser(trx, provider.id, subject), person);
    await store.linkIdentity(trx, provider.id, subject, user.id, now);
    const session = await admitAndOpenSession(trx, services.config, provider, user, now);
    return { user, organizationId: provider.organization_id, session, created };
  });
}
