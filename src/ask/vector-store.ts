import { sql, type Expression } from 'kysely';
import type { Db } from '../platform/db/database.ts';
import type { Hit } from '../search/store.ts';

/**
 * The SQL of Ask's section vectors (`ask_sections`, `ask_embedding_state`, read beside the search
 * index's `search_pages`). Rows are keyed by space; callers decide which spaces may be read.
 */

export interface IndexedPage {
  page_id: string;
  title: string;
  description: string;
  sections: { id: string; title: string; body: string }[];
}

/** The search rows of some pages of a space (their sections, as indexed). */
export async function indexedPages(db: Db, spaceId: string, pageIds: string[]): Promise<IndexedPage[]> {
  if (!pageIds.length) return [];
  return (await db
    .selectFrom('search_pages')
    .select(['page_id', 'title', 'description', 'sections'])
    .where('space_id', '=', spaceId)
    .where('page_id', 'in', pageIds)
    .execute()) as unknown as IndexedPage[];
}

/** Page ids of a space's search rows after `after`, in order, `limit` at most (a whole space, batch by batch). */
export async function indexedPageIds(db: Db, spaceId: string, after: string, limit: number): Promise<string[]> {
  const rows = await db.selectFrom('search_pages').select('page_id').where('space_id', '=', spaceId).where('page_id', '>', after).orderBy('page_id').limit(limit).execute();
  return rows.map((r) => r.page_id);
}

/** The hashes of the section vectors stored for some pages of a space. */
export async function storedHashes(db: Db, spaceId: string, pageIds: string[]): Promise<{ page_id: string; hash: string }[]> {
  if (!pageIds.length) return [];
  return db.selectFrom('ask_sections').select(['page_id', 'hash']).where('space_id', '=', spaceId).where('page_id', 'in', pageIds).execute();
}

/**
 * Vectors already stored for some hashes, in any space. A hash covers the model and the exact
 * text embedded, so the vector is the one the engine would answer: reusing it reveals nothing.
 */
export async function vectorsByHash(db: Db, hashes: string[]): Promise<Map<string, Buffer>> {
  const out = new Map<string, Buffer>();
  for (let i = 0; i < hashes.length; i += 500) {
    const rows = await db
      .selectFrom('ask_sections')
      .select(['hash', sql<string>`encode(vector, 'base64')`.as('v')])
      .distinctOn('hash')
      .where('hash', 'in', hashes.slice(i, i + 500))
      .execute();
    for (const r of rows) out.set(r.hash, Buffer.from(r.v, 'base64'));
  }
  return out;
}

export interface SectionVectorRow {
  page_id: string;
  hash: string;
  section_id: string;
  section_title: string;
  vector: Buffer;
}

/** Writes new section vectors and removes those of texts no longer there, in one transaction. */
export async function replaceSections(db: Db, spaceId: string, added: SectionVectorRow[], removed: { page_id: string; hash: string }[]): Promise<void> {
  await db.transaction().execute(async (trx) => {
    for (const r of removed) {
      await trx.deleteFrom('ask_sections').where('space_id', '=', spaceId).where('page_id', '=', r.page_id).where('hash', '=', r.hash).execute();
    }
    for (let i = 0; i < added.length; i += 200) {
      await trx
        .insertInto('ask_sections')
        .values(added.slice(i, i + 200).map((r) => ({ space_id: spaceId, ...r })))
        .onConflict((oc) => oc.columns(['space_id', 'page_id', 'hash']).doUpdateSet((eb) => ({ section_id: eb.ref('excluded.section_id'), section_title: eb.ref('excluded.section_title'), vector: eb.ref('excluded.vector') })))
        .execute();
    }
    await bumpVersion(trx, spaceId);
  });
}

/** Counts a change to a space's vectors (in the transaction that made it). */
async function bumpVersion(db: Db, spaceId: string): Promise<void> {
  await db
    .insertInto('ask_vector_versions')
    .values({ space_id: spaceId, version: 1 })
    .onConflict((oc) => oc.column('space_id').doUpdateSet({ version: sql`ask_vector_versions.version + 1` }))
    .execute();
}

/** The change counts of the vectors of some spaces (a subquery or a list); spaces without vectors are absent. */
export async function vectorVersions(db: Db, spaces: Expression<unknown> | string[]): Promise<{ space_id: string; version: string }[]> {
  if (Array.isArray(spaces) && !spaces.length) return [];
  return db
    .selectFrom('ask_vector_versions')
    .select(['space_id', sql<string>`version::text`.as('version')])
    .where('space_id', 'in', spaces as any)
    .execute();
}

/**
 * Every section vector of a space. The bytes travel as base64 text: PGlite decodes a large bytea
 * result an order of magnitude slower than the same bytes as text.
 */
export async function spaceVectors(db: Db, spaceId: string): Promise<{ page_id: string; section_id: string; section_title: string; v: string }[]> {
  return db
    .selectFrom('ask_sections')
    .select(['page_id', 'section_id', 'section_title', sql<string>`encode(vector, 'base64')`.as('v')])
    .where('space_id', '=', spaceId)
    .execute();
}

/** Removes the vectors of pages that have no search row any more (removed pages). */
export async function dropOrphanSections(db: Db, spaceId: string): Promise<void> {
  const gone = await sql`DELETE FROM ask_sections a WHERE a.space_id = ${spaceId}
    AND NOT EXISTS (SELECT 1 FROM search_pages p WHERE p.space_id = a.space_id AND p.page_id = a.page_id)`.execute(db);
  if (Number(gone.numAffectedRows ?? 0) > 0) await bumpVersion(db, spaceId);
}

/** The root a space's search index describes (undefined: not indexed, or no such space). */
export async function searchRootOf(db: Db, spaceId: string): Promise<string | undefined> {
  return (await db.selectFrom('search_state').select('root').where('space_id', '=', spaceId).executeTakeFirst())?.root;
}

export async function setEmbeddingState(db: Db, spaceId: string, root: string, model: string): Promise<void> {
  await db
    .insertInto('ask_embedding_state')
    .values({ space_id: spaceId, root, model })
    .onConflict((oc) => oc.column('space_id').doUpdateSet({ root, model }))
    .execute();
}

/** After a page job: the state moves to `root` only when the space was complete for this model already. */
export async function advanceEmbeddingState(db: Db, spaceId: string, root: string, model: string): Promise<void> {
  await db.updateTable('ask_embedding_state').set({ root }).where('space_id', '=', spaceId).where('model', '=', model).execute();
}

export async function clearEmbeddingState(db: Db, spaceId: string): Promise<void> {
  await db.deleteFrom('ask_embedding_state').where('space_id', '=', spaceId).execute();
}

/**
 * Spaces (of every organization: run at start) whose vectors are behind their search index or of
 * another model, and that no queued embedding job covers already.
 */
export async function spacesBehind(db: Db, model: string, jobType: string): Promise<string[]> {
  const rows = await sql<{ id: string }>`
    SELECT s.space_id AS id FROM search_state s
    JOIN spaces sp ON sp.id = s.space_id AND sp.deleted_at IS NULL
    LEFT JOIN ask_embedding_state e ON e.space_id = s.space_id
    WHERE (e.space_id IS NULL OR e.root <> s.root OR e.model <> ${model})
      AND NOT EXISTS (SELECT 1 FROM jobs j WHERE j.type = ${jobType} AND j.status IN ('queued', 'running')
        AND j.payload->>'spaceId' = s.space_id AND j.payload->'pages' IS NULL)`.execute(db);
  return rows.rows.map((r) => r.id);
}

/** Search rows of pages found by their vectors, as hits (no query matched them: score 0). */
export async function pagesAsHits(db: Db, keys: { space_id: string; page_id: string }[]): Promise<Hit[]> {
  if (!keys.length) return [];
  const rows = await db
    .selectFrom('search_pages')
    .select(['space_id', 'page_id', 'title', 'description', 'path', 'ancestors', 'sections'])
    .where((eb) => eb.or(keys.map((k) => eb.and([eb('space_id', '=', k.space_id), eb('page_id', '=', k.page_id)]))))
    .execute();
  return rows.map((r) => ({ ...(r as any), score: 0, query_text: '', exact: false }) as Hit);
}
