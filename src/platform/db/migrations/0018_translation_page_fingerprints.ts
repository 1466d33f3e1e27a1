import { sql, type Kysely } from 'kysely';

/**
 * Computed translated documents (src/translations/computed.ts) find the target page written from a
 * source document by its fingerprint: an index keeps that lookup one probe however many pages a
 * translation maps.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await sql`CREATE INDEX translation_pages_fingerprint ON translation_pages (translation_id, fingerprint) WHERE fingerprint IS NOT NULL;`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`DROP INDEX translation_pages_fingerprint;`.execute(db);
}
