import { Type } from '@sinclair/typebox';
import { documentInputToMarkdown } from '../content/convert.ts';
import { checkMarkdownLimits } from '../platform/document-limits.ts';
import type { FolioApp } from '../platform/app.ts';
import { errorResponses } from '../platform/schemas.ts';
import type { Ctx } from '../platform/context.ts';
import { ListOf } from '../platform/paging.ts';
import { loadExtras, presentComment, presentReply } from './presenter.ts';
import {
  Comment,
  CommentIdParam,
  CommentReply,
  FormatQuery,
  ListCommentsQuery,
  ListRepliesQuery,
  PostCommentBody,
  PostReplyBody,
  ReplyIdParams,
  threadParams,
  UpdateCommentBody,
  UpdateReplyBody,
  type Scope,
} from './schemas.ts';
import {
  deleteComment,
  deleteReply,
  getComment,
  getReply,
  listComments,
  listReplies,
  loadThread,
  postComment,
  postReply,
  updateComment,
  updateReply,
  type Thread,
} from './service.ts';

/** The markdown of a comment body, within the content limits (400 naming the problem otherwise). */
async function markdownOf(body: { markdown: string } | { document: unknown }): Promise<string> {
  if ('markdown' in body) {
    checkMarkdownLimits(body.markdown, 'body.markdown');
    return body.markdown;
  }
  return documentInputToMarkdown(body.document, 'body.document');
}

/** The thread named by a route's path: a space, or a change request of it. */
function thread(ctx: Ctx, params: { spaceId: string; changeRequestId?: string }): Promise<Thread> {
  return loadThread(ctx, params.spaceId, params.changeRequestId);
}

const caller = (ctx: Ctx, t: Thread) => ({ id: ctx.user.id, role: t.role });

/** The ten comment operations, on a space and inside a change request. */
function commentRoutes(app: FolioApp, scope: Scope) {
  const prefix = scope === 'Space' ? '/spaces/:spaceId/comments' : '/spaces/:spaceId/change-requests/:changeRequestId/comments';
  const tags = ['comments'];

  app.get(
    prefix,
    {
      schema: {
        operationId: `listCommentsIn${scope}`,
        tags,
        params: threadParams(scope, {}),
        querystring: ListCommentsQuery,
        response: { 200: ListOf(Comment), ...errorResponses },
      },
    },
    async (req) => {
      const ctx = req.ctx();
      const t = await thread(ctx, req.params);
      const page = await listComments(ctx, t, req.query);
      const extras = await loadExtras(ctx.db, page.items);
      return { ...page, items: page.items.map((c) => presentComment(ctx.urls, c, extras, caller(ctx, t), req.query.format)) };
    },
  );

  app.post(
    prefix,
    {
      schema: {
        operationId: `postCommentIn${scope}`,
        tags,
        params: threadParams(scope, {}),
        body: PostCommentBody,
        response: { 200: Comment, ...errorResponses },
      },
    },
    async (req) => {
      const ctx = req.ctx();
      const t = await thread(ctx, req.params);
      const comment = await postComment(ctx, t, { ...req.body, markdown: await markdownOf(req.body.body) });
      return presentComment(ctx.urls, comment, await loadExtras(ctx.db, [comment]), caller(ctx, t));
    },
  );

  app.get(
    `${prefix}/:commentId`,
    {
      schema: {
        operationId: `getCommentIn${scope}`,
        tags,
        params: threadParams(scope, CommentIdParam),
        querystring: FormatQuery,
        response: { 200: Comment, ...errorResponses },
      },
    },
    async (req) => {
      const ctx = req.ctx();
      const t = await thread(ctx, req.params);
      const comment = await getComment(ctx, t, req.params.commentId);
      return presentComment(ctx.urls, comment, await loadExtras(ctx.db, [comment]), caller(ctx, t), req.query.format);
    },
  );

  app.put(
    `${prefix}/:commentId`,
    {
      schema: {
        operationId: `updateCommentIn${scope}`,
        tags,
        params: threadParams(scope, CommentIdParam),
        body: UpdateCommentBody,
        response: { 200: Comment, ...errorResponses },
      },
    },
    async (req) => {
      const ctx = req.ctx();
      const t = await thread(ctx, req.params);
      const markdown = req.body.body ? await markdownOf(req.body.body) : undefined;
      const comment = await updateComment(ctx, t, req.params.commentId, { ...req.body, markdown });
      return presentComment(ctx.urls, comment, await loadExtras(ctx.db, [comment]), caller(ctx, t));
    },
  );

  app.delete(
    `${prefix}/:commentId`,
    {
      schema: {
        operationId: `deleteCommentIn${scope}`,
        tags,
        params: threadParams(scope, CommentIdParam),
        response: { 204: Type.Null(), ...errorResponses },
      },
    },
    async (req, reply) => {
      const ctx = req.ctx();
      await deleteComment(ctx, await thread(ctx, req.params), req.params.commentId);
      return reply.status(204).send(null);
    },
  );

  app.get(
    `${prefix}/:commentId/replies`,
    {
      schema: {
        operationId: `listCommentRepliesIn${scope}`,
        tags,
        params: threadParams(scope, CommentIdParam),
        querystring: ListRepliesQuery,
        response: { 200: ListOf(CommentReply), ...errorResponses },
      },
    },
    async (req) => {
      const ctx = req.ctx();
      const t = await thread(ctx, req.params);
      const comment = await getComment(ctx, t, req.params.commentId);
      const page = await listReplies(ctx, t, comment.id, req.query);
      const extras = await loadExtras(ctx.db, [], page.items);
      return { ...page, items: page.items.map((r) => presentReply(ctx.urls, comment, r, extras, caller(ctx, t), req.query.format)) };
    },
  );

  app.post(
    `${prefix}/:commentId/replies`,
    {
      schema: {
        operationId: `postCommentReplyIn${scope}`,
        tags,
        params: threadParams(scope, CommentIdParam),
        querystring: FormatQuery,
        body: PostReplyBody,
        response: { 200: CommentReply, ...errorResponses },
      },
    },
    async (req) => {
      const ctx = req.ctx();
      const t = await thread(ctx, req.params);
      const comment = await getComment(ctx, t, req.params.commentId);
      const reply = await postReply(ctx, t, comment.id, await markdownOf(req.body.body));
      return presentReply(ctx.urls, comment, reply, await loadExtras(ctx.db, [], [reply]), caller(ctx, t), req.query.format);
    },
  );

  app.get(
    `${prefix}/:commentId/replies/:commentReplyId`,
    {
      schema: {
        operationId: `getCommentReplyIn${scope}`,
        tags,
        params: threadParams(scope, ReplyIdParams),
        querystring: FormatQuery,
        response: { 200: CommentReply, ...errorResponses },
      },
    },
    async (req) => {
      const ctx = req.ctx();
      const t = await thread(ctx, req.params);
      const comment = await getComment(ctx, t, req.params.commentId);
      const reply = await getReply(ctx, t, comment.id, req.params.commentReplyId);
      return presentReply(ctx.urls, comment, reply, await loadExtras(ctx.db, [], [reply]), caller(ctx, t), req.query.format);
    },
  );

  app.put(
    `${prefix}/:commentId/replies/:commentReplyId`,
    {
      schema: {
        operationId: `updateCommentReplyIn${scope}`,
        tags,
        params: threadParams(scope, ReplyIdParams),
        body: UpdateReplyBody,
        response: { 200: CommentReply, ...errorResponses },
      },
    },
    async (req) => {
      const ctx = req.ctx();
      const t = await thread(ctx, req.params);
      const comment = await getComment(ctx, t, req.params.commentId);
      const markdown = req.body.body ? await markdownOf(req.body.body) : undefined;
      const reply = await updateReply(ctx, t, comment.id, req.params.commentReplyId, { ...req.body, markdown });
      return presentReply(ctx.urls, comment, reply, await loadExtras(ctx.db, [], [reply]), caller(ctx, t));
    },
  );

  app.delete(
    `${prefix}/:commentId/replies/:commentReplyId`,
    {
      schema: {
        operationId: `deleteCommentReplyIn${scope}`,
        tags,
        params: threadParams(scope, ReplyIdParams),
        response: { 204: Type.Null(), ...errorResponses },
      },
    },
    async (req, reply) => {
      const ctx = req.ctx();
      await deleteReply(ctx, await thread(ctx, req.params), req.params.commentId, req.params.commentReplyId);
      return reply.status(204).send(null);
    },
  );
}

export async function commentsRoutes(app: FolioApp): Promise<void> {
  commentRoutes(app, 'Space');
  commentRoutes(app, 'ChangeRequest');
}
