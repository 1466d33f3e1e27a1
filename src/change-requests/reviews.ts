import type { Ctx } from '../platform/context.ts';
import { BadRequestError, NotFoundError } from '../platform/errors.ts';
import type { PageRequest } from '../platform/paging.ts';
import { assertContentRole, atLeast } from '../platform/policy.ts';
import { spaceRoles } from '../access/effective.ts';
import type { Urls } from '../platform/urls.ts';
import { presentUserById } from '../users/presenter.ts';
import { memberRoles } from '../members/store.ts';
import { loadChangeRequest } from './service.ts';
import * as store from './store.ts';
import { usersById } from '../users/store.ts';

/** Reviews: a reviewer approves or asks for changes on the head revision they looked at. */
export async function submitReview(ctx: Ctx, spaceId: string, idOrNumber: string, status: 'approved' | 'changes-requested') {
  const { cr, role } = await loadChangeRequest(ctx, spaceId, idOrNumber);
  assertContentRole(role, 'review', 'review change requests');
  if (cr.status === 'merged' || cr.status === 'archived') throw new BadRequestError(`Cannot review a ${cr.status} change request`);
  const review = await store.insertReview(ctx.db, cr, ctx.user.id, status);
  return { review, cr };
}

export async function listReviews(ctx: Ctx, spaceId: string, idOrNumber: string, page: PageRequest) {
  const { cr } = await loadChangeRequest(ctx, spaceId, idOrNumber);
  const result = await store.listReviews(ctx.db, cr.id, page);
  return { ...result, cr, users: await usersById(ctx.db, result.items.map((r) => r.reviewer_id)) };
}

export async function getReview(ctx: Ctx, spaceId: string, idOrNumber: string, reviewId: string) {
  const { cr } = await loadChangeRequest(ctx, spaceId, idOrNumber);
  const review = await store.findReview(ctx.db, cr.id, reviewId);
  if (!review) throw new NotFoundError('Review');
  return { review, cr, users: await usersById(ctx.db, [review.reviewer_id]) };
}

export function presentReview(
  urls: Urls,
  review: { id: string; change_request_id: string; revision: string; reviewer_id: string; status: 'approved' | 'changes-requested'; created_at: Date },
  spaceId: string,
  headRevision: string,
  users: Map<string, { id: string; email: string; display_name: string; photo_url: string | null }>,
) {
  return {
    object: 'change-request-review' as const,
    id: review.id,
    revision: review.revision,
    reviewer: presentUserById(urls, users, review.reviewer_id),
    status: review.status,
    // A review of an older head no longer describes what would be merged.
    outdated: review.revision !== headRevision,
    createdAt: review.created_at.toISOString(),
    // Reviews are never edited: a new opinion is a new review.
    updatedAt: review.created_at.toISOString(),
    urls: { location: urls.api(`/spaces/${spaceId}/change-requests/${review.change_request_id}/reviews/${review.id}`) },
  };
}

/** Requested reviewers must be members of the organization who can read the space. */
export async function requestReviewers(ctx: Ctx, spaceId: string, idOrNumber: string, users: string[]) {
  const { cr, role, space } = await loadChangeRequest(ctx, spaceId, idOrNumber);
  assertContentRole(role, 'edit', 'request reviewers');
  const wanted = [...new Set(users)];
  if (wanted.length === 0) throw new BadRequestError('users: name at least one user');
  const known = await memberRoles(ctx.db, cr.organization_id, wanted);
  const missing = wanted.filter((u) => !known.has(u));
  if (missing.length) throw new BadRequestError(`users: ${missing.join(', ')} is not a member of the organization`);
  // A reviewer must be able to read what they are asked to review (a guest needs a grant on the space).
  const roles = await Promise.all(
    wanted.map(async (userId) => (await spaceRoles(ctx.db, space.organization_id, { userId, orgRole: known.get(userId)! }, [space])).get(space.id) ?? null),
  );
  const blind = wanted.filter((_, i) => !atLeast(roles[i], 'read'));
  if (blind.length) throw new BadRequestError(`users: ${blind.join(', ')} cannot read this space`);
  const rows = await store.addRequestedReviewers(ctx.db, cr.id, wanted, ctx.user.id);
  return { rows, cr, users: await usersById(ctx.db, [...wanted, ...rows.map((r) => r.requested_by)]) };
}

export async function listRequestedReviewers(ctx: Ctx, spaceId: string, idOrNumber: string, page: PageRequest) {
  const { cr } = await loadChangeRequest(ctx, spaceId, idOrNumber);
  const result = await store.listRequestedReviewers(ctx.db, cr.id, page);
  return { ...result, cr, users: await usersById(ctx.db, result.items.flatMap((r) => [r.user_id, r.requested_by])) };
}

export async function removeRequestedReviewer(ctx: Ctx, spaceId: string, idOrNumber: string, userId: string) {
  const { cr, role } = await loadChangeRequest(ctx, spaceId, idOrNumber);
  if (userId !== ctx.user.id) assertContentRole(role, 'edit', 'remove requested reviewers');
  await store.removeRequestedReviewer(ctx.db, cr.id, userId);
}

export function presentRequestedReviewer(
  urls: Urls,
  row: { user_id: string; requested_by: string | null; created_at: Date },
  revision: string,
  users: Map<string, { id: string; email: string; display_name: string; photo_url: string | null }>,
) {
  const user = (id: string | null) => presentUserById(urls, users, id);
  return {
    object: 'change-request-requested-reviewer' as const,
    kind: 'user' as const,
    user: user(row.user_id),
    revision,
    requestedBy: user(row.requested_by),
    createdAt: row.created_at.toISOString(),
  };
}
