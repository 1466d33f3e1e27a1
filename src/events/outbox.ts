import type { Db } from '../platform/db/database.ts';
import { newId } from '../platform/ids.ts';
import type { Jobs } from '../platform/jobs.ts';
import { deleteOldEvents, insertEvents, installationsCoveringSpace } from './store.ts';

/** Job that delivers the pending events of one installation, in order. */
export const DELIVER_JOB = 'integrations.deliver';
/** Job that removes events older than the retention. */
export const PRUNE_EVENTS_JOB = 'integrations.prune-events';

export interface NewEvent {
  integrationId: string;
  /** The installation the event is for; its events are delivered one at a time, in order. */
  installationId: string;
  spaceId?: string | undefined;
  /** The event without `eventId` (added here) and `installationId` (added here). */
  payload: { type: string } & Record<string, unknown>;
}

/**
 * Writes events into the outbox. Call it with the transaction of the change that caused them:
 * the events exist exactly when the change commits, and a delivery job is queued in the same
 * transaction, so nothing is lost across a crash or restart.
 */
export async function emitEvents(trx: Db, jobs: Jobs, events: NewEvent[]): Promise<void> {
  if (events.length === 0) return;
  const now = new Date();
  await insertEvents(
    trx,
    events.map((e) => {
      const id = newId();
      return {
        id,
        integrationId: e.integrationId,
        installationId: e.installationId,
        spaceId: e.spaceId ?? null,
        payload: { eventId: id, installationId: e.installationId, ...(e.spaceId ? { spaceId: e.spaceId } : {}), ...e.payload },
      };
    }),
    now,
  );
  for (const installationId of new Set(events.map((e) => e.installationId))) {
    await jobs.enqueue(DELIVER_JOB, { installationId }, { db: trx });
  }
}

/**
 * Events for every active installation covering a space (all spaces of its organization, or this
 * space selected), built by `payload` per installation. For changes of a space (merges, …).
 */
export async function emitSpaceEvent(
  trx: Db,
  jobs: Jobs,
  space: { id: string; organization_id: string },
  payload: { type: string } & Record<string, unknown>,
): Promise<void> {
  const rows = await installationsCoveringSpace(trx, space).select(['inst.id', 'inst.integration_id']).execute();
  await emitEvents(
    trx,
    jobs,
    rows.map((r) => ({ integrationId: r.integration_id, installationId: r.id, spaceId: space.id, payload })),
  );
}

/** Removes events created before `retentionMs` ago (delivered or given up; pending ones are kept). */
export async function pruneEvents(db: Db, retentionMs: number): Promise<number> {
  return deleteOldEvents(db, new Date(Date.now() - retentionMs));
}

