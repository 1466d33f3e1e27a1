/**
 * Benchmark: durable delivery of integration events across a crash. A Folio server (`folio serve`,
 * a child process) sends an integration's events to a development tunnel served here. 1,000
 * events are written (an installation, then 999 configuration changes), the server is killed with
 * SIGKILL while it delivers them, then started again on the same data. Prints the events lost
 * (goal: 0), the repeats (only deliveries in flight at the kill, with the same eventId), whether
 * each installation's events arrived in order, and deliveries per second.
 *
 *   node --import tsx bench/integration-events.ts                                  # embedded database
 *   BENCH_DATABASE_URL=postgres://… node --import tsx bench/integration-events.ts  # PostgreSQL
 */
import { spawn, execFileSync, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const EVENTS = Number(process.env.BENCH_EVENTS ?? 1000);
const dataDir = mkdtempSync(join(tmpdir(), 'folio-bench-events-'));
const port = 20000 + Math.floor(Math.random() * 20000);
const env = {
  ...process.env,
  DATA_DIR: dataDir,
  PORT: String(port),
  FETCH_ALLOW_PRIVATE: 'true',
  JOB_POLL_MS: '20',
  LOG_LEVEL: 'silent',
  RATE_LIMIT_MAX: '1000000',
  ...(process.env.BENCH_DATABASE_URL ? { DATABASE_URL: process.env.BENCH_DATABASE_URL } : {}),
};
const bin = join(import.meta.dirname, '..', 'bin', 'folio');

// The tunnel: counts each eventId and the order of arrival.
const seen = new Map<string, number>();
const order: string[] = [];
const tunnel = createServer(async (req, res) => {
  const chunks: Buffer[] = [];
  for await (const c of req) chunks.push(c as Buffer);
  const form = await new Request('http://x', { method: 'POST', body: Buffer.concat(chunks), headers: { 'content-type': String(req.headers['content-type']) } }).formData();
  const event = JSON.parse(String(form.get('event'))) as { eventId: string };
  seen.set(event.eventId, (seen.get(event.eventId) ?? 0) + 1);
  order.push(event.eventId);
  res.end('ok');
});
await new Promise<void>((r) => tunnel.listen(0, '127.0.0.1', r));
const tunnelPort = (tunnel.address() as { port: number }).port;

function serve(): Promise<ChildProcess> {
  const child = spawn(bin, ['serve'], { env, stdio: ['ignore', 'pipe', 'pipe'] });
  return new Promise((resolve, reject) => {
    // Folio reports its start on stderr; it is ready once it says where it listens.
    const watch = (d: Buffer) => {
      if (d.toString().includes(`listening on http://127.0.0.1:${port}`)) resolve(child);
    };
    child.stdout!.on('data', watch);
    child.stderr!.on('data', watch);
    child.on('exit', (code) => reject(new Error(`folio serve exited with ${code}`)));
  });
}

const { token } = JSON.parse(execFileSync(bin, ['users', 'create', '--email', 'bench@example.com', '--name', 'Bench'], { env }).toString().trim().split('\n').pop()!);
let server = await serve();
const url = `http://127.0.0.1:${port}/v1`;
const call = async (method: string, path: string, body?: unknown) => {
  const res = await fetch(url + path, { method, headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' }, ...(body ? { body: JSON.stringify(body) } : {}) });
  const text = await res.text();
  if (!res.ok) throw new Error(`${method} ${path}: ${res.status} ${text}`);
  return text ? JSON.parse(text) : undefined;
};
try {
  const org = await call('POST', '/orgs', { title: 'Bench' });
  await call('POST', '/integrations/bench-events', { title: 'Bench', organization: org.id });
  await call('PUT', '/integrations/bench-events/dev', { tunnelUrl: `http://127.0.0.1:${tunnelPort}/` });
  const inst = await call('POST', '/integrations/bench-events/installations', { organization: org.id });
  const started = performance.now();
  for (let i = 1; i < EVENTS; i += 20) {
    await Promise.all(
      Array.from({ length: Math.min(20, EVENTS - i) }, (_, k) => call('PATCH', `/integrations/bench-events/installations/${inst.id}`, { configuration: { n: i + k } })),
    );
  }
  const written = performance.now();
  console.log(`written in ${((written - started) / 1000).toFixed(1)} s; delivered so far: ${seen.size}`);
  while (seen.size < EVENTS / 3) await new Promise((r) => setTimeout(r, 5));
  server.kill('SIGKILL');
  await new Promise((r) => server.once('exit', r));
  const atKill = seen.size;
  console.log(`killed with ${seen.size} delivered`);
  server = await serve();
  console.log('restarted');
  const deadline = Date.now() + 180_000;
  while (seen.size < EVENTS && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
  const finished = performance.now();
  const repeats = [...seen.values()].reduce((n, c) => n + c - 1, 0);
  // Folio's record, oldest first (the list is newest first): the order the events were written in.
  const recorded = (await call('GET', `/integrations/bench-events/events?limit=1000`)).items.map((e: { id: string }) => e.id).reverse() as string[];
  const count = recorded.length;
  const firstArrivals = [...new Set(order)];
  const inOrder = firstArrivals.length === recorded.length && firstArrivals.every((id, i) => id === recorded[i]);
  console.log(`events written: ${EVENTS} in ${((written - started) / 1000).toFixed(1)} s; delivered before the kill: ${atKill}`);
  console.log(`lost: ${EVENTS - seen.size}, repeated: ${repeats} (same eventId), recorded by Folio: ${count}, in order: ${inOrder}`);
  console.log(`deliveries per second (kill and restart included): ${(order.length / ((finished - started) / 1000)).toFixed(0)}`);
} finally {
  server.kill('SIGKILL');
  tunnel.close();
  rmSync(dataDir, { recursive: true, force: true });
}
