/**
 * Benchmark: live co-editing (issue 26). 20 simulated editors (the Hocuspocus provider in Node,
 * as the app uses it, no browser) type into one page of about 50 KB of one change request, on the
 * real `./bin/folio serve`:
 *
 *   one process                          (PostgreSQL)
 *   two processes, LISTEN/NOTIFY relay   (the editors alternate between the processes)
 *   two processes, Redis relay           (when Redis answers at BENCH_REDIS_URL)
 *
 * Each editor types at the end of a paragraph of its own, one keystroke every BENCH_KEY_MS
 * (default 150 ms, ±50% jitter) for BENCH_SECONDS (default 10). It prints, per setup: the time
 * from one editor's keystroke to each other editor seeing it, p50 / p99 / max (goal: p50 under
 * 50 ms, p99 under 250 ms), that every editor converged to the same text holding every
 * keystroke, and that the change request then reads it through the API. Then the server's memory
 * per open page: RSS (/proc) and V8 heap (GET /metrics) before and after opening 10 more pages of
 * 50 KB, one editor each (after a first one, which loads what every page shares), divided by 10.
 *
 *   npm run bench:collab
 *   BENCH_DATABASE_URL=postgres://… BENCH_REDIS_URL=redis://… BENCH_SECONDS=20 BENCH_EDITORS=20
 *
 * Latencies are measured in this one Node process for all editors (their clocks are the same):
 * on a 2-core machine the 20 editors' own work (each applies every keystroke to its 50 KB
 * document) is part of what is measured, as it would be in 20 browsers on 20 machines only
 * more so.
 */
import { randomBytes } from 'node:crypto';
import { Redis } from 'ioredis';
import * as Y from 'yjs';
import { collabClient, sharedText, until, type CollabClient } from '../test/support/collab.ts';
import { folioEnv, killAll, runCli, serve, type ServeProcess } from '../test/support/process.ts';
import { apiCaller, freePort, freshDatabaseConfig, percentile, rssMb } from './support.ts';

const ADMIN_URL = process.env.BENCH_DATABASE_URL || 'postgres://postgres@127.0.0.1:5432/postgres';
const REDIS_URL = process.env.BENCH_REDIS_URL || 'redis://127.0.0.1:6379';
const EDITORS = Number(process.env.BENCH_EDITORS ?? 20);
const SECONDS = Number(process.env.BENCH_SECONDS ?? 10);
const KEY_MS = Number(process.env.BENCH_KEY_MS ?? 150);
const EXTRA_PAGES = 10;
const METRICS_TOKEN = randomBytes(12).toString('hex');


async function heapMb(url: string): Promise<number> {
  const res = await fetch(`${url}/metrics`, { headers: { authorization: `Bearer ${METRICS_TOKEN}` } });
  const m = /^nodejs_heap_size_used_bytes (\d+(?:\.\d+)?)/m.exec(await res.text());
  return m ? Number(m[1]) / 1024 / 1024 : NaN;
}

async function redisAnswers(): Promise<boolean> {
  const redis = new Redis(REDIS_URL, { lazyConnect: true, connectTimeout: 1000, maxRetriesPerRequest: 0, retryStrategy: () => null });
  redis.on('error', () => {});
  try {
    await redis.connect();
    await redis.ping();
    return true;
  } catch {
    return false;
  } finally {
    redis.disconnect();
  }
}

/** About 50 KB of markdown: 100 paragraphs of about 500 characters. */
function bigMarkdown(): string {
  const words = ['the', 'editor', 'page', 'change', 'request', 'shared', 'document', 'server', 'process', 'relay', 'typing', 'saved'];
  const paragraphs: string[] = [];
  for (let p = 0; p < 100; p++) {
    const line: string[] = [`Paragraph ${p}:`];
    for (let w = 0; line.join(' ').length < 490; w++) line.push(words[(p * 7 + w * 3) % words.length]!);
    paragraphs.push(`${line.join(' ')}.`);
  }
  return `${paragraphs.join('\n\n')}\n`;
}

/** The `index`th paragraph's text node of a shared page. */
function paragraphText(doc: Y.Doc, index: number): Y.XmlText {
  const paragraph = doc.getXmlFragment('default').get(index) as Y.XmlElement;
  const text = paragraph.get(0);
  if (!(text instanceof Y.XmlText)) throw new Error(`paragraph ${index} holds no text`);
  return text;
}

interface Result {
  setup: string;
  keystrokes: number;
  samples: number;
  p50: number;
  p99: number;
  max: number;
  convergeMs: number;
  savedMs: number;
  rssPerPageMb?: number;
  heapPerPageMb?: number;
  rssWithEditorsMb: number[];
}

async function run(setup: string, processes: number, redis: boolean): Promise<Result> {
  const db = await freshDatabaseConfig(ADMIN_URL, { migrated: true });
  const prefix = `folio-bench-${randomBytes(6).toString('hex')}:`;
  const servers: ServeProcess[] = [];
  const clients: CollabClient[] = [];
  try {
    const env = folioEnv({
      DATABASE_URL: db.config.databaseUrl!,
      ...(redis ? { REDIS_URL, REDIS_PREFIX: prefix } : {}),
      METRICS: 'true',
      METRICS_TOKEN,
      RATE_LIMIT_MAX: '100000',
    });
    const made = await runCli(['users', 'create', '--email', `bench.${randomBytes(4).toString('hex')}@example.com`, '--name', 'Bench Collab'], env);
    if (made.code !== 0) throw new Error(made.stderr);
    const { token } = JSON.parse(made.stdout) as { token: string };
    for (let i = 0; i < processes; i++) servers.push(await serve(folioEnv({ ...env, PORT: await freePort() })));
    const call = apiCaller(servers[0]!.url, token);
    const org = await call('POST', '/v1/orgs', { title: 'Bench' });
    const space = await call('POST', `/v1/orgs/${org.id}/spaces`, { title: 'Handbook' });
    const cr = await call('POST', `/v1/spaces/${space.id}/change-requests`, { subject: 'Together' });
    const markdown = bigMarkdown();
    const inserted = await call('POST', `/v1/spaces/${space.id}/change-requests/${cr.id}/content?compat=false`, {
      changes: [
        { operation: 'insert_page', title: 'Big', document: { markdown } },
        ...Array.from({ length: EXTRA_PAGES + 1 }, (_, i) => ({ operation: 'insert_page', title: `Other ${i}`, document: { markdown } })),
      ],
    });
    const pageIds = (inserted.changes as { page: { id: string } }[]).map((c) => c.page.id);
    const name = (pageId: string) => `${space.id}/${cr.id}/${pageId}`;

    // Memory per open page: 10 pages of 50 KB opened, one editor each, on process 1.
    const pid = servers[0]!.child.pid!;
    let rssPerPageMb: number | undefined;
    let heapPerPageMb: number | undefined;
    if (processes === 1) {
      // One page first, so what is loaded once (the editor's schema, the converters) is not counted per page.
      const warm = collabClient(servers[0]!.url, name(pageIds[1]!), token);
      clients.push(warm);
      await warm.ready;
      await new Promise((r) => setTimeout(r, 1000));
      const rss0 = rssMb(pid);
      const heap0 = await heapMb(servers[0]!.url);
      const extra = pageIds.slice(2).map((id) => collabClient(servers[0]!.url, name(id), token));
      clients.push(...extra);
      await Promise.all(extra.map((c) => c.ready));
      await new Promise((r) => setTimeout(r, 1000));
      rssPerPageMb = (rssMb(pid) - rss0) / EXTRA_PAGES;
      heapPerPageMb = ((await heapMb(servers[0]!.url)) - heap0) / EXTRA_PAGES;
      for (const c of [warm, ...extra]) c.close();
    }

    // The editors, alternating between the processes.
    const rssBefore = servers.map((s) => rssMb(s.child.pid!));
    const editors = Array.from({ length: EDITORS }, (_, i) => collabClient(servers[i % processes]!.url, name(pageIds[0]!), token));
    clients.push(...editors);
    await Promise.all(editors.map((e) => e.ready));
    await until(() => editors.every((e) => e.doc.getXmlFragment('default').length >= 100), 30_000, 'every editor to hold the page');

    // Keystroke times by `<clientID>:<clock>` (one character is one clock tick of its editor).
    const sentAt = new Map<string, number>();
    const latencies: number[] = [];
    const ids = editors.map((e) => e.doc.clientID);
    for (const editor of editors) {
      const seen = new Map<number, number>(ids.map((id) => [id, Y.getState(editor.doc.store, id)]));
      editor.doc.on('update', () => {
        const now = performance.now();
        for (const id of ids) {
          if (id === editor.doc.clientID) continue;
          const clock = Y.getState(editor.doc.store, id);
          for (let c = seen.get(id)!; c < clock; c++) {
            const sent = sentAt.get(`${id}:${c}`);
            if (sent !== undefined) latencies.push(now - sent);
          }
          seen.set(id, clock);
        }
      });
    }

    const typed = editors.map(() => '');
    const alphabet = 'abcdefghijklmnopqrstuvwxyz';
    const stopAt = performance.now() + SECONDS * 1000;
    await Promise.all(
      editors.map(async (editor, i) => {
        const text = paragraphText(editor.doc, i * 5);
        await new Promise((r) => setTimeout(r, Math.random() * KEY_MS));
        while (performance.now() < stopAt) {
          const ch = alphabet[typed[i]!.length % alphabet.length]!;
          const clock = Y.getState(editor.doc.store, editor.doc.clientID);
          sentAt.set(`${editor.doc.clientID}:${clock}`, performance.now());
          editor.doc.transact(() => text.insert(text.length, ch));
          typed[i] += ch;
          await new Promise((r) => setTimeout(r, KEY_MS * (0.5 + Math.random())));
        }
      }),
    );
    const typingEnded = performance.now();
    const marker = (i: number) => `Paragraph ${i * 5}:`;
    const holdsAll = (text: string) => typed.every((t, i) => text.split('\n').find((l) => l.startsWith(marker(i)))?.endsWith(`.${t}`));
    await until(() => editors.every((e) => sharedText(e.doc) === sharedText(editors[0]!.doc)) && holdsAll(sharedText(editors[0]!.doc)), 60_000, 'every editor to converge on every keystroke');
    const convergeMs = performance.now() - typingEnded;
    const rssWithEditorsMb = servers.map((s, i) => rssMb(s.child.pid!) - rssBefore[i]!);
    // The change request reads what was typed, through the API (saved after the save delay).
    for (;;) {
      const page = await call('GET', `/v1/spaces/${space.id}/change-requests/${cr.id}/content/page/${pageIds[0]}?format=markdown`);
      if (holdsAll((page.markdown as string).replace(/\\/g, ''))) break;
      if (performance.now() - typingEnded > 60_000) throw new Error('the typing was not saved within 60 s');
      await new Promise((r) => setTimeout(r, 100));
    }
    const savedMs = performance.now() - typingEnded;
    const sorted = latencies.sort((a, b) => a - b);
    const keystrokes = typed.reduce((n, t) => n + t.length, 0);
    if (sorted.length !== keystrokes * (EDITORS - 1)) throw new Error(`${sorted.length} keystrokes seen by others, expected ${keystrokes * (EDITORS - 1)}`);
    return {
      setup,
      keystrokes,
      samples: sorted.length,
      p50: percentile(sorted, 50),
      p99: percentile(sorted, 99),
      max: sorted[sorted.length - 1]!,
      convergeMs,
      savedMs,
      ...(rssPerPageMb !== undefined ? { rssPerPageMb, heapPerPageMb: heapPerPageMb! } : {}),
      rssWithEditorsMb,
    };
  } finally {
    for (const c of clients) c.close();
    await Promise.all(servers.map((s) => s.stop()));
    await db.cleanup();
    if (redis) {
      const r = new Redis(REDIS_URL, { maxRetriesPerRequest: 0 });
      const keys = await r.keys(`${prefix}*`);
      if (keys.length) await r.del(...keys);
      r.disconnect();
    }
  }
}

const setups: [string, number, boolean][] = [
  ['one process', 1, false],
  ['two processes, LISTEN/NOTIFY', 2, false],
];
if (await redisAnswers()) setups.push(['two processes, Redis', 2, true]);
else console.log(`Redis at ${REDIS_URL} does not answer: the Redis setup is skipped`);

console.log(`${EDITORS} editors, one keystroke every ${KEY_MS} ms ±50% each for ${SECONDS} s, into one page of ${(Buffer.byteLength(bigMarkdown()) / 1024).toFixed(0)} KB (PostgreSQL at ${ADMIN_URL.replace(/\/\/[^@]*@/, '//')})`);
const results: Result[] = [];
try {
  for (const [setup, processes, redis] of setups) {
    const r = await run(setup, processes, redis);
    results.push(r);
    const ok = r.p50 < 50 && r.p99 < 250;
    console.log(
      `${setup.padEnd(30)} keystroke→others p50 ${r.p50.toFixed(1)} ms, p99 ${r.p99.toFixed(1)} ms, max ${r.max.toFixed(0)} ms ` +
        `(${r.keystrokes} keystrokes, ${r.samples} deliveries) ${ok ? 'OK' : 'OVER GOAL'}; converged ${r.convergeMs.toFixed(0)} ms and saved ${r.savedMs.toFixed(0)} ms after the last keystroke; ` +
        `RSS +${r.rssWithEditorsMb.map((m) => m.toFixed(1)).join(' / ')} MB with the ${EDITORS} editors`,
    );
    if (r.rssPerPageMb !== undefined) console.log(`${''.padEnd(30)} memory per open 50 KB page (one editor): RSS ${r.rssPerPageMb.toFixed(2)} MB, V8 heap ${r.heapPerPageMb!.toFixed(2)} MB`);
  }
} finally {
  killAll();
}
if (results.some((r) => !(r.p50 < 50 && r.p99 < 250))) process.exitCode = 1;
