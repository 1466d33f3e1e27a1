import { sql, type Insertable } from 'kysely';
import { json, type Db } from '../platform/db/database.ts';
import type { ApiTokensTable, SiteRow, SiteSectionRow, SiteShareLinkRow, SiteSpaceRow, SpaceRow } from '../platform/db/schema.ts';
import { newId } from '../platform/ids.ts';
import { paginate, type PageRequest } from '../platform/paging.ts';

/**
 * The SQL of sites: the site rows and their settings, share links, customization of site spaces,
 * and what presenting, searching and resolving URLs read. Every function takes the organization
 * id and reads or writes only that organization's rows, except the few lookups that find a site
 * before its organization is known (a URL's hostname, a content token's grant), which say so.
 * The structure of a site is in store-structure.ts, its redirects in store-redirects.ts.
 */

// Sites ------------------------------------------------------------------------------------------

export async function findSite(db: Db, organizationId: string, siteId: string): Promise<SiteRow | undefined> {
  return db.selectFrom('sites').selectAll().where('organization_id', '=', organizationId).where('id', '=', siteId).executeTakeFirst();
}

export interface SiteFilters {
  space?: string | undefined;
  title?: string | undefined;
  published?: boolean | undefined;
  type?: string[] | undefined;
}

/** A page of the sites of an organization, in creation order. */
export async function pageSites(db: Db, organizationId: string, filters: SiteFilters, page: PageRequest) {
  let base = db.selectFrom('sites').selectAll('sites').where('sites.organization_id', '=', organizationId);
  if (filters.title) base = base.where(sql<boolean>`strpos(lower(sites.title), lower(${filters.title})) > 0`);
  if (filters.published !== undefined) base = base.where('sites.published', '=', filters.published);
  if (filters.type?.length) base = base.where('sites.type', 'in', filters.type);
  if (filters.space) {
    const spaceId = filters.space;
    base = base.where((eb) => eb.exists(eb.selectFrom('site_spaces').select('site_spaces.id').whereRef('site_spaces.site_id', '=', 'sites.id').where('site_spaces.space_id', '=', spaceId)));
  }
  const filterKey = JSON.stringify([filters.space ?? null, filters.title ?? null, filters.published ?? null, filters.type ?? null]);
  return paginate(base, { kind: `sites:${filterKey}`, sortExpr: null, seqExpr: sql.ref('sites.seq'), direction: 'asc' }, page);
}

/** One site creation at a time per organization (until the transaction ends), so two never pick the same basename. */
export async function lockSiteCreation(trx: Db, organizationId: string): Promise<void> {
  await sql`SELECT pg_advisory_xact_lock(hashtext(${`sites:${organizationId}`}))`.execute(trx);
}

/** The basenames of the organization's sites that are `base` or `base-…`. */
export async function takenBasenames(db: Db, organizationId: string, base: string): Promise<Set<string>> {
  const rows = await db
    .selectFrom('sites')
    .select('basename')
    .where('organization_id', '=', organizationId)
    .where((eb) => eb.or([eb('basename', '=', base), eb('basename', 'like', `${base.replace(/[%_\\]/g, '\\$&')}-%`)]))
    .execute();
  return new Set(rows.map((r) => r.basename));
}

export interface NewSite {
  type: string;
  title: string;
  basename: string;
  visibility: SiteRow['visibility'];
  authKey: string;
  createdBy: string;
  at: Date;
}

export async function insertSite(db: Db, organizationId: string, input: NewSite): Promise<SiteRow> {
  return db
    .insertInto('sites')
    .values({
      id: newId(),
      organization_id: organizationId,
      type: input.type,
      title: input.title,
      basename: input.basename,
      hostname: null,
      proxy: null,
      visibility: input.visibility,
      adaptive_schema: null,
      adaptive_schema_updated_at: null,
      customization_updated_at: null,
      auth_key: input.authKey,
      auth_fallback_url: null,
      auth_logout_url: null,
      created_by: input.createdBy,
      created_at: input.at,
      updated_at: input.at,
    })
    .returningAll()
    .executeTakeFirstOrThrow();
}

export interface SiteChanges {
  title?: string | undefined;
  visibility?: SiteRow['visibility'] | undefined;
  basename?: string | undefined;
  hostname?: string | null | undefined;
  proxy?: string | null | undefined;
  adaptiveContent?: boolean | undefined;
  agentsContext?: SiteRow['agents_context'] | undefined;
  published?: boolean | undefined;
  customization?: Record<string, unknown> | undefined;
  adaptiveSchema?: Record<string, unknown> | undefined;
  authBackend?: SiteRow['auth_backend'] | undefined;
  authKey?: string | undefined;
  authFallbackUrl?: string | null | undefined;
  authLogoutUrl?: string | null | undefined;
}

/**
 * Changes a site's settings (those given) and its `updated_at`; a new customization or adaptive
 * schema also sets when it changed.
 */
export async function updateSite(db: Db, organizationId: string, siteId: string, changes: SiteChanges, now = new Date()): Promise<SiteRow> {
  return db
    .updateTable('sites')
    .set({
      ...(changes.title !== undefined ? { title: changes.title } : {}),
      ...(changes.visibility !== undefined ? { visibility: changes.visibility } : {}),
      ...(changes.basename !== undefined ? { basename: changes.basename } : {}),
      ...(changes.hostname !== undefined ? { hostname: changes.hostname } : {}),
      ...(changes.proxy !== undefined ? { proxy: changes.proxy } : {}),
      ...(changes.adaptiveContent !== undefined ? { adaptive_content: changes.adaptiveContent } : {}),
      ...(changes.agentsContext !== undefined ? { agents_context: changes.agentsContext } : {}),
      ...(changes.published !== undefined ? { published: changes.published } : {}),
      ...(changes.customization !== undefined ? { customization: json(changes.customization), customization_updated_at: now } : {}),
      ...(changes.adaptiveSchema !== undefined ? { adaptive_schema: json(changes.adaptiveSchema), adaptive_schema_updated_at: now } : {}),
      ...(changes.authBackend !== undefined ? { auth_backend: changes.authBackend } : {}),
      ...(changes.authKey !== undefined ? { auth_key: changes.authKey } : {}),
      ...(changes.authFallbackUrl !== undefined ? { auth_fallback_url: changes.authFallbackUrl } : {}),
      ...(changes.authLogoutUrl !== undefined ? { auth_logout_url: changes.authLogoutUrl } : {}),
      updated_at: now,
    })
    .where('organization_id', '=', organizationId)
    .where('id', '=', siteId)
    .returningAll()
    .executeTakeFirstOrThrow();
}

export async function deleteSite(db: Db, organizationId: string, siteId: string): Promise<void> {
  await db.deleteFrom('sites').where('organization_id', '=', organizationId).where('id', '=', siteId).execute();
}

/** Whether a site links any space. */
export async function hasSiteSpaces(db: Db, organizationId: string, siteId: string): Promise<boolean> {
  return !!(await db.selectFrom('site_spaces').select('id').where('organization_id', '=', organizationId).where('site_id', '=', siteId).limit(1).executeTakeFirst());
}

/** Counts of site spaces per site, in one grouped query. */
export async function siteSpaceCounts(db: Db, organizationId: string, siteIds: string[]): Promise<Map<string, number>> {
  const counts = new Map<string, number>();
  if (siteIds.length === 0) return counts;
  const rows = await db
    .selectFrom('site_spaces')
    .select((eb) => ['site_id', eb.fn.countAll<number>().as('n')])
    .where('organization_id', '=', organizationId)
    .where('site_id', 'in', siteIds)
    .groupBy('site_id')
    .execute();
  for (const r of rows) counts.set(r.site_id, Number(r.n));
  return counts;
}

// Customization of site spaces -------------------------------------------------------------------

/** The site spaces of a site that override its customization. */
export async function customizedSiteSpaces(db: Db, organizationId: string, siteId: string): Promise<{ id: string; customization: unknown }[]> {
  return db
    .selectFrom('site_spaces')
    .select(['id', 'customization'])
    .where('organization_id', '=', organizationId)
    .where('site_id', '=', siteId)
    .where('customization', 'is not', null)
    .execute();
}

/** A site space, locked for the rest of the transaction. */
export async function lockSiteSpace(trx: Db, organizationId: string, siteId: string, siteSpaceId: string): Promise<SiteSpaceRow | undefined> {
  return trx
    .selectFrom('site_spaces')
    .selectAll()
    .where('organization_id', '=', organizationId)
    .where('site_id', '=', siteId)
    .where('id', '=', siteSpaceId)
    .forUpdate()
    .executeTakeFirst();
}

/** Sets (or, with null, clears) the customization a site space overrides. */
export async function setSiteSpaceCustomization(db: Db, organizationId: string, siteSpaceId: string, customization: Record<string, unknown> | null): Promise<SiteSpaceRow> {
  return db
    .updateTable('site_spaces')
    .set({ customization: customization ? json(customization) : null, customization_updated_at: new Date() })
    .where('organization_id', '=', organizationId)
    .where('id', '=', siteSpaceId)
    .returningAll()
    .executeTakeFirstOrThrow();
}

export async function deleteSiteSpaceCustomization(db: Db, organizationId: string, siteId: string, siteSpaceId: string): Promise<void> {
  await db
    .updateTable('site_spaces')
    .set({ customization: null, customization_updated_at: null })
    .where('organization_id', '=', organizationId)
    .where('site_id', '=', siteId)
    .where('id', '=', siteSpaceId)
    .execute();
}

// Share links ------------------------------------------------------------------------------------

/** An active share link of a site by its token. */
export async function activeShareLink(db: Db, organizationId: string, siteId: string, token: string): Promise<SiteShareLinkRow | undefined> {
  return db
    .selectFrom('site_share_links')
    .selectAll()
    .where('organization_id', '=', organizationId)
    .where('site_id', '=', siteId)
    .where('token', '=', token)
    .where('active', '=', true)
    .executeTakeFirst();
}

/** A page of the share links of a site (those whose name contains `search`, when given). */
export async function pageShareLinks(db: Db, organizationId: string, siteId: string, search: string | undefined, page: PageRequest) {
  let base = db.selectFrom('site_share_links').selectAll().where('organization_id', '=', organizationId).where('site_id', '=', siteId);
  if (search) base = base.where(sql<boolean>`strpos(lower(name), lower(${search})) > 0`);
  return paginate(base, { kind: `share-links:${search ?? ''}`, sortExpr: null, seqExpr: sql.ref('seq'), direction: 'asc' }, page);
}

export async function insertShareLink(db: Db, organizationId: string, siteId: string, name: string, token: string): Promise<SiteShareLinkRow> {
  return db
    .insertInto('site_share_links')
    .values({ id: newId(), organization_id: organizationId, site_id: siteId, name, token, created_at: new Date() })
    .returningAll()
    .executeTakeFirstOrThrow();
}

export async function updateShareLink(
  db: Db,
  organizationId: string,
  siteId: string,
  linkId: string,
  changes: { active?: boolean | undefined; name?: string | undefined },
): Promise<SiteShareLinkRow | undefined> {
  return db
    .updateTable('site_share_links')
    .set({ ...(changes.active !== undefined ? { active: changes.active } : {}), ...(changes.name !== undefined ? { name: changes.name } : {}) })
    .where('organization_id', '=', organizationId)
    .where('site_id', '=', siteId)
    .where('id', '=', linkId)
    .returningAll()
    .executeTakeFirst();
}

export async function deleteShareLink(db: Db, organizationId: string, siteId: string, linkId: string): Promise<void> {
  await db.deleteFrom('site_share_links').where('organization_id', '=', organizationId).where('site_id', '=', siteId).where('id', '=', linkId).execute();
}

// Content tokens ---------------------------------------------------------------------------------

/**
 * Records a content token (a token row of the user scoped to one space); an existing one with the
 * same id is kept. Tokens belong to users, not organizations.
 */
export async function insertContentToken(db: Db, token: Insertable<ApiTokensTable>): Promise<void> {
  await db.insertInto('api_tokens').values(token).onConflict((oc) => oc.doNothing()).execute();
}

/**
 * What a content token's grant needs to know of its site, if the site still shows the space. The
 * grant names the site only (the organization comes with it).
 */
export async function grantingSite(db: Db, siteId: string, spaceId: string): Promise<Pick<SiteRow, 'published' | 'visibility' | 'auth_key'> | undefined> {
  return db
    .selectFrom('sites')
    .select(['published', 'visibility', 'auth_key'])
    .where('id', '=', siteId)
    .where((eb) => eb.exists(eb.selectFrom('site_spaces').select('site_spaces.id').where('site_spaces.site_id', '=', siteId).where('site_spaces.space_id', '=', spaceId)))
    .executeTakeFirst();
}

/** Whether a share link a content token was given through is still active (by the grant's site). */
export async function shareLinkActive(db: Db, siteId: string, shareLinkId: string): Promise<boolean> {
  const link = await db.selectFrom('site_share_links').select('active').where('id', '=', shareLinkId).where('site_id', '=', siteId).executeTakeFirst();
  return !!link?.active;
}

// What presenting and resolving read -------------------------------------------------------------

/** Sections of the organization by id (those of a page of site spaces). */
export async function sectionsByIds(db: Db, organizationId: string, sectionIds: string[]): Promise<SiteSectionRow[]> {
  return db.selectFrom('site_sections').selectAll().where('organization_id', '=', organizationId).where('id', 'in', sectionIds).execute();
}

/** Every section of a site. */
export async function sectionsOf(db: Db, organizationId: string, siteId: string): Promise<SiteSectionRow[]> {
  return db.selectFrom('site_sections').selectAll().where('organization_id', '=', organizationId).where('site_id', '=', siteId).execute();
}

/** Spaces of the organization by id (the spaces site spaces link). */
export async function spacesByIds(db: Db, organizationId: string, spaceIds: string[]): Promise<SpaceRow[]> {
  return db.selectFrom('spaces').selectAll().where('organization_id', '=', organizationId).where('id', 'in', spaceIds).execute();
}

/** The root of a space's live revision (its content tree). */
export async function spaceRoot(db: Db, organizationId: string, spaceId: string): Promise<string> {
  const space = await db.selectFrom('spaces').select(['revision_id']).where('organization_id', '=', organizationId).where('id', '=', spaceId).executeTakeFirstOrThrow();
  const revision = await db.selectFrom('revisions').select('root').where('organization_id', '=', organizationId).where('id', '=', space.revision_id).executeTakeFirstOrThrow();
  return revision.root;
}

/** The site spaces of a site, as search scopes them. */
export async function siteSpaceScopes(db: Db, organizationId: string, siteId: string) {
  return db
    .selectFrom('site_spaces')
    .select(['id', 'space_id', 'is_default', 'section_id'])
    .where('organization_id', '=', organizationId)
    .where('site_id', '=', siteId)
    .execute();
}

/** A site by its organization and basename (a URL under PUBLIC_URL). */
export async function siteByBasename(db: Db, organizationId: string, basename: string): Promise<SiteRow | undefined> {
  return db.selectFrom('sites').selectAll().where('organization_id', '=', organizationId).where('basename', '=', basename).executeTakeFirst();
}

/** The site at a custom hostname: a URL names no organization, so this finds it. */
export async function siteByHostname(db: Db, hostname: string): Promise<SiteRow | undefined> {
  return db.selectFrom('sites').selectAll().where('hostname', '=', hostname).executeTakeFirst();
}

/**
 * The site whose proxy origin (a host and one or more path segments) is the longest that prefixes
 * `hostPath`: a URL names no organization, so this finds it.
 */
export async function siteByProxy(db: Db, hostPath: string): Promise<SiteRow | undefined> {
  return db
    .selectFrom('sites')
    .selectAll()
    .where(sql<boolean>`proxy IS NOT NULL AND (lower(proxy) = ${hostPath} OR starts_with(${hostPath}, lower(proxy) || '/'))`)
    .orderBy(sql`length(proxy)`, 'desc')
    .limit(1)
    .executeTakeFirst();
}
