import type { FastifyRequest } from 'fastify';
import type { Config } from './config.ts';
import { requestCookies } from './cookies.ts';

/**
 * The app's session cookie (src/sign-in/): its value is a session token, kept server-side as a hash
 * with its expiry like any API token, so signing out or revoking it ends the session at once.
 */
export const SESSION_COOKIE = 'folio_session';

/** The header a script of the app sends on every write; a page of another origin cannot send it. */
export const CSRF_HEADER = 'x-folio-csrf';

/** The session token of the request's cookie, if any. */
export function sessionCookieOf(req: FastifyRequest): string | undefined {
  return requestCookies(req.headers.cookie).get(SESSION_COOKIE) || undefined;
}

/** The `Set-Cookie` value that stores a session for `maxAgeMs`, or clears it (`token` null). */
export function sessionCookie(config: Pick<Config, 'publicUrl'>, token: string | null, maxAgeMs = 0): string {
  const secure = config.publicUrl.startsWith('https:') ? '; Secure' : '';
  const value = token === null ? '' : encodeURIComponent(token);
  const maxAge = token === null ? 0 : Math.max(0, Math.floor(maxAgeMs / 1000));
  return `${SESSION_COOKIE}=${value}; Path=/; HttpOnly; SameSite=Lax; Max-Age=${maxAge}${secure}`;
}

const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);

/**
 * Whether a request may change something on the strength of a cookie: a safe method, or the
 * app's custom header (which a cross-origin page can only send after a CORS preflight Folio does
 * not grant), or an Origin that is Folio's own (PUBLIC_URL or APP_URL). SameSite=Lax already keeps
 * the cookie off cross-site posts; this also covers sibling subdomains and older browsers.
 */
export function csrfSafe(req: FastifyRequest, config: Pick<Config, 'publicUrl' | 'appUrl'>): boolean {
  if (SAFE_METHODS.has(req.method)) return true;
  const header = req.headers[CSRF_HEADER];
  if (typeof header === 'string' && header.trim() !== '') return true;
  const origin = req.headers.origin;
  if (typeof origin !== 'string' || origin === 'null') return false;
  return [config.publicUrl, config.appUrl].some((url) => new URL(url).origin === origin);
}

export const CSRF_MESSAGE = `This request is authenticated by a session cookie but carries neither the "${CSRF_HEADER}: 1" header nor an Origin of this server: refused to protect against cross-site request forgery`;
