import { gitRedirectPage } from '../git/redirects.ts';
import { Type, type Static } from '@sinclair/typebox';
import { errors as joseErrors, jwtVerify } from 'jose';
import type { Ctx } from '../platform/context.ts';
import type { SiteRow, SiteSectionRow, SiteSpaceRow } from '../platform/db/schema.ts';
import { BadRequestError, HttpError, NotFoundError } from '../platform/errors.ts';
import { atLeast } from '../platform/policy.ts';
import { orgRoleOf } from '../access/effective.ts';
import { ContentReader } from '../content/model.ts';
import { activeShareLink } from './access.ts';
import { issueContentToken, siteKeyHash } from './content-token.ts';
import type { SiteGrant } from '../platform/auth.ts';
import { siteBaseUrl } from './presenter.ts';
import { matchRedirect, redirectTarget } from './redirects.ts';
import { sectionsOf, siteByBasename, siteByHostname, siteByProxy, spaceRoot } from './store.ts';
import { siteSpacesIn } from './store-structure.ts';

/**
 * Resolving a published URL to its content: which site (by custom hostname, proxy origin, or
 * PUBLIC_URL/<organization>/<basename>/), which section and site space (by their paths), and the
 * page path left over. The caller must be allowed to see the site as its audience: a member of the
 * organization, anyone for a published public or unlisted site, a holder of an active share key
 * (`?share=` in the URL) for a share-link site, or a visitor with a valid JWT signed with the
 * site's key (HS256 only: `alg: none` and other algorithms are refused, and so are expired tokens)
 * for a visitor-auth site.
 */

export const ResolveUrlBody = Type.Object({
  url: Type.String({ format: 'uri', maxLength: 2048, description: 'URL to resolve' }),
  redirectOnError: Type.Optional(Type.Boolean({ description: 'Answer with a redirect to the site\'s fallback URL when the visitor token is refused' })),
  visitor: Type.Optional(
    Type.Object({
      type: Type.Optional(Type.Union([Type.Literal('human'), Type.Literal('agent')])),
      jwtToken: Type.Optional(Type.String({ maxLength: 8192, description: 'Visitor JWT signed with the site\'s key' })),
      unsignedClaims: Type.Optional(Type.Object({}, { additionalProperties: true })),
    }),
  ),
});
export type ResolveUrlInput = Static<typeof ResolveUrlBody>;
export const ResolveUrlQuery = Type.Object({
  url: Type.String({ format: 'uri', maxLength: 2048, description: 'URL to resolve' }),
  visitorAuthToken: Type.Optional(Type.String({ maxLength: 8192 })),
  redirectOnError: Type.Optional(Type.Boolean()),
});

export const PublishedLookup = Type.Union([
  Type.Object({
    site: Type.String(),
    siteSection: Type.Optional(Type.String()),
    siteSpace: Type.String(),
    space: Type.String(),
    pathname: Type.String({ description: 'Path of the page in the space' }),
    basePath: Type.String(),
    siteBasePath: Type.String(),
    apiToken: Type.String({
      description:
        'Read-only token for the resolved content: it reads this space (its content, revisions, documents, search and links) as far as the caller may, and nothing else; at most 2 hours, never beyond the token of the request',
    }),
    organization: Type.String(),
    shareKey: Type.Optional(Type.String()),
    complete: Type.Boolean(),
    canonicalUrl: Type.String(),
  }),
  Type.Object({ target: Type.Union([Type.Literal('content'), Type.Literal('external')]), site: Type.Optional(Type.String()), redirect: Type.String() }),
]);

/** A path segment decoded; one that is not valid percent-encoding stays as it is. */
function decodeSegment(segment: string): string {
  try {
    return decodeURIComponent(segment);
  } catch {
    return segment;
  }
}

/** The site a URL points at, and the path segments after the site's base. */
async function siteOfUrl(ctx: Ctx, url: URL): Promise<{ site: SiteRow; rest: string[] } | undefined> {
  const segments = url.pathname.split('/').filter(Boolean).map(decodeSegment);
  const host = url.hostname.toLowerCase();
  const own = new URL(ctx.config.publicUrl);
  const ownBase = own.pathname.split('/').filter(Boolean);
  if (url.host === own.host && ownBase.every((s, i) => segments[i] === s)) {
    const [orgId, basename, ...rest] = segments.slice(ownBase.length);
    if (!orgId || !basename) return undefined;
    const site = await siteByBasename(ctx.db, orgId, basename);
    return site && !site.hostname && !site.proxy ? { site, rest } : undefined;
  }
  const byHost = await siteByHostname(ctx.db, host);
  if (byHost && !byHost.proxy) return { site: byHost, rest: segments };
  // A proxy origin is a host and one or more path segments: the longest that prefixes the URL.
  const hostPath = [host, ...segments].join('/');
  const byProxy = await siteByProxy(ctx.db, hostPath);
  if (byProxy) return { site: byProxy, rest: segments.slice(byProxy.proxy!.split('/').length - 1) };
  return undefined;
}

class VisitorRefused extends HttpError {
  constructor(message: string) {
    super(401, message);
  }
}

/** Checks a visitor's JWT; returns when it expires (undefined: it names no expiry). */
async function verifyVisitor(site: SiteRow, token: string | undefined): Promise<Date | undefined> {
  if (!token) throw new VisitorRefused('This site is for authenticated visitors: send a visitor JWT (visitorAuthToken, or visitor.jwtToken) signed with the site\'s key');
  try {
    const { payload } = await jwtVerify(token, new TextEncoder().encode(site.auth_key), { algorithms: ['HS256'] });
    return typeof payload.exp === 'number' ? new Date(payload.exp * 1000) : undefined;
  } catch (err) {
    if (err instanceof joseErrors.JWTExpired) throw new VisitorRefused('The visitor token has expired: sign in again');
    throw new VisitorRefused('The visitor token is invalid: it must be a JWT signed with HS256 and the site\'s key');
  }
}

export async function resolvePublishedUrl(ctx: Ctx, input: { url: string; jwt?: string | undefined; redirectOnError?: boolean | undefined }) {
  let url: URL;
  try {
    url = new URL(input.url);
  } catch {
    throw new BadRequestError('url: expected an absolute URL such as https://docs.example.com/guide');
  }
  const found = await siteOfUrl(ctx, url);
  const notFound = new NotFoundError('Published content at this URL');
  if (!found) throw notFound;
  const { site, rest } = found;
  const orgRole = await orgRoleOf(ctx.db, site.organization_id, ctx.user.id);
  const member = atLeast(orgRole, 'read');
  if (!site.published && !member) throw notFound;
  let shareKey: string | undefined;
  // What the site grants the content token, when its audience admits this visitor (src/sites/content-token.ts).
  let through: { grant: SiteGrant; until?: Date | undefined } | undefined;
  if (site.published && (site.visibility === 'public' || site.visibility === 'unlisted')) {
    through = { grant: { siteId: site.id, visibility: site.visibility, shareLinkId: null, keyHash: null } };
  }
  if (site.visibility === 'share-link' && !member) {
    const link = await activeShareLink(ctx.db, site, url.searchParams.get('share') ?? undefined);
    if (!link) throw notFound;
    shareKey = link.token;
    through = { grant: { siteId: site.id, visibility: site.visibility, shareLinkId: link.id, keyHash: null } };
  }
  if (site.visibility === 'visitor-auth' && !member) {
    try {
      const until = await verifyVisitor(site, input.jwt ?? url.searchParams.get('jwt_token') ?? undefined);
      const keyHash = siteKeyHash(site.auth_key);
      through = { grant: { siteId: site.id, visibility: site.visibility, shareLinkId: null, keyHash }, until };
    } catch (err) {
      if (err instanceof VisitorRefused && input.redirectOnError && site.auth_fallback_url) {
        return { target: 'external' as const, site: site.id, redirect: site.auth_fallback_url };
      }
      throw err;
    }
  }

  // Section, then site space, by path; the defaults where the path names neither.
  const sections = await sectionsOf(ctx.db, site.organization_id, site.id);
  let parts = [...rest];
  let section: SiteSectionRow | undefined;
  if (sections.length) {
    section = sections.find((s) => !s.is_default && s.path === parts[0]);
    if (section) parts = parts.slice(1);
    else section = sections.find((s) => s.is_default);
    if (!section) throw notFound;
  }
  const candidates: SiteSpaceRow[] = await siteSpacesIn(ctx.db, site.organization_id, site.id, section?.id ?? null);
  let siteSpace = candidates.find((s) => !s.is_default && s.path === parts[0]);
  if (siteSpace) parts = parts.slice(1);
  else siteSpace = candidates.find((s) => s.is_default);
  if (!siteSpace) throw notFound;

  const base = siteBaseUrl(ctx.urls, site);
  const prefix = rest.slice(0, rest.length - parts.length).map(encodeURIComponent).join('/');
  const pathname = parts.join('/');
  const spaceId = siteSpace.space_id;
  if (pathname) {
    const reader = new ContentReader(ctx.db, await spaceRoot(ctx.db, site.organization_id, spaceId));
    const page = await reader.byPath(pathname);
    if (!page) {
      // A page that moved in a git-synced space: its repository's .gitbook.yaml says where.
      const movedTo = await gitRedirectPage(ctx.db, { id: spaceId, organization_id: site.organization_id }, pathname);
      const moved = movedTo ? await reader.page(movedTo) : undefined;
      if (moved) return { target: 'content' as const, redirect: `${base}${prefix ? `${prefix}/` : ''}${await reader.path(moved)}` };
      const redirect = await matchRedirect(ctx.db, site, `/${rest.join('/')}`);
      const target = redirect && (await redirectTarget(ctx, site, redirect.row, redirect.suffix));
      if (target) return { target: 'content' as const, redirect: target };
      throw notFound;
    }
  }
  const siteBasePath = new URL(base).pathname;
  const basePath = siteBasePath + (prefix ? `${prefix}/` : '');
  return {
    site: site.id,
    ...(section ? { siteSection: section.id } : {}),
    siteSpace: siteSpace.id,
    space: spaceId,
    pathname,
    basePath,
    siteBasePath,
    apiToken: await issueContentToken(ctx, spaceId, through),
    organization: site.organization_id,
    ...(shareKey ? { shareKey } : {}),
    complete: true,
    canonicalUrl: `${base}${prefix ? `${prefix}/` : ''}${pathname}`,
  };
}
