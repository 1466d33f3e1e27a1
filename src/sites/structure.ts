import { generateKeyBetween, generateNKeysBetween } from 'fractional-indexing';
import { sql } from 'kysely';
import type { Ctx } from '../platform/context.ts';
import type { Db } from '../platform/db/database.ts';
import type { SiteRow, SiteSectionGroupRow, SiteSectionRow, SiteSpaceRow, SpaceRow } from '../platform/db/schema.ts';
import { BadRequestError, ConflictError, isUniqueViolation, NotFoundError } from '../platform/errors.ts';
import { newId } from '../platform/ids.ts';
import { paginate } from '../platform/paging.ts';
import { slugFrom, uniqueAmong } from '../platform/slug.ts';
import { loadSpace } from '../spaces/access.ts';
import { createSpace, removeSpaceNow } from '../spaces/service.ts';
import { applyTemplate, templateOf } from '../templates/service.ts';
import { readableSite, requireSite, type SiteAccess } from './access.ts';
import { StructurePresenter } from './presenter.ts';
import { MAX_GROUP_DEPTH } from './schemas.ts';
import { groupsInSiteOrder, sectionsInSiteOrder, siteSpacesInSiteOrder } from './site-order.ts';
import type {
  AddGroupInput,
  AddSiteSpaceInput,
  AddSectionInput,
  SiteSectionGroupResource,
  SiteSectionResource,
  SortStructureInput,
  StructurePointerInput,
  UpdateGroupInput,
  UpdateSectionInput,
  UpdateSiteSpaceInput,
} from './schemas.ts';

/**
 * The structure of a site: site spaces ordered inside their container (a section, or the site root
 * when the site has no sections), and sections and section groups ordered together inside theirs
 * (a group, or the root). Order is a fractional-index key per item: a move writes the moved item
 * only. Every change to a site's structure holds the site row's lock, so concurrent moves are
 * applied one after the other and each sees the order the previous one left.
 */

/** Holds the site row for the rest of the transaction; 404 when it was deleted meanwhile. */
export async function lockSite(trx: Db, site: SiteRow): Promise<SiteRow> {
  const row = await trx.selectFrom('sites').selectAll().where('id', '=', site.id).forUpdate().executeTakeFirst();
  if (!row) throw new NotFoundError('Site');
  return row;
}

/** A space the caller can read, in the site's organization: the only kind a site may link. */
export async function spaceForSite(ctx: Ctx, organizationId: string, spaceId: string, field: string): Promise<SpaceRow> {
  try {
    const { space } = await loadSpace(ctx, spaceId);
    if (space.organization_id === organizationId) return space;
  } catch (err) {
    if (!(err instanceof NotFoundError)) throw err;
  }
  throw new BadRequestError(`${field}: space ${spaceId} not found in this organization`);
}

type Item = { id: string; type: 'site-space' | 'site-section' | 'site-section-group'; position: string };

async function siteSpaceSiblings(trx: Db, siteId: string, sectionId: string | null): Promise<Item[]> {
  let q = trx.selectFrom('site_spaces').select(['id', 'position']).where('site_id', '=', siteId);
  q = sectionId === null ? q.where('section_id', 'is', null) : q.where('section_id', '=', sectionId);
  return (await q.orderBy('position').execute()).map((r) => ({ ...r, type: 'site-space' as const }));
}

/** Sections and groups directly under a group (or the root), in order. */
async function nodeSiblings(trx: Db, siteId: string, groupId: string | null): Promise<Item[]> {
  const parent = groupId === null ? sql`IS NULL` : sql`= ${groupId}`;
  const rows = await sql<Item>`
    SELECT id, 'site-section' AS type, position FROM site_sections WHERE site_id = ${siteId} AND group_id ${parent}
    UNION ALL
    SELECT id, 'site-section-group' AS type, position FROM site_section_groups WHERE site_id = ${siteId} AND parent_id ${parent}
    ORDER BY position`.execute(trx);
  return rows.rows;
}

/** The key placing an item after `after`, before `before` (adjacent siblings), both, or last. */
function placeKey(siblings: Item[], movingId: string | undefined, position: { before?: string | undefined; after?: string | undefined } = {}): string {
  const list = siblings.filter((s) => s.id !== movingId);
  const index = (id: string, field: string) => {
    const i = list.findIndex((s) => s.id === id);
    if (i < 0) throw new BadRequestError(`position.${field}: ${id} is not a sibling of the moved item`);
    return i;
  };
  for (const field of ['before', 'after'] as const) {
    if (position[field] && position[field] === movingId) throw new BadRequestError(`position.${field}: an item cannot be placed relative to itself`);
  }
  if (position.after && position.before) {
    const a = index(position.after, 'after');
    const b = index(position.before, 'before');
    if (b !== a + 1) throw new BadRequestError('position: "after" and "before" must be adjacent siblings, "after" first');
    return generateKeyBetween(list[a]!.position, list[b]!.position);
  }
  if (position.after) {
    const a = index(position.after, 'after');
    return generateKeyBetween(list[a]!.position, list[a + 1]?.position ?? null);
  }
  if (position.before) {
    const b = index(position.before, 'before');
    return generateKeyBetween(list[b - 1]?.position ?? null, list[b]!.position);
  }
  return generateKeyBetween(list[list.length - 1]?.position ?? null, null);
}

async function takenPaths(trx: Db, siteId: string, sectionId: string | null): Promise<Set<string>> {
  let q = trx.selectFrom('site_spaces').select('path').where('site_id', '=', siteId);
  q = sectionId === null ? q.where('section_id', 'is', null) : q.where('section_id', '=', sectionId);
  return new Set((await q.execute()).map((r) => r.path));
}

async function defaultSection(trx: Db, siteId: string): Promise<SiteSectionRow | undefined> {
  return trx.selectFrom('site_sections').selectAll().where('site_id', '=', siteId).where('is_default', '=', true).executeTakeFirst();
}

/**
 * Links a space to a site, inside the caller's transaction (which holds the site lock): into the
 * given section, else the default section, else the root. The first site space of a container is
 * its default. The space was checked by spaceForSite before the transaction.
 */
export async function insertSiteSpace(trx: Db, site: SiteRow, space: SpaceRow, sectionId: string | undefined): Promise<SiteSpaceRow> {
  let container: string | null = null;
  if (sectionId !== undefined) {
    const section = await trx.selectFrom('site_sections').select('id').where('site_id', '=', site.id).where('id', '=', sectionId).executeTakeFirst();
    if (!section) throw new BadRequestError(`sectionId: section ${sectionId} is not part of this site`);
    container = section.id;
  } else {
    container = (await defaultSection(trx, site.id))?.id ?? null;
  }
  const siblings = await siteSpaceSiblings(trx, site.id, container);
  return trx
    .insertInto('site_spaces')
    .values({
      id: newId(),
      organization_id: site.organization_id,
      site_id: site.id,
      space_id: space.id,
      section_id: container,
      path: uniqueAmong(slugFrom(space.title, 'space'), await takenPaths(trx, site.id, container)),
      condition: null,
      is_default: siblings.length === 0,
      position: placeKey(siblings, undefined),
      customization: null,
      customization_updated_at: null,
      created_at: new Date(),
    })
    .returningAll()
    .executeTakeFirstOrThrow();
}

/** After a site space leaves its container: if it was the default, the first remaining one is. */
async function promoteDefaultSiteSpace(trx: Db, siteId: string, sectionId: string | null) {
  let q = trx.selectFrom('site_spaces').select(['id', 'is_default']).where('site_id', '=', siteId);
  q = sectionId === null ? q.where('section_id', 'is', null) : q.where('section_id', '=', sectionId);
  const rows = await q.orderBy('position').execute();
  if (rows.length && !rows.some((r) => r.is_default)) {
    await trx.updateTable('site_spaces').set({ is_default: true }).where('id', '=', rows[0]!.id).execute();
  }
}

async function promoteDefaultSection(trx: Db, siteId: string) {
  const ordered = sectionsInSiteOrder(trx, siteId);
  const rows = await ordered.query.orderBy(ordered.key).orderBy(ordered.seq).execute();
  if (rows.length && !rows.some((r) => r.is_default)) {
    await trx.updateTable('site_sections').set({ is_default: true }).where('id', '=', rows[0]!.id).execute();
  }
}

/**
 * Removes the site spaces of a space from every site (the space is being deleted), promoting a new
 * default where a default left. Called inside the transaction that deletes the space.
 */
export async function removeSpaceFromSites(trx: Db, spaceId: string): Promise<void> {
  const gone = await trx.deleteFrom('site_spaces').where('space_id', '=', spaceId).returning(['site_id', 'section_id', 'is_default']).execute();
  for (const g of gone) if (g.is_default) await promoteDefaultSiteSpace(trx, g.site_id, g.section_id);
}

// Site spaces ------------------------------------------------------------------------------------

export async function listSiteSpaces(
  ctx: Ctx,
  organizationId: string,
  siteId: string,
  query: { page?: string | undefined; limit?: number | undefined; default?: boolean | undefined; shareKey?: string | undefined },
) {
  const access = await readableSite(ctx, organizationId, siteId, query.shareKey);
  const ordered = siteSpacesInSiteOrder(ctx.db, access.site.id);
  let base = ordered.query;
  if (query.default !== undefined) base = base.where('ss.is_default', '=', query.default);
  const page = await paginate(
    base,
    { kind: `site-spaces:site-order:${query.default ?? ''}`, sortExpr: ordered.key, sortType: 'text', seqExpr: ordered.seq, direction: 'asc' },
    query,
    (r) => r.site_order,
  );
  const presenter = await new StructurePresenter(ctx, access.site, access.orgRole, access.shareLink?.token).load(page.items, []);
  return { ...page, items: page.items.map((r) => presenter.siteSpace(r)) };
}

async function presentSiteSpace(ctx: Ctx, access: SiteAccess, row: SiteSpaceRow) {
  return (await new StructurePresenter(ctx, access.site, access.orgRole).load([row], [])).siteSpace(row);
}

/**
 * Adds a space to a site: an existing one, or (`spaceId: null`) a new space of the organization,
 * created with its site space in one transaction and then given its template's content; should the
 * template fail, the new space goes again, so a refused request leaves nothing behind.
 */
export async function addSiteSpace(ctx: Ctx, organizationId: string, siteId: string, input: AddSiteSpaceInput) {
  const access = await requireSite(ctx, organizationId, siteId, 'create', 'add spaces to the site');
  if (input.draft) throw new BadRequestError('draft: draft site spaces are not supported; omit draft (or pass false) to add live content');
  if (input.pageId) throw new BadRequestError('pageId: custom home pages are not supported; omit pageId (the space\'s first page is its home)');
  if (input.spaceId !== null) {
    if (input.title !== undefined || input.template !== undefined) {
      throw new BadRequestError('title and template name a new space: pass them with spaceId null (site-specific titles for an existing space are not supported)');
    }
    const space = await spaceForSite(ctx, organizationId, input.spaceId, 'spaceId');
    const row = await ctx.db.transaction().execute(async (trx) => insertSiteSpace(trx, await lockSite(trx, access.site), space, input.sectionId));
    return presentSiteSpace(ctx, access, row);
  }
  const template = input.template ? templateOf(input.template.id) : undefined;
  let row: SiteSpaceRow | undefined;
  const { space } = await createSpace(ctx, organizationId, { title: input.title ?? template?.title ?? 'Untitled' }, async (trx, created) => {
    row = await insertSiteSpace(trx, await lockSite(trx, access.site), created, input.sectionId);
  });
  if (input.template) {
    try {
      await applyTemplate(ctx, space.id, input.template);
    } catch (err) {
      await ctx.db.transaction().execute(async (trx) => {
        const gone = await trx.deleteFrom('site_spaces').where('id', '=', row!.id).returningAll().executeTakeFirst();
        if (gone?.is_default) await promoteDefaultSiteSpace(trx, access.site.id, gone.section_id);
        await removeSpaceNow(trx, space.id);
      });
      throw err;
    }
  }
  return presentSiteSpace(ctx, access, row!);
}

export async function updateSiteSpace(ctx: Ctx, organizationId: string, siteId: string, siteSpaceId: string, input: UpdateSiteSpaceInput) {
  const access = await requireSite(ctx, organizationId, siteId, 'create', 'change the site spaces');
  const space = input.spaceId !== undefined ? await spaceForSite(ctx, organizationId, input.spaceId, 'spaceId') : undefined;
  if (input.path !== undefined && !/^[A-Za-z0-9][A-Za-z0-9._~-]*$/.test(input.path)) {
    throw new BadRequestError('path: use letters, digits, ".", "_", "~" and "-" (starting with a letter or digit), 1 to 100 characters');
  }
  try {
    const row = await ctx.db.transaction().execute(async (trx) => {
      await lockSite(trx, access.site);
      const updated = await trx
        .updateTable('site_spaces')
        .set({
          ...(input.path !== undefined ? { path: input.path } : {}),
          ...(input.condition !== undefined ? { condition: input.condition } : {}),
          ...(input.hidden !== undefined ? { hidden: input.hidden } : {}),
          ...(space ? { space_id: space.id } : {}),
        })
        .where('site_id', '=', access.site.id)
        .where('id', '=', siteSpaceId)
        .returningAll()
        .executeTakeFirst();
      if (!updated) throw new NotFoundError('Site space');
      return updated;
    });
    return presentSiteSpace(ctx, access, row);
  } catch (err) {
    if (isUniqueViolation(err)) throw new ConflictError(`path: another site space of the same ${'section or site root'} already uses "${input.path}"`);
    throw err;
  }
}

export async function deleteSiteSpace(ctx: Ctx, organizationId: string, siteId: string, siteSpaceId: string) {
  const access = await requireSite(ctx, organizationId, siteId, 'create', 'remove spaces from the site');
  await ctx.db.transaction().execute(async (trx) => {
    await lockSite(trx, access.site);
    const gone = await trx.deleteFrom('site_spaces').where('site_id', '=', access.site.id).where('id', '=', siteSpaceId).returningAll().executeTakeFirst();
    if (gone?.is_default) await promoteDefaultSiteSpace(trx, access.site.id, gone.section_id);
  });
}

// Sections ---------------------------------------------------------------------------------------

async function loadSectionSpaces(db: Db, sectionIds: string[]): Promise<Map<string, SiteSpaceRow[]>> {
  const map = new Map<string, SiteSpaceRow[]>();
  if (!sectionIds.length) return map;
  const rows = await db.selectFrom('site_spaces').selectAll().where('section_id', 'in', sectionIds).orderBy('position').execute();
  for (const r of rows) map.set(r.section_id!, [...(map.get(r.section_id!) ?? []), r]);
  return map;
}

async function presentSections(ctx: Ctx, access: SiteAccess, sections: SiteSectionRow[], shareKey?: string) {
  const spaces = await loadSectionSpaces(ctx.db, sections.map((s) => s.id));
  const presenter = await new StructurePresenter(ctx, access.site, access.orgRole, shareKey).load([...spaces.values()].flat(), sections);
  return sections.map((s) => presenter.section(s, spaces.get(s.id) ?? []));
}

export async function listSections(ctx: Ctx, organizationId: string, siteId: string, query: { page?: string | undefined; limit?: number | undefined; shareKey?: string | undefined }) {
  const access = await readableSite(ctx, organizationId, siteId, query.shareKey);
  const ordered = sectionsInSiteOrder(ctx.db, access.site.id);
  const page = await paginate(ordered.query, { kind: 'site-sections:site-order', sortExpr: ordered.key, sortType: 'text', seqExpr: ordered.seq, direction: 'asc' }, query, (r) => r.site_order);
  return { ...page, items: await presentSections(ctx, access, page.items, access.shareLink?.token) };
}

async function group(trx: Db, siteId: string, groupId: string, field: string): Promise<SiteSectionGroupRow> {
  const row = await trx.selectFrom('site_section_groups').selectAll().where('site_id', '=', siteId).where('id', '=', groupId).executeTakeFirst();
  if (!row) throw new BadRequestError(`${field}: section group ${groupId} is not part of this site`);
  return row;
}

async function section(trx: Db, siteId: string, sectionId: string, field: string): Promise<SiteSectionRow> {
  const row = await trx.selectFrom('site_sections').selectAll().where('site_id', '=', siteId).where('id', '=', sectionId).executeTakeFirst();
  if (!row) throw new BadRequestError(`${field}: section ${sectionId} is not part of this site`);
  return row;
}

const SECTION_PATH = /^[A-Za-z0-9][A-Za-z0-9._~-]*$/;

export async function addSection(ctx: Ctx, organizationId: string, siteId: string, input: AddSectionInput) {
  const access = await requireSite(ctx, organizationId, siteId, 'create', 'add sections to the site');
  const space = await spaceForSite(ctx, organizationId, input.spaceId, 'spaceId');
  if (input.path !== undefined && !SECTION_PATH.test(input.path)) {
    throw new BadRequestError('path: use letters, digits, ".", "_", "~" and "-" (starting with a letter or digit), 1 to 100 characters');
  }
  try {
    const row = await ctx.db.transaction().execute(async (trx) => {
      const site = await lockSite(trx, access.site);
      const groupId = input.siteSectionGroupId !== undefined ? (await group(trx, site.id, input.siteSectionGroupId, 'siteSectionGroupId')).id : null;
      const existing = await trx.selectFrom('site_sections').select(['path']).where('site_id', '=', site.id).execute();
      const title = input.title ?? (space.title.length >= 2 ? space.title.slice(0, 128) : 'Untitled section');
      const path = input.path ?? uniqueAmong(slugFrom(title, 'section'), new Set(existing.map((e) => e.path)));
      const created = await trx
        .insertInto('site_sections')
        .values({
          id: newId(),
          organization_id: site.organization_id,
          site_id: site.id,
          group_id: groupId,
          title,
          description: input.description ?? null,
          icon: input.icon ?? null,
          path,
          condition: input.condition ?? null,
          is_default: existing.length === 0,
          position: placeKey(await nodeSiblings(trx, site.id, groupId), undefined),
          created_at: new Date(),
        })
        .returningAll()
        .executeTakeFirstOrThrow();
      // The first section takes the site's existing content: a site has either sections or a root.
      if (existing.length === 0) await trx.updateTable('site_spaces').set({ section_id: created.id }).where('site_id', '=', site.id).where('section_id', 'is', null).execute();
      await insertSiteSpace(trx, site, space, created.id);
      return created;
    });
    return (await presentSections(ctx, access, [row]))[0]!;
  } catch (err) {
    if (isUniqueViolation(err)) throw new ConflictError(`path: another section of the site already uses "${input.path}"`);
    throw err;
  }
}

export async function updateSection(ctx: Ctx, organizationId: string, siteId: string, sectionId: string, input: UpdateSectionInput) {
  const access = await requireSite(ctx, organizationId, siteId, 'create', 'change the sections of the site');
  if (input.path !== undefined && !SECTION_PATH.test(input.path)) {
    throw new BadRequestError('path: use letters, digits, ".", "_", "~" and "-" (starting with a letter or digit), 1 to 100 characters');
  }
  try {
    const row = await ctx.db.transaction().execute(async (trx) => {
      const site = await lockSite(trx, access.site);
      const current = await trx.selectFrom('site_sections').selectAll().where('site_id', '=', site.id).where('id', '=', sectionId).executeTakeFirst();
      if (!current) throw new NotFoundError('Site section');
      let move = {};
      if (input.siteSectionGroupId !== undefined && input.siteSectionGroupId !== current.group_id) {
        const groupId = input.siteSectionGroupId === null ? null : (await group(trx, site.id, input.siteSectionGroupId, 'siteSectionGroupId')).id;
        move = { group_id: groupId, position: placeKey(await nodeSiblings(trx, site.id, groupId), current.id) };
      }
      if (input.defaultSiteSpace !== undefined) {
        const ss = await trx.selectFrom('site_spaces').select('id').where('section_id', '=', current.id).where('id', '=', input.defaultSiteSpace).executeTakeFirst();
        if (!ss) throw new BadRequestError(`defaultSiteSpace: site space ${input.defaultSiteSpace} is not in this section`);
        await trx.updateTable('site_spaces').set({ is_default: sql`id = ${ss.id}` }).where('section_id', '=', current.id).execute();
      }
      return trx
        .updateTable('site_sections')
        .set({
          ...(input.title !== undefined ? { title: input.title } : {}),
          ...(input.path !== undefined ? { path: input.path } : {}),
          ...(input.condition !== undefined ? { condition: input.condition } : {}),
          ...(input.icon !== undefined ? { icon: input.icon } : {}),
          ...(input.description !== undefined ? { description: input.description } : {}),
          ...move,
        })
        .where('id', '=', current.id)
        .returningAll()
        .executeTakeFirstOrThrow();
    });
    return (await presentSections(ctx, access, [row]))[0]!;
  } catch (err) {
    if (isUniqueViolation(err)) throw new ConflictError(`path: another section of the site already uses "${input.path}"`);
    throw err;
  }
}

/** Deletes a section and its site spaces; the first remaining section becomes default if needed. */
export async function deleteSection(ctx: Ctx, organizationId: string, siteId: string, sectionId: string) {
  const access = await requireSite(ctx, organizationId, siteId, 'create', 'remove sections from the site');
  await ctx.db.transaction().execute(async (trx) => {
    const site = await lockSite(trx, access.site);
    const gone = await trx.deleteFrom('site_sections').where('site_id', '=', site.id).where('id', '=', sectionId).returningAll().executeTakeFirst();
    if (gone?.is_default) await promoteDefaultSection(trx, site.id);
  });
}

// Section groups ---------------------------------------------------------------------------------

/** Every section and group of a site, presented as nested trees (the structure of the site). */
async function loadTree(ctx: Ctx, access: SiteAccess, shareKey?: string) {
  const siteId = access.site.id;
  const [sections, groups] = await Promise.all([
    ctx.db.selectFrom('site_sections').selectAll().where('site_id', '=', siteId).orderBy('position').execute(),
    ctx.db.selectFrom('site_section_groups').selectAll().where('site_id', '=', siteId).orderBy('position').execute(),
  ]);
  const presented = new Map((await presentSections(ctx, access, sections, shareKey)).map((s) => [s.id, s]));
  type Node = { position: string; make: () => SiteSectionResource | SiteSectionGroupResource };
  const children = new Map<string | null, Node[]>();
  const push = (key: string | null, node: Node) => children.set(key, [...(children.get(key) ?? []), node]);
  for (const s of sections) push(s.group_id, { position: s.position, make: () => presented.get(s.id)! });
  const presenter = new StructurePresenter(ctx, access.site, access.orgRole, shareKey);
  const childrenOf = (key: string | null): (SiteSectionResource | SiteSectionGroupResource)[] =>
    (children.get(key) ?? []).sort((a, b) => (a.position < b.position ? -1 : a.position > b.position ? 1 : 0)).map((n) => n.make());
  for (const g of groups) push(g.parent_id, { position: g.position, make: () => presenter.group(g, childrenOf) });
  return { sections, groups, childrenOf, groupById: (id: string) => presenter.group(groups.find((g) => g.id === id)!, childrenOf) };
}

export async function siteStructure(ctx: Ctx, access: SiteAccess, shareKey?: string) {
  const hasSections = await ctx.db.selectFrom('site_sections').select('id').where('site_id', '=', access.site.id).limit(1).executeTakeFirst();
  if (hasSections) {
    const tree = await loadTree(ctx, access, shareKey);
    return { type: 'sections' as const, structure: tree.childrenOf(null) };
  }
  const rows = await ctx.db.selectFrom('site_spaces').selectAll().where('site_id', '=', access.site.id).where('section_id', 'is', null).orderBy('position').execute();
  const presenter = await new StructurePresenter(ctx, access.site, access.orgRole, shareKey).load(rows, []);
  return { type: 'siteSpaces' as const, structure: rows.map((r) => presenter.siteSpace(r)) };
}

export async function getStructure(ctx: Ctx, organizationId: string, siteId: string, shareKey?: string) {
  const access = await readableSite(ctx, organizationId, siteId, shareKey);
  return siteStructure(ctx, access, access.shareLink?.token);
}

async function presentGroup(ctx: Ctx, access: SiteAccess, groupId: string) {
  return (await loadTree(ctx, access)).groupById(groupId);
}

export async function listGroups(ctx: Ctx, organizationId: string, siteId: string, query: { page?: string | undefined; limit?: number | undefined }) {
  const access = await readableSite(ctx, organizationId, siteId);
  const ordered = groupsInSiteOrder(ctx.db, access.site.id);
  const page = await paginate(ordered.query, { kind: 'site-section-groups:site-order', sortExpr: ordered.key, sortType: 'text', seqExpr: ordered.seq, direction: 'asc' }, query, (r) => r.site_order);
  const tree = page.items.length ? await loadTree(ctx, access) : undefined;
  return { ...page, items: page.items.map((g) => tree!.groupById(g.id)) };
}

/**
 * Checks that putting group `groupId` (undefined: a new group) under `parentId` makes no cycle and
 * keeps groups at most MAX_GROUP_DEPTH deep.
 */
async function assertNoCycle(trx: Db, siteId: string, groupId: string | undefined, parentId: string | null, field: string) {
  if (parentId === null) return;
  const groups = new Map((await trx.selectFrom('site_section_groups').select(['id', 'parent_id']).where('site_id', '=', siteId).execute()).map((g) => [g.id, g.parent_id]));
  let depth = 0;
  for (let at: string | null | undefined = parentId; at; at = groups.get(at)) {
    if (at === groupId) throw new BadRequestError(`${field}: a section group cannot be placed inside itself or one of its own groups`);
    depth++;
  }
  const height = (id: string | undefined): number => {
    if (!id) return 1;
    let most = 0;
    for (const [child, parent] of groups) if (parent === id) most = Math.max(most, height(child));
    return 1 + most;
  };
  if (depth + height(groupId) > MAX_GROUP_DEPTH) {
    throw new BadRequestError(`${field}: section groups nest at most ${MAX_GROUP_DEPTH} levels deep`);
  }
}

export async function addGroup(ctx: Ctx, organizationId: string, siteId: string, input: AddGroupInput) {
  const access = await requireSite(ctx, organizationId, siteId, 'create', 'add section groups to the site');
  const id = await ctx.db.transaction().execute(async (trx) => {
    const site = await lockSite(trx, access.site);
    const parentId = input.parent !== undefined ? (await group(trx, site.id, input.parent, 'parent')).id : null;
    await assertNoCycle(trx, site.id, undefined, parentId, 'parent');
    const sectionIds = [...new Set(input.sections ?? [])];
    for (const [i, sid] of sectionIds.entries()) await section(trx, site.id, sid, `sections[${i}]`);
    const created = await trx
      .insertInto('site_section_groups')
      .values({
        id: newId(),
        organization_id: site.organization_id,
        site_id: site.id,
        parent_id: parentId,
        title: input.title,
        icon: input.icon ?? null,
        position: placeKey(await nodeSiblings(trx, site.id, parentId), undefined),
        created_at: new Date(),
      })
      .returningAll()
      .executeTakeFirstOrThrow();
    const keys = generateNKeysBetween(null, null, sectionIds.length);
    for (const [i, sid] of sectionIds.entries()) {
      await trx.updateTable('site_sections').set({ group_id: created.id, position: keys[i]! }).where('id', '=', sid).execute();
    }
    return created.id;
  });
  return presentGroup(ctx, access, id);
}

export async function updateGroup(ctx: Ctx, organizationId: string, siteId: string, groupId: string, input: UpdateGroupInput) {
  const access = await requireSite(ctx, organizationId, siteId, 'create', 'change the section groups of the site');
  await ctx.db.transaction().execute(async (trx) => {
    const site = await lockSite(trx, access.site);
    const current = await trx.selectFrom('site_section_groups').selectAll().where('site_id', '=', site.id).where('id', '=', groupId).executeTakeFirst();
    if (!current) throw new NotFoundError('Site section group');
    let move = {};
    if (input.parentSectionGroupId !== undefined && input.parentSectionGroupId !== current.parent_id) {
      const parentId = input.parentSectionGroupId === null ? null : (await group(trx, site.id, input.parentSectionGroupId, 'parentSectionGroupId')).id;
      await assertNoCycle(trx, site.id, current.id, parentId, 'parentSectionGroupId');
      move = { parent_id: parentId, position: placeKey(await nodeSiblings(trx, site.id, parentId), current.id) };
    }
    await trx
      .updateTable('site_section_groups')
      .set({ ...(input.title !== undefined ? { title: input.title } : {}), ...(input.icon !== undefined ? { icon: input.icon } : {}), ...move })
      .where('id', '=', current.id)
      .execute();
  });
  return presentGroup(ctx, access, groupId);
}

/** Deletes a group; its sections and groups move up to its parent (or the root), after its siblings. */
export async function deleteGroup(ctx: Ctx, organizationId: string, siteId: string, groupId: string) {
  const access = await requireSite(ctx, organizationId, siteId, 'create', 'remove section groups from the site');
  await ctx.db.transaction().execute(async (trx) => {
    const site = await lockSite(trx, access.site);
    const current = await trx.selectFrom('site_section_groups').selectAll().where('site_id', '=', site.id).where('id', '=', groupId).executeTakeFirst();
    if (!current) return;
    const released = await nodeSiblings(trx, site.id, current.id);
    const parentSiblings = (await nodeSiblings(trx, site.id, current.parent_id)).filter((s) => s.id !== current.id);
    const keys = generateNKeysBetween(parentSiblings[parentSiblings.length - 1]?.position ?? null, null, released.length);
    for (const [i, item] of released.entries()) {
      if (item.type === 'site-section') await trx.updateTable('site_sections').set({ group_id: current.parent_id, position: keys[i]! }).where('id', '=', item.id).execute();
      else await trx.updateTable('site_section_groups').set({ parent_id: current.parent_id, position: keys[i]! }).where('id', '=', item.id).execute();
    }
    await trx.deleteFrom('site_section_groups').where('id', '=', current.id).execute();
  });
}

export async function groupAddSection(ctx: Ctx, organizationId: string, siteId: string, groupId: string, sectionId: string) {
  const access = await requireSite(ctx, organizationId, siteId, 'create', 'change the section groups of the site');
  await ctx.db.transaction().execute(async (trx) => {
    const site = await lockSite(trx, access.site);
    const g = await trx.selectFrom('site_section_groups').select('id').where('site_id', '=', site.id).where('id', '=', groupId).executeTakeFirst();
    if (!g) throw new NotFoundError('Site section group');
    const s = await section(trx, site.id, sectionId, 'sectionId');
    if (s.group_id === g.id) return;
    await trx.updateTable('site_sections').set({ group_id: g.id, position: placeKey(await nodeSiblings(trx, site.id, g.id), s.id) }).where('id', '=', s.id).execute();
  });
  return presentGroup(ctx, access, groupId);
}

/** Takes a section out of a group: it goes to the group's parent (or the root), right after the group. */
export async function groupRemoveSection(ctx: Ctx, organizationId: string, siteId: string, groupId: string, sectionId: string) {
  const access = await requireSite(ctx, organizationId, siteId, 'create', 'change the section groups of the site');
  await ctx.db.transaction().execute(async (trx) => {
    const site = await lockSite(trx, access.site);
    const g = await trx.selectFrom('site_section_groups').selectAll().where('site_id', '=', site.id).where('id', '=', groupId).executeTakeFirst();
    if (!g) return;
    const s = await trx.selectFrom('site_sections').selectAll().where('site_id', '=', site.id).where('id', '=', sectionId).where('group_id', '=', g.id).executeTakeFirst();
    if (!s) return;
    const position = placeKey(await nodeSiblings(trx, site.id, g.parent_id), s.id, { after: g.id });
    await trx.updateTable('site_sections').set({ group_id: g.parent_id, position }).where('id', '=', s.id).execute();
  });
}

// Moves ------------------------------------------------------------------------------------------

/** Where an item of the structure is: its type, and the container its siblings share. */
async function locate(trx: Db, siteId: string, pointer: StructurePointerInput, field: string): Promise<{ container: string | null; kind: 'space' | 'node' }> {
  if (pointer.type === 'site-space') {
    const row = await trx.selectFrom('site_spaces').select('section_id').where('site_id', '=', siteId).where('id', '=', pointer.id).executeTakeFirst();
    if (!row) throw new BadRequestError(`${field}: site space ${pointer.id} is not part of this site`);
    return { container: row.section_id, kind: 'space' };
  }
  if (pointer.type === 'site-section') return { container: (await section(trx, siteId, pointer.id, field)).group_id, kind: 'node' };
  if (pointer.type === 'site-section-group') return { container: (await group(trx, siteId, pointer.id, field)).parent_id, kind: 'node' };
  throw new BadRequestError(`${field}: this site has no external links (type site-external-link)`);
}

/**
 * Moves one item of the structure before or after a sibling. A site space stays in its section; a
 * section or group may move into the group of the sibling it is placed next to (never into itself).
 * Returns the moved item's type and id.
 */
async function moveItem(trx: Db, site: SiteRow, item: StructurePointerInput, position: SortStructureInput['position']) {
  const at = await locate(trx, site.id, item, 'item');
  const refs = (['before', 'after'] as const).filter((f) => position[f]);
  let container = at.container;
  for (const field of refs) {
    const pointer = position[field]!;
    const there = await locate(trx, site.id, pointer, `position.${field}`);
    if (there.kind !== at.kind) {
      throw new BadRequestError(`position.${field}: a ${item.type} can only be placed next to ${at.kind === 'space' ? 'a site space' : 'a section or section group'}`);
    }
    if (at.kind === 'space' && there.container !== at.container) {
      throw new BadRequestError(`position.${field}: site space ${pointer.id} is in another section; a site space is ordered within its own section`);
    }
    container = there.container;
  }
  const siblings = at.kind === 'space' ? await siteSpaceSiblings(trx, site.id, container) : await nodeSiblings(trx, site.id, container);
  const key = placeKey(siblings, item.id, { before: position.before?.id, after: position.after?.id });
  if (item.type === 'site-space') {
    await trx.updateTable('site_spaces').set({ position: key }).where('id', '=', item.id).execute();
  } else if (item.type === 'site-section') {
    await trx.updateTable('site_sections').set({ position: key, group_id: container }).where('id', '=', item.id).execute();
  } else {
    await assertNoCycle(trx, site.id, item.id, container, 'position');
    await trx.updateTable('site_section_groups').set({ position: key, parent_id: container }).where('id', '=', item.id).execute();
  }
}

async function presentItem(ctx: Ctx, access: SiteAccess, item: StructurePointerInput) {
  if (item.type === 'site-space') {
    const row = await ctx.db.selectFrom('site_spaces').selectAll().where('id', '=', item.id).executeTakeFirstOrThrow();
    return presentSiteSpace(ctx, access, row);
  }
  if (item.type === 'site-section') {
    const row = await ctx.db.selectFrom('site_sections').selectAll().where('id', '=', item.id).executeTakeFirstOrThrow();
    return (await presentSections(ctx, access, [row]))[0]!;
  }
  return presentGroup(ctx, access, item.id);
}

export async function sortStructure(ctx: Ctx, organizationId: string, siteId: string, input: SortStructureInput) {
  const access = await requireSite(ctx, organizationId, siteId, 'create', 'reorder the site');
  await ctx.db.transaction().execute(async (trx) => moveItem(trx, await lockSite(trx, access.site), input.item, input.position));
  return presentItem(ctx, access, input.item);
}

/** The deprecated per-type moves, expressed as sortSiteStructure. */
export async function moveByPointer(ctx: Ctx, organizationId: string, siteId: string, item: StructurePointerInput, position: SortStructureInput['position']) {
  return sortStructure(ctx, organizationId, siteId, { item, position });
}
