import type { Blobs } from '../platform/blob-store.ts';
import type { Db } from '../platform/db/database.ts';
import type { SiteIntegration } from '../integrations/site-scripts.ts';
import type { SiteRow } from '../platform/db/schema.ts';
import type { Urls } from '../platform/urls.ts';
import { searchHits, stillMatches } from '../search/service.ts';
import type { ParsedQuery } from '../search/segment.ts';
import type { Hit } from '../search/store.ts';
import type { Navigation, NavPage } from './navigation.ts';
import { navigationFor, pageAt, reachableSiteSpaces, visibleSearchText, type Located, type SiteStructure } from './published.ts';
import type { Visitor } from './visitor.ts';

/**
 * What a reader may find on a published site: the same engine as the API's searches, over the
 * site spaces this visitor can reach, then only the pages they may read there (hidden pages and
 * pages whose conditions leave this visitor out are dropped). The site's search page and Ask
 * (src/ask) both read through here, so what one finds the other may quote, and nothing more.
 */

export interface ReaderSite {
  db: Db;
  blobs: Blobs;
  urls: Urls;
  site: SiteRow;
  structure: SiteStructure;
  /** Absolute path of the site's root, ending with '/'. */
  base: string;
  /** The site's integrations (their blocks in the pages); none when only the text matters. */
  integrations?: SiteIntegration[];
}

export interface ReaderHit {
  hit: Hit;
  /** The query as the engine read it (for highlighting and matching sections). */
  query: ParsedQuery;
  located: Located;
  nav: Navigation;
  page: NavPage;
  /** The page's path from the site's root (its site space's prefix and its path), without the base. */
  path: string;
}

/** Rounds of search pages read at most while hits are dropped (hidden, or not for this visitor). */
const ROUNDS = 5;

/** The site spaces a visitor reaches, by space id (those `only` keeps: a scope, by site space id). */
export function reachableSpaces(reader: ReaderSite, visitor: Visitor, only?: (siteSpaceId: string) => boolean): Map<string, Located> {
  return new Map(
    reachableSiteSpaces(reader.structure, visitor)
      .filter((l) => !only || only(l.siteSpace.id))
      .map((l) => [l.siteSpace.space.id, l]),
  );
}

/**
 * A hit as the visitor may read it on the site: undefined when its page is hidden or left out by
 * its conditions; its sections narrowed to what the visitor sees when some text is conditional
 * (`narrowed` says so). `navs` caches the navigation of each site space between calls.
 */
export async function readerView(reader: ReaderSite, visitor: Visitor, hit: Hit, located: Located, navs: Map<string, Navigation>) {
  const { db, blobs, urls, site, structure, base, integrations = [] } = reader;
  let nav = navs.get(hit.space_id);
  if (!nav) {
    nav = await navigationFor({ db, blobs, urls, site, base, structure, located, visitor, integrations });
    navs.set(hit.space_id, nav);
  }
  const target = pageAt(nav, hit.path, visitor);
  if (!target || target.hidden) return undefined;
  // The index holds a page's whole text. Text inside `if` blocks this visitor does not meet is
  // neither shown nor found: such a page is read as the visitor may read it.
  const visible = await visibleSearchText(db, nav, target, visitor);
  return { hit: visible ? { ...hit, sections: visible.sections } : hit, narrowed: !!visible, located, nav, page: target, path: `${located.prefix}${hit.path}` };
}

/** `only`: keeps some of the site spaces the visitor can reach (a scope, by site space id). */
export async function readerHits(
  reader: ReaderSite,
  visitor: Visitor,
  query: string,
  max: number,
  only?: (siteSpaceId: string) => boolean,
  /** `question`: ranked as a reader's question (Ask), see searchHits. */
  opts: { question?: boolean } = {},
): Promise<ReaderHit[]> {
  const reachable = reachableSpaces(reader, visitor, only);
  const results: ReaderHit[] = [];
  if (!query || !reachable.size) return results;
  const navs = new Map<string, Navigation>();
  let page: string | undefined;
  for (let round = 0; round < ROUNDS && results.length < max; round++) {
    const found = await searchHits(reader.db, query, [...reachable.keys()], { limit: max * 2, ...(page ? { page } : {}), ...(opts.question ? { question: true } : {}) });
    for (const hit of found.rows) {
      const view = await readerView(reader, visitor, hit, reachable.get(hit.space_id)!, navs);
      if (!view) continue;
      // A page read narrowed to what the visitor sees is kept only when the query still matches it.
      if (view.narrowed && !stillMatches(view.hit, found.query)) continue;
      results.push({ hit: view.hit, query: found.query, located: view.located, nav: view.nav, page: view.page, path: view.path });
      if (results.length === max) break;
    }
    if (!found.next) break;
    page = found.next.page;
  }
  return results;
}
