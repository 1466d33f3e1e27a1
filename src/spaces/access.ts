import type { Ctx } from '../platform/context.ts';
import type { Role, RoleOrGuest, SpaceRow } from '../platform/db/schema.ts';
import { NotFoundError } from '../platform/errors.ts';
import { assertContentRole, atLeast } from '../platform/policy.ts';
import { orgRoleOf, spaceRoles } from '../access/effective.ts';
import { findSpace } from './store.ts';
import { spaceGrantResolvers } from './hooks.ts';

export interface SpaceAccess {
  space: SpaceRow;
  /** The caller's effective role on the space (null: none). */
  role: RoleOrGuest;
  /** The caller's organization role: undefined when not a member, null for guests. */
  orgRole: RoleOrGuest | undefined;
  /**
   * Read only because a site publishes the space to the caller (a content token's site grant): the
   * caller reads what the site shows, the current content, not the space's history.
   */
  throughSite?: boolean;
}

/**
 * Loads a space the caller can see. A space the caller cannot read, or a deleted one (unless
 * `includeDeleted`), is "not found": its existence is not revealed.
 */
export async function loadSpace(
  ctx: Ctx,
  spaceId: string,
  opts: { shareKey?: string | undefined; includeDeleted?: boolean } = {},
): Promise<SpaceAccess> {
  const space = await findSpace(ctx.db, spaceId);
  if (!space || (space.deleted_at && !opts.includeDeleted)) throw new NotFoundError('Space');
  if (ctx.integration) {
    // An integration reaches exactly the spaces of its installation, with its scopes' role.
    const role = await spaceGrantResolvers().integrationRole(ctx.db, ctx.integration, space);
    if (!atLeast(role, 'read')) throw new NotFoundError('Space');
    return { space, role, orgRole: undefined };
  }
  const orgRole = await orgRoleOf(ctx.db, space.organization_id, ctx.user.id);
  const roles = await spaceRoles(ctx.db, space.organization_id, { userId: ctx.user.id, orgRole }, [space], {
    shareKey: opts.shareKey,
  });
  let role = roles.get(space.id) ?? null;
  let throughSite = false;
  // A content token resolved through a site also reads what that site still publishes to its
  // visitors, when its owner may not read the space themselves.
  if (!atLeast(role, 'read') && ctx.token?.scopeSite && ctx.token.scopeSpaceId === space.id && (await spaceGrantResolvers().siteGrantHolds(ctx.db, ctx.token.scopeSite, space.id))) {
    role = 'read';
    throughSite = true;
  }
  if (!atLeast(role, 'read')) throw new NotFoundError('Space');
  // A content token reads its one space, whatever more its owner may do: the permissions its
  // answers advertise say so too (authentication refuses its other routes already).
  if (ctx.token?.scopeSpaceId) {
    if (ctx.token.scopeSpaceId !== space.id) throw new NotFoundError('Space');
    role = 'read';
  }
  return { space, role, orgRole, ...(throughSite ? { throughSite } : {}) };
}

/** Loads a space and requires a role on it: 404 when invisible, 403 when visible but not allowed. */
export async function requireSpaceRole(
  ctx: Ctx,
  spaceId: string,
  min: Role,
  action: string,
  opts: { includeDeleted?: boolean } = {},
): Promise<SpaceAccess> {
  const access = await loadSpace(ctx, spaceId, opts);
  assertContentRole(access.role, min, action);
  return access;
}
