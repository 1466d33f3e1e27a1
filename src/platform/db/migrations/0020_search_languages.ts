import { sql, type Kysely } from 'kysely';

/**
 * Search in every language, with typos (src/search/):
 *
 * - `ts_config`: the text search configuration of each row, from its space's language (French
 *   rows stemmed as French…); the stored `tsv` is computed from it, so a language change rewrites
 *   only that column (the `search.language` job).
 * - `terms_a`, `terms_b`: what is indexed of the title (weight A) and of the description and
 *   headings (weight B), with Chinese, Japanese and Thai text cut into words (the `body` column,
 *   weight C, holds the body cut the same way).
 * - `fuzzy`: title and headings as written; `search_words` counts, per space, the pages whose
 *   title or headings hold each word (lowercased), with a trigram index (pg_trgm): a misspelled
 *   query word is corrected to the close words of that vocabulary.
 * - `search_state.ts_config`: the configuration every row of the space had when the space was last
 *   fully indexed or re-configured; while a language change is under way, queries use both.
 *
 * The rows are rebuilt from the content: this migration empties the index, and the server's start
 * (refreshStaleSearchIndexes) indexes every space again before it serves.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await sql`CREATE EXTENSION IF NOT EXISTS pg_trgm`.execute(db);
  await sql`DELETE FROM search_state`.execute(db);
  await sql`DROP TABLE search_pages`.execute(db);
  await sql`
    CREATE TABLE search_pages (
      space_id text NOT NULL REFERENCES spaces(id) ON DELETE CASCADE,
      page_id text NOT NULL,
      title text NOT NULL,
      description text NOT NULL DEFAULT '',
      path text NOT NULL,
      ancestors jsonb NOT NULL DEFAULT '[]',
      sections jsonb NOT NULL DEFAULT '[]',
      ts_config regconfig NOT NULL DEFAULT 'english',
      terms_a text NOT NULL DEFAULT '',
      terms_b text NOT NULL DEFAULT '',
      body text NOT NULL DEFAULT '',
      fuzzy text NOT NULL DEFAULT '',
      tsv tsvector GENERATED ALWAYS AS (
        setweight(to_tsvector(ts_config, terms_a), 'A') ||
        setweight(to_tsvector(ts_config, terms_b), 'B') ||
        setweight(to_tsvector(ts_config, body), 'C')
      ) STORED,
      PRIMARY KEY (space_id, page_id)
    )`.execute(db);
  await sql`CREATE INDEX search_pages_tsv ON search_pages USING gin (tsv)`.execute(db);
  await sql`
    CREATE TABLE search_words (
      space_id text NOT NULL REFERENCES spaces(id) ON DELETE CASCADE,
      word text NOT NULL,
      pages integer NOT NULL,
      PRIMARY KEY (space_id, word)
    )`.execute(db);
  await sql`CREATE INDEX search_words_trgm ON search_words USING gin (word gin_trgm_ops)`.execute(db);
  await sql`ALTER TABLE search_state ADD COLUMN ts_config text`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`DROP TABLE search_words`.execute(db);
  await sql`DELETE FROM search_state`.execute(db);
  await sql`ALTER TABLE search_state DROP COLUMN ts_config`.execute(db);
  await sql`DROP TABLE search_pages`.execute(db);
  await sql`
    CREATE TABLE search_pages (
      space_id text NOT NULL REFERENCES spaces(id) ON DELETE CASCADE,
      page_id text NOT NULL,
      title text NOT NULL,
      description text NOT NULL DEFAULT '',
      path text NOT NULL,
      ancestors jsonb NOT NULL DEFAULT '[]',
      sections jsonb NOT NULL DEFAULT '[]',
      body text NOT NULL DEFAULT '',
      tsv tsvector GENERATED ALWAYS AS (
        setweight(to_tsvector('english', title), 'A') ||
        setweight(to_tsvector('english', description), 'B') ||
        setweight(to_tsvector('english', body), 'C')
      ) STORED,
      PRIMARY KEY (space_id, page_id)
    )`.execute(db);
  await sql`CREATE INDEX search_pages_tsv ON search_pages USING gin (tsv)`.execute(db);
}
