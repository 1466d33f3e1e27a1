import { createHmac } from 'node:crypto';
import type { FastifyRequest } from 'fastify';
import { hashToken, type SiteGrant } from '../platform/auth.ts';
import type { Ctx } from '../platform/context.ts';
import type { Db } from '../platform/db/database.ts';
import { ForbiddenError, NotFoundError } from '../platform/errors.ts';
import { grantingSite, insertContentToken, shareLinkActive } from './store.ts';

/**
 * Content tokens: the `apiToken` of a resolved published URL. A site front-end may hand it to
 * browsers, so it reads one space's content and does nothing else: the space itself, its current
 * content, its revisions, documents, search and links, with GET or HEAD. Everything else is refused
 * at authentication (`assertContentTokenRoute`): writes, the space's change requests (unmerged
 * drafts), comments, permissions (who has access), git and integration settings, other spaces,
 * organizations, the user's profile and tokens. Within that, it reads only what the caller who
 * resolved the URL may read at the time of each request (the space checks the caller's role as for
 * any token), and never more than `read`.
 *
 * Resolved through a site, the token also reads what that site publishes to the visitor who resolved
 * it, as the site itself would show it: the space's current content (not its history), while the
 * site is published, still shows the space, keeps the audience it had (its visibility) and, for a
 * share-link site, while the share link used stays active. So a visitor who is no member of the
 * space behind a public site can read its pages through the API, as they read them on the site.
 * A visitor-auth site's grant ends when the site's key changes, and never outlives the visitor's JWT.
 */

/** Route addresses (as registered) a content token may read, below its own space. */
const READABLE_ROUTE = /^\/v1\/spaces\/:spaceId(?:\/(?:content|revisions|documents|search|links)(?:\/.*)?)?$/;

/**
 * Refuses what a content token for `spaceId` may not call: another space is not found (its
 * existence is not revealed), anything else of its own space but a content read is forbidden, and
 * so is every route outside spaces.
 */
export function assertContentTokenRoute(req: FastifyRequest, spaceId: string): void {
  const url = req.routeOptions.url ?? '';
  const params = (req.params ?? {}) as Record<string, string>;
  if (url.startsWith('/v1/spaces/:spaceId') && params.spaceId !== spaceId) throw new NotFoundError('Space');
  if ((req.method === 'GET' || req.method === 'HEAD') && READABLE_ROUTE.test(url)) return;
  throw new ForbiddenError(
    `This is a read-only content token for space ${spaceId}: it can only read that space and its content ` +
      `(GET /v1/spaces/${spaceId}, its content, revisions, documents, search and links), not ${req.method} ${url}`,
  );
}

/**
 * The content token of the caller for a space, derived from the caller's own token, the space and
 * the hour (HMAC with the server key): one row per caller token, space and hour however often URLs
 * are resolved. It expires at most two hours from now and never after the caller's token, and
 * stops as soon as that token is revoked (`parent_token_id`).
 */
export async function issueContentToken(
  ctx: Ctx,
  spaceId: string,
  /** The site the URL was resolved through, and until when its audience admits the visitor (a visitor JWT's expiry). */
  through?: { grant: SiteGrant; until?: Date | undefined },
): Promise<string> {
  const hour = Math.floor(Date.now() / 3_600_000);
  const grant = through?.grant;
  // Each grant its own token: a token once given keeps the grant it was given with.
  const granted = grant ? `${grant.siteId}:${grant.visibility}:${grant.shareLinkId ?? ''}:${grant.keyHash ?? ''}:${through?.until?.getTime() ?? ''}` : '';
  const secret = createHmac('sha256', ctx.signingKey)
    .update(`content-token:${ctx.user.id}:${ctx.token?.id ?? ''}:${spaceId}:${hour}:${granted}`)
    .digest('base64url');
  const token = `folio_${secret}`;
  const hash = hashToken(token);
  let expires = new Date((hour + 2) * 3_600_000);
  if (ctx.token?.expiresAt && ctx.token.expiresAt < expires) expires = ctx.token.expiresAt;
  if (through?.until && through.until < expires) expires = through.until;
  await insertContentToken(ctx.db, {
    // From the hash, not the secret: token listings show the id.
    id: `c${hash.slice(0, 19)}`,
    user_id: ctx.user.id,
    token_hash: hash,
    created_at: new Date(),
    name: `published content ${spaceId}`,
    expires_at: expires,
    revoked_at: null,
    // A token obtained through an organization's SSO keeps reaching that organization.
    sso_organization_id: ctx.token?.ssoOrganizationId ?? null,
    scope_space_id: spaceId,
    parent_token_id: ctx.token?.id ?? null,
    scope_site_id: grant?.siteId ?? null,
    scope_site_visibility: grant?.visibility ?? null,
    scope_share_link_id: grant?.shareLinkId ?? null,
    scope_site_key_hash: grant?.keyHash ?? null,
  });
  return token;
}

/**
 * Whether a site's grant to a content token still holds for a space: the site is published, shows
 * the space, has the audience it had when the token was given and, for a share-link site, the share
 * link used is still active and, for a visitor-auth site, its key is still the one that signed the
 * visitor's JWT.
 */
export async function siteGrantHolds(db: Db, grant: SiteGrant, spaceId: string): Promise<boolean> {
  const site = await grantingSite(db, grant.siteId, spaceId);
  if (!site?.published || site.visibility !== grant.visibility) return false;
  if (site.visibility === 'visitor-auth') return grant.keyHash === siteKeyHash(site.auth_key);
  if (site.visibility !== 'share-link') return true;
  if (!grant.shareLinkId) return false;
  return shareLinkActive(db, grant.siteId, grant.shareLinkId);
}

/** What a visitor-auth grant keeps of the site's key: enough to tell the key changed, nothing to sign with. */
export function siteKeyHash(key: string): string {
  return hashToken(`site-key:${key}`);
}
