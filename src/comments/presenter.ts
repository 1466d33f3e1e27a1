import { shortMarkdownToDocument } from '../content/convert.ts';
import type { Db } from '../platform/db/database.ts';
import type { CommentReplyRow, CommentRow, RoleOrGuest } from '../platform/db/schema.ts';
import { atLeast } from '../platform/policy.ts';
import type { Urls } from '../platform/urls.ts';
import { presentUser, presentUserById, type UserLike } from '../users/presenter.ts';
import { usersById } from '../users/store.ts';
import { reactionsOn, replySummaries } from './store.ts';

/** What presenting a page of comments or replies needs, loaded for the whole page in a few queries. */
export interface CommentExtras {
  users: Map<string, UserLike>;
  reactions: Map<string, { emoji: string; user_id: string; reacted_at: Date }[]>;
  replies: Map<string, { posted_by: string | null; posted_at: Date }[]>;
}

export async function loadExtras(db: Db, comments: CommentRow[], replies: CommentReplyRow[] = []): Promise<CommentExtras> {
  const commentIds = comments.map((c) => c.id);
  const replyRows = await replySummaries(db, commentIds);
  const reactionRows = await reactionsOn(db, [...commentIds, ...replies.map((r) => r.id)]);
  const userIds = new Set<string>();
  for (const c of comments) [c.posted_by, c.resolved_by].forEach((u) => u && userIds.add(u));
  for (const r of [...replies, ...replyRows]) if (r.posted_by) userIds.add(r.posted_by);
  for (const r of reactionRows) userIds.add(r.user_id);
  const users = await usersById(db, [...userIds]);
  const reactions = new Map<string, { emoji: string; user_id: string; reacted_at: Date }[]>();
  for (const r of reactionRows) reactions.set(r.target_id, [...(reactions.get(r.target_id) ?? []), r]);
  const byComment = new Map<string, { posted_by: string | null; posted_at: Date }[]>();
  for (const r of replyRows) byComment.set(r.comment_id, [...(byComment.get(r.comment_id) ?? []), r]);
  return { users, reactions, replies: byComment };
}

function body(markdown: string, format: 'markdown' | 'document' | undefined) {
  return format === 'document' ? { document: shortMarkdownToDocument(markdown) } : { markdown };
}

function presentReactions(urls: Urls, extras: CommentExtras, targetId: string) {
  const grouped = new Map<string, { user: ReturnType<typeof presentUser>; reactedAt: string }[]>();
  for (const r of extras.reactions.get(targetId) ?? []) {
    const list = grouped.get(r.emoji) ?? [];
    list.push({ user: presentUserById(urls, extras.users, r.user_id), reactedAt: r.reacted_at.toISOString() });
    grouped.set(r.emoji, list);
  }
  return [...grouped].map(([emoji, users]) => ({ emoji, count: users.length, users }));
}

function permissions(authorId: string | null, callerId: string, role: RoleOrGuest) {
  const mine = authorId === callerId;
  return { view: true, edit: mine, reply: atLeast(role, 'comment'), delete: mine || atLeast(role, 'admin') };
}

export function presentComment(
  urls: Urls,
  comment: CommentRow,
  extras: CommentExtras,
  caller: { id: string; role: RoleOrGuest },
  format?: 'markdown' | 'document',
) {
  const replies = extras.replies.get(comment.id) ?? [];
  const repliers = new Map<string, { count: number; updatedAt: Date }>();
  for (const r of replies) {
    const key = r.posted_by ?? '';
    const prev = repliers.get(key);
    repliers.set(key, { count: (prev?.count ?? 0) + 1, updatedAt: prev && prev.updatedAt > r.posted_at ? prev.updatedAt : r.posted_at });
  }
  const location = comment.change_request_id
    ? urls.api(`/spaces/${comment.space_id}/change-requests/${comment.change_request_id}/comments/${comment.id}`)
    : urls.api(`/spaces/${comment.space_id}/comments/${comment.id}`);
  return {
    object: 'comment' as const,
    id: comment.id,
    postedBy: presentUserById(urls, extras.users, comment.posted_by),
    postedAt: comment.posted_at.toISOString(),
    ...(comment.edited_at ? { editedAt: comment.edited_at.toISOString() } : {}),
    reactions: presentReactions(urls, extras, comment.id),
    replies: replies.length,
    repliers: [...repliers].map(([id, r]) => ({ user: presentUserById(urls, extras.users, id || null), count: r.count, updatedAt: r.updatedAt.toISOString() })),
    body: body(comment.body, format),
    target: {
      space: comment.space_id,
      revision: comment.revision_id,
      ...(comment.change_request_id ? { changeRequest: comment.change_request_id } : {}),
      ...(comment.page_id ? { page: { id: comment.page_id } } : {}),
      ...(comment.node_id ? { node: { id: comment.node_id } } : {}),
      ...(comment.table_cell ? { tableCell: comment.table_cell } : {}),
    },
    urls: { location },
    permissions: permissions(comment.posted_by, caller.id, caller.role),
    ...(comment.status === 'resolved' && comment.resolved_at
      ? {
          status: 'resolved' as const,
          resolvedAt: comment.resolved_at.toISOString(),
          resolvedBy: presentUserById(urls, extras.users, comment.resolved_by),
        }
      : { status: 'open' as const }),
  };
}

export function presentReply(
  urls: Urls,
  comment: CommentRow,
  reply: CommentReplyRow,
  extras: CommentExtras,
  caller: { id: string; role: RoleOrGuest },
  format?: 'markdown' | 'document',
) {
  const base = comment.change_request_id
    ? `/spaces/${comment.space_id}/change-requests/${comment.change_request_id}/comments/${comment.id}`
    : `/spaces/${comment.space_id}/comments/${comment.id}`;
  return {
    object: 'comment-reply' as const,
    id: reply.id,
    postedBy: presentUserById(urls, extras.users, reply.posted_by),
    postedAt: reply.posted_at.toISOString(),
    ...(reply.edited_at ? { editedAt: reply.edited_at.toISOString() } : {}),
    reactions: presentReactions(urls, extras, reply.id),
    body: body(reply.body, format),
    urls: { location: urls.api(`${base}/replies/${reply.id}`) },
    permissions: permissions(reply.posted_by, caller.id, caller.role),
  };
}
