/** Shared by the benchmarks. */

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
