import { sql, type Kysely } from 'kysely';

/**
 * Translations: localized copies of a space kept in step by runs (a background job each).
 * - `translations`: the resource, its target space once the first run made it, its state and stats.
 *   `queued`/`rerun` make a run requested while one runs wait for it instead of running twice.
 * - `translation_pages`: which target page stands for which source page (ids are mapped stably, so
 *   links keep working), with the fingerprint of what was last written for it.
 * - `translation_memory`: translated segments by (source segment hash, language, instructions
 *   hash), per organization, so a re-run sends only new or changed text to the engine.
 * - `glossary_entries`: terms and their fixed translations per language.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await sql`
    CREATE TABLE translations (
      id text PRIMARY KEY,
      seq bigint GENERATED ALWAYS AS IDENTITY UNIQUE,
      organization_id text NOT NULL REFERENCES organizations(id) ON DELETE CASCADE,
      source_space_id text NOT NULL REFERENCES spaces(id) ON DELETE CASCADE,
      source_language text NOT NULL,
      language text NOT NULL,
      instructions jsonb,
      status text NOT NULL DEFAULT 'pending',
      error text,
      failed_at timestamptz,
      queued boolean NOT NULL DEFAULT false,
      rerun boolean NOT NULL DEFAULT false,
      result_space_id text REFERENCES spaces(id) ON DELETE SET NULL,
      result_revision text,
      last_source_root text,
      last_settings text,
      stats jsonb NOT NULL,
      created_by text REFERENCES users(id) ON DELETE SET NULL,
      created_at timestamptz NOT NULL,
      updated_at timestamptz NOT NULL
    );
    CREATE INDEX translations_org_seq ON translations (organization_id, seq);
    CREATE TABLE translation_pages (
      translation_id text NOT NULL REFERENCES translations(id) ON DELETE CASCADE,
      source_page_id text NOT NULL,
      target_page_id text NOT NULL,
      fingerprint text,
      PRIMARY KEY (translation_id, source_page_id)
    );
    CREATE TABLE translation_memory (
      organization_id text NOT NULL REFERENCES organizations(id) ON DELETE CASCADE,
      source_hash text NOT NULL,
      language text NOT NULL,
      instructions_hash text NOT NULL,
      translation text NOT NULL,
      created_at timestamptz NOT NULL,
      PRIMARY KEY (organization_id, source_hash, language, instructions_hash)
    );
    CREATE TABLE glossary_entries (
      id text PRIMARY KEY,
      seq bigint GENERATED ALWAYS AS IDENTITY UNIQUE,
      organization_id text NOT NULL REFERENCES organizations(id) ON DELETE CASCADE,
      translations jsonb NOT NULL,
      created_at timestamptz NOT NULL,
      updated_at timestamptz NOT NULL
    );
    CREATE INDEX glossary_entries_org_seq ON glossary_entries (organization_id, seq);
  `.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`DROP TABLE glossary_entries; DROP TABLE translation_memory; DROP TABLE translation_pages; DROP TABLE translations;`.execute(db);
}
