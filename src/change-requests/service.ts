import type { Ctx } from '../platform/context.ts';
import type { Db } from '../platform/db/database.ts';
import type { ChangeRequestRow, ChangeRequestStatus, Role, SpaceRow } from '../platform/db/schema.ts';
import { BadRequestError, ForbiddenError, NotFoundError } from '../platform/errors.ts';
import type { PageRequest } from '../platform/paging.ts';
import { assertContentRole } from '../platform/policy.ts';
import { orgRoleOf } from '../access/effective.ts';
import { loadSpace, type SpaceAccess } from '../spaces/access.ts';
import { visibleSpaces } from '../spaces/service.ts';
import { normalizeDocumentInput } from '../content/convert.ts';
import * as store from './store.ts';
import { announceChangeRequest } from './hooks.ts';
import type { ChangeRequestFilters } from './store.ts';
import { clusterExists } from '../insights/service.ts';

/**
 * Change requests themselves: finding one the caller may read, opening, numbering, listing and
 * updating them. Their content is edited in edit.ts, merged and updated from the space in
 * merge.ts, and compared with their base in changes.ts.
 */

/** A cluster id a change request may be tied to: one of the space's organization (400 otherwise). */
async function clusterLink(db: Db, organizationId: string, cluster: string | null | undefined): Promise<string | null | undefined> {
  if (cluster === undefined || cluster === null) return cluster;
  if (!(await clusterExists(db, organizationId, cluster))) throw new BadRequestError(`conversationsIssuesCluster: "${cluster}" is not an issues cluster of the organization`);
  return cluster;
}

export interface CrAccess extends SpaceAccess {
  cr: ChangeRequestRow;
}

/** A change request of a space the caller can read, by id or by number. */
export async function loadChangeRequest(ctx: Ctx, spaceId: string, idOrNumber: string): Promise<CrAccess> {
  const access = await loadSpace(ctx, spaceId);
  const key = /^\d{1,9}$/.test(idOrNumber) ? { number: Number(idOrNumber) } : { id: idOrNumber };
  const cr = await store.findChangeRequest(ctx.db, access.space.organization_id, access.space.id, key);
  if (!cr) throw new NotFoundError('Change request');
  return { ...access, cr };
}

export async function requireChangeRequest(ctx: Ctx, spaceId: string, idOrNumber: string, min: Role, action: string) {
  const access = await loadChangeRequest(ctx, spaceId, idOrNumber);
  assertContentRole(access.role, min, action);
  return access;
}

export function assertLive(space: SpaceRow, action: string) {
  if (space.edit_mode === 'locked') throw new ForbiddenError(`The space is locked: nobody can ${action} until its editMode is "live" again`);
}

export function assertOpen(cr: ChangeRequestRow, action: string) {
  if (cr.status === 'merged' || cr.status === 'archived') {
    throw new BadRequestError(`Cannot ${action}: the change request is ${cr.status}`);
  }
}

/** Records a new revision of the space (its parents first); the locks are explained in store.ts. */
export async function newRevision(trx: Db, space: SpaceRow, root: string, parents: string[], type: string, userId: string) {
  return store.insertRevision(trx, space, root, parents, type, userId);
}

export async function createChangeRequest(ctx: Ctx, spaceId: string, input: { subject?: string | undefined; conversationsIssuesCluster?: string | null | undefined }) {
  const { space, role } = await loadSpace(ctx, spaceId);
  assertContentRole(role, 'edit', 'open a change request');
  const cluster = await clusterLink(ctx.db, space.organization_id, input.conversationsIssuesCluster);
  const cr = await ctx.db.transaction().execute(async (trx) => {
    // Numbers are per space: lock the space row so two creations never take the same number.
    const locked = await store.lockSpace(trx, space.organization_id, space.id);
    return insertNumberedChangeRequest(trx, space, {
      subject: input.subject ?? '',
      createdBy: ctx.user.id,
      revision: locked.revision_id,
      cluster: cluster ?? null,
    });
  });
  return { cr, space };
}

/**
 * Inserts a change request numbered after the last one of its space: the one rule for numbers,
 * also followed by git sync for the change request of a conflicting import. Call it in a
 * transaction that has locked the space row (`store.lockSpace`), so no two take the same number.
 */
export async function insertNumberedChangeRequest(trx: Db, space: Pick<SpaceRow, 'id' | 'organization_id'>, input: Omit<store.NewChangeRequest, 'number'>): Promise<ChangeRequestRow> {
  return store.insertChangeRequest(trx, space, { ...input, number: await store.nextNumber(trx, space.organization_id, space.id) });
}

export interface ChangeRequestQuery extends PageRequest, ChangeRequestFilters {
  status?: ChangeRequestStatus | undefined;
}

export async function listChangeRequests(ctx: Ctx, spaceId: string, query: ChangeRequestQuery) {
  const { space } = await loadSpace(ctx, spaceId);
  return { space, ...(await store.listInSpace(ctx.db, space.organization_id, space.id, [query.status ?? 'open'], query, query)) };
}

/** Change requests of every space of the organization the caller can read. */
export async function listOrganizationChangeRequests(
  ctx: Ctx,
  organizationId: string,
  query: Omit<ChangeRequestQuery, 'status'> & { statuses?: ChangeRequestStatus[] | undefined; space?: string | undefined },
) {
  const orgRole = await orgRoleOf(ctx.db, organizationId, ctx.user.id);
  if (orgRole === undefined) throw new NotFoundError('Organization');
  const spaces = visibleSpaces(ctx.db, organizationId, ctx.user.id, orgRole).clearSelect().select('spaces.id');
  // As in the official API: open change requests unless other statuses are asked for.
  return store.listInSpaces(ctx.db, organizationId, spaces, query.statuses?.length ? query.statuses : ['open'], query, query);
}

export async function updateChangeRequest(
  ctx: Ctx,
  spaceId: string,
  idOrNumber: string,
  input: { subject?: string | undefined; description?: unknown; status?: 'draft' | 'open' | 'archived' | undefined; conversationsIssuesCluster?: string | null | undefined },
) {
  const { cr } = await requireChangeRequest(ctx, spaceId, idOrNumber, 'edit', 'change the change request');
  const cluster = await clusterLink(ctx.db, cr.organization_id, input.conversationsIssuesCluster);
  if (cr.status === 'merged' && input.status) throw new BadRequestError('status: a merged change request keeps its status');
  const description = input.description !== undefined ? await normalizeDocumentInput(input.description, 'description') : undefined;
  const row = await store.updateChangeRequest(ctx.db, cr.organization_id, cr.id, {
    ...(input.subject !== undefined ? { subject: input.subject } : {}),
    ...(description !== undefined ? { description } : {}),
    ...(input.status !== undefined ? { status: input.status } : {}),
    ...(cluster !== undefined ? { conversations_issues_cluster: cluster } : {}),
    updated_at: new Date(),
  });
  if (input.status !== undefined) announceChangeRequest({ organizationId: cr.organization_id, spaceId, changeRequestId: cr.id });
  return row;
}

