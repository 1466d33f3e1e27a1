import { sql, type InsertObject, type UpdateObject } from 'kysely';
import { json, type Db } from '../platform/db/database.ts';
import type { SpaceCounts } from './presenter.ts';
import type { Database, SpaceRow, Visibility } from '../platform/db/schema.ts';
import { newId } from '../platform/ids.ts';

/**
 * The SQL of spaces: their rows, their first revisions, the grants that follow them, and the order
 * of spaces and collections among siblings. Every query names the organization, except lookups by
 * id that tell which organization a space belongs to, and the purge job's.
 */

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

/** Inserts a space's first (empty or copied) revision and returns its id. */
export async function insertRevision(
  db: Db,
  organizationId: string,
  spaceId: string,
  userId: string,
  parents: string[] = [],
  root = '',
): Promise<string> {
  const id = newId();
  await db
    .insertInto('revisions')
    .values({ id, space_id: spaceId, organization_id: organizationId, parents: json(parents), created_by: userId, created_at: new Date(), root, message: null })
    .execute();
  return id;
}

/** The content root of a revision. */
export async function revisionRoot(db: Db, revisionId: string): Promise<string> {
  return (await db.selectFrom('revisions').select('root').where('id', '=', revisionId).executeTakeFirstOrThrow()).root;
}

export type NewSpace = Omit<InsertObject<Database, 'spaces'>, 'organization_id'>;

/** An organization's default content language (null: none), which a new space takes. */
export async function organizationLanguage(db: Db, organizationId: string): Promise<string | null> {
  const row = await db.selectFrom('organizations').select('language').where('id', '=', organizationId).executeTakeFirst();
  return row?.language ?? null;
}

export async function insertSpace(db: Db, organizationId: string, space: NewSpace): Promise<SpaceRow> {
  return db
    .insertInto('spaces')
    .values({ ...space, organization_id: organizationId })
    .returningAll()
    .executeTakeFirstOrThrow();
}

/** Changes a space (by id: the caller found it in its organization) and returns it. */
export async function updateSpaceRow(db: Db, spaceId: string, changes: UpdateObject<Database, 'spaces'>): Promise<SpaceRow> {
  return db.updateTable('spaces').set(changes).where('id', '=', spaceId).returningAll().executeTakeFirstOrThrow();
}

/** A space's visibility, read under a row lock (`update` or, when its key stays, `no key update`). */
export async function lockedVisibility(db: Db, spaceId: string, lock: 'update' | 'no key update'): Promise<Visibility> {
  const query = db.selectFrom('spaces').select('visibility').where('id', '=', spaceId);
  const row = await (lock === 'update' ? query.forUpdate() : query.forNoKeyUpdate()).executeTakeFirstOrThrow();
  return row.visibility;
}

/** A space read again under a row lock (undefined when it was purged). */
export async function lockSpace(db: Db, spaceId: string): Promise<SpaceRow | undefined> {
  return db.selectFrom('spaces').selectAll().where('id', '=', spaceId).forUpdate().executeTakeFirst();
}

/** Holds a collection in place (a row share lock) while a space comes back into it. */
export async function holdCollection(db: Db, collectionId: string): Promise<void> {
  await db.selectFrom('collections').select('id').where('id', '=', collectionId).forShare().execute();
}

export async function markSpaceDeleted(db: Db, spaceId: string, deletedAt: Date): Promise<void> {
  await db.updateTable('spaces').set({ deleted_at: deletedAt, updated_at: deletedAt }).where('id', '=', spaceId).execute();
}

/** Marks deleted the live spaces in the collections and returns their ids. */
export async function markSpacesDeletedIn(db: Db, organizationId: string, collectionIds: string[], deletedAt: Date): Promise<string[]> {
  const rows = await db
    .updateTable('spaces')
    .set({ deleted_at: deletedAt, updated_at: deletedAt })
    .where('organization_id', '=', organizationId)
    .where('parent_id', 'in', collectionIds)
    .where('deleted_at', 'is', null)
    .returning('id')
    .execute();
  return rows.map((r) => r.id);
}

/** The space, locked, when it was deleted before the cutoff (the purge job's check). */
export async function lockDeletedBefore(db: Db, spaceId: string, cutoff: Date): Promise<string | undefined> {
  const row = await db
    .selectFrom('spaces')
    .select('id')
    .where('id', '=', spaceId)
    .where('deleted_at', 'is not', null)
    .where('deleted_at', '<=', cutoff)
    .forUpdate()
    .executeTakeFirst();
  return row?.id;
}

/** Removes a space row and the grants on it (its other rows go with it by foreign key). */
export async function deleteSpaceRows(db: Db, spaceId: string): Promise<void> {
  await db.deleteFrom('spaces').where('id', '=', spaceId).execute();
  await db.deleteFrom('content_permissions').where('target_type', '=', 'space').where('target_id', '=', spaceId).execute();
}

/** Gives a new space the grants of the space it copies. */
export async function copySpaceGrants(db: Db, fromSpaceId: string, toSpaceId: string, now: Date): Promise<void> {
  await sql`
    INSERT INTO content_permissions (organization_id, target_type, target_id, principal_type, principal_id, role, created_at)
    SELECT organization_id, target_type, ${toSpaceId}, principal_type, principal_id, role, ${now}
    FROM content_permissions WHERE target_type = 'space' AND target_id = ${fromSpaceId}`.execute(db);
}

/** Moves the spaces of the collections to another organization and returns their ids. */
export async function moveSpacesIn(db: Db, from: string, collectionIds: string[], to: string): Promise<string[]> {
  const rows = await db
    .updateTable('spaces')
    .set({ organization_id: to })
    .where('organization_id', '=', from)
    .where('parent_id', 'in', collectionIds)
    .returning('id')
    .execute();
  return rows.map((s) => s.id);
}

/** Moves the revisions of the spaces to another organization. */
export async function moveRevisions(db: Db, spaceIds: string[], to: string): Promise<void> {
  if (spaceIds.length === 0) return;
  await db.updateTable('revisions').set({ organization_id: to }).where('space_id', 'in', spaceIds).execute();
}

/** Re-homes grants on content moving between organizations, dropping those that cannot follow. */
export async function moveGrants(trx: Db, targetIds: string[], targetType: 'space' | 'collection', from: string, to: string) {
  if (targetIds.length === 0) return;
  await trx
    .deleteFrom('content_permissions')
    .where('target_type', '=', targetType)
    .where('target_id', 'in', targetIds)
    .where((eb) =>
      eb.or([
        eb('principal_type', '=', 'team'),
        eb.not(eb.exists(eb.selectFrom('members').select('user_id').where('members.organization_id', '=', to).whereRef('members.user_id', '=', 'content_permissions.principal_id'))),
      ]),
    )
    .execute();
  await trx
    .updateTable('content_permissions')
    .set({ organization_id: to })
    .where('target_type', '=', targetType)
    .where('target_id', 'in', targetIds)
    .where('organization_id', '=', from)
    .execute();
}

// Order among siblings (see ordering.ts for the rules).

/** Serializes placements under one parent, so two concurrent moves cannot pick the same key. */
export async function lockSiblings(trx: Db, organizationId: string, parentId: string | null): Promise<void> {
  await sql`SELECT pg_advisory_xact_lock(hashtext(${`order:${organizationId}:${parentId ?? ''}`}))`.execute(trx);
}

/**
 * Serializes changes to the shape of an organization's collection tree (re-parenting, deleting or
 * transferring collections): two crossed moves (A under B, B under A) each pass the cycle check on
 * their own, and would make a cycle together.
 */
export async function lockTree(trx: Db, organizationId: string): Promise<void> {
  await sql`SELECT pg_advisory_xact_lock(hashtext(${`tree:${organizationId}`}))`.execute(trx);
}

/** The organization of a collection, read under a row share lock (undefined when it is gone). */
export async function shareLockCollection(trx: Db, collectionId: string): Promise<string | undefined> {
  const row = await trx.selectFrom('collections').select('organization_id').where('id', '=', collectionId).forShare().executeTakeFirst();
  return row?.organization_id;
}

const parentIs = (parentId: string | null) => (parentId === null ? sql`parent_id IS NULL` : sql`parent_id = ${parentId}`);

/** The position of the nearest sibling (excluding `movingId`) strictly after or before a key, null when there is none. */
export async function neighbourKey(
  trx: Db,
  organizationId: string,
  parentId: string | null,
  key: string,
  direction: 'after' | 'before',
  movingId: string | undefined,
): Promise<string | null> {
  const cmp = sql.raw(direction === 'after' ? '>' : '<');
  const order = sql.raw(direction === 'after' ? 'ASC' : 'DESC');
  const parent = parentIs(parentId);
  const exclude = movingId ?? '';
  const rows = await sql<{ position: string }>`
    (SELECT position FROM spaces WHERE organization_id = ${organizationId} AND ${parent} AND deleted_at IS NULL
       AND position ${cmp} ${key} AND id <> ${exclude} ORDER BY position ${order} LIMIT 1)
    UNION ALL
    (SELECT position FROM collections WHERE organization_id = ${organizationId} AND ${parent}
       AND position ${cmp} ${key} AND id <> ${exclude} ORDER BY position ${order} LIMIT 1)`.execute(trx);
  // The nearest space and the nearest collection: the nearer of the two.
  const keys = rows.rows.map((r) => r.position).sort();
  if (keys.length === 0) return null;
  return direction === 'after' ? keys[0]! : keys[keys.length - 1]!;
}

/** The last position among the siblings (excluding `movingId`), null when there are none. */
export async function lastKey(trx: Db, organizationId: string, parentId: string | null, movingId: string | undefined): Promise<string | null> {
  const parent = parentIs(parentId);
  const exclude = movingId ?? '';
  const rows = await sql<{ position: string | null }>`
    SELECT max(position) AS position FROM (
      (SELECT position FROM spaces WHERE organization_id = ${organizationId} AND ${parent} AND deleted_at IS NULL AND id <> ${exclude}
        ORDER BY position DESC LIMIT 1)
      UNION ALL
      (SELECT position FROM collections WHERE organization_id = ${organizationId} AND ${parent} AND id <> ${exclude}
        ORDER BY position DESC LIMIT 1)
    ) AS last`.execute(trx);
  return rows.rows[0]?.position ?? null;
}

/** Whether a live sibling other than `movingId` holds the key. */
export async function keyTaken(trx: Db, organizationId: string, parentId: string | null, key: string, movingId: string): Promise<boolean> {
  const parent = parentIs(parentId);
  const taken = await sql<{ one: number }>`
    (SELECT 1 AS one FROM spaces WHERE organization_id = ${organizationId} AND ${parent} AND deleted_at IS NULL
       AND position = ${key} AND id <> ${movingId} LIMIT 1)
    UNION ALL
    (SELECT 1 AS one FROM collections WHERE organization_id = ${organizationId} AND ${parent}
       AND position = ${key} AND id <> ${movingId} LIMIT 1)`.execute(trx);
  return taken.rows.length > 0;
}

/** The position of a live space or a collection under the parent, undefined when it is not there. */
export async function siblingPosition(
  trx: Db,
  organizationId: string,
  parentId: string | null,
  table: 'spaces' | 'collections',
  id: string,
): Promise<string | undefined> {
  const live = table === 'spaces' ? sql`AND deleted_at IS NULL` : sql``;
  const rows = await sql<{ position: string }>`
    SELECT position FROM ${sql.table(table)} WHERE id = ${id} AND organization_id = ${organizationId} AND ${parentIs(parentId)} ${live}`.execute(trx);
  return rows.rows[0]?.position;
}
