import { sql } from 'kysely';
import type { Ctx } from '../platform/context.ts';
import type { Db } from '../platform/db/database.ts';
import type { CollectionRow, RoleOrGuest } from '../platform/db/schema.ts';
import { BadRequestError, NotFoundError } from '../platform/errors.ts';
import { newId } from '../platform/ids.ts';
import { paginate, type PageRequest } from '../platform/paging.ts';
import { assertContentRole } from '../platform/policy.ts';
import { collectionRoles, guestVisibleCollections, orgRoleOf } from '../access/effective.ts';
import { moveGrants, PURGE_SPACE_JOB, visibleSpaces, withRoles } from '../spaces/service.ts';
import type { MoveInput } from '../spaces/schemas.ts';
import { loadCollection, requireCollectionRole, requireCreateUnder } from '../access/collections.ts';
import { keyFor, lockParent, lockSiblings, lockTree } from '../spaces/ordering.ts';
import type { UpdateCollectionInput } from './schemas.ts';

async function withCollectionRoles(ctx: Ctx, organizationId: string, orgRole: RoleOrGuest | undefined, rows: CollectionRow[]) {
  const roles = await collectionRoles(ctx.db, organizationId, { userId: ctx.user.id, orgRole }, rows);
  return rows.map((collection) => ({ collection, role: roles.get(collection.id) ?? null }));
}

/** Locks a collection row for a change; 404 when it was deleted or transferred since it was read. */
async function lockCollectionRow(trx: Db, collectionId: string, organizationId: string): Promise<void> {
  const row = await trx.selectFrom('collections').select('organization_id').where('id', '=', collectionId).forUpdate().executeTakeFirst();
  if (!row || row.organization_id !== organizationId) throw new NotFoundError('Collection');
}

/** Ids of a collection and every collection below it. */
async function subtree(db: Db, collectionId: string): Promise<string[]> {
  const rows = await sql<{ id: string }>`
    WITH RECURSIVE tree(id) AS (
      SELECT id FROM collections WHERE id = ${collectionId}
      UNION SELECT c.id FROM collections c JOIN tree t ON c.parent_id = t.id
    ) SELECT id FROM tree`.execute(db);
  return rows.rows.map((r) => r.id);
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
    return trx
      .insertInto('collections')
      .values({
        id: newId(),
        organization_id: organizationId,
        parent_id: parentId,
        title: input.title ?? '',
        description: null,
        default_level: 'inherit',
        position: await keyFor(trx, organizationId, parentId, undefined),
        created_at: now,
        updated_at: now,
      })
      .returningAll()
      .executeTakeFirstOrThrow();
  });
  return (await withCollectionRoles(ctx, organizationId, orgRole, [collection]))[0]!;
}

export async function listCollections(ctx: Ctx, organizationId: string, query: PageRequest & { nested?: boolean | undefined }) {
  const orgRole = await orgRoleOf(ctx.db, organizationId, ctx.user.id);
  if (orgRole === undefined) throw new NotFoundError('Organization');
  let base = ctx.db.selectFrom('collections').selectAll('collections').where('collections.organization_id', '=', organizationId);
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
  const updated = await ctx.db
    .updateTable('collections')
    .set({
      ...(input.title !== undefined ? { title: input.title } : {}),
      ...(input.description !== undefined ? { description: input.description } : {}),
      ...(input.defaultLevel !== undefined ? { default_level: input.defaultLevel } : {}),
      updated_at: new Date(),
    })
    .where('id', '=', collection.id)
    .returningAll()
    .executeTakeFirstOrThrow();
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
  await ctx.db.transaction().execute(async (trx) => {
    await lockTree(trx, access.collection.organization_id);
    try {
      await lockCollectionRow(trx, collectionId, access.collection.organization_id);
    } catch (err) {
      if (err instanceof NotFoundError) return; // deleted or transferred meanwhile: nothing left to delete here
      throw err;
    }
    const ids = await subtree(trx, collectionId);
    // Content being put into these collections right now either lands first (and is deleted with
    // them) or waits and then finds its parent gone.
    await trx.selectFrom('collections').select('id').where('id', 'in', ids).forUpdate().execute();
    const spaces = await trx
      .updateTable('spaces')
      .set({ deleted_at: now, updated_at: now })
      .where('parent_id', 'in', ids)
      .where('deleted_at', 'is', null)
      .returning('id')
      .execute();
    for (const { id } of spaces) {
      await ctx.jobs.enqueue(PURGE_SPACE_JOB, { spaceId: id }, { runAt: new Date(now.getTime() + ctx.config.spaceRetentionMs), db: trx });
    }
    await trx.deleteFrom('content_permissions').where('target_type', '=', 'collection').where('target_id', 'in', ids).execute();
    await trx.deleteFrom('collections').where('id', '=', collectionId).execute();
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
    await lockCollectionRow(trx, collection.id, collection.organization_id);
    await lockParent(trx, collection.organization_id, parentId, 'parent');
    await lockSiblings(trx, collection.organization_id, parentId);
    if (parentId !== null && (await subtree(trx, collection.id)).includes(parentId)) {
      throw new BadRequestError('parent: a collection cannot move under itself or one of its descendants');
    }
    const position = await keyFor(trx, collection.organization_id, parentId, input.position, collection.id);
    return trx
      .updateTable('collections')
      .set({ parent_id: parentId, position, updated_at: new Date() })
      .where('id', '=', collection.id)
      .returningAll()
      .executeTakeFirstOrThrow();
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
    await lockCollectionRow(trx, collection.id, from);
    const ids = await subtree(trx, collection.id);
    // Content being put into these collections right now either lands first (and moves with them)
    // or waits and then finds its parent in another organization.
    await trx.selectFrom('collections').select('id').where('id', 'in', ids).forUpdate().execute();
    await lockSiblings(trx, targetOrganizationId, null);
    // By parent, not by a list read earlier: a space moved out meanwhile stays where it went.
    const spaceIds = (
      await trx.updateTable('spaces').set({ organization_id: targetOrganizationId }).where('parent_id', 'in', ids).returning('id').execute()
    ).map((s) => s.id);
    await moveGrants(trx, ids, 'collection', from, targetOrganizationId);
    await moveGrants(trx, spaceIds, 'space', from, targetOrganizationId);
    if (spaceIds.length) {
      await trx.updateTable('revisions').set({ organization_id: targetOrganizationId }).where('space_id', 'in', spaceIds).execute();
    }
    await trx.updateTable('collections').set({ organization_id: targetOrganizationId }).where('id', 'in', ids).execute();
    const position = await keyFor(trx, targetOrganizationId, null, undefined, collection.id);
    return trx
      .updateTable('collections')
      .set({ parent_id: null, position, updated_at: new Date() })
      .where('id', '=', collection.id)
      .returningAll()
      .executeTakeFirstOrThrow();
  });
  return (await withCollectionRoles(ctx, targetOrganizationId, targetRole, [moved]))[0]!;
}
