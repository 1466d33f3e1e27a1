import { generateNKeysBetween } from 'fractional-indexing';
import { sql } from 'kysely';
import type { Db } from '../../src/platform/db/database.ts';

/**
 * Inserts `count` spaces (each with its first revision) at the top level of an organization in a
 * few statements, for scale tests and benchmarks. Positions are real fractional-index keys placed
 * after any existing sibling, so later moves and inserts behave as in production.
 */
export async function bulkSpaces(db: Db, organizationId: string, count: number, createdBy: string): Promise<void> {
  const keys = generateNKeysBetween(null, null, count);
  const batch = 2000;
  for (let start = 0; start < count; start += batch) {
    const slice = keys.slice(start, start + batch);
    await db.transaction().execute(async (trx) => {
      await sql`
        WITH input AS (
          SELECT k.key, k.n, md5(${organizationId} || k.n::text || clock_timestamp()::text) AS id
          FROM unnest(${sql.val(slice)}::text[]) WITH ORDINALITY AS k(key, n)
        ), revs AS (
          INSERT INTO revisions (id, space_id, organization_id, parents, created_by, created_at)
          SELECT 'r' || id, id, ${organizationId}, '[]', ${createdBy}, now() FROM input
        )
        INSERT INTO spaces (id, organization_id, parent_id, title, visibility, edit_mode, default_level, merge_rules,
                            revision_id, share_key, position, created_by, created_at, updated_at)
        SELECT id, ${organizationId}, NULL, 'Space ' || (${start}::int + n), 'private', 'live', 'inherit', '{"type":"inherit"}',
               'r' || id, md5(id), key, ${createdBy}, now(), now()
        FROM input ORDER BY n`.execute(trx);
    });
  }
}
