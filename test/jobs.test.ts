import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { migrate, openDatabase, type DatabaseHandle } from '../src/platform/db/database.ts';
import { Jobs } from '../src/platform/jobs.ts';
import { loadConfig } from '../src/platform/config.ts';
import { freshDatabaseConfig, testClock } from './support/server.ts';
import { eventually } from './support/wait.ts';

let fresh: Awaited<ReturnType<typeof freshDatabaseConfig>>;
let handle: DatabaseHandle;
const config = () => ({ ...loadConfig({}), ...fresh.config });

before(async () => {
  fresh = await freshDatabaseConfig();
  handle = await openDatabase(config(), 'test');
  await migrate(handle.db);
});
after(async () => {
  await handle?.close();
  await fresh?.cleanup();
});

const noBackoff = () => 0;

async function jobRow(id: number) {
  return handle.db.selectFrom('jobs').selectAll().where('id', '=', id).executeTakeFirstOrThrow();
}

describe('background jobs', () => {
  test('a failing job is retried with backoff until it succeeds', async () => {
    const jobs = new Jobs(handle.db, { pollMs: 10, backoffMs: noBackoff });
    let calls = 0;
    jobs.register('flaky', async (payload: { n: number }) => {
      calls++;
      assert.equal(payload.n, 7);
      if (calls < 3) throw new Error(`boom ${calls}`);
    });
    const id = await jobs.enqueue('flaky', { n: 7 });
    assert.equal(await jobs.drain(), 3);
    const row = await jobRow(id);
    assert.equal(row.status, 'done');
    assert.equal(row.attempts, 3);
    assert.equal(row.last_error, null);
  });

  test('backoff delays the retry; exhausting attempts marks the job failed with its error', async () => {
    const jobs = new Jobs(handle.db, { pollMs: 10, backoffMs: () => 60_000 });
    jobs.register('doomed', async () => {
      throw new Error('always broken');
    });
    const id = await jobs.enqueue('doomed', {}, { maxAttempts: 2 });
    assert.equal(await jobs.drain(), 1, 'the retry is not due yet');
    let row = await jobRow(id);
    assert.equal(row.status, 'queued');
    assert.ok(row.run_at.getTime() > Date.now() + 50_000);
    await handle.db.updateTable('jobs').set({ run_at: new Date() }).where('id', '=', id).execute();
    await jobs.drain();
    row = await jobRow(id);
    assert.equal(row.status, 'failed');
    assert.equal(row.attempts, 2);
    assert.equal(row.last_error, 'always broken');
  });

  test('several workers never run the same job twice', async () => {
    const runs = new Map<number, number>();
    const worker = () => {
      const jobs = new Jobs(handle.db, { pollMs: 10, backoffMs: noBackoff });
      jobs.register('count', async (payload: { i: number }) => {
        runs.set(payload.i, (runs.get(payload.i) ?? 0) + 1);
        await new Promise((r) => setTimeout(r, 2));
      });
      return jobs;
    };
    const a = worker();
    const b = worker();
    for (let i = 0; i < 30; i++) await a.enqueue('count', { i });
    const [ranA, ranB] = await Promise.all([a.drain(), b.drain()]);
    assert.equal(ranA + ranB, 30);
    assert.equal(runs.size, 30);
    assert.ok([...runs.values()].every((n) => n === 1));
  });

  test('a job whose worker died is taken again once its lease expires', async () => {
    const jobs = new Jobs(handle.db, { pollMs: 10, backoffMs: noBackoff });
    let ran = 0;
    jobs.register('orphan', async () => {
      ran++;
    });
    const id = await jobs.enqueue('orphan', {});
    // As if a worker had claimed it and crashed: running, lease still valid, then expired.
    await handle.db.updateTable('jobs').set({ status: 'running', attempts: 1, locked_until: new Date(Date.now() + 60_000) }).where('id', '=', id).execute();
    assert.equal(await jobs.drain(), 0);
    await handle.db.updateTable('jobs').set({ locked_until: new Date(Date.now() - 1) }).where('id', '=', id).execute();
    assert.equal(await jobs.drain(), 1);
    assert.equal(ran, 1);
    assert.equal((await jobRow(id)).status, 'done');
  });

  test('queued jobs survive a restart of the process', async () => {
    const jobs = new Jobs(handle.db, { pollMs: 10 });
    const id = await jobs.enqueue('later', { hello: 'world' });
    await handle.close();
    handle = await openDatabase(config(), 'test');
    const again = new Jobs(handle.db, { pollMs: 10 });
    let got: unknown;
    again.register('later', async (payload) => {
      got = payload;
    });
    again.start();
    await eventually(async () => (await jobRow(id)).status === 'done', { what: 'the worker loop to run the job queued before the restart' });
    await again.stop();
    assert.deepEqual(got, { hello: 'world' });
    assert.equal((await jobRow(id)).status, 'done');
  });

  test('settle() runs due jobs and the jobs they queue until the queue is idle', async () => {
    const jobs = new Jobs(handle.db, { pollMs: 10, backoffMs: noBackoff });
    const ran: number[] = [];
    jobs.register('settle.chain', async (payload: { n: number }) => {
      ran.push(payload.n);
      if (payload.n > 0) await jobs.enqueue('settle.chain', { n: payload.n - 1 });
    });
    let failures = 0;
    jobs.register('settle.flaky', async () => {
      if (++failures < 3) throw new Error('not yet');
    });
    const flaky = await jobs.enqueue('settle.flaky', {});
    await jobs.enqueue('settle.chain', { n: 3 });
    // A job of a type this worker does not handle is no reason to wait.
    await jobs.enqueue('settle.unknown', {});
    assert.equal(await jobs.settle(), 7, 'four links of the chain, three attempts of the flaky job');
    assert.deepEqual(ran, [3, 2, 1, 0]);
    assert.equal((await jobRow(flaky)).status, 'done');
    assert.equal(await jobs.settle(), 0, 'an idle queue settles at once');
  });

  test('settle() waits for the pass the worker loop has in progress', async () => {
    const jobs = new Jobs(handle.db, { pollMs: 10 });
    let release!: () => void;
    const released = new Promise<void>((r) => (release = r));
    let started = false;
    jobs.register('settle.slow', async () => {
      started = true;
      await released;
    });
    const id = await jobs.enqueue('settle.slow', {});
    jobs.start();
    try {
      await eventually(() => started, { what: 'the worker loop to take the job' });
      let settled = false;
      const settling = jobs.settle().then((n) => {
        settled = true;
        return n;
      });
      // However many round trips to the database settle() makes meanwhile, the job is running.
      for (let i = 0; i < 5; i++) await jobRow(id);
      assert.equal(settled, false, 'settle() returned while the loop was running a job');
      release();
      assert.equal(await settling, 0, 'the job ran in the loop, not in settle()');
      assert.equal(settled, true);
      assert.equal((await jobRow(id)).status, 'done', 'settle() returned once the job was done');
    } finally {
      release();
      await jobs.stop();
    }
  });

  test('settle() leaves jobs queued for later; moving the clock past their time makes them due', async () => {
    const clock = testClock();
    const jobs = new Jobs(handle.db, { pollMs: 10, backoffMs: () => 60_000, now: clock.now });
    let calls = 0;
    jobs.register('settle.retry', async () => {
      if (++calls === 1) throw new Error('first attempt fails');
    });
    const id = await jobs.enqueue('settle.retry', {});
    assert.equal(await jobs.settle(), 1, 'the retry is a minute away');
    assert.equal((await jobRow(id)).status, 'queued');
    clock.advance(60_000);
    assert.equal(await jobs.settle(), 1);
    const row = await jobRow(id);
    assert.equal(row.status, 'done');
    assert.equal(row.attempts, 2);
  });

  test('settle() gives up after its timeout, naming the jobs still pending', async () => {
    const jobs = new Jobs(handle.db, { pollMs: 10 });
    jobs.register('settle.held', async () => {});
    const id = await jobs.enqueue('settle.held', {});
    // Held by a worker elsewhere: running under a lease that has not expired.
    await handle.db.updateTable('jobs').set({ status: 'running', attempts: 1, locked_until: new Date(Date.now() + 60_000) }).where('id', '=', id).execute();
    await assert.rejects(jobs.settle({ timeoutMs: 50 }), new RegExp(`jobs did not settle in 50 ms: settle\\.held #${id} running`));
    await handle.db.updateTable('jobs').set({ status: 'done', locked_until: null }).where('id', '=', id).execute();
  });
  test('an idle worker looks less and less often; a job queued here is run at once, one queued elsewhere at the next look', async () => {
    // Looks for due jobs, counted as they reach the database.
    let looks = 0;
    const counted = handle.db.withPlugin({
      transformQuery(args) {
        const node = args.node as { kind: string; sqlFragments?: readonly string[] };
        if (node.kind === 'RawNode' && node.sqlFragments?.join('').includes("UPDATE jobs SET status = 'running'")) looks++;
        return args.node;
      },
      transformResult: async (args) => args.result,
    });
    const jobs = new Jobs(counted, { pollMs: 20, idlePollMs: 10_000 });
    const ran: string[] = [];
    jobs.register('idle-check', async (payload: { name: string }) => {
      ran.push(payload.name);
    });
    jobs.start();
    try {
      await new Promise((r) => setTimeout(r, 2_600));
      // Every 20 ms that would be 130 looks; waits doubling from 20 ms are 8 (the next one 2.5 s away).
      assert.ok(looks <= 10, `an idle worker looked ${looks} times in 2.6 s`);
      await jobs.enqueue('idle-check', { name: 'here' });
      await eventually(() => ran.includes('here'), { timeoutMs: 1_500, what: 'the job queued by this process ran before the next idle look' });
      // Queued by another process (a Jobs that does not run them): found by a later look.
      await new Jobs(handle.db, { pollMs: 20 }).enqueue('idle-check', { name: 'elsewhere' });
      await eventually(() => ran.includes('elsewhere'), { timeoutMs: 5_000 });
    } finally {
      await jobs.stop();
    }
  });
});
