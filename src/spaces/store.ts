import type { Db } from '../platform/db/database.ts';
import type { SpaceRow } from '../platform/db/schema.ts';

/** A space by id, including deleted ones (callers decide what a deleted space means for them). */
export async function findSpace(db: Db, spaceId: string): Promise<SpaceRow | undefined> {
  return db.selectFrom('spaces').selectAll().where('id', '=', spaceId).executeTakeFirst();
}

/** Live (not deleted) spaces of one organization. */
export function liveSpacesOf(db: Db, organizationId: string) {
  return db.selectFrom('spaces').selectAll('spaces').where('spaces.organization_id', '=', organizationId).where('spaces.deleted_at', 'is', null);
}

/** Number of live spaces of an organization, from the counter a trigger keeps (O(1)). */
export async function liveSpaceCount(db: Db, organizationId: string): Promise<number> {
  const row = await db.selectFrom('space_counts').select('live').where('organization_id', '=', organizationId).executeTakeFirst();
  return row?.live ?? 0;
}
