import { sql, type RawBuilder } from 'kysely';
import type { Db } from '../platform/db/database.ts';
import type { SiteRow, SiteSectionGroupRow, SiteSectionRow, SiteSpaceRow } from '../platform/db/schema.ts';
import { newId } from '../platform/ids.ts';
import { paginate, type PageRequest } from '../platform/paging.ts';

/**
 * The SQL of a site's structure: its site spaces, sections and section groups, their order and
 * their defaults. Every function takes the organization id and the site id, and reads or writes
 * only rows of that site (the rules, and the site lock, are in structure.ts).
 */

/** An item of the structure with its fractional position among its siblings. */
export type Item = { id: string; type: 'site-space' | 'site-section' | 'site-section-group'; position: string };

/** Holds the site row for the rest of the transaction (undefined when it was deleted meanwhile). */
export async function lockSiteRow(trx: Db, organizationId: string, siteId: string): Promise<SiteRow | undefined> {
  return trx.selectFrom('sites').selectAll().where('organization_id', '=', organizationId).where('id', '=', siteId).forUpdate().executeTakeFirst();
}

/** The site spaces of a container (a section, or the site root when `sectionId` is null). */
function inContainer(db: Db, organizationId: string, siteId: string, sectionId: string | null) {
  const q = db.selectFrom('site_spaces').where('organization_id', '=', organizationId).where('site_id', '=', siteId);
  return sectionId === null ? q.where('section_id', 'is', null) : q.where('section_id', '=', sectionId);
}

export async function siteSpaceSiblings(db: Db, organizationId: string, siteId: string, sectionId: string | null): Promise<Item[]> {
  const rows = await inContainer(db, organizationId, siteId, sectionId).select(['id', 'position']).orderBy('position').execute();
  return rows.map((r) => ({ ...r, type: 'site-space' as const }));
}

/** Sections and groups directly under a group (or the root), in order. */
export async function nodeSiblings(db: Db, organizationId: string, siteId: string, groupId: string | null): Promise<Item[]> {
  const parent = groupId === null ? sql`IS NULL` : sql`= ${groupId}`;
  const rows = await sql<Item>`
    SELECT id, 'site-section' AS type, position FROM site_sections WHERE organization_id = ${organizationId} AND site_id = ${siteId} AND group_id ${parent}
    UNION ALL
    SELECT id, 'site-section-group' AS type, position FROM site_section_groups WHERE organization_id = ${organizationId} AND site_id = ${siteId} AND parent_id ${parent}
    ORDER BY position`.execute(db);
  return rows.rows;
}

/** The paths the site spaces of a container use. */
export async function siteSpacePaths(db: Db, organizationId: string, siteId: string, sectionId: string | null): Promise<Set<string>> {
  return new Set((await inContainer(db, organizationId, siteId, sectionId).select('path').execute()).map((r) => r.path));
}

// Site spaces ------------------------------------------------------------------------------------

export async function findSiteSpace(db: Db, organizationId: string, siteId: string, siteSpaceId: string): Promise<SiteSpaceRow | undefined> {
  return db.selectFrom('site_spaces').selectAll().where('organization_id', '=', organizationId).where('site_id', '=', siteId).where('id', '=', siteSpaceId).executeTakeFirst();
}

/** The first site space (in creation order) linking a space to a site. */
export async function firstSiteSpaceOf(db: Db, organizationId: string, siteId: string, spaceId: string): Promise<SiteSpaceRow | undefined> {
  return db
    .selectFrom('site_spaces')
    .selectAll()
    .where('organization_id', '=', organizationId)
    .where('site_id', '=', siteId)
    .where('space_id', '=', spaceId)
    .orderBy('seq')
    .executeTakeFirst();
}

/** A site space of a section, or undefined when it is in another (or none). */
export async function findSiteSpaceInSection(db: Db, organizationId: string, sectionId: string, siteSpaceId: string): Promise<{ id: string } | undefined> {
  return db.selectFrom('site_spaces').select('id').where('organization_id', '=', organizationId).where('section_id', '=', sectionId).where('id', '=', siteSpaceId).executeTakeFirst();
}

/** The site spaces of a container (a section, or with null the site root), in order. */
export async function siteSpacesIn(db: Db, organizationId: string, siteId: string, sectionId: string | null): Promise<SiteSpaceRow[]> {
  return inContainer(db, organizationId, siteId, sectionId).selectAll().orderBy('position').execute();
}

/** The site spaces of several sections, in order, by section. */
export async function siteSpacesOfSections(db: Db, organizationId: string, sectionIds: string[]): Promise<Map<string, SiteSpaceRow[]>> {
  const map = new Map<string, SiteSpaceRow[]>();
  if (!sectionIds.length) return map;
  const rows = await db.selectFrom('site_spaces').selectAll().where('organization_id', '=', organizationId).where('section_id', 'in', sectionIds).orderBy('position').execute();
  for (const r of rows) map.set(r.section_id!, [...(map.get(r.section_id!) ?? []), r]);
  return map;
}

export interface NewSiteSpace {
  spaceId: string;
  sectionId: string | null;
  path: string;
  isDefault: boolean;
  position: string;
}

export async function insertSiteSpace(db: Db, organizationId: string, siteId: string, input: NewSiteSpace): Promise<SiteSpaceRow> {
  return db
    .insertInto('site_spaces')
    .values({
      id: newId(),
      organization_id: organizationId,
      site_id: siteId,
      space_id: input.spaceId,
      section_id: input.sectionId,
      path: input.path,
      condition: null,
      is_default: input.isDefault,
      position: input.position,
      customization: null,
      customization_updated_at: null,
      created_at: new Date(),
    })
    .returningAll()
    .executeTakeFirstOrThrow();
}

export interface SiteSpaceChanges {
  path?: string | undefined;
  condition?: string | null | undefined;
  hidden?: boolean | undefined;
  spaceId?: string | undefined;
}

export async function updateSiteSpace(db: Db, organizationId: string, siteId: string, siteSpaceId: string, changes: SiteSpaceChanges): Promise<SiteSpaceRow | undefined> {
  return db
    .updateTable('site_spaces')
    .set({
      ...(changes.path !== undefined ? { path: changes.path } : {}),
      ...(changes.condition !== undefined ? { condition: changes.condition } : {}),
      ...(changes.hidden !== undefined ? { hidden: changes.hidden } : {}),
      ...(changes.spaceId !== undefined ? { space_id: changes.spaceId } : {}),
    })
    .where('organization_id', '=', organizationId)
    .where('site_id', '=', siteId)
    .where('id', '=', siteSpaceId)
    .returningAll()
    .executeTakeFirst();
}

/** Removes a site space; if it was the default of its container, the first remaining one is. */
export async function deleteSiteSpace(db: Db, organizationId: string, siteId: string, siteSpaceId: string): Promise<void> {
  const gone = await db
    .deleteFrom('site_spaces')
    .where('organization_id', '=', organizationId)
    .where('site_id', '=', siteId)
    .where('id', '=', siteSpaceId)
    .returningAll()
    .executeTakeFirst();
  if (gone?.is_default) await promoteDefaultSiteSpace(db, organizationId, siteId, gone.section_id);
}

/** After a site space leaves its container: if it was the default, the first remaining one is. */
async function promoteDefaultSiteSpace(db: Db, organizationId: string, siteId: string, sectionId: string | null) {
  const rows = await inContainer(db, organizationId, siteId, sectionId).select(['id', 'is_default']).orderBy('position').execute();
  if (rows.length && !rows.some((r) => r.is_default)) {
    await db.updateTable('site_spaces').set({ is_default: true }).where('id', '=', rows[0]!.id).execute();
  }
}

/**
 * Removes the site spaces of a space from every site (the space is being deleted), promoting a new
 * default where a default left. The spaces' `deleted` hook names the space only; its site spaces
 * are in its organization (a site links spaces of its own organization only). Called inside the
 * transaction that deletes the space.
 */
export async function removeSpaceFromSites(trx: Db, spaceId: string): Promise<void> {
  const gone = await trx.deleteFrom('site_spaces').where('space_id', '=', spaceId).returning(['organization_id', 'site_id', 'section_id', 'is_default']).execute();
  for (const g of gone) if (g.is_default) await promoteDefaultSiteSpace(trx, g.organization_id, g.site_id, g.section_id);
}

/** Makes one site space the default of its container (a section, or the site root). */
export async function markDefaultSiteSpace(db: Db, organizationId: string, siteId: string, sectionId: string | null, siteSpaceId: string): Promise<void> {
  let q = db.updateTable('site_spaces').set({ is_default: sql`id = ${siteSpaceId}` }).where('organization_id', '=', organizationId).where('site_id', '=', siteId);
  q = sectionId === null ? q.where('section_id', 'is', null) : q.where('section_id', '=', sectionId);
  await q.execute();
}

/** The first section takes the site's existing content: a site has either sections or a root. */
export async function moveRootSiteSpacesInto(db: Db, organizationId: string, siteId: string, sectionId: string): Promise<void> {
  await db.updateTable('site_spaces').set({ section_id: sectionId }).where('organization_id', '=', organizationId).where('site_id', '=', siteId).where('section_id', 'is', null).execute();
}

export async function setSiteSpacePosition(db: Db, organizationId: string, siteSpaceId: string, position: string): Promise<void> {
  await db.updateTable('site_spaces').set({ position }).where('organization_id', '=', organizationId).where('id', '=', siteSpaceId).execute();
}

// Sections ---------------------------------------------------------------------------------------

export async function findSection(db: Db, organizationId: string, siteId: string, sectionId: string): Promise<SiteSectionRow | undefined> {
  return db.selectFrom('site_sections').selectAll().where('organization_id', '=', organizationId).where('site_id', '=', siteId).where('id', '=', sectionId).executeTakeFirst();
}

/** A section of a site only while it is inside group `groupId`. */
export async function findSectionInGroup(db: Db, organizationId: string, siteId: string, sectionId: string, groupId: string): Promise<SiteSectionRow | undefined> {
  return db
    .selectFrom('site_sections')
    .selectAll()
    .where('organization_id', '=', organizationId)
    .where('site_id', '=', siteId)
    .where('id', '=', sectionId)
    .where('group_id', '=', groupId)
    .executeTakeFirst();
}

export async function defaultSection(db: Db, organizationId: string, siteId: string): Promise<SiteSectionRow | undefined> {
  return db.selectFrom('site_sections').selectAll().where('organization_id', '=', organizationId).where('site_id', '=', siteId).where('is_default', '=', true).executeTakeFirst();
}

export async function hasSections(db: Db, organizationId: string, siteId: string): Promise<boolean> {
  return !!(await db.selectFrom('site_sections').select('id').where('organization_id', '=', organizationId).where('site_id', '=', siteId).limit(1).executeTakeFirst());
}

/** The paths of every section of a site. */
export async function sectionPaths(db: Db, organizationId: string, siteId: string): Promise<string[]> {
  return (await db.selectFrom('site_sections').select(['path']).where('organization_id', '=', organizationId).where('site_id', '=', siteId).execute()).map((e) => e.path);
}

/** Every section and section group of a site, each in position order. */
export async function sectionsAndGroups(db: Db, organizationId: string, siteId: string): Promise<{ sections: SiteSectionRow[]; groups: SiteSectionGroupRow[] }> {
  const [sections, groups] = await Promise.all([
    db.selectFrom('site_sections').selectAll().where('organization_id', '=', organizationId).where('site_id', '=', siteId).orderBy('position').execute(),
    db.selectFrom('site_section_groups').selectAll().where('organization_id', '=', organizationId).where('site_id', '=', siteId).orderBy('position').execute(),
  ]);
  return { sections, groups };
}

export interface NewSection {
  groupId: string | null;
  title: string;
  description: string | null;
  icon: string | null;
  path: string;
  condition: string | null;
  isDefault: boolean;
  position: string;
}

export async function insertSection(db: Db, organizationId: string, siteId: string, input: NewSection): Promise<SiteSectionRow> {
  return db
    .insertInto('site_sections')
    .values({
      id: newId(),
      organization_id: organizationId,
      site_id: siteId,
      group_id: input.groupId,
      title: input.title,
      description: input.description,
      icon: input.icon,
      path: input.path,
      condition: input.condition,
      is_default: input.isDefault,
      position: input.position,
      created_at: new Date(),
    })
    .returningAll()
    .executeTakeFirstOrThrow();
}

export interface SectionChanges {
  title?: string | undefined;
  path?: string | undefined;
  condition?: string | null | undefined;
  icon?: string | null | undefined;
  description?: string | null | undefined;
  groupId?: string | null | undefined;
  position?: string | undefined;
}

export async function updateSection(db: Db, organizationId: string, sectionId: string, changes: SectionChanges): Promise<SiteSectionRow> {
  return db
    .updateTable('site_sections')
    .set({
      ...(changes.title !== undefined ? { title: changes.title } : {}),
      ...(changes.path !== undefined ? { path: changes.path } : {}),
      ...(changes.condition !== undefined ? { condition: changes.condition } : {}),
      ...(changes.icon !== undefined ? { icon: changes.icon } : {}),
      ...(changes.description !== undefined ? { description: changes.description } : {}),
      ...(changes.groupId !== undefined ? { group_id: changes.groupId } : {}),
      ...(changes.position !== undefined ? { position: changes.position } : {}),
    })
    .where('organization_id', '=', organizationId)
    .where('id', '=', sectionId)
    .returningAll()
    .executeTakeFirstOrThrow();
}

/** Makes one section the default of its site. */
export async function markDefaultSection(db: Db, organizationId: string, siteId: string, sectionId: string): Promise<void> {
  await db.updateTable('site_sections').set({ is_default: sql`id = ${sectionId}` }).where('organization_id', '=', organizationId).where('site_id', '=', siteId).execute();
}

/** Deletes a section and its site spaces; the first remaining section becomes default if needed. */
export async function deleteSection(db: Db, organizationId: string, siteId: string, sectionId: string): Promise<void> {
  const gone = await db
    .deleteFrom('site_sections')
    .where('organization_id', '=', organizationId)
    .where('site_id', '=', siteId)
    .where('id', '=', sectionId)
    .returningAll()
    .executeTakeFirst();
  if (!gone?.is_default) return;
  const ordered = sectionsInSiteOrder(db, organizationId, siteId);
  const rows = await ordered.query.orderBy(ordered.key).orderBy(ordered.seq).execute();
  if (rows.length && !rows.some((r) => r.is_default)) {
    await db.updateTable('site_sections').set({ is_default: true }).where('id', '=', rows[0]!.id).execute();
  }
}

// Section groups ---------------------------------------------------------------------------------

export async function findGroup(db: Db, organizationId: string, siteId: string, groupId: string): Promise<SiteSectionGroupRow | undefined> {
  return db
    .selectFrom('site_section_groups')
    .selectAll()
    .where('organization_id', '=', organizationId)
    .where('site_id', '=', siteId)
    .where('id', '=', groupId)
    .executeTakeFirst();
}

/** Every group of a site with its parent. */
export async function groupParents(db: Db, organizationId: string, siteId: string): Promise<Map<string, string | null>> {
  const rows = await db.selectFrom('site_section_groups').select(['id', 'parent_id']).where('organization_id', '=', organizationId).where('site_id', '=', siteId).execute();
  return new Map(rows.map((g) => [g.id, g.parent_id]));
}

export interface NewGroup {
  parentId: string | null;
  title: string;
  icon: string | null;
  position: string;
}

export async function insertGroup(db: Db, organizationId: string, siteId: string, input: NewGroup): Promise<SiteSectionGroupRow> {
  return db
    .insertInto('site_section_groups')
    .values({
      id: newId(),
      organization_id: organizationId,
      site_id: siteId,
      parent_id: input.parentId,
      title: input.title,
      icon: input.icon,
      position: input.position,
      created_at: new Date(),
    })
    .returningAll()
    .executeTakeFirstOrThrow();
}

export interface GroupChanges {
  title?: string | undefined;
  icon?: string | null | undefined;
  parentId?: string | null | undefined;
  position?: string | undefined;
}

export async function updateGroup(db: Db, organizationId: string, groupId: string, changes: GroupChanges): Promise<void> {
  await db
    .updateTable('site_section_groups')
    .set({
      ...(changes.title !== undefined ? { title: changes.title } : {}),
      ...(changes.icon !== undefined ? { icon: changes.icon } : {}),
      ...(changes.parentId !== undefined ? { parent_id: changes.parentId } : {}),
      ...(changes.position !== undefined ? { position: changes.position } : {}),
    })
    .where('organization_id', '=', organizationId)
    .where('id', '=', groupId)
    .execute();
}

export async function deleteGroup(db: Db, organizationId: string, groupId: string): Promise<void> {
  await db.deleteFrom('site_section_groups').where('organization_id', '=', organizationId).where('id', '=', groupId).execute();
}

// Order of the whole site ------------------------------------------------------------------------

/*
 * The order a reader sees a site's structure in, as one sortable text key per item, so the flat
 * listings (sections, section groups, site spaces) page through the site in that order with a
 * keyset cursor rather than in creation order.
 *
 * An item's key is the fractional positions of its ancestors and itself joined by a space: the
 * positions use only digits and letters, which all sort after a space in the "C" collation, so a
 * group sorts before everything inside it and everything inside it before its next sibling (a
 * depth-first, pre-order walk of the structure). Groups nest at most a few levels, so the
 * recursive walk is short.
 */

/** The recursive query giving every section group of a site its key (`group_order(id, key)`). */
function withGroupOrder(db: Db, organizationId: string, siteId: string) {
  return db.withRecursive('group_order(id, key)', (qb) =>
    qb
      .selectFrom('site_section_groups')
      .select(['id', sql<string>`position`.as('key')])
      .where('organization_id', '=', organizationId)
      .where('site_id', '=', siteId)
      .where('parent_id', 'is', null)
      .unionAll((qb2) =>
        qb2
          .selectFrom('site_section_groups as child')
          .innerJoin('group_order as parent', 'parent.id', 'child.parent_id')
          .select(['child.id', sql<string>`parent.key || ' ' || child.position`.as('key')]),
      ),
  );
}

const sectionKey = sql<string>`(coalesce(sg.key || ' ', '') || s.position) COLLATE "C"`;

/** The sections of a site with their key (`site_order`). */
function sectionsInSiteOrder(db: Db, organizationId: string, siteId: string) {
  return {
    query: withGroupOrder(db, organizationId, siteId)
      .selectFrom('site_sections as s')
      .leftJoin('group_order as sg', 'sg.id', 's.group_id')
      .selectAll('s')
      .select(sectionKey.as('site_order'))
      .where('s.organization_id', '=', organizationId)
      .where('s.site_id', '=', siteId),
    key: sectionKey,
    seq: sql.ref('s.seq'),
  };
}

const groupKey = sql<string>`g_order.key COLLATE "C"`;

// A site space at the root (a site without sections) is ordered by its own position; one in a
// section after its section's key.
const siteSpaceKey: RawBuilder<string> = sql<string>`(CASE WHEN ss.section_id IS NULL THEN ss.position
  ELSE coalesce(sg.key || ' ', '') || s.position || ' ' || ss.position END) COLLATE "C"`;

/** A page of the sections of a site, in the site's order. */
export async function pageSections(db: Db, organizationId: string, siteId: string, page: PageRequest) {
  const ordered = sectionsInSiteOrder(db, organizationId, siteId);
  return paginate(ordered.query, { kind: 'site-sections:site-order', sortExpr: ordered.key, sortType: 'text', seqExpr: ordered.seq, direction: 'asc' }, page, (r) => r.site_order);
}

/** A page of the section groups of a site, in the site's order. */
export async function pageGroups(db: Db, organizationId: string, siteId: string, page: PageRequest) {
  const query = withGroupOrder(db, organizationId, siteId)
    .selectFrom('site_section_groups as g')
    .innerJoin('group_order as g_order', 'g_order.id', 'g.id')
    .selectAll('g')
    .select(groupKey.as('site_order'))
    .where('g.organization_id', '=', organizationId)
    .where('g.site_id', '=', siteId);
  return paginate(query, { kind: 'site-section-groups:site-order', sortExpr: groupKey, sortType: 'text', seqExpr: sql.ref('g.seq'), direction: 'asc' }, page, (r) => r.site_order);
}

/** A page of the site spaces of a site (only defaults, or only the others, when `isDefault` is given), in the site's order. */
export async function pageSiteSpaces(db: Db, organizationId: string, siteId: string, isDefault: boolean | undefined, page: PageRequest) {
  let query = withGroupOrder(db, organizationId, siteId)
    .selectFrom('site_spaces as ss')
    .leftJoin('site_sections as s', 's.id', 'ss.section_id')
    .leftJoin('group_order as sg', 'sg.id', 's.group_id')
    .selectAll('ss')
    .select(siteSpaceKey.as('site_order'))
    .where('ss.organization_id', '=', organizationId)
    .where('ss.site_id', '=', siteId);
  if (isDefault !== undefined) query = query.where('ss.is_default', '=', isDefault);
  return paginate(
    query,
    { kind: `site-spaces:site-order:${isDefault ?? ''}`, sortExpr: siteSpaceKey, sortType: 'text', seqExpr: sql.ref('ss.seq'), direction: 'asc' },
    page,
    (r) => r.site_order,
  );
}

// Moves ------------------------------------------------------------------------------------------

/** Places a section in a group (null: the root) at a position. */
export async function placeSection(db: Db, organizationId: string, sectionId: string, groupId: string | null, position: string): Promise<void> {
  await db.updateTable('site_sections').set({ group_id: groupId, position }).where('organization_id', '=', organizationId).where('id', '=', sectionId).execute();
}

/** Places a section group in a group (null: the root) at a position. */
export async function placeGroup(db: Db, organizationId: string, groupId: string, parentId: string | null, position: string): Promise<void> {
  await db.updateTable('site_section_groups').set({ parent_id: parentId, position }).where('organization_id', '=', organizationId).where('id', '=', groupId).execute();
}
