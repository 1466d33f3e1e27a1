import { createHash } from 'node:crypto';
import type { Ctx } from '../platform/context.ts';
import { searchConfigFor } from '../search/language.ts';
import { searchConfigsOf } from '../search/store.ts';
import type { ConversationRow, IssuesClusterRow } from '../platform/db/schema.ts';
import { BadRequestError, NotFoundError } from '../platform/errors.ts';
import { assertCanIngestConversations, assertCanReadConversations } from '../platform/policy.ts';
import { requireMembership } from '../access/organizations.ts';
import { visibleSpaces } from '../spaces/service.ts';
import { PROCESS_CONVERSATIONS_JOB } from './process.ts';
import * as store from './store.ts';
import type { ClusterFigures } from './presenter.ts';
import { MAX_CONVERSATION_CHARS, type ConversationInputT, type ListClustersInput, type ListConversationsInput, type ListIssuesInput } from './schemas.ts';

const WEEK_MS = 7 * 24 * 3600 * 1000;
export const PULSE_WEEKS = 13;
/** Related documentation pages listed per cluster. */
const RELATED_PAGES = 3;

async function readable(ctx: Ctx, organizationId: string) {
  const membership = await requireMembership(ctx, organizationId);
  assertCanReadConversations(membership);
  return membership;
}

/** What a conversation is, for idempotence: the same content hashes the same whatever the key order. */
function contentHash(c: { subject: string; source: string; parts: unknown; metadata: { url?: string; attributes: Record<string, string>; createdAt: string } }): string {
  const attributes = Object.fromEntries(Object.entries(c.metadata.attributes).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
  return createHash('sha256')
    .update(JSON.stringify([c.subject, c.source, c.parts, c.metadata.url ?? null, attributes, c.metadata.createdAt]))
    .digest('hex');
}

function normalize(input: ConversationInputT, at: string, now: Date) {
  let chars = 0;
  input.parts.forEach((part, i) => {
    if (!part.body.trim()) throw new BadRequestError(`${at}parts.${i}.body: a message must not be empty`);
    chars += part.body.length;
  });
  if (input.parts.length === 0) throw new BadRequestError(`${at}parts: a conversation needs at least one message`);
  if (chars > MAX_CONVERSATION_CHARS) {
    throw new BadRequestError(`${at}parts: the messages add up to ${chars} characters; a conversation may have at most ${MAX_CONVERSATION_CHARS}`);
  }
  let createdAt = now;
  if (input.metadata?.createdAt !== undefined) {
    createdAt = new Date(input.metadata.createdAt);
    if (Number.isNaN(createdAt.getTime()) || createdAt.getUTCFullYear() < 1970) {
      throw new BadRequestError(`${at}metadata.createdAt: "${input.metadata.createdAt}" is not a valid date-time (such as 2024-05-01T12:00:00Z)`);
    }
    if (createdAt.getTime() > now.getTime() + 24 * 3600 * 1000) {
      throw new BadRequestError(`${at}metadata.createdAt: "${input.metadata.createdAt}" is in the future`);
    }
  }
  const parts = input.parts.map((p) => ({ type: 'message' as const, role: p.role, body: p.body }));
  const metadata = { ...(input.metadata?.url ? { url: input.metadata.url } : {}), attributes: input.metadata?.attributes ?? {}, createdAt: createdAt.toISOString() };
  const subject = (input.subject ?? '').trim();
  const source = input.source ?? 'api';
  return { id: input.id, subject, source, parts, metadata, createdAt, hash: contentHash({ subject, source, parts, metadata }) };
}

/**
 * Ingests one conversation or a batch. Idempotent by id: a conversation sent again with the same
 * content changes nothing; with other content it is updated and processed again. Processing
 * (extraction and clustering) is a background job, queued in the same transaction.
 */
export async function ingestConversations(ctx: Ctx, organizationId: string, body: ConversationInputT | ConversationInputT[]) {
  const membership = await requireMembership(ctx, organizationId);
  assertCanIngestConversations(membership, 'ingest conversations');
  const batch = Array.isArray(body);
  const inputs = batch ? body : [body];
  const now = new Date();
  const seen = new Set<string>();
  const items = inputs.map((input, i) => {
    const at = batch ? `${i}.` : '';
    if (seen.has(input.id)) throw new BadRequestError(`${at}id: "${input.id}" appears more than once in the batch`);
    seen.add(input.id);
    return normalize(input, at, now);
  });
  return ctx.db.transaction().execute(async (trx) => {
    const existing = await store.lockConversationHashes(
      trx,
      organizationId,
      items.map((i) => i.id),
    );
    const changed = items.filter((i) => existing.get(i.id) !== i.hash);
    if (changed.length === 0) return { received: items.length, changed: 0 };
    await store.upsertConversations(trx, organizationId, changed, now);
    await ctx.jobs.enqueue(PROCESS_CONVERSATIONS_JOB, { organizationId, ids: changed.map((c) => c.id) }, { db: trx });
    return { received: items.length, changed: changed.length };
  });
}

export async function listConversations(ctx: Ctx, organizationId: string, query: ListConversationsInput) {
  await readable(ctx, organizationId);
  return store.listConversations(ctx.db, organizationId, query.source, query);
}

export async function getConversation(ctx: Ctx, organizationId: string, conversationId: string): Promise<ConversationRow> {
  await readable(ctx, organizationId);
  const row = await store.findConversation(ctx.db, organizationId, conversationId);
  if (!row) throw new NotFoundError('Conversation');
  return row;
}

export async function listIssues(ctx: Ctx, organizationId: string, query: ListIssuesInput) {
  await readable(ctx, organizationId);
  const page = await store.listIssues(ctx.db, organizationId, { cluster: query.cluster, conversation: query.conversation }, query);
  const conversations = await store.conversationsById(ctx.db, organizationId, page.items.map((i) => i.conversation_id));
  return { ...page, items: page.items.map((issue) => ({ issue, conversation: conversations.get(issue.conversation_id)! })) };
}

export async function getIssue(ctx: Ctx, organizationId: string, issueId: string) {
  await readable(ctx, organizationId);
  const issue = await store.findIssue(ctx.db, organizationId, issueId);
  if (!issue) throw new NotFoundError('Issue');
  const conversation = (await store.conversationsById(ctx.db, organizationId, [issue.conversation_id])).get(issue.conversation_id)!;
  return { issue, conversation };
}

export async function listClusters(ctx: Ctx, organizationId: string, query: ListClustersInput) {
  const membership = await readable(ctx, organizationId);
  const page = await store.listClusters(ctx.db, organizationId, query.sort ?? 'updatedAt', query.order ?? 'desc', query);
  return { ...page, figures: await clusterFigures(ctx, organizationId, membership.role, page.items) };
}

async function loadCluster(ctx: Ctx, organizationId: string, clusterId: string): Promise<IssuesClusterRow> {
  const row = await store.findCluster(ctx.db, organizationId, clusterId);
  if (!row) throw new NotFoundError('Issues cluster');
  return row;
}

export async function getCluster(ctx: Ctx, organizationId: string, clusterId: string) {
  const membership = await readable(ctx, organizationId);
  const row = await loadCluster(ctx, organizationId, clusterId);
  return { row, figures: (await clusterFigures(ctx, organizationId, membership.role, [row])).get(row.id)! };
}

/** Mutes or unmutes a cluster: only that flag changes (not even updatedAt). */
export async function updateCluster(ctx: Ctx, organizationId: string, clusterId: string, input: { muted: boolean }) {
  const membership = await requireMembership(ctx, organizationId);
  assertCanReadConversations(membership);
  await loadCluster(ctx, organizationId, clusterId);
  assertCanIngestConversations(membership, 'mute or unmute issues clusters');
  const row = await store.setClusterMuted(ctx.db, organizationId, clusterId, input.muted);
  return { row, figures: (await clusterFigures(ctx, organizationId, membership.role, [row])).get(row.id)! };
}

/** Whether a cluster exists in the organization (a change request may be tied only to such a cluster). */
export const clusterExists = store.clusterExists;

/**
 * Weekly pulse, sources, stats and related pages of a page of clusters: three grouped queries for
 * the whole page, and one search per cluster.
 */
async function clusterFigures(ctx: Ctx, organizationId: string, role: Parameters<typeof visibleSpaces>[3], rows: IssuesClusterRow[]): Promise<Map<string, ClusterFigures>> {
  const figures = new Map<string, ClusterFigures>(
    rows.map((r) => [r.id, { weeklyPulse: new Array(PULSE_WEEKS).fill(0), sources: {}, stats: { issues: 0, conversations: 0 }, pages: [] }]),
  );
  if (rows.length === 0) return figures;
  const ids = rows.map((r) => r.id);
  const now = new Date();
  const since = new Date(now.getTime() - PULSE_WEEKS * WEEK_MS);
  const [pulse, sources, stats] = await Promise.all([
    store.weeklyIssueCounts(ctx.db, ids, now, since, WEEK_MS),
    store.sourceCounts(ctx.db, ids),
    store.issueAndConversationCounts(ctx.db, ids),
  ]);
  for (const p of pulse) {
    const age = Number(p.age);
    if (age >= 0 && age < PULSE_WEEKS) figures.get(p.cluster_id!)!.weeklyPulse[PULSE_WEEKS - 1 - age] = Number(p.n);
  }
  for (const s of sources) figures.get(s.cluster_id!)!.sources[s.source] = Number(s.n);
  for (const s of stats) figures.get(s.cluster_id!)!.stats = { issues: Number(s.issues), conversations: Number(s.conversations) };
  const spaces = visibleSpaces(ctx.db, organizationId, ctx.user.id, role).clearSelect().select('spaces.id');
  // The pages are found in the languages of the spaces, as search finds them.
  const configs = [...new Set((await searchConfigsOf(ctx.db, spaces)).flatMap((s) => [searchConfigFor(s.language), ...(s.indexed ? [s.indexed] : [])]))].sort();
  for (const row of rows) {
    const keywords = (row.keywords as string[]).filter((k) => /^[\p{L}\p{N}][\p{L}\p{N}' -]*$/u.test(k)).slice(0, 8);
    if (keywords.length === 0) continue;
    const found = await store.pagesMatching(ctx.db, spaces, keywords, RELATED_PAGES, configs);
    figures.get(row.id)!.pages = found.map((p) => ({
      space: p.space_id,
      page: p.page_id,
      title: p.title,
      path: p.path,
      urls: { app: ctx.urls.pageApp({ id: p.space_id }, p.path) },
    }));
  }
  return figures;
}
