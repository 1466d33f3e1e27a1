import type { ChangeRequestRow, UserRow } from '../platform/db/schema.ts';
import type { Urls } from '../platform/urls.ts';
import { presentUser } from '../users/presenter.ts';

type UserLike = Pick<UserRow, 'id' | 'email' | 'display_name' | 'photo_url'>;

/** Stand-in for an author whose account was deleted: the change request keeps a valid `createdBy`. */
const GONE: UserLike = { id: 'deleted-user', email: '', display_name: 'Deleted user', photo_url: null };

export function presentChangeRequest(
  urls: Urls,
  cr: ChangeRequestRow,
  ctx: { spaceRevision: string; users: Map<string, UserLike>; comments?: number },
) {
  const base = cr.revision_merged_ancestor ?? cr.revision_initial;
  const user = (id: string | null) => presentUser(urls, (id && ctx.users.get(id)) || GONE);
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
    urls: {
      app: urls.app(`/s/${cr.space_id}/change-requests/${cr.number}`),
      location: urls.api(`/spaces/${cr.space_id}/change-requests/${cr.id}`),
    },
  };
}
