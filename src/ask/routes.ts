import type { FastifyReply, FastifyRequest } from 'fastify';
import { Type, type TSchema } from '@sinclair/typebox';
import type { FolioApp } from '../platform/app.ts';
import { ListOf } from '../platform/paging.ts';
import { errorResponses, OrganizationIdParams } from '../platform/schemas.ts';
import { EngineError } from '../ai/client.ts';
import type { AnswerState } from './answer.ts';
import { presentAnswer } from './presenter.ts';
import { AggregateBody, AggregateResult, aggregateSiteEvents, trackSiteEvents, TrackEventsBody } from './events.ts';
import * as questions from './questions.ts';
import * as schemas from './schemas.ts';
import { askInOrganization, askInSite, recommendedInOrganization, recommendedInSite, type AnswerFormat } from './service.ts';

const SiteParams = Type.Object({ organizationId: Type.String({ maxLength: 100 }), siteId: Type.String({ maxLength: 100 }) });
const QuestionParams = Type.Object({ ...SiteParams.properties, siteQuestionId: Type.String({ maxLength: 100 }) });
const AnswerParams = Type.Object({ ...SiteParams.properties, siteQuestionAnswerId: Type.String({ maxLength: 100 }) });

/** A 200 answered as server-sent events, each `data:` one `schema`. */
const eventStream = (schema: TSchema, description: string) => ({ description, content: { 'text/event-stream': { schema } } });

/**
 * An abort signal that fires when the caller goes away before the answer is sent (stops the
 * engine's stream too). The response's `close`, not the request's: a request closes once its body
 * is read.
 */
export function callerGone(reply: FastifyReply): AbortSignal {
  const controller = new AbortController();
  reply.raw.once('close', () => {
    if (!reply.raw.writableFinished) controller.abort();
  });
  return controller.signal;
}

/**
 * Sends items as server-sent events the way the official client reads them: each item a `data:`
 * line of JSON, then `event: done`; a failure after the stream began is an `event: error` with the
 * usual error body (before it began, failures are ordinary error responses).
 */
export async function sendEvents<T>(req: FastifyRequest, reply: FastifyReply, items: AsyncIterable<T>, present: (item: T) => unknown): Promise<void> {
  const headers = { ...reply.getHeaders(), 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-cache, no-transform', 'x-accel-buffering': 'no' };
  reply.hijack();
  const out = reply.raw;
  out.writeHead(200, headers as Record<string, string>);
  try {
    for await (const item of items) {
      if (out.destroyed) return;
      out.write(`data: ${JSON.stringify(present(item))}\n\n`);
    }
    out.write('event: done\ndata: {}\n\n');
  } catch (err) {
    if (out.destroyed) return;
    const engine = err instanceof EngineError;
    if (!engine) req.log.error({ err }, 'answer stream failed');
    const message = engine ? `The AI engine failed: ${err.message}` : 'The answer could not be completed';
    out.write(`event: error\ndata: ${JSON.stringify({ error: { code: 502, message } })}\n\n`);
  } finally {
    out.end();
  }
}

/** Answer states, thinned for a stream: a state at most every 40 ms, and always the last one. */
export async function* paced(states: AsyncIterable<AnswerState>, ms = 40): AsyncGenerator<AnswerState> {
  let last = 0;
  let pending: AnswerState | undefined;
  for await (const state of states) {
    const now = Date.now();
    if (now - last >= ms) {
      last = now;
      pending = undefined;
      yield state;
    } else pending = state;
  }
  if (pending) yield pending;
}

async function lastOf(states: AsyncIterable<AnswerState>): Promise<AnswerState> {
  let last: AnswerState | undefined;
  for await (const s of states) last = s;
  return last!;
}

const streamed = (format: AnswerFormat | undefined) => (state: AnswerState) => ({ type: 'answer' as const, answer: presentAnswer(state, format) });

async function* once<T>(items: T[]): AsyncGenerator<T> {
  yield* items;
}

export async function askRoutes(app: FolioApp): Promise<void> {
  app.post(
    '/orgs/:organizationId/ask',
    {
      schema: {
        operationId: 'askInOrganization',
        tags: ['ask'],
        params: OrganizationIdParams,
        querystring: schemas.AskQuery,
        body: schemas.AskBody,
        response: { 200: Type.Object({ answer: Type.Optional(schemas.SearchAIAnswer) }), ...errorResponses },
      },
    },
    async (req, reply) => {
      const states = await askInOrganization(req.ctx(), req.params.organizationId, req.body.query, callerGone(reply));
      return { answer: presentAnswer(await lastOf(states), req.query.format) };
    },
  );
  app.get(
    '/orgs/:organizationId/ask/stream',
    {
      schema: {
        operationId: 'streamAskInOrganization',
        tags: ['ask'],
        params: OrganizationIdParams,
        querystring: schemas.StreamAskQuery,
        response: { 200: eventStream(schemas.SearchAIAnswerStream, 'The answer as it is written: each event the answer so far'), ...errorResponses },
      },
    },
    async (req, reply) => {
      const states = await askInOrganization(req.ctx(), req.params.organizationId, req.query.query, callerGone(reply));
      await sendEvents(req, reply, paced(states), streamed(req.query.format));
    },
  );
  app.get(
    '/orgs/:organizationId/ask/questions',
    {
      schema: { operationId: 'getRecommendedQuestionsInOrganization', tags: ['ask'], params: OrganizationIdParams, response: { 200: schemas.RecommendedQuestions, ...errorResponses } },
    },
    async (req) => ({ questions: await recommendedInOrganization(req.ctx(), req.params.organizationId) }),
  );
  app.get(
    '/orgs/:organizationId/ask/questions/stream',
    {
      schema: {
        operationId: 'streamRecommendedQuestionsInOrganization',
        tags: ['ask'],
        params: OrganizationIdParams,
        response: { 200: eventStream(schemas.RecommendedQuestion, 'One event per recommended question'), ...errorResponses },
      },
    },
    async (req, reply) => {
      const list = await recommendedInOrganization(req.ctx(), req.params.organizationId);
      await sendEvents(req, reply, once(list), (question) => ({ question }));
    },
  );
  app.post(
    '/orgs/:organizationId/sites/:siteId/ask',
    {
      schema: {
        operationId: 'streamAskInSite',
        tags: ['ask'],
        params: SiteParams,
        querystring: Type.Object({ ...schemas.FormatQuery, ...schemas.ShareKeyQuery, ...schemas.VisitorTokenQuery }),
        body: schemas.ApiSiteAskBody,
        response: { 200: eventStream(schemas.SearchAIAnswerStream, 'The answer as it is written: each event the answer so far'), ...errorResponses },
      },
    },
    async (req, reply) => {
      const credentials = { shareKey: req.query.shareKey, jwt: req.body.visitor?.jwtToken ?? req.query.visitorAuthToken };
      const states = await askInSite(req.ctx(), req.params.organizationId, req.params.siteId, req.body, credentials, callerGone(reply));
      await sendEvents(req, reply, paced(states), streamed(req.query.format));
    },
  );
  app.get(
    '/orgs/:organizationId/sites/:siteId/ask/questions',
    {
      schema: {
        operationId: 'streamRecommendedQuestionsInSite',
        tags: ['ask'],
        params: SiteParams,
        querystring: Type.Object({
          siteSpaceId: Type.Optional(Type.String({ maxLength: 100 })),
          spaceId: Type.Optional(Type.String({ maxLength: 100, description: 'Deprecated (ignored): use siteSpaceId' })),
          ...schemas.ShareKeyQuery,
          ...schemas.VisitorTokenQuery,
        }),
        response: { 200: eventStream(schemas.RecommendedQuestion, 'One event per recommended question'), ...errorResponses },
      },
    },
    async (req, reply) => {
      const list = await recommendedInSite(req.ctx(), req.params.organizationId, req.params.siteId, req.query.siteSpaceId, { shareKey: req.query.shareKey, jwt: req.query.visitorAuthToken });
      await sendEvents(req, reply, once(list), (question) => ({ question }));
    },
  );

  // What readers ask ------------------------------------------------------------------------------
  app.get(
    '/orgs/:organizationId/sites/:siteId/questions',
    { schema: { operationId: 'listSiteQuestions', tags: ['ask'], params: SiteParams, querystring: schemas.ListQuestionsQuery, response: { 200: ListOf(schemas.SiteQuestion), ...errorResponses } } },
    async (req) => questions.listSiteQuestions(req.ctx(), req.params.organizationId, req.params.siteId, req.query),
  );
  app.get(
    '/orgs/:organizationId/sites/:siteId/questions/:siteQuestionId',
    { schema: { operationId: 'getSiteQuestionById', tags: ['ask'], params: QuestionParams, querystring: schemas.QuestionQuery, response: { 200: schemas.SiteQuestion, ...errorResponses } } },
    async (req) => questions.getSiteQuestion(req.ctx(), req.params.organizationId, req.params.siteId, req.params.siteQuestionId, req.query),
  );
  app.get(
    '/orgs/:organizationId/sites/:siteId/questions/:siteQuestionId/sources',
    {
      schema: {
        operationId: 'listSiteQuestionSources',
        tags: ['ask'],
        params: QuestionParams,
        querystring: schemas.QuestionSourcesQuery,
        response: { 200: ListOf(schemas.SiteQuestionAnswerSource), ...errorResponses },
      },
    },
    async (req) => questions.listSiteQuestionSources(req.ctx(), req.params.organizationId, req.params.siteId, req.params.siteQuestionId, req.query),
  );
  app.get(
    '/orgs/:organizationId/sites/:siteId/question-stats',
    { schema: { operationId: 'getSiteQuestionStats', tags: ['ask'], params: SiteParams, querystring: schemas.StatsQuery, response: { 200: schemas.SiteQuestionStats, ...errorResponses } } },
    async (req) => questions.getSiteQuestionStats(req.ctx(), req.params.organizationId, req.params.siteId, req.query),
  );
  app.get(
    '/orgs/:organizationId/sites/:siteId/answers',
    { schema: { operationId: 'listSiteQuestionAnswers', tags: ['ask'], params: SiteParams, querystring: schemas.ListAnswersQuery, response: { 200: ListOf(schemas.SiteQuestionAnswer), ...errorResponses } } },
    async (req) => questions.listSiteQuestionAnswers(req.ctx(), req.params.organizationId, req.params.siteId, req.query),
  );
  app.get(
    '/orgs/:organizationId/sites/:siteId/answers/:siteQuestionAnswerId',
    { schema: { operationId: 'getSiteQuestionAnswerById', tags: ['ask'], params: AnswerParams, response: { 200: schemas.SiteQuestionAnswerWithResponse, ...errorResponses } } },
    async (req) => questions.getSiteQuestionAnswer(req.ctx(), req.params.organizationId, req.params.siteId, req.params.siteQuestionAnswerId),
  );
  app.get(
    '/orgs/:organizationId/sites/:siteId/answers/:siteQuestionAnswerId/thread',
    {
      schema: {
        operationId: 'getSiteQuestionAnswerThreadById',
        tags: ['ask'],
        params: AnswerParams,
        response: { 200: Type.Array(schemas.SiteQuestionAnswerWithResponse), ...errorResponses },
      },
    },
    async (req) => questions.getSiteQuestionAnswerThread(req.ctx(), req.params.organizationId, req.params.siteId, req.params.siteQuestionAnswerId),
  );
  app.get(
    '/orgs/:organizationId/sites/:siteId/answers/:siteQuestionAnswerId/sources',
    {
      schema: {
        operationId: 'listSiteQuestionAnswerSources',
        tags: ['ask'],
        params: AnswerParams,
        querystring: Type.Object({ page: schemas.QuestionSourcesQuery.properties.page, limit: schemas.QuestionSourcesQuery.properties.limit }),
        response: { 200: ListOf(schemas.SiteQuestionAnswerSource), ...errorResponses },
      },
    },
    async (req) => questions.listSiteQuestionAnswerSources(req.ctx(), req.params.organizationId, req.params.siteId, req.params.siteQuestionAnswerId, req.query),
  );

  // Reader events --------------------------------------------------------------------------------
  app.post(
    '/orgs/:organizationId/sites/:siteId/insights/events',
    {
      schema: {
        operationId: 'trackEventsInSiteById',
        tags: ['ask'],
        params: SiteParams,
        querystring: Type.Object(schemas.ShareKeyQuery),
        body: TrackEventsBody,
        response: { 204: Type.Null({ description: 'Events have been tracked' }), ...errorResponses },
      },
    },
    async (req, reply) => {
      await trackSiteEvents(req.ctx(), req.params.organizationId, req.params.siteId, req.body, req.query.shareKey);
      return reply.status(204).send(null);
    },
  );
  app.post(
    '/orgs/:organizationId/sites/:siteId/insights/events/aggregate',
    { schema: { operationId: 'aggregateSiteEvents', tags: ['ask'], params: SiteParams, body: AggregateBody, response: { 200: AggregateResult, ...errorResponses } } },
    async (req) => aggregateSiteEvents(req.ctx(), req.params.organizationId, req.params.siteId, req.body),
  );
}
