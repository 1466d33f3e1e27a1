import type { TestServer } from './server.ts';

/**
 * Retries `check` until it holds, and returns what it returned: it holds when it neither throws
 * nor returns `false`. For waits on something outside the job queue (a log line written, an event
 * delivered over HTTP, a timer of the server); for the job queue itself, `settleJobs`.
 *
 * Fails after `timeoutMs` (10 s by default) saying `what` was awaited, with the last assertion
 * error (its message, and as the cause), so a wait that never ends reads like the assertion that
 * never passed.
 */
export async function eventually<T>(
  check: () => T | Promise<T>,
  opts: { timeoutMs?: number; what?: string } = {},
): Promise<Exclude<T, false>> {
  const timeoutMs = opts.timeoutMs ?? 10_000;
  const deadline = Date.now() + timeoutMs;
  let delay = 5;
  for (;;) {
    let last: unknown;
    try {
      const value = await check();
      if (value !== false) return value as Exclude<T, false>;
      last = undefined;
    } catch (err) {
      last = err;
    }
    if (Date.now() > deadline) {
      const why = last === undefined ? 'the check still returned false' : `last error: ${last instanceof Error ? last.message : String(last)}`;
      throw new Error(`${opts.what ?? 'the condition'} did not hold within ${timeoutMs} ms; ${why}`, { cause: last });
    }
    await new Promise((r) => setTimeout(r, delay));
    delay = Math.min(100, delay * 2);
  }
}

/**
 * Runs the test server's job queue until it is idle (Jobs.settle): every job queued and due so
 * far, and every job those queue, has run when this returns. Jobs queued for later (a retry after
 * its backoff) are not waited for: move `t.clock` forward and settle again.
 */
export async function settleJobs(t: TestServer, opts: { timeoutMs?: number } = {}): Promise<number> {
  return t.server.services.jobs.settle(opts);
}
