import { sql, type UpdateObject } from 'kysely';
import type { Db } from '../platform/db/database.ts';
import type { CollectionRow, Database } from '../platform/db/schema.ts';
import { newId } from '../platform/ids.ts';

/**
 * The SQL of collections. Every query names the organization, except the row lock that finds which
 * organization a collection belongs to now (it may have been transferred since it was read).
 */

export function collectionsOf(db: Db, organizationId: string) {
  return db.selectFrom('collections').selectAll('collections').where('collections.organization_id', '=', organizationId);
}

/** Locks a collection row for a change and returns its organization (undefined when it is gone). */
export async function lockCollectionRow(db: Db, collectionId: string): Promise<string | undefined> {
  const row = await db.selectFrom('collections').select('organization_id').where('id', '=', collectionId).forUpdate().executeTakeFirst();
  return row?.organization_id;
}

/** Locks the rows of the collections. */
export async function lockCollections(db: Db, organizationId: string, collectionIds: string[]): Promise<void> {
  await db.selectFrom('collections').select('id').where('organization_id', '=', organizationId).where('id', 'in', collectionIds).forUpdate().execute();
}

/** Ids of a collection and every collection below it. */
export async function subtree(db: Db, organizationId: string, collectionId: string): Promise<string[]> {
  const rows = await sql<{ id: string }>`
    WITH RECURSIVE tree(id) AS (
      SELECT id FROM collections WHERE id = ${collectionId} AND organization_id = ${organizationId}
      UNION SELECT c.id FROM collections c JOIN tree t ON c.parent_id = t.id
    ) SELECT id FROM tree`.execute(db);
  return rows.rows.map((r) => r.id);
}

export async function insertCollection(
  db: Db,
  organizationId: string,
  collection: { parentId: string | null; title: string; position: string; now: Date },
): Promise<CollectionRow> {
  return db
    .insertInto('collections')
    .values({
      id: newId(),
      organization_id: organizationId,
      parent_id: collection.parentId,
      title: collection.title,
      description: null,
      default_level: 'inherit',
      position: collection.position,
      created_at: collection.now,
      updated_at: collection.now,
    })
    .returningAll()
    .executeTakeFirstOrThrow();
}

export async function updateCollectionRow(
  db: Db,
  organizationId: string,
  collectionId: string,
  changes: UpdateObject<Database, 'collections'>,
): Promise<CollectionRow> {
  return db
    .updateTable('collections')
    .set(changes)
    .where('organization_id', '=', organizationId)
    .where('id', '=', collectionId)
    .returningAll()
    .executeTakeFirstOrThrow();
}

/** Deletes a collection (those below it go by foreign key) and the grants on it and them. */
export async function deleteCollectionRows(db: Db, organizationId: string, collectionId: string, subtreeIds: string[]): Promise<void> {
  await db
    .deleteFrom('content_permissions')
    .where('organization_id', '=', organizationId)
    .where('target_type', '=', 'collection')
    .where('target_id', 'in', subtreeIds)
    .execute();
  await db.deleteFrom('collections').where('organization_id', '=', organizationId).where('id', '=', collectionId).execute();
}

/** Moves the collections to another organization. */
export async function moveCollections(db: Db, from: string, collectionIds: string[], to: string): Promise<void> {
  await db.updateTable('collections').set({ organization_id: to }).where('organization_id', '=', from).where('id', 'in', collectionIds).execute();
}
