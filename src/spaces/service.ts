import { randomBytes } from 'node:crypto';
import { sql } from 'kysely';
import { keepOrNextKey, keyFor, lockParent, lockSiblings } from './ordering.ts';
import { requireCreateBeside, requireCreateUnder } from '../access/collections.ts';
import type { Ctx, Services } from '../platform/context.ts';
import { json, type Db } from '../platform/db/database.ts';
import type { MergeRules, RoleOrGuest, SpaceRow, Visibility } from '../platform/db/schema.ts';
import { BadRequestError, NotFoundError } from '../platform/errors.ts';
import { newId } from '../platform/ids.ts';
import type { Jobs } from '../platform/jobs.ts';
import { paginate, type PageRequest } from '../platform/paging.ts';
import { assertContentRole } from '../platform/policy.ts';
import { orgRoleOf, spaceRoles } from '../access/effective.ts';
import { guestVisibleSpaces } from '../access/store.ts';
import { loadSpace, requireSpaceRole } from './access.ts';
import type { CreateSpaceInput, MoveInput, UpdateSpaceInput } from './schemas.ts';
import {
  copySpaceGrants,
  deleteSpaceRows,
  holdCollection,
  insertRevision,
  insertSpace,
  liveSpaceCount,
  liveSpacesOf,
  lockDeletedBefore,
  lockedVisibility,
  lockSpace,
  markSpaceDeleted,
  moveGrants,
  moveRevisions,
  organizationLanguage,
  revisionRoot,
  spaceCounts,
  updateSpaceRow,
} from './store.ts';
import { emitSpaceEvent } from '../events/outbox.ts';
import { spaceHooks } from './hooks.ts';
import { assertMembers } from '../access/organizations.ts';
import { NO_COUNTS, presentSpace } from './presenter.ts';
import type { SpaceResource } from './schemas.ts';
import type { Urls } from '../platform/urls.ts';

export const PURGE_SPACE_JOB = 'space.purge';

function newShareKey(): string {
  return randomBytes(18).toString('base64url');
}

/**
 * `space_visibility_updated` for the integrations installed on the space, when its visibility
 * really changed. Called in the transaction that changed it, with `previous` read under the row
 * lock that change holds, so concurrent changes each report the value they replaced.
 */
async function visibilityChanged(trx: Db, jobs: Jobs, space: SpaceRow, previous: Visibility): Promise<void> {
  if (space.visibility === previous) return;
  await emitSpaceEvent(trx, jobs, space, { type: 'space_visibility_updated', previousVisibility: previous, visibility: space.visibility });
}

async function validateMergeRules(db: Db, organizationId: string, rules: UpdateSpaceInput['mergeRules']) {
  if (rules?.type === 'rules') await assertMembers(db, organizationId, rules.rules.flatMap((r) => r.users), 'mergeRules');
}

/**
 * Creates a space. `alongside` runs in the same transaction, with the new row: what must exist
 * with the space or not at all (a site space that shows it).
 */
export async function createSpace(ctx: Ctx, organizationId: string, input: CreateSpaceInput, alongside?: (trx: Db, space: SpaceRow) => Promise<void>) {
  const orgRole = await orgRoleOf(ctx.db, organizationId, ctx.user.id);
  if (orgRole === undefined) throw new NotFoundError('Organization');
  const parentId = input.parent ?? null;
  await requireCreateUnder(ctx, organizationId, orgRole, parentId, 'parent');
  if (input.visibility === 'in-collection' && !parentId) {
    throw new BadRequestError('visibility "in-collection" is only for a space inside a collection: set parent');
  }
  const now = new Date();
  const space = await ctx.db.transaction().execute(async (trx) => {
    await lockParent(trx, organizationId, parentId, 'parent');
    await lockSiblings(trx, organizationId, parentId);
    const id = newId();
    const revision = await insertRevision(trx, organizationId, id, ctx.user.id);
    const row = await insertSpace(trx, organizationId, {
      id,
      parent_id: parentId,
      title: input.title ?? '',
      emoji: input.emoji ?? null,
      icon: null,
      visibility: input.visibility ?? 'private',
      edit_mode: input.editMode ?? 'live',
      // No language given: the organization's default (Folio's `language` on the organization).
      language: input.language ?? (await organizationLanguage(trx, organizationId)),
      default_level: 'inherit',
      merge_rules: json<MergeRules>({ type: 'inherit' }),
      revision_id: revision,
      share_key: newShareKey(),
      position: await keyFor(trx, organizationId, parentId, undefined),
      created_by: ctx.user.id,
      created_at: now,
      updated_at: now,
    });
    await alongside?.(trx, row);
    return row;
  });
  const role = (await spaceRoles(ctx.db, organizationId, { userId: ctx.user.id, orgRole }, [space])).get(space.id) ?? null;
  return { space, role };
}

/** Roles of the caller on a page of spaces of one organization, in one round of queries. */
export async function withRoles(ctx: Ctx, organizationId: string, orgRole: RoleOrGuest | undefined, spaces: SpaceRow[]) {
  const roles = await spaceRoles(ctx.db, organizationId, { userId: ctx.user.id, orgRole }, spaces);
  return spaces.map((space) => ({ space, role: roles.get(space.id) ?? null }));
}

/**
 * Live spaces of an organization a user can see: every space for members with a role, only the
 * granted ones for guests. `base` may add conditions (a parent collection).
 */
export function visibleSpaces(db: Db, organizationId: string, userId: string, orgRole: RoleOrGuest) {
  const base = liveSpacesOf(db, organizationId);
  return orgRole === null ? base.where(guestVisibleSpaces(organizationId, userId)) : base;
}

export async function listOrganizationSpaces(ctx: Ctx, organizationId: string, page: PageRequest) {
  const orgRole = await orgRoleOf(ctx.db, organizationId, ctx.user.id);
  if (orgRole === undefined) throw new NotFoundError('Organization');
  const result = await paginate(
    visibleSpaces(ctx.db, organizationId, ctx.user.id, orgRole),
    { kind: 'org-spaces', sortExpr: null, seqExpr: sql.ref('spaces.seq'), direction: 'asc' },
    page,
    undefined,
    // Members with a role see every live space: the maintained counter is their total.
    orgRole === null ? undefined : () => liveSpaceCount(ctx.db, organizationId),
  );
  return { ...result, items: await withRoles(ctx, organizationId, orgRole, result.items) };
}

export async function getSpace(ctx: Ctx, spaceId: string, shareKey?: string) {
  const { space, role } = await loadSpace(ctx, spaceId, { shareKey });
  return { space, role };
}

export async function updateSpace(ctx: Ctx, spaceId: string, input: UpdateSpaceInput) {
  const adminFields = (['editMode', 'defaultLevel', 'mergeRules', 'visibility'] as const).filter((f) => input[f] !== undefined);
  const access = await requireSpaceRole(ctx, spaceId, adminFields.length ? 'admin' : 'edit', adminFields.length ? `change ${adminFields.join(', ')}` : 'change the space');
  const { space } = access;
  if (input.visibility === 'in-collection' && !space.parent_id) {
    throw new BadRequestError('visibility "in-collection" is only for a space inside a collection: move it into one first');
  }
  await validateMergeRules(ctx.db, space.organization_id, input.mergeRules);
  if (input.emoji && input.icon) throw new BadRequestError('A space shows an emoji or an icon: send one of them, not both');
  // Setting an emoji replaces the icon and the other way round; null removes it.
  const look = {
    ...(input.emoji !== undefined ? { emoji: input.emoji, ...(input.emoji ? { icon: null } : {}) } : {}),
    ...(input.icon !== undefined ? { icon: input.icon, ...(input.icon ? { emoji: null } : {}) } : {}),
  };
  const updated = await ctx.db.transaction().execute(async (trx) => {
    // The visibility this update replaces, read under the lock the update takes anyway.
    const before = input.visibility !== undefined ? await lockedVisibility(trx, space.id, 'no key update') : undefined;
    const row = await updateSpaceRow(trx, space.id, {
      ...(input.title !== undefined ? { title: input.title } : {}),
      ...look,
      ...(input.editMode !== undefined ? { edit_mode: input.editMode } : {}),
      ...(input.defaultLevel !== undefined ? { default_level: input.defaultLevel } : {}),
      ...(input.language !== undefined ? { language: input.language } : {}),
      ...(input.mergeRules !== undefined ? { merge_rules: json(input.mergeRules as MergeRules) } : {}),
      ...(input.visibility !== undefined ? { visibility: input.visibility } : {}),
      updated_at: new Date(),
    });
    if (before) await visibilityChanged(trx, ctx.jobs, row, before);
    if (input.language !== undefined && input.language !== space.language) await spaceHooks.run('languageChanged', trx, { spaceId: space.id, jobs: ctx.jobs });
    return row;
  });
  const role = (await withRoles(ctx, updated.organization_id, access.orgRole, [updated]))[0]!.role;
  return { space: updated, role };
}

/** Soft delete: hidden everywhere at once, removed for good by a background job after the retention period. */
export async function deleteSpace(ctx: Ctx, spaceId: string): Promise<void> {
  let access;
  try {
    access = await loadSpace(ctx, spaceId);
  } catch (err) {
    if (err instanceof NotFoundError) return; // deleting what does not exist (for the caller) is a no-op
    throw err;
  }
  assertContentRole(access.role, 'admin', 'delete the space');
  // On the services' clock, as the retention checks below: a test moves it past the retention.
  const deletedAt = new Date(ctx.now());
  await ctx.db.transaction().execute(async (trx) => {
    await markSpaceDeleted(trx, spaceId, deletedAt);
    await spaceHooks.run('deleted', trx, { spaceId });
    await ctx.jobs.enqueue(PURGE_SPACE_JOB, { spaceId }, { runAt: new Date(deletedAt.getTime() + ctx.config.spaceRetentionMs), db: trx });
  });
}

export async function restoreSpace(ctx: Ctx, spaceId: string) {
  const access = await requireSpaceRole(ctx, spaceId, 'admin', 'restore the space', { includeDeleted: true });
  const { space } = access;
  if (space.deleted_at && space.deleted_at.getTime() + ctx.config.spaceRetentionMs <= ctx.now()) {
    throw new NotFoundError('Space');
  }
  if (!space.deleted_at) return { space, role: access.role };
  const restored = await ctx.db.transaction().execute(async (trx) => {
    // Hold the parent collection first (the order every writer follows: collection, then space), so
    // it can be neither deleted nor transferred while the space comes back; then read the space
    // again: if its collection was deleted meanwhile, it comes back at the top level.
    if (space.parent_id) await holdCollection(trx, space.parent_id);
    const current = await lockSpace(trx, spaceId);
    if (!current) throw new NotFoundError('Space'); // purged meanwhile
    if (!current.deleted_at) return current; // restored meanwhile
    await lockSiblings(trx, current.organization_id, current.parent_id);
    // Siblings created while the space was in the trash may hold its old place.
    const position = await keepOrNextKey(trx, current.organization_id, current.parent_id, current.position, current.id);
    const row = await updateSpaceRow(trx, spaceId, {
      deleted_at: null,
      position,
      // "in-collection" means nothing outside a collection.
      ...(current.parent_id === null && current.visibility === 'in-collection' ? { visibility: 'private' as const } : {}),
      updated_at: new Date(),
    });
    await visibilityChanged(trx, ctx.jobs, row, current.visibility);
    return row;
  });
  return { space: restored, role: (await withRoles(ctx, restored.organization_id, access.orgRole, [restored]))[0]!.role };
}

/** Background job: removes a space whose retention period has passed (no-op if it was restored). */
export function purgeSpaceJob(services: Pick<Services, 'config' | 'now'>) {
  return async (payload: { spaceId: string }, { db }: { db: Db }) => {
    const cutoff = new Date(services.now() - services.config.spaceRetentionMs);
    await db.transaction().execute(async (trx) => {
      const due = await lockDeletedBefore(trx, payload.spaceId, cutoff);
      if (due) await removeSpaceNow(trx, due);
    });
  };
}

/**
 * Removes a space and everything it holds at once (its rows go with it; its permissions too). Run
 * it in a transaction: both deletes happen or neither.
 */
export async function removeSpaceNow(trx: Db, spaceId: string): Promise<void> {
  await deleteSpaceRows(trx, spaceId);
}

export async function duplicateSpace(ctx: Ctx, spaceId: string) {
  const { space: source, orgRole } = await loadSpace(ctx, spaceId);
  await requireCreateBeside(ctx, source.organization_id, orgRole, source.parent_id, 'duplicate the space');
  const now = new Date();
  const copy = await ctx.db.transaction().execute(async (trx) => {
    await lockParent(trx, source.organization_id, source.parent_id, 'parent');
    await lockSiblings(trx, source.organization_id, source.parent_id);
    const id = newId();
    // The copy starts from the source's current content: its first revision descends from it.
    // The copy shares the source's content tree: nothing is copied but the pointer.
    const root = await revisionRoot(trx, source.revision_id);
    const revision = await insertRevision(trx, source.organization_id, id, ctx.user.id, [source.revision_id], root);
    const created = await insertSpace(trx, source.organization_id, {
      id,
      parent_id: source.parent_id,
      title: `${source.title} (copy)`.slice(0, 50),
      emoji: source.emoji,
      icon: source.icon,
      visibility: source.visibility,
      edit_mode: source.edit_mode,
      language: source.language,
      default_level: source.default_level,
      merge_rules: json(source.merge_rules),
      revision_id: revision,
      share_key: newShareKey(),
      position: await keyFor(trx, source.organization_id, source.parent_id, { after: { type: 'space', space: source.id } }),
      created_by: ctx.user.id,
      created_at: now,
      updated_at: now,
    });
    await copySpaceGrants(trx, source.id, id, now);
    await spaceHooks.run('copied', trx, { spaceId: id, root, jobs: ctx.jobs });
    return created;
  });
  return { space: copy, role: (await withRoles(ctx, copy.organization_id, orgRole, [copy]))[0]!.role };
}

export async function moveSpace(ctx: Ctx, spaceId: string, input: MoveInput) {
  if (input.parent === undefined && input.position === undefined) {
    throw new BadRequestError('Nothing to do: send parent and/or position');
  }
  const access = await requireSpaceRole(ctx, spaceId, 'admin', 'move the space');
  const { space, orgRole } = access;
  const parentId = input.parent === undefined ? space.parent_id : input.parent;
  if (parentId !== space.parent_id) await requireCreateUnder(ctx, space.organization_id, orgRole, parentId, 'parent');
  if (parentId === null && space.visibility === 'in-collection') {
    throw new BadRequestError('A space with visibility "in-collection" must stay in a collection: change its visibility first');
  }
  const moved = await ctx.db.transaction().execute(async (trx) => {
    await lockParent(trx, space.organization_id, parentId, 'parent');
    await lockSiblings(trx, space.organization_id, parentId);
    const position = await keyFor(trx, space.organization_id, parentId, input.position, space.id);
    return updateSpaceRow(trx, space.id, { parent_id: parentId, position, updated_at: new Date() });
  });
  return { space: moved, role: (await withRoles(ctx, moved.organization_id, orgRole, [moved]))[0]!.role };
}

/**
 * Moves a space to another organization (and optionally into one of its collections). The caller
 * must administer the space and the target organization. Grants that cannot follow (teams of the
 * old organization, users who are not members of the new one) are dropped.
 */
export async function transferSpace(ctx: Ctx, spaceId: string, input: { organization: string; collection?: string | null | undefined }) {
  const { space, orgRole } = await requireSpaceRole(ctx, spaceId, 'admin', 'transfer the space');
  // Taking content out of an organization is for its admins, not for whoever was granted the space.
  if (input.organization !== space.organization_id) assertContentRole(orgRole ?? null, 'admin', 'transfer a space out of the organization');
  const targetOrgRole = await orgRoleOf(ctx.db, input.organization, ctx.user.id);
  if (targetOrgRole === undefined) throw new NotFoundError('Organization');
  assertContentRole(targetOrgRole, 'admin', 'transfer content into the target organization');
  const parentId = input.collection ?? null;
  if (parentId) await requireCreateUnder(ctx, input.organization, targetOrgRole, parentId, 'collection');
  const moved = await ctx.db.transaction().execute(async (trx) => {
    await lockParent(trx, input.organization, parentId, 'collection');
    await lockSiblings(trx, input.organization, parentId);
    const position = await keyFor(trx, input.organization, parentId, undefined, space.id);
    // The visibility as it is now, under the row lock (the update below would take it anyway).
    const previous = await lockedVisibility(trx, space.id, 'update');
    // "in-collection" means nothing outside a collection.
    const visibility = parentId === null && previous === 'in-collection' ? 'private' : previous;
    if (input.organization !== space.organization_id) {
      await moveGrants(trx, [space.id], 'space', space.organization_id, input.organization);
      await moveRevisions(trx, [space.id], input.organization);
    }
    const row = await updateSpaceRow(trx, space.id, { organization_id: input.organization, parent_id: parentId, position, visibility, updated_at: new Date() });
    // To the installations of the organization the space now belongs to: those of the one it
    // left no longer see it.
    await visibilityChanged(trx, ctx.jobs, row, previous);
    return row;
  });
  return { space: moved, role: (await withRoles(ctx, moved.organization_id, targetOrgRole, [moved]))[0]!.role };
}

/** Presents spaces with their counters, loaded for the whole list in one query. */
export async function presentSpaces(db: Db, urls: Urls, items: { space: SpaceRow; role: RoleOrGuest }[]): Promise<SpaceResource[]> {
  const counts = await spaceCounts(db, items.map((i) => i.space.id));
  return items.map((i) => presentSpace(urls, i.space, i.role, counts.get(i.space.id) ?? NO_COUNTS));
}
