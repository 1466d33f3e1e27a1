import type { Expression } from 'kysely';
import type { Ctx } from '../platform/context.ts';
import type { Db } from '../platform/db/database.ts';
import { BadRequestError, NotFoundError } from '../platform/errors.ts';
import type { PageRequest } from '../platform/paging.ts';
import { orgRoleOf } from '../access/effective.ts';
import { loadSpace } from '../spaces/access.ts';
import { visibleSpaces } from '../spaces/service.ts';
import { findMatches, matcherFor, snippet } from './highlight.ts';
import { searchConfigFor } from './language.ts';
import { parseQuery, type ParsedQuery } from './segment.ts';
import { correctionsOf } from './typos.ts';
import { meaningfulWords, questionRankedHits, rankedHits, searchConfigsOf, vocabularyNear, spaceTitles, type Hit, type SearchPlan } from './store.ts';

/** At most this many matching pages are ranked per query: the cost of ranking stays bounded. */
export const CANDIDATES = 1000;

function offsetOf(page: string | undefined): number {
  if (!page) return 0;
  const n = Number.parseInt(Buffer.from(page, 'base64url').toString(), 10);
  if (!Number.isInteger(n) || n < 0) throw new BadRequestError('Invalid "page" cursor: pass the value of "next.page" from the previous response');
  return n;
}

/**
 * Ranked hits for a query among the spaces `spaceIds` (a subquery or a list): the query is parsed
 * once (phrases, exclusions, words cut by the segmenter, the last one a prefix) and run in the
 * text search configurations of those spaces' languages (see store.ts for matching and ranking).
 */
export async function searchHits(
  db: Db,
  query: string,
  spaces: Expression<unknown> | string[],
  /** `question`: a reader's question (Ask) rather than a search box's words (see questionRankedHits). */
  request: PageRequest & { question?: boolean },
  /** The spaces' languages, when the caller started reading them already (searchConfigsOf). */
  languages?: ReturnType<typeof searchConfigsOf>,
) {
  const limit = request.limit ?? 20;
  const offset = offsetOf(request.page);
  const parsed = parseQuery(query);
  const configs = new Set<string>();
  for (const row of await (languages ?? searchConfigsOf(db, spaces))) {
    configs.add(searchConfigFor(row.language));
    if (row.indexed) configs.add(row.indexed);
  }
  const configList = [...configs].sort();
  const kept = await meaningfulWords(db, configList, [...new Set(parsed.highlight)]);
  const meaningful = { ...parsed, words: parsed.words.filter((w) => kept.has(w.text)), highlight: parsed.highlight.filter((w) => kept.has(w)) };
  const plan: SearchPlan = { configs: configList, query: meaningful };
  if (request.question) {
    // A question ranks pages by the words they hold rather than requiring each (one page of results).
    const rows = configs.size ? await questionRankedHits(db, plan, spaces, limit) : [];
    return { rows, count: rows.length, next: undefined, offset: 0, query: meaningful };
  }
  const window = { candidates: CANDIDATES, limit, offset };
  let rows = configs.size ? await rankedHits(db, plan, spaces, window) : [];
  // Fewer pages than asked for: misspelled words may match through their corrections.
  const typed = plan.query.words.filter((w) => w.fuzzy).map((w) => w.text);
  if (configs.size && rows.length < limit && typed.length) {
    const near = await vocabularyNear(db, spaces, typed);
    const corrections = new Map<string, string[]>();
    for (const word of typed) {
      const found = correctionsOf(word, near.get(word) ?? []);
      if (found.length) corrections.set(word, found);
    }
    if (corrections.size) rows = await rankedHits(db, { ...plan, corrections }, spaces, window);
  }
  const total = rows[0]?.total ?? (offset > 0 ? offset : 0);
  const next = offset + limit < total ? { page: Buffer.from(String(offset + limit)).toString('base64url') } : undefined;
  return { rows, count: total, next, offset, query: meaningful };
}

/** The sections of a hit that match the query, best first, each with a highlighted snippet. */
export function matchingSections(hit: Hit, query: ParsedQuery, max = 3) {
  const matcher = matcherFor(hit.query_text, query.highlight);
  const found = hit.sections
    .map((section, index) => {
      const inTitle = findMatches(section.title, matcher).length;
      const inBody = findMatches(section.body, matcher);
      return { section, index, weight: inTitle * 3 + inBody.length, inBody };
    })
    .filter((s) => s.weight > 0)
    .sort((a, b) => b.weight - a.weight || a.index - b.index)
    .slice(0, max);
  return found.map(({ section, inBody }) => ({ ...section, ...snippet(section.body, inBody) }));
}

/** Whether the query's words are in the hit's title, description or sections (after its text was narrowed, e.g. to what a visitor may read). */
export function stillMatches(hit: Hit, query: ParsedQuery): boolean {
  const matcher = matcherFor(hit.query_text, query.highlight);
  return findMatches(hit.title, matcher).length > 0 || findMatches(hit.description, matcher).length > 0 || matchingSections(hit, query, 1).length > 0;
}

/** A snippet of a page that matched on its own fields (title, description): its description or start. */
export function pageSnippet(hit: Hit, query: ParsedQuery) {
  const matcher = matcherFor(hit.query_text, query.highlight);
  const text = hit.description || hit.sections[0]?.body || '';
  return snippet(text, findMatches(text, matcher));
}

function presentHit(ctx: Ctx, hit: Hit, query: ParsedQuery, rank: number) {
  const app = ctx.urls.pageApp({ id: hit.space_id }, hit.path);
  const matching = matchingSections(hit, query);
  const score = Number(hit.score);
  return {
    id: hit.page_id,
    title: hit.title,
    description: hit.description,
    path: hit.path,
    score,
    rank,
    resultType: matching.length ? ('section' as const) : ('page' as const),
    sections: matching.map((s) => ({
      id: s.id || hit.page_id,
      title: s.title || hit.title,
      path: s.id ? `${hit.path}#${s.id}` : hit.path,
      score,
      resultType: 'section' as const,
      body: s.body,
      highlights: s.highlights,
      urls: { app: s.id ? `${app}#${encodeURIComponent(s.id)}` : app },
    })),
    ancestors: hit.ancestors,
    urls: { app },
  };
}

export async function searchSpace(ctx: Ctx, spaceId: string, query: string, page: PageRequest) {
  // The space's languages are read while its access is checked (one round trip less on
  // PostgreSQL); nothing of them is used unless the check passes.
  const languages = searchConfigsOf(ctx.db, [spaceId]);
  languages.catch(() => {});
  const { space } = await loadSpace(ctx, spaceId);
  const found = await searchHits(ctx.db, query, [space.id], page, languages);
  return { items: found.rows.map((h, i) => presentHit(ctx, h, found.query, found.offset + i + 1)), count: found.count, ...(found.next ? { next: found.next } : {}) };
}

/** Across every live space the caller can read, grouped by space in rank order. */
export async function searchOrganization(ctx: Ctx, organizationId: string, query: string, page: PageRequest) {
  const orgRole = await orgRoleOf(ctx.db, organizationId, ctx.user.id);
  if (orgRole === undefined) throw new NotFoundError('Organization');
  // The caller's readable live spaces, as a subquery: deleted or invisible spaces never match.
  const spaces = visibleSpaces(ctx.db, organizationId, ctx.user.id, orgRole).clearSelect().select('spaces.id');
  return searchGroupedBySpace(ctx, query, spaces, page);
}

/**
 * Hits among some spaces (a subquery or a list), grouped by space in rank order. Callers decide
 * which spaces may be searched (an organization's readable spaces, a site's spaces).
 */
export async function searchGroupedBySpace(ctx: Ctx, query: string, spaces: Expression<unknown> | string[], page: PageRequest) {
  const result = await searchHits(ctx.db, query, spaces, page);
  const spaceIds = [...new Set(result.rows.map((r) => r.space_id))];
  const titles = await spaceTitles(ctx.db, spaceIds);
  const groups = new Map<string, { type: 'space'; id: string; title: string; score: number; pages: ReturnType<typeof presentHit>[] }>();
  result.rows.forEach((hit, i) => {
    const group = groups.get(hit.space_id) ?? { type: 'space' as const, id: hit.space_id, title: titles.get(hit.space_id) ?? '', score: 0, pages: [] };
    group.pages.push(presentHit(ctx, hit, result.query, result.offset + i + 1));
    group.score = Math.max(group.score, Number(hit.score));
    groups.set(hit.space_id, group);
  });
  return { items: [...groups.values()], count: result.count, ...(result.next ? { next: result.next } : {}) };
}
