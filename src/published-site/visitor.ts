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

export async function visitorOf(db: Db, site: SiteRow, req: FastifyRequest, basePath: string, secure: boolean): Promise<VisitorOutcome> {
  const url = new URL(req.url, 'http://site.invalid');
  if (site.visibility === 'share-link') {
    const fromUrl = url.searchParams.get('share');
    if (fromUrl) {
      if (!(await activeShareLink(db, site, fromUrl))) return { kind: 'denied' };
      return { kind: 'store', cookie: cookie(cookieName(site, 'share'), fromUrl, basePath, secure), location: without(url, 'share') };
    }
    if (!(await activeShareLink(db, site, readCookie(req, cookieName(site, 'share'))))) return { kind: 'denied' };
    return { kind: 'ok', visitor: { claims: {}, segment: 'anonymous' } };
  }
  if (site.visibility === 'visitor-auth') {
    const fromUrl = url.searchParams.get('jwt_token');
    if (fromUrl) {
      if (!(await verifiedClaims(site, fromUrl))) return { kind: 'denied', ...(site.auth_fallback_url ? { fallback: site.auth_fallback_url } : {}) };
      return { kind: 'store', cookie: cookie(cookieName(site, 'auth'), fromUrl, basePath, secure), location: without(url, 'jwt_token') };
    }
    const token = readCookie(req, cookieName(site, 'auth'));
    const claims = token ? await verifiedClaims(site, token) : undefined;
    if (!claims) return { kind: 'denied', ...(site.auth_fallback_url ? { fallback: site.auth_fallback_url } : {}) };
    return { kind: 'ok', visitor: { claims, segment: segmentOf(claims) } };
  }
  return { kind: 'ok', visitor: { claims: {}, segment: 'anonymous' } };
}

export function sendVisitorRedirect(reply: FastifyReply, outcome: Extract<VisitorOutcome, { kind: 'store' }>) {
  return reply.code(302).header('set-cookie', outcome.cookie).header('cache-control', 'no-store').header('location', outcome.location).send();
}
