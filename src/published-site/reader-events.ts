import { createHmac } from 'node:crypto';
import { Type, type Static } from '@sinclair/typebox';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { FolioApp } from '../platform/app.ts';
import type { Services } from '../platform/context.ts';
import { BadRequestError, NotFoundError } from '../platform/errors.ts';
import { RateLimiter } from '../platform/rate-limit.ts';
import { emitEvents } from '../events/outbox.ts';
import type { SiteIntegration } from '../integrations/site-scripts.ts';
import { locate, navigationFor, pageAt, type SiteStructure } from './published.ts';
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
  return page && { page, siteSpace: located.siteSpace, url: `${located.prefix}${page.path}` };
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

  app.post('/:orgKey/:basename/_folio/feedback', { config, schema }, async (req, reply) => {
    const { resolved, visitor } = await reader(req, req.params);
    const targets = receivers(resolved, 'page:feedback:read');
    if (targets.length === 0) throw new NotFoundError('Feedback on this site');
    limit(feedbacks, `${resolved.site.id}|${req.ip}`, reply);
    const body = (req.body ?? {}) as { page?: unknown; rating?: unknown; comment?: unknown; referrer?: unknown };
    if (typeof body.rating !== 'string' || !RATINGS.has(body.rating)) throw new BadRequestError('`rating` must be one of bad, ok, good');
    if (typeof body.page !== 'string' || body.page.length > 2048) throw new BadRequestError('`page` must be the path of the page within the site');
    const comment = typeof body.comment === 'string' ? body.comment.trim() : '';
    if (comment.length > 512) throw new BadRequestError('`comment` is limited to 512 characters');
    const found = await pageOf(services, resolved, visitor, body.page);
    if (!found) throw new NotFoundError('Page');
    const url = pageUrl(req, resolved, found.url);
    const payload = {
      type: 'page_feedback',
      siteId: resolved.site.id,
      spaceId: found.siteSpace.space.id,
      pageId: found.page.id,
      feedback: { rating: body.rating, ...(comment ? { comment } : {}) },
      visitor: eventVisitor(services, req, resolved.site),
      url,
      referrer: typeof body.referrer === 'string' ? body.referrer.slice(0, 4096) : '',
    };
    await services.db.transaction().execute((trx) => emitEvents(trx, services.jobs, targets.map((i) => ({ integrationId: i.integrationId, installationId: i.installationId, payload }))));
    // A form posted without JavaScript goes back to the page, to its thank-you note.
    if (!String(req.headers.accept ?? '').includes('application/json')) return reply.code(303).header('location', `${resolved.base}${found.url}#feedback-sent`).send();
    return reply.code(204).send();
  });
}
