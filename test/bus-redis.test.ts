import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { createServer } from 'node:net';
import { after, before, test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { Redis } from 'ioredis';
import { RedisBus, RESYNC } from '../src/platform/bus.ts';

// The Redis bus after a lost subscriber connection (ioredis subscribes again before it says
// 'ready', on which the bus resyncs): against a redis-server of this test's own (it kills pub/sub
// connections, which must not touch anyone else's Redis). Skipped without redis-server.

let server: ChildProcess | undefined;
let url = '';
const clients: Redis[] = [];

async function freePort(): Promise<number> {
  const s = createServer();
  await new Promise<void>((resolve) => s.listen(0, '127.0.0.1', resolve));
  const { port } = s.address() as { port: number };
  await new Promise<void>((resolve) => s.close(() => resolve()));
  return port;
}

async function client(options: Record<string, unknown> = {}): Promise<Redis> {
  const redis = new Redis(url, { lazyConnect: true, maxRetriesPerRequest: 1, retryStrategy: () => 50, ...options });
  redis.on('error', () => {});
  await redis.connect();
  clients.push(redis);
  return redis;
}

before(async () => {
  const port = await freePort();
  url = `redis://127.0.0.1:${port}`;
  server = spawn('redis-server', ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'], { stdio: 'ignore' });
  server.on('error', () => (server = undefined));
  for (let i = 0; i < 100; i++) {
    const probe = new Redis(url, { lazyConnect: true, retryStrategy: () => null, maxRetriesPerRequest: 0 });
    probe.on('error', () => {});
    try {
      await probe.connect();
      await probe.ping();
      probe.disconnect();
      return;
    } catch {
      probe.disconnect();
      await sleep(50);
    }
  }
});
after(async () => {
  for (const c of clients) c.disconnect();
  server?.kill();
});

test('after its subscriber connection is killed, a Redis bus reconnects, resyncs its handlers, and hears a message sent at the resync', async (t) => {
  if (!server) return t.skip('no redis-server on this machine');
  const a = new RedisBus(await client(), await client({ enableOfflineQueue: true }), 'test:bus');
  const b = new RedisBus(await client(), await client({ enableOfflineQueue: true }), 'test:bus');
  await a.start();
  await b.start();
  const heard: string[] = [];
  a.subscribe('sites', (m) => {
    heard.push(m);
    // Another process changes something the moment this one has resynced.
    if (m === RESYNC) void b.publish('sites', 'after-resync');
  });
  await b.publish('sites', 'before');
  for (let i = 0; i < 100 && !heard.includes('before'); i++) await sleep(20);
  assert.deepEqual(heard, ['before']);

  const admin = await client();
  await admin.call('CLIENT', 'KILL', 'TYPE', 'pubsub');
  for (let i = 0; i < 250 && !heard.includes('after-resync'); i++) await sleep(20);
  assert.deepEqual(heard, ['before', RESYNC, 'after-resync']);
  await a.close();
  await b.close();
});
