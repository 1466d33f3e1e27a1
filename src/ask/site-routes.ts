import { Type } from '@sinclair/typebox';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { FolioApp } from '../platform/app.ts';
import type { Services } from '../platform/context.ts';
import { NotFoundError } from '../platform/errors.ts';
import { RateLimiter } from '../platform/rate-limit.ts';
import { SiteAddress } from '../published-site/reader-events.ts';
import { publishedSite, siteBase } from '../published-site/routes.ts';
import { visitorOf } from '../published-site/visitor.ts';
import { optsOut, readerIdentity } from '../published-site/site-events.ts';
import { presentAnswer } from './presenter.ts';
import { callerGone, paced, sendEvents } from './routes.ts';
import { askOnSite, recommendedOnSite, type SiteReading } from './service.ts';
import * as schemas from './schemas.ts';

/**
 * Ask for the readers of a published site, at `<site>/~gitbook/ask` (POST, the body of
 * `streamAskInSite`; or GET with `?question=`) and `<site>/~gitbook/ask/questions`: the same
 * server-sent events as the API, over what the site shows this reader, decided by the published
 * site's own rules (visitor.ts: visibility, the share link's cookie, the visitor token's claims
 * and the conditions they meet). Questions are recorded with the channel `site`.
 */

/** Questions per reader address and site: an engine call each. */
const asks = new RateLimiter({ max: 20, windowMs: 60_000, maxKeys: 10_000 });

const AskQuery = Type.Object({ question: Type.Optional(Type.String({ minLength: 1, maxLength: 512 })), ...schemas.FormatQuery });

export async function askSiteRoutes(app: FolioApp, services: Services): Promise<void> {
  async function reading(req: FastifyRequest, address: { orgKey: string; basename: string }): Promise<SiteReading> {
    if (address.orgKey === 'v1') throw new NotFoundError('Site');
    const published = await publishedSite(services, address.orgKey, address.basename);
    if (!published) throw new NotFoundError('Site');
    const base = siteBase(req, address);
    const outcome = await visitorOf(services.db, published.site, req, base, services.config.publicUrl.startsWith('https:'));
    // A reader the site does not admit is told there is nothing here.
    if (outcome.kind !== 'ok') throw new NotFoundError('Site');
    return { reader: { db: services.db, blobs: services.blobs, urls: services.urls, site: published.site, structure: published.structure, base }, visitor: outcome.visitor, channel: 'site' };
  }

  async function ask(req: FastifyRequest, reply: FastifyReply, address: { orgKey: string; basename: string }, input: typeof schemas.SiteAskBody.static, format: 'document' | 'markdown' | undefined) {
    const site = await reading(req, address);
    const error = asks.apply(reply, asks.hit(`${site.reader.site.id}|${req.ip}`));
    if (error) throw error;
    // Without a session in the body, the reader is the one their page views and searches know
    // (one who asks not to be tracked stays the anonymous asker Ask always knew).
    const reader =
      input.session || optsOut(req.headers) ? undefined : await readerIdentity(services, site.reader.site, { ip: req.ip, userAgent: String(req.headers['user-agent'] ?? ''), optOut: false });
    const states = askOnSite(services, site, input, { signal: callerGone(reply), who: `${req.ip}|${String(req.headers['user-agent'] ?? '').slice(0, 200)}`, reader });
    // The first state is read before the stream opens, so refusals (a bad scope) stay error responses.
    const first = await states.next();
    async function* all() {
      if (!first.done) yield first.value;
      yield* states;
    }
    await sendEvents(req, reply, paced(all()), (state) => ({ type: 'answer' as const, answer: presentAnswer(state, format) }));
  }

  const config = { public: true };
  app.post(
    '/:orgKey/:basename/~gitbook/ask',
    { config, schema: { hide: true, params: SiteAddress, querystring: Type.Object(schemas.FormatQuery), body: schemas.SiteAskBody } },
    async (req, reply) => ask(req, reply, req.params, req.body, req.query.format),
  );
  app.get('/:orgKey/:basename/~gitbook/ask', { config, schema: { hide: true, params: SiteAddress, querystring: AskQuery } }, async (req, reply) => {
    if (!req.query.question) return reply.code(400).send({ error: { code: 400, message: 'question: ask a question (?question=…)' } });
    return ask(req, reply, req.params, { question: req.query.question, scope: { mode: 'default' } }, req.query.format);
  });
  app.get('/:orgKey/:basename/~gitbook/ask/questions', { config, schema: { hide: true, params: SiteAddress } }, async (req, reply) => {
    const site = await reading(req, req.params);
    const list = await recommendedOnSite(services, site);
    async function* each() {
      yield* list;
    }
    await sendEvents(req, reply, each(), (question) => ({ question }));
  });
}
