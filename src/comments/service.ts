import { sql } from 'kysely';
import { loadChangeRequest } from '../change-requests/service.ts';
import type { Ctx } from '../platform/context.ts';
import type { Db } from '../platform/db/database.ts';
import type { ChangeRequestRow, CommentReplyRow, CommentRow, RoleOrGuest, SpaceRow } from '../platform/db/schema.ts';
import { BadRequestError, ForbiddenError, NotFoundError } from '../platform/errors.ts';
import { newId } from '../platform/ids.ts';
import { paginate, type PageRequest } from '../platform/paging.ts';
import { assertContentRole, atLeast } from '../platform/policy.ts';
import { loadSpace } from '../spaces/access.ts';

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

function inThread(db: Db, thread: Thread) {
  const base = db.selectFrom('comments').selectAll('comments').where('comments.space_id', '=', thread.space.id);
  return thread.cr ? base.where('comments.change_request_id', '=', thread.cr.id) : base.where('comments.change_request_id', 'is', null);
}

async function findComment(ctx: Ctx, thread: Thread, commentId: string): Promise<CommentRow> {
  const comment = await inThread(ctx.db, thread).where('comments.id', '=', commentId).executeTakeFirst();
  if (!comment) throw new NotFoundError('Comment');
  return comment;
}

export interface CommentListQuery extends PageRequest {
  order?: 'asc' | 'desc' | undefined;
  status?: 'all' | 'open' | 'resolved' | undefined;
  targetPage?: string | undefined;
  authors?: string[] | undefined;
}

export async function listComments(ctx: Ctx, thread: Thread, query: CommentListQuery) {
  let base = inThread(ctx.db, thread);
  if (query.status && query.status !== 'all') base = base.where('comments.status', '=', query.status);
  if (query.targetPage) base = base.where('comments.page_id', '=', query.targetPage);
  if (query.authors?.length) base = base.where('comments.posted_by', 'in', query.authors);
  const direction = query.order ?? 'desc';
  return paginate(base, { kind: `comments:${direction}`, sortExpr: null, seqExpr: sql.ref('comments.seq'), direction }, query);
}

export async function getComment(ctx: Ctx, thread: Thread, commentId: string) {
  return findComment(ctx, thread, commentId);
}

/** A page (and optionally a block) the comment points at must exist in the thread's revision. */
async function currentRevision(thread: Thread): Promise<string> {
  return thread.cr ? thread.cr.revision : thread.space.revision_id;
}

export async function postComment(
  ctx: Ctx,
  thread: Thread,
  input: { markdown: string; page?: string | undefined; node?: string | undefined; tableCell?: { record: string; definition: string } | undefined },
) {
  assertContentRole(thread.role, 'comment', 'comment');
  if (input.markdown.trim() === '') throw new BadRequestError('body: a comment needs some text');
  if (input.page) {
    const { ContentReader } = await import('../content/model.ts');
    const revision = await ctx.db.selectFrom('revisions').select('root').where('id', '=', await currentRevision(thread)).executeTakeFirstOrThrow();
    if (!(await new ContentReader(ctx.db, revision.root).page(input.page))) throw new BadRequestError(`page: page ${input.page} not found`);
  }
  return ctx.db
    .insertInto('comments')
    .values({
      id: newId(),
      organization_id: thread.space.organization_id,
      space_id: thread.space.id,
      change_request_id: thread.cr?.id ?? null,
      revision_id: await currentRevision(thread),
      page_id: input.page ?? null,
      node_id: input.node ?? null,
      table_cell: input.tableCell ? (sql`${JSON.stringify(input.tableCell)}::jsonb` as never) : null,
      body: input.markdown,
      posted_by: ctx.user.id,
      posted_at: new Date(),
      edited_at: null,
      status: 'open',
      resolved_at: null,
      resolved_by: null,
    })
    .returningAll()
    .executeTakeFirstOrThrow();
}

async function react(db: Db, targetId: string, userId: string, added: string[] = [], removed: string[] = []) {
  const now = new Date();
  for (const emoji of new Set(added)) {
    await db.insertInto('comment_reactions').values({ target_id: targetId, emoji, user_id: userId, reacted_at: now }).onConflict((oc) => oc.doNothing()).execute();
  }
  for (const emoji of new Set(removed)) {
    await db.deleteFrom('comment_reactions').where('target_id', '=', targetId).where('emoji', '=', emoji).where('user_id', '=', userId).execute();
  }
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
    await react(trx, comment.id, ctx.user.id, input.addedReactions, input.removedReactions);
    const now = new Date();
    const changes = {
      ...(input.markdown !== undefined ? { body: input.markdown, edited_at: now } : {}),
      ...(input.resolved === true && comment.status !== 'resolved' ? { status: 'resolved' as const, resolved_at: now, resolved_by: ctx.user.id } : {}),
      ...(input.resolved === false ? { status: 'open' as const, resolved_at: null, resolved_by: null } : {}),
    };
    // Reactions alone change no column of the comment.
    if (Object.keys(changes).length === 0) return comment;
    return trx.updateTable('comments').set(changes).where('id', '=', comment.id).returningAll().executeTakeFirstOrThrow();
  });
}

/** Deletes a comment with its replies; a comment that is already gone answers the same. */
export async function deleteComment(ctx: Ctx, thread: Thread, commentId: string): Promise<void> {
  const comment = await inThread(ctx.db, thread).where('comments.id', '=', commentId).executeTakeFirst();
  if (!comment) return;
  if (comment.posted_by !== ctx.user.id && !atLeast(thread.role, 'admin')) {
    throw new ForbiddenError('Only the author or an admin of the space can delete a comment');
  }
  await ctx.db.transaction().execute(async (trx) => {
    const replies = await trx.selectFrom('comment_replies').select('id').where('comment_id', '=', comment.id).execute();
    await trx.deleteFrom('comment_reactions').where('target_id', 'in', [comment.id, ...replies.map((r) => r.id)]).execute();
    await trx.deleteFrom('comments').where('id', '=', comment.id).execute();
  });
}

async function findReply(ctx: Ctx, comment: CommentRow, replyId: string): Promise<CommentReplyRow> {
  const reply = await ctx.db.selectFrom('comment_replies').selectAll().where('comment_id', '=', comment.id).where('id', '=', replyId).executeTakeFirst();
  if (!reply) throw new NotFoundError('Reply');
  return reply;
}

export async function listReplies(ctx: Ctx, thread: Thread, commentId: string, page: PageRequest) {
  const comment = await findComment(ctx, thread, commentId);
  return paginate(
    ctx.db.selectFrom('comment_replies').selectAll().where('comment_id', '=', comment.id),
    { kind: 'replies', sortExpr: null, seqExpr: sql.ref('seq'), direction: 'asc' },
    page,
  );
}

export async function postReply(ctx: Ctx, thread: Thread, commentId: string, markdown: string) {
  const comment = await findComment(ctx, thread, commentId);
  assertContentRole(thread.role, 'comment', 'reply to comments');
  if (markdown.trim() === '') throw new BadRequestError('body: a reply needs some text');
  return ctx.db
    .insertInto('comment_replies')
    .values({ id: newId(), comment_id: comment.id, body: markdown, posted_by: ctx.user.id, posted_at: new Date(), edited_at: null })
    .returningAll()
    .executeTakeFirstOrThrow();
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
    await react(trx, reply.id, ctx.user.id, input.addedReactions, input.removedReactions);
    return trx
      .updateTable('comment_replies')
      .set(input.markdown !== undefined ? { body: input.markdown, edited_at: new Date() } : { edited_at: reply.edited_at })
      .where('id', '=', reply.id)
      .returningAll()
      .executeTakeFirstOrThrow();
  });
}

export async function deleteReply(ctx: Ctx, thread: Thread, commentId: string, replyId: string): Promise<void> {
  const comment = await findComment(ctx, thread, commentId).catch(() => undefined);
  if (!comment) return;
  const reply = await ctx.db.selectFrom('comment_replies').selectAll().where('comment_id', '=', comment.id).where('id', '=', replyId).executeTakeFirst();
  if (!reply) return;
  if (reply.posted_by !== ctx.user.id && !atLeast(thread.role, 'admin')) {
    throw new ForbiddenError('Only the author or an admin of the space can delete a reply');
  }
  await ctx.db.transaction().execute(async (trx) => {
    await trx.deleteFrom('comment_reactions').where('target_id', '=', reply.id).execute();
    await trx.deleteFrom('comment_replies').where('id', '=', reply.id).execute();
  });
}
