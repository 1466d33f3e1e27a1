import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { sql } from 'kysely';
import { ingestBody } from './fixtures/conversations.ts';
import { holdoutConversations } from './fixtures/conversations-holdout.ts';
import { describeQuality, quality } from './fixtures/conversations-quality.ts';
import { startTestServer, type TestServer } from './support/server.ts';

/**
 * The quality floor of the built-in engine on the hold-out set (test/fixtures/conversations-holdout.ts):
 * conversations of another product, written otherwise than the set the engine is tuned on, with
 * noise and several problems per conversation. The tuning set's floor is in insights.test.ts.
 */

let t: TestServer;
before(async () => {
  t = await startTestServer({ insightsReclusterDelayMs: 0 });
});
after(async () => {
  await t?.close();
});

async function settled(timeoutMs = 120_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const { rows } = await sql<{ n: number }>`
      SELECT count(*)::int AS n FROM jobs
      WHERE type LIKE 'insights.%' AND (status = 'running' OR (status = 'queued' AND run_at <= now()))`.execute(t.server.services.db);
    if (rows[0]!.n === 0) return;
    if (Date.now() > deadline) throw new Error('insights jobs did not finish in time');
    await new Promise((r) => setTimeout(r, 50));
  }
}

test('hold-out set: clusters agree with the hand labels (adjusted Rand index ≥ 0.7), no-problem conversations stay quiet', async () => {
  const ann = await t.user('Ann');
  const org = (await ann.api.orgs.createOrganization({ title: 'Hold-out Inc' })).data.id;
  const conversations = holdoutConversations();
  assert.ok(conversations.filter((c) => c.label !== 'none').length >= 300);
  assert.ok(new Set(conversations.map((c) => c.label)).size >= 16);
  for (let i = 0; i < conversations.length; i += 175) {
    const res = await t.request('POST', `/v1/orgs/${org}/conversations`, { token: ann.token, body: conversations.slice(i, i + 175).map(ingestBody) });
    assert.equal(res.status, 204, JSON.stringify(res.body));
  }
  await settled();
  const items: any[] = [];
  let page: string | undefined;
  do {
    const res = await t.request('GET', `/v1/orgs/${org}/conversations-issues?limit=1000${page ? `&page=${page}` : ''}`, { token: ann.token });
    assert.equal(res.status, 200);
    items.push(...res.body.items);
    page = res.body.next?.page;
  } while (page);
  const q = quality(
    conversations,
    items.map(({ issue }) => ({
      conversation: issue.conversation,
      cluster: issue.cluster,
      quotes: issue.details.nodes.filter((n: any) => n.type === 'blockquote').map((n: any) => n.nodes[0].nodes[0].leaves.map((l: any) => l.text).join('')),
    })),
  );
  console.log(describeQuality('insights hold-out', q));
  assert.ok(q.ari >= 0.7, `adjusted Rand index ${q.ari} < 0.7`);
  assert.ok(q.quiet >= 0.85, `no-problem conversations without issues: ${q.quiet} < 0.85`);
  assert.ok(q.found >= 0.75, `problem conversations with an issue: ${q.found} < 0.75`);
});
