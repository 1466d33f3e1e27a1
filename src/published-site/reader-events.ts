import { createHmac } from 'node:crypto';
import { Type, type Static } from '@sinclair/typebox';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { FolioApp } from '../platform/app.ts';
import type { Services } from '../platform/context.ts';
import { BadRequestError, ForbiddenError, NotFoundError } from '../platform/errors.ts';
import { RateLimiter } from '../platform/rate-limit.ts';
import { emitEvents } from '../events/outbox.ts';
import type { SiteIntegration } from '../integrations/site-scripts.ts';
import { asksFeedback, locate, navigationFor, pageAt, type SiteStructure } from './published.ts';
import { optsOut, readerIdentity, recordReaderEvents, type ReaderEvent } from './site-events.ts';
import { visitorOf, type Visitor } from './visitor.ts';
import type { SiteRow } from '../platform/db/schema.ts';
import { requestCookies } from '../platform/cookies.ts';

/**
 * What readers of a published site tell its integrations: page views (`site_view`, sent by the
 * page's script) and "was this page helpful?" answers (`page_feedback`, a form that also works
 * without JavaScript). Each goes, through the outbox, to the installations on the site whose
 * scopes include receiving it (`site:views:read`, `page:feedback:read`); with none, nothing is
 * recorded and the pages do not even send them.
 *
 * The visitor's `anonymousId` is a keyed hash of the site, address, user agent and day: stable
 * for a visit, not a cookie, and not linkable across sites or days. Folio's own cookies (share
 * links, visitor tokens) are never passed on.
 */

export interface ResolvedSite {
  site: SiteRow;
  structure: SiteStructure;
  integrations: SiteIntegration[];
  base: string;
}

/** A published site's address: its organization (id or hostname) and basename. */
export const SiteAddress = Type.Object({ orgKey: Type.String(), basename: Type.String() });

export type SiteResolver = (req: FastifyRequest, address: Static<typeof SiteAddress>) => Promise<ResolvedSite | undefined>;

/** Views and feedback per address and site: generous for readers, a wall for floods. */
const views = new RateLimiter({ max: 120, windowMs: 60_000, maxKeys: 10_000 });
const feedbacks = new RateLimiter({ max: 10, windowMs: 60_000, maxKeys: 10_000 });

const RATINGS = new Set(['bad', 'ok', 'good']);

function eventVisitor(services: Services, req: FastifyRequest, site: SiteRow) {
  const userAgent = String(req.headers['user-agent'] ?? '').slice(0, 512);
  const day = new Date().toISOString().slice(0, 10);
  const anonymousId = createHmac('sha256', services.signingKey).update(`visitor|${site.id}|${req.ip}|${userAgent}|${day}`).digest('base64url').slice(0, 22);
  // The site's own cookies (its scripts' consent, analytics ids), never Folio's.
  const cookies: Record<string, string> = {};
  for (const [name, value] of requestCookies(req.headers.cookie)) {
    if (name.startsWith('folio_')) continue;
    if (Object.keys(cookies).length >= 50) break;
    cookies[name] = value.slice(0, 1024);
  }
  const language = String(req.headers['accept-language'] ?? '').split(',')[0]?.split(';')[0]?.trim();
  return { anonymousId, cookies, userAgent, ip: req.ip, ...(language ? { language } : {}) };
}

/** The page a site-relative path names for this visitor, with its site space. */
async function pageOf(services: Services, resolved: ResolvedSite, visitor: Visitor, path: string) {
  const clean = path.split(/[?#]/)[0]!.replace(/^\/+|\/+$/g, '');
  let decoded: string;
  try {
    decoded = decodeURIComponent(clean);
  } catch {
    return undefined;
  }
  const located = locate(resolved.structure, decoded, visitor);
  if (!located) return undefined;
  const nav = await navigationFor({ db: services.db, blobs: services.blobs, urls: services.urls, site: resolved.site, base: resolved.base, structure: resolved.structure, located, visitor, integrations: [] });
  const page = pageAt(nav, located.pagePath, visitor);
  return page && { page, section: located.section, siteSpace: located.siteSpace, url: `${located.prefix}${page.path}` };
}

function limit(limiter: RateLimiter, key: string, reply: FastifyReply): void {
  const error = limiter.apply(reply, limiter.hit(key));
  if (error) throw error;
}

export async function readerEventRoutes(app: FolioApp, services: Services, resolve: SiteResolver): Promise<void> {
  // The feedback form posts url-encoded fields; only these routes accept them.
  app.addContentTypeParser('application/x-www-form-urlencoded', { parseAs: 'string', bodyLimit: 8192 }, (_req, body, done) => {
    done(null, Object.fromEntries(new URLSearchParams(typeof body === 'string' ? body : body.toString('utf8'))));
  });

  /** The site, and the visitor if they may read it (a reader who may not is told there is nothing here). */
  async function reader(req: FastifyRequest, address: Static<typeof SiteAddress>) {
    const resolved = await resolve(req, address);
    if (!resolved) throw new NotFoundError('Site');
    const outcome = await visitorOf(services.db, resolved.site, req, resolved.base, services.config.publicUrl.startsWith('https:'));
    if (outcome.kind !== 'ok') throw new NotFoundError('Site');
    return { resolved, visitor: outcome.visitor };
  }

  const receivers = (resolved: ResolvedSite, scope: string) => resolved.integrations.filter((i) => i.scopes.includes(scope));
  const pageUrl = (req: FastifyRequest, resolved: ResolvedSite, path: string) => {
    const host = req.headers.host ?? new URL(services.config.publicUrl).host;
    return `${services.config.publicUrl.startsWith('https:') ? 'https' : 'http'}://${host}${resolved.base}${path}`;
  };

  const config = { public: true };
  const schema = { hide: true, params: SiteAddress };

  app.post('/:orgKey/:basename/_folio/view', { config, schema }, async (req, reply) => {
    const { resolved, visitor } = await reader(req, req.params);
    const targets = receivers(resolved, 'site:views:read');
    if (targets.length === 0) return reply.code(204).send();
    limit(views, `${resolved.site.id}|${req.ip}`, reply);
    const body = (req.body ?? {}) as { url?: unknown; referrer?: unknown };
    if (typeof body.url !== 'string' || body.url.length > 4096) throw new BadRequestError('`url` must be the address of the page viewed');
    let path: string;
    try {
      path = new URL(body.url).pathname;
    } catch {
      throw new BadRequestError('`url` must be an absolute address');
    }
    if (!path.startsWith(resolved.base)) throw new BadRequestError('`url` is not a page of this site');
    const found = await pageOf(services, resolved, visitor, path.slice(resolved.base.length));
    if (!found) throw new NotFoundError('Page');
    const referrer = typeof body.referrer === 'string' ? body.referrer.slice(0, 4096) : '';
    const payload = {
      type: 'site_view',
      siteId: resolved.site.id,
      siteSpaceId: found.siteSpace.id,
      spaceId: found.siteSpace.space.id,
      pageId: found.page.id,
      visitor: eventVisitor(services, req, resolved.site),
      url: body.url,
      referrer,
    };
    await services.db.transaction().execute((trx) => emitEvents(trx, services.jobs, targets.map((i) => ({ integrationId: i.integrationId, installationId: i.installationId, payload }))));
    return reply.code(204).send();
  });

  /** A page's rating, for the site's insights and the installations that receive feedback. */
  async function sendFeedback(req: FastifyRequest, resolved: ResolvedSite, found: NonNullable<Awaited<ReturnType<typeof pageOf>>>, feedback: { rating: Rating; comment: string; referrer: string }, url: string) {
    const targets = receivers(resolved, 'page:feedback:read');
    if (targets.length) {
      const payload = {
        type: 'page_feedback',
        siteId: resolved.site.id,
        spaceId: found.siteSpace.space.id,
        pageId: found.page.id,
        feedback: { rating: feedback.rating, ...(feedback.comment ? { comment: feedback.comment } : {}) },
        visitor: eventVisitor(services, req, resolved.site),
        url,
        referrer: feedback.referrer,
      };
      await services.db.transaction().execute((trx) => emitEvents(trx, services.jobs, targets.map((i) => ({ integrationId: i.integrationId, installationId: i.installationId, payload }))));
    }
  }

  /** Where a page's event happened, for the site's insights. */
  const where = (url: URL, found: Awaited<ReturnType<typeof pageOf>>) => ({
    url,
    siteSectionId: found?.section?.id ?? null,
    siteSpaceId: found?.siteSpace.id ?? null,
    spaceId: found?.siteSpace.space.id ?? null,
    pageId: found?.page.id ?? null,
  });

  const readerOf = (req: FastifyRequest) => ({ ip: req.ip, userAgent: String(req.headers['user-agent'] ?? ''), optOut: optsOut(req.headers) });

  app.post('/:orgKey/:basename/_folio/feedback', { config, schema }, async (req, reply) => {
    const { resolved, visitor } = await reader(req, req.params);
    limit(feedbacks, `${resolved.site.id}|${req.ip}`, reply);
    const body = (req.body ?? {}) as { page?: unknown; rating?: unknown; comment?: unknown; referrer?: unknown };
    if (typeof body.rating !== 'string' || !RATINGS.has(body.rating)) throw new BadRequestError('`rating` must be one of bad, ok, good');
    if (typeof body.page !== 'string' || body.page.length > 2048) throw new BadRequestError('`page` must be the path of the page within the site');
    const comment = typeof body.comment === 'string' ? body.comment.trim() : '';
    if (comment.length > 512) throw new BadRequestError('`comment` is limited to 512 characters');
    const found = await pageOf(services, resolved, visitor, body.page);
    if (!found) throw new NotFoundError('Page');
    // Only where the pages ask for it (the site's customization, or an installation that receives it).
    if (!asksFeedback(resolved.site, found.siteSpace, resolved.integrations)) throw new NotFoundError('Feedback on this site');
    const url = pageUrl(req, resolved, found.url);
    const rating = body.rating as Rating;
    await sendFeedback(req, resolved, found, { rating, comment, referrer: typeof body.referrer === 'string' ? body.referrer.slice(0, 4096) : '' }, url);
    const who = await readerIdentity(services, resolved.site, readerOf(req));
    await recordReaderEvents(services, resolved.site, who, [{ type: 'page_post_feedback', rating, ...where(new URL(url), found) }]);
    // A form posted without JavaScript goes back to the page, to its thank-you note.
    if (!String(req.headers.accept ?? '').includes('application/json')) return reply.code(303).header('location', `${resolved.base}${found.url}#feedback-sent`).send();
    return reply.code(204).send();
  });

  /**
   * The reader events site.js sends (`<site>/~gitbook/events`): page views, searches from the search
   * box and ratings, in batches, for the site's insights (`aggregateSiteEvents`) and the
   * installations that receive views and feedback. The reader must be one the site admits (its
   * visibility, share link, visitor token), and each page is resolved for them: a page they may not
   * read counts as no page. A reader who asks not to be tracked (DNT, GPC) has only their ratings
   * counted, linked to nothing.
   */
  await app.register(async (plugin) => {
    const scope = plugin as unknown as FolioApp;
    // sendBeacon posts text/plain (a simple request): the text is the JSON.
    scope.removeContentTypeParser('text/plain');
    scope.addContentTypeParser('text/plain', { parseAs: 'string' }, (_req, body, done) => {
      try {
        done(null, JSON.parse(typeof body === 'string' ? body : body.toString('utf8')));
      } catch {
        done(new BadRequestError('The body must be JSON: { "events": [ … ] }'), undefined);
      }
    });
    scope.post(
      '/:orgKey/:basename/~gitbook/events',
      { config, bodyLimit: EVENTS_BODY_LIMIT, schema: { hide: true, params: SiteAddress, body: ReaderEventsBody } },
      async (req, reply) => {
        // Another site's page cannot report events for this one's readers (browsers say where a request comes from).
        if (req.headers['sec-fetch-site'] === 'cross-site') throw new ForbiddenError("Reader events come from the site's own pages");
        const { resolved, visitor } = await reader(req, req.params);
        limit(batches, `${resolved.site.id}|${req.ip}`, reply);
        const optOut = optsOut(req.headers);
        const site = resolved.site;
        const siteRoot = pageUrl(req, resolved, '');
        const pages = new Map<string, Awaited<ReturnType<typeof pageOf>>>();
        const events: ReaderEvent[] = [];
        for (const [i, e] of req.body.events.entries()) {
          let sent: URL;
          try {
            sent = new URL(e.url);
          } catch {
            throw new BadRequestError(`events[${i}].url: must be the absolute address of a page of this site`);
          }
          if (!sent.pathname.startsWith(resolved.base) && `${sent.pathname}/` !== resolved.base) {
            throw new BadRequestError(`events[${i}].url: ${sent.pathname} is not an address of this site (${resolved.base}…)`);
          }
          const path = sent.pathname.slice(resolved.base.length);
          // The page's address on the site as this request reached it (not the host the body names).
          const url = new URL(`${siteRoot}${path}`);
          if (e.type === 'search_type_query' && !e.query?.trim()) throw new BadRequestError(`events[${i}].query: a search needs its words`);
          if (e.type === 'page_post_feedback' && !e.feedback) throw new BadRequestError(`events[${i}].feedback: a rating needs { rating: bad | ok | good }`);
          if (optOut && e.type !== 'page_post_feedback') continue;
          if (!pages.has(path)) pages.set(path, await pageOf(services, resolved, visitor, path));
          const found = pages.get(path);
          // Views and ratings are of pages this reader may read; a search may happen anywhere on the site.
          if (!found && e.type !== 'search_type_query') continue;
          // Ratings only where the pages ask for them (the site's customization, or an installation receiving them).
          if (e.type === 'page_post_feedback' && !asksFeedback(site, found!.siteSpace, resolved.integrations)) continue;
          events.push({
            type: e.type,
            ...where(url, found),
            ...(e.type === 'search_type_query' ? { query: e.query!.trim() } : {}),
            ...(e.type === 'page_post_feedback' ? { rating: e.feedback!.rating } : {}),
          });
          // The installations hear of it at the page's address as this request reached it.
          if (e.type === 'page_post_feedback' && found) {
            limit(feedbacks, `${site.id}|${req.ip}`, reply);
            await sendFeedback(req, resolved, found, { rating: e.feedback!.rating, comment: e.feedback!.comment?.trim() ?? '', referrer: '' }, url.href);
          }
          if (e.type === 'page_view' && found) {
            const targets = receivers(resolved, 'site:views:read');
            const payload = {
              type: 'site_view',
              siteId: site.id,
              siteSpaceId: found.siteSpace.id,
              spaceId: found.siteSpace.space.id,
              pageId: found.page.id,
              visitor: eventVisitor(services, req, site),
              url: url.href,
              referrer: e.referrer ?? '',
            };
            if (targets.length) await services.db.transaction().execute((trx) => emitEvents(trx, services.jobs, targets.map((t) => ({ integrationId: t.integrationId, installationId: t.installationId, payload }))));
          }
        }
        if (events.length) await recordReaderEvents(services, site, await readerIdentity(services, site, readerOf(req)), events);
        return reply.code(204).send();
      },
    );
  });
}

/** Batches of reader events per address and site (each up to 20 events, 16 KB). */
const batches = new RateLimiter({ max: 60, windowMs: 60_000, maxKeys: 10_000 });
const EVENTS_BODY_LIMIT = 16 * 1024;

type Rating = 'bad' | 'ok' | 'good';

const ReaderEventBody = Type.Object(
  {
    type: Type.Union([Type.Literal('page_view'), Type.Literal('search_type_query'), Type.Literal('page_post_feedback')]),
    /** The page's address (location.href). */
    url: Type.String({ minLength: 1, maxLength: 2048 }),
    /** A page view's referrer (passed to the installations that receive views). */
    referrer: Type.Optional(Type.String({ maxLength: 2048 })),
    /** A search's words. */
    query: Type.Optional(Type.String({ maxLength: 512 })),
    /** A rating of the page, with a comment for the installations that receive feedback. */
    feedback: Type.Optional(
      Type.Object(
        { rating: Type.Union([Type.Literal('bad'), Type.Literal('ok'), Type.Literal('good')]), comment: Type.Optional(Type.String({ maxLength: 512 })) },
        { additionalProperties: false },
      ),
    ),
  },
  { additionalProperties: false },
);
const ReaderEventsBody = Type.Object({ events: Type.Array(ReaderEventBody, { minItems: 1, maxItems: 20 }) }, { additionalProperties: false });
