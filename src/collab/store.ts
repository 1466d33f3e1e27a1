import { sql } from 'kysely';
import type { Db } from '../platform/db/database.ts';

/** The SQL of co-edited pages' shared states (see migration 0026). */

export interface SharedState {
  state: Uint8Array;
  /** The hash of the markdown the state was last saved as (a page entry's `doc`). */
  baseHash: string;
}

/** Locks the page's shared state for the rest of the transaction and reads it (undefined: none yet). */
export async function lockState(trx: Db, changeRequestId: string, pageId: string): Promise<SharedState | undefined> {
  const row = await trx
    .selectFrom('collab_documents')
    .select(['state', 'base_hash'])
    .where('change_request_id', '=', changeRequestId)
    .where('page_id', '=', pageId)
    .forUpdate()
    .executeTakeFirst();
  return row && { state: row.state, baseHash: row.base_hash };
}

/** Stores the page's shared state (the row is locked by lockState, or new). */
export async function putState(trx: Db, ids: { organizationId: string; changeRequestId: string; pageId: string }, shared: SharedState): Promise<void> {
  await trx
    .insertInto('collab_documents')
    .values({
      change_request_id: ids.changeRequestId,
      page_id: ids.pageId,
      organization_id: ids.organizationId,
      state: shared.state,
      base_hash: shared.baseHash,
      updated_at: new Date(),
    })
    .onConflict((oc) => oc.columns(['change_request_id', 'page_id']).doUpdateSet({ state: shared.state, base_hash: shared.baseHash, updated_at: new Date() }))
    .execute();
}

/**
 * Serializes the first load of a page's shared state between processes: two processes building
 * it from markdown at once would make two different histories of the same text, which a CRDT
 * merges into the text twice.
 */
export async function lockNewState(trx: Db, changeRequestId: string, pageId: string): Promise<void> {
  await sql`SELECT pg_advisory_xact_lock(hashtext(${`collab:${changeRequestId}:${pageId}`}))`.execute(trx);
}

/** Stores an update for the other processes to read (relay.ts); old ones are dropped as it goes. */
export async function putRelayed(db: Db, data: Uint8Array): Promise<string> {
  const row = await db.insertInto('collab_relay').values({ data }).returning('id').executeTakeFirstOrThrow();
  if (Number(row.id) % 50 === 0) await db.deleteFrom('collab_relay').where('created_at', '<', new Date(Date.now() - 5 * 60_000)).execute();
  return String(row.id);
}

export async function getRelayed(db: Db, id: string): Promise<Uint8Array | undefined> {
  const row = await db.selectFrom('collab_relay').select('data').where('id', '=', id).executeTakeFirst();
  return row?.data;
}
