import { sql, type Kysely } from 'kysely';

/**
 * Live co-editing (src/collab/): the CRDT state (Yjs) of each page being edited together in a
 * change request, beside the markdown it was last saved as (`base_hash`), so a restarted server
 * resumes the very same shared document the editors hold (a document rebuilt from markdown would
 * double their text when they reconnect). `collab_relay` carries updates too big for a NOTIFY
 * payload between processes on PostgreSQL (src/collab/relay.ts); rows live for minutes.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await sql`
    CREATE TABLE collab_documents (
      change_request_id text NOT NULL REFERENCES change_requests(id) ON DELETE CASCADE,
      page_id text NOT NULL,
      organization_id text NOT NULL,
      state bytea NOT NULL,
      base_hash text NOT NULL,
      updated_at timestamptz NOT NULL DEFAULT now(),
      PRIMARY KEY (change_request_id, page_id)
    )`.execute(db);
  await sql`
    CREATE TABLE collab_relay (
      id bigserial PRIMARY KEY,
      data bytea NOT NULL,
      created_at timestamptz NOT NULL DEFAULT now()
    )`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`DROP TABLE collab_relay`.execute(db);
  await sql`DROP TABLE collab_documents`.execute(db);
}
