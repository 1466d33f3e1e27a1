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
