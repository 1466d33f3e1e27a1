import { createHash } from 'node:crypto';
import type { Expression } from 'kysely';
import { embedTexts, type EngineConfig } from '../ai/client.ts';
import type { Db } from '../platform/db/database.ts';
import type { Jobs, JobContext } from '../platform/jobs.ts';
import * as store from './vector-store.ts';

/**
 * Section vectors for Ask (AI_EMBEDDING_MODEL): every section of every indexed page is embedded by
 * the engine's `/embeddings` and stored with the hash of the model and the text it was made from.
 * They follow the search index: when the index writes or removes pages (a merge, an import, a git
 * sync, a copy), a background job (`ask.embed`) is queued in the same transaction for those pages,
 * and embeds only the sections whose hash is not stored yet (an edit to one section of a page costs
 * one vector; a text stored in any space already, as in a copied space, costs none); at start, spaces whose vectors are behind their index get a whole pass (which still
 * embeds only what is missing). An engine failure fails the job (retried, its error kept on the
 * job), never the edit.
 *
 * Ranking is exact: the question's vector against the stored vectors of the caller's readable
 * spaces only (cosine, vectors normalized at write), scanned in the process, which keeps the
 * vectors it read in memory until their space's version moves. No pgvector: see docs/ask.md.
 */

export const EMBED_JOB = 'ask.embed';

/** Characters of a section embedded (its page's title and its heading first): about 500 tokens. */
const EMBEDDED_CHARS = 2000;
/** Pages read per round of a job. */
const PAGES_PER_ROUND = 200;
/** A list of pages longer than this is embedded as a whole pass instead (a large import). */
const MAX_LISTED_PAGES = 1000;

export interface SectionText {
  sectionId: string;
  sectionTitle: string;
  text: string;
}

/** The texts of a page that are embedded: one per section with words, its page's title and the section's heading before its body. */
export function sectionTexts(page: store.IndexedPage): SectionText[] {
  const out: SectionText[] = [];
  page.sections.forEach((section, i) => {
    const body = [i === 0 ? page.description : '', section.body].filter((t) => t.trim()).join('\n\n');
    if (!body.trim() && !section.title.trim()) return;
    const heading = section.title && section.title !== page.title ? `${page.title} › ${section.title}` : page.title;
    out.push({ sectionId: section.id, sectionTitle: section.title, text: `${heading}\n\n${body}`.slice(0, EMBEDDED_CHARS) });
  });
  return out;
}

export function hashOf(model: string, text: string): string {
  return createHash('sha256').update(model).update('\0').update(text).digest('base64url');
}

/** A vector normalized to length 1, as float4 bytes (little-endian). */
export function packVector(values: number[]): Buffer {
  let norm = 0;
  for (const v of values) norm += v * v;
  norm = Math.sqrt(norm) || 1;
  const out = Buffer.alloc(values.length * 4);
  values.forEach((v, i) => out.writeFloatLE(v / norm, i * 4));
  return out;
}

function unpack(buffer: Buffer): Float32Array {
  // A copy: the driver's buffer may not be 4-byte aligned.
  const bytes = new Uint8Array(buffer.byteLength);
  bytes.set(buffer);
  return new Float32Array(bytes.buffer);
}

/**
 * Brings the vectors of some pages of a space (`pages`; undefined: every page) to the search
 * index: sections whose text is new are embedded, those whose text is gone are removed, pages gone
 * from the index lose theirs. Returns how many texts were sent to the engine.
 */
export async function embedPages(db: Db, config: EngineConfig, spaceId: string, pages?: string[]): Promise<number> {
  const model = config.aiEmbeddingModel!;
  const root = await store.searchRootOf(db, spaceId);
  if (!root) return 0;
  let embedded = 0;
  const round = async (ids: string[]) => {
    const indexed = await store.indexedPages(db, spaceId, ids);
    const wanted = new Map<string, { page_id: string; hash: string; text: SectionText }>();
    for (const page of indexed) {
      for (const text of sectionTexts(page)) {
        const hash = hashOf(model, text.text);
        wanted.set(`${page.page_id}\0${hash}`, { page_id: page.page_id, hash, text });
      }
    }
    const stored = await store.storedHashes(db, spaceId, ids);
    const have = new Set(stored.map((r) => `${r.page_id}\0${r.hash}`));
    const removed = stored.filter((r) => !wanted.has(`${r.page_id}\0${r.hash}`));
    const missing = [...wanted].filter(([key]) => !have.has(key)).map(([, w]) => w);
    // A text embedded already (another space, a copy) keeps its vector; each new text is sent once.
    const known = missing.length ? await store.vectorsByHash(db, [...new Set(missing.map((m) => m.hash))]) : new Map<string, Buffer>();
    const texts = new Map<string, string>();
    for (const m of missing) if (!known.has(m.hash)) texts.set(m.hash, m.text.text);
    const vectors = texts.size ? await embedTexts(config, [...texts.values()]) : [];
    [...texts.keys()].forEach((hash, i) => known.set(hash, packVector(vectors[i]!)));
    const added = missing.map((m) => ({ page_id: m.page_id, hash: m.hash, section_id: m.text.sectionId, section_title: m.text.sectionTitle, vector: known.get(m.hash)! }));
    if (added.length || removed.length) await store.replaceSections(db, spaceId, added, removed);
    embedded += texts.size;
  };
  if (pages) {
    for (let i = 0; i < pages.length; i += PAGES_PER_ROUND) await round(pages.slice(i, i + PAGES_PER_ROUND));
    await store.advanceEmbeddingState(db, spaceId, root, model);
  } else {
    let after = '';
    for (;;) {
      const ids = await store.indexedPageIds(db, spaceId, after, PAGES_PER_ROUND);
      if (!ids.length) break;
      await round(ids);
      after = ids[ids.length - 1]!;
    }
    await store.dropOrphanSections(db, spaceId);
    await store.setEmbeddingState(db, spaceId, root, model);
  }
  return embedded;
}

/** The `ask.embed` job: `{ spaceId, pages? }`. A final failure leaves the space for the next start's whole pass. */
export function embedJob(config: EngineConfig) {
  return async (payload: { spaceId: string; pages?: string[] }, ctx: JobContext) => {
    try {
      await embedPages(ctx.db, config, payload.spaceId, payload.pages);
    } catch (err) {
      if (ctx.lastAttempt) await store.clearEmbeddingState(ctx.db, payload.spaceId).catch(() => {});
      throw err;
    }
  };
}

/** Queues the embedding of pages whose search rows were just written (in the transaction that wrote them). */
export async function queueEmbedding(trx: Db, jobs: Jobs | undefined, spaceId: string, pages: string[]): Promise<void> {
  if (!jobs?.handles(EMBED_JOB) || !pages.length) return;
  await jobs.enqueue(EMBED_JOB, pages.length > MAX_LISTED_PAGES ? { spaceId } : { spaceId, pages }, { db: trx });
}

/** At start: a whole pass for every space whose vectors are behind its index or of another model. */
export async function queueStaleEmbeddings(db: Db, jobs: Jobs, model: string): Promise<number> {
  if (!jobs.handles(EMBED_JOB)) return 0;
  const behind = await store.spacesBehind(db, model, EMBED_JOB);
  for (const spaceId of behind) await jobs.enqueue(EMBED_JOB, { spaceId });
  return behind.length;
}

export interface NearSection {
  space_id: string;
  page_id: string;
  section_id: string;
  section_title: string;
  similarity: number;
}

/** The vectors of one space as a process holds them: per vector length, rows side by side. */
interface SpaceVectors {
  spaceId: string;
  version: string;
  bytes: number;
  blocks: Map<number, { pageIds: string[]; sectionIds: string[]; sectionTitles: string[]; data: Float32Array }>;
}

/** Bytes of vectors a process keeps in memory, least recently used spaces dropped first. */
const CACHE_BYTES = 256 * 1024 * 1024;

/** Per database (one per server; tests run several in a process): spaces' vectors by space id, in use order. */
const caches = new WeakMap<object, { spaces: Map<string, SpaceVectors>; bytes: number }>();

async function loadSpace(db: Db, spaceId: string, version: string): Promise<SpaceVectors> {
  const rows = await store.spaceVectors(db, spaceId);
  const byLength = new Map<number, { pageIds: string[]; sectionIds: string[]; sectionTitles: string[]; parts: Float32Array[] }>();
  for (const row of rows) {
    const v = unpack(Buffer.from(row.v, 'base64'));
    const block = byLength.get(v.length) ?? { pageIds: [], sectionIds: [], sectionTitles: [], parts: [] };
    block.pageIds.push(row.page_id);
    block.sectionIds.push(row.section_id);
    block.sectionTitles.push(row.section_title);
    block.parts.push(v);
    byLength.set(v.length, block);
  }
  const blocks: SpaceVectors['blocks'] = new Map();
  let bytes = 0;
  for (const [length, block] of byLength) {
    const data = new Float32Array(length * block.parts.length);
    block.parts.forEach((part, i) => data.set(part, i * length));
    bytes += data.byteLength;
    blocks.set(length, { pageIds: block.pageIds, sectionIds: block.sectionIds, sectionTitles: block.sectionTitles, data });
  }
  return { spaceId, version, bytes, blocks };
}

/**
 * The vectors of the spaces, from this process's memory while their version has not moved (one
 * small query per question), else read again. A space larger than the whole cache is read for
 * the question and not kept.
 */
async function vectorsOfSpaces(db: Db, spaces: Expression<unknown> | string[]): Promise<SpaceVectors[]> {
  const versions = await store.vectorVersions(db, spaces);
  let cache = caches.get(db);
  if (!cache) caches.set(db, (cache = { spaces: new Map(), bytes: 0 }));
  const out: SpaceVectors[] = [];
  for (const { space_id, version } of versions) {
    let entry = cache.spaces.get(space_id);
    if (entry) {
      cache.spaces.delete(space_id);
      cache.bytes -= entry.bytes;
      if (entry.version !== version) entry = undefined;
    }
    entry ??= await loadSpace(db, space_id, version);
    out.push(entry);
    if (entry.bytes <= CACHE_BYTES) {
      cache.spaces.set(space_id, entry);
      cache.bytes += entry.bytes;
      for (const [id, old] of cache.spaces) {
        if (cache.bytes <= CACHE_BYTES) break;
        cache.spaces.delete(id);
        cache.bytes -= old.bytes;
      }
    }
  }
  return out;
}

/**
 * The `k` sections closest to `question` (cosine) among the vectors of `spaces` (the caller's
 * readable spaces: a subquery or a list), ranked exactly. Vectors of another length (another
 * model, before the re-embedding finished) are skipped.
 */
export async function nearestSections(db: Db, spaces: Expression<unknown> | string[], question: number[], k: number): Promise<NearSection[]> {
  const q = unpack(packVector(question));
  const best: NearSection[] = [];
  let floor = -Infinity;
  for (const space of await vectorsOfSpaces(db, spaces)) {
    const block = space.blocks.get(q.length);
    if (!block) continue;
    const { data } = block;
    for (let row = 0, at = 0; at < data.length; row++, at += q.length) {
      let dot = 0;
      for (let i = 0; i < q.length; i++) dot += data[at + i]! * q[i]!;
      // A section at a right angle to the question (or beyond) shares nothing with it.
      if (dot <= 0 || (best.length === k && dot <= floor)) continue;
      best.push({ space_id: space.spaceId, page_id: block.pageIds[row]!, section_id: block.sectionIds[row]!, section_title: block.sectionTitles[row]!, similarity: dot });
      best.sort((a, b) => b.similarity - a.similarity);
      if (best.length > k) best.pop();
      if (best.length === k) floor = best[k - 1]!.similarity;
    }
  }
  return best;
}

/** The question's vector, or undefined without an embedding model. */
export async function questionVector(config: EngineConfig, question: string): Promise<number[] | undefined> {
  if (!config.aiEmbeddingModel || !config.aiEngineUrl) return undefined;
  return (await embedTexts(config, [question]))[0];
}
