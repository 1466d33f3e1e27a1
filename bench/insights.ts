/**
 * Benchmark of conversation insights with the built-in engine, through the HTTP API.
 *
 * Quality first: the adjusted Rand index (ARI) of the clusters against hand labels, with the share
 * of conversations read right, on the tuning set (test/fixtures/conversations.ts), the dev set
 * (conversations-dev.ts) and the hold-out set (conversations-holdout.ts, never tuned on); goal:
 * ARI at least 0.7 on each.
 *
 * Then throughput: ingesting and processing N and then 2N support conversations (N = 5,000 by default,
 * BENCH_CONVERSATIONS; 0 measures quality only), each into an organization of its own, through the HTTP API with the
 * built-in engine: batches of 500 posted, the background jobs extracting and clustering them, and
 * a final recomputation of the clusters. Prints the time of each, conversations per second and the
 * ratio 2N / N (goal: at most 2.3, i.e. linear).
 *
 *   npm run bench:insights                                   # embedded database (PGlite)
 *   BENCH_DATABASE_URL=postgres://… npm run bench:insights   # PostgreSQL
 */
import { sql } from 'kysely';
import { loadConfig } from '../src/platform/config.ts';
import { reclusterJob } from '../src/insights/process.ts';
import { startServer } from '../src/server.ts';
import { createUser } from '../src/users/service.ts';
import { generateConversations, ingestBody, type LabelledConversation } from '../test/fixtures/conversations.ts';
import { devConversations } from '../test/fixtures/conversations-dev.ts';
import { holdoutConversations } from '../test/fixtures/conversations-holdout.ts';
import { describeQuality, quality } from '../test/fixtures/conversations-quality.ts';
import { freshDatabaseConfig } from './support.ts';

const N = Number(process.env.BENCH_CONVERSATIONS ?? 5000);
const BATCH = 500;

async function main() {
  const db = await freshDatabaseConfig(process.env.BENCH_DATABASE_URL);
  const server = await startServer(
    { ...loadConfig({}), port: 0, logLevel: 'silent', rateLimitMax: 1e9, jobPollMs: 20, databaseUrl: undefined, ...db.config },
    { purpose: 'bench' },
  );
  try {
    const services = server.services;
    const { token } = await createUser(services.db, { email: `insights.${Date.now()}@example.com`, name: 'Bench' });
    const headers = { authorization: `Bearer ${token}`, 'content-type': 'application/json' };

    const settle = async () => {
      for (;;) {
        const { rows } = await sql<{ n: number }>`SELECT count(*)::int AS n FROM jobs WHERE type LIKE 'insights.%' AND (status = 'running' OR (status = 'queued' AND run_at <= now()))`.execute(services.db);
        if (rows[0]!.n === 0) break;
        await new Promise((r) => setTimeout(r, 20));
      }
    };

    const measure = async (name: string, conversations: LabelledConversation[]) => {
      const org = await (await fetch(`${server.url}/v1/orgs`, { method: 'POST', headers, body: JSON.stringify({ title: name }) })).json();
      for (let i = 0; i < conversations.length; i += 175) {
        const res = await fetch(`${server.url}/v1/orgs/${org.id}/conversations`, { method: 'POST', headers, body: JSON.stringify(conversations.slice(i, i + 175).map(ingestBody)) });
        if (res.status !== 204) throw new Error(`ingest answered ${res.status}: ${await res.text()}`);
        await settle();
      }
      await reclusterJob(services)({ organizationId: org.id });
      const found = [];
      let page: string | undefined;
      do {
        const res = await (await fetch(`${server.url}/v1/orgs/${org.id}/conversations-issues?limit=1000${page ? `&page=${page}` : ''}`, { headers })).json();
        for (const { issue } of res.items) {
          const quotes = issue.details.nodes.filter((n: any) => n.type === 'blockquote').map((n: any) => n.nodes[0].nodes[0].leaves.map((l: any) => l.text).join(''));
          found.push({ conversation: issue.conversation, cluster: issue.cluster, quotes });
        }
        page = res.next?.page;
      } while (page);
      const q = quality(conversations, found);
      console.log(describeQuality(`${name} (${conversations.length} conversations)`, q));
      return q.ari;
    };

    const aris = [
      await measure('tuning set', generateConversations({ perProblem: 28, noProblem: 40, seed: 2024 })),
      await measure('dev set', devConversations()),
      await measure('hold-out set', holdoutConversations()),
    ];
    if (aris.some((a) => a < 0.7)) process.exitCode = 1;
    if (N === 0) return;

    const run = async (count: number, seed: number) => {
      const org = await (await fetch(`${server.url}/v1/orgs`, { method: 'POST', headers, body: JSON.stringify({ title: `Insights ${count}` }) })).json();
      const perProblem = Math.floor((count * 0.9) / 11);
      const conversations = generateConversations({ perProblem, noProblem: count - perProblem * 11, seed, prefix: `b${seed}` });
      const started = performance.now();
      for (let i = 0; i < conversations.length; i += BATCH) {
        const res = await fetch(`${server.url}/v1/orgs/${org.id}/conversations`, { method: 'POST', headers, body: JSON.stringify(conversations.slice(i, i + BATCH).map(ingestBody)) });
        if (res.status !== 204) throw new Error(`ingest answered ${res.status}: ${await res.text()}`);
      }
      for (;;) {
        const { rows } = await sql<{ n: number }>`SELECT count(*)::int AS n FROM conversations WHERE organization_id = ${org.id} AND processed_at IS NULL`.execute(services.db);
        if (rows[0]!.n === 0) break;
        await new Promise((r) => setTimeout(r, 20));
      }
      // Wait for the recomputations the growth triggered, then run one more, as the periodic job would.
      for (;;) {
        const { rows } = await sql<{ n: number }>`SELECT count(*)::int AS n FROM jobs WHERE type LIKE 'insights.%' AND (status = 'running' OR (status = 'queued' AND run_at <= now()))`.execute(services.db);
        if (rows[0]!.n === 0) break;
        await new Promise((r) => setTimeout(r, 20));
      }
      await reclusterJob(services)({ organizationId: org.id });
      const seconds = (performance.now() - started) / 1000;
      const { rows } = await sql<{ issues: number; clusters: number }>`
        SELECT (SELECT count(*)::int FROM conversation_issues WHERE organization_id = ${org.id}) AS issues,
               (SELECT count(*)::int FROM issues_clusters WHERE organization_id = ${org.id}) AS clusters`.execute(services.db);
      console.log(
        `${count} conversations: ${seconds.toFixed(1)} s, ${(count / seconds).toFixed(0)} conversations/s (${rows[0]!.issues} issues, ${rows[0]!.clusters} clusters)`,
      );
      return seconds;
    };

    const one = await run(N, 1);
    const two = await run(2 * N, 2);
    const ratio = two / one;
    console.log(`ratio 2N/N: ${ratio.toFixed(2)} (goal: at most 2.3)`);
    if (ratio > 2.3) process.exitCode = 1;
    console.log('quality goal: ARI at least 0.7 on every set; throughput goal: ratio at most 2.3');
  } finally {
    await server.close();
    await db.cleanup();
  }
}

await main();
