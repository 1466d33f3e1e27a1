import { generateNKeysBetween } from 'fractional-indexing';
import { json, type Db } from '../../src/platform/db/database.ts';
import { ContentEditor, childrenKey, pageKey, putDocuments, type PageEntry } from '../../src/content/model.ts';
import { newId } from '../../src/platform/ids.ts';
import { reindexSpace } from '../../src/search/indexer.ts';

/**
 * Gives a space a large page tree in one commit (`sections` top-level pages with `perSection`
 * children each), written straight into the content tree, and makes it the space's revision.
 * Returns the page ids, top-level first.
 */
export async function bulkPages(
  db: Db,
  space: { id: string; organization_id: string },
  sections: number,
  perSection: number,
  make: (n: number) => { title: string; markdown: string; description?: string } = (n) => ({ title: `Page ${n}`, markdown: 'Some text.\n\nMore text.\n' }),
) {
  const total = sections * (perSection + 1);
  const made = Array.from({ length: total }, (_, n) => make(n));
  const docs = await putDocuments(db, null, made.map((m) => m.markdown));
  const editor = new ContentEditor(db, '');
  const now = new Date().toISOString();
  const ids: string[] = [];
  const page = (id: string, parent: string | null, pos: string, n: number): PageEntry => ({
    id, type: 'document', title: made[n]!.title, slug: `page-${n}`, parent, pos, doc: docs[n]!, createdAt: now, updatedAt: now,
    ...(made[n]!.description ? { description: made[n]!.description } : {}),
  });
  const top = Array.from({ length: sections }, () => newId());
  const topKeys = generateNKeysBetween(null, null, sections);
  top.forEach((id, i) => editor.setRaw(pageKey(id), page(id, null, topKeys[i]!, i)));
  editor.setRaw(childrenKey(null), [...top].sort());
  ids.push(...top);
  const childKeys = generateNKeysBetween(null, null, perSection);
  let n = sections;
  for (const parent of top) {
    const children = Array.from({ length: perSection }, () => newId());
    children.forEach((id, i) => editor.setRaw(pageKey(id), page(id, parent, childKeys[i]!, n++)));
    editor.setRaw(childrenKey(parent), [...children].sort());
    ids.push(...children);
  }
  const root = await editor.commit(db);
  const revision = newId();
  await db
    .insertInto('revisions')
    .values({ id: revision, space_id: space.id, organization_id: space.organization_id, parents: json([]), type: 'edits', root, created_by: null, created_at: new Date(), message: null })
    .execute();
  await db.updateTable('spaces').set({ revision_id: revision }).where('id', '=', space.id).execute();
  await reindexSpace(db, space.id, root);
  return ids;
}

/** Text of a block of a JSON document (its leaves, joined). */
export function textOf(node: any): string {
  if (node.object === 'leaf') return node.text;
  return [...(node.leaves ?? []), ...(node.nodes ?? [])].map(textOf).join('');
}
