import { sql } from 'kysely';
import { json, type Db } from '../platform/db/database.ts';
import type { RevisionRow } from '../platform/db/schema.ts';

/**
 * The SQL of content. Tree nodes and documents (markdown) are stored once by (file bytes: Blobs in
 * platform/blob-store.ts)
 * the hash of what they hold and shared by every space and organization that holds the same
 * thing, so their queries take hashes and no organization: what a caller may read is decided by
 * the revision it starts from. A revision is found within its space (space ids are never reused
 * across organizations); the spaces holding a document are recorded in `space_documents`, which is
 * what scopes a document read by id (see `spaceHoldsDocument` in documents.ts).
 */

// Revisions.

export async function findRevision(db: Db, spaceId: string, revisionId: string): Promise<RevisionRow | undefined> {
  return db.selectFrom('revisions').selectAll().where('id', '=', revisionId).where('space_id', '=', spaceId).executeTakeFirst();
}

/** The root of the space's revision (it must exist). */
export async function revisionRoot(db: Db, organizationId: string, revisionId: string): Promise<string> {
  const revision = await db.selectFrom('revisions').select('root').where('organization_id', '=', organizationId).where('id', '=', revisionId).executeTakeFirstOrThrow();
  return revision.root;
}

// Tree nodes (src/content/tree.ts).

export async function treeNodes(db: Db, hashes: string[]): Promise<{ hash: string; data: unknown }[]> {
  return db.selectFrom('tree_nodes').select(['hash', 'data']).where('hash', 'in', hashes).execute();
}

/** Stores nodes (idempotent: a node already stored is left as it is). */
export async function insertTreeNodes(db: Db, nodes: [hash: string, data: unknown][]): Promise<void> {
  await db
    .insertInto('tree_nodes')
    .values(nodes.map(([hash, data]) => ({ hash, data: json(data) })))
    .onConflict((oc) => oc.column('hash').doNothing())
    .execute();
}

export async function countTreeNodes(db: Db): Promise<number> {
  const r = await sql<{ n: number }>`SELECT count(*)::int AS n FROM tree_nodes`.execute(db);
  return r.rows[0]!.n;
}

// Documents: page and reusable-content bodies, by hash.

/** Stores documents (idempotent: a document already stored is left as it is). */
export async function insertDocuments(db: Db, documents: { hash: string; markdown: string }[]): Promise<void> {
  await db.insertInto('documents').values(documents).onConflict((oc) => oc.column('hash').doNothing()).execute();
}

export async function documentsByHash(db: Db, hashes: string[]): Promise<{ hash: string; markdown: string }[]> {
  return db.selectFrom('documents').select(['hash', 'markdown']).where('hash', 'in', hashes).execute();
}

/** Records the space as holding the documents (those already recorded stay as they are). */
export async function recordSpaceDocuments(db: Db, spaceId: string, hashes: string[]): Promise<void> {
  await db
    .insertInto('space_documents')
    .values(hashes.map((hash) => ({ space_id: spaceId, hash })))
    .onConflict((oc) => oc.doNothing())
    .execute();
}

export async function spaceHoldsHash(db: Db, spaceId: string, hash: string): Promise<boolean> {
  const row = await db.selectFrom('space_documents').select('hash').where('space_id', '=', spaceId).where('hash', '=', hash).executeTakeFirst();
  return !!row;
}

/** Marks the space's documents as recorded (done once, for spaces older than the record). */
export async function markDocumentsIndexed(db: Db, organizationId: string, spaceId: string): Promise<void> {
  await db.updateTable('spaces').set({ documents_indexed: true }).where('organization_id', '=', organizationId).where('id', '=', spaceId).execute();
}
