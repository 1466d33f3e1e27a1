import { Piscina } from 'piscina';
import type { Config } from '../platform/config.ts';
import { projectUrl } from '../platform/project-files.ts';
import type { ProcessOutcome, SpecSource } from './process.ts';

/**
 * Spec processing runs on a worker thread: parsing and validating a 10 MB spec takes seconds of
 * CPU, which on the API process's own thread would stall every request it serves meanwhile. Jobs
 * run one at a time per process, so one thread suffices; it stops after 30 s without work.
 */
let pool: Piscina | undefined;

export async function processInWorker(
  source: SpecSource,
  config: Pick<Config, 'fetchAllowPrivate' | 'fetchAllowCidrs' | 'fetchTimeoutMs' | 'fetchMaxRequestBytes'>,
): Promise<ProcessOutcome> {
  if (!pool) {
    pool = new Piscina({ filename: projectUrl('src/openapi/process-worker-entry.mjs'), maxThreads: 1, minThreads: 0, idleTimeout: 30_000 });
    // Without a listener, a worker failing to start would end the process.
    pool.on('error', (err: unknown) => console.error('OpenAPI processing worker failed', err));
  }
  const limits = {
    fetchAllowPrivate: config.fetchAllowPrivate,
    fetchAllowCidrs: config.fetchAllowCidrs,
    fetchTimeoutMs: config.fetchTimeoutMs,
    fetchMaxRequestBytes: config.fetchMaxRequestBytes,
  };
  const outcome = (await pool.run({ source, limits })) as ProcessOutcome;
  // Buffers arrive as plain Uint8Arrays from another thread.
  if (outcome.ok) for (const f of outcome.files) f.raw = Buffer.from(f.raw.buffer, f.raw.byteOffset, f.raw.byteLength);
  return outcome;
}

/** Stops the worker thread (at shutdown; the next job starts it again). */
export async function closeOpenAPIWorkers(): Promise<void> {
  const p = pool;
  pool = undefined;
  await p?.destroy();
}
