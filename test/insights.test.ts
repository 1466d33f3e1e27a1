import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import { after, before, describe, test } from 'node:test';
import { sql } from 'kysely';
import { loadConfig } from '../src/platform/config.ts';
import { EngineError, postJson } from '../src/ai/client.ts';
import { adjustedRandIndex, generateConversations, ingestBody, type LabelledConversation } from './fixtures/conversations.ts';
import { addMember } from './support/factories.ts';
import { startTestServer, type TestServer, type TestUser } from './support/server.ts';

let t: TestServer;
before(async () => {
  // Recomputation right after each processed batch (in production it waits INSIGHTS_RECLUSTER_DELAY_MS).
  t = await startTestServer({ insightsReclusterDelayMs: 0 });
});
after(async () => {
  await t?.close();
});

/** Waits until no insights job is due or running on the server. */
async function settled(server: TestServer, timeoutMs = 60_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const { rows } = await sql<{ n: number }>`
      SELECT count(*)::int AS n FROM jobs
      WHERE type LIKE 'insights.%' AND (status = 'running' OR (status = 'queued' AND run_at <= now()))`.execute(server.server.services.db);
    if (rows[0]!.n === 0) return;
    if (Date.now() > deadline) throw new Error('insights jobs did not finish in time');
    await new Promise((r) => setTimeout(r, 50));
  }
}

async function ingest(server: TestServer, user: TestUser, orgId: string, body: unknown) {
  return server.request('POST', `/v1/orgs/${orgId}/conversations`, { token: user.token, body });
}

/** Every item of a list, following `next.page`. */
async function all(server: TestServer, user: TestUser, path: string): Promise<any[]> {
  const items: any[] = [];
  let page: string | undefined;
  do {
    const sep = path.includes('?') ? '&' : '?';
    const res = await server.request('GET', `${path}${sep}limit=1000${page ? `&page=${page}` : ''}`, { token: user.token });
    assert.equal(res.status, 200, JSON.stringify(res.body));
    items.push(...res.body.items);
    page = res.body.next?.page;
  } while (page);
  return items;
}

describe('conversations, issues and clusters', () => {
  let admin: TestUser;
  let orgId: string;
  let conversations: LabelledConversation[];

  before(async () => {
    admin = await t.user('Ann Admin');
    orgId = (await admin.api.orgs.createOrganization({ title: 'Insights Inc' })).data.id;
    conversations = generateConversations({ perProblem: 28, noProblem: 40, seed: 2024 });
    for (let i = 0; i < conversations.length; i += 175) {
      const res = await ingest(t, admin, orgId, conversations.slice(i, i + 175).map(ingestBody));
      assert.equal(res.status, 204, JSON.stringify(res.body));
    }
    await settled(t);
  });

  test('the built-in engine finds the labelled problems and clusters them (adjusted Rand index), and finds none where there is none', async () => {
    assert.ok(conversations.length >= 300);
    assert.ok(new Set(conversations.map((c) => c.label)).size >= 11);
    const listed = await all(t, admin, `/v1/orgs/${orgId}/conversations`);
    assert.equal(listed.length, conversations.length);
    assert.ok(listed.every((c) => c.object === 'conversation' && typeof c.processedAt === 'string'), 'every conversation is processed');

    const issues = await all(t, admin, `/v1/orgs/${orgId}/conversations-issues`);
    const label = new Map(conversations.map((c) => [c.id, c.label]));
    const withIssues = new Set(issues.map((i) => i.issue.conversation));
    const none = conversations.filter((c) => c.label === 'none');
    const quiet = none.filter((c) => !withIssues.has(c.id)).length / none.length;
    const problems = conversations.filter((c) => c.label !== 'none');
    const found = problems.filter((c) => withIssues.has(c.id)).length / problems.length;
    const labelled = issues.filter((i) => label.get(i.issue.conversation) !== 'none');
    const ari = adjustedRandIndex(labelled.map((i) => label.get(i.issue.conversation)!), labelled.map((i) => i.issue.cluster));
    const clusters = await all(t, admin, `/v1/orgs/${orgId}/conversations-clusters`);
    console.log(
      `insights: ${conversations.length} conversations (${problems.length} about 11 problems, ${none.length} without one) → ${issues.length} issues in ${clusters.length} clusters; ` +
        `adjusted Rand index ${ari.toFixed(3)}; no-problem conversations without issues ${(quiet * 100).toFixed(1)}%; problem conversations with an issue ${(found * 100).toFixed(1)}%`,
    );
    assert.ok(ari >= 0.7, `adjusted Rand index ${ari} < 0.7`);
    assert.ok(quiet >= 0.9, `no-problem conversations without issues: ${quiet} < 0.9`);
    assert.ok(found >= 0.9, `problem conversations with an issue: ${found} < 0.9`);
  });

  test('issues: details quote the conversation, impact per the spec, filters and the issue read', async () => {
    const issues = await all(t, admin, `/v1/orgs/${orgId}/conversations-issues`);
    const byId = new Map(conversations.map((c) => [c.id, c]));
    for (const { issue, conversation } of issues.slice(0, 50)) {
      assert.equal(issue.object, 'conversation-issue');
      assert.ok(['low', 'medium', 'high'].includes(issue.impact));
      assert.equal(conversation.id, issue.conversation);
      const text = byId.get(issue.conversation)!.parts.filter((p) => p.role === 'user').map((p) => p.body).join(' ');
      const quotes = issue.details.nodes.filter((n: any) => n.type === 'blockquote').map((n: any) => n.nodes[0].nodes[0].leaves.map((l: any) => l.text).join(''));
      assert.ok(quotes.length >= 1, 'the details quote the evidence');
      for (const q of quotes) assert.ok(text.includes(q), `"${q}" is quoted from the customer's messages`);
      assert.equal(Date.parse(issue.createdAt), Date.parse(byId.get(issue.conversation)!.createdAt), 'createdAt is when the conversation happened');
    }
    // Impacts by the definitions: a blocked team is high, a how-to question is low.
    const [blocked] = await all(t, admin, `/v1/orgs/${orgId}/conversations-issues?conversation=${encodeURIComponent(conversations.find((c) => /blocked because SSO/.test(c.parts[0]!.body))!.id)}`);
    assert.equal(blocked.issue.impact, 'high');
    const howTo = conversations.find((c) => /^(Hi,|Hello team,|Hey there!|Good morning,|Hi support,)? ?How do I get images/.test(c.parts[0]!.body) && c.parts.length === 1);
    if (howTo) assert.equal((await all(t, admin, `/v1/orgs/${orgId}/conversations-issues?conversation=${howTo.id}`))[0].issue.impact, 'low');

    const one = issues[0];
    const got = await t.request('GET', `/v1/orgs/${orgId}/conversations-issues/${one.issue.id}`, { token: admin.token });
    assert.equal(got.status, 200);
    assert.deepEqual(got.body, one);
    const ofCluster = await all(t, admin, `/v1/orgs/${orgId}/conversations-issues?cluster=${one.issue.cluster}`);
    assert.ok(ofCluster.length >= 1 && ofCluster.every((i) => i.issue.cluster === one.issue.cluster));
    const conv = await t.request('GET', `/v1/orgs/${orgId}/conversations/${one.issue.conversation}`, { token: admin.token });
    assert.equal(conv.status, 200);
    assert.deepEqual(conv.body.parts, byId.get(one.issue.conversation)!.parts);
    assert.equal(conv.body.metadata.createdAt, byId.get(one.issue.conversation)!.createdAt);
    assert.equal(conv.body.conversation.id, one.issue.conversation);
    assert.equal((await t.request('GET', `/v1/orgs/${orgId}/conversations-issues/nope`, { token: admin.token })).status, 404);
    assert.equal((await t.request('GET', `/v1/orgs/${orgId}/conversations/nope`, { token: admin.token })).status, 404);
  });

  test('clusters: label, icon, summary, impact, weekly pulse, sources, stats; sorting and paging', async () => {
    const clusters = await all(t, admin, `/v1/orgs/${orgId}/conversations-clusters?sort=issues`);
    const issues = await all(t, admin, `/v1/orgs/${orgId}/conversations-issues`);
    for (const c of clusters) {
      assert.equal(c.object, 'issues-cluster');
      assert.ok(c.label.length > 0 && c.icon.length > 0);
      assert.equal(c.summary.object, 'document');
      assert.equal(c.weeklyPulse.length, 13);
      const mine = issues.filter((i) => i.issue.cluster === c.id);
      assert.equal(c.stats.issues, mine.length);
      assert.equal(c.stats.conversations, new Set(mine.map((i) => i.issue.conversation)).size);
      assert.equal(Object.values(c.sources as Record<string, number>).reduce((a, b) => a + b, 0), mine.length);
      const inPulse = mine.filter((i) => Date.now() - Date.parse(i.issue.createdAt) < 13 * 7 * 24 * 3600 * 1000).length;
      assert.equal(c.weeklyPulse.reduce((a: number, b: number) => a + b, 0), inPulse);
      assert.ok(['low', 'medium', 'high'].includes(c.impact));
    }
    assert.deepEqual(clusters.map((c) => c.stats.issues), [...clusters.map((c) => c.stats.issues)].sort((a, b) => b - a), 'sorted by issues, most first');
    const asc = await all(t, admin, `/v1/orgs/${orgId}/conversations-clusters?sort=createdAt&order=asc`);
    assert.deepEqual(asc.map((c) => c.createdAt), [...asc.map((c) => c.createdAt)].sort());
    // Paging: two at a time gives the same clusters as one page.
    const paged: any[] = [];
    let page: string | undefined;
    do {
      const res = await t.request('GET', `/v1/orgs/${orgId}/conversations-clusters?limit=2${page ? `&page=${page}` : ''}`, { token: admin.token });
      assert.equal(res.status, 200);
      assert.equal(res.body.count, clusters.length);
      paged.push(...res.body.items);
      page = res.body.next?.page;
    } while (page);
    assert.deepEqual(paged.map((c) => c.id).sort(), clusters.map((c) => c.id).sort());
    assert.equal((await t.request('GET', `/v1/orgs/${orgId}/conversations-clusters?sort=label`, { token: admin.token })).status, 400);
    // Sources filter on conversations.
    const fromZendesk = await all(t, admin, `/v1/orgs/${orgId}/conversations?source=zendesk`);
    assert.equal(fromZendesk.length, conversations.filter((c) => c.source === 'zendesk').length);
    assert.ok(fromZendesk.every((c) => c.source === 'zendesk'));
  });

  test('a conversation reporting two problems yields two issues, each joining its own existing cluster', async () => {
    const issues = await all(t, admin, `/v1/orgs/${orgId}/conversations-issues`);
    const label = new Map(conversations.map((c) => [c.id, c.label]));
    const clusterOf = (l: string) => issues.find((i) => label.get(i.issue.conversation) === l)!.issue.cluster;
    const body = {
      id: 'two-problems',
      subject: 'Two things',
      source: 'zendesk',
      parts: [{ type: 'message', role: 'user', body: 'Hi, exporting our space to PDF fails with an error and the images are missing from the PDF. Also, the invite link for my teammates says the invitation has expired.' }],
    };
    assert.equal((await ingest(t, admin, orgId, body)).status, 204);
    await settled(t);
    const two = await all(t, admin, `/v1/orgs/${orgId}/conversations-issues?conversation=two-problems`);
    assert.equal(two.length, 2);
    assert.deepEqual(two.map((i) => i.issue.cluster).sort(), [clusterOf('pdf_export'), clusterOf('invite_members')].sort());
    const conv = await t.request('GET', `/v1/orgs/${orgId}/conversations/two-problems`, { token: admin.token });
    assert.equal(conv.body.conversation.impact, 'medium');
  });

  test('re-ingesting the same conversations changes nothing; a changed conversation is processed again', async () => {
    const snapshot = async () => ({
      clusters: await all(t, admin, `/v1/orgs/${orgId}/conversations-clusters`),
      issues: await all(t, admin, `/v1/orgs/${orgId}/conversations-issues`),
      conversations: await all(t, admin, `/v1/orgs/${orgId}/conversations`),
    });
    const jobs = async () => Number((await sql<{ n: number }>`SELECT count(*)::int AS n FROM jobs`.execute(t.server.services.db)).rows[0]!.n);
    const before = await snapshot();
    const jobsBefore = await jobs();
    // Same content, attributes in another key order: still the same conversation.
    for (let i = 0; i < conversations.length; i += 200) {
      assert.equal((await ingest(t, admin, orgId, conversations.slice(i, i + 200).map(ingestBody))).status, 204);
    }
    assert.equal(await jobs(), jobsBefore, 'nothing to process');
    await settled(t);
    assert.deepEqual(await snapshot(), before);

    const target = conversations.find((c) => c.label === 'pdf_export')!;
    const oldIssues = before.issues.filter((i) => i.issue.conversation === target.id);
    const changed = { ...ingestBody(target), parts: [{ type: 'message', role: 'user', body: 'Hi, the PDF export is missing every image and the tables are cut off.' }] };
    assert.equal((await ingest(t, admin, orgId, changed)).status, 204);
    await settled(t);
    const conv = await t.request('GET', `/v1/orgs/${orgId}/conversations/${target.id}`, { token: admin.token });
    assert.equal(conv.body.parts[0].body, changed.parts[0]!.body);
    assert.ok(Date.parse(conv.body.conversation.processedAt) > Date.parse(before.conversations.find((c) => c.id === target.id).processedAt));
    const newIssues = await all(t, admin, `/v1/orgs/${orgId}/conversations-issues?conversation=${target.id}`);
    assert.equal(newIssues.length, 1);
    assert.ok(!oldIssues.some((o) => o.issue.id === newIssues[0].issue.id), 'the old issues were replaced');
    assert.match(newIssues[0].issue.title, /PDF export is missing every image/);
    const pdfCluster = oldIssues[0]?.issue.cluster;
    if (pdfCluster) assert.equal(newIssues[0].issue.cluster, pdfCluster, 'it stays in the PDF cluster');
    assert.equal((await all(t, admin, `/v1/orgs/${orgId}/conversations`)).length, before.conversations.length, 'never duplicated');
  });

  test('PATCH muted changes only that flag; related documentation pages come from the search index', async () => {
    const { data: space } = await admin.api.orgs.createSpace(orgId, { title: 'Handbook' });
    const { data: cr } = await admin.api.spaces.createChangeRequest(space.id, { subject: 'Pages' });
    await admin.api.spaces.updateChangeRequestContent(space.id, cr.id, {
      changes: [
        { operation: 'insert_page', title: 'Configure SAML single sign-on', document: { markdown: 'Set the SAML certificate and entity ID of your identity provider (Okta, Azure AD) for SSO login.\n' } },
        { operation: 'insert_page', title: 'Export to PDF', document: { markdown: 'Export a space as a PDF file with images.\n' } },
        { operation: 'insert_page', title: 'Team calendar', document: { markdown: 'Holidays and office hours.\n' } },
      ] as never,
    });
    await admin.api.spaces.mergeChangeRequest(space.id, cr.id);
    const issues = await all(t, admin, `/v1/orgs/${orgId}/conversations-issues`);
    const sso = issues.find((i) => /SSO|SAML|Okta/.test(i.issue.title))!.issue.cluster;
    const got = await t.request('GET', `/v1/orgs/${orgId}/conversations-clusters/${sso}`, { token: admin.token });
    assert.equal(got.status, 200);
    assert.equal(got.body.pages[0]?.title, 'Configure SAML single sign-on');
    assert.ok(!got.body.pages.some((p: any) => p.title === 'Team calendar'));

    const patched = await t.request('PATCH', `/v1/orgs/${orgId}/conversations-clusters/${sso}`, { token: admin.token, body: { muted: true } });
    assert.equal(patched.status, 200);
    assert.equal(patched.body.muted, true);
    assert.deepEqual({ ...patched.body, muted: false }, got.body);
    assert.equal((await t.request('GET', `/v1/orgs/${orgId}/conversations-clusters/${sso}`, { token: admin.token })).body.muted, true);
    assert.equal((await t.request('PATCH', `/v1/orgs/${orgId}/conversations-clusters/${sso}`, { token: admin.token, body: { muted: true, label: 'x' } })).status, 400);
    assert.equal((await t.request('PATCH', `/v1/orgs/${orgId}/conversations-clusters/${sso}`, { token: admin.token, body: { muted: 'yes' } })).status, 400);
    assert.equal((await t.request('PATCH', `/v1/orgs/${orgId}/conversations-clusters/nope`, { token: admin.token, body: { muted: true } })).status, 404);
  });

  test('change requests tied to a cluster: set at creation or update, listed by the filter', async () => {
    const clusters = await all(t, admin, `/v1/orgs/${orgId}/conversations-clusters`);
    const [first, second] = clusters;
    const { data: space } = await admin.api.orgs.createSpace(orgId, { title: 'Fixes' });
    const { data: tied } = await admin.api.spaces.createChangeRequest(space.id, { subject: 'Fix it', conversationsIssuesCluster: first.id } as never);
    assert.equal((tied as any).conversationsIssuesCluster, first.id);
    const { data: other } = await admin.api.spaces.createChangeRequest(space.id, { subject: 'Unrelated' });
    assert.equal((other as any).conversationsIssuesCluster, undefined);
    const { data: listed } = await admin.api.spaces.listChangeRequestsForSpace(space.id, { conversationsIssuesCluster: first.id } as never);
    assert.deepEqual(listed.items.map((c) => c.id), [tied.id]);
    const { data: orgListed } = await admin.api.orgs.listChangeRequestsForOrganization(orgId, { conversationsIssuesCluster: first.id } as never);
    assert.deepEqual(orgListed.items.map((c) => c.id), [tied.id]);

    const { data: moved } = await admin.api.spaces.updateChangeRequestById(space.id, other.id, { conversationsIssuesCluster: second.id } as never);
    assert.equal((moved as any).conversationsIssuesCluster, second.id);
    assert.deepEqual((await admin.api.spaces.listChangeRequestsForSpace(space.id, { conversationsIssuesCluster: second.id } as never)).data.items.map((c) => c.id), [other.id]);
    const { data: untied } = await admin.api.spaces.updateChangeRequestById(space.id, other.id, { conversationsIssuesCluster: null } as never);
    assert.equal((untied as any).conversationsIssuesCluster, undefined);

    const bad = await t.request('POST', `/v1/spaces/${space.id}/change-requests`, { token: admin.token, body: { subject: 'x', conversationsIssuesCluster: 'no-such-cluster' } });
    assert.equal(bad.status, 400);
    assert.match(bad.body.error.message, /conversationsIssuesCluster/);
    // A cluster of another organization is not one of this organization.
    const outsider = await t.user('Olga');
    const otherOrg = (await outsider.api.orgs.createOrganization({ title: 'Elsewhere' })).data.id;
    assert.equal((await ingest(t, outsider, otherOrg, ingestBody(conversations.find((c) => c.label === 'api_token')!))).status, 204);
    await settled(t);
    const foreign = (await all(t, outsider, `/v1/orgs/${otherOrg}/conversations-clusters`))[0].id;
    assert.equal((await t.request('PATCH', `/v1/spaces/${space.id}/change-requests/${tied.id}`, { token: admin.token, body: { conversationsIssuesCluster: foreign } })).status, 400);
    assert.equal((await t.request('GET', `/v1/orgs/${orgId}/conversations-clusters/${foreign}`, { token: admin.token })).status, 404);
  });

  test('validation: clear 400s for empty parts, oversized bodies, bad dates, duplicates; permissions', async () => {
    const base = { id: 'v-1', subject: 'Hello', parts: [{ type: 'message', role: 'user', body: 'The export fails.' }] };
    const cases: [unknown, RegExp][] = [
      [{ ...base, parts: [] }, /parts: a conversation needs at least one message/],
      [{ ...base, parts: [{ type: 'message', role: 'user', body: '   ' }] }, /parts\.0\.body: a message must not be empty/],
      [{ ...base, parts: [{ type: 'message', role: 'user', body: 'x'.repeat(20_001) }] }, /parts\.0\.body: must NOT have more than 20000 characters/],
      [{ ...base, parts: Array.from({ length: 6 }, () => ({ type: 'message', role: 'user', body: 'y'.repeat(19_000) })) }, /add up to 114000 characters; a conversation may have at most 100000/],
      [{ ...base, metadata: { createdAt: 'yesterday' } }, /metadata\.createdAt: must match format "date-time"/],
      [{ ...base, metadata: { createdAt: '2024-02-30T10:00:00Z' } }, /metadata\.createdAt/],
      [{ ...base, metadata: { createdAt: '2999-01-01T00:00:00Z' } }, /metadata\.createdAt: "2999-01-01T00:00:00Z" is in the future/],
      [{ ...base, parts: [{ type: 'message', role: 'robot', body: 'x' }] }, /role: must be one of "user", "assistant", "agent"/],
      [{ ...base, id: '' }, /id: must NOT have fewer than 1 characters/],
      [{ ...base, extra: 1 }, /unknown field "extra"/],
      [[base, { ...base }], /1\.id: "v-1" appears more than once in the batch/],
      [[base, { ...base, id: 'v-2', parts: [] }], /1\.parts: a conversation needs at least one message/],
      [[], /must NOT have fewer than 1 items/],
      ['text', /must be object/],
    ];
    for (const [body, message] of cases) {
      const res = await ingest(t, admin, orgId, body);
      assert.equal(res.status, 400, `${JSON.stringify(body).slice(0, 100)} → ${res.status}`);
      assert.match(res.body.error.message, message);
    }
    assert.equal((await t.request('GET', `/v1/orgs/${orgId}/conversations/v-1`, { token: admin.token })).status, 404, 'nothing stored');

    const editor = await t.user('Ed');
    await addMember(t, orgId, editor, 'edit');
    const guest = await t.user('Gus');
    await addMember(t, orgId, guest, null);
    const stranger = await t.user('Stan');
    assert.equal((await ingest(t, editor, orgId, base)).status, 403);
    assert.equal((await t.request('GET', `/v1/orgs/${orgId}/conversations-clusters`, { token: editor.token })).status, 200);
    const cluster = (await all(t, admin, `/v1/orgs/${orgId}/conversations-clusters`))[0].id;
    assert.equal((await t.request('PATCH', `/v1/orgs/${orgId}/conversations-clusters/${cluster}`, { token: editor.token, body: { muted: false } })).status, 403);
    for (const path of ['conversations', 'conversations-issues', 'conversations-clusters', `conversations-clusters/${cluster}`]) {
      assert.equal((await t.request('GET', `/v1/orgs/${orgId}/${path}`, { token: guest.token })).status, 403, path);
      assert.equal((await t.request('GET', `/v1/orgs/${orgId}/${path}`, { token: stranger.token })).status, 404, path);
    }
    assert.equal((await ingest(t, stranger, orgId, base)).status, 404);
  });

  test('the operations are published in our OpenAPI document', async () => {
    const doc = (await t.request('GET', '/v1/openapi.json')).body;
    const ops = Object.values(doc.paths as Record<string, Record<string, { operationId?: string }>>).flatMap((p) => Object.values(p).map((o) => o.operationId));
    for (const id of ['listConversationsClusters', 'getConversationsCluster', 'updateConversationsCluster', 'listConversations', 'ingestConversations', 'listConversationsIssues', 'getConversationsIssue', 'getConversation']) {
      assert.ok(ops.includes(id), id);
    }
  });
});

describe('OpenAI-compatible engine', () => {
  let fake: Server;
  let fakeUrl: string;
  const calls: { path: string; body: any; auth: string | undefined }[] = [];
  // Three fixed directions: texts about login, about billing, anything else.
  const embed = (text: string) => (/login|sign|sso/i.test(text) ? [1, 0.05, 0] : /charg|invoice|bill/i.test(text) ? [0, 1, 0.05] : [0.05, 0, 1]);

  before(async () => {
    fake = createServer((req, res) => {
      let raw = '';
      req.on('data', (c) => (raw += c));
      req.on('end', () => {
        const body = JSON.parse(raw);
        calls.push({ path: req.url!, body, auth: req.headers.authorization });
        res.setHeader('content-type', 'application/json');
        if (req.url === '/v1/embeddings') {
          res.end(JSON.stringify({ object: 'list', data: body.input.map((text: string, index: number) => ({ object: 'embedding', index, embedding: embed(text) })) }));
          return;
        }
        if (req.url === '/v1/chat/completions') {
          const system: string = body.messages[0].content;
          const user: string = body.messages[1].content;
          let content: unknown;
          if (system.includes('name groups')) content = { label: `Model label: ${/login|sso/i.test(user) ? 'Login' : 'Billing'}`, summary: 'Customers struggle here.', icon: 'lock' };
          else if (/thank you|great job/i.test(user)) content = { issues: [] };
          else {
            const quote = user.split('\n\n').find((l) => l.startsWith('user: '))!.slice(6);
            content = { issues: [{ title: `Model: ${quote.slice(0, 40)}`, evidence: [quote], impact: /blocked/.test(quote) ? 'high' : 'medium' }] };
          }
          // Wrapped in a code fence, as some models answer.
          res.end(JSON.stringify({ choices: [{ message: { role: 'assistant', content: '```json\n' + JSON.stringify(content) + '\n```' } }] }));
          return;
        }
        res.statusCode = 404;
        res.end('{}');
      });
    });
    await new Promise<void>((r) => fake.listen(0, '127.0.0.1', r));
    const address = fake.address() as { port: number };
    fakeUrl = `http://127.0.0.1:${address.port}/v1`;
  });
  after(async () => {
    await new Promise((r) => fake?.close(r));
  });

  test('extraction, embeddings, labels and summaries come from the engine, end to end', async () => {
    const server = await startTestServer({
      aiEngineUrl: fakeUrl,
      aiEngineKey: 'sk-test',
      aiModel: 'fake-chat',
      aiEmbeddingModel: 'fake-embed',
      insightsReclusterDelayMs: 0,
      fetchAllowPrivate: true,
    });
    try {
      const ann = await server.user('Ann');
      const org = (await ann.api.orgs.createOrganization({ title: 'Model Inc' })).data.id;
      const msg = (id: string, body: string) => ({ id, subject: 'Help', parts: [{ type: 'message', role: 'user', body }] });
      const res = await ingest(server, ann, org, [
        msg('m1', 'I cannot log in with SSO.'),
        msg('m2', 'We are blocked: the login page loops.'),
        msg('m3', 'You charged our card twice.'),
        msg('m4', 'The invoice amount is wrong.'),
        msg('m5', 'Thank you, great job!'),
      ]);
      assert.equal(res.status, 204);
      await settled(server);
      const issues = await all(server, ann, `/v1/orgs/${org}/conversations-issues`);
      assert.equal(issues.length, 4);
      assert.ok(issues.every((i) => i.issue.title.startsWith('Model: ')));
      assert.equal(issues.find((i) => i.issue.conversation === 'm2').issue.impact, 'high');
      const clusterOf = (id: string) => issues.find((i) => i.issue.conversation === id).issue.cluster;
      assert.equal(clusterOf('m1'), clusterOf('m2'));
      assert.equal(clusterOf('m3'), clusterOf('m4'));
      assert.notEqual(clusterOf('m1'), clusterOf('m3'));
      const clusters = await all(server, ann, `/v1/orgs/${org}/conversations-clusters`);
      assert.deepEqual(clusters.map((c) => c.label).sort(), ['Model label: Billing', 'Model label: Login']);
      assert.ok(clusters.every((c) => c.icon === 'lock'));
      assert.ok(clusters.every((c) => JSON.stringify(c.summary).includes('Customers struggle here.')));
      assert.ok(calls.some((c) => c.path === '/v1/embeddings' && c.body.model === 'fake-embed'));
      assert.ok(calls.some((c) => c.path === '/v1/chat/completions' && c.body.model === 'fake-chat'));
      assert.ok(calls.every((c) => c.auth === 'Bearer sk-test'));
      const vectorKinds = await server.server.services.db.selectFrom('conversation_issues').select('vector_kind').distinct().execute();
      assert.deepEqual(vectorKinds.map((v) => v.vector_kind), ['embedding:fake-embed']);
    } finally {
      await server.close();
    }
  });

  test('an engine that keeps failing makes the job retry; its last attempt falls back on the built-in engine', async () => {
    // A port nobody listens on: every call fails.
    const closed = createServer();
    await new Promise<void>((r) => closed.listen(0, '127.0.0.1', r));
    const port = (closed.address() as { port: number }).port;
    await new Promise((r) => closed.close(r));
    const server = await startTestServer({ aiEngineUrl: `http://127.0.0.1:${port}/v1`, aiModel: 'down', fetchAllowPrivate: true, insightsReclusterDelayMs: 0 });
    try {
      const ann = await server.user('Ann');
      const org = (await ann.api.orgs.createOrganization({ title: 'Down Inc' })).data.id;
      const body = { id: 'd1', subject: 'Export', parts: [{ type: 'message', role: 'user', body: 'The PDF export fails with an error.' }] };
      assert.equal((await ingest(server, ann, org, body)).status, 204);
      const db = server.server.services.db;
      let job;
      for (let i = 0; i < 200 && !job?.last_error; i++) {
        job = await db.selectFrom('jobs').selectAll().where('type', '=', 'insights.process').executeTakeFirst();
        await new Promise((r) => setTimeout(r, 25));
      }
      assert.equal(job!.status, 'queued', 'retried later');
      assert.match(job!.last_error!, /chat\/completions|ECONNREFUSED|connect/);
      assert.equal((await all(server, ann, `/v1/orgs/${org}/conversations-issues`)).length, 0);
      // The last attempt, as the worker would run it.
      const { processConversationsJob } = await import('../src/insights/process.ts');
      await processConversationsJob(server.server.services)(job!.payload as never, { db, attempt: job!.max_attempts, jobId: job!.id, lastAttempt: true });
      const issues = await all(server, ann, `/v1/orgs/${org}/conversations-issues`);
      assert.equal(issues.length, 1);
      assert.equal(issues[0].issue.title, 'The PDF export fails with an error.');
      assert.ok((await server.request('GET', `/v1/orgs/${org}/conversations/d1`, { token: ann.token })).body.conversation.processedAt);
    } finally {
      await server.close();
    }
  });

  test('outbound calls follow the address rules: a loopback engine needs FETCH_ALLOW_PRIVATE', async () => {
    const config = { ...loadConfig({}), aiEngineUrl: fakeUrl, aiModel: 'fake-chat' };
    await assert.rejects(postJson({ ...config, fetchAllowPrivate: false }, '/embeddings', { input: ['x'] }), (err: Error) => err instanceof EngineError && /FETCH_ALLOW_PRIVATE/.test(err.message));
    const ok = await postJson({ ...config, fetchAllowPrivate: true }, '/embeddings', { model: 'm', input: ['login'] });
    assert.deepEqual(ok.data[0].embedding, [1, 0.05, 0]);
    assert.throws(() => loadConfig({ INSIGHTS_MODEL: 'x' }), /INSIGHTS_ENGINE_URL/);
    assert.throws(() => loadConfig({ INSIGHTS_ENGINE_URL: 'ftp://x' }), /INSIGHTS_ENGINE_URL/);
  });
});
