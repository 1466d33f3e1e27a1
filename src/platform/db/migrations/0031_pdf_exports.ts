import { sql, type Kysely } from 'kysely';

/**
 * PDF exports (getSpacePDF, getChangeRequestPDF): what was asked to be printed, how far the
 * printing is, and the PDF once printed. `key` names the content printed (revision, selection,
 * title), so asking twice for the same content shares one export.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await sql`
    CREATE TABLE pdf_exports (
      id text PRIMARY KEY,
      organization_id text NOT NULL REFERENCES organizations(id) ON DELETE CASCADE,
      space_id text NOT NULL REFERENCES spaces(id) ON DELETE CASCADE,
      key text NOT NULL,
      request jsonb NOT NULL,
      status text NOT NULL,
      pages_total integer NOT NULL,
      pages_done integer NOT NULL DEFAULT 0,
      blob text,
      name text NOT NULL,
      reason text,
      job_id bigint,
      created_at timestamptz NOT NULL,
      updated_at timestamptz NOT NULL
    )
  `.execute(db);
  await sql`CREATE INDEX pdf_exports_key ON pdf_exports (organization_id, key)`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`DROP TABLE pdf_exports`.execute(db);
}
