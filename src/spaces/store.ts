import { sql } from 'kysely';
import type { Db } from '../platform/db/database.ts';
import type { SpaceCounts } from './presenter.ts';
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

/** Change-request and open-comment counters of several spaces, in two grouped queries. */
export async function spaceCounts(db: Db, spaceIds: string[]): Promise<Map<string, SpaceCounts>> {
  const counts = new Map<string, SpaceCounts>();
  if (spaceIds.length === 0) return counts;
  const rows = await db
    .selectFrom('change_requests')
    .select((eb) => [
      'space_id',
      eb.fn.countAll<number>().as('total'),
      sql<number>`count(*) FILTER (WHERE status = 'open')`.as('open'),
      sql<number>`count(*) FILTER (WHERE status = 'draft')`.as('draft'),
    ])
    .where('space_id', 'in', spaceIds)
    .groupBy('space_id')
    .execute();
  for (const r of rows) {
    counts.set(r.space_id, { comments: 0, changeRequests: Number(r.total), changeRequestsOpen: Number(r.open), changeRequestsDraft: Number(r.draft) });
  }
  // Open comments on the space itself (comments inside change requests count on those).
  const comments = await db
    .selectFrom('comments')
    .select((eb) => ['space_id', eb.fn.countAll<number>().as('n')])
    .where('space_id', 'in', spaceIds)
    .where('change_request_id', 'is', null)
    .where('status', '=', 'open')
    .groupBy('space_id')
    .execute();
  for (const c of comments) {
    const current = counts.get(c.space_id) ?? { comments: 0, changeRequests: 0, changeRequestsOpen: 0, changeRequestsDraft: 0 };
    counts.set(c.space_id, { ...current, comments: Number(c.n) });
  }
  return counts;
}
