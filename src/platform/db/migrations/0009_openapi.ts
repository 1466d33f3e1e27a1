import { sql, type Kysely } from 'kysely';

/**
 * OpenAPI specifications of an organization and their versions. A version lists the files of the
 * spec (the root and every external file it references); their bytes are blobs stored by hash.
 * `generation` grows with each PUT, so a processing job started for an older source drops its result.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await sql`
    CREATE TABLE openapi_specs (
      id text PRIMARY KEY,
      seq bigint GENERATED ALWAYS AS IDENTITY UNIQUE,
      organization_id text NOT NULL REFERENCES organizations(id) ON DELETE CASCADE,
      slug text NOT NULL,
      source_url text,
      source_text text,
      visibility text NOT NULL DEFAULT 'private',
      processing_state text NOT NULL DEFAULT 'pending',
      generation integer NOT NULL DEFAULT 1,
      last_version_id text,
      last_processed_at timestamptz(3),
      last_error_code text,
      last_errors jsonb NOT NULL DEFAULT '[]',
      last_error_count integer NOT NULL DEFAULT 0,
      created_at timestamptz(3) NOT NULL,
      updated_at timestamptz(3) NOT NULL,
      UNIQUE (organization_id, slug)
    );

    CREATE TABLE openapi_spec_versions (
      id text PRIMARY KEY,
      seq bigint GENERATED ALWAYS AS IDENTITY UNIQUE,
      spec_id text NOT NULL REFERENCES openapi_specs(id) ON DELETE CASCADE,
      organization_id text NOT NULL,
      url text NOT NULL,
      content_hash text NOT NULL,
      files jsonb NOT NULL,
      created_at timestamptz(3) NOT NULL
    );
    CREATE INDEX openapi_spec_versions_spec ON openapi_spec_versions (spec_id, seq);
  `.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`DROP TABLE openapi_spec_versions; DROP TABLE openapi_specs;`.execute(db);
}
