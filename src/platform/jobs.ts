import { sql } from 'kysely';
import type { FastifyBaseLogger } from 'fastify';
import { json, type Db } from './db/database.ts';
import type { JobRow } from './db/schema.ts';

export interface JobContext {
  db: Db;
  attempt: number;
  jobId: number;
  /** This attempt is the job's last: a failure now is final (no retry follows). */
  lastAttempt: boolean;
}

export type JobHandler = (payload: any, ctx: JobContext) => Promise<void>;

interface HandlerEntry {
  handler: JobHandler;
  maxAttempts: number;
}

export interface JobsOptions {
  /**
   * How often the worker looks for due jobs while work is about: after a job ran, or after this
   * process queued one. An idle worker looks less and less often, up to `idlePollMs`.
   */
  pollMs: number;
  /** The longest wait between two looks of an idle worker (default: `pollMs`, or 1 s when that is shorter). */
  idlePollMs?: number;
  /** How long a claimed job stays reserved for its worker; renewed while it runs. */
  leaseMs?: number;
  /** Delay before retry number `attempt` (1-based). */
  backoffMs?: (attempt: number) => number;
  /** The clock due times and leases are read from (tests move it forward instead of waiting). */
  now?: () => number;
}

const defaultBackoff = (attempt: number) => Math.min(60_000 * 10, 1000 * 2 ** (attempt - 1));

/**
 * Durable background jobs stored in the `jobs` table of the same database.
 *
 * - A job is claimed with `FOR UPDATE SKIP LOCKED`, so several workers (processes) never take the
 *   same job; the claim is a lease renewed while the job runs, and a job whose worker died is taken
 *   again once its lease expires.
 * - A failing job is retried with exponential backoff up to its `max_attempts`, then marked failed
 *   with its last error. Jobs survive restarts because they are rows, not timers.
 */
export class Jobs {
  private readonly handlers = new Map<string, HandlerEntry>();
  /** Where job failures are reported; the server sets its own logger here. */
  logger: FastifyBaseLogger | undefined;
  /** Called on every failed attempt (`final`: no retry is left); the metrics count them. */
  onFailure: ((type: string, final: boolean) => void) | undefined;
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<void> | undefined;
  private stopped = true;
  /** Set by stop(): finish the job in hand, take no new one. */
  private halted = false;
  private readonly leaseMs: number;
  private readonly backoffMs: (attempt: number) => number;
  private readonly now: () => number;
  /** settle() calls in progress: the worker loop starts no pass meanwhile, so settle() alone runs jobs. */
  private settling = 0;
  private readonly idlePollMs: number;
  /** The wait before the next look; grows while looks find nothing. */
  private delay: number;
  /** When the pending look is due (ms since the epoch), to bring it forward on a wake-up. */
  private dueAt = 0;
  /** Until then (ms since the epoch) the worker looks every `pollMs`: this process just queued work. */
  private busyUntil = 0;

  constructor(
    private readonly db: Db,
    private readonly options: JobsOptions,
  ) {
    this.leaseMs = options.leaseMs ?? 5 * 60_000;
    this.backoffMs = options.backoffMs ?? defaultBackoff;
    this.now = options.now ?? Date.now;
    this.idlePollMs = Math.max(options.pollMs, options.idlePollMs ?? 1000);
    this.delay = options.pollMs;
  }

  register(type: string, handler: JobHandler, opts: { maxAttempts?: number } = {}): void {
    this.handlers.set(type, { handler, maxAttempts: opts.maxAttempts ?? 5 });
  }

  /** Whether this process knows jobs of `type` (a feature off by configuration registers none). */
  handles(type: string): boolean {
    return this.handlers.has(type);
  }

  /** Queues a job; pass a transaction as `db` so the job exists exactly when the change that needs it commits. */
  async enqueue(
    type: string,
    payload: unknown,
    opts: { runAt?: Date; maxAttempts?: number; db?: Db } = {},
  ): Promise<number> {
    const row = await (opts.db ?? this.db)
      .insertInto('jobs')
      .values({
        type,
        payload: json(payload),
        run_at: opts.runAt ?? new Date(this.now()),
        max_attempts: opts.maxAttempts ?? this.handlers.get(type)?.maxAttempts ?? 5,
        created_at: new Date(),
        locked_until: null,
        last_error: null,
        finished_at: null,
      })
      .returning('id')
      .executeTakeFirstOrThrow();
    this.wake();
    return row.id;
  }

  /**
   * Work was just queued here: look at once, and often for a while. A job queued inside a
   * transaction is seen once it commits; on PGlite the look waits for that (one session), on
   * PostgreSQL a look before the commit finds nothing and the next ones, `pollMs` apart, find it.
   * Jobs queued by other processes are found by the idle looks.
   */
  private wake(): void {
    this.busyUntil = Date.now() + 2_000;
    this.delay = this.options.pollMs;
    if (this.timer && !this.running && this.dueAt > Date.now() + this.options.pollMs) {
      clearTimeout(this.timer);
      this.schedule(this.options.pollMs);
    }
  }

  start(): void {
    if (!this.stopped) return;
    this.stopped = false;
    this.halted = false;
    this.schedule(0);
  }

  /** Stops polling and waits for the job in progress, so nothing is cut off mid-way. */
  async stop(): Promise<void> {
    this.stopped = true;
    this.halted = true;
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    await this.running;
  }

  private schedule(delay: number): void {
    if (this.stopped) return;
    this.dueAt = Date.now() + delay;
    this.timer = setTimeout(() => {
      if (this.settling) return this.schedule(this.options.pollMs);
      this.running = this.drain()
        .then((ran) => {
          // An idle worker waits longer after each empty look (test servers polling every 50 ms
          // spent a good part of the test run's CPU on empty looks); work found or queued brings it back.
          if (ran > 0 || Date.now() < this.busyUntil) this.delay = this.options.pollMs;
          else this.delay = Math.min(this.idlePollMs, this.delay * 2);
        })
        .catch((err) => this.logger?.error({ err }, 'job worker failed'))
        .finally(() => {
          this.running = undefined;
          this.schedule(this.delay);
        });
    }, delay);
    this.timer.unref();
  }

  /** Runs due jobs until none is left. Returns how many ran. */
  async drain(): Promise<number> {
    let count = 0;
    // A stopping worker finishes the job in hand but takes no new one.
    while (await this.runOne()) {
      count++;
      if (this.halted) break;
    }
    return count;
  }

  /**
   * Runs the queue until it is idle: due jobs of the registered types run here, one at a time,
   * until none is queued and due and none is running. The pass the worker loop may have in
   * progress is waited for first, and the loop starts no new pass meanwhile; a job another process
   * holds is waited for (polling every few milliseconds). Jobs queued for later (a retry after its
   * backoff, a periodic job) are not waited for. Returns how many jobs ran here.
   *
   * For tests and tools that need "everything queued so far has happened": `folio serve` never
   * calls it. Throws after `timeoutMs` with the jobs still pending.
   */
  async settle(opts: { timeoutMs?: number } = {}): Promise<number> {
    const deadline = Date.now() + (opts.timeoutMs ?? 60_000);
    this.settling++;
    try {
      let count = 0;
      for (;;) {
        await this.running;
        count += await this.drain();
        const pending = await this.pending();
        if (pending.length === 0) return count;
        if (Date.now() > deadline) {
          throw new Error(`jobs did not settle in ${opts.timeoutMs ?? 60_000} ms: ${pending.map((j) => `${j.type} #${j.id} ${j.status}`).join(', ')}`);
        }
        await new Promise((r) => setTimeout(r, 10));
      }
    } finally {
      this.settling--;
    }
  }

  /** Jobs of the registered types that are running, or queued and due. */
  private async pending(): Promise<{ id: number; type: string; status: string }[]> {
    const types = [...this.handlers.keys()];
    if (types.length === 0) return [];
    return this.db
      .selectFrom('jobs')
      .select(['id', 'type', 'status'])
      .where('type', 'in', types)
      .where((eb) => eb.or([eb('status', '=', 'running'), eb.and([eb('status', '=', 'queued'), eb('run_at', '<=', new Date(this.now()))])]))
      .orderBy('id')
      .limit(10)
      .execute();
  }

  /** Claims and runs one due job of a registered type; false when none was due. */
  async runOne(): Promise<boolean> {
    const types = [...this.handlers.keys()];
    if (types.length === 0) return false;
    const job = await this.claim(types);
    if (!job) return false;
    const entry = this.handlers.get(job.type)!;
    if (job.attempts > job.max_attempts) {
      await this.finish(job.id, 'failed', job.last_error ?? 'worker stopped while running the job');
      return true;
    }
    const heartbeat = setInterval(() => {
      this.db
        .updateTable('jobs')
        .set({ locked_until: new Date(this.now() + this.leaseMs) })
        .where('id', '=', job.id)
        .where('status', '=', 'running')
        .execute()
        .catch(() => {});
    }, Math.max(1000, this.leaseMs / 3));
    heartbeat.unref();
    try {
      await entry.handler(job.payload, { db: this.db, attempt: job.attempts, jobId: job.id, lastAttempt: job.attempts >= job.max_attempts });
      await this.finish(job.id, 'done', null);
    } catch (err) {
      const message = err instanceof Error ? err.message : String(err);
      this.logger?.warn({ jobId: job.id, type: job.type, attempt: job.attempts, err: message }, 'job failed');
      if (job.attempts >= job.max_attempts) {
        await this.finish(job.id, 'failed', message);
      } else {
        await this.db
          .updateTable('jobs')
          .set({
            status: 'queued',
            locked_until: null,
            last_error: message,
            run_at: new Date(this.now() + this.backoffMs(job.attempts)),
          })
          .where('id', '=', job.id)
          .execute();
      }
      // Counted once the failure is recorded: metrics never show a failure whose job is still running.
      this.onFailure?.(job.type, job.attempts >= job.max_attempts);
    } finally {
      clearInterval(heartbeat);
    }
    return true;
  }

  private async claim(types: string[]): Promise<JobRow | undefined> {
    const now = new Date(this.now());
    const result = await sql<JobRow>`
      UPDATE jobs SET status = 'running', attempts = attempts + 1, locked_until = ${new Date(now.getTime() + this.leaseMs)}
      WHERE id = (
        SELECT id FROM jobs
        WHERE type IN (${sql.join(types)})
          AND ((status = 'queued' AND run_at <= ${now}) OR (status = 'running' AND locked_until < ${now}))
        ORDER BY run_at, id
        LIMIT 1
        FOR UPDATE SKIP LOCKED
      )
      RETURNING *`.execute(this.db);
    return result.rows[0];
  }

  private async finish(id: number, status: 'done' | 'failed', error: string | null): Promise<void> {
    await this.db
      .updateTable('jobs')
      .set({ status, locked_until: null, last_error: error, finished_at: new Date(this.now()) })
      .where('id', '=', id)
      .execute();
  }
}
