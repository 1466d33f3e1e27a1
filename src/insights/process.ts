import type { Services } from '../platform/context.ts';
import { json, type Db } from '../platform/db/database.ts';
import type { Impact } from '../platform/db/schema.ts';
import { newId } from '../platform/ids.ts';
import type { JobContext } from '../platform/jobs.ts';
import { addInto, CENTROID_TERMS, centroidOf, medoid, nearest, prune, recluster, weightedNorm, type Centroid, type Member, type Weight } from './cluster.ts';
import { clusterSummary, iconFor, issueDetails } from './documents.ts';
import { builtInEngine, engineFor, type Engine } from './engine.ts';
import { strongerImpact, type ConversationText, type ExtractedIssue } from './extract.ts';
import * as store from './store.ts';
import { analyzerFor } from './analyzer.ts';
import { idf, termVector, terms as termsOf, type Analyzer, type SparseVector } from './text.ts';

export const PROCESS_CONVERSATIONS_JOB = 'insights.process';
export const RECLUSTER_JOB = 'insights.recluster';

/**
 * Similarity a new issue needs to join a cluster at once, per kind of vector (the recomputation
 * that follows needs none: see cluster.ts). TF-IDF cosines of short texts about one problem sit
 * around 0.2 to 0.6; embeddings of related texts are much closer together.
 */
export function thresholds(kind: string): { join: number } {
  return kind === 'tfidf' ? { join: 0.25 } : { join: 0.75 };
}

/** New issues since the last recomputation that make the next one run at once (else it waits INSIGHTS_RECLUSTER_DELAY_MS). */
function reclusterDue(sinceLast: number, total: number): boolean {
  // Geometric: recomputations cost O(total), and running one each time the issues grow by half
  // keeps their summed cost linear in the number of issues.
  return sinceLast >= Math.max(100, Math.floor(total / 2));
}

/** Conversations extracted and assigned per transaction. */
const CHUNK = 100;

interface Prepared {
  conversationId: string;
  hash: string;
  subject: string;
  source: string;
  createdAt: Date;
  issues: { extracted: ExtractedIssue; counts: Map<string, number>; surface: Map<string, string>; terms: SparseVector; embedding?: SparseVector }[];
}

function denseToSparse(vector: number[]): SparseVector {
  let norm = 0;
  for (const x of vector) norm += x * x;
  norm = Math.sqrt(norm) || 1;
  const out: SparseVector = {};
  vector.forEach((x, i) => {
    if (x !== 0) out[i] = x / norm;
  });
  return out;
}

/** Extraction (and embeddings) for conversations, outside any transaction: an engine may be slow. */
async function prepare(
  engine: Engine,
  rows: { id: string; subject: string; source: string; parts: unknown; content_hash: string; created_at: Date }[],
  /** How the issues' words are read, in the organization's language (analyzer.ts). */
  analyzer: (texts: string[]) => Promise<Analyzer>,
): Promise<Prepared[]> {
  const extractions = [];
  for (const row of rows) {
    const conversation: ConversationText = { subject: row.subject, parts: row.parts as ConversationText['parts'] };
    extractions.push({ row, extracted: await engine.extract(conversation) });
  }
  const analyze = await analyzer(extractions.flatMap((x) => x.extracted.map((e) => e.text)));
  const prepared: Prepared[] = extractions.map(({ row, extracted }) => ({
    conversationId: row.id,
    hash: row.content_hash,
    subject: row.subject,
    source: row.source,
    createdAt: row.created_at,
    issues: extracted.map((e) => {
      const { counts, surface } = termsOf(e.text, analyze);
      return { extracted: e, counts, surface, terms: termVector(counts) };
    }),
  }));
  if (engine.embed) {
    const all = prepared.flatMap((p) => p.issues);
    for (let i = 0; i < all.length; i += 64) {
      const chunk = all.slice(i, i + 64);
      const vectors = await engine.embed(chunk.map((issue) => issue.extracted.text));
      chunk.forEach((issue, j) => (issue.embedding = denseToSparse(vectors[j]!)));
    }
  }
  return prepared;
}

/** Term statistics of an organization, loaded once per batch and updated in memory. */
class TermStats {
  private constructor(
    readonly df: Map<string, number>,
    readonly words: Map<string, string>,
    public documents: number,
    public assignedSince: number,
  ) {}

  static async load(db: Db, organizationId: string): Promise<TermStats> {
    const { state, terms: rows } = await store.loadTermStats(db, organizationId);
    return new TermStats(new Map(rows.map((r) => [r.term, r.df])), new Map(rows.map((r) => [r.term, r.word])), state?.documents ?? 0, state?.assigned_since_recluster ?? 0);
  }

  readonly changed = new Set<string>();

  add(terms: SparseVector, surface: Map<string, string>, factor: 1 | -1): void {
    for (const term in terms) {
      this.df.set(term, Math.max(0, (this.df.get(term) ?? 0) + factor));
      if (!this.words.has(term)) {
        const word = term.includes(' ') ? term.split(' ').map((t) => surface.get(t) ?? t).join(' ') : surface.get(term) ?? term;
        this.words.set(term, word);
      }
      this.changed.add(term);
    }
    this.documents = Math.max(0, this.documents + factor);
  }

  weight: Weight = (term) => idf(this.df.get(term) ?? 0, this.documents);

  /** The most telling single words of a term vector: weight × IDF, shown as written. */
  keywords(vector: SparseVector, count = 8): string[] {
    return Object.keys(vector)
      .filter((t) => !t.includes(' '))
      .sort((a, b) => vector[b]! * this.weight(b) - vector[a]! * this.weight(a))
      .slice(0, count)
      .map((t) => this.words.get(t) ?? t);
  }

  async save(db: Db, organizationId: string): Promise<void> {
    const terms = [...this.changed].map((term) => ({ term, word: this.words.get(term) ?? term, df: this.df.get(term) ?? 0 }));
    await store.saveTermStats(db, organizationId, terms, { documents: this.documents, assignedSince: this.assignedSince });
    this.changed.clear();
  }
}

/** Queues a recomputation of the organization's clusters, unless one is already waiting. */
async function scheduleRecluster(services: Services, db: Db, organizationId: string, now: boolean): Promise<void> {
  const runAt = new Date(Date.now() + (now ? 0 : services.config.insightsReclusterDelayMs));
  const waiting = await store.queuedJobOf(db, organizationId, RECLUSTER_JOB);
  if (waiting) {
    if (waiting.run_at > runAt) await store.rescheduleJob(db, waiting.id, runAt);
    return;
  }
  await services.jobs.enqueue(RECLUSTER_JOB, { organizationId }, { runAt, db });
}

/** Sets each cluster's stored impact from its issues: the strongest level, weighted by count (see impactOf). */
async function refreshClusterImpacts(db: Db, organizationId: string, clusterIds: string[]): Promise<void> {
  if (clusterIds.length === 0) return;
  const byCluster = await store.impactCounts(db, clusterIds);
  for (const [id, entry] of byCluster) await store.updateCluster(db, organizationId, id, { impact: impactOf(entry) });
}

/**
 * A cluster's impact: each level scores its count times its weight (low 1, medium 3, high 9) and
 * the highest score wins, ties going to the stronger level. One high issue outweighs up to eight
 * low ones; a cluster of many low reports and a single high one stays low.
 */
export function impactOf(counts: Record<Impact, number>): Impact {
  const scores: [Impact, number][] = [
    ['high', counts.high * 9],
    ['medium', counts.medium * 3],
    ['low', counts.low],
  ];
  let best: [Impact, number] = scores[0]!;
  for (const s of scores) if (s[1] > best[1]) best = s;
  return best[1] === 0 ? 'low' : best[0];
}

function vectorOf(issue: { terms: SparseVector; embedding?: SparseVector | undefined }): SparseVector {
  return issue.embedding ?? issue.terms;
}

/**
 * The job: extracts the issues of the given conversations and assigns them to clusters. Runs once
 * per ingest request that changed something; conversations whose content changed since the job was
 * queued are left to the job of that later change.
 */
export function processConversationsJob(services: Services) {
  return async (payload: { organizationId: string; ids: string[] }, job: JobContext) => {
    const { organizationId, ids } = payload;
    const db = services.db;
    const rows = await store.unprocessedConversations(db, organizationId, ids);
    if (rows.length === 0) return;
    let engine = engineFor(services.config);
    const language = await store.organizationLanguage(db, organizationId);
    const analyzer = (texts: string[]) => analyzerFor(db, language, texts);
    // A chunk per transaction: the embedded database serves one transaction at a time, so a
    // large batch must not hold it for long.
    for (let start = 0; start < rows.length; start += CHUNK) {
      const chunk = rows.slice(start, start + CHUNK);
      let prepared: Prepared[];
      try {
        prepared = await prepare(engine, chunk, analyzer);
      } catch (err) {
        // The configured engine failed on every attempt: the built-in engine processes the
        // conversations rather than leaving them unprocessed for good.
        if (job.attempt < ((await store.maxAttemptsOf(db, job.jobId)) ?? 1)) throw err;
        services.jobs.logger?.warn({ err: (err as Error).message, organizationId }, 'insights engine failed on the last attempt: built-in engine used');
        engine = builtInEngine;
        prepared = await prepare(engine, chunk, analyzer);
      }
      const created: { id: string; sample: { titles: string[]; evidence: string[]; keywords: string[] } }[] = [];
      await db.transaction().execute(async (trx) => {
        await store.lockOrganizationInsights(trx, organizationId);
        // Only conversations still as they were extracted: a newer ingest has its own job.
        const current = await store.lockConversationHashes(
          trx,
          organizationId,
          prepared.map((p) => p.conversationId),
          { unprocessed: true },
        );
        const work = prepared.filter((p) => current.get(p.conversationId) === p.hash);
        if (work.length === 0) return;
        const stats = await TermStats.load(trx, organizationId);
        const kind = engine.vectorKind;
        const weight: Weight = kind === 'tfidf' ? stats.weight : () => 1;
        const clusterRows = await store.clusterCentroids(trx, organizationId);
        const centroids = new Map<string, Centroid & { kind: string }>();
        for (const c of clusterRows) centroids.set(c.id, { ...centroidOf(c.id, c.centroid as SparseVector, c.issues, weight), kind: c.vector_kind });
        const touched = new Set<string>();

        // Issues of a conversation processed before (its content changed): their contribution goes.
        const old = await store.issuesOfConversations(
          trx,
          organizationId,
          work.map((w) => w.conversationId),
        );
        for (const issue of old) {
          stats.add(issue.terms as SparseVector, new Map(), -1);
          const c = issue.cluster_id ? centroids.get(issue.cluster_id) : undefined;
          if (c) {
            addInto(c.vector, (issue.vector ?? issue.terms) as SparseVector, -1);
            c.size = Math.max(0, c.size - 1);
            touched.add(c.id);
          }
        }
        if (old.length) await store.deleteIssues(trx, organizationId, old.map((o) => o.id));

        const now = new Date();
        const inserts: store.NewIssue[] = [];
        const newClusters = new Map<string, { keywords: string[]; title: string; evidence: string[] }>();
        for (const conversation of work) {
          let impact: Impact | undefined;
          for (const issue of conversation.issues) {
            stats.add(issue.terms, issue.surface, 1);
            const vector = vectorOf(issue);
            const norm = weightedNorm(vector, weight);
            const candidates = [...centroids.values()].filter((c) => c.kind === kind);
            const best = nearest(vector, norm, candidates, weight);
            let clusterId: string;
            if (best && best.similarity >= thresholds(kind).join) {
              const c = centroids.get(best.centroid.id)!;
              addInto(c.vector, vector);
              c.vector = prune(c.vector, CENTROID_TERMS, weight);
              c.size++;
              c.norm = weightedNorm(c.vector, weight);
              clusterId = c.id;
            } else {
              clusterId = newId();
              centroids.set(clusterId, { ...centroidOf(clusterId, { ...vector }, 1, weight), kind });
              newClusters.set(clusterId, { keywords: stats.keywords(issue.terms), title: issue.extracted.title, evidence: issue.extracted.evidence });
            }
            touched.add(clusterId);
            impact = strongerImpact(impact, issue.extracted.impact);
            inserts.push({
              id: newId(),
              conversation_id: conversation.conversationId,
              cluster_id: clusterId,
              title: issue.extracted.title,
              details: json(issueDetails(conversation.subject, issue.extracted.evidence, issue.extracted.impact)),
              impact: issue.extracted.impact,
              source: conversation.source,
              vector_kind: kind,
              terms: json(issue.terms),
              vector: issue.embedding ? json(issue.embedding) : null,
              created_at: conversation.createdAt,
              ingested_at: now,
            });
          }
          await store.markConversationProcessed(trx, organizationId, conversation.conversationId, now, impact ?? null);
        }

        for (const [id, info] of newClusters) {
          const c = centroids.get(id)!;
          await store.insertCluster(trx, organizationId, {
            id,
            label: info.title,
            icon: iconFor(info.keywords),
            summary: json(clusterSummary({ issues: c.size, conversations: c.size, keywords: info.keywords, example: info.evidence[0] })),
            impact: 'low',
            vector_kind: kind,
            centroid: json(c.vector),
            keywords: json(info.keywords),
            issues: c.size,
            created_at: now,
            updated_at: now,
          });
          created.push({ id, sample: { titles: [info.title], evidence: info.evidence, keywords: info.keywords } });
        }
        for (const id of touched) {
          if (newClusters.has(id)) continue;
          const c = centroids.get(id)!;
          await store.updateCluster(trx, organizationId, id, { centroid: json(c.vector), issues: c.size, updated_at: now });
        }
        await store.insertIssues(trx, organizationId, inserts);
        await refreshClusterImpacts(trx, organizationId, [...touched]);

        stats.assignedSince += inserts.length;
        const total = stats.documents;
        const due = reclusterDue(stats.assignedSince, total);
        await stats.save(trx, organizationId);
        if (inserts.length > 0 || old.length > 0) await scheduleRecluster(services, trx, organizationId, due);
      });
      // Labels and summaries of new clusters from the chat model, when there is one; the built-in
      // ones stay if it fails (the next recomputation asks again).
      if (engine.describe) {
        for (const c of created) await describeCluster(services, engine, organizationId, c.id, c.sample);
      }
    }
  };
}

async function describeCluster(services: Services, engine: Engine, organizationId: string, clusterId: string, sample: { titles: string[]; evidence: string[]; keywords: string[] }, counts?: { issues: number; conversations: number }) {
  try {
    const description = await engine.describe!(sample);
    if (!description) return;
    await store.updateCluster(services.db, organizationId, clusterId, {
      label: description.label,
      ...(description.icon ? { icon: description.icon } : {}),
      summary: json(
        clusterSummary({
          issues: counts?.issues ?? sample.titles.length,
          conversations: counts?.conversations ?? sample.titles.length,
          keywords: sample.keywords,
          example: sample.evidence[0],
          text: description.summary || undefined,
        }),
      ),
    });
  } catch (err) {
    services.jobs.logger?.warn({ err: (err as Error).message, clusterId }, 'insights engine could not describe a cluster');
  }
}

/**
 * The periodic job: recomputes the organization's clusters from all their issues (see
 * cluster.ts), refreshes their labels, keywords, summaries and impact, and removes clusters left
 * empty (unless a change request is tied to one).
 */
export function reclusterJob(services: Services) {
  return async (payload: { organizationId: string }) => {
    const { organizationId } = payload;
    const engine = engineFor(services.config);
    const describe: { id: string; sample: { titles: string[]; evidence: string[]; keywords: string[] }; counts: { issues: number; conversations: number } }[] = [];
    await services.db.transaction().execute(async (trx) => {
      await store.lockOrganizationInsights(trx, organizationId);
      const stats = await TermStats.load(trx, organizationId);
      const issues = await store.allIssues(trx, organizationId);
      const clusters = await store.clusterSizes(trx, organizationId);
      const now = new Date();
      const kinds = new Set(issues.map((i) => i.vector_kind));
      const surviving = new Set<string>();
      for (const kind of kinds) {
        const weight: Weight = kind === 'tfidf' ? stats.weight : () => 1;
        const ofKind = issues.filter((i) => i.vector_kind === kind);
        const members: Member[] = ofKind.map((i) => ({ id: i.id, vector: (i.vector ?? i.terms) as SparseVector, cluster: i.cluster_id }));
        const { assignment, centroids } = recluster(members, weight, { newId: () => newId() });
        const byCluster = new Map<string, typeof ofKind>();
        const membersOf = new Map<string, Member[]>();
        ofKind.forEach((issue, index) => {
          const target = assignment.get(issue.id)!;
          if (!byCluster.has(target)) {
            byCluster.set(target, []);
            membersOf.set(target, []);
          }
          byCluster.get(target)!.push(issue);
          membersOf.get(target)!.push(members[index]!);
        });
        const existing = new Map(clusters.map((c) => [c.id, c]));
        for (const [id, centroid] of centroids) {
          surviving.add(id);
          const own = byCluster.get(id) ?? [];
          const moved = own.filter((i) => i.cluster_id !== id);
          const termCentroid: SparseVector = {};
          for (const i of own) addInto(termCentroid, i.terms as SparseVector);
          const keywords = stats.keywords(termCentroid);
          const typical = medoid(membersOf.get(id) ?? [], centroid, weight);
          const typicalIssue = own.find((i) => i.id === typical?.id) ?? own[0]!;
          const evidence = quotesOf(typicalIssue.details);
          const conversations = new Set(own.map((i) => i.conversation_id)).size;
          const changed = moved.length > 0 || existing.get(id)?.issues !== own.length;
          const builtIn = {
            label: typicalIssue.title,
            icon: iconFor(keywords),
            summary: json(clusterSummary({ issues: own.length, conversations, keywords, example: evidence[0] })),
          };
          if (existing.has(id)) {
            await store.updateCluster(trx, organizationId, id, {
              centroid: json(centroid.vector),
              issues: own.length,
              keywords: json(keywords),
              // A model's label stays until the cluster's membership changes.
              ...(changed || !engine.describe ? builtIn : {}),
              ...(changed ? { updated_at: now } : {}),
            });
          } else {
            await store.insertCluster(trx, organizationId, { id, ...builtIn, impact: 'low', vector_kind: kind, centroid: json(centroid.vector), keywords: json(keywords), issues: own.length, created_at: now, updated_at: now });
          }
          await store.moveIssues(
            trx,
            organizationId,
            moved.map((m) => m.id),
            id,
          );
          if (changed && engine.describe) {
            describe.push({ id, sample: { titles: own.slice(0, 10).map((i) => i.title), evidence: own.slice(0, 5).flatMap((i) => quotesOf(i.details).slice(0, 1)), keywords }, counts: { issues: own.length, conversations } });
          }
        }
        await refreshClusterImpacts(trx, organizationId, [...centroids.keys()]);
      }
      // Clusters left without issues go, unless a change request is tied to them (it keeps its link).
      const empty = clusters.filter((c) => !surviving.has(c.id)).map((c) => c.id);
      if (empty.length) {
        const tied = await store.clustersTiedToChangeRequests(trx, organizationId, empty);
        const removable = empty.filter((id) => !tied.has(id));
        if (removable.length) await store.deleteClusters(trx, organizationId, removable);
        const kept = empty.filter((id) => tied.has(id));
        if (kept.length) await store.emptyClusters(trx, organizationId, kept, now);
      }
      await store.markReclustered(trx, organizationId, stats.documents, now);
    });
    for (const d of describe) await describeCluster(services, engine, organizationId, d.id, d.sample, d.counts);
  };
}

/** The quoted sentences of an issue's details document. */
export function quotesOf(details: unknown): string[] {
  const nodes = (details as { nodes?: any[] })?.nodes ?? [];
  return nodes
    .filter((n) => n?.type === 'blockquote')
    .map((n) => (n.nodes?.[0]?.nodes?.[0]?.leaves ?? []).map((l: { text: string }) => l.text).join(''));
}

export function registerInsightJobs(services: Services): void {
  services.jobs.register(PROCESS_CONVERSATIONS_JOB, processConversationsJob(services));
  services.jobs.register(RECLUSTER_JOB, reclusterJob(services), { maxAttempts: 3 });
}
