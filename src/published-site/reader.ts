import type { Services } from '../platform/context.ts';
import type { SiteRow } from '../platform/db/schema.ts';
import { matchingSections, pageSnippet } from '../search/service.ts';
import { readerHits } from './reader-search.ts';
import type { Range } from '../search/highlight.ts';
import type { SiteIntegration } from '../integrations/site-scripts.ts';
import { locate, navigationFor, pageAt, reachableSiteSpaces, visibleTreeOf, type SiteStructure } from './published.ts';
import type { Navigation, NavPage } from './navigation.ts';
import type { Visitor } from './visitor.ts';

/**
 * What a visitor may read of a published site, apart from how it is sent: every page, the search
 * results, one page by its path, the table of contents. The site's pages, llms.txt, sitemap and
 * search page use these, and so does the site's MCP server (src/mcp/site-server.ts).
 */

/** A published site as a visitor reaches it: `base` is the absolute path of its root, ending with '/'. */
export interface SiteReading {
  site: SiteRow;
  structure: SiteStructure;
  integrations: SiteIntegration[];
  base: string;
}

/**
 * Every page a visitor may read, with its URL, across the site spaces the visitor can reach (those
 * `only` keeps, by site space id, when given).
 */
export async function everyPage(services: Services, site: SiteRow, base: string, structure: SiteStructure, visitor: Visitor, only?: (siteSpaceId: string) => boolean) {
  const out: { url: string; title: string; description?: string | undefined; page: NavPage; nav: Navigation; spaceId: string }[] = [];
  for (const located of reachableSiteSpaces(structure, visitor)) {
    if (only && !only(located.siteSpace.id)) continue;
    const nav = await navigationFor({ db: services.db, blobs: services.blobs, urls: services.urls, site, base, structure, located, visitor, integrations: [] });
    for (const p of nav.order) {
      if (!pageAt(nav, p.path, visitor)) continue;
      out.push({ url: `${services.config.publicUrl}${base}${located.prefix}${p.path}`, title: p.title, description: p.entry.description, page: p, nav, spaceId: located.siteSpace.space.id });
    }
  }
  return out;
}

/** The page at a site-relative path (no `.md`) that a visitor may read, with its navigation; undefined when none. */
export async function pageAtPath(services: Services, { site, structure, integrations, base }: SiteReading, path: string, visitor: Visitor) {
  const located = locate(structure, path.replace(/^\/+|\/+$/g, ''), visitor);
  if (!located) return undefined;
  const nav = await navigationFor({ db: services.db, blobs: services.blobs, urls: services.urls, site, base, structure, located, visitor, integrations });
  const page = pageAt(nav, located.pagePath, visitor);
  return page && { located, nav, page };
}

export interface TocEntry {
  title: string;
  /** Site-relative path of the page (a group's first page; absent for a link out of the site). */
  path?: string;
  kind: 'page' | 'group' | 'link';
  /** The address of a link out of the site. */
  url?: string;
  children: TocEntry[];
}

/** The table of contents a visitor sees: each site space they reach (section, variant), then its page tree as the site's navigation shows it. */
export async function tableOfContents(services: Services, { site, structure, integrations, base }: SiteReading, visitor: Visitor) {
  const out: { section?: string; space: string; path: string; pages: TocEntry[] }[] = [];
  for (const located of reachableSiteSpaces(structure, visitor)) {
    const nav = await navigationFor({ db: services.db, blobs: services.blobs, urls: services.urls, site, base, structure, located, visitor, integrations });
    const entry = (p: NavPage): TocEntry => {
      const target = p.entry.type === 'link' ? p.entry.target : undefined;
      const kind = p.entry.type === 'group' ? 'group' : p.entry.type === 'link' ? 'link' : 'page';
      const path = p.linkTo ? p.linkTo.page.path : kind === 'link' ? undefined : nav.byPath.has(p.path) ? p.path : undefined;
      return {
        title: p.title,
        kind,
        ...(path !== undefined ? { path: `${located.prefix}${path}` } : {}),
        ...(target && target.kind === 'url' ? { url: target.url } : {}),
        children: p.children.map(entry),
      };
    };
    out.push({ ...(located.section && structure.sections.length > 1 ? { section: located.section.title } : {}), space: located.siteSpace.space.title, path: located.prefix, pages: visibleTreeOf(nav, visitor).map(entry) });
  }
  return out;
}

/** Results a reader's search shows; hits the reader may not see are skipped, so a few more are read. */
const SITE_RESULTS = 20;

/** What a reader's search finds (reader-search.ts), each page with its best matching section. */
export async function readerResults(services: Services, { site, structure, integrations, base }: SiteReading, visitor: Visitor, query: string) {
  const hits = await readerHits({ db: services.db, blobs: services.blobs, urls: services.urls, site, structure, base, integrations }, visitor, query, SITE_RESULTS);
  return hits.map(({ hit, query: parsed, path }): { title: string; url: string; section?: string | undefined; body: string; highlights: Range[] } => {
    const url = `${base}${path}`;
    const best = matchingSections(hit, parsed, 1)[0];
    if (best) return { title: hit.title, url: best.id ? `${url}#${encodeURIComponent(best.id)}` : url, section: best.title || undefined, body: best.body, highlights: best.highlights };
    return { title: hit.title, url, ...pageSnippet(hit, parsed) };
  });
}

