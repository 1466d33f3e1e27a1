import { sql, type Expression, type RawBuilder } from 'kysely';
import type { Db } from '../platform/db/database.ts';
import { json } from '../platform/db/database.ts';
import type { ParsedQuery, QueryWord } from './segment.ts';
import { vocabularyOf } from './typos.ts';

/**
 * The SQL of search: the rows of each space's pages (`search_pages`) and the content root they
 * describe (`search_state`). Rows are keyed by space; callers decide which spaces may be searched.
 */

export type SearchRow = {
  space_id: string;
  page_id: string;
  title: string;
  description: string;
  path: string;
  ancestors: ReturnType<typeof json>;
  sections: ReturnType<typeof json>;
  ts_config: string;
  terms_a: string;
  terms_b: string;
  body: string;
  fuzzy: string;
};

/** The root a space's index describes (undefined: never indexed), read under a row lock. */
export async function lockIndexedRoot(db: Db, spaceId: string): Promise<string | undefined> {
  const state = await db.selectFrom('search_state').select('root').where('space_id', '=', spaceId).forUpdate().executeTakeFirst();
  return state?.root;
}

/**
 * Writes the changed rows, removes those of removed pages, and records `root` as what the index
 * describes; `wholeConfig`, when every row of the space was written, records their configuration.
 */
export async function writeIndexRows(db: Db, spaceId: string, root: string, rows: SearchRow[], removed: Set<string>, wholeConfig?: string): Promise<void> {
  await updateVocabulary(db, spaceId, rows, removed);
  if (removed.size) {
    await db.deleteFrom('search_pages').where('space_id', '=', spaceId).where('page_id', 'in', [...removed]).execute();
  }
  for (let i = 0; i < rows.length; i += 500) {
    await db
      .insertInto('search_pages')
      .values(rows.slice(i, i + 500))
      .onConflict((oc) =>
        oc.columns(['space_id', 'page_id']).doUpdateSet((eb) => ({
          title: eb.ref('excluded.title'),
          description: eb.ref('excluded.description'),
          path: eb.ref('excluded.path'),
          ancestors: eb.ref('excluded.ancestors'),
          sections: eb.ref('excluded.sections'),
          ts_config: eb.ref('excluded.ts_config'),
          terms_a: eb.ref('excluded.terms_a'),
          terms_b: eb.ref('excluded.terms_b'),
          body: eb.ref('excluded.body'),
          fuzzy: eb.ref('excluded.fuzzy'),
        })),
      )
      .execute();
  }
  await db
    .insertInto('search_state')
    .values({ space_id: spaceId, root, ...(wholeConfig ? { ts_config: wholeConfig } : {}) })
    .onConflict((oc) => oc.column('space_id').doUpdateSet({ root, ...(wholeConfig ? { ts_config: wholeConfig } : {}) }))
    .execute();
}

/**
 * Keeps `search_words` (per word of titles and headings, how many pages hold it) in step with the
 * rows about to be written or removed: the words of their previous titles and headings are read
 * back, so the cost follows the pages that changed.
 */
async function updateVocabulary(db: Db, spaceId: string, rows: SearchRow[], removed: Set<string>): Promise<void> {
  const delta = new Map<string, number>();
  const touched = [...new Set([...rows.map((r) => r.page_id), ...removed])];
  for (let i = 0; i < touched.length; i += 1000) {
    const before = await db.selectFrom('search_pages').select('fuzzy').where('space_id', '=', spaceId).where('page_id', 'in', touched.slice(i, i + 1000)).execute();
    for (const row of before) for (const word of vocabularyOf(row.fuzzy)) delta.set(word, (delta.get(word) ?? 0) - 1);
  }
  for (const row of rows) for (const word of vocabularyOf(row.fuzzy)) delta.set(word, (delta.get(word) ?? 0) + 1);
  const changes = [...delta].filter(([, d]) => d !== 0).map(([word, pages]) => ({ space_id: spaceId, word, pages }));
  for (let i = 0; i < changes.length; i += 1000) {
    const chunk = changes.slice(i, i + 1000);
    await db
      .insertInto('search_words')
      .values(chunk)
      .onConflict((oc) => oc.columns(['space_id', 'word']).doUpdateSet({ pages: sql`search_words.pages + excluded.pages` }))
      .execute();
    const fewer = chunk.filter((c) => c.pages < 0).map((c) => c.word);
    if (fewer.length) await db.deleteFrom('search_words').where('space_id', '=', spaceId).where('word', 'in', fewer).where('pages', '<=', 0).execute();
  }
}

/** Spaces with the root of their current content and the root their search index describes. */
function indexState(db: Db) {
  return db
    .selectFrom('spaces')
    .innerJoin('revisions', 'revisions.id', 'spaces.revision_id')
    .leftJoin('search_state', 'search_state.space_id', 'spaces.id')
    .select(['spaces.id as id', 'spaces.language as language', 'revisions.root as root', 'search_state.root as indexed']);
}

export async function spaceIndexState(db: Db, spaceId: string) {
  return indexState(db).where('spaces.id', '=', spaceId).executeTakeFirst();
}

/** Spaces (of every organization: run at start) whose content has moved past their index. */
export async function staleIndexes(db: Db, empty: string) {
  return indexState(db).where(sql<boolean>`coalesce(search_state.root, ${empty}) <> revisions.root`).execute();
}

export interface Hit {
  space_id: string;
  page_id: string;
  title: string;
  description: string;
  path: string;
  ancestors: { title: string }[];
  sections: { id: string; title: string; body: string }[];
  score: number;
  /** The query as PostgreSQL parsed it (its lexemes, stemmed): what highlighting looks for. */
  query_text: string;
  /** Matched every word exactly (false: some word only by similarity, in a title or heading). */
  exact: boolean;
}

/** What a search looks for, in the text search configurations of the spaces it covers. */
export interface SearchPlan {
  configs: string[];
  query: ParsedQuery;
  /** Words of titles and headings standing in for misspelled query words (by query word). */
  corrections?: Map<string, string[]>;
}

const prefixPattern = (word: string) => `'${word.replace(/'/g, "''")}':*`;

/** `column IN (spaces)`, for a list of space ids or a subquery. */
function inSpacesOf(column: string, spaces: Expression<unknown> | string[]): RawBuilder<unknown> {
  return Array.isArray(spaces) ? sql`${sql.ref(column)} IN (${sql.join(spaces)})` : sql`${sql.ref(column)} IN (${spaces})`;
}

/**
 * A word in any of the configurations. A prefix (the last word, while typed) also matches as
 * typed, and through the words of the spaces' titles and headings it starts: the stem of a
 * prefix can be longer than the stem of the word ("billi" stems to "billi", "billing" to "bill").
 */
function wordQuery(plan: SearchPlan, word: QueryWord, spaces: Expression<unknown> | string[], alternatives: string[] = []): RawBuilder<unknown> {
  const { configs } = plan;
  const parts = configs.flatMap((cfg) => [word.text, ...alternatives].map((text) => sql`plainto_tsquery(${cfg}::regconfig, ${text})`));
  if (word.prefix) {
    for (const cfg of configs) parts.push(sql`to_tsquery(${cfg}::regconfig, ${prefixPattern(word.text)})`);
    parts.push(sql`to_tsquery('simple'::regconfig, ${prefixPattern(word.text)})`);
    const completions = sql`(
      SELECT string_agg(x.word, ' | ') FROM (
        SELECT sw.word FROM search_words sw WHERE ${inSpacesOf('sw.space_id', spaces)} AND sw.word LIKE ${`${word.text}%`}
        GROUP BY sw.word ORDER BY sum(sw.pages) DESC, sw.word LIMIT 5
      ) x)`;
    for (const cfg of configs) parts.push(sql`coalesce(to_tsquery(${cfg}::regconfig, ${completions}), ''::tsquery)`);
  }
  return sql`(${sql.join(parts, sql` || `)})`;
}

function phraseQuery(configs: string[], phrase: string): RawBuilder<unknown> {
  return sql`(${sql.join(configs.map((cfg) => sql`phraseto_tsquery(${cfg}::regconfig, ${phrase})`), sql` || `)})`;
}

/**
 * Every word (or one of its corrections, with `corrected`) and phrase, none of the excluded
 * words: the query pages must match.
 */
function strictQuery(plan: SearchPlan, spaces: Expression<unknown> | string[], corrected = false): RawBuilder<unknown> {
  const { configs, query } = plan;
  const alternatives = (w: QueryWord) => (corrected ? (plan.corrections?.get(w.text) ?? []) : []);
  const parts = [...query.words.map((w) => wordQuery(plan, w, spaces, alternatives(w))), ...query.phrases.map((p) => phraseQuery(configs, p))];
  for (const word of query.excluded) parts.push(sql`!!${phraseQuery(configs, word)}`);
  return sql.join(parts, sql` && `);
}

/** A query with at least one word or phrase to look for (excluded words alone match nothing). */
export function searchable(plan: SearchPlan): boolean {
  return plan.query.words.length > 0 || plan.query.phrases.length > 0;
}

/**
 * Titles close to the query's words rank first (a title equal to the query, above all), then pages
 * holding the query's words next to each other, in its order (a heading or a sentence quoted).
 */
function closenessBonus(plan: SearchPlan): RawBuilder<number> {
  const words = plan.query.words.map((w) => w.text);
  const plain = [...words, ...plan.query.phrases].join(' ');
  const title = sql`CASE WHEN lower(c.title) = ${plain} THEN 1 ELSE 0 END + 0.5 * similarity(c.title, ${plain})`;
  if (words.length < 2) return sql<number>`(${title})`;
  const together = sql.join(plan.configs.map((cfg) => sql`phraseto_tsquery(${cfg}::regconfig, ${words.join(' ')})`), sql` || `);
  return sql<number>`(${title} + CASE WHEN c.tsv @@ (${together}) THEN 0.3 ELSE 0 END)`;
}

/**
 * A page of ranked hits among the spaces (a subquery or a list), each with the total: the pages
 * matching every word (the last one also as a prefix while typed), phrase and exclusion, on the GIN
 * index of the tsvectors. With `plan.corrections`, a misspelled word may also match through its
 * corrections; the pages matching the query as typed keep the first places, with the same scores
 * as without corrections, so pages of results follow each other whichever query answered them.
 * Ranking (ts_rank over weighted title / description and headings / body, plus the title's
 * closeness to the query) runs on at most `candidates` matching pages.
 *
 * Cost (measured with EXPLAIN ANALYZE on a 10,000-page space, `npm run bench:search`): ranking
 * reads only the narrow columns it needs (ids, title, tsvector); the wide ones (sections,
 * ancestors, description, path) are read for the page of results alone, by primary key. Without
 * corrections, the query as typed is the only query: it is built and matched once per row.
 */
export async function rankedHits(
  db: Db,
  plan: SearchPlan,
  spaces: Expression<unknown> | string[],
  opts: { candidates: number; limit: number; offset: number },
): Promise<(Hit & { total: number })[]> {
  if (!searchable(plan)) return [];
  const inSpaces = Array.isArray(spaces) ? sql`sp.space_id IN (${sql.join(spaces)})` : sql`sp.space_id IN (${spaces})`;
  const corrected = !!plan.corrections?.size;
  const q = corrected
    ? sql`SELECT ${strictQuery(plan, spaces)} AS exact, ${strictQuery(plan, spaces, true)} AS query`
    : sql`SELECT t.query AS exact, t.query FROM (SELECT ${strictQuery(plan, spaces)} AS query) t`;
  // Without corrections every candidate matches the query as typed.
  const exact = corrected ? sql`(c.tsv @@ q.exact)` : sql`true`;
  const rank = corrected ? sql`CASE WHEN c.tsv @@ q.exact THEN ts_rank(c.tsv, q.exact) ELSE ts_rank(c.tsv, q.query) END` : sql`ts_rank(c.tsv, q.query)`;
  const rows = await sql<Hit & { total: number }>`
    WITH q AS MATERIALIZED (${q}),
    candidates AS (
      SELECT sp.space_id, sp.page_id, sp.title, sp.tsv
      FROM search_pages sp, q WHERE ${inSpaces} AND sp.tsv @@ q.query
      LIMIT ${opts.candidates}
    ),
    scored AS (
      SELECT c.space_id, c.page_id, c.title, ${exact} AS exact, ${rank} + ${closenessBonus(plan)} AS score
      FROM candidates c, q
    ),
    page AS (
      SELECT s.*, count(*) OVER ()::int AS total FROM scored s
      ORDER BY s.exact DESC, s.score DESC, s.title, s.page_id
      LIMIT ${opts.limit} OFFSET ${opts.offset}
    )
    SELECT p.space_id, p.page_id, p.title, sp.description, sp.path, sp.ancestors, sp.sections, p.score, q.query::text AS query_text, p.exact, p.total
    FROM page p JOIN search_pages sp ON sp.space_id = p.space_id AND sp.page_id = p.page_id, q
    ORDER BY p.exact DESC, p.score DESC, p.title, p.page_id`.execute(db);
  return rows.rows;
}

/**
 * Pages for a question (Ask), not a search box: a question is a sentence, and the page that answers
 * it rarely holds every one of its words. Pages holding any of its rarer words are candidates,
 * ranked by the inverse document frequency of the words they hold (BM25's idf: a word few pages
 * hold says more than one most pages hold), then by ts_rank (titles and headings weigh more than
 * the body) and the title's closeness to the question. Words held by more than half the pages
 * (as "docs" in a documentation site) do not make a page a candidate, which keeps the candidates
 * few; they still count in the score. Two statements: the words' page counts (one GIN lookup each),
 * then the ranking.
 */
const QUESTION_CANDIDATES = 1000;

export async function questionRankedHits(db: Db, plan: SearchPlan, spaces: Expression<unknown> | string[], limit: number): Promise<(Hit & { total: number })[]> {
  const words = plan.query.words;
  if (!words.length) return [];
  const inSpaces = Array.isArray(spaces) ? sql`sp.space_id IN (${sql.join(spaces)})` : sql`sp.space_id IN (${spaces})`;
  const queries = words.map((w) => wordQuery(plan, { ...w, prefix: false }, spaces));
  const counts = await sql<{ pages: number; found: number[] }>`
    SELECT (SELECT count(*)::int FROM search_pages sp WHERE ${inSpaces}) AS pages,
      ARRAY[${sql.join(queries.map((q) => sql`(SELECT count(*)::int FROM search_pages sp WHERE ${inSpaces} AND sp.tsv @@ ${q})`))}] AS found`.execute(db);
  const { pages, found } = counts.rows[0] ?? { pages: 0, found: [] };
  const idf = found.map((n) => (n > 0 ? Math.log(1 + (pages - n + 0.5) / (n + 0.5)) : 0));
  const present = words.map((_, i) => i).filter((i) => found[i]! > 0);
  if (!present.length) return [];
  // Candidates come from the rarest words first, at most QUESTION_CANDIDATES pages: the cost of
  // ranking stays bounded in a big space whatever words a question uses.
  const rare = present.filter((i) => found[i]! <= pages / 2);
  const order = (rare.length ? rare : present).sort((a, b) => found[a]! - found[b]!);
  const branches = order.map((i, n) => sql`(SELECT sp.space_id, sp.page_id, ${n}::int AS n FROM search_pages sp WHERE ${inSpaces} AND sp.tsv @@ ${queries[i]!} LIMIT ${QUESTION_CANDIDATES})`);
  // Each word's query is built once (in q), not again for every candidate row.
  const score = sql.join(present.map((i) => sql`CASE WHEN sp.tsv @@ ${sql.ref(`q.w${i}`)} THEN ${idf[i]!}::float8 ELSE 0 END`), sql` + `);
  const wordColumns = sql.join(present.map((i) => sql`${queries[i]!} AS ${sql.ref(`w${i}`)}`));
  const all = sql.join(present.map((i) => sql.ref(`w${i}`)), sql` || `);
  const plain = words.map((w) => w.text).join(' ');
  const rows = await sql<Hit & { total: number }>`
    WITH w AS MATERIALIZED (SELECT ${wordColumns}),
    q AS MATERIALIZED (SELECT w.*, (${all}) AS query FROM w),
    found AS (${sql.join(branches, sql` UNION ALL `)}),
    candidates AS (
      SELECT c.space_id, c.page_id FROM (
        SELECT DISTINCT ON (f.space_id, f.page_id) f.space_id, f.page_id, f.n FROM found f ORDER BY f.space_id, f.page_id, f.n
      ) c ORDER BY c.n LIMIT ${QUESTION_CANDIDATES}
    ),
    scored AS (
      SELECT sp.space_id, sp.page_id, sp.title,
        ${score} + ts_rank(sp.tsv, q.query) + 0.5 * similarity(sp.title, ${plain}) AS score
      FROM candidates c JOIN search_pages sp ON sp.space_id = c.space_id AND sp.page_id = c.page_id, q
    ),
    page AS (
      SELECT s.*, count(*) OVER ()::int AS total FROM scored s
      ORDER BY s.score DESC, s.title, s.page_id LIMIT ${limit}
    )
    SELECT p.space_id, p.page_id, p.title, sp.description, sp.path, sp.ancestors, sp.sections, p.score, q.query::text AS query_text, true AS exact, p.total
    FROM page p JOIN search_pages sp ON sp.space_id = p.space_id AND sp.page_id = p.page_id, q
    ORDER BY p.score DESC, p.title, p.page_id`.execute(db);
  return rows.rows;
}

/**
 * Words of the spaces' titles and headings close to each query word (trigram similarity over the
 * `search_words` vocabulary, with a threshold low enough for short words with swapped letters;
 * the caller keeps those within a small edit distance), with how many pages hold them.
 */
export async function vocabularyNear(db: Db, spaces: Expression<unknown> | string[], words: string[]): Promise<Map<string, { word: string; pages: number }[]>> {
  const near = new Map<string, { word: string; pages: number }[]>();
  if (!words.length || (Array.isArray(spaces) && spaces.length === 0)) return near;
  const inSpaces = Array.isArray(spaces) ? sql`sw.space_id IN (${sql.join(spaces)})` : sql`sw.space_id IN (${spaces})`;
  // One statement, no transaction: its one-time filter sets the trigram threshold (for this
  // statement's transaction only) before the index is scanned. A word of the vocabulary itself
  // needs no correction (correctionsOf), so its similar words are not looked for: one probe of
  // the primary key instead of a trigram scan with a low threshold, which is the costly part.
  const exactly = Array.isArray(spaces) ? sql`e.space_id IN (${sql.join(spaces)})` : sql`e.space_id IN (${spaces})`;
  const rows = await sql<{ typed: string; word: string; pages: number }>`
    SELECT q.typed, c.word, c.pages FROM unnest(${words}::text[]) AS q(typed)
    CROSS JOIN LATERAL (
      SELECT sw.word, sum(sw.pages)::int AS pages FROM search_words sw
      WHERE (SELECT set_config('pg_trgm.similarity_threshold', '0.2', true)) IS NOT NULL AND ${inSpaces} AND sw.word % q.typed
        AND NOT EXISTS (SELECT 1 FROM search_words e WHERE ${exactly} AND e.word = q.typed)
      GROUP BY sw.word ORDER BY similarity(sw.word, q.typed) DESC, sw.word LIMIT 30
    ) c`.execute(db);
  for (const row of rows.rows) near.set(row.typed, [...(near.get(row.typed) ?? []), { word: row.word, pages: row.pages }]);
  return near;
}

/**
 * The text search configurations to query the spaces with: each space's language (its own, else
 * its organization's default), and while a
 * language change is being applied (the `search.language` job), the configuration its rows had.
 */
export async function searchConfigsOf(db: Db, spaces: Expression<unknown> | string[]): Promise<{ language: string | null; indexed: string | null }[]> {
  if (Array.isArray(spaces) && spaces.length === 0) return [];
  const inSpaces = Array.isArray(spaces) ? sql`s.id IN (${sql.join(spaces)})` : sql`s.id IN (${spaces})`;
  const rows = await sql<{ language: string | null; indexed: string | null }>`
    SELECT DISTINCT coalesce(s.language, o.language) AS language, ss.ts_config AS indexed
    FROM spaces s JOIN organizations o ON o.id = s.organization_id LEFT JOIN search_state ss ON ss.space_id = s.id
    WHERE ${inSpaces}`.execute(db);
  return rows.rows;
}

/**
 * Whether a word is a stop word in a configuration, by `config word`: what PostgreSQL answers
 * never changes for a configuration, so each process asks once per word (bounded: cleared when
 * full). A search of words already seen then costs no round trip for this.
 */
const stopWords = new Map<string, boolean>();
const STOP_WORD_CACHE = 50_000;

/**
 * The words that are not stop words in at least one of the configurations ("in", "the" are
 * dropped in English): a stop word would otherwise be required as a prefix, or by similarity.
 */
export async function meaningfulWords(db: Db, configs: string[], words: string[]): Promise<Set<string>> {
  if (!words.length || !configs.length) return new Set();
  const unknown = configs.flatMap((cfg) => words.filter((w) => !stopWords.has(`${cfg} ${w}`)).map((w) => ({ cfg, w })));
  if (unknown.length) {
    const rows = await sql<{ word: string; cfg: string; stop: boolean }>`
      SELECT u.word, u.cfg, numnode(plainto_tsquery(u.cfg::regconfig, u.word)) = 0 AS stop
      FROM unnest(${unknown.map((u) => u.w)}::text[], ${unknown.map((u) => u.cfg)}::text[]) AS u(word, cfg)`.execute(db);
    if (stopWords.size + rows.rows.length > STOP_WORD_CACHE) stopWords.clear();
    for (const row of rows.rows) stopWords.set(`${row.cfg} ${row.word}`, row.stop);
  }
  return new Set(words.filter((w) => configs.some((cfg) => stopWords.get(`${cfg} ${w}`) === false)));
}

/**
 * A space's language: its own, else its organization's default (Folio's organization `language`);
 * null: neither (undefined: no such space).
 */
export async function spaceLanguage(db: Db, spaceId: string): Promise<{ language: string | null } | undefined> {
  return db
    .selectFrom('spaces')
    .innerJoin('organizations', 'organizations.id', 'spaces.organization_id')
    .select(sql<string | null>`coalesce(spaces.language, organizations.language)`.as('language'))
    .where('spaces.id', '=', spaceId)
    .executeTakeFirst();
}

/** The live spaces of an organization without a language of their own: they follow its default. */
export async function spacesFollowingOrganization(db: Db, organizationId: string): Promise<string[]> {
  const rows = await db.selectFrom('spaces').select('id').where('organization_id', '=', organizationId).where('language', 'is', null).where('deleted_at', 'is', null).execute();
  return rows.map((r) => r.id);
}

/**
 * Moves up to `batch` rows of a space to another configuration (the database recomputes their
 * tsvector); returns how many it moved. Short statements: a large space is moved in several.
 */
export async function reconfigureRows(db: Db, spaceId: string, config: string, batch: number): Promise<number> {
  const result = await sql`
    UPDATE search_pages SET ts_config = ${config}::regconfig
    WHERE space_id = ${spaceId} AND page_id IN (
      SELECT page_id FROM search_pages WHERE space_id = ${spaceId} AND ts_config <> ${config}::regconfig LIMIT ${batch}
    )`.execute(db);
  return Number(result.numAffectedRows ?? 0);
}

/** Records that every row of a space now uses `config`. */
export async function setIndexedConfig(db: Db, spaceId: string, config: string): Promise<void> {
  await db.updateTable('search_state').set({ ts_config: config }).where('space_id', '=', spaceId).execute();
}

/** Titles of the spaces (found by the hits of a search the caller was allowed). */
export async function spaceTitles(db: Db, spaceIds: string[]): Promise<Map<string, string>> {
  if (spaceIds.length === 0) return new Map();
  const rows = await db.selectFrom('spaces').select(['id', 'title']).where('id', 'in', spaceIds).execute();
  return new Map(rows.map((s) => [s.id, s.title]));
}

/**
 * Titles of indexed pages among the spaces (a subquery or a list), the shallowest first: what Ask
 * recommends questions about.
 */
export async function pageTitlesOf(db: Db, spaces: Expression<unknown> | string[], limit: number): Promise<string[]> {
  if (Array.isArray(spaces) && spaces.length === 0) return [];
  const rows = await sql<{ title: string }>`
    SELECT sp.title FROM search_pages sp
    WHERE ${inSpacesOf('sp.space_id', spaces)} AND sp.title <> ''
    ORDER BY jsonb_array_length(sp.ancestors), sp.path
    LIMIT ${limit}`.execute(db);
  return rows.rows.map((r) => r.title);
}
