import { sql, type Kysely } from 'kysely';

/**
 * Documents (page and reusable-content markdown) are stored once by hash and shared by every
 * revision, and by every space, that holds the same text. `space_documents` records which spaces
 * hold which documents, so a document read by id (`GET /spaces/{id}/documents/{documentId}`) is
 * scoped to its space without walking any revision. Spaces created before this table are indexed
 * on their first document read (see src/content/documents.ts).
 */
export async function up(db: Kysely<any>): Promise<void> {
  await sql`
    CREATE TABLE space_documents (
      space_id text NOT NULL REFERENCES spaces(id) ON DELETE CASCADE,
      hash text NOT NULL,
      PRIMARY KEY (space_id, hash)
    );
    ALTER TABLE spaces ADD COLUMN documents_indexed boolean NOT NULL DEFAULT false;
  `.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`DROP TABLE space_documents; ALTER TABLE spaces DROP COLUMN documents_indexed;`.execute(db);
}
