import type { Ctx } from '../platform/context.ts';
import type { RevisionRow, SpaceRow } from '../platform/db/schema.ts';
import { usersById } from '../users/service.ts';
import { presentChangeRequest } from './presenter.ts';

/** The change request a merge revision came from, presented (a revision's `mergedFrom`). */
export async function mergedFromOf(ctx: Ctx, space: SpaceRow, revision: RevisionRow) {
  const cr = await ctx.db
    .selectFrom('change_requests')
    .selectAll()
    .where('space_id', '=', space.id)
    .where('revision_merged', '=', revision.id)
    .executeTakeFirst();
  if (!cr) return undefined;
  const users = await usersById(ctx.db, [cr.created_by, cr.merged_by]);
  return presentChangeRequest(ctx.urls, cr, { spaceRevision: space.revision_id, users });
}
