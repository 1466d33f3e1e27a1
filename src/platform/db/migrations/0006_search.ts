import { sql, type Kysely } from 'kysely';

/**
 * Full-text index of each space's current content: one row per page, weighted (title A,
 * description B, body C) in a stored tsvector with a GIN index. `search_state` remembers which
 * content root a space's rows describe, so a merge re-indexes only the pages that changed.
 */
export async function up(db: Kysely<any>): Promise<void> {
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
    );
    CREATE INDEX search_pages_tsv ON search_pages USING gin (tsv);

    CREATE TABLE search_state (
      space_id text PRIMARY KEY REFERENCES spaces(id) ON DELETE CASCADE,
      root text NOT NULL
    );
  `.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`DROP TABLE search_state; DROP TABLE search_pages;`.execute(db);
}
