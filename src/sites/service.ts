import { randomBytes } from 'node:crypto';
import { siteExtensions } from './hooks.ts';
import { sql } from 'kysely';
import type { Ctx } from '../platform/context.ts';
import { json, type Db } from '../platform/db/database.ts';
import type { SiteRow, SpaceRow } from '../platform/db/schema.ts';
import { BadRequestError, ConflictError, isUniqueViolation, NotFoundError } from '../platform/errors.ts';
import { newId } from '../platform/ids.ts';
import { paginate } from '../platform/paging.ts';
import { slugFrom, uniqueAmong } from '../platform/slug.ts';
import { assertSiteRole, sitePermissions } from '../platform/policy.ts';
import { orgRoleOf } from '../access/effective.ts';
import { readableSite, requireSite, type SiteAccess } from './access.ts';
import { applyOverride, effectiveCustomization, withoutPrivateSettings } from './customization.ts';
import { presentShareLink, presentSite, siteSpaceCounts } from './presenter.ts';
import { HOSTNAME_PATTERN, PROXY_PATTERN, BASENAME_PATTERN, type CreateSiteInput, type UpdatePublishingAuthInput, type UpdateSiteInput } from './schemas.ts';
import { insertSiteSpace, lockSite, siteStructure, spaceForSite } from './structure.ts';

/** 192 random bits, URL-safe: share-link tokens and visitor-auth keys. */
export function newSecret(): string {
  return randomBytes(24).toString('base64url');
}

export async function presentSites(ctx: Ctx, items: { site: SiteRow; orgRole: SiteAccess['orgRole'] }[]) {
  const counts = await siteSpaceCounts(ctx, items.map((i) => i.site.id));
  return items.map((i) => presentSite(ctx.urls, i.site, i.orgRole, counts.get(i.site.id) ?? 0));
}

export async function presentOne(ctx: Ctx, access: SiteAccess) {
  return (await presentSites(ctx, [access]))[0]!;
}

export async function listSites(
  ctx: Ctx,
  organizationId: string,
  query: { page?: string | undefined; limit?: number | undefined; space?: string | undefined; title?: string | undefined; published?: boolean | undefined; type?: string[] | undefined },
) {
  const orgRole = await orgRoleOf(ctx.db, organizationId, ctx.user.id);
  if (orgRole === undefined) throw new NotFoundError('Organization');
  assertSiteRole(orgRole, 'read', 'list the sites of the organization');
  let base = ctx.db.selectFrom('sites').selectAll('sites').where('sites.organization_id', '=', organizationId);
  if (query.title) base = base.where(sql<boolean>`strpos(lower(sites.title), lower(${query.title})) > 0`);
  if (query.published !== undefined) base = base.where('sites.published', '=', query.published);
  if (query.type?.length) base = base.where('sites.type', 'in', query.type);
  if (query.space) {
    const spaceId = query.space;
    base = base.where((eb) => eb.exists(eb.selectFrom('site_spaces').select('site_spaces.id').whereRef('site_spaces.site_id', '=', 'sites.id').where('site_spaces.space_id', '=', spaceId)));
  }
  const filterKey = JSON.stringify([query.space ?? null, query.title ?? null, query.published ?? null, query.type ?? null]);
  const page = await paginate(base, { kind: `sites:${filterKey}`, sortExpr: null, seqExpr: sql.ref('sites.seq'), direction: 'asc' }, query);
  return { ...page, items: await presentSites(ctx, page.items.map((site) => ({ site, orgRole }))) };
}

async function takenBasenames(trx: Db, organizationId: string, base: string): Promise<Set<string>> {
  const rows = await trx
    .selectFrom('sites')
    .select('basename')
    .where('organization_id', '=', organizationId)
    .where((eb) => eb.or([eb('basename', '=', base), eb('basename', 'like', `${base.replace(/[%_\\]/g, '\\$&')}-%`)]))
    .execute();
  return new Set(rows.map((r) => r.basename));
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
    await sql`SELECT pg_advisory_xact_lock(hashtext(${`sites:${organizationId}`}))`.execute(trx);
    const base = slugFrom(title, 'site');
    const basename = uniqueAmong(base, await takenBasenames(trx, organizationId, base));
    const created = await trx
      .insertInto('sites')
      .values({
        id: newId(),
        organization_id: organizationId,
        type: input.type ?? 'basic',
        title,
        basename,
        hostname: null,
        proxy: null,
        visibility: input.visibility ?? 'public',
        adaptive_schema: null,
        adaptive_schema_updated_at: null,
        customization_updated_at: null,
        auth_key: newSecret(),
        auth_fallback_url: null,
        auth_logout_url: null,
        created_by: ctx.user.id,
        created_at: now,
        updated_at: now,
      })
      .returningAll()
      .executeTakeFirstOrThrow();
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
      if (input.defaultSiteSection !== undefined) {
        const section = await trx.selectFrom('site_sections').select('id').where('site_id', '=', site.id).where('id', '=', input.defaultSiteSection).executeTakeFirst();
        if (!section) throw new BadRequestError(`defaultSiteSection: section ${input.defaultSiteSection} is not part of this site`);
        await trx.updateTable('site_sections').set({ is_default: sql`id = ${section.id}` }).where('site_id', '=', site.id).execute();
      }
      if (input.defaultSiteSpace !== undefined) {
        const row = await trx.selectFrom('site_spaces').selectAll().where('site_id', '=', site.id).where('id', '=', input.defaultSiteSpace).executeTakeFirst();
        if (!row) throw new BadRequestError(`defaultSiteSpace: site space ${input.defaultSiteSpace} is not part of this site`);
        if (row.section_id) {
          const section = await trx.selectFrom('site_sections').select('is_default').where('id', '=', row.section_id).executeTakeFirstOrThrow();
          if (!section.is_default) {
            throw new BadRequestError('defaultSiteSpace: on a site with sections, pick a site space of the default section (or change the default of its section)');
          }
        }
        await markDefaultSiteSpace(trx, site.id, row.section_id, row.id);
      }
      return trx
        .updateTable('sites')
        .set({
          ...(input.title !== undefined ? { title: input.title } : {}),
          ...(input.visibility !== undefined ? { visibility: input.visibility } : {}),
          ...(input.basename !== undefined ? { basename: input.basename } : {}),
          ...(hostname !== undefined ? { hostname } : {}),
          ...(input.proxy !== undefined ? { proxy: input.proxy } : {}),
          ...(input.adaptiveContent !== undefined ? { adaptive_content: input.adaptiveContent.enabled } : {}),
          ...(input.agentsContext !== undefined ? { agents_context: input.agentsContext } : {}),
          updated_at: new Date(),
        })
        .where('id', '=', site.id)
        .returningAll()
        .executeTakeFirstOrThrow();
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

/** Makes one site space the default of its container (a section, or the site root). */
export async function markDefaultSiteSpace(trx: Db, siteId: string, sectionId: string | null, siteSpaceId: string) {
  let q = trx.updateTable('site_spaces').set({ is_default: sql`id = ${siteSpaceId}` }).where('site_id', '=', siteId);
  q = sectionId === null ? q.where('section_id', 'is', null) : q.where('section_id', '=', sectionId);
  await q.execute();
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
  await ctx.db.deleteFrom('sites').where('id', '=', access.site.id).execute();
}

export async function setPublished(ctx: Ctx, organizationId: string, siteId: string, published: boolean) {
  const access = await requireSite(ctx, organizationId, siteId, 'admin', published ? 'publish the site' : 'unpublish the site');
  const site = await ctx.db.transaction().execute(async (trx) => {
    const site = await lockSite(trx, access.site);
    if (published) {
      const any = await trx.selectFrom('site_spaces').select('id').where('site_id', '=', site.id).limit(1).executeTakeFirst();
      if (!any) throw new BadRequestError('The site has no content yet: add a space (POST …/site-spaces) before publishing it');
    }
    return trx.updateTable('sites').set({ published, updated_at: new Date() }).where('id', '=', site.id).returningAll().executeTakeFirstOrThrow();
  });
  return presentOne(ctx, { site, orgRole: access.orgRole });
}

// Published content ------------------------------------------------------------------------------

export async function publishedContentSite(ctx: Ctx, organizationId: string, siteId: string, shareKey?: string) {
  const access = await readableSite(ctx, organizationId, siteId, shareKey);
  const structure = await siteStructure(ctx, access, access.shareLink?.token);
  const overrides = await ctx.db
    .selectFrom('site_spaces')
    .select(['id', 'customization'])
    .where('site_id', '=', access.site.id)
    .where('customization', 'is not', null)
    .execute();
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
  let base = ctx.db.selectFrom('site_share_links').selectAll().where('site_id', '=', site.id);
  if (query.search) base = base.where(sql<boolean>`strpos(lower(name), lower(${query.search})) > 0`);
  const page = await paginate(base, { kind: `share-links:${query.search ?? ''}`, sortExpr: null, seqExpr: sql.ref('seq'), direction: 'asc' }, query);
  return { ...page, items: page.items.map((l) => presentShareLink(ctx.urls, site, l)) };
}

export async function createShareLink(ctx: Ctx, organizationId: string, siteId: string, name: string) {
  const { site } = await requireSite(ctx, organizationId, siteId, 'admin', 'create share links for the site');
  const link = await ctx.db
    .insertInto('site_share_links')
    .values({ id: newId(), organization_id: organizationId, site_id: site.id, name, token: newSecret(), created_at: new Date() })
    .returningAll()
    .executeTakeFirstOrThrow();
  return presentShareLink(ctx.urls, site, link);
}

export async function updateShareLink(ctx: Ctx, organizationId: string, siteId: string, linkId: string, input: { active?: boolean | undefined; name?: string | undefined }) {
  const { site } = await requireSite(ctx, organizationId, siteId, 'admin', 'change share links of the site');
  const link = await ctx.db
    .updateTable('site_share_links')
    .set({ ...(input.active !== undefined ? { active: input.active } : {}), ...(input.name !== undefined ? { name: input.name } : {}) })
    .where('site_id', '=', site.id)
    .where('id', '=', linkId)
    .returningAll()
    .executeTakeFirst();
  if (!link) throw new NotFoundError('Share link');
  return presentShareLink(ctx.urls, site, link);
}

export async function deleteShareLink(ctx: Ctx, organizationId: string, siteId: string, linkId: string) {
  const { site } = await requireSite(ctx, organizationId, siteId, 'admin', 'delete share links of the site');
  await ctx.db.deleteFrom('site_share_links').where('site_id', '=', site.id).where('id', '=', linkId).execute();
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
  const site = await ctx.db
    .updateTable('sites')
    .set({ customization: json(settings), customization_updated_at: new Date(), updated_at: new Date() })
    .where('id', '=', access.site.id)
    .returningAll()
    .executeTakeFirstOrThrow();
  return presentCustomization(site);
}

async function siteSpaceRow(db: Db, siteId: string, siteSpaceId: string) {
  const row = await db.selectFrom('site_spaces').selectAll().where('site_id', '=', siteId).where('id', '=', siteSpaceId).executeTakeFirst();
  if (!row) throw new NotFoundError('Site space');
  return row;
}

export async function getSiteSpaceCustomization(ctx: Ctx, organizationId: string, siteId: string, siteSpaceId: string) {
  const { site, orgRole } = await requireSite(ctx, organizationId, siteId, 'read', 'read the site');
  return customizationFor(orgRole, presentCustomization(site, await siteSpaceRow(ctx.db, site.id, siteSpaceId)));
}

export async function overrideSiteSpaceCustomization(ctx: Ctx, organizationId: string, siteId: string, siteSpaceId: string, patch: Record<string, unknown>) {
  const { site } = await requireSite(ctx, organizationId, siteId, 'create', 'customize the site');
  const row = await ctx.db.transaction().execute(async (trx) => {
    const current = await trx.selectFrom('site_spaces').selectAll().where('site_id', '=', site.id).where('id', '=', siteSpaceId).forUpdate().executeTakeFirst();
    if (!current) throw new NotFoundError('Site space');
    const next = applyOverride(current.customization, patch);
    return trx
      .updateTable('site_spaces')
      .set({ customization: Object.keys(next).length ? json(next) : null, customization_updated_at: new Date() })
      .where('id', '=', current.id)
      .returningAll()
      .executeTakeFirstOrThrow();
  });
  return presentCustomization(site, row);
}

export async function deleteSiteSpaceCustomization(ctx: Ctx, organizationId: string, siteId: string, siteSpaceId: string) {
  const { site } = await requireSite(ctx, organizationId, siteId, 'create', 'customize the site');
  await ctx.db.updateTable('site_spaces').set({ customization: null, customization_updated_at: null }).where('site_id', '=', site.id).where('id', '=', siteSpaceId).execute();
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
  const updated = await ctx.db
    .updateTable('sites')
    .set({
      auth_backend: input.backend,
      ...(input.fallbackURL !== undefined ? { auth_fallback_url: input.fallbackURL } : {}),
      ...(input.logoutURL !== undefined ? { auth_logout_url: input.logoutURL } : {}),
      updated_at: new Date(),
    })
    .where('id', '=', site.id)
    .returningAll()
    .executeTakeFirstOrThrow();
  return presentAuth(updated);
}

/** A new signing key: visitor tokens signed with the old one stop working at once. */
export async function regeneratePublishingAuth(ctx: Ctx, organizationId: string, siteId: string) {
  const { site } = await requireSite(ctx, organizationId, siteId, 'admin', 'regenerate the visitor authentication key');
  const updated = await ctx.db.updateTable('sites').set({ auth_key: newSecret(), updated_at: new Date() }).where('id', '=', site.id).returningAll().executeTakeFirstOrThrow();
  return presentAuth(updated);
}
