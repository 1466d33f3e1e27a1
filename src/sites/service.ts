import { randomBytes } from 'node:crypto';
import { siteExtensions } from './hooks.ts';
import type { Ctx } from '../platform/context.ts';
import type { SiteRow, SpaceRow } from '../platform/db/schema.ts';
import { BadRequestError, ConflictError, isUniqueViolation, NotFoundError } from '../platform/errors.ts';
import { slugFrom, uniqueAmong } from '../platform/slug.ts';
import { assertSiteRole, sitePermissions } from '../platform/policy.ts';
import { orgRoleOf } from '../access/effective.ts';
import { readableSite, requireSite, type SiteAccess } from './access.ts';
import { applyOverride, effectiveCustomization, withoutPrivateSettings } from './customization.ts';
import { presentShareLink, presentSite } from './presenter.ts';
import { HOSTNAME_PATTERN, PROXY_PATTERN, BASENAME_PATTERN, type CreateSiteInput, type UpdatePublishingAuthInput, type UpdateSiteInput } from './schemas.ts';
import * as store from './store.ts';
import { findSection, findSiteSpace, markDefaultSiteSpace, markDefaultSection } from './store-structure.ts';
import { insertSiteSpace, lockSite, siteStructure, spaceForSite } from './structure.ts';

/** 192 random bits, URL-safe: share-link tokens and visitor-auth keys. */
export function newSecret(): string {
  return randomBytes(24).toString('base64url');
}

/** Sites of one organization as resources, their site spaces counted in one query. */
export async function presentSites(ctx: Ctx, organizationId: string, items: { site: SiteRow; orgRole: SiteAccess['orgRole'] }[]) {
  const counts = await store.siteSpaceCounts(ctx.db, organizationId, items.map((i) => i.site.id));
  return items.map((i) => presentSite(ctx.urls, i.site, i.orgRole, counts.get(i.site.id) ?? 0));
}

export async function presentOne(ctx: Ctx, access: SiteAccess) {
  return (await presentSites(ctx, access.site.organization_id, [access]))[0]!;
}

export async function listSites(
  ctx: Ctx,
  organizationId: string,
  query: { page?: string | undefined; limit?: number | undefined; space?: string | undefined; title?: string | undefined; published?: boolean | undefined; type?: string[] | undefined },
) {
  const orgRole = await orgRoleOf(ctx.db, organizationId, ctx.user.id);
  if (orgRole === undefined) throw new NotFoundError('Organization');
  assertSiteRole(orgRole, 'read', 'list the sites of the organization');
  const page = await store.pageSites(ctx.db, organizationId, query, query);
  return { ...page, items: await presentSites(ctx, organizationId, page.items.map((site) => ({ site, orgRole }))) };
}

export async function createSite(ctx: Ctx, organizationId: string, input: CreateSiteInput) {
  const orgRole = await orgRoleOf(ctx.db, organizationId, ctx.user.id);
  if (orgRole === undefined) throw new NotFoundError('Organization');
  assertSiteRole(orgRole, 'admin', 'create a site');
  const title = input.title ?? 'Untitled site';
  // Spaces are checked before the transaction (reads outside it would wait for it on PGlite).
  const spaces: SpaceRow[] = [];
  for (const [i, spaceId] of (input.spaces ?? []).entries()) spaces.push(await spaceForSite(ctx, organizationId, spaceId, `spaces[${i}]`));
  const now = new Date();
  const site = await ctx.db.transaction().execute(async (trx) => {
    // One creation at a time per organization, so two sites never pick the same basename.
    await store.lockSiteCreation(trx, organizationId);
    const base = slugFrom(title, 'site');
    const basename = uniqueAmong(base, await store.takenBasenames(trx, organizationId, base));
    const created = await store.insertSite(trx, organizationId, {
      type: input.type ?? 'basic',
      title,
      basename,
      visibility: input.visibility ?? 'public',
      authKey: newSecret(),
      createdBy: ctx.user.id,
      at: now,
    });
    for (const space of spaces) await insertSiteSpace(trx, created, space, undefined);
    return created;
  });
  return presentOne(ctx, { site, orgRole });
}

export async function getSite(ctx: Ctx, organizationId: string, siteId: string) {
  return presentOne(ctx, await requireSite(ctx, organizationId, siteId, 'read', 'read the site'));
}

export async function updateSite(ctx: Ctx, organizationId: string, siteId: string, input: UpdateSiteInput) {
  const contentOnly = Object.keys(input).every((k) => k === 'title' || k === 'defaultSiteSpace' || k === 'defaultSiteSection');
  const access = await requireSite(ctx, organizationId, siteId, contentOnly ? 'create' : 'admin', contentOnly ? 'change the site' : `change ${Object.keys(input).join(', ')} of the site`);
  if (input.basename !== undefined && !new RegExp(BASENAME_PATTERN).test(input.basename)) {
    throw new BadRequestError('basename: use lowercase letters, digits and hyphens (not at either end), at most 100 characters, such as "api-docs"');
  }
  let hostname = input.hostname;
  if (typeof hostname === 'string') {
    hostname = hostname.toLowerCase();
    if (hostname.length > 253 || !new RegExp(HOSTNAME_PATTERN).test(hostname)) {
      throw new BadRequestError('hostname: expected a domain name with at least three labels, such as docs.example.com');
    }
  }
  if (typeof input.proxy === 'string' && !new RegExp(PROXY_PATTERN).test(input.proxy)) {
    throw new BadRequestError('proxy: expected a host and at least one path segment without scheme, such as example.com/docs');
  }
  try {
    const site = await ctx.db.transaction().execute(async (trx) => {
      const site = await lockSite(trx, access.site);
      const org = site.organization_id;
      if (input.defaultSiteSection !== undefined) {
        const section = await findSection(trx, org, site.id, input.defaultSiteSection);
        if (!section) throw new BadRequestError(`defaultSiteSection: section ${input.defaultSiteSection} is not part of this site`);
        await markDefaultSection(trx, org, site.id, section.id);
      }
      if (input.defaultSiteSpace !== undefined) {
        const row = await findSiteSpace(trx, org, site.id, input.defaultSiteSpace);
        if (!row) throw new BadRequestError(`defaultSiteSpace: site space ${input.defaultSiteSpace} is not part of this site`);
        if (row.section_id && !(await findSection(trx, org, site.id, row.section_id))?.is_default) {
          throw new BadRequestError('defaultSiteSpace: on a site with sections, pick a site space of the default section (or change the default of its section)');
        }
        await markDefaultSiteSpace(trx, org, site.id, row.section_id, row.id);
      }
      return store.updateSite(trx, org, site.id, {
        title: input.title,
        visibility: input.visibility,
        basename: input.basename,
        hostname,
        proxy: input.proxy,
        adaptiveContent: input.adaptiveContent?.enabled,
        agentsContext: input.agentsContext,
      });
    });
    return presentOne(ctx, { site, orgRole: access.orgRole });
  } catch (err) {
    if (isUniqueViolation(err)) {
      const detail = String((err as { constraint?: string }).constraint ?? (err as Error).message);
      if (detail.includes('hostname')) throw new ConflictError(`hostname: ${hostname} is already used by another site`);
      throw new ConflictError(`basename: another site of the organization already uses "${input.basename}"`);
    }
    throw err;
  }
}

export async function deleteSite(ctx: Ctx, organizationId: string, siteId: string) {
  let access;
  try {
    access = await requireSite(ctx, organizationId, siteId, 'read', 'read the site');
  } catch (err) {
    if (err instanceof NotFoundError) return; // deleting what does not exist (for the caller) is a no-op
    throw err;
  }
  assertSiteRole(access.orgRole, 'admin', 'delete the site');
  await store.deleteSite(ctx.db, access.site.organization_id, access.site.id);
}

export async function setPublished(ctx: Ctx, organizationId: string, siteId: string, published: boolean) {
  const access = await requireSite(ctx, organizationId, siteId, 'admin', published ? 'publish the site' : 'unpublish the site');
  const site = await ctx.db.transaction().execute(async (trx) => {
    const site = await lockSite(trx, access.site);
    if (published && !(await store.hasSiteSpaces(trx, site.organization_id, site.id))) {
      throw new BadRequestError('The site has no content yet: add a space (POST …/site-spaces) before publishing it');
    }
    return store.updateSite(trx, site.organization_id, site.id, { published });
  });
  return presentOne(ctx, { site, orgRole: access.orgRole });
}

// Published content ------------------------------------------------------------------------------

export async function publishedContentSite(ctx: Ctx, organizationId: string, siteId: string, shareKey?: string) {
  const access = await readableSite(ctx, organizationId, siteId, shareKey);
  const structure = await siteStructure(ctx, access, access.shareLink?.token);
  const overrides = await store.customizedSiteSpaces(ctx.db, access.site.organization_id, access.site.id);
  const siteSettings = withoutPrivateSettings(presentCustomization(access.site));
  return {
    object: 'published-content-site' as const,
    site: await presentOne(ctx, access),
    structure,
    customizations: {
      site: siteSettings,
      siteSpaces: Object.fromEntries(overrides.map((o) => [o.id, withoutPrivateSettings(effectiveCustomization(access.site.customization, o.customization))])),
    },
    // What the published pages load (the same list as listSiteIntegrationScripts).
    scripts: await siteExtensions.publishedScripts(ctx, access.site),
  };
}

// Share links ------------------------------------------------------------------------------------

export async function listShareLinks(ctx: Ctx, organizationId: string, siteId: string, query: { page?: string | undefined; limit?: number | undefined; search?: string | undefined }) {
  const { site } = await requireSite(ctx, organizationId, siteId, 'admin', 'see the share links of the site');
  const page = await store.pageShareLinks(ctx.db, site.organization_id, site.id, query.search, query);
  return { ...page, items: page.items.map((l) => presentShareLink(ctx.urls, site, l)) };
}

export async function createShareLink(ctx: Ctx, organizationId: string, siteId: string, name: string) {
  const { site } = await requireSite(ctx, organizationId, siteId, 'admin', 'create share links for the site');
  const link = await store.insertShareLink(ctx.db, site.organization_id, site.id, name, newSecret());
  return presentShareLink(ctx.urls, site, link);
}

export async function updateShareLink(ctx: Ctx, organizationId: string, siteId: string, linkId: string, input: { active?: boolean | undefined; name?: string | undefined }) {
  const { site } = await requireSite(ctx, organizationId, siteId, 'admin', 'change share links of the site');
  const link = await store.updateShareLink(ctx.db, site.organization_id, site.id, linkId, input);
  if (!link) throw new NotFoundError('Share link');
  return presentShareLink(ctx.urls, site, link);
}

export async function deleteShareLink(ctx: Ctx, organizationId: string, siteId: string, linkId: string) {
  const { site } = await requireSite(ctx, organizationId, siteId, 'admin', 'delete share links of the site');
  await store.deleteShareLink(ctx.db, site.organization_id, site.id, linkId);
}

// Customization ----------------------------------------------------------------------------------

export function presentCustomization(site: SiteRow, override?: { customization: unknown; customization_updated_at: Date | null }) {
  const merged = effectiveCustomization(site.customization, override?.customization);
  const updated = [site.customization_updated_at, override?.customization_updated_at].filter((d): d is Date => !!d).sort((a, b) => b.getTime() - a.getTime())[0];
  return { ...merged, ...(updated ? { updatedAt: updated.toISOString() } : {}) };
}

/** The settings as the caller may read them: whole for those who may change them. */
function customizationFor(orgRole: SiteAccess['orgRole'], settings: Record<string, unknown>) {
  return sitePermissions(orgRole).create ? settings : withoutPrivateSettings(settings);
}

export async function getCustomization(ctx: Ctx, organizationId: string, siteId: string) {
  const { site, orgRole } = await requireSite(ctx, organizationId, siteId, 'read', 'read the site');
  return customizationFor(orgRole, presentCustomization(site));
}

/** Replaces the site's settings; the `updatedAt` a read returned may come back with them and is ignored. */
export async function putCustomization(ctx: Ctx, organizationId: string, siteId: string, input: Record<string, unknown>) {
  const access = await requireSite(ctx, organizationId, siteId, 'create', 'customize the site');
  const { updatedAt: _ignored, ...settings } = input;
  const site = await store.updateSite(ctx.db, access.site.organization_id, access.site.id, { customization: settings });
  return presentCustomization(site);
}

async function siteSpaceRow(ctx: Ctx, site: SiteRow, siteSpaceId: string) {
  const row = await findSiteSpace(ctx.db, site.organization_id, site.id, siteSpaceId);
  if (!row) throw new NotFoundError('Site space');
  return row;
}

export async function getSiteSpaceCustomization(ctx: Ctx, organizationId: string, siteId: string, siteSpaceId: string) {
  const { site, orgRole } = await requireSite(ctx, organizationId, siteId, 'read', 'read the site');
  return customizationFor(orgRole, presentCustomization(site, await siteSpaceRow(ctx, site, siteSpaceId)));
}

export async function overrideSiteSpaceCustomization(ctx: Ctx, organizationId: string, siteId: string, siteSpaceId: string, patch: Record<string, unknown>) {
  const { site } = await requireSite(ctx, organizationId, siteId, 'create', 'customize the site');
  const row = await ctx.db.transaction().execute(async (trx) => {
    const current = await store.lockSiteSpace(trx, site.organization_id, site.id, siteSpaceId);
    if (!current) throw new NotFoundError('Site space');
    const next = applyOverride(current.customization, patch);
    return store.setSiteSpaceCustomization(trx, site.organization_id, current.id, Object.keys(next).length ? next : null);
  });
  return presentCustomization(site, row);
}

export async function deleteSiteSpaceCustomization(ctx: Ctx, organizationId: string, siteId: string, siteSpaceId: string) {
  const { site } = await requireSite(ctx, organizationId, siteId, 'create', 'customize the site');
  await store.deleteSiteSpaceCustomization(ctx.db, site.organization_id, site.id, siteSpaceId);
}

// Publishing auth (visitor-auth key) -------------------------------------------------------------

function presentAuth(site: SiteRow) {
  return {
    object: 'publishing-auth' as const,
    backend: site.auth_backend,
    privateKey: site.auth_key,
    ...(site.auth_fallback_url ? { fallbackURL: site.auth_fallback_url } : {}),
    ...(site.auth_logout_url ? { logoutURL: site.auth_logout_url } : {}),
  };
}

export async function getPublishingAuth(ctx: Ctx, organizationId: string, siteId: string) {
  const { site } = await requireSite(ctx, organizationId, siteId, 'admin', 'see the visitor authentication settings');
  return presentAuth(site);
}

export async function updatePublishingAuth(ctx: Ctx, organizationId: string, siteId: string, input: UpdatePublishingAuthInput) {
  const { site } = await requireSite(ctx, organizationId, siteId, 'admin', 'change the visitor authentication settings');
  const updated = await store.updateSite(ctx.db, site.organization_id, site.id, {
    authBackend: input.backend,
    authFallbackUrl: input.fallbackURL,
    authLogoutUrl: input.logoutURL,
  });
  return presentAuth(updated);
}

/** A new signing key: visitor tokens signed with the old one stop working at once. */
export async function regeneratePublishingAuth(ctx: Ctx, organizationId: string, siteId: string) {
  const { site } = await requireSite(ctx, organizationId, siteId, 'admin', 'regenerate the visitor authentication key');
  const updated = await store.updateSite(ctx.db, site.organization_id, site.id, { authKey: newSecret() });
  return presentAuth(updated);
}
