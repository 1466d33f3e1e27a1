/**
 * Benchmark: reading and merging large pages (issue 17, finding 3). Pages of 0.5, 1 and 2 MB are
 * written through the API, then for each size:
 *
 *   read:  GET the page as a JSON document (median of BENCH_ROUNDS reads);
 *   merge: two change requests edit the page near its start and near its end; the first merges
 *          as a fast-forward, the second is a real three-way merge of the big page (timed).
 *
 * While the big page is read and merged, a loop of small page reads runs alongside (four in
 * flight); their p99 latency shows whether the big work stalls everyone else.
 * Prints the cost ratio of each doubling (goal: at most 2.3) and the small reads' p99 (goal: under
 * 100 ms).
 *
 *   node --import tsx bench/big-pages.ts                                    # embedded database
 *   BENCH_DATABASE_URL=postgres://… node --import tsx bench/big-pages.ts    # PostgreSQL
 */
import { loadConfig } from '../src/platform/config.ts';
import { startServer } from '../src/server.ts';
import { createUser } from '../src/users/service.ts';
import { freshDatabaseConfig, percentile } from './support.ts';

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const SIZES_MB = [0.5, 1, 2];

/** Characters of a page of `mb` MB: the largest stays just under the 2,000,000-character page limit. */
const charsOf = (mb: number) => Math.min(mb * 1_000_000, 1_990_000);

/** Markdown of at most `bytes` characters, mixing the blocks real pages have. */
function pageOf(bytes: number): string {
  const parts: string[] = [];
  let size = 0;
  for (let i = 0; size < bytes; i++) {
    const block =
      i % 10 === 0
        ? `## Section ${i}\n`
        : i % 10 === 5
          ? `- item ${i} with **bold**\n- another item with \`code\`\n- a [link](https://example.com/${i})\n`
          : `Paragraph ${i} explains one thing in plain words, with *emphasis* here and there, as documentation does.\n`;
    if (size + block.length + 1 > bytes) break;
    parts.push(block);
    size += block.length + 1;
  }
  return parts.join('\n');
}

const db = await freshDatabaseConfig(process.env.BENCH_DATABASE_URL);
const server = await startServer({ ...loadConfig({}), port: 0, logLevel: 'silent', rateLimitMax: 1_000_000, bodyLimit: 8 * 1024 * 1024, ...db.config }, { purpose: 'bench' });
try {
  const { token } = await createUser(server.services.db, { email: 'bench@example.com', name: 'Bench' });
  const call = async (method: string, path: string, body?: unknown) => {
    const res = await fetch(server.url + path, {
      method,
      headers: { authorization: `Bearer ${token}`, ...(body ? { 'content-type': 'application/json' } : {}) },
      ...(body ? { body: JSON.stringify(body) } : {}),
    });
    const text = await res.text();
    if (!res.ok) throw new Error(`${method} ${path}: ${res.status} ${text.slice(0, 300)}`);
    return text ? JSON.parse(text) : undefined;
  };
  const timed = async (fn: () => Promise<unknown>) => {
    const start = performance.now();
    await fn();
    return performance.now() - start;
  };

  const org = await call('POST', '/v1/orgs', { title: 'Bench' });
  const space = await call('POST', `/v1/orgs/${org.id}/spaces`, { title: 'Big pages' });
  const edit = async (changes: unknown[]) => {
    const cr = await call('POST', `/v1/spaces/${space.id}/change-requests`, { subject: 'edit' });
    const out = await call('POST', `/v1/spaces/${space.id}/change-requests/${cr.id}/content?compat=false`, { changes });
    return { cr, out };
  };
  const merge = (cr: { id: string }) => call('POST', `/v1/spaces/${space.id}/change-requests/${cr.id}/merge`);

  // One small page for the concurrent reads, and one page per size.
  const ids = new Map<string, string>();
  for (const [ref, markdown] of [['small', 'A small page.\n\nWith two paragraphs.\n'], ...SIZES_MB.map((mb) => [`big-${mb}`, pageOf(charsOf(mb))])] as const) {
    const setup = await edit([{ operation: 'insert_page', ref, title: ref, document: { markdown } }]);
    await merge(setup.cr);
    ids.set(ref, setup.out.changes[0].page.id);
  }
  const idOf = (ref: string) => ids.get(ref)!;
  const small = idOf('small');

  // Warm-up: every code path once (worker threads start, statements are prepared).
  await call('GET', `/v1/spaces/${space.id}/content/page/${small}?format=document`);
  await call('GET', `/v1/spaces/${space.id}/content/page/${idOf('big-0.5')}?format=document`);

  /** Runs `work` while small reads go on alongside; answers the work's time and the small reads' latencies. */
  const alongside = async (work: () => Promise<number>) => {
    const latencies: number[] = [];
    let running = true;
    const reader = async () => {
      while (running) latencies.push(await timed(() => call('GET', `/v1/spaces/${space.id}/content/page/${small}?format=document`)));
    };
    const readers = Array.from({ length: 4 }, reader);
    const elapsed = await work();
    running = false;
    await Promise.all(readers);
    return { elapsed, latencies };
  };

  const rows: { mb: number; read: number; merge: number }[] = [];
  const smallReads: number[] = [];
  for (const mb of SIZES_MB) {
    const id = idOf(`big-${mb}`);
    const reads: number[] = [];
    for (let r = 0; r < ROUNDS; r++) {
      const { elapsed, latencies } = await alongside(() => timed(() => call('GET', `/v1/spaces/${space.id}/content/page/${id}?format=document`)));
      reads.push(elapsed);
      smallReads.push(...latencies);
    }
    const merges: number[] = [];
    for (let r = 0; r < ROUNDS; r++) {
      const markdown = pageOf(charsOf(mb));
      const lines = markdown.split('\n');
      const early = [...lines];
      early[2] = `Edited near the start, round ${r}.`;
      const late = [...lines];
      late[late.length - 3] = `Edited near the end, round ${r}.`;
      const first = await edit([{ operation: 'update_page', page: id, document: { markdown: early.join('\n') } }]);
      const second = await edit([{ operation: 'update_page', page: id, document: { markdown: late.join('\n') } }]);
      await merge(first.cr);
      const { elapsed, latencies } = await alongside(() => timed(() => merge(second.cr)));
      merges.push(elapsed);
      smallReads.push(...latencies);
      // Back to the generated text, so every round merges the same edits.
      const reset = await edit([{ operation: 'update_page', page: id, document: { markdown } }]);
      await merge(reset.cr);
    }
    const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
    rows.push({ mb, read: median(reads), merge: median(merges) });
  }

  console.log(`engine: ${process.env.BENCH_DATABASE_URL ? 'PostgreSQL' : 'PGlite (embedded)'}, ${ROUNDS} rounds per size`);
  console.log('size     read (ms)   merge (ms)   read MB/s');
  for (const r of rows) console.log(`${String(r.mb).padEnd(5)}MB  ${r.read.toFixed(0).padStart(9)}   ${r.merge.toFixed(0).padStart(10)}   ${(r.mb / (r.read / 1000)).toFixed(2).padStart(9)}`);
  let ok = true;
  for (let i = 1; i < rows.length; i++) {
    const read = rows[i]!.read / rows[i - 1]!.read;
    const mergeRatio = rows[i]!.merge / rows[i - 1]!.merge;
    ok &&= read <= 2.3 && mergeRatio <= 2.3;
    console.log(`${rows[i - 1]!.mb} → ${rows[i]!.mb} MB: read ×${read.toFixed(2)}, merge ×${mergeRatio.toFixed(2)} (goal: at most ×2.3)`);
  }
  const sorted = smallReads.sort((a, b) => a - b);
  const p99 = percentile(sorted, 99);
  ok &&= p99 < 100;
  console.log(`small reads alongside: ${sorted.length}, p50 ${percentile(sorted, 50).toFixed(1)} ms, p99 ${p99.toFixed(1)} ms (goal: p99 under 100 ms)`);
  console.log(ok ? 'goals met' : 'goals NOT met');
} finally {
  await server.close();
  await db.cleanup();
}
