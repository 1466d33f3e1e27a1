import type { Ctx } from '../platform/context.ts';
import type { CollectionRow, Role, RoleOrGuest } from '../platform/db/schema.ts';
import { BadRequestError, NotFoundError } from '../platform/errors.ts';
import { assertContentRole, atLeast } from '../platform/policy.ts';
import { collectionRoles, orgRoleOf } from './effective.ts';
import { findCollection } from './store.ts';

export interface CollectionAccess {
  collection: CollectionRow;
  role: RoleOrGuest;
  orgRole: RoleOrGuest | undefined;
}

/** A collection the caller can see (404 otherwise). */
export async function loadCollection(ctx: Ctx, collectionId: string): Promise<CollectionAccess> {
  const collection = await findCollection(ctx.db, collectionId);
  if (!collection) throw new NotFoundError('Collection');
  const orgRole = await orgRoleOf(ctx.db, collection.organization_id, ctx.user.id);
  const role =
    (await collectionRoles(ctx.db, collection.organization_id, { userId: ctx.user.id, orgRole }, [collection])).get(collection.id) ??
    null;
  if (!atLeast(role, 'read')) throw new NotFoundError('Collection');
  return { collection, role, orgRole };
}

export async function requireCollectionRole(ctx: Ctx, collectionId: string, min: Role, action: string): Promise<CollectionAccess> {
  const access = await loadCollection(ctx, collectionId);
  assertContentRole(access.role, min, action);
  return access;
}

/**
 * Checks that the caller may create content under `parentId` in an organization: the parent
 * collection (which must belong to that organization) needs the create role; the top level needs
 * the create role in the organization.
 */
export async function requireCreateUnder(
  ctx: Ctx,
  organizationId: string,
  orgRole: RoleOrGuest | undefined,
  parentId: string | null,
  field: string,
): Promise<CollectionRow | undefined> {
  if (parentId === null) {
    assertContentRole(orgRole ?? null, 'create', 'create content at the top level of the organization');
    return undefined;
  }
  const parent = await findCollection(ctx.db, parentId);
  if (!parent || parent.organization_id !== organizationId) {
    throw new BadRequestError(`${field}: collection ${parentId} not found in this organization`);
  }
  const role =
    (await collectionRoles(ctx.db, organizationId, { userId: ctx.user.id, orgRole }, [parent])).get(parent.id) ?? null;
  if (!atLeast(role, 'read')) throw new BadRequestError(`${field}: collection ${parentId} not found in this organization`);
  assertContentRole(role, 'create', 'create content in this collection');
  return parent;
}

/**
 * For content created next to existing content (a duplicate lands where its source is): the caller
 * did not name the parent, so a missing right is a 403 naming what is needed, not a bad field.
 */
export async function requireCreateBeside(
  ctx: Ctx,
  organizationId: string,
  orgRole: RoleOrGuest | undefined,
  parentId: string | null,
  action: string,
): Promise<void> {
  if (parentId === null) {
    assertContentRole(orgRole ?? null, 'create', `${action} at the top level of the organization`);
    return;
  }
  const parent = await findCollection(ctx.db, parentId);
  const role = parent
    ? ((await collectionRoles(ctx.db, organizationId, { userId: ctx.user.id, orgRole }, [parent])).get(parent.id) ?? null)
    : null;
  assertContentRole(role, 'create', `${action} in its collection`);
}
