import { sql, type Kysely } from 'kysely';

/**
 * Vectors of page sections for Ask's retrieval (AI_EMBEDDING_MODEL): one row per distinct section
 * text of a page, keyed by the hash of the model and the text embedded, so an edit re-embeds only
 * the sections whose text changed, and a text already embedded anywhere (a copied space, a page
 * moved to another space) is not embedded again. Vectors are stored as float4 bytes (little-endian, normalized to
 * length 1) and ranked exactly in the process (src/ask/vectors.ts): neither the PostgreSQL of the
 * machine Folio is built on nor PGlite 0.5 ship pgvector. `ask_embedding_state` records the search
 * root and model a space's vectors were last brought up to, so a start embeds what a process
 * stopped too early left behind. `ask_vector_versions` counts the changes to a space's vectors: a
 * process keeps the vectors it read in memory until the count moves.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await sql`
    CREATE TABLE ask_sections (
      space_id text NOT NULL REFERENCES spaces(id) ON DELETE CASCADE,
      page_id text NOT NULL,
      hash text NOT NULL,
      section_id text NOT NULL,
      section_title text NOT NULL,
      vector bytea NOT NULL,
      PRIMARY KEY (space_id, page_id, hash)
    );
    CREATE INDEX ask_sections_hash ON ask_sections (hash);

    CREATE TABLE ask_vector_versions (
      space_id text PRIMARY KEY REFERENCES spaces(id) ON DELETE CASCADE,
      version bigint NOT NULL
    );

    CREATE TABLE ask_embedding_state (
      space_id text PRIMARY KEY REFERENCES spaces(id) ON DELETE CASCADE,
      root text NOT NULL,
      model text NOT NULL
    );
  `.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`DROP TABLE ask_embedding_state; DROP TABLE ask_vector_versions; DROP TABLE ask_sections;`.execute(db);
}
