import { Type, type TSchema } from '@sinclair/typebox';
import { documentInputToMarkdown } from '../content/convert.ts';
import { checkMarkdownLimits } from '../platform/document-limits.ts';
import type { FolioApp } from '../platform/app.ts';
import { errorResponses } from '../platform/schemas.ts';
import type { Ctx } from '../platform/context.ts';
import { ListOf, PageQuery } from '../platform/paging.ts';
import { asEnum, Document as RichText } from '../platform/schemas.ts';
import { loadExtras, presentComment, presentReply } from './presenter.ts';
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

const Body = Type.Union([Type.Object({ markdown: Type.String({ maxLength: 100_000 }) }), Type.Object({ document: RichText })]);
type BodyInput = { markdown: string } | { document: unknown };

/** The markdown of a comment body, within the content limits (400 naming the problem otherwise). */
async function markdownOf(body: BodyInput | undefined): Promise<string | undefined> {
  if (!body) return undefined;
  if ('markdown' in body) {
    checkMarkdownLimits(body.markdown, 'body.markdown');
    return body.markdown;
  }
  return documentInputToMarkdown(body.document, 'body.document');
}

const Format = Type.Optional(asEnum(Type.Union([Type.Literal('markdown'), Type.Literal('document')])));
const Reactions = Type.Optional(Type.Array(Type.String({ minLength: 1, maxLength: 50 }), { maxItems: 20 }));
const CommentSchema = Type.Object({ object: Type.Literal('comment'), id: Type.String() }, { additionalProperties: true });
const ReplySchema = Type.Object({ object: Type.Literal('comment-reply'), id: Type.String() }, { additionalProperties: true });

/** The ten comment operations, on a space and inside a change request. */
function commentRoutes(app: FolioApp, scope: 'Space' | 'ChangeRequest') {
  const prefix = scope === 'Space' ? '/spaces/:spaceId/comments' : '/spaces/:spaceId/change-requests/:changeRequestId/comments';
  const base: Record<string, TSchema> = { spaceId: Type.String({ maxLength: 100 }) };
  if (scope === 'ChangeRequest') base.changeRequestId = Type.String({ maxLength: 100 });
  const params = (extra: Record<string, TSchema> = {}) => Type.Object({ ...base, ...extra });
  const commentId = { commentId: Type.String({ maxLength: 100 }) };
  const replyId = { commentReplyId: Type.String({ maxLength: 100 }) };
  const tags = ['comments'];
  const thread = (ctx: Ctx, p: unknown) => {
    const { spaceId, changeRequestId } = p as { spaceId: string; changeRequestId?: string };
    return loadThread(ctx, spaceId, changeRequestId);
  };
  const caller = (ctx: Ctx, t: Thread) => ({ id: ctx.user.id, role: t.role });

  app.get(
    prefix,
    {
      schema: {
        operationId: `listCommentsIn${scope}`,
        tags,
        params: params(),
        querystring: Type.Object({
          ...PageQuery,
          order: Type.Optional(asEnum(Type.Union([Type.Literal('asc'), Type.Literal('desc')]), { default: 'desc' })),
          status: Type.Optional(asEnum(Type.Union([Type.Literal('all'), Type.Literal('open'), Type.Literal('resolved')]), { default: 'all' })),
          format: Format,
          targetPage: Type.Optional(Type.String({ maxLength: 100 })),
          authors: Type.Optional(Type.Array(Type.String({ maxLength: 100 }), { maxItems: 100 })),
        }),
        response: { 200: ListOf(CommentSchema), ...errorResponses },
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
        params: params(),
        body: Type.Object({
          body: Body,
          page: Type.Optional(Type.String({ maxLength: 100 })),
          node: Type.Optional(Type.String({ maxLength: 100 })),
          tableCell: Type.Optional(Type.Object({ record: Type.String({ maxLength: 100 }), definition: Type.String({ maxLength: 100 }) })),
        }),
        response: { 200: CommentSchema, ...errorResponses },
      },
    },
    async (req) => {
      const ctx = req.ctx();
      const t = await thread(ctx, req.params);
      const comment = await postComment(ctx, t, { ...req.body, markdown: (await markdownOf(req.body.body as BodyInput))! });
      return presentComment(ctx.urls, comment, await loadExtras(ctx.db, [comment]), caller(ctx, t));
    },
  );

  app.get(
    `${prefix}/:commentId`,
    {
      schema: {
        operationId: `getCommentIn${scope}`,
        tags,
        params: params(commentId),
        querystring: Type.Object({ format: Format }),
        response: { 200: CommentSchema, ...errorResponses },
      },
    },
    async (req) => {
      const ctx = req.ctx();
      const p = req.params as { commentId: string };
      const t = await thread(ctx, req.params);
      const comment = await getComment(ctx, t, p.commentId);
      return presentComment(ctx.urls, comment, await loadExtras(ctx.db, [comment]), caller(ctx, t), req.query.format);
    },
  );

  app.put(
    `${prefix}/:commentId`,
    {
      schema: {
        operationId: `updateCommentIn${scope}`,
        tags,
        params: params(commentId),
        body: Type.Object({ resolved: Type.Optional(Type.Boolean()), body: Type.Optional(Body), addedReactions: Reactions, removedReactions: Reactions }),
        response: { 200: CommentSchema, ...errorResponses },
      },
    },
    async (req) => {
      const ctx = req.ctx();
      const p = req.params as { commentId: string };
      const t = await thread(ctx, req.params);
      const comment = await updateComment(ctx, t, p.commentId, { ...req.body, markdown: await markdownOf(req.body.body as BodyInput | undefined) });
      return presentComment(ctx.urls, comment, await loadExtras(ctx.db, [comment]), caller(ctx, t));
    },
  );

  app.delete(
    `${prefix}/:commentId`,
    { schema: { operationId: `deleteCommentIn${scope}`, tags, params: params(commentId), response: { 204: Type.Null(), ...errorResponses } } },
    async (req, reply) => {
      const ctx = req.ctx();
      await deleteComment(ctx, await thread(ctx, req.params), (req.params as { commentId: string }).commentId);
      return reply.status(204).send(null);
    },
  );

  app.get(
    `${prefix}/:commentId/replies`,
    {
      schema: {
        operationId: `listCommentRepliesIn${scope}`,
        tags,
        params: params(commentId),
        querystring: Type.Object({ ...PageQuery, format: Format }),
        response: { 200: ListOf(ReplySchema), ...errorResponses },
      },
    },
    async (req) => {
      const ctx = req.ctx();
      const t = await thread(ctx, req.params);
      const comment = await getComment(ctx, t, (req.params as { commentId: string }).commentId);
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
        params: params(commentId),
        querystring: Type.Object({ format: Format }),
        body: Type.Object({ body: Body }),
        response: { 200: ReplySchema, ...errorResponses },
      },
    },
    async (req) => {
      const ctx = req.ctx();
      const t = await thread(ctx, req.params);
      const comment = await getComment(ctx, t, (req.params as { commentId: string }).commentId);
      const reply = await postReply(ctx, t, comment.id, (await markdownOf(req.body.body as BodyInput))!);
      return presentReply(ctx.urls, comment, reply, await loadExtras(ctx.db, [], [reply]), caller(ctx, t), req.query.format);
    },
  );

  app.get(
    `${prefix}/:commentId/replies/:commentReplyId`,
    {
      schema: {
        operationId: `getCommentReplyIn${scope}`,
        tags,
        params: params({ ...commentId, ...replyId }),
        querystring: Type.Object({ format: Format }),
        response: { 200: ReplySchema, ...errorResponses },
      },
    },
    async (req) => {
      const ctx = req.ctx();
      const p = req.params as { commentId: string; commentReplyId: string };
      const t = await thread(ctx, req.params);
      const comment = await getComment(ctx, t, p.commentId);
      const reply = await getReply(ctx, t, comment.id, p.commentReplyId);
      return presentReply(ctx.urls, comment, reply, await loadExtras(ctx.db, [], [reply]), caller(ctx, t), req.query.format);
    },
  );

  app.put(
    `${prefix}/:commentId/replies/:commentReplyId`,
    {
      schema: {
        operationId: `updateCommentReplyIn${scope}`,
        tags,
        params: params({ ...commentId, ...replyId }),
        body: Type.Object({ body: Type.Optional(Body), addedReactions: Reactions, removedReactions: Reactions }),
        response: { 200: ReplySchema, ...errorResponses },
      },
    },
    async (req) => {
      const ctx = req.ctx();
      const p = req.params as { commentId: string; commentReplyId: string };
      const t = await thread(ctx, req.params);
      const comment = await getComment(ctx, t, p.commentId);
      const reply = await updateReply(ctx, t, comment.id, p.commentReplyId, { ...req.body, markdown: await markdownOf(req.body.body as BodyInput | undefined) });
      return presentReply(ctx.urls, comment, reply, await loadExtras(ctx.db, [], [reply]), caller(ctx, t));
    },
  );

  app.delete(
    `${prefix}/:commentId/replies/:commentReplyId`,
    { schema: { operationId: `deleteCommentReplyIn${scope}`, tags, params: params({ ...commentId, ...replyId }), response: { 204: Type.Null(), ...errorResponses } } },
    async (req, reply) => {
      const ctx = req.ctx();
      const p = req.params as { commentId: string; commentReplyId: string };
      await deleteReply(ctx, await thread(ctx, req.params), p.commentId, p.commentReplyId);
      return reply.status(204).send(null);
    },
  );
}

export async function commentsRoutes(app: FolioApp): Promise<void> {
  commentRoutes(app, 'Space');
  commentRoutes(app, 'ChangeRequest');
}
