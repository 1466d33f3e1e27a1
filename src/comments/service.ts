import { loadChangeRequest } from '../change-requests/service.ts';
import { loadRevision } from '../content/service.ts';
import type { Ctx } from '../platform/context.ts';
import type { ChangeRequestRow, CommentReplyRow, CommentRow, RoleOrGuest, SpaceRow } from '../platform/db/schema.ts';
import { BadRequestError, ForbiddenError, NotFoundError } from '../platform/errors.ts';
import type { PageRequest } from '../platform/paging.ts';
import { assertContentRole, atLeast } from '../platform/policy.ts';
import { loadSpace } from '../spaces/access.ts';
import * as store from './store.ts';
import type { CommentFilters, ThreadKey } from './store.ts';

/**
 * Comments live on a space or inside one of its change requests (the "thread"). Reading needs
 * read access to the space, posting, replying and reacting need the comment role, editing a body
 * is for its author only, and deleting is for its author or an admin of the space.
 */

export interface Thread {
  space: SpaceRow;
  cr: ChangeRequestRow | undefined;
  role: RoleOrGuest;
}

export async function loadThread(ctx: Ctx, spaceId: string, changeRequestId?: string): Promise<Thread> {
  if (changeRequestId === undefined) {
    const { space, role } = await loadSpace(ctx, spaceId);
    return { space, cr: undefined, role };
  }
  const { space, role, cr } = await loadChangeRequest(ctx, spaceId, changeRequestId);
  return { space, cr, role };
}

function keyOf(thread: Thread): ThreadKey {
  return { organizationId: thread.space.organization_id, spaceId: thread.space.id, changeRequestId: thread.cr?.id ?? null };
}

async function findComment(ctx: Ctx, thread: Thread, commentId: string): Promise<CommentRow> {
  const comment = await store.findComment(ctx.db, keyOf(thread), commentId);
  if (!comment) throw new NotFoundError('Comment');
  return comment;
}

export interface CommentListQuery extends PageRequest, CommentFilters {}

export async function listComments(ctx: Ctx, thread: Thread, query: CommentListQuery) {
  return store.listComments(ctx.db, keyOf(thread), query, query);
}

export async function getComment(ctx: Ctx, thread: Thread, commentId: string) {
  return findComment(ctx, thread, commentId);
}

/** The revision a new comment is posted on: the change request's head, or the space's. */
function currentRevision(thread: Thread): string {
  return thread.cr ? thread.cr.revision : thread.space.revision_id;
}

export async function postComment(
  ctx: Ctx,
  thread: Thread,
  input: { markdown: string; page?: string | undefined; node?: string | undefined; tableCell?: { record: string; definition: string } | undefined },
) {
  assertContentRole(thread.role, 'comment', 'comment');
  if (input.markdown.trim() === '') throw new BadRequestError('body: a comment needs some text');
  // A page the comment points at must exist in the thread's revision.
  if (input.page) {
    const { ContentReader } = await import('../content/model.ts');
    const revision = await loadRevision(ctx.db, thread.space.id, currentRevision(thread));
    if (!(await new ContentReader(ctx.db, revision.root).page(input.page))) throw new BadRequestError(`page: page ${input.page} not found`);
  }
  return store.insertComment(ctx.db, keyOf(thread), {
    revisionId: currentRevision(thread),
    page: input.page ?? null,
    node: input.node ?? null,
    tableCell: input.tableCell ?? null,
    markdown: input.markdown,
    postedBy: ctx.user.id,
  });
}

export async function updateComment(
  ctx: Ctx,
  thread: Thread,
  commentId: string,
  input: { markdown?: string | undefined; resolved?: boolean | undefined; addedReactions?: string[] | undefined; removedReactions?: string[] | undefined },
) {
  const comment = await findComment(ctx, thread, commentId);
  assertContentRole(thread.role, 'comment', 'react to or resolve comments');
  if (input.markdown !== undefined && comment.posted_by !== ctx.user.id) throw new ForbiddenError('Only the author can change the text of a comment');
  if (input.markdown !== undefined && input.markdown.trim() === '') throw new BadRequestError('body: a comment needs some text');
  return ctx.db.transaction().execute(async (trx) => {
    await store.react(trx, comment.id, ctx.user.id, input.addedReactions, input.removedReactions);
    const now = new Date();
    const changes = {
      ...(input.markdown !== undefined ? { body: input.markdown, edited_at: now } : {}),
      ...(input.resolved === true && comment.status !== 'resolved' ? { status: 'resolved' as const, resolved_at: now, resolved_by: ctx.user.id } : {}),
      ...(input.resolved === false ? { status: 'open' as const, resolved_at: null, resolved_by: null } : {}),
    };
    // Reactions alone change no column of the comment.
    if (Object.keys(changes).length === 0) return comment;
    return store.updateComment(trx, comment.organization_id, comment.id, changes);
  });
}

/** Deletes a comment with its replies; a comment that is already gone answers the same. */
export async function deleteComment(ctx: Ctx, thread: Thread, commentId: string): Promise<void> {
  const comment = await store.findComment(ctx.db, keyOf(thread), commentId);
  if (!comment) return;
  if (comment.posted_by !== ctx.user.id && !atLeast(thread.role, 'admin')) {
    throw new ForbiddenError('Only the author or an admin of the space can delete a comment');
  }
  await ctx.db.transaction().execute((trx) => store.deleteComment(trx, comment.organization_id, comment.id));
}

async function findReply(ctx: Ctx, comment: CommentRow, replyId: string): Promise<CommentReplyRow> {
  const reply = await store.findReply(ctx.db, comment.id, replyId);
  if (!reply) throw new NotFoundError('Reply');
  return reply;
}

export async function listReplies(ctx: Ctx, thread: Thread, commentId: string, page: PageRequest) {
  const comment = await findComment(ctx, thread, commentId);
  return store.listReplies(ctx.db, comment.id, page);
}

export async function postReply(ctx: Ctx, thread: Thread, commentId: string, markdown: string) {
  const comment = await findComment(ctx, thread, commentId);
  assertContentRole(thread.role, 'comment', 'reply to comments');
  if (markdown.trim() === '') throw new BadRequestError('body: a reply needs some text');
  return store.insertReply(ctx.db, comment.id, markdown, ctx.user.id);
}

export async function getReply(ctx: Ctx, thread: Thread, commentId: string, replyId: string) {
  return findReply(ctx, await findComment(ctx, thread, commentId), replyId);
}

export async function updateReply(
  ctx: Ctx,
  thread: Thread,
  commentId: string,
  replyId: string,
  input: { markdown?: string | undefined; addedReactions?: string[] | undefined; removedReactions?: string[] | undefined },
) {
  const reply = await findReply(ctx, await findComment(ctx, thread, commentId), replyId);
  assertContentRole(thread.role, 'comment', 'react to replies');
  if (input.markdown !== undefined && reply.posted_by !== ctx.user.id) throw new ForbiddenError('Only the author can change the text of a reply');
  if (input.markdown !== undefined && input.markdown.trim() === '') throw new BadRequestError('body: a reply needs some text');
  return ctx.db.transaction().execute(async (trx) => {
    await store.react(trx, reply.id, ctx.user.id, input.addedReactions, input.removedReactions);
    // Reactions alone leave the reply as it was (the update only reads it back).
    return store.updateReply(trx, reply, input.markdown !== undefined ? { body: input.markdown, edited_at: new Date() } : { edited_at: reply.edited_at });
  });
}

export async function deleteReply(ctx: Ctx, thread: Thread, commentId: string, replyId: string): Promise<void> {
  const comment = await store.findComment(ctx.db, keyOf(thread), commentId);
  if (!comment) return;
  const reply = await store.findReply(ctx.db, comment.id, replyId);
  if (!reply) return;
  if (reply.posted_by !== ctx.user.id && !atLeast(thread.role, 'admin')) {
    throw new ForbiddenError('Only the author or an admin of the space can delete a reply');
  }
  await ctx.db.transaction().execute((trx) => store.deleteReply(trx, reply));
}
