import { sql, type Kysely } from 'kysely';

/**
 * Reader sessions of Folio's own published pages are found from the reader's last event (a
 * session continues while its visitor's events are less than 30 minutes apart: src/ask/events.ts),
 * so a site's events are also indexed by visitor.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await sql`CREATE INDEX site_events_visitor ON site_events (organization_id, site_id, visitor_id, created_at)`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`DROP INDEX site_events_visitor`.execute(db);
}
