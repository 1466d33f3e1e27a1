import { sql } from 'kysely';
import { json, type Db } from '../platform/db/database.ts';
import { searchTextOf } from '../content/convert.ts';
import { ContentReader, getDocuments, type PageEntry } from '../content/model.ts';
import { EMPTY } from '../content/tree.ts';

type SearchRow = {
  space_id: string;
  page_id: string;
  title: string;
  description: string;
  path: string;
  ancestors: ReturnType<typeof json>;
  sections: ReturnType<typeof json>;
  body: string;
};

/**
 * Characters of a page's text that are indexed. PostgreSQL refuses a tsvector over 1 MB (about
 * 750,000 characters of varied words), so without a bound a large page could never be indexed;
 * the start of a page is what search needs most.
 */
export const INDEXED_CHARS = 300_000;

function clipped(text: { sections: { id: string; title: string; body: string }[]; body: string }) {
  if (text.body.length <= INDEXED_CHARS) return text;
  let room = INDEXED_CHARS;
  const sections = text.sections.map((section) => {
    const body = section.body.slice(0, Math.max(0, room));
    room -= body.length;
    return { ...section, body };
  });
  return { sections, body: text.body.slice(0, INDEXED_CHARS) };
}

/**
 * The search rows that change between two roots of a space. Only the pages that differ are
 * read — plus the pages below a page whose title or slug changed, since their paths and ancestors
 * change with it — so the cost follows what changed, not the space's size.
 */
async function indexChanges(db: Db, spaceId: string, from: string, root: string): Promise<{ rows: SearchRow[]; removed: Set<string> }> {
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
  const pages = (await Promise.all([...affected].map((id) => reader.page(id)))).filter((p): p is PageEntry => !!p);
  const texts = await getDocuments(db, pages.map((p) => p.doc ?? ''));
  const rows = await Promise.all(
    pages.map(async (page) => {
      const ancestors = await reader.ancestors(page);
      const markdown = page.doc ? (texts.get(page.doc) ?? '') : '';
      const text = clipped(await searchTextOf(markdown));
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
  return { rows, removed };
}

/** Writes the changed rows and records `root` as the content the index describes. */
async function writeIndexChanges(db: Db, spaceId: string, root: string, { rows, removed }: { rows: SearchRow[]; removed: Set<string> }) {
  if (removed.size) {
    await db.deleteFrom('search_pages').where('space_id', '=', spaceId).where('page_id', 'in', [...removed]).execute();
  }
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

/** Brings a space's search rows to `root` inside the caller's transaction (a new or copied space). */
export async function reindexSpace(db: Db, spaceId: string, root: string): Promise<void> {
  const state = await db.selectFrom('search_state').select('root').where('space_id', '=', spaceId).forUpdate().executeTakeFirst();
  const from = state?.root ?? EMPTY;
  if (from === root) return;
  await writeIndexChanges(db, spaceId, root, await indexChanges(db, spaceId, from, root));
}

/** Spaces with the root of their current content and the root their search index describes. */
function indexState(db: Db) {
  return db
    .selectFrom('spaces')
    .innerJoin('revisions', 'revisions.id', 'spaces.revision_id')
    .leftJoin('search_state', 'search_state.space_id', 'spaces.id')
    .select(['spaces.id as id', 'revisions.root as root', 'search_state.root as indexed']);
}

/**
 * Brings a space's search rows to its current content, after a merge has committed. The text of
 * changed pages is extracted outside any transaction (a large page converts on a worker thread
 * while the database serves other requests); the rows are then written in a short transaction
 * that first checks that no other merge moved the index meanwhile, and starts over if one did.
 * Concurrent merges therefore leave the index at the space's latest content, whatever their order.
 */
export async function refreshSearchIndex(db: Db, spaceId: string): Promise<void> {
  for (let attempt = 0; attempt < 5; attempt++) {
    const space = await indexState(db).where('spaces.id', '=', spaceId).executeTakeFirst();
    if (!space) return;
    const from = space.indexed ?? EMPTY;
    if (from === space.root) return;
    const changes = await indexChanges(db, spaceId, from, space.root);
    const written = await db.transaction().execute(async (trx) => {
      const state = await trx.selectFrom('search_state').select('root').where('space_id', '=', spaceId).forUpdate().executeTakeFirst();
      if ((state?.root ?? EMPTY) !== from) return false;
      await writeIndexChanges(trx, spaceId, space.root, changes);
      return true;
    });
    if (written) return;
  }
  // Five merges overtook this one: the last of them brings the index up to date.
}

/**
 * Brings the index of every space whose content has moved past it up to date. A merge updates
 * the index after its commit, so a process killed in between (or whose update gave way to a later
 * merge that was then killed) leaves the index behind the content until the space's next merge:
 * run at start, before requests are served. Returns how many spaces it updated.
 */
export async function refreshStaleSearchIndexes(db: Db): Promise<number> {
  const stale = await indexState(db).where(sql<boolean>`coalesce(search_state.root, ${EMPTY}) <> revisions.root`).execute();
  for (const { id } of stale) await refreshSearchIndex(db, id);
  return stale.length;
}
