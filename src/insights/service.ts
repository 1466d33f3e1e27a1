import { createHash } from 'node:crypto';
import { sql } from 'kysely';
import type { Ctx } from '../platform/context.ts';
import { json, type Db } from '../platform/db/database.ts';
import type { ConversationRow, IssuesClusterRow } from '../platform/db/schema.ts';
import { BadRequestError, NotFoundError } from '../platform/errors.ts';
import { paginate, type KeysetSpec } from '../platform/paging.ts';
import { assertCanIngestConversations, assertCanReadConversations } from '../platform/policy.ts';
import { requireMembership } from '../access/organizations.ts';
import { visibleSpaces } from '../spaces/service.ts';
import { PROCESS_CONVERSATIONS_JOB } from './process.ts';
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
    const existing = new Map(
      (
        await trx
          .selectFrom('conversations')
          .select(['id', 'content_hash'])
          .where('organization_id', '=', organizationId)
          .where('id', 'in', items.map((i) => i.id))
          .forUpdate()
          .execute()
      ).map((r) => [r.id, r.content_hash]),
    );
    const changed = items.filter((i) => existing.get(i.id) !== i.hash);
    if (changed.length === 0) return { received: items.length, changed: 0 };
    await trx
      .insertInto('conversations')
      .values(
        changed.map((c) => ({
          organization_id: organizationId,
          id: c.id,
          subject: c.subject,
          source: c.source,
          parts: json(c.parts),
          metadata: json(c.metadata),
          content_hash: c.hash,
          created_at: c.createdAt,
          ingested_at: now,
          processed_at: null,
          impact: null,
        })),
      )
      .onConflict((oc) =>
        oc.columns(['organization_id', 'id']).doUpdateSet({
          subject: sql`excluded.subject`,
          source: sql`excluded.source`,
          parts: sql`excluded.parts`,
          metadata: sql`excluded.metadata`,
          content_hash: sql`excluded.content_hash`,
          created_at: sql`excluded.created_at`,
          ingested_at: sql`excluded.ingested_at`,
          processed_at: null,
          impact: null,
        }),
      )
      .execute();
    await ctx.jobs.enqueue(PROCESS_CONVERSATIONS_JOB, { organizationId, ids: changed.map((c) => c.id) }, { db: trx });
    return { received: items.length, changed: changed.length };
  });
}

export async function listConversations(ctx: Ctx, organizationId: string, query: ListConversationsInput) {
  await readable(ctx, organizationId);
  const base = ctx.db
    .selectFrom('conversations')
    .selectAll()
    .where('organization_id', '=', organizationId)
    .$if(query.source !== undefined, (q) => q.where('source', '=', query.source!));
  return paginate(base, { kind: `conversations:${query.source ?? ''}`, sortExpr: null, seqExpr: sql.ref('conversations.seq'), direction: 'desc' }, query);
}

export async function getConversation(ctx: Ctx, organizationId: string, conversationId: string): Promise<ConversationRow> {
  await readable(ctx, organizationId);
  const row = await ctx.db.selectFrom('conversations').selectAll().where('organization_id', '=', organizationId).where('id', '=', conversationId).executeTakeFirst();
  if (!row) throw new NotFoundError('Conversation');
  return row;
}

async function conversationsById(db: Db, organizationId: string, ids: string[]) {
  const unique = [...new Set(ids)];
  const rows = unique.length ? await db.selectFrom('conversations').selectAll().where('organization_id', '=', organizationId).where('id', 'in', unique).execute() : [];
  return new Map(rows.map((r) => [r.id, r]));
}

export async function listIssues(ctx: Ctx, organizationId: string, query: ListIssuesInput) {
  await readable(ctx, organizationId);
  const base = ctx.db
    .selectFrom('conversation_issues')
    .selectAll()
    .where('organization_id', '=', organizationId)
    .$if(query.cluster !== undefined, (q) => q.where('cluster_id', '=', query.cluster!))
    .$if(query.conversation !== undefined, (q) => q.where('conversation_id', '=', query.conversation!));
  const page = await paginate(base, { kind: 'conversation-issues', sortExpr: null, seqExpr: sql.ref('conversation_issues.seq'), direction: 'desc' }, query);
  const conversations = await conversationsById(ctx.db, organizationId, page.items.map((i) => i.conversation_id));
  return { ...page, items: page.items.map((issue) => ({ issue, conversation: conversations.get(issue.conversation_id)! })) };
}

export async function getIssue(ctx: Ctx, organizationId: string, issueId: string) {
  await readable(ctx, organizationId);
  const issue = await ctx.db.selectFrom('conversation_issues').selectAll().where('organization_id', '=', organizationId).where('id', '=', issueId).executeTakeFirst();
  if (!issue) throw new NotFoundError('Issue');
  const conversation = (await conversationsById(ctx.db, organizationId, [issue.conversation_id])).get(issue.conversation_id)!;
  return { issue, conversation };
}

const CLUSTER_SORTS = {
  updatedAt: { column: 'updated_at', type: 'timestamp' },
  createdAt: { column: 'created_at', type: 'timestamp' },
  issues: { column: 'issues', type: 'number' },
} as const;

export async function listClusters(ctx: Ctx, organizationId: string, query: ListClustersInput) {
  const membership = await readable(ctx, organizationId);
  const sort = CLUSTER_SORTS[query.sort ?? 'updatedAt'];
  const direction = query.order ?? 'desc';
  const spec: KeysetSpec = {
    kind: `clusters:${query.sort ?? 'updatedAt'}:${direction}`,
    sortExpr: sql.ref(`issues_clusters.${sort.column}`),
    sortType: sort.type,
    seqExpr: sql.ref('issues_clusters.seq'),
    direction,
  };
  const base = ctx.db.selectFrom('issues_clusters').selectAll().where('organization_id', '=', organizationId);
  const page = await paginate(base, spec, query, (row) => (sort.type === 'timestamp' ? (row[sort.column] as Date).toISOString() : (row[sort.column] as number)));
  return { ...page, figures: await clusterFigures(ctx, organizationId, membership.role, page.items) };
}

async function loadCluster(ctx: Ctx, organizationId: string, clusterId: string): Promise<IssuesClusterRow> {
  const row = await ctx.db.selectFrom('issues_clusters').selectAll().where('organization_id', '=', organizationId).where('id', '=', clusterId).executeTakeFirst();
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
  const row = await ctx.db
    .updateTable('issues_clusters')
    .set({ muted: input.muted })
    .where('organization_id', '=', organizationId)
    .where('id', '=', clusterId)
    .returningAll()
    .executeTakeFirstOrThrow();
  return { row, figures: (await clusterFigures(ctx, organizationId, membership.role, [row])).get(row.id)! };
}

/** Whether a cluster exists in the organization (a change request may be tied only to such a cluster). */
export async function clusterExists(db: Db, organizationId: string, clusterId: string): Promise<boolean> {
  return !!(await db.selectFrom('issues_clusters').select('id').where('organization_id', '=', organizationId).where('id', '=', clusterId).executeTakeFirst());
}

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
    ctx.db
      .selectFrom('conversation_issues')
      .select(['cluster_id', sql<number>`floor(extract(epoch from (${now}::timestamptz - created_at)) * 1000 / ${WEEK_MS})::int`.as('age'), sql<number>`count(*)::int`.as('n')])
      .where('cluster_id', 'in', ids)
      .where('created_at', '>', since)
      .where('created_at', '<=', now)
      .groupBy(['cluster_id', 'age'])
      .execute(),
    ctx.db
      .selectFrom('conversation_issues')
      .select(['cluster_id', 'source', sql<number>`count(*)::int`.as('n')])
      .where('cluster_id', 'in', ids)
      .groupBy(['cluster_id', 'source'])
      .execute(),
    ctx.db
      .selectFrom('conversation_issues')
      .select(['cluster_id', sql<number>`count(*)::int`.as('issues'), sql<number>`count(DISTINCT conversation_id)::int`.as('conversations')])
      .where('cluster_id', 'in', ids)
      .groupBy('cluster_id')
      .execute(),
  ]);
  for (const p of pulse) {
    const age = Number(p.age);
    if (age >= 0 && age < PULSE_WEEKS) figures.get(p.cluster_id!)!.weeklyPulse[PULSE_WEEKS - 1 - age] = Number(p.n);
  }
  for (const s of sources) figures.get(s.cluster_id!)!.sources[s.source] = Number(s.n);
  for (const s of stats) figures.get(s.cluster_id!)!.stats = { issues: Number(s.issues), conversations: Number(s.conversations) };
  const spaces = visibleSpaces(ctx.db, organizationId, ctx.user.id, role).clearSelect().select('spaces.id');
  for (const row of rows) {
    const keywords = (row.keywords as string[]).filter((k) => /^[\p{L}\p{N}][\p{L}\p{N}' -]*$/u.test(k)).slice(0, 8);
    if (keywords.length === 0) continue;
    const found = await sql<{ space_id: string; page_id: string; title: string; path: string }>`
      WITH q AS (SELECT websearch_to_tsquery('english', ${keywords.join(' or ')}) AS query),
      candidates AS (
        SELECT sp.space_id, sp.page_id, sp.title, sp.path, sp.tsv FROM search_pages sp, q
        WHERE sp.space_id IN (${spaces}) AND sp.tsv @@ q.query LIMIT 1000
      )
      SELECT c.space_id, c.page_id, c.title, c.path FROM candidates c, q
      ORDER BY ts_rank(c.tsv, q.query) DESC, c.title, c.page_id LIMIT ${RELATED_PAGES}`.execute(ctx.db);
    figures.get(row.id)!.pages = found.rows.map((p) => ({
      space: p.space_id,
      page: p.page_id,
      title: p.title,
      path: p.path,
      urls: { app: ctx.urls.app(`/s/${p.space_id}/${p.path}`) },
    }));
  }
  return figures;
}
