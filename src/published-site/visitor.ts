import { createHash } from 'node:crypto';
import { jwtVerify } from 'jose';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Db } from '../platform/db/database.ts';
import type { SiteRow } from '../platform/db/schema.ts';
import { activeShareLink } from '../sites/access.ts';
import { requestCookies } from '../platform/cookies.ts';

/**
 * Who reads a published site, by its visibility:
 * - `public` and `unlisted`: anyone (unlisted pages are not indexed);
 * - `share-link`: a visitor who came with `?share=<share link token>`; the token then lives in a
 *   cookie scoped to the site, and stops working when the link is deactivated or deleted;
 * - `visitor-auth`: a visitor whose site backend signed a JWT (HS256, the site's publishing-auth
 *   key) passed as `?jwt_token=`; its claims drive adaptive content. Only HS256 is accepted (no
 *   `none`, no algorithm confusion), and `exp` is enforced.
 */

export interface Visitor {
  claims: Record<string, unknown>;
  /** Segment of the visitor for caches: the same claims share rendered pages. */
  segment: string;
}

export type VisitorOutcome =
  | { kind: 'ok'; visitor: Visitor }
  /** The credential came in the URL: store it in a cookie and send the visitor to the clean URL. */
  | { kind: 'store'; cookie: string; location: string }
  | { kind: 'denied'; fallback?: string };

const cookieName = (site: SiteRow, what: 'share' | 'auth') => `folio_${what}_${site.id}`;

function readCookie(req: FastifyRequest, name: string): string | undefined {
  return requestCookies(req.headers.cookie).get(name);
}

function cookie(name: string, value: string, path: string, secure: boolean): string {
  return `${name}=${encodeURIComponent(value)}; Path=${path}; HttpOnly; SameSite=Lax${secure ? '; Secure' : ''}`;
}

/** The request URL without one query parameter (where the visitor goes after the cookie is set). */
function without(url: URL, param: string): string {
  url.searchParams.delete(param);
  return `${url.pathname}${url.search}`;
}

const segmentOf = (claims: Record<string, unknown>) =>
  Object.keys(claims).length ? createHash('sha256').update(JSON.stringify(claims)).digest('base64url').slice(0, 16) : 'anonymous';

async function verifiedClaims(site: SiteRow, token: string): Promise<Record<string, unknown> | undefined> {
  try {
    const { payload } = await jwtVerify(token, new TextEncoder().encode(site.auth_key), { algorithms: ['HS256'] });
    const { iat: _iat, exp: _exp, nbf: _nbf, iss: _iss, aud: _aud, jti: _jti, ...claims } = payload;
    return claims;
  } catch {
    return undefined;
  }
}

/**
 * A visitor by the credentials they hold (a share-link key, a visitor JWT), as the rules above
 * decide: undefined when the site's visibility asks for a credential they do not hold or that is
 * not valid. The one check behind the site's pages (credentials from the URL or the cookie) and
 * its MCP server (credentials from the URL or the Authorization header).
 */
export async function visitorWith(db: Db, site: SiteRow, credentials: { share?: string | undefined; jwt?: string | undefined }): Promise<Visitor | undefined> {
  if (site.visibility === 'share-link') {
    return (await activeShareLink(db, site, credentials.share)) ? { claims: {}, segment: 'anonymous' } : undefined;
  }
  if (site.visibility === 'visitor-auth') {
    const claims = credentials.jwt ? await verifiedClaims(site, credentials.jwt) : undefined;
    return claims && { claims, segment: segmentOf(claims) };
  }
  return { claims: {}, segment: 'anonymous' };
}

export async function visitorOf(db: Db, site: SiteRow, req: FastifyRequest, basePath: string, secure: boolean): Promise<VisitorOutcome> {
  const url = new URL(req.url, 'http://site.invalid');
  const fallback = site.visibility === 'visitor-auth' && site.auth_fallback_url ? { fallback: site.auth_fallback_url } : {};
  // A credential in the URL is checked, then kept in a cookie, and the visitor sent to the clean URL.
  const param = site.visibility === 'share-link' ? 'share' : site.visibility === 'visitor-auth' ? 'jwt_token' : undefined;
  const fromUrl = param ? url.searchParams.get(param) : null;
  if (param && fromUrl) {
    const credentials = param === 'share' ? { share: fromUrl } : { jwt: fromUrl };
    if (!(await visitorWith(db, site, credentials))) return { kind: 'denied', ...fallback };
    return { kind: 'store', cookie: cookie(cookieName(site, param === 'share' ? 'share' : 'auth'), fromUrl, basePath, secure), location: without(url, param) };
  }
  const visitor = await visitorWith(db, site, { share: readCookie(req, cookieName(site, 'share')), jwt: readCookie(req, cookieName(site, 'auth')) });
  return visitor ? { kind: 'ok', visitor } : { kind: 'denied', ...fallback };
}

export function sendVisitorRedirect(reply: FastifyReply, outcome: Extract<VisitorOutcome, { kind: 'store' }>) {
  return reply.code(302).header('set-cookie', outcome.cookie).header('cache-control', 'no-store').header('location', outcome.location).send();
}
