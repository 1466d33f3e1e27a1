import type { Ctx } from '../platform/context.ts';
import type { ChangeRequestRow } from '../platform/db/schema.ts';
import type { Urls } from '../platform/urls.ts';
import { presentUserById, type UserLike } from '../users/presenter.ts';
import { usersById } from '../users/store.ts';
import { openCommentCounts, spaceRevisions } from './store.ts';

/** Presents change requests with their authors, open comments and the current revision of their spaces. */
export async function presentChangeRequests(ctx: Ctx, crs: ChangeRequestRow[]) {
  const users = await usersById(ctx.db, crs.flatMap((c) => [c.created_by, c.merged_by]));
  const revisions = new Map<string, string>();
  const comments = new Map<string, number>();
  // A page of change requests is of one organization; grouping keeps every query within one.
  for (const organizationId of new Set(crs.map((c) => c.organization_id))) {
    const own = crs.filter((c) => c.organization_id === organizationId);
    for (const [id, revision] of await spaceRevisions(ctx.db, organizationId, [...new Set(own.map((c) => c.space_id))])) revisions.set(id, revision);
    for (const [id, n] of await openCommentCounts(ctx.db, organizationId, own.map((c) => c.id))) comments.set(id, n);
  }
  return crs.map((cr) => presentChangeRequest(ctx.urls, cr, { spaceRevision: revisions.get(cr.space_id) ?? '', users, comments: comments.get(cr.id) ?? 0 }));
}

export function presentChangeRequest(
  urls: Urls,
  cr: ChangeRequestRow,
  ctx: { spaceRevision: string; users: Map<string, UserLike>; comments?: number },
) {
  const base = cr.revision_merged_ancestor ?? cr.revision_initial;
  const user = (id: string | null) => presentUserById(urls, ctx.users, id);
  return {
    object: 'change-request' as const,
    id: cr.id,
    number: cr.number,
    status: cr.status,
    subject: cr.subject,
    ...(cr.description ? { description: cr.description as never } : {}),
    createdBy: user(cr.created_by),
    createdAt: cr.created_at.toISOString(),
    updatedAt: cr.updated_at.toISOString(),
    ...(cr.merged_by ? { mergedBy: user(cr.merged_by) } : {}),
    ...(cr.merged_at ? { mergedAt: cr.merged_at.toISOString() } : {}),
    space: cr.space_id,
    revision: cr.revision,
    revisionInitial: cr.revision_initial,
    ...(cr.revision_merged_ancestor ? { revisionMergedAncestor: cr.revision_merged_ancestor } : {}),
    ...(cr.revision_merged ? { revisionMerged: cr.revision_merged } : {}),
    comments: ctx.comments ?? 0,
    // Outdated exactly when the space moved on since the change request's last base.
    outdated: cr.status !== 'merged' && ctx.spaceRevision !== base,
    ...(cr.conversations_issues_cluster ? { conversationsIssuesCluster: cr.conversations_issues_cluster } : {}),
    urls: {
      app: urls.changeRequestApp(cr.space_id, cr.number),
      location: urls.api(`/spaces/${cr.space_id}/change-requests/${cr.id}`),
    },
  };
}
