import { sql, type Expression, type RawBuilder } from 'kysely';
import type { Db } from '../platform/db/database.ts';
import { json } from '../platform/db/database.ts';
import type { ParsedQuery, QueryWord } from './segment.ts';

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
}

const prefixPattern = (word: string) => `'${word.replace(/'/g, "''")}':*`;

/** A word in any of the configurations; a prefix also as typed (its stem may be longer than the start typed). */
function wordQuery(configs: string[], word: QueryWord): RawBuilder<unknown> {
  const parts = configs.map((cfg) => sql`plainto_tsquery(${cfg}::regconfig, ${word.text})`);
  if (word.prefix) {
    for (const cfg of configs) parts.push(sql`to_tsquery(${cfg}::regconfig, ${prefixPattern(word.text)})`);
    parts.push(sql`to_tsquery('simple'::regconfig, ${prefixPattern(word.text)})`);
  }
  return sql`(${sql.join(parts, sql` || `)})`;
}

function phraseQuery(configs: string[], phrase: string): RawBuilder<unknown> {
  return sql`(${sql.join(configs.map((cfg) => sql`phraseto_tsquery(${cfg}::regconfig, ${phrase})`), sql` || `)})`;
}

/** Every word and phrase, none of the excluded words: the query pages must match exactly. */
function strictQuery(plan: SearchPlan): RawBuilder<unknown> {
  const { configs, query } = plan;
  const parts = [...query.words.map((w) => wordQuery(configs, w)), ...query.phrases.map((p) => phraseQuery(configs, p))];
  for (const word of query.excluded) parts.push(sql`!!${phraseQuery(configs, word)}`);
  return sql.join(parts, sql` && `);
}

/** A query with at least one word or phrase to look for (excluded words alone match nothing). */
export function searchable(plan: SearchPlan): boolean {
  return plan.query.words.length > 0 || plan.query.phrases.length > 0;
}

/** Titles close to the query's words rank first; a title equal to the query, above all. */
function titleBonus(plan: SearchPlan): RawBuilder<number> {
  const plain = [...plan.query.words.map((w) => w.text), ...plan.query.phrases].join(' ');
  return sql<number>`(CASE WHEN lower(c.title) = ${plain} THEN 1 ELSE 0 END + 0.5 * similarity(c.title, ${plain}))`;
}

/**
 * A page of ranked hits among the spaces (a subquery or a list), each with the total.
 *
 * First the exact query: every word (the last one as a prefix while typed), phrase and exclusion,
 * on the GIN index of the tsvectors. When that fills fewer than the page asked for and some word
 * could be misspelled, a second query also lets each such word match a title or heading by
 * trigram similarity (the GIN trigram index); the exact matches keep the first places with the
 * same scores, so pages of results follow each other whichever query answered them. Ranking
 * (ts_rank over weighted title/description and headings/body, plus the title's closeness to the
 * query) runs on at most `candidates` matching pages.
 */
export async function rankedHits(
  db: Db,
  plan: SearchPlan,
  spaces: Expression<unknown> | string[],
  opts: { candidates: number; limit: number; offset: number },
): Promise<(Hit & { total: number })[]> {
  if (!searchable(plan)) return [];
  const inSpaces = Array.isArray(spaces) ? sql`sp.space_id IN (${sql.join(spaces)})` : sql`sp.space_id IN (${spaces})`;
  const strict = strictQuery(plan);
  const exactScore = sql`ts_rank(c.tsv, q.query) + ${titleBonus(plan)}`;
  const exact = await sql<Hit & { total: number }>`
    WITH q AS (SELECT ${strict} AS query),
    candidates AS (
      SELECT sp.space_id, sp.page_id, sp.title, sp.description, sp.path, sp.ancestors, sp.sections, sp.tsv
      FROM search_pages sp, q WHERE ${inSpaces} AND sp.tsv @@ q.query
      LIMIT ${opts.candidates}
    )
    SELECT c.space_id, c.page_id, c.title, c.description, c.path, c.ancestors, c.sections,
           ${exactScore} AS score, count(*) OVER ()::int AS total, q.query::text AS query_text, true AS exact
    FROM candidates c, q
    ORDER BY score DESC, c.title, c.page_id
    LIMIT ${opts.limit} OFFSET ${opts.offset}`.execute(db);
  const total = exact.rows[0]?.total ?? 0;
  const fuzzyWords = plan.query.words.filter((w) => w.fuzzy);
  if (total >= opts.offset + opts.limit || exact.rows.length === opts.limit || fuzzyWords.length === 0) return exact.rows;

  // Each word matches exactly or, when it could be misspelled, a title or heading approximately.
  const conditions = [
    ...plan.query.words.map((w) => {
      const exactly = sql`sp.tsv @@ ${wordQuery(plan.configs, w)}`;
      return w.fuzzy ? sql`(${exactly} OR ${w.text} <% sp.fuzzy)` : exactly;
    }),
    ...plan.query.phrases.map((p) => sql`sp.tsv @@ ${phraseQuery(plan.configs, p)}`),
    ...plan.query.excluded.map((e) => sql`NOT (sp.tsv @@ ${phraseQuery(plan.configs, e)})`),
  ];
  const anyWord = sql.join(plan.query.words.map((w) => wordQuery(plan.configs, w)), sql` || `);
  const closeness = sql.join(fuzzyWords.map((w) => sql`word_similarity(${w.text}, c.fuzzy)`), sql` + `);
  const rows = await sql<Hit & { total: number }>`
    WITH q AS (SELECT ${strict} AS query, ${anyWord} AS any_word),
    candidates AS (
      SELECT sp.space_id, sp.page_id, sp.title, sp.description, sp.path, sp.ancestors, sp.sections, sp.tsv, sp.fuzzy
      FROM search_pages sp WHERE ${inSpaces} AND ${sql.join(conditions, sql` AND `)}
      LIMIT ${opts.candidates}
    ),
    scored AS (
      SELECT c.space_id, c.page_id, c.title, c.description, c.path, c.ancestors, c.sections,
             (c.tsv @@ q.query) AS exact,
             CASE WHEN c.tsv @@ q.query THEN ${exactScore}
                  ELSE (${closeness}) / ${fuzzyWords.length} + 0.5 * ts_rank(c.tsv, q.any_word) + ${titleBonus(plan)} END AS score,
             (q.query || q.any_word)::text AS query_text
      FROM candidates c, q
    )
    SELECT s.space_id, s.page_id, s.title, s.description, s.path, s.ancestors, s.sections, s.score,
           count(*) OVER ()::int AS total, s.query_text, s.exact
    FROM scored s
    ORDER BY s.exact DESC, s.score DESC, s.title, s.page_id
    LIMIT ${opts.limit} OFFSET ${opts.offset}`.execute(db);
  return rows.rows;
}

/**
 * The text search configurations to query the spaces with: each space's language, and while a
 * language change is being applied (the `search.language` job), the configuration its rows had.
 */
export async function searchConfigsOf(db: Db, spaces: Expression<unknown> | string[]): Promise<{ language: string | null; indexed: string | null }[]> {
  if (Array.isArray(spaces) && spaces.length === 0) return [];
  const inSpaces = Array.isArray(spaces) ? sql`s.id IN (${sql.join(spaces)})` : sql`s.id IN (${spaces})`;
  const rows = await sql<{ language: string | null; indexed: string | null }>`
    SELECT DISTINCT s.language, ss.ts_config AS indexed
    FROM spaces s LEFT JOIN search_state ss ON ss.space_id = s.id
    WHERE ${inSpaces}`.execute(db);
  return rows.rows;
}

/**
 * The words that are not stop words in at least one of the configurations ("in", "the" are
 * dropped in English): a stop word would otherwise be required as a prefix, or by similarity.
 */
export async function meaningfulWords(db: Db, configs: string[], words: string[]): Promise<Set<string>> {
  if (!words.length || !configs.length) return new Set();
  const rows = await sql<{ word: string }>`
    SELECT DISTINCT w.word FROM unnest(${words}::text[]) AS w(word), unnest(${configs}::text[]) AS c(cfg)
    WHERE numnode(plainto_tsquery(c.cfg::regconfig, w.word)) > 0`.execute(db);
  return new Set(rows.rows.map((r) => r.word));
}

/** A space's language (undefined: no such space). */
export async function spaceLanguage(db: Db, spaceId: string): Promise<{ language: string | null } | undefined> {
  return db.selectFrom('spaces').select('language').where('id', '=', spaceId).executeTakeFirst();
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
