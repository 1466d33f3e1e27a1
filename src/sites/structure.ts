import { generateKeyBetween, generateNKeysBetween } from 'fractional-indexing';
import type { Ctx } from '../platform/context.ts';
import type { Db } from '../platform/db/database.ts';
import type { SiteRow, SiteSectionGroupRow, SiteSectionRow, SiteSpaceRow, SpaceRow } from '../platform/db/schema.ts';
import { BadRequestError, ConflictError, isUniqueViolation, NotFoundError } from '../platform/errors.ts';
import { slugFrom, uniqueAmong } from '../platform/slug.ts';
import { loadSpace } from '../spaces/access.ts';
import { createSpace, removeSpaceNow } from '../spaces/service.ts';
import { applyTemplate, templateOf } from '../templates/service.ts';
import { readableSite, requireSite, type SiteAccess } from './access.ts';
import { StructurePresenter } from './presenter.ts';
import { MAX_GROUP_DEPTH } from './schemas.ts';
import * as store from './store-structure.ts';
import type { Item } from './store-structure.ts';
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
  const row = await store.lockSiteRow(trx, site.organization_id, site.id);
  if (!row) throw new NotFoundError('Site');
  return row;
}

/** Runs `fn` in a transaction holding the site's lock, with the site as locked and its organization. */
function withLockedSite<T>(ctx: Ctx, access: { site: SiteRow }, fn: (trx: Db, site: SiteRow, org: string) => Promise<T>): Promise<T> {
  return ctx.db.transaction().execute(async (trx) => {
    const site = await lockSite(trx, access.site);
    return fn(trx, site, site.organization_id);
  });
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

/**
 * Links a space to a site, inside the caller's transaction (which holds the site lock): into the
 * given section, else the default section, else the root. The first site space of a container is
 * its default. The space was checked by spaceForSite before the transaction.
 */
export async function insertSiteSpace(trx: Db, site: SiteRow, space: SpaceRow, sectionId: string | undefined): Promise<SiteSpaceRow> {
  const org = site.organization_id;
  let container: string | null = null;
  if (sectionId !== undefined) {
    const section = await store.findSection(trx, org, site.id, sectionId);
    if (!section) throw new BadRequestError(`sectionId: section ${sectionId} is not part of this site`);
    container = section.id;
  } else {
    container = (await store.defaultSection(trx, org, site.id))?.id ?? null;
  }
  const siblings = await store.siteSpaceSiblings(trx, org, site.id, container);
  return store.insertSiteSpace(trx, org, site.id, {
    spaceId: space.id,
    sectionId: container,
    path: uniqueAmong(slugFrom(space.title, 'space'), await store.siteSpacePaths(trx, org, site.id, container)),
    isDefault: siblings.length === 0,
    position: placeKey(siblings, undefined),
  });
}

// Site spaces ------------------------------------------------------------------------------------

export async function listSiteSpaces(
  ctx: Ctx,
  organizationId: string,
  siteId: string,
  query: { page?: string | undefined; limit?: number | undefined; default?: boolean | undefined; shareKey?: string | undefined },
) {
  const access = await readableSite(ctx, organizationId, siteId, query.shareKey);
  const page = await store.pageSiteSpaces(ctx.db, access.site.organization_id, access.site.id, query.default, query);
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
        await store.deleteSiteSpace(trx, access.site.organization_id, access.site.id, row!.id);
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
      const updated = await store.updateSiteSpace(trx, access.site.organization_id, access.site.id, siteSpaceId, {
        path: input.path,
        condition: input.condition,
        hidden: input.hidden,
        spaceId: space?.id,
      });
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
    await store.deleteSiteSpace(trx, access.site.organization_id, access.site.id, siteSpaceId);
  });
}

// Sections ---------------------------------------------------------------------------------------

async function presentSections(ctx: Ctx, access: SiteAccess, sections: SiteSectionRow[], shareKey?: string) {
  const spaces = await store.siteSpacesOfSections(ctx.db, access.site.organization_id, sections.map((s) => s.id));
  const presenter = await new StructurePresenter(ctx, access.site, access.orgRole, shareKey).load([...spaces.values()].flat(), sections);
  return sections.map((s) => presenter.section(s, spaces.get(s.id) ?? []));
}

export async function listSections(ctx: Ctx, organizationId: string, siteId: string, query: { page?: string | undefined; limit?: number | undefined; shareKey?: string | undefined }) {
  const access = await readableSite(ctx, organizationId, siteId, query.shareKey);
  const page = await store.pageSections(ctx.db, access.site.organization_id, access.site.id, query);
  return { ...page, items: await presentSections(ctx, access, page.items, access.shareLink?.token) };
}

async function group(trx: Db, site: SiteRow, groupId: string, field: string): Promise<SiteSectionGroupRow> {
  const row = await store.findGroup(trx, site.organization_id, site.id, groupId);
  if (!row) throw new BadRequestError(`${field}: section group ${groupId} is not part of this site`);
  return row;
}

async function section(trx: Db, site: SiteRow, sectionId: string, field: string): Promise<SiteSectionRow> {
  const row = await store.findSection(trx, site.organization_id, site.id, sectionId);
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
    const row = await withLockedSite(ctx, access, async (trx, site, org) => {
      const groupId = input.siteSectionGroupId !== undefined ? (await group(trx, site, input.siteSectionGroupId, 'siteSectionGroupId')).id : null;
      const existing = await store.sectionPaths(trx, org, site.id);
      const title = input.title ?? (space.title.length >= 2 ? space.title.slice(0, 128) : 'Untitled section');
      const path = input.path ?? uniqueAmong(slugFrom(title, 'section'), new Set(existing));
      const created = await store.insertSection(trx, org, site.id, {
        groupId,
        title,
        description: input.description ?? null,
        icon: input.icon ?? null,
        path,
        condition: input.condition ?? null,
        isDefault: existing.length === 0,
        position: placeKey(await store.nodeSiblings(trx, org, site.id, groupId), undefined),
      });
      // The first section takes the site's existing content: a site has either sections or a root.
      if (existing.length === 0) await store.moveRootSiteSpacesInto(trx, org, site.id, created.id);
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
    const row = await withLockedSite(ctx, access, async (trx, site, org) => {
      const current = await store.findSection(trx, org, site.id, sectionId);
      if (!current) throw new NotFoundError('Site section');
      let move = {};
      if (input.siteSectionGroupId !== undefined && input.siteSectionGroupId !== current.group_id) {
        const groupId = input.siteSectionGroupId === null ? null : (await group(trx, site, input.siteSectionGroupId, 'siteSectionGroupId')).id;
        move = { groupId, position: placeKey(await store.nodeSiblings(trx, org, site.id, groupId), current.id) };
      }
      if (input.defaultSiteSpace !== undefined) {
        const ss = await store.findSiteSpaceInSection(trx, org, current.id, input.defaultSiteSpace);
        if (!ss) throw new BadRequestError(`defaultSiteSpace: site space ${input.defaultSiteSpace} is not in this section`);
        await store.markDefaultSiteSpace(trx, org, site.id, current.id, ss.id);
      }
      return store.updateSection(trx, org, current.id, {
        title: input.title,
        path: input.path,
        condition: input.condition,
        icon: input.icon,
        description: input.description,
        ...move,
      });
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
    await store.deleteSection(trx, site.organization_id, site.id, sectionId);
  });
}

// Section groups ---------------------------------------------------------------------------------

/** Every section and group of a site, presented as nested trees (the structure of the site). */
async function loadTree(ctx: Ctx, access: SiteAccess, shareKey?: string) {
  const { sections, groups } = await store.sectionsAndGroups(ctx.db, access.site.organization_id, access.site.id);
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
  if (await store.hasSections(ctx.db, access.site.organization_id, access.site.id)) {
    const tree = await loadTree(ctx, access, shareKey);
    return { type: 'sections' as const, structure: tree.childrenOf(null) };
  }
  const rows = await store.siteSpacesIn(ctx.db, access.site.organization_id, access.site.id, null);
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
  const page = await store.pageGroups(ctx.db, access.site.organization_id, access.site.id, query);
  const tree = page.items.length ? await loadTree(ctx, access) : undefined;
  return { ...page, items: page.items.map((g) => tree!.groupById(g.id)) };
}

/**
 * Checks that putting group `groupId` (undefined: a new group) under `parentId` makes no cycle and
 * keeps groups at most MAX_GROUP_DEPTH deep.
 */
async function assertNoCycle(trx: Db, site: SiteRow, groupId: string | undefined, parentId: string | null, field: string) {
  if (parentId === null) return;
  const groups = await store.groupParents(trx, site.organization_id, site.id);
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
  const id = await withLockedSite(ctx, access, async (trx, site, org) => {
    const parentId = input.parent !== undefined ? (await group(trx, site, input.parent, 'parent')).id : null;
    await assertNoCycle(trx, site, undefined, parentId, 'parent');
    const sectionIds = [...new Set(input.sections ?? [])];
    for (const [i, sid] of sectionIds.entries()) await section(trx, site, sid, `sections[${i}]`);
    const created = await store.insertGroup(trx, org, site.id, {
      parentId,
      title: input.title,
      icon: input.icon ?? null,
      position: placeKey(await store.nodeSiblings(trx, org, site.id, parentId), undefined),
    });
    const keys = generateNKeysBetween(null, null, sectionIds.length);
    for (const [i, sid] of sectionIds.entries()) await store.placeSection(trx, org, sid, created.id, keys[i]!);
    return created.id;
  });
  return presentGroup(ctx, access, id);
}

export async function updateGroup(ctx: Ctx, organizationId: string, siteId: string, groupId: string, input: UpdateGroupInput) {
  const access = await requireSite(ctx, organizationId, siteId, 'create', 'change the section groups of the site');
  await withLockedSite(ctx, access, async (trx, site, org) => {
    const current = await store.findGroup(trx, org, site.id, groupId);
    if (!current) throw new NotFoundError('Site section group');
    let move = {};
    if (input.parentSectionGroupId !== undefined && input.parentSectionGroupId !== current.parent_id) {
      const parentId = input.parentSectionGroupId === null ? null : (await group(trx, site, input.parentSectionGroupId, 'parentSectionGroupId')).id;
      await assertNoCycle(trx, site, current.id, parentId, 'parentSectionGroupId');
      move = { parentId, position: placeKey(await store.nodeSiblings(trx, org, site.id, parentId), current.id) };
    }
    await store.updateGroup(trx, org, current.id, { title: input.title, icon: input.icon, ...move });
  });
  return presentGroup(ctx, access, groupId);
}

/** Deletes a group; its sections and groups move up to its parent (or the root), after its siblings. */
export async function deleteGroup(ctx: Ctx, organizationId: string, siteId: string, groupId: string) {
  const access = await requireSite(ctx, organizationId, siteId, 'create', 'remove section groups from the site');
  await withLockedSite(ctx, access, async (trx, site, org) => {
    const current = await store.findGroup(trx, org, site.id, groupId);
    if (!current) return;
    const released = await store.nodeSiblings(trx, org, site.id, current.id);
    const parentSiblings = (await store.nodeSiblings(trx, org, site.id, current.parent_id)).filter((s) => s.id !== current.id);
    const keys = generateNKeysBetween(parentSiblings[parentSiblings.length - 1]?.position ?? null, null, released.length);
    for (const [i, item] of released.entries()) {
      if (item.type === 'site-section') await store.placeSection(trx, org, item.id, current.parent_id, keys[i]!);
      else await store.placeGroup(trx, org, item.id, current.parent_id, keys[i]!);
    }
    await store.deleteGroup(trx, org, current.id);
  });
}

export async function groupAddSection(ctx: Ctx, organizationId: string, siteId: string, groupId: string, sectionId: string) {
  const access = await requireSite(ctx, organizationId, siteId, 'create', 'change the section groups of the site');
  await withLockedSite(ctx, access, async (trx, site, org) => {
    const g = await store.findGroup(trx, org, site.id, groupId);
    if (!g) throw new NotFoundError('Site section group');
    const s = await section(trx, site, sectionId, 'sectionId');
    if (s.group_id === g.id) return;
    await store.placeSection(trx, org, s.id, g.id, placeKey(await store.nodeSiblings(trx, org, site.id, g.id), s.id));
  });
  return presentGroup(ctx, access, groupId);
}

/** Takes a section out of a group: it goes to the group's parent (or the root), right after the group. */
export async function groupRemoveSection(ctx: Ctx, organizationId: string, siteId: string, groupId: string, sectionId: string) {
  const access = await requireSite(ctx, organizationId, siteId, 'create', 'change the section groups of the site');
  await withLockedSite(ctx, access, async (trx, site, org) => {
    const g = await store.findGroup(trx, org, site.id, groupId);
    if (!g) return;
    const s = await store.findSectionInGroup(trx, org, site.id, sectionId, g.id);
    if (!s) return;
    const position = placeKey(await store.nodeSiblings(trx, org, site.id, g.parent_id), s.id, { after: g.id });
    await store.placeSection(trx, org, s.id, g.parent_id, position);
  });
}

// Moves ------------------------------------------------------------------------------------------

/** Where an item of the structure is: its type, and the container its siblings share. */
async function locate(trx: Db, site: SiteRow, pointer: StructurePointerInput, field: string): Promise<{ container: string | null; kind: 'space' | 'node' }> {
  if (pointer.type === 'site-space') {
    const row = await store.findSiteSpace(trx, site.organization_id, site.id, pointer.id);
    if (!row) throw new BadRequestError(`${field}: site space ${pointer.id} is not part of this site`);
    return { container: row.section_id, kind: 'space' };
  }
  if (pointer.type === 'site-section') return { container: (await section(trx, site, pointer.id, field)).group_id, kind: 'node' };
  if (pointer.type === 'site-section-group') return { container: (await group(trx, site, pointer.id, field)).parent_id, kind: 'node' };
  throw new BadRequestError(`${field}: this site has no external links (type site-external-link)`);
}

/**
 * Moves one item of the structure before or after a sibling. A site space stays in its section; a
 * section or group may move into the group of the sibling it is placed next to (never into itself).
 * Returns the moved item's type and id.
 */
async function moveItem(trx: Db, site: SiteRow, item: StructurePointerInput, position: SortStructureInput['position']) {
  const org = site.organization_id;
  const at = await locate(trx, site, item, 'item');
  const refs = (['before', 'after'] as const).filter((f) => position[f]);
  let container = at.container;
  for (const field of refs) {
    const pointer = position[field]!;
    const there = await locate(trx, site, pointer, `position.${field}`);
    if (there.kind !== at.kind) {
      throw new BadRequestError(`position.${field}: a ${item.type} can only be placed next to ${at.kind === 'space' ? 'a site space' : 'a section or section group'}`);
    }
    if (at.kind === 'space' && there.container !== at.container) {
      throw new BadRequestError(`position.${field}: site space ${pointer.id} is in another section; a site space is ordered within its own section`);
    }
    container = there.container;
  }
  const siblings = at.kind === 'space' ? await store.siteSpaceSiblings(trx, org, site.id, container) : await store.nodeSiblings(trx, org, site.id, container);
  const key = placeKey(siblings, item.id, { before: position.before?.id, after: position.after?.id });
  if (item.type === 'site-space') {
    await store.setSiteSpacePosition(trx, org, item.id, key);
  } else if (item.type === 'site-section') {
    await store.placeSection(trx, org, item.id, container, key);
  } else {
    await assertNoCycle(trx, site, item.id, container, 'position');
    await store.placeGroup(trx, org, item.id, container, key);
  }
}

async function presentSiteSpaceById(ctx: Ctx, access: SiteAccess, siteSpaceId: string) {
  const row = await store.findSiteSpace(ctx.db, access.site.organization_id, access.site.id, siteSpaceId);
  if (!row) throw new NotFoundError('Site space');
  return presentSiteSpace(ctx, access, row);
}

async function presentSectionById(ctx: Ctx, access: SiteAccess, sectionId: string) {
  const row = await store.findSection(ctx.db, access.site.organization_id, access.site.id, sectionId);
  if (!row) throw new NotFoundError('Site section');
  return (await presentSections(ctx, access, [row]))[0]!;
}

async function presentItem(ctx: Ctx, access: SiteAccess, item: StructurePointerInput) {
  if (item.type === 'site-space') return presentSiteSpaceById(ctx, access, item.id);
  if (item.type === 'site-section') return presentSectionById(ctx, access, item.id);
  return presentGroup(ctx, access, item.id);
}

/** Moves one item of a site's structure under the site lock; returns the caller's access to the site. */
async function move(ctx: Ctx, organizationId: string, siteId: string, item: StructurePointerInput, position: SortStructureInput['position']) {
  const access = await requireSite(ctx, organizationId, siteId, 'create', 'reorder the site');
  await ctx.db.transaction().execute(async (trx) => moveItem(trx, await lockSite(trx, access.site), item, position));
  return access;
}

export async function sortStructure(ctx: Ctx, organizationId: string, siteId: string, input: SortStructureInput) {
  return presentItem(ctx, await move(ctx, organizationId, siteId, input.item, input.position), input.item);
}

// The deprecated per-type moves, expressed as sortSiteStructure; each answers with its own type.

export async function moveSiteSpace(ctx: Ctx, organizationId: string, siteId: string, siteSpaceId: string, position: SortStructureInput['position']) {
  return presentSiteSpaceById(ctx, await move(ctx, organizationId, siteId, { type: 'site-space', id: siteSpaceId }, position), siteSpaceId);
}

export async function moveSection(ctx: Ctx, organizationId: string, siteId: string, sectionId: string, position: SortStructureInput['position']) {
  return presentSectionById(ctx, await move(ctx, organizationId, siteId, { type: 'site-section', id: sectionId }, position), sectionId);
}

export async function moveGroup(ctx: Ctx, organizationId: string, siteId: string, groupId: string, position: SortStructureInput['position']) {
  return presentGroup(ctx, await move(ctx, organizationId, siteId, { type: 'site-section-group', id: groupId }, position), groupId);
}
