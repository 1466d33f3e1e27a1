import { sql, type Kysely } from 'kysely';

/**
 * An organization's default content language (Folio's addition: the official Organization has no
 * such field): new spaces take it, and search indexes and queries a space without a language of
 * its own in it (src/search/language.ts); the insights engine reads conversations in it.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await sql`ALTER TABLE organizations ADD COLUMN language text`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`ALTER TABLE organizations DROP COLUMN language`.execute(db);
}
