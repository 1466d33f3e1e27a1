import { Type, type Static } from '@sinclair/typebox';
import { PageQuery } from '../platform/paging.ts';
import { asEnum, Document as RichText, Timestamp } from '../platform/schemas.ts';

/**
 * Conversations, issues and issues clusters (spec document 001 › Conversations). The official
 * OpenAPI document has none of these operations: the shapes follow the spec, and are published
 * in Folio's own document (/v1/openapi.json).
 */

export const Impact = asEnum(Type.Union([Type.Literal('low'), Type.Literal('medium'), Type.Literal('high')]), {
  description:
    'low: minor friction, users proceed with little or no guidance; medium: noticeable friction or partial blocking, workarounds exist; high: fully or near-fully blocking, severe regression, repeated failures or data-loss risk, no viable workaround',
});

/** Most characters of one message, and of all the messages of a conversation. */
export const MAX_PART_CHARS = 20_000;
export const MAX_CONVERSATION_CHARS = 100_000;
export const MAX_BATCH = 500;

export const ConversationPart = Type.Object({
  type: Type.Literal('message'),
  role: asEnum(Type.Union([Type.Literal('user'), Type.Literal('assistant'), Type.Literal('agent')]), {
    description: 'user: the customer; assistant: an AI assistant; agent: a human support agent',
  }),
  body: Type.String({ minLength: 1, maxLength: MAX_PART_CHARS, description: `The message text (1 to ${MAX_PART_CHARS} characters)` }),
});

export const ConversationMetadata = Type.Object({
  url: Type.Optional(Type.String({ format: 'uri', maxLength: 2048, description: 'Where the conversation can be read at its source (helpdesk, chat tool)' })),
  attributes: Type.Optional(
    Type.Record(Type.String({ maxLength: 100 }), Type.String({ maxLength: 1000 }), { maxProperties: 50, description: 'Free attributes (string values) from the source' }),
  ),
  createdAt: Type.Optional(Type.String({ format: 'date-time', description: 'When the conversation started (default: when it is ingested)' })),
});

export const ConversationInput = Type.Object({
  id: Type.String({ minLength: 1, maxLength: 200, pattern: '^[^\\u0000-\\u001f]+$', description: 'Your identifier of the conversation: sending it again updates it, never duplicates it' }),
  subject: Type.Optional(Type.String({ maxLength: 500 })),
  parts: Type.Array(ConversationPart, { maxItems: 500, description: 'The messages, in order (at least one)' }),
  metadata: Type.Optional(ConversationMetadata),
  source: Type.Optional(Type.String({ minLength: 1, maxLength: 100, pattern: '^[A-Za-z0-9][A-Za-z0-9._:-]*$', description: 'Where it comes from (a helpdesk, a chat widget, an integration); default "api"' })),
});
export type ConversationInputT = Static<typeof ConversationInput>;

const BatchInput = Type.Array(ConversationInput, { minItems: 1, maxItems: MAX_BATCH });

/**
 * One conversation, or an array of at most MAX_BATCH. Written as if/then/else rather than a union so
 * that a bad conversation is reported against its own field, not a failed union branch.
 */
export const IngestBody = Type.Unsafe<ConversationInputT | ConversationInputT[]>({
  description: `One conversation, or an array of 1 to ${MAX_BATCH} conversations`,
  if: { type: 'array' },
  then: BatchInput,
  else: ConversationInput,
});

export const Conversation = Type.Object({
  object: Type.Literal('conversation'),
  id: Type.String(),
  subject: Type.String(),
  createdAt: Timestamp,
  processedAt: Type.Optional(Timestamp),
  source: Type.String(),
  impact: Type.Optional(Impact),
  urls: Type.Object({ location: Type.String(), source: Type.Optional(Type.String()) }),
});

export const ConversationWithContent = Type.Object({
  conversation: Conversation,
  parts: Type.Array(ConversationPart),
  metadata: Type.Object({
    url: Type.Optional(Type.String()),
    attributes: Type.Record(Type.String(), Type.String()),
    createdAt: Timestamp,
  }),
});

export const Issue = Type.Object({
  object: Type.Literal('conversation-issue'),
  id: Type.String(),
  title: Type.String(),
  details: RichText,
  impact: Impact,
  createdAt: Timestamp,
  ingestedAt: Timestamp,
  conversation: Type.String(),
  cluster: Type.Optional(Type.String()),
  urls: Type.Object({ location: Type.String() }),
});

export const IssueWithConversation = Type.Object({ issue: Issue, conversation: Conversation });

export const RelatedPage = Type.Object({
  space: Type.String(),
  page: Type.String(),
  title: Type.String(),
  path: Type.String(),
  urls: Type.Object({ app: Type.String() }),
});

export const Cluster = Type.Object({
  object: Type.Literal('issues-cluster'),
  id: Type.String(),
  label: Type.String(),
  createdAt: Timestamp,
  updatedAt: Timestamp,
  icon: Type.String({ description: 'Icon name' }),
  summary: RichText,
  muted: Type.Boolean({ description: 'Muted for change request creation' }),
  impact: Impact,
  weeklyPulse: Type.Array(Type.Integer(), { description: 'Issues per week over the past 13 weeks, oldest first; the last is the current week' }),
  sources: Type.Record(Type.String(), Type.Integer(), { description: 'Issues per conversation source' }),
  stats: Type.Object({ issues: Type.Integer(), conversations: Type.Integer() }),
  pages: Type.Array(RelatedPage, { description: "Folio's addition: the documentation pages most related to the cluster, from the search index, best first" }),
  urls: Type.Object({ location: Type.String() }),
});

export const OrgParams = Type.Object({ organizationId: Type.String({ maxLength: 100 }) });
export const ClusterParams = Type.Object({ organizationId: Type.String({ maxLength: 100 }), clusterId: Type.String({ maxLength: 100 }) });
export const ConversationParams = Type.Object({ organizationId: Type.String({ maxLength: 100 }), conversationId: Type.String({ maxLength: 200 }) });
export const IssueParams = Type.Object({ organizationId: Type.String({ maxLength: 100 }), issueId: Type.String({ maxLength: 100 }) });

export const ClusterSort = asEnum(Type.Union([Type.Literal('updatedAt'), Type.Literal('createdAt'), Type.Literal('issues')]), {
  description: 'Sort field (default updatedAt)',
  default: 'updatedAt',
});
export const Order = asEnum(Type.Union([Type.Literal('desc'), Type.Literal('asc')]), { description: 'Order (default desc)', default: 'desc' });

export const ListClustersQuery = Type.Object({ ...PageQuery, order: Type.Optional(Order), sort: Type.Optional(ClusterSort) });
export type ListClustersInput = Static<typeof ListClustersQuery>;

export const ListConversationsQuery = Type.Object({ ...PageQuery, source: Type.Optional(Type.String({ maxLength: 100, description: 'Only conversations from this source' })) });
export type ListConversationsInput = Static<typeof ListConversationsQuery>;

export const ListIssuesQuery = Type.Object({
  ...PageQuery,
  cluster: Type.Optional(Type.String({ maxLength: 100, description: 'Only issues of this cluster' })),
  conversation: Type.Optional(Type.String({ maxLength: 200, description: 'Only issues of this conversation' })),
});
export type ListIssuesInput = Static<typeof ListIssuesQuery>;

export const UpdateClusterBody = Type.Object({ muted: Type.Boolean({ description: 'true mutes the cluster for change request creation' }) });
