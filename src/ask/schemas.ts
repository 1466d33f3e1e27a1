import { Type } from '@sinclair/typebox';
import { PageQuery } from '../platform/paging.ts';
import { asEnum, Document, Timestamp } from '../platform/schemas.ts';

/** The shapes of Ask and of what readers ask, as the official schemas (SearchAI*, SiteQuestion*). */

export const FormatQuery = {
  format: Type.Optional(asEnum(Type.Union([Type.Literal('document'), Type.Literal('markdown')]), { description: 'Output format of the answer: a JSON document (default) or markdown' })),
};

/** The official `Document`: markdown, a JSON document, or empty. */
const AnswerDocument = Type.Union([Type.Object({ markdown: Type.String() }), Type.Object({ document: Document }), Type.Object({}, { additionalProperties: false })]);

export const AnswerSource = Type.Object({
  type: Type.Literal('page'),
  page: Type.String({ description: 'The page ID of the source' }),
  revision: Type.String({ description: 'The revision the page was read at' }),
  space: Type.String({ description: 'The space owning the page' }),
  sections: Type.Array(Type.String(), { description: 'The IDs of the sections (headings) quoted' }),
  reason: Type.Optional(Type.String({ description: 'How the source was used' })),
  title: Type.Optional(Type.String({ description: "Folio's addition: the page's title" })),
  passage: Type.Optional(Type.String({ description: "Folio's addition: the passages of the page the answer was built from" })),
  url: Type.Optional(Type.String({ description: "Folio's addition: where the reader opens the page (the app for members, the site for visitors)" })),
});

export const SearchAIAnswer = Type.Object({
  answer: Type.Optional(AnswerDocument),
  followupQuestions: Type.Array(Type.String()),
  sources: Type.Array(AnswerSource),
});

/** One event of an answer stream (`data:` of text/event-stream): the answer so far. */
export const SearchAIAnswerStream = Type.Object({ type: Type.Literal('answer'), answer: SearchAIAnswer });

export const AskBody = Type.Object({
  query: Type.String({ minLength: 1, maxLength: 512 }),
  previousQueries: Type.Optional(Type.Array(Type.String({ maxLength: 512 }), { maxItems: 10, description: 'Deprecated (ignored)' })),
});

export const AskQuery = Type.Object({ ...FormatQuery, details: Type.Optional(Type.Boolean({ description: 'Accepted; Folio returns no query details' })) });
export const StreamAskQuery = Type.Object({ query: Type.String({ minLength: 1, maxLength: 512 }), ...AskQuery.properties });

export const SiteAskBody = Type.Object({
  question: Type.String({ minLength: 1, maxLength: 512 }),
  context: Type.Optional(Type.Object({ siteSpaceId: Type.Optional(Type.String({ maxLength: 100 })), goal: Type.Optional(Type.String({ maxLength: 1024 })) })),
  scope: Type.Object({
    mode: asEnum(Type.Union([Type.Literal('default'), Type.Literal('specific'), Type.Literal('all')])),
    currentSiteSpace: Type.Optional(Type.String({ maxLength: 100 })),
    restrictTo: Type.Optional(asEnum(Type.Union([Type.Literal('currentSiteSpace'), Type.Literal('otherSiteSpaces')]))),
    siteSpaceIds: Type.Optional(Type.Array(Type.String({ maxLength: 100 }), { minItems: 1, maxItems: 1000 })),
  }),
  session: Type.Optional(Type.Object({ visitorId: Type.String({ maxLength: 200 }), sessionId: Type.String({ maxLength: 200 }) })),
});

/**
 * Who the visitor is (the official `SiteVisitorPayload`, as `resolvePublishedContentByUrl` takes
 * it; Folio's addition to `streamAskInSite`): a visitor-auth site's JWT, whose claims decide its
 * adaptive content. `unsignedClaims` is accepted and ignored: Folio's pages read no unsigned claims.
 */
export const SiteVisitor = Type.Object({
  type: Type.Optional(asEnum(Type.Union([Type.Literal('human'), Type.Literal('agent')]))),
  jwtToken: Type.Optional(Type.String({ maxLength: 8192, description: "A visitor JWT signed with the site's key (HS256)" })),
  unsignedClaims: Type.Optional(Type.Object({}, { additionalProperties: true, description: 'Accepted and ignored' })),
});

/** `streamAskInSite`'s body, with the visitor (Folio's addition). */
export const ApiSiteAskBody = Type.Object({ ...SiteAskBody.properties, visitor: Type.Optional(SiteVisitor) });

export const VisitorTokenQuery = {
  visitorAuthToken: Type.Optional(Type.String({ maxLength: 8192, description: "Folio's addition: a visitor JWT signed with the site's key, for a visitor-auth site's visitor" })),
};

export const ShareKeyQuery = { shareKey: Type.Optional(Type.String({ maxLength: 200, description: "Folio's addition: a share link's key, for a visitor of a share-link site" })) };

export const RecommendedQuestions = Type.Object({ questions: Type.Array(Type.String()) });
export const RecommendedQuestion = Type.Object({ question: Type.String() });

// What readers ask -------------------------------------------------------------------------------

const Count = Type.Number();
export const SiteQuestionStats = Type.Object({
  total: Count,
  answers: Count,
  feedback: Type.Object({ positive: Count, negative: Count, unrated: Count }),
  answered: Type.Object({ yes: Count, partially: Count, no: Count }),
  relevance: Type.Object({ relevant: Count, spam: Count, 'off-topic': Count, unclear: Count }),
  types: Type.Object({ exploring: Count, 'how-to': Count, troubleshooting: Count, reference: Count, unknown: Count }),
  channelTypes: Type.Record(Type.String(), Count),
  channels: Type.Record(Type.String(), Count),
  weeklyPulse: Type.Array(Count, { minItems: 13, maxItems: 13, description: 'Answers per week over the past 13 weeks, oldest first' }),
});

const QuestionType = asEnum(Type.Union(['exploring', 'how-to', 'troubleshooting', 'reference', 'unknown'].map((t) => Type.Literal(t))));
const Relevance = asEnum(Type.Union(['relevant', 'spam', 'off-topic', 'unclear'].map((t) => Type.Literal(t))));
const Resolution = asEnum(Type.Union(['no', 'partially', 'yes'].map((t) => Type.Literal(t))));
const Helpfulness = asEnum(Type.Union(['low', 'medium', 'high'].map((t) => Type.Literal(t))));
const ChannelType = Type.String({ maxLength: 50, description: 'site, embed, api, or a configurable channel type' });

export const SiteQuestion = Type.Object({
  object: Type.Literal('site-question'),
  id: Type.String(),
  question: Type.String(),
  type: Type.String(),
  createdAt: Timestamp,
  askedAt: Timestamp,
  stats: SiteQuestionStats,
  urls: Type.Object({ location: Type.String() }),
});

export const SiteQuestionAnswer = Type.Object({
  object: Type.Literal('site-question-answer'),
  id: Type.String(),
  question: Type.Object({ id: Type.String(), type: Type.String() }),
  topics: Type.Array(Type.String()),
  input: Type.Object({ text: Type.String(), raw: Type.String() }),
  thread: Type.Optional(Type.Object({ id: Type.String(), previous: Type.String() })),
  session: Type.Optional(Type.Object({ visitorId: Type.String(), sessionId: Type.String() })),
  feedback: Type.Optional(Type.Object({ rating: Type.Integer() })),
  responseId: Type.String(),
  language: Type.String(),
  answered: Type.String(),
  helpfulness: Type.String(),
  relevance: Type.String(),
  channel: Type.Object({ type: Type.String() }),
  createdAt: Timestamp,
  updatedAt: Type.Optional(Timestamp),
  urls: Type.Object({ location: Type.String() }),
});

export const SiteQuestionAnswerWithResponse = Type.Composite([
  SiteQuestionAnswer,
  Type.Object({
    response: Type.Object({
      id: Type.String(),
      role: Type.Literal('assistant'),
      steps: Type.Array(Type.Object({ content: Document })),
      createdAt: Type.Optional(Timestamp),
    }),
  }),
]);

export const SiteQuestionAnswerSource = Type.Object({
  object: Type.Literal('site-question-answer-source'),
  id: Type.String(),
  weight: Type.Number(),
  title: Type.String(),
  urls: Type.Object({ location: Type.String() }),
  type: Type.Literal('page'),
  space: Type.String(),
  revision: Type.String(),
  page: Type.String(),
  passage: Type.Optional(Type.String({ description: "Folio's addition: the passages of the page the answer was built from" })),
});

/** Filters the question lists, stats and answers share. */
const StatsFilters = {
  from: Type.Optional(Timestamp),
  to: Type.Optional(Timestamp),
  relevance: Type.Optional(Type.Array(Relevance, { maxItems: 4 })),
  channelType: Type.Optional(Type.Array(ChannelType, { maxItems: 10 })),
  answered: Type.Optional(Type.Array(Resolution, { maxItems: 3 })),
};

export const ListQuestionsQuery = Type.Object({
  ...StatsFilters,
  type: Type.Optional(QuestionType),
  topic: Type.Optional(Type.Array(Type.String({ maxLength: 100 }), { maxItems: 50, description: 'Topics are not computed by Folio: a topic filter matches nothing' })),
  order: Type.Optional(asEnum(Type.Union([Type.Literal('asc'), Type.Literal('desc')]))),
  sort: Type.Optional(asEnum(Type.Union([Type.Literal('askedAt'), Type.Literal('stats.answered'), Type.Literal('stats.feedback'), Type.Literal('stats.answers')]))),
  ...PageQuery,
});
export const QuestionQuery = Type.Object(StatsFilters);
export const QuestionSourcesQuery = Type.Object({ ...StatsFilters, ...PageQuery });
export const StatsQuery = Type.Object({ ...StatsFilters, topic: ListQuestionsQuery.properties.topic });
export const ListAnswersQuery = Type.Object({
  question: Type.Optional(Type.String({ maxLength: 100 })),
  from: Type.Optional(Timestamp),
  to: Type.Optional(Timestamp),
  language: Type.Optional(Type.String({ maxLength: 20 })),
  answered: StatsFilters.answered,
  helpfulness: Type.Optional(Helpfulness),
  relevance: StatsFilters.relevance,
  channelType: StatsFilters.channelType,
  'question.type': Type.Optional(QuestionType),
  topic: Type.Optional(Type.String({ maxLength: 100 })),
  thread: Type.Optional(Type.String({ maxLength: 100 })),
  ...PageQuery,
});
