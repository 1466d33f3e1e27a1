import { generateKeyBetween } from 'fractional-indexing';
import type { Db } from '../platform/db/database.ts';
import { BadRequestError } from '../platform/errors.ts';
import { keyTaken, lastKey, lockSiblings, lockTree, neighbourKey, shareLockCollection, siblingPosition } from './store.ts';

export { lockSiblings, lockTree };

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

/**
 * Holds the parent collection in place (a row share lock) while content is put into it, and checks
 * it still belongs to the organization: a concurrent delete or transfer of the collection either
 * waits for this transaction or has already happened, and then this is a 400 rather than content
 * under a missing or foreign parent.
 */
export async function lockParent(trx: Db, organizationId: string, parentId: string | null, field: string): Promise<void> {
  if (parentId === null) return;
  if ((await shareLockCollection(trx, parentId)) !== organizationId) {
    throw new BadRequestError(`${field}: collection ${parentId} not found in this organization`);
  }
}

/**
 * `key` when no other live sibling under `parentId` holds it, else a key right after the siblings
 * that do. For an item coming back to a place it left (a restored space): siblings created
 * meanwhile may have taken its key. Call inside a transaction that holds lockSiblings.
 */
export async function keepOrNextKey(trx: Db, organizationId: string, parentId: string | null, key: string, movingId: string): Promise<string> {
  if (!(await keyTaken(trx, organizationId, parentId, key, movingId))) return key;
  return generateKeyBetween(key, await neighbourKey(trx, organizationId, parentId, key, 'after', movingId));
}

async function siblingKey(trx: Db, organizationId: string, parentId: string | null, pointer: Pointer, field: string) {
  const { table, id } = pointerId(pointer);
  const key = await siblingPosition(trx, organizationId, parentId, table, id);
  if (key === undefined) {
    throw new BadRequestError(`position.${field}: ${pointer.type} ${id} is not an item of the same parent`);
  }
  return key;
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
    if ((await neighbourKey(trx, organizationId, parentId, low, 'after', movingId)) !== high) {
      throw new BadRequestError('position: "after" and "before" must be adjacent siblings');
    }
    return generateKeyBetween(low, high);
  }
  if (after) {
    const low = await siblingKey(trx, organizationId, parentId, after, 'after');
    return generateKeyBetween(low, await neighbourKey(trx, organizationId, parentId, low, 'after', movingId));
  }
  if (before) {
    const high = await siblingKey(trx, organizationId, parentId, before, 'before');
    return generateKeyBetween(await neighbourKey(trx, organizationId, parentId, high, 'before', movingId), high);
  }
  return generateKeyBetween(await lastKey(trx, organizationId, parentId, movingId), null);
}
