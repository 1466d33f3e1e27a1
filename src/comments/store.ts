import { sql } from 'kysely';
import type { Db } from '../platform/db/database.ts';
import type { CommentReplyRow, CommentRow } from '../platform/db/schema.ts';
import { newId } from '../platform/ids.ts';
import { paginate, type PageRequest } from '../platform/paging.ts';

/**
 * The SQL of comments, replies and reactions. Comments are found through their thread, which names
 * the organization; replies and reactions through a comment (or reply) found that way first.
 */

/** A thread: the comments of a space outside change requests, or those of one change request. */
export interface ThreadKey {
  organizationId: string;
  spaceId: string;
  changeRequestId: string | null;
}

function commentsIn(db: Db, thread: ThreadKey) {
  const base = db
    .selectFrom('comments')
    .selectAll('comments')
    .where('comments.organization_id', '=', thread.organizationId)
    .where('comments.space_id', '=', thread.spaceId);
  return thread.changeRequestId
    ? base.where('comments.change_request_id', '=', thread.changeRequestId)
    : base.where('comments.change_request_id', 'is', null);
}

export async function findComment(db: Db, thread: ThreadKey, commentId: string): Promise<CommentRow | undefined> {
  return commentsIn(db, thread).where('comments.id', '=', commentId).executeTakeFirst();
}

export interface CommentFilters {
  order?: 'asc' | 'desc' | undefined;
  status?: 'all' | 'open' | 'resolved' | undefined;
  targetPage?: string | undefined;
  authors?: string[] | undefined;
}

export async function listComments(db: Db, thread: ThreadKey, filters: CommentFilters, page: PageRequest) {
  let base = commentsIn(db, thread);
  if (filters.status && filters.status !== 'all') base = base.where('comments.status', '=', filters.status);
  if (filters.targetPage) base = base.where('comments.page_id', '=', filters.targetPage);
  if (filters.authors?.length) base = base.where('comments.posted_by', 'in', filters.authors);
  const direction = filters.order ?? 'desc';
  return paginate(base, { kind: `comments:${direction}`, sortExpr: null, seqExpr: sql.ref('comments.seq'), direction }, page);
}

export interface NewComment {
  revisionId: string;
  page: string | null;
  node: string | null;
  tableCell: { record: string; definition: string } | null;
  markdown: string;
  postedBy: string;
}

export async function insertComment(db: Db, thread: ThreadKey, comment: NewComment): Promise<CommentRow> {
  return db
    .insertInto('comments')
    .values({
      id: newId(),
      organization_id: thread.organizationId,
      space_id: thread.spaceId,
      change_request_id: thread.changeRequestId,
      revision_id: comment.revisionId,
      page_id: comment.page,
      node_id: comment.node,
      table_cell: comment.tableCell ? (sql`${JSON.stringify(comment.tableCell)}::jsonb` as never) : null,
      body: comment.markdown,
      posted_by: comment.postedBy,
      posted_at: new Date(),
      edited_at: null,
      status: 'open',
      resolved_at: null,
      resolved_by: null,
    })
    .returningAll()
    .executeTakeFirstOrThrow();
}

export type CommentChanges = Partial<Pick<CommentRow, 'body' | 'edited_at' | 'status' | 'resolved_at' | 'resolved_by'>>;

export async function updateComment(db: Db, organizationId: string, commentId: string, changes: CommentChanges): Promise<CommentRow> {
  return db
    .updateTable('comments')
    .set(changes)
    .where('organization_id', '=', organizationId)
    .where('id', '=', commentId)
    .returningAll()
    .executeTakeFirstOrThrow();
}

/** Deletes a comment, its replies (by cascade) and the reactions on all of them; run it in a transaction. */
export async function deleteComment(trx: Db, organizationId: string, commentId: string): Promise<void> {
  const replies = await trx.selectFrom('comment_replies').select('id').where('comment_id', '=', commentId).execute();
  await trx.deleteFrom('comment_reactions').where('target_id', 'in', [commentId, ...replies.map((r) => r.id)]).execute();
  await trx.deleteFrom('comments').where('organization_id', '=', organizationId).where('id', '=', commentId).execute();
}

/** Adds and removes the user's reactions on a comment or reply (the target's own lookup scopes it). */
export async function react(db: Db, targetId: string, userId: string, added: string[] = [], removed: string[] = []): Promise<void> {
  const now = new Date();
  for (const emoji of new Set(added)) {
    await db.insertInto('comment_reactions').values({ target_id: targetId, emoji, user_id: userId, reacted_at: now }).onConflict((oc) => oc.doNothing()).execute();
  }
  for (const emoji of new Set(removed)) {
    await db.deleteFrom('comment_reactions').where('target_id', '=', targetId).where('emoji', '=', emoji).where('user_id', '=', userId).execute();
  }
}

/** A reply of a comment already found in its thread. */
export async function findReply(db: Db, commentId: string, replyId: string): Promise<CommentReplyRow | undefined> {
  return db.selectFrom('comment_replies').selectAll().where('comment_id', '=', commentId).where('id', '=', replyId).executeTakeFirst();
}

export async function listReplies(db: Db, commentId: string, page: PageRequest) {
  return paginate(
    db.selectFrom('comment_replies').selectAll().where('comment_id', '=', commentId),
    { kind: 'replies', sortExpr: null, seqExpr: sql.ref('seq'), direction: 'asc' },
    page,
  );
}

export async function insertReply(db: Db, commentId: string, markdown: string, postedBy: string): Promise<CommentReplyRow> {
  return db
    .insertInto('comment_replies')
    .values({ id: newId(), comment_id: commentId, body: markdown, posted_by: postedBy, posted_at: new Date(), edited_at: null })
    .returningAll()
    .executeTakeFirstOrThrow();
}

export async function updateReply(db: Db, reply: CommentReplyRow, changes: Partial<Pick<CommentReplyRow, 'body' | 'edited_at'>>): Promise<CommentReplyRow> {
  return db
    .updateTable('comment_replies')
    .set(changes)
    .where('comment_id', '=', reply.comment_id)
    .where('id', '=', reply.id)
    .returningAll()
    .executeTakeFirstOrThrow();
}

/** Deletes a reply and the reactions on it; run it in a transaction. */
export async function deleteReply(trx: Db, reply: CommentReplyRow): Promise<void> {
  await trx.deleteFrom('comment_reactions').where('target_id', '=', reply.id).execute();
  await trx.deleteFrom('comment_replies').where('comment_id', '=', reply.comment_id).where('id', '=', reply.id).execute();
}

/** Who replied to each of the comments and when, oldest first. */
export async function replySummaries(db: Db, commentIds: string[]) {
  if (commentIds.length === 0) return [];
  return db.selectFrom('comment_replies').select(['comment_id', 'posted_by', 'posted_at']).where('comment_id', 'in', commentIds).orderBy('seq').execute();
}

/** The reactions on the given comments and replies, oldest first. */
export async function reactionsOn(db: Db, targetIds: string[]) {
  if (targetIds.length === 0) return [];
  return db.selectFrom('comment_reactions').selectAll().where('target_id', 'in', targetIds).orderBy('reacted_at').execute();
}
