import { emitSpaceEvent } from '../events/outbox.ts';
import type { Db } from '../platform/db/database.ts';
import type { Jobs } from '../platform/jobs.ts';

/** The revision and commit a git sync event names (both required by the official events). */
export interface SyncIds {
  revisionId: string;
  commitId: string;
}

/**
 * The official `space_gitsync_started` and `space_gitsync_completed` events of one run of a git
 * import or export job, written to the integrations' outbox.
 *
 * - `started` is sent once per attempt, as soon as the run knows what it syncs (an import: the
 *   commit it fetched; an export: the revision it exports). A retried job starts again (the branch
 *   may have moved meanwhile), so its integrations may see `started` more than once before the one
 *   `completed`.
 * - `completed` is sent once per job, in the transaction that records the outcome: on success, on
 *   a failure the user must fix (not retried), and on the last failed attempt. An attempt that
 *   will be retried sends no `completed`.
 * - A run that fails before it knew its ids sends `started` just before its `completed`, so every
 *   `completed` follows a `started`, and both carry the best ids known (see `know`).
 */
export class GitSyncEvents {
  private ids: SyncIds;
  private startedSent = false;
  /** Set once the transaction holding `completed` has committed: nothing more is sent. */
  private done = false;

  constructor(
    private readonly jobs: Jobs,
    private readonly space: { id: string; organization_id: string },
    initial: SyncIds,
  ) {
    this.ids = { ...initial };
  }

  /** Whether the outcome is recorded (the transaction holding `completed` has committed). */
  get finished(): boolean {
    return this.done;
  }

  /** Records ids learnt along the way, for a failure to report the best ones. */
  know(ids: Partial<SyncIds>): void {
    this.ids = { ...this.ids, ...ids };
  }

  async started(db: Db, ids: Partial<SyncIds> = {}): Promise<void> {
    this.know(ids);
    if (this.startedSent || this.done) return;
    await db.transaction().execute((trx) => emitSpaceEvent(trx, this.jobs, this.space, { type: 'space_gitsync_started', ...this.ids }));
    this.startedSent = true;
  }

  /**
   * Runs the transaction that records the end of the sync, with `completed` written in it; `fn`
   * returns its result and the final ids.
   */
  async finish<T>(db: Db, state: 'success' | 'failure', fn: (trx: Db) => Promise<{ result: T; ids?: Partial<SyncIds> }>): Promise<T> {
    const result = await db.transaction().execute(async (trx) => {
      const out = await fn(trx);
      // Not remembered: if this transaction rolls back, its revision never existed.
      const ids = { ...this.ids, ...out.ids };
      if (!this.done) {
        if (!this.startedSent) await emitSpaceEvent(trx, this.jobs, this.space, { type: 'space_gitsync_started', ...this.ids });
        await emitSpaceEvent(trx, this.jobs, this.space, { type: 'space_gitsync_completed', state, ...ids });
      }
      return out.result;
    });
    this.done = true;
    return result;
  }
}
