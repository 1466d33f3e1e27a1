/** Shared by the benchmarks. */

/** The value at percentile `p` (0–100) of an ascending list. */
export function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;
}

export { freshDatabaseConfig } from '../test/support/server.ts';
