import { sql, type Kysely } from 'kysely';

/**
 * Object storage: file bytes may live outside the database (FILE_STORAGE=s3). A `blobs` row is
 * then the hash and size only, its `data` null; `data` holds the bytes while the embedded store
 * keeps them. `storage_uploads` records the direct uploads `generateStorageUploadURL` signed: the
 * key it answered, the organization it belongs to, and, once the bytes arrived and were read, the
 * hash they are stored under.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await sql`
    ALTER TABLE blobs ALTER COLUMN data DROP NOT NULL;

    CREATE TABLE storage_uploads (
      key text PRIMARY KEY,
      organization_id text NOT NULL REFERENCES organizations(id) ON DELETE CASCADE,
      kind text NOT NULL,
      name text NOT NULL,
      content_type text NOT NULL,
      size bigint NOT NULL,
      created_by text NOT NULL,
      created_at timestamptz(3) NOT NULL,
      expires_at timestamptz(3) NOT NULL,
      blob text
    );
    CREATE INDEX storage_uploads_org ON storage_uploads (organization_id, created_at);
  `.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`DROP TABLE storage_uploads`.execute(db);
}
