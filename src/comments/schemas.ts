import { Type, type TProperties } from '@sinclair/typebox';
import { PageQuery } from '../platform/paging.ts';
import { asEnum, Document, Timestamp, User } from '../platform/schemas.ts';

/** Where a comment thread lives: a space, or a change request of a space. */
export type Scope = 'Space' | 'ChangeRequest';

const Id = Type.String({ maxLength: 100 });

/**
 * The path parameters of a thread of `scope` plus `extra`. The two shapes stay two schemas (a
 * space's routes have no `changeRequestId`), so a handler sees the union and its exact fields.
 */
export function threadParams<E extends TProperties>(scope: Scope, extra: E) {
  return scope === 'Space' ? Type.Object({ spaceId: Id, ...extra }) : Type.Object({ spaceId: Id, changeRequestId: Id, ...extra });
}
export const CommentIdParam = { commentId: Id };
export const ReplyIdParams = { commentId: Id, commentReplyId: Id };

/** A body as written: markdown, or a rich-text document (stored as markdown). */
export const BodyInput = Type.Union([Type.Object({ markdown: Type.String({ maxLength: 100_000 }) }), Type.Object({ document: Document })]);

const Format = Type.Optional(asEnum(Type.Union([Type.Literal('markdown'), Type.Literal('document')])));
export const FormatQuery = Type.Object({ format: Format });
const Reactions = Type.Optional(Type.Array(Type.String({ minLength: 1, maxLength: 50 }), { maxItems: 20 }));

export const ListCommentsQuery = Type.Object({
  ...PageQuery,
  order: Type.Optional(asEnum(Type.Union([Type.Literal('asc'), Type.Literal('desc')]), { default: 'desc' })),
  status: Type.Optional(asEnum(Type.Union([Type.Literal('all'), Type.Literal('open'), Type.Literal('resolved')]), { default: 'all' })),
  format: Format,
  targetPage: Type.Optional(Type.String({ maxLength: 100 })),
  authors: Type.Optional(Type.Array(Type.String({ maxLength: 100 }), { maxItems: 100 })),
});
export const ListRepliesQuery = Type.Object({ ...PageQuery, format: Format });

export const PostCommentBody = Type.Object({
  body: BodyInput,
  page: Type.Optional(Type.String({ maxLength: 100 })),
  node: Type.Optional(Type.String({ maxLength: 100 })),
  tableCell: Type.Optional(Type.Object({ record: Type.String({ maxLength: 100 }), definition: Type.String({ maxLength: 100 }) })),
});
export const UpdateCommentBody = Type.Object({
  resolved: Type.Optional(Type.Boolean()),
  body: Type.Optional(BodyInput),
  addedReactions: Reactions,
  removedReactions: Reactions,
});
export const PostReplyBody = Type.Object({ body: BodyInput });
export const UpdateReplyBody = Type.Object({ body: Type.Optional(BodyInput), addedReactions: Reactions, removedReactions: Reactions });

/** The official `EmojiReactions`: each emoji with who reacted, oldest first. */
const EmojiReactions = Type.Array(
  Type.Object({
    emoji: Type.String(),
    count: Type.Number(),
    users: Type.Array(Type.Object({ user: User, reactedAt: Timestamp })),
  }),
);

/**
 * The official `Document` of a comment body: `markdown` by default, `document` with
 * `?format=document`. One object with both optional, rather than a oneOf, so serialization
 * needs no trial of branches; exactly one of them is present.
 */
const BodyOutput = Type.Object(
  { markdown: Type.Optional(Type.String()), document: Type.Optional(Document) },
  { description: 'The body: `markdown`, or `document` when asked with format=document' },
);

/** What the caller may do with a comment or reply: edit is for its author, delete also for admins. */
const Permissions = Type.Object({ view: Type.Boolean(), edit: Type.Boolean(), reply: Type.Optional(Type.Boolean()), delete: Type.Boolean() });

const Urls = Type.Object({ location: Type.String({ format: 'uri', description: 'URL of the resource in the API' }) });

/**
 * The official `Comment`. Its `oneOf` on the status (open, or resolved with `resolvedAt` and
 * `resolvedBy`) is one object here with the two resolution fields optional, for the same reason
 * as the body.
 */
export const Comment = Type.Object({
  object: Type.Literal('comment'),
  id: Type.String(),
  postedBy: User,
  postedAt: Timestamp,
  editedAt: Type.Optional(Timestamp),
  reactions: EmojiReactions,
  replies: Type.Number({ description: 'Number of replies' }),
  repliers: Type.Array(Type.Object({ updatedAt: Timestamp, count: Type.Integer(), user: User }), {
    description: 'Who replied, how many times, and when last',
  }),
  body: BodyOutput,
  target: Type.Object({
    space: Type.String(),
    revision: Type.String({ description: 'The revision the comment was posted on' }),
    changeRequest: Type.Optional(Type.String()),
    page: Type.Optional(Type.Object({ id: Type.String() })),
    node: Type.Optional(Type.Object({ id: Type.String() })),
    tableCell: Type.Optional(Type.Object({ record: Type.String(), definition: Type.String() })),
  }),
  urls: Urls,
  permissions: Permissions,
  status: asEnum(Type.Union([Type.Literal('open'), Type.Literal('resolved')])),
  resolvedAt: Type.Optional(Timestamp),
  resolvedBy: Type.Optional(User),
});

/** The official `CommentReply`. */
export const CommentReply = Type.Object({
  object: Type.Literal('comment-reply'),
  id: Type.String(),
  postedBy: User,
  postedAt: Timestamp,
  editedAt: Type.Optional(Timestamp),
  reactions: EmojiReactions,
  body: BodyOutput,
  urls: Urls,
  permissions: Permissions,
});
