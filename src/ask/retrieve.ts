import type { Expression } from 'kysely';
import type { Db } from '../platform/db/database.ts';
import type { Urls } from '../platform/urls.ts';
import { matchingSections, searchHits } from '../search/service.ts';
import type { ParsedQuery } from '../search/segment.ts';
import type { Hit } from '../search/store.ts';
import { readerHits, readerView, reachableSpaces, type ReaderSite } from '../published-site/reader-search.ts';
import type { Navigation } from '../published-site/navigation.ts';
import type { Located } from '../published-site/published.ts';
import type { EngineConfig } from '../ai/client.ts';
import { pagesAsHits } from './vector-store.ts';
import { nearestSections, questionVector, type NearSection } from './vectors.ts';
import type { Visitor } from '../published-site/visitor.ts';
import { spaceRevisions } from './store.ts';

/**
 * What Ask may quote: passages of the search engine's hits (src/search), fused with the sections
 * nearest to the question by vector similarity when an embedding model is configured (vectors.ts,
 * reciprocal rank fusion), taken only from what the caller may read. A member's passages come
 * from the spaces the organization's search would show them; a site visitor's from the pages the
 * site shows that visitor (the published site's own rules: published-site/reader-search.ts). Filtering happens here, before any model sees a word: a
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

/** A section of a page by its id and heading (both: ids are not unique in every document). */
type SectionKey = { id: string; title: string };

/**
 * The passages of a page: the sections that match the query (when the search engine found it),
 * then those whose vectors are closest to the question, `SECTIONS_PER_PAGE` at most (whole
 * sections, clipped); none of either: its description or opening.
 */
function passagesOf(hit: Hit, query: ParsedQuery | undefined, page: PageOfPassage, near: SectionKey[] = []): Passage[] {
  const out: Passage[] = [];
  const chosen = [...(query ? matchingSections(hit, query, SECTIONS_PER_PAGE) : []), ...near];
  for (const m of chosen) {
    if (out.length === SECTIONS_PER_PAGE) break;
    const section = hit.sections.find((s) => s.id === m.id && s.title === m.title);
    if (!section?.body.trim() || out.some((p) => p.sectionId === section.id && p.sectionTitle === section.title)) continue;
    out.push({ ...page, sectionId: section.id, sectionTitle: section.title, text: clip(section.body, PASSAGE_CHARS), url: section.id ? `${page.url}#${encodeURIComponent(section.id)}` : page.url });
  }
  if (out.length === 0) {
    const text = [hit.description, hit.sections[0]?.body ?? ''].filter(Boolean).join('\n\n');
    if (text.trim()) out.push({ ...page, sectionId: hit.sections[0]?.id ?? '', sectionTitle: hit.sections[0]?.title ?? '', text: clip(text, PASSAGE_CHARS) });
  }
  return out;
}


/** The constant of reciprocal rank fusion: a page's score is the sum of 1 / (RRF_K + rank) over the rankings it is in. */
const RRF_K = 60;
/** Sections taken from the vector ranking (pages are formed from them, best section first). */
const NEAR_SECTIONS = 40;

const keyOf = (spaceId: string, pageId: string) => `${spaceId}\0${pageId}`;

/**
 * Reciprocal rank fusion of rankings of pages (keys, best first): the `max` best pages. A page
 * near the top of either ranking comes first; one in both climbs above pages in only one.
 */
export function fuseRankings(rankings: string[][], max: number): string[] {
  const scores = new Map<string, number>();
  for (const ranking of rankings) ranking.forEach((key, i) => scores.set(key, (scores.get(key) ?? 0) + 1 / (RRF_K + i + 1)));
  return [...scores].sort((a, b) => b[1] - a[1]).slice(0, max).map(([key]) => key);
}

/** Pages of the nearest sections, best first, each with its nearest sections. */
function pagesOfSections(near: NearSection[]): Map<string, SectionKey[]> {
  const pages = new Map<string, SectionKey[]>();
  for (const s of near) {
    const key = keyOf(s.space_id, s.page_id);
    const list = pages.get(key) ?? [];
    list.push({ id: s.section_id, title: s.section_title });
    pages.set(key, list);
  }
  return pages;
}

/** What retrieval reads beside the search index: the engine settings, for the question's vector. */
export type RetrievalConfig = EngineConfig;

/**
 * The sections nearest to the question among `spaces` (already the caller's), or none without an
 * embedding model. An engine that fails here leaves the answer to the search engine alone: Ask
 * keeps answering (the failure is reported through `onError`).
 */
async function nearSections(db: Db, config: RetrievalConfig | undefined, spaces: Expression<unknown> | string[], question: string, onError?: (err: unknown) => void): Promise<NearSection[] | undefined> {
  if (!config?.aiEmbeddingModel) return undefined;
  try {
    const vector = await questionVector(config, question);
    return vector ? await nearestSections(db, spaces, vector, NEAR_SECTIONS) : undefined;
  } catch (err) {
    onError?.(err);
    return undefined;
  }
}


export interface RetrieveOptions {
  /** Engine settings: with AI_EMBEDDING_MODEL, vector similarity joins the search engine's ranking. */
  config?: RetrievalConfig | undefined;
  onError?: (err: unknown) => void;
}

/** Passages for a member: among `spaces` (the caller's readable spaces, as a subquery or a list). */
export async function memberPassages(db: Db, urls: Urls, spaces: Expression<unknown> | string[], question: string, opts: RetrieveOptions = {}): Promise<Passage[]> {
  const nearing = nearSections(db, opts.config, spaces, question, opts.onError);
  const limit = opts.config?.aiEmbeddingModel ? PAGES * 2 : PAGES;
  let query: ParsedQuery | undefined;
  const found = await searchHits(db, question, spaces, { limit, question: true });
  query = found.query;
  const hits = found.rows;
  const near = await nearing;
  let chosen: { hit: Hit; query: ParsedQuery | undefined; near: SectionKey[] }[];
  if (!near) {
    chosen = hits.map((hit) => ({ hit, query, near: [] }));
  } else {
    const nearPages = pagesOfSections(near);
    const byKey = new Map<string, Hit>(hits.map((h) => [keyOf(h.space_id, h.page_id), h]));
    const searched = new Set(byKey.keys());
    const fused = fuseRankings([hits.map((h) => keyOf(h.space_id, h.page_id)), [...nearPages.keys()]], PAGES);
    const missing = fused.filter((k) => !byKey.has(k)).map((k) => ({ space_id: k.split('\0')[0]!, page_id: k.split('\0')[1]! }));
    for (const hit of await pagesAsHits(db, missing)) byKey.set(keyOf(hit.space_id, hit.page_id), hit);
    chosen = fused.flatMap((k) => {
      const hit = byKey.get(k);
      if (!hit) return [];
      return [{ hit, query: searched.has(k) ? query : undefined, near: nearPages.get(k) ?? [] }];
    });
  }
  const revisions = await spaceRevisions(db, [...new Set(chosen.map((c) => c.hit.space_id))]);
  return chosen.flatMap(({ hit, query: q, near: n }) =>
    passagesOf(hit, q, { spaceId: hit.space_id, pageId: hit.page_id, revisionId: revisions.get(hit.space_id) ?? '', title: hit.title, url: urls.pageApp({ id: hit.space_id }, hit.path) }, n),
  );
}

/** Passages for a visitor of a published site: the pages the site shows them (those `only` keeps). */
export async function visitorPassages(reader: ReaderSite, visitor: Visitor, question: string, only?: (siteSpaceId: string) => boolean, opts: RetrieveOptions = {}): Promise<Passage[]> {
  const reachable = reachableSpaces(reader, visitor, only);
  // Vectors only of the site spaces this visitor reaches; each page found is then read as the
  // visitor may read it (hidden pages, unmet conditions), like the search engine's hits.
  const nearing = reachable.size ? nearSections(reader.db, opts.config, [...reachable.keys()], question, opts.onError) : Promise.resolve(undefined);
  const limit = opts.config?.aiEmbeddingModel ? PAGES * 2 : PAGES;
  const hits = await readerHits(reader, visitor, question, limit, only, { question: true });
  const near = await nearing;
  const pageOf = (r: { hit: Hit; located: Located; path: string }) => ({
    spaceId: r.hit.space_id,
    pageId: r.hit.page_id,
    revisionId: r.located.siteSpace.space.revision_id,
    title: r.hit.title,
    url: reader.urls.site(`${reader.base}${r.path}`),
  });
  if (!near) return hits.slice(0, PAGES).flatMap((r) => passagesOf(r.hit, r.query, pageOf(r)));
  const nearPages = pagesOfSections(near);
  const byKey = new Map<string, { hit: Hit; query: ParsedQuery | undefined; located: Located; path: string }>(hits.map((r) => [keyOf(r.hit.space_id, r.hit.page_id), r]));
  const fused = fuseRankings([hits.map((r) => keyOf(r.hit.space_id, r.hit.page_id)), [...nearPages.keys()]], PAGES * 2);
  const missing = fused.filter((k) => !byKey.has(k)).map((k) => ({ space_id: k.split('\0')[0]!, page_id: k.split('\0')[1]! }));
  const navs = new Map<string, Navigation>();
  for (const hit of await pagesAsHits(reader.db, missing)) {
    const key = keyOf(hit.space_id, hit.page_id);
    const located = reachable.get(hit.space_id);
    const view = located && (await readerView(reader, visitor, hit, located, navs));
    if (!view) continue;
    if (view.narrowed) {
      // Part of the page is hidden from this visitor (conditional text): a section counts as near
      // only when the visitor sees all of the text its vector was made from; a page near only
      // through text they cannot see is not theirs to find.
      const seen = (near: SectionKey) => {
        const whole = hit.sections.find((s) => s.id === near.id && s.title === near.title);
        const visible = view.hit.sections.find((s) => s.id === near.id && s.title === near.title);
        return !!whole && !!visible && whole.body === visible.body;
      };
      const kept = (nearPages.get(key) ?? []).filter(seen);
      if (!kept.length) continue;
      nearPages.set(key, kept);
    }
    byKey.set(key, { hit: view.hit, query: undefined, located: view.located, path: view.path });
  }
  return fused
    .filter((k) => byKey.has(k))
    .slice(0, PAGES)
    .flatMap((k) => {
      const r = byKey.get(k)!;
      // Sections the visitor cannot see (conditional text) are not in r.hit.sections: passagesOf never quotes them.
      return passagesOf(r.hit, r.query, pageOf(r), nearPages.get(k) ?? []);
    });
}
