/** Shared by the benchmarks. */
import { readFileSync } from 'node:fs';
import { createServer } from 'node:net';

/** The value at percentile `p` (0–100) of an ascending list. */
export function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;
}

export { freshDatabaseConfig } from '../test/support/server.ts';

/** A JSON call to Folio's API with a token: throws on a non-2xx answer, `undefined` for a 204. */
export function apiCaller(baseUrl: string, token: string) {
  return async <T = any>(method: string, path: string, body?: unknown): Promise<T> => {
    const headers = { authorization: `Bearer ${token}`, ...(body !== undefined ? { 'content-type': 'application/json' } : {}) };
    const res = await fetch(baseUrl + path, { method, headers, ...(body !== undefined ? { body: JSON.stringify(body) } : {}) });
    if (!res.ok) throw new Error(`${method} ${path}: ${res.status} ${await res.text()}`);
    return (res.status === 204 ? undefined : res.json()) as Promise<T>;
  };
}

/** A TCP port free on 127.0.0.1 now (for a `folio serve` that must keep its port across a restart, or be known before it starts). */
export async function freePort(): Promise<string> {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.on('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const a = srv.address();
      srv.close(() => resolve(String(typeof a === 'object' && a ? a.port : 0)));
    });
  });
}

/** Resident memory of a process, in MB (VmRSS from /proc). */
export function rssMb(pid: number): number {
  const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return m ? Number(m[1]) / 1024 : NaN;
}
