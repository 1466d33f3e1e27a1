import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { dirname, join, normalize } from 'node:path';
import { Type, type Static } from '@sinclair/typebox';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { FolioApp } from '../platform/app.ts';
import { SITES_TOPIC } from '../platform/bus.ts';
import type { Services } from '../platform/context.ts';
import type { SiteRow } from '../platform/db/schema.ts';
import { sendBlob } from '../platform/downloads.ts';
import { contentDisposition } from '../platform/content-disposition.ts';
import type { Range } from '../search/highlight.ts';
import { matchRedirect, redirectTarget } from '../sites/redirects.ts';
import { SITE_CSS, SITE_JS } from './layout.ts';
import { navigationFor, locate, pageAt, pageMarkdown, renderPage, type PageRequest, type SiteStructure } from './published.ts';
import { everyPage, readerResults } from './reader.ts';
import { escapeHtml } from './render.ts';
import { siteHostOf } from './hosts.ts';
import { sendVisitorRedirect, visitorOf, type Visitor } from './visitor.ts';
import { scriptSources, siteIntegrations, type SiteIntegration } from '../integrations/site-scripts.ts';
import { readerEventRoutes, SiteAddress } from './reader-events.ts';
import { publishedSiteAt } from './store.ts';
import { gitRedirectPage } from '../git/redirects.ts';
import { renderIntegrationBlock } from '../integrations/blocks.ts';

/**
 * Published sites, served by Folio itself at PUBLIC_URL/<organization id or hostname>/<basename>/…:
 * pages as HTML (and as markdown at `<page>.md`), search, sitemap.xml, robots.txt, llms.txt,
 * llms-full.txt, files, and the site's own stylesheet and script. Every answer carries a strict
 * Content-Security-Policy (scripts only from the site itself) and `nosniff`; unlisted and
 * non-public sites are `noindex`.
 */

const BASE_CSP: [string, string[]][] = [
  ['default-src', ["'none'"]],
  ['script-src', ["'self'"]],
  // KaTeX positions math with inline styles; scripts stay strictly same-origin.
  ['style-src', ["'self'", "'unsafe-inline'"]],
  ['img-src', ["'self'", 'https:', 'data:']],
  ['font-src', ["'self'"]],
  ['connect-src', ["'self'"]],
  ['form-action', ["'self'"]],
  ['base-uri', ["'none'"]],
  ['frame-ancestors', ["'self'"]],
];

/** The site's policy with the sources its integrations' scripts need added (directives they name that are not there start from 'none'). */
function cspWith(extra: Map<string, Set<string>>): string {
  const directives = new Map(BASE_CSP.map(([name, sources]) => [name, [...sources]]));
  for (const [name, sources] of extra) {
    const current = directives.get(name)?.filter((s) => s !== "'none'") ?? [];
    directives.set(name, [...current, ...[...sources].filter((s) => !current.includes(s))]);
  }
  return [...directives].map(([name, sources]) => `${name} ${sources.join(' ')}`).join('; ');
}

const CSP = cspWith(new Map());

const require = createRequire(import.meta.url);
const KATEX_DIST = join(dirname(require.resolve('katex/package.json')), 'dist');

const INLINE_TYPES = new Set(['image/png', 'image/jpeg', 'image/gif', 'image/webp', 'application/pdf', 'text/plain']);

interface SiteContext extends Published {
  base: string;
  rest: string;
}

function headers(reply: FastifyReply, site: SiteRow, csp: string) {
  reply.header('content-security-policy', csp).header('x-content-type-options', 'nosniff').header('referrer-policy', 'strict-origin-when-cross-origin');
  if (site.visibility !== 'public') reply.header('x-robots-tag', 'noindex');
}

function page(reply: FastifyReply, status: number, title: string, message: string) {
  return reply
    .code(status)
    .type('text/html; charset=utf-8')
    .header('content-security-policy', CSP)
    .header('x-content-type-options', 'nosniff')
    .header('cache-control', 'no-store')
    .send(`<!doctype html><html lang="en"><head><meta charset="utf-8"><title>${escapeHtml(title)}</title></head><body><main><h1>${escapeHtml(title)}</h1><p>${escapeHtml(message)}</p></main></body></html>`);
}

/**
 * Sites as last read, for SITE_CACHE_TTL_MS: within that time a page served from the render cache
 * costs no query at all. A merge, a publish or a settings change empties it in every process as
 * soon as the bus says so (`SITES_TOPIC`, sent by src/routes.ts and the git import); the TTL only
 * bounds what a lost message could leave (0 reads the site on every request).
 */
interface Published {
  site: SiteRow;
  structure: SiteStructure;
  integrations: SiteIntegration[];
  /** The sources its integrations' scripts add to the pages' policy. */
  sources: Map<string, Set<string>>;
  /** The Content-Security-Policy of its pages (its integrations' scripts allowed). */
  csp: string;
}

const sites = new Map<string, { at: number; value: Published | undefined }>();
/** Counts the invalidations heard: a read that started before one is not cached (it may predate the change). */
let generation = 0;

async function readPublished(services: Services, orgKey: string, basename: string): Promise<Published | undefined> {
  const found = await publishedSiteAt(services.db, orgKey, basename);
  if (!found) return undefined;
  const integrations = await siteIntegrations(services.db, found.site);
  const sources = scriptSources(services.config.publicUrl, integrations);
  return { ...found, integrations, sources, csp: cspWith(sources) };
}

export async function publishedSite(services: Services, orgKey: string, basename: string): Promise<Published | undefined> {
  const ttl = services.config.siteCacheTtlMs;
  const key = `${orgKey}/${basename}`;
  const now = Date.now();
  const hit = sites.get(key);
  if (ttl > 0 && hit && now - hit.at < ttl) return hit.value;
  const started = generation;
  const value = await readPublished(services, orgKey, basename);
  if (ttl > 0 && started === generation) {
    sites.set(key, { at: now, value });
    if (sites.size > 10_000) sites.delete(sites.keys().next().value!);
  }
  return value;
}

async function serveAsset(reply: FastifyReply, services: Services, rest: string) {
  if (rest === '_folio/site.css') return reply.type('text/css; charset=utf-8').header('cache-control', 'public, max-age=3600').send(SITE_CSS);
  if (rest === '_folio/site.js') return reply.type('text/javascript; charset=utf-8').header('cache-control', 'public, max-age=3600').send(SITE_JS);
  if (rest.startsWith('_folio/katex/')) {
    const file = normalize(rest.slice('_folio/katex/'.length));
    if (file.startsWith('..') || !/^(katex\.min\.css|fonts\/[\w.-]+\.(woff2?|ttf))$/.test(file)) return undefined;
    const type = file.endsWith('.css') ? 'text/css; charset=utf-8' : file.endsWith('.ttf') ? 'font/ttf' : file.endsWith('.woff') ? 'font/woff' : 'font/woff2';
    return reply.type(type).header('cache-control', 'public, max-age=86400').send(await readFile(join(KATEX_DIST, file)));
  }
  const files = /^_folio\/files\/([A-Za-z0-9_-]{10,100})\/([^/]+)$/.exec(rest);
  if (files) {
    if ((await services.blobs.size(files[1]!)) === undefined) return undefined;
    const name = decodeURIComponent(files[2]!);
    const type = typeFor(name);
    // Only a few harmless types are shown inline; anything else (HTML, SVG) downloads, in a sandbox.
    return sendBlob(reply, services.blobs, files[1]!, {
      contentType: type,
      disposition: contentDisposition(INLINE_TYPES.has(type) ? 'inline' : 'attachment', name),
      headers: { 'content-security-policy': "default-src 'none'; sandbox", 'x-content-type-options': 'nosniff', 'cache-control': 'public, max-age=31536000, immutable' },
    });
  }
  return undefined;
}

function typeFor(name: string): string {
  const ext = name.split('.').pop()?.toLowerCase() ?? '';
  return (
    { png: 'image/png', jpg: 'image/jpeg', jpeg: 'image/jpeg', gif: 'image/gif', webp: 'image/webp', pdf: 'application/pdf', txt: 'text/plain' }[ext] ??
    'application/octet-stream'
  );
}

/** A site's address and the path within it (absent at the site's root without a slash). */
const SitePathParams = Type.Object({ ...SiteAddress.properties, '*': Type.Optional(Type.String()) });
/** `q`: the words of the site's search page, taken as they come (text, or several joined). */
const SiteQuery = Type.Object({ q: Type.Optional(Type.Unknown()) });

export async function publishedSiteRoutes(app: FolioApp, services: Services): Promise<void> {
  // Any message on the topic (content, hosts, resync) may change what a site shows.
  services.bus.subscribe(SITES_TOPIC, () => {
    generation++;
    sites.clear();
  });
  const handler = async (req: FastifyRequest, reply: FastifyReply, params: Static<typeof SitePathParams>, query: Static<typeof SiteQuery>) => {
    // API paths that match no route stay API answers (JSON), not site pages.
    if (params.orgKey === 'v1') return reply.callNotFound();
    const published = await publishedSite(services, params.orgKey, params.basename);
    if (!published) return page(reply, 404, 'Not found', 'There is no published site at this address.');
    const base = siteBase(req, params);
    const rest = params['*'] ?? (req.url.split('?')[0]!.endsWith('/') ? '' : undefined);
    if (rest === undefined) return reply.redirect(base, 301);
    return serveSite(req, reply, services, { ...published, base, rest }, query);
  };
  const config = { public: true };
  const schema = { hide: true, params: SitePathParams, querystring: SiteQuery };
  app.get('/:orgKey/:basename', { config, schema }, (req, reply) => handler(req, reply, req.params, req.query));
  app.get('/:orgKey/:basename/*', { config, schema }, (req, reply) => handler(req, reply, req.params, req.query));
  await app.register(async (scope) =>
    readerEventRoutes(scope, services, async (req, address) => {
      const published = await publishedSite(services, address.orgKey, address.basename);
      return published && { ...published, base: siteBase(req, address) };
    }),
  );
}

/** On a site's own hostname its links start at the root; at PUBLIC_URL, under `/<org>/<basename>/`. */
export function siteBase(req: FastifyRequest, params: { orgKey: string; basename: string }): string {
  return siteHostOf(req.raw) ? '/' : `/${encodeURIComponent(params.orgKey)}/${encodeURIComponent(params.basename)}/`;
}

/** The page's policy, with the origins of the frames its integration blocks embed. */
function pageCsp(published: Published, frames: string[]): string {
  if (!frames.length) return published.csp;
  const sources = new Map([...published.sources].map(([k, v]) => [k, new Set(v)]));
  sources.set('frame-src', new Set([...(sources.get('frame-src') ?? []), ...frames]));
  return cspWith(sources);
}

async function serveSite(req: FastifyRequest, reply: FastifyReply, services: Services, context: SiteContext, query: Static<typeof SiteQuery>) {
  const { site, structure, integrations, csp, base, rest } = context;
  headers(reply, site, csp);
  if (rest.startsWith('_folio/site.') || rest.startsWith('_folio/katex/')) return (await serveAsset(reply, services, rest)) ?? page(reply, 404, 'Not found', 'No such file.');
  if (rest === 'robots.txt') {
    const allowed = site.visibility === 'public';
    return reply.type('text/plain; charset=utf-8').send(allowed ? `User-agent: *\nAllow: /\nSitemap: ${services.config.publicUrl}${base}sitemap.xml\n` : 'User-agent: *\nDisallow: /\n');
  }

  const secure = services.config.publicUrl.startsWith('https:');
  const outcome = await visitorOf(services.db, site, req, base, secure);
  if (outcome.kind === 'store') return sendVisitorRedirect(reply, outcome);
  if (outcome.kind === 'denied') {
    if (outcome.fallback && /^https?:/i.test(outcome.fallback)) return reply.code(302).header('location', outcome.fallback).send();
    if (site.visibility === 'visitor-auth') return page(reply, 401, 'Sign in required', 'This site is for signed-in readers: open it from the link your organization gave you.');
    return page(reply, 404, 'Not found', 'There is no published site at this address.');
  }
  const visitor = outcome.visitor;
  // Pages that depend on who reads them must not be shared by caches.
  reply.header('cache-control', site.visibility === 'public' || site.visibility === 'unlisted' ? 'public, max-age=0, must-revalidate' : 'private, no-cache');
  reply.header('vary', 'cookie');

  if (rest.startsWith('_folio/files/')) return (await serveAsset(reply, services, rest)) ?? page(reply, 404, 'Not found', 'No such file.');
  const path = decodeURIComponent(rest.split('?')[0]!.replace(/\/+$/, ''));

  if (path === 'sitemap.xml') return sitemap(reply, services, site, base, structure, visitor);
  if (path === 'llms.txt' || path === 'llms-full.txt') return llms(reply, services, site, base, structure, visitor, path === 'llms-full.txt');
  if (path === 'search') return search(reply, services, context, visitor, query.q);
  if (path === 'search.json') return search(reply, services, context, visitor, query.q, true);

  const markdown = path.endsWith('.md');
  const located = locate(structure, markdown ? path.slice(0, -3) : path, visitor);
  if (located) {
    const request: PageRequest = { db: services.db, blobs: services.blobs, urls: services.urls, site, base, structure, located, visitor, integrations, renderBlock: (space, block) => renderIntegrationBlock(services, space, block) };
    const nav = await navigationFor(request);
    const found = pageAt(nav, located.pagePath, visitor);
    if (found) {
      if (markdown) return reply.type('text/markdown; charset=utf-8').send(await pageMarkdown(services.db, nav, found, visitor));
      const rendered = await renderPage(request, nav, found);
      if (rendered.noIndex) reply.header('x-robots-tag', 'noindex');
      if (rendered.frames.length) reply.header('content-security-policy', pageCsp(context, rendered.frames));
      reply.header('etag', rendered.etag);
      if (req.headers['if-none-match'] === rendered.etag) return reply.code(304).send();
      return reply.type('text/html; charset=utf-8').send(rendered.html);
    }
    // A page that moved in a git-synced space: its repository's .gitbook.yaml says where.
    const movedTo = await gitRedirectPage(services.db, located.siteSpace.space, located.pagePath);
    const moved = movedTo ? nav.byId.get(movedTo) : undefined;
    if (moved && pageAt(nav, moved.path, visitor)) return reply.code(301).header('location', `${base}${located.prefix}${moved.path}${markdown ? '.md' : ''}`).send();
  }
  const redirect = await matchRedirect(services.db, site, `/${path}`);
  if (redirect) {
    const target = await redirectTarget(services, site, redirect.row, redirect.suffix);
    if (target) return reply.code(301).header('location', target).send();
  }
  return page(reply, 404, 'Page not found', 'This page does not exist, or you cannot see it.');
}

async function sitemap(reply: FastifyReply, services: Services, site: SiteRow, base: string, structure: SiteStructure, visitor: Visitor) {
  const pages = (await everyPage(services, site, base, structure, visitor)).filter((p) => !p.page.entry.noIndex && !p.page.entry.noRobotsIndex);
  const xml = `<?xml version="1.0" encoding="UTF-8"?>\n<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">\n${pages.map((p) => `  <url><loc>${escapeHtml(p.url)}</loc></url>`).join('\n')}\n</urlset>\n`;
  return reply.type('application/xml; charset=utf-8').send(xml);
}

async function llms(reply: FastifyReply, services: Services, site: SiteRow, base: string, structure: SiteStructure, visitor: Visitor, full: boolean) {
  const pages = await everyPage(services, site, base, structure, visitor);
  if (!full) {
    const lines = [`# ${site.title}`, '', ...pages.map((p) => `- [${p.title}](${p.url}.md)${p.description ? `: ${p.description}` : ''}`), ''];
    return reply.type('text/plain; charset=utf-8').send(lines.join('\n'));
  }
  const parts: string[] = [];
  for (const p of pages) parts.push(await pageMarkdown(services.db, p.nav, p.page, visitor));
  return reply.type('text/plain; charset=utf-8').send(parts.join('\n\n---\n\n'));
}

/** Text with its matches wrapped in <mark>, escaped. */
function marked(text: string, highlights: Range[]): string {
  let html = '';
  let at = 0;
  for (const h of highlights) {
    if (h.start < at) continue;
    html += `${escapeHtml(text.slice(at, h.start))}<mark>${escapeHtml(text.slice(h.start, h.end))}</mark>`;
    at = h.end;
  }
  return html + escapeHtml(text.slice(at));
}

async function search(reply: FastifyReply, services: Services, context: SiteContext, visitor: Visitor, q: unknown, json = false) {
  const { site, structure, integrations, base } = context;
  const query = String(q ?? '').slice(0, 512).trim();
  const results = await readerResults(services, context, visitor, query);
  if (json) return reply.type('application/json; charset=utf-8').header('x-robots-tag', 'noindex').send({ query, results });
  const located = locate(structure, '', visitor);
  if (!located) return page(reply, 404, 'Not found', 'This site has no content yet.');
  const request: PageRequest = { db: services.db, blobs: services.blobs, urls: services.urls, site, base, structure, located, visitor, integrations };
  const nav = await navigationFor(request);
  const first = pageAt(nav, '', visitor);
  if (!first) return page(reply, 404, 'Not found', 'This site has no content yet.');
  const items = results.map(
    (r) =>
      `<li><a href="${escapeHtml(r.url)}">${escapeHtml(r.title)}${r.section && r.section !== r.title ? ` <span class="search-section">› ${escapeHtml(r.section)}</span>` : ''}</a><p>${marked(r.body, r.highlights)}</p></li>`,
  );
  const html = query
    ? `<h2>Results for “${escapeHtml(query)}”</h2>${items.length ? `<ol class="search-results">${items.join('')}</ol>` : '<p>No page matches.</p>'}`
    : '<p>Type words to search for.</p>';
  const rendered = await renderPage(request, nav, first, query);
  // The search page reuses the site's frame around the results.
  const framed = rendered.html.replace(/<article class="page">[\s\S]*<\/article>/, () => `<article class="page search-page"><h1>Search</h1>${html}</article>`);
  return reply.type('text/html; charset=utf-8').header('x-robots-tag', 'noindex').send(framed);
}
