import type { Ctx } from '../platform/context.ts';
import type { Db } from '../platform/db/database.ts';
import type { Role, RoleOrGuest, SiteRow, SiteShareLinkRow } from '../platform/db/schema.ts';
import { NotFoundError } from '../platform/errors.ts';
import { assertSiteRole, atLeast } from '../platform/policy.ts';
import { orgRoleOf } from '../access/effective.ts';
import { grantCoversSite } from '../events/coverage.ts';
import * as store from './store.ts';

export interface SiteAccess {
  site: SiteRow;
  /** The caller's organization role: undefined for a visitor who is not a member, null for guests. */
  orgRole: RoleOrGuest | undefined;
  /** The active share link the caller came through (a visitor of a share-link site). */
  shareLink?: SiteShareLinkRow;
}

/**
 * A site for a member of its organization holding at least `min`: 404 when the organization or site
 * is invisible to the caller (outsiders and guests never learn a site exists), 403 when the role is
 * too weak.
 */
export async function requireSite(ctx: Ctx, organizationId: string, siteId: string, min: Role, action: string): Promise<SiteAccess> {
  if (ctx.integration) return integrationSite(ctx, organizationId, siteId);
  const orgRole = await orgRoleOf(ctx.db, organizationId, ctx.user.id);
  if (orgRole === undefined) throw new NotFoundError('Organization');
  const site = await store.findSite(ctx.db, organizationId, siteId);
  if (!site || !atLeast(orgRole, 'read')) throw new NotFoundError('Site');
  assertSiteRole(orgRole, min, action);
  return { site, orgRole };
}

/**
 * A site for an installation token: one its installation covers, else "not found". Which calls it
 * may make there (reads, the adaptive schema) was decided by its scopes before the route ran
 * (`assertIntegrationRoute`); it is never a member, so it reads as one with the `read` role.
 */
async function integrationSite(ctx: Ctx, organizationId: string, siteId: string): Promise<SiteAccess> {
  const site = await store.findSite(ctx.db, organizationId, siteId);
  if (!site || !(await grantCoversSite(ctx.db, ctx.integration!, site))) throw new NotFoundError('Site');
  return { site, orgRole: 'read' };
}

/** An active share link of a site by its token (none without a token). */
export async function activeShareLink(db: Db, site: SiteRow, token: string | undefined): Promise<SiteShareLinkRow | undefined> {
  if (!token) return undefined;
  return store.activeShareLink(db, site.organization_id, site.id, token);
}

/**
 * A site as its audience reads it: members with a role always; anyone else only while it is
 * published, and then a public or unlisted site freely, a share-link site with an active share key.
 * Visitor-auth sites are read by visitors through URL resolution with their JWT.
 */
export async function readableSite(ctx: Ctx, organizationId: string, siteId: string, shareKey?: string): Promise<SiteAccess> {
  if (ctx.integration) return integrationSite(ctx, organizationId, siteId);
  const orgRole = await orgRoleOf(ctx.db, organizationId, ctx.user.id);
  const site = await store.findSite(ctx.db, organizationId, siteId);
  if (!site) throw new NotFoundError(orgRole === undefined ? 'Organization' : 'Site');
  if (atLeast(orgRole, 'read')) return { site, orgRole };
  if (site.published) {
    if (site.visibility === 'public' || site.visibility === 'unlisted') return { site, orgRole };
    if (site.visibility === 'share-link') {
      const shareLink = await activeShareLink(ctx.db, site, shareKey);
      if (shareLink) return { site, orgRole, shareLink };
    }
  }
  throw new NotFoundError(orgRole === undefined ? 'Organization' : 'Site');
}
