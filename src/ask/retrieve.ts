import type { Expression } from 'kysely';
import type { Db } from '../platform/db/database.ts';
import type { Urls } from '../platform/urls.ts';
import { matchingSections, searchHits } from '../search/service.ts';
import type { ParsedQuery } from '../search/segment.ts';
import type { Hit } from '../search/store.ts';
import { readerHits, type ReaderSite } from '../published-site/reader-search.ts';
import type { Visitor } from '../published-site/visitor.ts';
import { spaceRevisions } from './store.ts';

/**
 * What Ask may quote: passages of the search engine's hits (src/search), taken only from what the
 * caller may read. A member's passages come from the spaces the organization's search would show
 * them; a site visitor's from the pages the site shows that visitor (the published site's own
 * rules: published-site/reader-search.ts). Filtering happens here, before any model sees a word: a
 * page the caller cannot read never becomes a passage, whatever a question or a page says.
 */

export interface Passage {
  spaceId: string;
  pageId: string;
  revisionId: string;
  /** The page's title, and the heading of the section quoted ('' for the page's opening). */
  title: string;
  sectionId: string;
  sectionTitle: string;
  text: string;
  /** Where a reader opens it: the app for members, the site for visitors. */
  url: string;
}

/** Pages read per question, passages per page, characters per passage. */
export const PAGES = 6;
const SECTIONS_PER_PAGE = 2;
const PASSAGE_CHARS = 1500;

function clip(text: string, max: number): string {
  const clean = text.trim();
  if (clean.length <= max) return clean;
  const cut = clean.slice(0, max);
  const stop = Math.max(cut.lastIndexOf('. '), cut.lastIndexOf('\n'));
  return `${stop > max / 2 ? cut.slice(0, stop + 1) : cut}…`;
}

type PageOfPassage = Pick<Passage, 'spaceId' | 'pageId' | 'revisionId' | 'title' | 'url'>;

/** The best sections of a hit as passages (whole sections, clipped), else its description or opening. */
function passagesOf(hit: Hit, query: ParsedQuery, page: PageOfPassage): Passage[] {
  const out: Passage[] = [];
  for (const m of matchingSections(hit, query, SECTIONS_PER_PAGE)) {
    const section = hit.sections.find((s) => s.id === m.id && s.title === m.title) ?? m;
    if (!section.body.trim()) continue;
    out.push({ ...page, sectionId: section.id, sectionTitle: section.title, text: clip(section.body, PASSAGE_CHARS), url: section.id ? `${page.url}#${encodeURIComponent(section.id)}` : page.url });
  }
  if (out.length === 0) {
    const text = [hit.description, hit.sections[0]?.body ?? ''].filter(Boolean).join('\n\n');
    if (text.trim()) out.push({ ...page, sectionId: hit.sections[0]?.id ?? '', sectionTitle: hit.sections[0]?.title ?? '', text: clip(text, PASSAGE_CHARS) });
  }
  return out;
}

/**
 * Shorter queries for a question no page matches as a whole (search requires every word): its
 * three longest words, then two, then the longest alone.
 */
export function fallbackQueries(question: string): string[] {
  const words = [...new Set(question.toLowerCase().match(/[\p{L}\p{N}][\p{L}\p{N}_-]*/gu) ?? [])].filter((w) => w.length > 3);
  const longest = [...words].sort((a, b) => b.length - a.length);
  const out: string[] = [];
  for (const n of [3, 2, 1]) if (longest.length >= n) out.push(longest.slice(0, n).join(' '));
  return [...new Set(out)].filter((q) => q !== question.toLowerCase().trim());
}

/** Passages for a member: among `spaces` (the caller's readable spaces, as a subquery or a list). */
export async function memberPassages(db: Db, urls: Urls, spaces: Expression<unknown> | string[], question: string): Promise<Passage[]> {
  let found = await searchHits(db, question, spaces, { limit: PAGES });
  for (const words of fallbackQueries(question)) {
    if (found.rows.length) break;
    found = await searchHits(db, words, spaces, { limit: PAGES });
  }
  const revisions = await spaceRevisions(db, [...new Set(found.rows.map((r) => r.space_id))]);
  return found.rows.flatMap((hit) =>
    passagesOf(hit, found.query, { spaceId: hit.space_id, pageId: hit.page_id, revisionId: revisions.get(hit.space_id) ?? '', title: hit.title, url: urls.pageApp({ id: hit.space_id }, hit.path) }),
  );
}

/** Passages for a visitor of a published site: the pages the site shows them (those `only` keeps). */
export async function visitorPassages(reader: ReaderSite, visitor: Visitor, question: string, only?: (siteSpaceId: string) => boolean): Promise<Passage[]> {
  let hits = await readerHits(reader, visitor, question, PAGES, only);
  for (const words of fallbackQueries(question)) {
    if (hits.length) break;
    hits = await readerHits(reader, visitor, words, PAGES, only);
  }
  return hits.flatMap(({ hit, query, located, path }) =>
    passagesOf(hit, query, { spaceId: hit.space_id, pageId: hit.page_id, revisionId: located.siteSpace.space.revision_id, title: hit.title, url: reader.urls.site(`${reader.base}${path}`) }),
  );
}
