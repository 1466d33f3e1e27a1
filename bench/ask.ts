/**
 * Benchmark: time to the first streamed event of Ask (`GET /v1/orgs/{id}/ask/stream`) over a
 * generated 10,000-page space, the engine excluded (a fake OpenAI-compatible engine on 127.0.0.1
 * that streams its first token at once), against the organization's search for the same words
 * measured in the same run. Also the extractive answer (no engine). Prints p50 and p95, and the
 * goal of issue 28: the first token under 200 ms.
 *
 *   npm run bench:ask                                   # embedded database (PGlite)
 *   BENCH_DATABASE_URL=postgres://… npm run bench:ask   # PostgreSQL
 */
import { createServer } from 'node:http';
import { loadConfig } from '../src/platform/config.ts';
import { startServer } from '../src/server.ts';
import { createUser } from '../src/users/service.ts';
import { bulkPages } from '../test/support/content.ts';
import { freshDatabaseConfig, percentile } from './support.ts';

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 60);
const WORDS = ['alpha', 'bravo', 'cluster', 'deploy', 'engine', 'format', 'gateway', 'hosting', 'index', 'journal', 'kernel', 'ledger', 'module', 'network', 'object', 'payload', 'queue', 'router', 'schema', 'token', 'upload', 'vector', 'webhook', 'yaml', 'zone'];
const QUESTIONS = ['How do I deploy the gateway?', 'What is a kernel ledger?', 'How do I configure webhook schema tokens?', 'Where is the yaml module?', 'Why does the router queue fail?'];

async function main() {
  const engine = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.write(`data: ${JSON.stringify({ choices: [{ delta: { content: 'The gateway ' } }] })}\n\n`);
      res.end(`data: ${JSON.stringify({ choices: [{ delta: { content: 'deploys [1].' } }] })}\n\ndata: [DONE]\n\n`);
    });
  });
  await new Promise<void>((resolve) => engine.listen(0, '127.0.0.1', resolve));
  const engineUrl = `http://127.0.0.1:${(engine.address() as { port: number }).port}/v1`;
  const db = await freshDatabaseConfig(process.env.BENCH_DATABASE_URL);
  const server = await startServer(
    { ...loadConfig({}), port: 0, logLevel: 'silent', rateLimitMax: 1e9, databaseUrl: undefined, ...db.config, aiEngineUrl: engineUrl, aiModel: 'fake', fetchAllowPrivate: true },
    { purpose: 'bench' },
  );
  try {
    const services = server.services;
    const { token } = await createUser(services.db, { email: `ask.${Date.now()}@example.com`, name: 'Bench' });
    const headers = { authorization: `Bearer ${token}`, 'content-type': 'application/json' };
    const org = await (await fetch(`${server.url}/v1/orgs`, { method: 'POST', headers, body: JSON.stringify({ title: 'Ask bench' }) })).json();
    const space = await (await fetch(`${server.url}/v1/orgs/${org.id}/spaces`, { method: 'POST', headers, body: JSON.stringify({ title: 'Big' }) })).json();
    let seed = 42;
    const rand = () => (seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
    const word = () => WORDS[Math.floor(rand() * WORDS.length)]!;
    const started = performance.now();
    await bulkPages(services.db, { id: space.id, organization_id: org.id }, 100, 99, (n) => ({
      title: `${word()} ${word()} ${n}`,
      markdown: `## ${word()} ${word()}\n\n` + Array.from({ length: 3 }, () => Array.from({ length: 12 }, word).join(' ') + '.').join('\n\n') + '\n',
    }));
    console.log(`built and indexed 10,000 pages in ${((performance.now() - started) / 1000).toFixed(1)} s`);

    /** Milliseconds from the request to the first `data:` event of the stream. */
    const firstEvent = async (q: string) => {
      const t0 = performance.now();
      const res = await fetch(`${server.url}/v1/orgs/${org.id}/ask/stream?query=${encodeURIComponent(q)}`, { headers });
      if (!res.ok) throw new Error(`ask answered ${res.status}: ${await res.text()}`);
      const reader = res.body!.getReader();
      let text = '';
      let at = 0;
      for (;;) {
        const { done, value } = await reader.read();
        if (value) text += Buffer.from(value).toString('utf8');
        if (!at && text.includes('data: ')) at = performance.now() - t0;
        if (done) break;
      }
      if (!text.includes('event: done')) throw new Error(`the stream did not end well: ${text.slice(-300)}`);
      return at;
    };
    const search = async (q: string) => {
      const t0 = performance.now();
      const res = await fetch(`${server.url}/v1/orgs/${org.id}/search?query=${encodeURIComponent(q)}&limit=6`, { headers });
      await res.json();
      return performance.now() - t0;
    };
    const times = { engine: [] as number[], extractive: [] as number[], search: [] as number[] };
    for (let i = 0; i < ROUNDS + 10; i++) {
      const q = QUESTIONS[i % QUESTIONS.length]!;
      services.config.aiModel = 'fake';
      const a = await firstEvent(q);
      services.config.aiModel = undefined;
      const b = await firstEvent(q);
      const c = await search(q.replace(/[?]/g, ''));
      if (i >= 10) (times.engine.push(a), times.extractive.push(b), times.search.push(c));
    }
    const kind = process.env.BENCH_DATABASE_URL ? 'PostgreSQL' : 'PGlite (embedded)';
    console.log(`\nAsk over 10,000 pages; database: ${kind}; ${ROUNDS} sequential questions after 10 warm-up\n`);
    console.log('case'.padEnd(56) + 'p50 ms'.padStart(10) + 'p95 ms'.padStart(10));
    const line = (name: string, list: number[]) => {
      list.sort((x, y) => x - y);
      console.log(name.padEnd(56) + percentile(list, 50).toFixed(1).padStart(10) + percentile(list, 95).toFixed(1).padStart(10));
    };
    line('first streamed token (engine on 127.0.0.1, instant)', times.engine);
    line('extractive answer (no engine), first event', times.extractive);
    line('GET /v1/orgs/{id}/search, same words (whole response)', times.search);
    const p95 = percentile(times.engine, 95);
    console.log(`\ntime to the first token p95: ${p95.toFixed(1)} ms   goal: < 200 ms  (${p95 < 200 ? 'met' : 'NOT met'})`);
  } finally {
    await server.close();
    await db.cleanup();
    engine.close();
  }
}

await main();
