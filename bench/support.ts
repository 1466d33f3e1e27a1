import { zipSync } from 'fflate';
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

/**
 * A zipped folder of `count` Markdown pages as a documentation project is laid out: a README, then
 * sections of ten chapters of nine pages, each with its README; every 25th page shows
 * `images/diagram.png`. `page` writes a page (its title, a sibling to link to, whether it shows the
 * image); `salt` makes every run's documents new to the database.
 */
export function folderZip(count: number, salt: string, page: (title: string, sibling: string, image: boolean) => string, image: Uint8Array): Buffer {
  const enc = (s: string) => Buffer.from(s);
  const files: Record<string, Uint8Array> = { 'README.md': enc(`# Handbook ${salt}\n\nThe start.\n`), 'images/diagram.png': image };
  let made = 1;
  for (let s = 0; made < count; s++) {
    files[`section-${s}/README.md`] = enc(`# Section ${s}\n\nAbout section ${s}.\n`);
    made++;
    for (let c = 0; c < 10 && made < count; c++) {
      const dir = `section-${s}/chapter-${c}`;
      files[`${dir}/README.md`] = enc(`# Chapter ${s}.${c}\n\nAbout the chapter.\n`);
      made++;
      for (let p = 0; p < 9 && made < count; p++, made++) files[`${dir}/page-${p}.md`] = enc(page(`Page ${s}.${c}.${p}`, `page-${(p + 1) % 9}.md`, made % 25 === 0));
    }
  }
  return Buffer.from(zipSync(Object.fromEntries(Object.entries(files).map(([k, v]) => [`handbook/${k}`, v]))));
}
