import type { Ctx } from '../platform/context.ts';
import type { RevisionRow, SpaceRow } from '../platform/db/schema.ts';
import { usersById } from '../users/store.ts';
import { presentChangeRequest } from './presenter.ts';
import { mergedInto } from './store.ts';

/** The change request a merge revision came from, presented (a revision's `mergedFrom`). */
export async function mergedFromOf(ctx: Ctx, space: SpaceRow, revision: RevisionRow) {
  const cr = await mergedInto(ctx.db, space.organization_id, space.id, revision.id);
  if (!cr) return undefined;
  const users = await usersById(ctx.db, [cr.created_by, cr.merged_by]);
  return presentChangeRequest(ctx.urls, cr, { spaceRevision: space.revision_id, users });
}
