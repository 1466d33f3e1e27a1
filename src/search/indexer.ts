import { json, type Db } from '../platform/db/database.ts';
import { searchTextOf } from '../content/convert.ts';
import { ContentReader, getDocuments, type PageEntry } from '../content/model.ts';
import { EMPTY } from '../content/tree.ts';

/**
 * Brings a space's search rows from the content they describe to `root`. Only the pages that
 * differ are rewritten — plus the pages below a page whose title or slug changed, since their
 * paths and ancestors change with it — so a merge costs what it changed, not the space's size.
 */
export async function reindexSpace(db: Db, spaceId: string, root: string): Promise<void> {
  const state = await db.selectFrom('search_state').select('root').where('space_id', '=', spaceId).forUpdate().executeTakeFirst();
  const from = state?.root ?? EMPTY;
  if (from === root) return;
  const reader = new ContentReader(db, root);
  const diff = await reader.tree.diff(from, root);
  const affected = new Set<string>();
  const removed = new Set<string>();
  const renamed: string[] = [];
  for (const [key, before, after] of diff) {
    if (!key.startsWith('p:')) continue;
    const id = key.slice(2);
    if (!after) removed.add(id);
    else affected.add(id);
    const b = before as PageEntry | undefined;
    const a = after as PageEntry | undefined;
    if (a && b && (a.slug !== b.slug || a.title !== b.title || a.parent !== b.parent)) renamed.push(id);
  }
  // Descendants of renamed or moved pages have new paths and ancestors.
  const stack = [...renamed];
  while (stack.length) {
    for (const child of await reader.childIds(stack.pop()!)) {
      if (!affected.has(child)) {
        affected.add(child);
        stack.push(child);
      }
    }
  }
  if (removed.size) {
    await db.deleteFrom('search_pages').where('space_id', '=', spaceId).where('page_id', 'in', [...removed]).execute();
  }
  const pages = (await Promise.all([...affected].map((id) => reader.page(id)))).filter((p): p is PageEntry => !!p);
  const texts = await getDocuments(db, pages.map((p) => p.doc ?? ''));
  const rows = await Promise.all(
    pages.map(async (page) => {
      const ancestors = await reader.ancestors(page);
      const markdown = page.doc ? (texts.get(page.doc) ?? '') : '';
      const text = await searchTextOf(markdown);
      return {
        space_id: spaceId,
        page_id: page.id,
        title: page.title,
        description: page.description ?? '',
        path: [...ancestors, page].map((p) => p.slug).join('/'),
        ancestors: json(ancestors.map((a) => ({ title: a.title }))),
        sections: json(text.sections),
        body: text.body,
      };
    }),
  );
  for (let i = 0; i < rows.length; i += 500) {
    await db
      .insertInto('search_pages')
      .values(rows.slice(i, i + 500))
      .onConflict((oc) =>
        oc.columns(['space_id', 'page_id']).doUpdateSet((eb) => ({
          title: eb.ref('excluded.title'),
          description: eb.ref('excluded.description'),
          path: eb.ref('excluded.path'),
          ancestors: eb.ref('excluded.ancestors'),
          sections: eb.ref('excluded.sections'),
          body: eb.ref('excluded.body'),
        })),
      )
      .execute();
  }
  await db
    .insertInto('search_state')
    .values({ space_id: spaceId, root })
    .onConflict((oc) => oc.column('space_id').doUpdateSet({ root }))
    .execute();
}
