import { generateKeyBetween } from 'fractional-indexing';
import { sql } from 'kysely';
import type { Db } from '../platform/db/database.ts';
import { BadRequestError } from '../platform/errors.ts';

/**
 * Order among siblings. Spaces and collections under one parent (or at the top level) form one
 * ordered list by `position`, a fractional-index key: a key between any two neighbours always
 * exists, so placing an item writes that item only, never its siblings.
 */

export type Pointer = { type: 'space'; space: string } | { type: 'collection'; collection: string };
export interface Position {
  before?: Pointer | undefined;
  after?: Pointer | undefined;
}

function pointerId(p: Pointer): { table: 'spaces' | 'collections'; id: string } {
  return p.type === 'space' ? { table: 'spaces', id: p.space } : { table: 'collections', id: p.collection };
}

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

/**
 * Holds the parent collection in place (a row share lock) while content is put into it, and checks
 * it still belongs to the organization: a concurrent delete or transfer of the collection either
 * waits for this transaction or has already happened, and then this is a 400 rather than content
 * under a missing or foreign parent.
 */
export async function lockParent(trx: Db, organizationId: string, parentId: string | null, field: string): Promise<void> {
  if (parentId === null) return;
  const row = await trx.selectFrom('collections').select('organization_id').where('id', '=', parentId).forShare().executeTakeFirst();
  if (!row || row.organization_id !== organizationId) {
    throw new BadRequestError(`${field}: collection ${parentId} not found in this organization`);
  }
}

/** Positions of siblings (excluding `movingId`) strictly after or before a key, nearest first. */
async function neighbour(
  trx: Db,
  organizationId: string,
  parentId: string | null,
  key: string,
  direction: 'after' | 'before',
  movingId: string | undefined,
): Promise<string | null> {
  const cmp = sql.raw(direction === 'after' ? '>' : '<');
  const order = sql.raw(direction === 'after' ? 'ASC' : 'DESC');
  const parent = parentId === null ? sql`parent_id IS NULL` : sql`parent_id = ${parentId}`;
  const exclude = movingId ?? '';
  const rows = await sql<{ position: string }>`
    (SELECT position FROM spaces WHERE organization_id = ${organizationId} AND ${parent} AND deleted_at IS NULL
       AND position ${cmp} ${key} AND id <> ${exclude} ORDER BY position ${order} LIMIT 1)
    UNION ALL
    (SELECT position FROM collections WHERE organization_id = ${organizationId} AND ${parent}
       AND position ${cmp} ${key} AND id <> ${exclude} ORDER BY position ${order} LIMIT 1)`.execute(trx);
  const keys = rows.rows.map((r) => r.position).sort();
  if (keys.length === 0) return null;
  return direction === 'after' ? keys[0]! : keys[keys.length - 1]!;
}

async function lastKey(trx: Db, organizationId: string, parentId: string | null, movingId: string | undefined) {
  const parent = parentId === null ? sql`parent_id IS NULL` : sql`parent_id = ${parentId}`;
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

/**
 * `key` when no other live sibling under `parentId` holds it, else a key right after the siblings
 * that do. For an item coming back to a place it left (a restored space): siblings created
 * meanwhile may have taken its key. Call inside a transaction that holds lockSiblings.
 */
export async function keepOrNextKey(trx: Db, organizationId: string, parentId: string | null, key: string, movingId: string): Promise<string> {
  const parent = parentId === null ? sql`parent_id IS NULL` : sql`parent_id = ${parentId}`;
  const taken = await sql<{ one: number }>`
    (SELECT 1 AS one FROM spaces WHERE organization_id = ${organizationId} AND ${parent} AND deleted_at IS NULL
       AND position = ${key} AND id <> ${movingId} LIMIT 1)
    UNION ALL
    (SELECT 1 AS one FROM collections WHERE organization_id = ${organizationId} AND ${parent}
       AND position = ${key} AND id <> ${movingId} LIMIT 1)`.execute(trx);
  if (taken.rows.length === 0) return key;
  return generateKeyBetween(key, await neighbour(trx, organizationId, parentId, key, 'after', movingId));
}

async function siblingKey(trx: Db, organizationId: string, parentId: string | null, pointer: Pointer, field: string) {
  const { table, id } = pointerId(pointer);
  const parent = parentId === null ? sql`parent_id IS NULL` : sql`parent_id = ${parentId}`;
  const live = table === 'spaces' ? sql`AND deleted_at IS NULL` : sql``;
  const rows = await sql<{ position: string }>`
    SELECT position FROM ${sql.table(table)} WHERE id = ${id} AND organization_id = ${organizationId} AND ${parent} ${live}`.execute(trx);
  const row = rows.rows[0];
  if (!row) {
    throw new BadRequestError(`position.${field}: ${pointer.type} ${id} is not an item of the same parent`);
  }
  return row.position;
}

/**
 * The key that places an item among the siblings under `parentId`: after `position.after`, before
 * `position.before`, between both, or last when no position is given. Call inside a transaction
 * that holds lockSiblings for that parent.
 */
export async function keyFor(
  trx: Db,
  organizationId: string,
  parentId: string | null,
  position: Position | undefined,
  movingId?: string,
): Promise<string> {
  const { before, after } = position ?? {};
  for (const [field, pointer] of [['before', before], ['after', after]] as const) {
    if (pointer && pointerId(pointer).id === movingId) throw new BadRequestError(`position.${field}: an item cannot be placed relative to itself`);
  }
  if (after && before) {
    const low = await siblingKey(trx, organizationId, parentId, after, 'after');
    const high = await siblingKey(trx, organizationId, parentId, before, 'before');
    if (low >= high) throw new BadRequestError('position: "after" must come before "before" among the siblings');
    if ((await neighbour(trx, organizationId, parentId, low, 'after', movingId)) !== high) {
      throw new BadRequestError('position: "after" and "before" must be adjacent siblings');
    }
    return generateKeyBetween(low, high);
  }
  if (after) {
    const low = await siblingKey(trx, organizationId, parentId, after, 'after');
    return generateKeyBetween(low, await neighbour(trx, organizationId, parentId, low, 'after', movingId));
  }
  if (before) {
    const high = await siblingKey(trx, organizationId, parentId, before, 'before');
    return generateKeyBetween(await neighbour(trx, organizationId, parentId, high, 'before', movingId), high);
  }
  return generateKeyBetween(await lastKey(trx, organizationId, parentId, movingId), null);
}
