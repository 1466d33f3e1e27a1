import { Type, type Static, type TUnion } from '@sinclair/typebox';
import { asEnum, Document as RichText, Timestamp, User } from '../platform/schemas.ts';
import { ApplySpaceTemplate } from '../content/template-schemas.ts';

export const ChangeRequestStatus = asEnum(
  Type.Union([Type.Literal('draft'), Type.Literal('open'), Type.Literal('archived'), Type.Literal('merged')]),
);

export const ChangeRequest = Type.Object({
  object: Type.Literal('change-request'),
  id: Type.String(),
  number: Type.Integer({ description: 'Incremental number within the space' }),
  status: ChangeRequestStatus,
  subject: Type.String(),
  description: Type.Optional(RichText),
  createdBy: User,
  createdAt: Timestamp,
  updatedAt: Timestamp,
  mergedBy: Type.Optional(User),
  mergedAt: Type.Optional(Timestamp),
  space: Type.String(),
  revision: Type.String({ description: 'Head revision of the change request' }),
  revisionInitial: Type.String({ description: 'Revision of the space it started from' }),
  revisionMergedAncestor: Type.Optional(Type.String({ description: 'Latest revision of the space merged into it by update' })),
  revisionMerged: Type.Optional(Type.String({ description: 'Revision produced by the merge' })),
  comments: Type.Integer({ description: 'Open comments' }),
  outdated: Type.Boolean({ description: 'The space changed since the change request was created or last updated' }),
  conversationsIssuesCluster: Type.Optional(Type.String({ description: 'The issues cluster this change request addresses' })),
  urls: Type.Object({ app: Type.String(), location: Type.String() }),
});

const ClusterLink = Type.Union([Type.String({ maxLength: 100 }), Type.Null()], { description: 'Id of an issues cluster of the organization (null: none)' });

export const CreateChangeRequestBody = Type.Object(
  {
    subject: Type.Optional(Type.String({ maxLength: 100 })),
    conversationsIssuesCluster: Type.Optional(ClusterLink),
    template: Type.Optional(Type.Object(ApplySpaceTemplate.properties, { description: 'A template written into the new change request' })),
  },
  { additionalProperties: true },
);

export const UpdateChangeRequestBody = Type.Object({
  subject: Type.Optional(Type.String({ maxLength: 100 })),
  description: Type.Optional(RichText),
  status: Type.Optional(asEnum(Type.Union([Type.Literal('draft'), Type.Literal('open'), Type.Literal('archived')]))),
  conversationsIssuesCluster: Type.Optional(ClusterLink),
});

const VariableValue = Type.Union([Type.String({ maxLength: 256 }), Type.Number(), Type.Boolean()]);

const PageMetadata = {
  title: Type.Optional(Type.String({ minLength: 1, maxLength: 500 })),
  slug: Type.Optional(Type.String({ minLength: 1, maxLength: 100, pattern: '^[a-z0-9]+(?:-[a-z0-9]+)*$' })),
  emoji: Type.Optional(Type.String({ maxLength: 50 })),
  icon: Type.Optional(Type.String({ maxLength: 50 })),
  description: Type.Optional(Type.String({ maxLength: 1000 })),
  hidden: Type.Optional(Type.Boolean()),
  noIndex: Type.Optional(Type.Boolean()),
  noRobotsIndex: Type.Optional(Type.Boolean()),
  variables: Type.Optional(Type.Record(Type.String({ maxLength: 100 }), VariableValue, { maxProperties: 200, description: 'Page variables (all of them), read by `page.vars.<name>` expressions' })),
};

/** Content changes name only the fields they declare: ids and stored references are the server's to assign. */
const STRICT = { additionalProperties: false } as const;

const MarkdownInput = Type.Object({ markdown: Type.String({ maxLength: 2_000_000 }) }, { additionalProperties: false });
const JsonDocumentInput = Type.Object({ document: RichText }, { additionalProperties: false });
const EmptyInput = Type.Object({}, { additionalProperties: false });

/**
 * A page body: `{markdown}`, `{document}` or `{}`. Written as if/then/else rather than a union so
 * that a bad body is reported against its own field (`document.markdown: must be string`) instead
 * of a failed union branch.
 */
export const PageDocumentInput = {
  type: 'object',
  description: 'The page body: { markdown }, { document } (a rich-text document) or {} (empty)',
  if: { required: ['markdown'] },
  then: MarkdownInput,
  else: { if: { required: ['document'] }, then: JsonDocumentInput, else: EmptyInput },
} as unknown as TUnion<[typeof MarkdownInput, typeof JsonDocumentInput, typeof EmptyInput]>;

/** Where a link page leads: a URL, or a page of the space (by id, or by the ref of a page inserted in the same batch). */
const LinkTargetInput = Type.Union([
  Type.Object({ kind: Type.Literal('url'), url: Type.String({ minLength: 1, maxLength: 2048 }) }, STRICT),
  Type.Object({ kind: Type.Literal('page'), page: Type.String({ minLength: 1, maxLength: 200 }) }, STRICT),
], { description: 'A link page\'s target: { kind: "url", url } or { kind: "page", page }' });

const InsertPage = Type.Object({
  operation: Type.Literal('insert_page'),
  type: Type.Optional(asEnum(Type.Union([Type.Literal('document'), Type.Literal('group'), Type.Literal('link')]), {
    description: 'document (default): a page with content; group: a heading of the table of contents holding pages (top level only); link: an entry leading to `target`',
  })),
  /** Required for documents; groups and links have none. */
  document: Type.Optional(PageDocumentInput),
  target: Type.Optional(LinkTargetInput),
  into: Type.Optional(Type.String({ maxLength: 100 })),
  at: Type.Optional(Type.Integer({ minimum: 0 })),
  ref: Type.Optional(Type.String({ minLength: 1, maxLength: 200 })),
  ...PageMetadata,
}, STRICT);
const UpdatePage = Type.Object({
  operation: Type.Literal('update_page'),
  page: Type.String({ maxLength: 100 }),
  document: Type.Optional(PageDocumentInput),
  target: Type.Optional(LinkTargetInput),
  into: Type.Optional(Type.Union([Type.String({ maxLength: 100 }), Type.Null()])),
  at: Type.Optional(Type.Integer({ minimum: 0 })),
  ...PageMetadata,
}, STRICT);
const DeletePage = Type.Object({ operation: Type.Literal('delete_page'), page: Type.String({ maxLength: 100 }) }, STRICT);
const RevertPage = Type.Object({
  operation: Type.Literal('revert_page'),
  page: Type.String({ maxLength: 100 }),
  revision: Type.Optional(Type.String({ maxLength: 100 })),
}, STRICT);
const InsertFiles = Type.Object({
  operation: Type.Literal('insert_files'),
  files: Type.Array(
    Type.Object({
      name: Type.String({ minLength: 1, maxLength: 256 }),
      ref: Type.Optional(Type.String({ minLength: 1, maxLength: 200 })),
      contentType: Type.Optional(Type.String({ maxLength: 200 })),
      url: Type.Optional(Type.String({ format: 'uri', maxLength: 2048 })),
      base64: Type.Optional(Type.String({ maxLength: 1_500_000 })),
    }, STRICT),
    { minItems: 1, maxItems: 20 },
  ),
}, STRICT);

const UpdateVariables = Type.Object({
  operation: Type.Literal('update_variables'),
  variables: Type.Record(Type.String({ maxLength: 100 }), Type.Union([VariableValue, Type.Null()]), {
    maxProperties: 200,
    description: 'Space variables to set; null removes one. Variables not named keep their value.',
  }),
}, STRICT);
const ReusableContentId = Type.String({ minLength: 1, maxLength: 100, pattern: '^[A-Za-z0-9][A-Za-z0-9_-]*$' });
const InsertReusableContent = Type.Object({
  operation: Type.Literal('insert_reusable_content'),
  reusableContent: Type.Optional({ ...ReusableContentId, description: 'Its id, also its file name in .gitbook/includes (generated when omitted)' }),
  title: Type.String({ minLength: 1, maxLength: 500 }),
  document: PageDocumentInput,
}, STRICT);
const UpdateReusableContent = Type.Object({
  operation: Type.Literal('update_reusable_content'),
  reusableContent: ReusableContentId,
  title: Type.Optional(Type.String({ minLength: 1, maxLength: 500 })),
  document: Type.Optional(PageDocumentInput),
}, STRICT);
const DeleteReusableContent = Type.Object({ operation: Type.Literal('delete_reusable_content'), reusableContent: ReusableContentId }, STRICT);

const OPERATIONS = [InsertPage, UpdatePage, DeletePage, RevertPage, InsertFiles, UpdateVariables, InsertReusableContent, UpdateReusableContent, DeleteReusableContent] as const;

/**
 * One content change, chosen by its `operation`. An if/then chain on `operation` (rather than a
 * union) reports a bad change against the schema of its own operation: `changes.2.page: must be
 * string`, not the first mismatch of whichever union branch was tried first.
 */
export const ContentChange = {
  type: 'object',
  required: ['operation'],
  properties: { operation: { type: 'string', enum: OPERATIONS.map((o) => o.properties.operation.const) } },
  allOf: OPERATIONS.map((schema) => ({
    if: { required: ['operation'], properties: { operation: { const: schema.properties.operation.const } } },
    then: schema,
  })),
} as unknown as TUnion<[
  typeof InsertPage,
  typeof UpdatePage,
  typeof DeletePage,
  typeof RevertPage,
  typeof InsertFiles,
  typeof UpdateVariables,
  typeof InsertReusableContent,
  typeof UpdateReusableContent,
  typeof DeleteReusableContent,
]>;
export type ContentChangeInput = Static<typeof ContentChange>;

export const UpdateContentBody = Type.Object({ changes: Type.Array(ContentChange, { minItems: 1, maxItems: 50 }) });

export const MergeResult = Type.Object({ revision: Type.String(), result: Type.String() });

export const ReviewStatus = asEnum(Type.Union([Type.Literal('approved'), Type.Literal('changes-requested')]));

export const Review = Type.Object({
  object: Type.Literal('change-request-review'),
  id: Type.String(),
  revision: Type.String(),
  reviewer: User,
  status: ReviewStatus,
  outdated: Type.Boolean(),
  createdAt: Timestamp,
  updatedAt: Timestamp,
  urls: Type.Object({ location: Type.String() }),
});

export const RequestedReviewer = Type.Object({
  object: Type.Literal('change-request-requested-reviewer'),
  kind: Type.Literal('user'),
  user: User,
  revision: Type.String(),
  requestedBy: User,
  createdAt: Timestamp,
});

export const CrParams = Type.Object({ spaceId: Type.String({ maxLength: 100 }), changeRequestId: Type.String({ maxLength: 100 }) });
