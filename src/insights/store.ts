import { sql, type Expression, type Insertable, type Updateable } from 'kysely';
import { json, type Db } from '../platform/db/database.ts';
import type { ConversationIssuesTable, ConversationRow, Impact, IssuesClusterRow, IssuesClustersTable } from '../platform/db/schema.ts';
import { paginate, type KeysetSpec, type PageRequest } from '../platform/paging.ts';

/**
 * The SQL of conversation insights: conversations, the issues extracted from them, their clusters
 * and the organization's term statistics. Every query names the organization; issues and clusters
 * found by id are looked up within it. Counts over clusters take the ids of clusters read within
 * the organization first, and keep to the cluster index (conversation_issues_cluster).
 */

/** Serializes the insight work of one organization until the transaction ends (processing and recomputation). */
export async function lockOrganizationInsights(db: Db, organizationId: string): Promise<void> {
  await sql`SELECT pg_advisory_xact_lock(hashtext(${`insights:${organizationId}`}))`.execute(db);
}

// ---------------------------------------------------------------- conversations

/** Content hashes of the given conversations, locked for the transaction; with `unprocessed`, of those not processed yet. */
export async function lockConversationHashes(db: Db, organizationId: string, ids: string[], opts: { unprocessed?: boolean } = {}): Promise<Map<string, string>> {
  let query = db.selectFrom('conversations').select(['id', 'content_hash']).where('organization_id', '=', organizationId).where('id', 'in', ids);
  if (opts.unprocessed) query = query.where('processed_at', 'is', null);
  const rows = await query.forUpdate().execute();
  return new Map(rows.map((r) => [r.id, r.content_hash]));
}

export interface ConversationWrite {
  id: string;
  subject: string;
  source: string;
  parts: unknown;
  metadata: unknown;
  hash: string;
  createdAt: Date;
}

/** Writes conversations (new, or changed: they wait to be processed again). */
export async function upsertConversations(db: Db, organizationId: string, conversations: ConversationWrite[], now: Date): Promise<void> {
  await db
    .insertInto('conversations')
    .values(
      conversations.map((c) => ({
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
}

/** Conversations of the given ids still waiting to be processed, with what extraction reads. */
export async function unprocessedConversations(db: Db, organizationId: string, ids: string[]) {
  if (!ids.length) return [];
  return db
    .selectFrom('conversations')
    .select(['id', 'subject', 'source', 'parts', 'content_hash', 'created_at'])
    .where('organization_id', '=', organizationId)
    .where('id', 'in', ids)
    .where('processed_at', 'is', null)
    .execute();
}

export async function markConversationProcessed(db: Db, organizationId: string, conversationId: string, at: Date, impact: Impact | null): Promise<void> {
  await db.updateTable('conversations').set({ processed_at: at, impact }).where('organization_id', '=', organizationId).where('id', '=', conversationId).execute();
}

export async function listConversations(db: Db, organizationId: string, source: string | undefined, page: PageRequest) {
  const base = db
    .selectFrom('conversations')
    .selectAll()
    .where('organization_id', '=', organizationId)
    .$if(source !== undefined, (q) => q.where('source', '=', source!));
  return paginate(base, { kind: `conversations:${source ?? ''}`, sortExpr: null, seqExpr: sql.ref('conversations.seq'), direction: 'desc' }, page);
}

export async function findConversation(db: Db, organizationId: string, conversationId: string): Promise<ConversationRow | undefined> {
  return db.selectFrom('conversations').selectAll().where('organization_id', '=', organizationId).where('id', '=', conversationId).executeTakeFirst();
}

export async function conversationsById(db: Db, organizationId: string, ids: string[]): Promise<Map<string, ConversationRow>> {
  const unique = [...new Set(ids)];
  const rows = unique.length ? await db.selectFrom('conversations').selectAll().where('organization_id', '=', organizationId).where('id', 'in', unique).execute() : [];
  return new Map(rows.map((r) => [r.id, r]));
}

// ---------------------------------------------------------------- issues

export async function listIssues(db: Db, organizationId: string, filters: { cluster?: string | undefined; conversation?: string | undefined }, page: PageRequest) {
  const base = db
    .selectFrom('conversation_issues')
    .selectAll()
    .where('organization_id', '=', organizationId)
    .$if(filters.cluster !== undefined, (q) => q.where('cluster_id', '=', filters.cluster!))
    .$if(filters.conversation !== undefined, (q) => q.where('conversation_id', '=', filters.conversation!));
  return paginate(base, { kind: 'conversation-issues', sortExpr: null, seqExpr: sql.ref('conversation_issues.seq'), direction: 'desc' }, page);
}

export async function findIssue(db: Db, organizationId: string, issueId: string) {
  return db.selectFrom('conversation_issues').selectAll().where('organization_id', '=', organizationId).where('id', '=', issueId).executeTakeFirst();
}

/** The issues of some conversations (processed before: their content changed), with what undoing their contribution needs. */
export async function issuesOfConversations(db: Db, organizationId: string, conversationIds: string[]) {
  return db
    .selectFrom('conversation_issues')
    .select(['id', 'cluster_id', 'terms', 'vector', 'vector_kind'])
    .where('organization_id', '=', organizationId)
    .where('conversation_id', 'in', conversationIds)
    .execute();
}

/** Every issue of the organization, with what a recomputation of the clusters reads. */
export async function allIssues(db: Db, organizationId: string) {
  return db
    .selectFrom('conversation_issues')
    .select(['id', 'cluster_id', 'terms', 'vector', 'vector_kind', 'title', 'conversation_id', 'details'])
    .where('organization_id', '=', organizationId)
    .execute();
}

export async function deleteIssues(db: Db, organizationId: string, issueIds: string[]): Promise<void> {
  await db.deleteFrom('conversation_issues').where('organization_id', '=', organizationId).where('id', 'in', issueIds).execute();
}

export type NewIssue = Omit<Insertable<ConversationIssuesTable>, 'organization_id'>;

/** Inserts issues, 500 a statement. */
export async function insertIssues(db: Db, organizationId: string, issues: NewIssue[]): Promise<void> {
  const rows = issues.map((issue) => ({ ...issue, organization_id: organizationId }));
  for (let i = 0; i < rows.length; i += 500) await db.insertInto('conversation_issues').values(rows.slice(i, i + 500)).execute();
}

/** Moves issues to a cluster, 1,000 a statement. */
export async function moveIssues(db: Db, organizationId: string, issueIds: string[], clusterId: string): Promise<void> {
  for (let i = 0; i < issueIds.length; i += 1000) {
    await db.updateTable('conversation_issues').set({ cluster_id: clusterId }).where('organization_id', '=', organizationId).where('id', 'in', issueIds.slice(i, i + 1000)).execute();
  }
}

/** How many issues of each impact each cluster has. */
export async function impactCounts(db: Db, clusterIds: string[]): Promise<Map<string, Record<Impact, number>>> {
  const counts = await db
    .selectFrom('conversation_issues')
    .select(['cluster_id', 'impact', sql<number>`count(*)::int`.as('n')])
    .where('cluster_id', 'in', clusterIds)
    .groupBy(['cluster_id', 'impact'])
    .execute();
  const byCluster = new Map<string, Record<Impact, number>>();
  for (const c of counts) {
    const entry = byCluster.get(c.cluster_id!) ?? { low: 0, medium: 0, high: 0 };
    entry[c.impact] = Number(c.n);
    byCluster.set(c.cluster_id!, entry);
  }
  return byCluster;
}

// ---------------------------------------------------------------- clusters

export const CLUSTER_SORTS = {
  updatedAt: { column: 'updated_at', type: 'timestamp' },
  createdAt: { column: 'created_at', type: 'timestamp' },
  issues: { column: 'issues', type: 'number' },
} as const;

export async function listClusters(db: Db, organizationId: string, sortBy: keyof typeof CLUSTER_SORTS, direction: 'asc' | 'desc', page: PageRequest) {
  const sort = CLUSTER_SORTS[sortBy];
  const spec: KeysetSpec = {
    kind: `clusters:${sortBy}:${direction}`,
    sortExpr: sql.ref(`issues_clusters.${sort.column}`),
    sortType: sort.type,
    seqExpr: sql.ref('issues_clusters.seq'),
    direction,
  };
  const base = db.selectFrom('issues_clusters').selectAll().where('organization_id', '=', organizationId);
  return paginate(base, spec, page, (row) => (sort.type === 'timestamp' ? (row[sort.column] as Date).toISOString() : (row[sort.column] as number)));
}

export async function findCluster(db: Db, organizationId: string, clusterId: string): Promise<IssuesClusterRow | undefined> {
  return db.selectFrom('issues_clusters').selectAll().where('organization_id', '=', organizationId).where('id', '=', clusterId).executeTakeFirst();
}

export async function clusterExists(db: Db, organizationId: string, clusterId: string): Promise<boolean> {
  return !!(await db.selectFrom('issues_clusters').select('id').where('organization_id', '=', organizationId).where('id', '=', clusterId).executeTakeFirst());
}

export async function setClusterMuted(db: Db, organizationId: string, clusterId: string, muted: boolean): Promise<IssuesClusterRow> {
  return db.updateTable('issues_clusters').set({ muted }).where('organization_id', '=', organizationId).where('id', '=', clusterId).returningAll().executeTakeFirstOrThrow();
}

/** Every cluster of the organization with its centroid, for assigning new issues. */
export async function clusterCentroids(db: Db, organizationId: string) {
  return db.selectFrom('issues_clusters').select(['id', 'centroid', 'issues', 'vector_kind']).where('organization_id', '=', organizationId).execute();
}

/** Every cluster of the organization, for a recomputation. */
export async function clusterSizes(db: Db, organizationId: string) {
  return db.selectFrom('issues_clusters').select(['id', 'label', 'vector_kind', 'issues']).where('organization_id', '=', organizationId).execute();
}

export type NewCluster = Omit<Insertable<IssuesClustersTable>, 'organization_id'>;

export async function insertCluster(db: Db, organizationId: string, cluster: NewCluster): Promise<void> {
  await db
    .insertInto('issues_clusters')
    .values({ ...cluster, organization_id: organizationId })
    .execute();
}

/** Column changes of a cluster, already encoded (JSON columns through `json`). */
export type ClusterChanges = Omit<Updateable<IssuesClustersTable>, 'id' | 'organization_id'>;

export async function updateCluster(db: Db, organizationId: string, clusterId: string, changes: ClusterChanges): Promise<void> {
  await db.updateTable('issues_clusters').set(changes).where('organization_id', '=', organizationId).where('id', '=', clusterId).execute();
}

/** Clusters a change request is tied to (they stay while it does). */
export async function clustersTiedToChangeRequests(db: Db, organizationId: string, clusterIds: string[]): Promise<Set<string | null>> {
  const rows = await db
    .selectFrom('change_requests')
    .select('conversations_issues_cluster')
    .where('organization_id', '=', organizationId)
    .where('conversations_issues_cluster', 'in', clusterIds)
    .execute();
  return new Set(rows.map((r) => r.conversations_issues_cluster));
}

export async function deleteClusters(db: Db, organizationId: string, clusterIds: string[]): Promise<void> {
  await db.deleteFrom('issues_clusters').where('organization_id', '=', organizationId).where('id', 'in', clusterIds).execute();
}

/** Empties clusters that must stay (a change request is tied to them). */
export async function emptyClusters(db: Db, organizationId: string, clusterIds: string[], now: Date): Promise<void> {
  await db.updateTable('issues_clusters').set({ issues: 0, centroid: json({}), updated_at: now }).where('organization_id', '=', organizationId).where('id', 'in', clusterIds).execute();
}

// ---------------------------------------------------------------- figures of clusters

/** Issues per cluster per week of age (0: the last 7 days), for weeks younger than `since`. */
export async function weeklyIssueCounts(db: Db, clusterIds: string[], now: Date, since: Date, weekMs: number) {
  return db
    .selectFrom('conversation_issues')
    .select(['cluster_id', sql<number>`floor(extract(epoch from (${now}::timestamptz - created_at)) * 1000 / ${weekMs})::int`.as('age'), sql<number>`count(*)::int`.as('n')])
    .where('cluster_id', 'in', clusterIds)
    .where('created_at', '>', since)
    .where('created_at', '<=', now)
    .groupBy(['cluster_id', 'age'])
    .execute();
}

export async function sourceCounts(db: Db, clusterIds: string[]) {
  return db
    .selectFrom('conversation_issues')
    .select(['cluster_id', 'source', sql<number>`count(*)::int`.as('n')])
    .where('cluster_id', 'in', clusterIds)
    .groupBy(['cluster_id', 'source'])
    .execute();
}

export async function issueAndConversationCounts(db: Db, clusterIds: string[]) {
  return db
    .selectFrom('conversation_issues')
    .select(['cluster_id', sql<number>`count(*)::int`.as('issues'), sql<number>`count(DISTINCT conversation_id)::int`.as('conversations')])
    .where('cluster_id', 'in', clusterIds)
    .groupBy('cluster_id')
    .execute();
}

/**
 * The pages of the given spaces that best match some keywords (full-text search, in `configs`:
 * the text search configurations of those spaces' languages), at most `limit`.
 */
export async function pagesMatching(db: Db, spaceIds: Expression<unknown>, keywords: string[], limit: number, configs: string[]) {
  if (configs.length === 0) return [];
  const text = keywords.join(' or ');
  const query = sql.join(configs.map((cfg) => sql`websearch_to_tsquery(${cfg}::regconfig, ${text})`), sql` || `);
  const found = await sql<{ space_id: string; page_id: string; title: string; path: string }>`
      WITH q AS (SELECT ${query} AS query),
      candidates AS (
        SELECT sp.space_id, sp.page_id, sp.title, sp.path, sp.tsv FROM search_pages sp, q
        WHERE sp.space_id IN (${spaceIds}) AND sp.tsv @@ q.query LIMIT 1000
      )
      SELECT c.space_id, c.page_id, c.title, c.path FROM candidates c, q
      ORDER BY ts_rank(c.tsv, q.query) DESC, c.title, c.page_id LIMIT ${limit}`.execute(db);
  return found.rows;
}

// ---------------------------------------------------------------- term statistics and jobs

export async function loadTermStats(db: Db, organizationId: string) {
  const state = await db.selectFrom('insight_state').selectAll().where('organization_id', '=', organizationId).executeTakeFirst();
  const terms = await db.selectFrom('insight_terms').select(['term', 'df', 'word']).where('organization_id', '=', organizationId).execute();
  return { state, terms };
}

/** Writes changed document frequencies (1,000 a statement) and the organization's counters. */
export async function saveTermStats(
  db: Db,
  organizationId: string,
  terms: { term: string; word: string; df: number }[],
  state: { documents: number; assignedSince: number },
): Promise<void> {
  const rows = terms.map((t) => ({ organization_id: organizationId, ...t }));
  for (let i = 0; i < rows.length; i += 1000) {
    await db
      .insertInto('insight_terms')
      .values(rows.slice(i, i + 1000))
      .onConflict((oc) => oc.columns(['organization_id', 'term']).doUpdateSet({ df: sql`excluded.df` }))
      .execute();
  }
  await db
    .insertInto('insight_state')
    .values({ organization_id: organizationId, documents: state.documents, assigned_since_recluster: state.assignedSince, reclustered_at: null })
    .onConflict((oc) => oc.column('organization_id').doUpdateSet({ documents: state.documents, assigned_since_recluster: state.assignedSince }))
    .execute();
}

/** Records a recomputation: no issue assigned since. */
export async function markReclustered(db: Db, organizationId: string, documents: number, now: Date): Promise<void> {
  await db
    .insertInto('insight_state')
    .values({ organization_id: organizationId, documents, assigned_since_recluster: 0, reclustered_at: now })
    .onConflict((oc) => oc.column('organization_id').doUpdateSet({ assigned_since_recluster: 0, reclustered_at: now }))
    .execute();
}

/** The queued job of a type for an organization (its payload names it), if one waits. */
export async function queuedJobOf(db: Db, organizationId: string, type: string) {
  return db
    .selectFrom('jobs')
    .select(['id', 'run_at'])
    .where('type', '=', type)
    .where('status', '=', 'queued')
    .where(sql<boolean>`payload->>'organizationId' = ${organizationId}`)
    .executeTakeFirst();
}

export async function rescheduleJob(db: Db, jobId: number, runAt: Date): Promise<void> {
  await db.updateTable('jobs').set({ run_at: runAt }).where('id', '=', jobId).execute();
}

export async function maxAttemptsOf(db: Db, jobId: number): Promise<number | undefined> {
  return (await db.selectFrom('jobs').select('max_attempts').where('id', '=', jobId).executeTakeFirst())?.max_attempts;
}

/** An organization's default content language (null: none), the language its conversations are read in. */
export async function organizationLanguage(db: Db, organizationId: string): Promise<string | null> {
  const row = await db.selectFrom('organizations').select('language').where('id', '=', organizationId).executeTakeFirst();
  return row?.language ?? null;
}

/**
 * Each word's lexeme in a Snowball dictionary of PostgreSQL (`french_stem`…), the one search's
 * configuration of that language uses; null for a stop word.
 */
export async function stemsOf(db: Db, dictionary: string, words: string[]): Promise<Map<string, string | null>> {
  const rows = await sql<{ word: string; lexemes: string[] | null }>`
    SELECT w.word, ts_lexize(${dictionary}::regdictionary, w.word) AS lexemes FROM unnest(${words}::text[]) AS w(word)`.execute(db);
  return new Map(rows.rows.map((r) => [r.word, r.lexemes === null ? r.word : (r.lexemes[0] ?? null)]));
}
