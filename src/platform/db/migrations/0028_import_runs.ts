import { sql, type Kysely } from 'kysely';

/**
 * Import runs (startImportRun): a background job turning uploaded files (Markdown, zip archives
 * of Docusaurus, MkDocs or plain folders) into the pages of a space. Progress and per-page
 * warnings are kept with the run; `result_revision` names what the import wrote, once.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await sql`
    CREATE TABLE import_runs (
      id text PRIMARY KEY,
      seq bigint GENERATED ALWAYS AS IDENTITY UNIQUE,
      organization_id text NOT NULL REFERENCES organizations(id) ON DELETE CASCADE,
      space_id text NOT NULL REFERENCES spaces(id) ON DELETE CASCADE,
      change_request_id text,
      page_id text,
      site_id text,
      source jsonb NOT NULL,
      status text NOT NULL DEFAULT 'pending',
      reason text,
      project text,
      progress jsonb NOT NULL,
      warnings jsonb NOT NULL,
      pages jsonb,
      result_revision text,
      job_id bigint,
      created_by text REFERENCES users(id) ON DELETE SET NULL,
      created_at timestamptz NOT NULL,
      updated_at timestamptz NOT NULL,
      started_at timestamptz,
      completed_at timestamptz
    )
  `.execute(db);
  await sql`CREATE INDEX import_runs_org_seq ON import_runs (organization_id, seq)`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`DROP TABLE import_runs`.execute(db);
}
