import { sql } from 'kysely';
import type { Ctx } from '../platform/context.ts';
import type { Db } from '../platform/db/database.ts';
import type { CollectionRow, RoleOrGuest } from '../platform/db/schema.ts';
import { BadRequestError, NotFoundError } from '../platform/errors.ts';
import { paginate, type PageRequest } from '../platform/paging.ts';
import { assertContentRole } from '../platform/policy.ts';
import { collectionRoles, orgRoleOf } from '../access/effective.ts';
import { guestVisibleCollections } from '../access/store.ts';
import { PURGE_SPACE_JOB, visibleSpaces, withRoles } from '../spaces/service.ts';
import { markSpacesDeletedIn, moveGrants, moveRevisions, moveSpacesIn } from '../spaces/store.ts';
import type { MoveInput } from '../spaces/schemas.ts';
import { loadCollection, requireCollectionRole, requireCreateUnder } from '../access/collections.ts';
import { keyFor, lockParent, lockSiblings, lockTree } from '../spaces/ordering.ts';
import type { UpdateCollectionInput } from './schemas.ts';
import {
  collectionsOf,
  deleteCollectionRows,
  insertCollection,
  lockCollectionRow,
  lockCollections,
  moveCollections,
  subtree,
  updateCollectionRow,
} from './store.ts';

async function withCollectionRoles(ctx: Ctx, organizationId: string, orgRole: RoleOrGuest | undefined, rows: CollectionRow[]) {
  const roles = await collectionRoles(ctx.db, organizationId, { userId: ctx.user.id, orgRole }, rows);
  return rows.map((collection) => ({ collection, role: roles.get(collection.id) ?? null }));
}

/** Locks a collection row for a change; 404 when it was deleted or transferred since it was read. */
async function lockCollection(trx: Db, collectionId: string, organizationId: string): Promise<void> {
  if ((await lockCollectionRow(trx, collectionId)) !== organizationId) throw new NotFoundError('Collection');
}

export async function createCollection(ctx: Ctx, organizationId: string, input: { title?: string | undefined; parent?: string | undefined }) {
  const orgRole = await orgRoleOf(ctx.db, organizationId, ctx.user.id);
  if (orgRole === undefined) throw new NotFoundError('Organization');
  const parentId = input.parent ?? null;
  await requireCreateUnder(ctx, organizationId, orgRole, parentId, 'parent');
  const now = new Date();
  const collection = await ctx.db.transaction().execute(async (trx) => {
    await lockParent(trx, organizationId, parentId, 'parent');
    await lockSiblings(trx, organizationId, parentId);
    const position = await keyFor(trx, organizationId, parentId, undefined);
    return insertCollection(trx, organizationId, { parentId, title: input.title ?? '', position, now });
  });
  return (await withCollectionRoles(ctx, organizationId, orgRole, [collection]))[0]!;
}

export async function listCollections(ctx: Ctx, organizationId: string, query: PageRequest & { nested?: boolean | undefined }) {
  const orgRole = await orgRoleOf(ctx.db, organizationId, ctx.user.id);
  if (orgRole === undefined) throw new NotFoundError('Organization');
  let base = collectionsOf(ctx.db, organizationId);
  if (query.nested === false) base = base.where('collections.parent_id', 'is', null);
  if (orgRole === null) base = base.where(guestVisibleCollections(organizationId, ctx.user.id));
  const page = await paginate(base, { kind: 'collections', sortExpr: null, seqExpr: sql.ref('collections.seq'), direction: 'asc' }, query);
  return { ...page, items: await withCollectionRoles(ctx, organizationId, orgRole, page.items) };
}

export async function getCollection(ctx: Ctx, collectionId: string) {
  const { collection, role } = await loadCollection(ctx, collectionId);
  return { collection, role };
}

export async function updateCollection(ctx: Ctx, collectionId: string, input: UpdateCollectionInput) {
  const { collection, orgRole } = await requireCollectionRole(ctx, collectionId, 'admin', 'change the collection');
  const updated = await updateCollectionRow(ctx.db, collection.organization_id, collection.id, {
    ...(input.title !== undefined ? { title: input.title } : {}),
    ...(input.description !== undefined ? { description: input.description } : {}),
    ...(input.defaultLevel !== undefined ? { default_level: input.defaultLevel } : {}),
    updated_at: new Date(),
  });
  return (await withCollectionRoles(ctx, updated.organization_id, orgRole, [updated]))[0]!;
}

/**
 * Deletes a collection and the collections below it. Their spaces are deleted like any deleted
 * space: restorable during the retention period (at the top level, since their collection is gone).
 */
export async function deleteCollection(ctx: Ctx, collectionId: string): Promise<void> {
  let access;
  try {
    access = await loadCollection(ctx, collectionId);
  } catch (err) {
    if (err instanceof NotFoundError) return;
    throw err;
  }
  assertContentRole(access.role, 'admin', 'delete the collection');
  const now = new Date(ctx.now()); // the services' clock, as space deletion and its retention
  const organizationId = access.collection.organization_id;
  await ctx.db.transaction().execute(async (trx) => {
    await lockTree(trx, organizationId);
    try {
      await lockCollection(trx, collectionId, organizationId);
    } catch (err) {
      if (err instanceof NotFoundError) return; // deleted or transferred meanwhile: nothing left to delete here
      throw err;
    }
    const ids = await subtree(trx, organizationId, collectionId);
    // Content being put into these collections right now either lands first (and is deleted with
    // them) or waits and then finds its parent gone.
    await lockCollections(trx, organizationId, ids);
    const spaces = await markSpacesDeletedIn(trx, organizationId, ids, now);
    for (const id of spaces) {
      await ctx.jobs.enqueue(PURGE_SPACE_JOB, { spaceId: id }, { runAt: new Date(now.getTime() + ctx.config.spaceRetentionMs), db: trx });
    }
    await deleteCollectionRows(trx, organizationId, collectionId, ids);
  });
}

export async function listCollectionSpaces(ctx: Ctx, collectionId: string, page: PageRequest) {
  const { collection, orgRole } = await loadCollection(ctx, collectionId);
  const base = visibleSpaces(ctx.db, collection.organization_id, ctx.user.id, orgRole ?? null).where('spaces.parent_id', '=', collection.id);
  const result = await paginate(
    base,
    { kind: 'collection-spaces', sortExpr: sql.ref('spaces.position'), sortType: 'text', seqExpr: sql.ref('spaces.seq'), direction: 'asc' },
    page,
    (s) => s.position,
  );
  return { ...result, items: await withRoles(ctx, collection.organization_id, orgRole, result.items) };
}

export async function moveCollection(ctx: Ctx, collectionId: string, input: MoveInput) {
  if (input.parent === undefined && input.position === undefined) throw new BadRequestError('Nothing to do: send parent and/or position');
  const { collection, orgRole } = await requireCollectionRole(ctx, collectionId, 'admin', 'move the collection');
  const parentId = input.parent === undefined ? collection.parent_id : input.parent;
  if (parentId !== collection.parent_id) {
    await requireCreateUnder(ctx, collection.organization_id, orgRole, parentId, 'parent');
  }
  const moved = await ctx.db.transaction().execute(async (trx) => {
    // Every tree change takes the tree lock first (then rows): no two of them can deadlock.
    await lockTree(trx, collection.organization_id);
    await lockCollection(trx, collection.id, collection.organization_id);
    await lockParent(trx, collection.organization_id, parentId, 'parent');
    await lockSiblings(trx, collection.organization_id, parentId);
    if (parentId !== null && (await subtree(trx, collection.organization_id, collection.id)).includes(parentId)) {
      throw new BadRequestError('parent: a collection cannot move under itself or one of its descendants');
    }
    const position = await keyFor(trx, collection.organization_id, parentId, input.position, collection.id);
    return updateCollectionRow(trx, collection.organization_id, collection.id, { parent_id: parentId, position, updated_at: new Date() });
  });
  return (await withCollectionRoles(ctx, moved.organization_id, orgRole, [moved]))[0]!;
}

/**
 * Moves a collection, with its nested collections and spaces, to the top level of another
 * organization. The caller must be an admin of both organizations.
 */
export async function transferCollection(ctx: Ctx, collectionId: string, targetOrganizationId: string) {
  const { collection, orgRole } = await loadCollection(ctx, collectionId);
  assertContentRole(orgRole ?? null, 'admin', 'transfer a collection out of the organization');
  const targetRole = await orgRoleOf(ctx.db, targetOrganizationId, ctx.user.id);
  if (targetRole === undefined) throw new NotFoundError('Organization');
  assertContentRole(targetRole, 'admin', 'transfer a collection into the target organization');
  if (targetOrganizationId === collection.organization_id) return { collection, role: orgRole ?? null };
  const from = collection.organization_id;
  const moved = await ctx.db.transaction().execute(async (trx) => {
    await lockTree(trx, from);
    await lockCollection(trx, collection.id, from);
    const ids = await subtree(trx, from, collection.id);
    // Content being put into these collections right now either lands first (and moves with them)
    // or waits and then finds its parent in another organization.
    await lockCollections(trx, from, ids);
    await lockSiblings(trx, targetOrganizationId, null);
    // By parent, not by a list read earlier: a space moved out meanwhile stays where it went.
    const spaceIds = await moveSpacesIn(trx, from, ids, targetOrganizationId);
    await moveGrants(trx, ids, 'collection', from, targetOrganizationId);
    await moveGrants(trx, spaceIds, 'space', from, targetOrganizationId);
    await moveRevisions(trx, spaceIds, targetOrganizationId);
    await moveCollections(trx, from, ids, targetOrganizationId);
    const position = await keyFor(trx, targetOrganizationId, null, undefined, collection.id);
    return updateCollectionRow(trx, targetOrganizationId, collection.id, { parent_id: null, position, updated_at: new Date() });
  });
  return (await withCollectionRoles(ctx, targetOrganizationId, targetRole, [moved]))[0]!;
}
