import { sql, type Expression } from 'kysely';
import type { Db } from '../platform/db/database.ts';
import { json } from '../platform/db/database.ts';

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
  body: string;
};

/** The root a space's index describes (undefined: never indexed), read under a row lock. */
export async function lockIndexedRoot(db: Db, spaceId: string): Promise<string | undefined> {
  const state = await db.selectFrom('search_state').select('root').where('space_id', '=', spaceId).forUpdate().executeTakeFirst();
  return state?.root;
}

/** Writes the changed rows, removes those of removed pages, and records `root` as what the index describes. */
export async function writeIndexRows(db: Db, spaceId: string, root: string, rows: SearchRow[], removed: Set<string>): Promise<void> {
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
          body: eb.ref('excluded.body'),
        })),
      )
      .execute();
  }
  await db
    .insertInto('search_state')
    .values({ space_id: spaceId, root })
    .onConflict((oc) => oc.column('space_id').doUpdateSet({ root }))
    .execute();
}

/** Spaces with the root of their current content and the root their search index describes. */
function indexState(db: Db) {
  return db
    .selectFrom('spaces')
    .innerJoin('revisions', 'revisions.id', 'spaces.revision_id')
    .leftJoin('search_state', 'search_state.space_id', 'spaces.id')
    .select(['spaces.id as id', 'revisions.root as root', 'search_state.root as indexed']);
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
}

/**
 * A page of ranked hits among the spaces (a subquery or a list), each with the total. Matching
 * uses the GIN index; ranking (ts_rank over weighted title/description/body) runs on at most
 * `candidates` matching pages.
 */
export async function rankedHits(
  db: Db,
  query: string,
  spaces: Expression<unknown> | string[],
  opts: { candidates: number; limit: number; offset: number },
): Promise<(Hit & { total: number })[]> {
  const inSpaces = Array.isArray(spaces) ? sql`sp.space_id IN (${sql.join(spaces)})` : sql`sp.space_id IN (${spaces})`;
  const rows = await sql<Hit & { total: number }>`
    WITH q AS (SELECT websearch_to_tsquery('english', ${query}) AS query),
    candidates AS (
      SELECT sp.space_id, sp.page_id, sp.title, sp.description, sp.path, sp.ancestors, sp.sections, sp.tsv
      FROM search_pages sp, q WHERE ${inSpaces} AND sp.tsv @@ q.query
      LIMIT ${opts.candidates}
    )
    SELECT c.space_id, c.page_id, c.title, c.description, c.path, c.ancestors, c.sections,
           ts_rank(c.tsv, q.query) AS score, count(*) OVER ()::int AS total
    FROM candidates c, q
    ORDER BY score DESC, c.title, c.page_id
    LIMIT ${opts.limit} OFFSET ${opts.offset}`.execute(db);
  return rows.rows;
}

/** Titles of the spaces (found by the hits of a search the caller was allowed). */
export async function spaceTitles(db: Db, spaceIds: string[]): Promise<Map<string, string>> {
  if (spaceIds.length === 0) return new Map();
  const rows = await db.selectFrom('spaces').select(['id', 'title']).where('id', 'in', spaceIds).execute();
  return new Map(rows.map((s) => [s.id, s.title]));
}
