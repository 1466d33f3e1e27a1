import type { ChangeRequestRow } from '../platform/db/schema.ts';
import type { Urls } from '../platform/urls.ts';
import { presentUserById, type UserLike } from '../users/presenter.ts';


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
      app: urls.app(`/s/${cr.space_id}/change-requests/${cr.number}`),
      location: urls.api(`/spaces/${cr.space_id}/change-requests/${cr.id}`),
    },
  };
}
