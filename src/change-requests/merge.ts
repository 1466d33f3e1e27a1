import { emitSpaceEvent } from '../events/outbox.ts';
import { presentUser } from '../users/presenter.ts';
import { mergeContents, type Conflict } from '../content/merge.ts';
import { loadRevision } from '../content/service.ts';
import { refreshSearchIndex } from '../search/indexer.ts';
import type { Ctx } from '../platform/context.ts';
import type { Db } from '../platform/db/database.ts';
import type { ChangeRequestRow, MergeRules, SpaceRow } from '../platform/db/schema.ts';
import { ConflictError, ForbiddenError } from '../platform/errors.ts';
import { announceChangeRequest, changeRequestHooks, saveLiveEdits } from './hooks.ts';
import { assertLive, assertOpen, newRevision, requireChangeRequest } from './service.ts';
import * as store from './store.ts';

/** Merging a change request into its space, and bringing the space's changes into it. */

export class MergeConflictError extends ConflictError {
  constructor(
    message: string,
    readonly conflicts: Conflict[],
  ) {
    super(message);
  }
}

/** Merge rules of the space (or of its organization when the space inherits them). */
async function mergeRulesOf(db: Db, space: SpaceRow): Promise<MergeRules> {
  if (space.merge_rules.type !== 'inherit') return space.merge_rules;
  return store.organizationMergeRules(db, space.organization_id);
}

async function assertMergeRules(db: Db, space: SpaceRow, cr: ChangeRequestRow) {
  const rules = await mergeRulesOf(db, space);
  if (rules.type !== 'rules') return;
  const required = [...new Set((rules.rules ?? []).flatMap((r) => r.users))];
  if (!required.length) return;
  // The latest review of each required reviewer must approve the current head.
  const reviews = await store.reviewsBy(db, cr.id, required);
  const latest = new Map<string, { status: string; revision: string }>();
  for (const r of reviews) if (!latest.has(r.reviewer_id)) latest.set(r.reviewer_id, r);
  const missing = required.filter((u) => latest.get(u)?.status !== 'approved' || latest.get(u)?.revision !== cr.revision);
  if (missing.length) {
    throw new ForbiddenError(`Merge rules require approval of the latest changes by: ${missing.join(', ')}`);
  }
}

/**
 * Merges a change request into its space: a three-way merge of its base, its head and the space's
 * current revision. Merges into one space are serialized by locking the space row, so two merges
 * never both apply against the same revision.
 */
export async function mergeChangeRequest(ctx: Ctx, spaceId: string, idOrNumber: string) {
  const { space, cr } = await requireChangeRequest(ctx, spaceId, idOrNumber, 'review', 'merge the change request');
  assertLive(space, 'merge');
  assertOpen(cr, 'merge');
  // What people are typing into it here and not yet saved goes in first (src/collab/).
  await saveLiveEdits(cr.id).catch((err) => ctx.jobs.logger?.warn({ err, changeRequest: cr.id }, 'live edits not saved before the merge'));
  const merged = await ctx.db.transaction().execute(async (trx) => {
    const locked = await store.lockSpace(trx, space.organization_id, space.id);
    assertLive(locked, 'merge');
    const current = await store.lockChangeRequest(trx, cr.organization_id, cr.id);
    assertOpen(current, 'merge');
    if (current.conflicts.length) {
      throw new MergeConflictError('Resolve the conflicts left by the last update before merging', current.conflicts.map((page) => ({ page, title: '', reason: 'conflict markers left by an update' })));
    }
    await assertMergeRules(trx, locked, current);
    const [base, main, head] = await Promise.all([
      loadRevision(trx, space.id, current.revision_merged_ancestor ?? current.revision_initial),
      loadRevision(trx, space.id, locked.revision_id),
      loadRevision(trx, space.id, current.revision),
    ]);
    const root =
      main.id === base.id
        ? head.root
        : await (async () => {
            const outcome = await mergeContents(trx, { base: base.root, ours: main.root, theirs: head.root }, { spaceId: space.id, keepConflicts: false });
            if (outcome.conflicts.length) {
              throw new MergeConflictError(`The change request conflicts with the space on ${outcome.conflicts.length} page(s): update it and resolve them`, outcome.conflicts);
            }
            return outcome.root;
          })();
    const revision = await newRevision(trx, locked, root, [main.id, head.id], 'merge', ctx.user.id);
    const now = new Date();
    await store.setSpaceRevision(trx, space.organization_id, space.id, revision, now);
    await store.updateChangeRequest(trx, cr.organization_id, cr.id, { status: 'merged', revision_merged: revision, merged_by: ctx.user.id, merged_at: now, updated_at: now });
    // Integrations installed on the space hear of it, in the merge's own transaction (outbox).
    await emitSpaceEvent(trx, ctx.jobs, locked, { type: 'space_content_updated', revisionId: revision, updatedBy: [presentUser(ctx.urls, ctx.user)] });
    return { revision, result: 'merge' as const };
  });
  // The search index follows the space's content, page by changed page, outside the merge's
  // transaction: extracting the text of a large page must not hold the space locked. The merge
  // has committed: a failure here is reported, not answered, and the next merge or start-up
  // (refreshStaleSearchIndexes) catches the index up.
  await refreshSearchIndex(ctx.db, space.id, ctx.jobs).catch((err) => ctx.jobs.logger?.error({ err, space: space.id }, 'search index refresh failed'));
  // Spaces synced both ways send each merge to their repository (src/git/, through the hook).
  await changeRequestHooks
    .run('merged', ctx.db, { organizationId: space.organization_id, spaceId: space.id, message: `${cr.subject || 'Change request'} (#${cr.number})`, jobs: ctx.jobs })
    .catch((err) => ctx.jobs.logger?.error({ err, space: space.id }, 'git export after merge not queued'));
  announceChangeRequest({ organizationId: space.organization_id, spaceId: space.id, changeRequestId: cr.id });
  return merged;
}

/**
 * Brings the space's latest content into the change request. Conflicting pages keep both sides
 * (between conflict markers) in the new head and are listed until edited; merging waits for them.
 */
export async function updateFromSpace(ctx: Ctx, spaceId: string, idOrNumber: string) {
  const { space, cr } = await requireChangeRequest(ctx, spaceId, idOrNumber, 'edit', 'update the change request');
  assertLive(space, 'update change requests');
  assertOpen(cr, 'update');
  const updated = await ctx.db.transaction().execute(async (trx) => {
    const locked = await store.lockSpace(trx, space.organization_id, space.id);
    const current = await store.lockChangeRequest(trx, cr.organization_id, cr.id);
    const baseId = current.revision_merged_ancestor ?? current.revision_initial;
    if (locked.revision_id === baseId) return { revision: current.revision, result: 'update' as const };
    const [base, main, head] = await Promise.all([
      loadRevision(trx, space.id, baseId),
      loadRevision(trx, space.id, locked.revision_id),
      loadRevision(trx, space.id, current.revision),
    ]);
    const outcome =
      head.id === base.id
        ? { root: main.root, conflicts: [] as Conflict[] }
        : await mergeContents(trx, { base: base.root, ours: head.root, theirs: main.root }, { spaceId: space.id, keepConflicts: true, labels: { theirs: 'space', ours: 'change request' } });
    const revision = await newRevision(trx, locked, outcome.root, [head.id, main.id], 'update', ctx.user.id);
    const conflicted = [...new Set(outcome.conflicts.map((c) => c.page).filter(Boolean))];
    await store.updateChangeRequest(trx, cr.organization_id, cr.id, { revision, revision_merged_ancestor: main.id, conflicts: conflicted, updated_at: new Date() });
    return { revision, result: outcome.conflicts.length ? ('conflicts' as const) : ('update' as const), conflicts: outcome.conflicts };
  });
  announceChangeRequest({ organizationId: cr.organization_id, spaceId: space.id, changeRequestId: cr.id });
  return updated;
}

