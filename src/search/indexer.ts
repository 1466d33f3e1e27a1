import { json, type Db } from '../platform/db/database.ts';
import { searchTextOf } from '../content/convert.ts';
import { ContentReader, getDocuments, type PageEntry } from '../content/model.ts';
import { EMPTY } from '../content/tree.ts';
import { searchConfigFor } from './language.ts';
import { indexText } from './segment.ts';
import type { Jobs } from '../platform/jobs.ts';
import { Hooks } from '../platform/hooks.ts';
import { lockIndexedRoot, reconfigureRows, setIndexedConfig, spaceIndexState, spaceLanguage, spacesFollowingOrganization, staleIndexes, writeIndexRows, type SearchRow } from './store.ts';

/**
 * What areas built on search react to: the rows of `pages` were written or removed (in the
 * transaction that wrote them). Ask's section vectors follow the index this way (src/wiring.ts);
 * `jobs` is the queue of the caller, when it has one, for work to do after the commit.
 */
export const searchIndexHooks = new Hooks<{
  written: { spaceId: string; pages: string[]; jobs: Jobs | undefined };
}>();

/** A row before its configuration is known: that is read in the transaction that writes it. */
type UnconfiguredRow = Omit<SearchRow, 'ts_config'>;

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
async function indexChanges(db: Db, spaceId: string, from: string, root: string): Promise<{ rows: UnconfiguredRow[]; removed: Set<string> }> {
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
      const headings = text.sections.map((s) => s.title).filter(Boolean);
      return {
        space_id: spaceId,
        page_id: page.id,
        title: page.title,
        description: page.description ?? '',
        path: [...ancestors, page].map((p) => p.slug).join('/'),
        ancestors: json(ancestors.map((a) => ({ title: a.title }))),
        sections: json(text.sections),
        terms_a: indexText(page.title),
        terms_b: indexText([page.description ?? '', ...headings].join('\n')),
        body: indexText(text.body),
        fuzzy: [page.title, ...headings].join('\n'),
      };
    }),
  );
  return { rows, removed };
}

/** Brings a space's search rows to `root` inside the caller's transaction (a new or copied space). */
export async function reindexSpace(db: Db, spaceId: string, root: string, jobs?: Jobs): Promise<void> {
  const from = (await lockIndexedRoot(db, spaceId)) ?? EMPTY;
  if (from === root) return;
  const { rows, removed } = await indexChanges(db, spaceId, from, root);
  await writeConfigured(db, spaceId, from, root, rows, removed, jobs);
}

/**
 * Writes rows in the configuration of the space's language, read in the caller's transaction
 * after the index's row lock: a language change's job (applySpaceLanguage) takes the same lock for
 * its last pass, so no row is left in a configuration the space no longer has.
 */
async function writeConfigured(trx: Db, spaceId: string, from: string, root: string, rows: UnconfiguredRow[], removed: Set<string>, jobs: Jobs | undefined): Promise<void> {
  const config = searchConfigFor((await spaceLanguage(trx, spaceId))?.language);
  const configured = rows.map((row) => ({ ...row, ts_config: config }));
  await writeIndexRows(trx, spaceId, root, configured, removed, from === EMPTY ? config : undefined);
  await searchIndexHooks.run('written', trx, { spaceId, pages: [...rows.map((r) => r.page_id), ...removed], jobs });
}

/**
 * Brings a space's search rows to its current content, after a merge has committed. The text of
 * changed pages is extracted outside any transaction (a large page converts on a worker thread
 * while the database serves other requests); the rows are then written in a short transaction
 * that first checks that no other merge moved the index meanwhile, and starts over if one did.
 * Concurrent merges therefore leave the index at the space's latest content, whatever their order.
 */
export async function refreshSearchIndex(db: Db, spaceId: string, jobs?: Jobs): Promise<void> {
  for (let attempt = 0; attempt < 5; attempt++) {
    const space = await spaceIndexState(db, spaceId);
    if (!space) return;
    const from = space.indexed ?? EMPTY;
    if (from === space.root) return;
    const { rows, removed } = await indexChanges(db, spaceId, from, space.root);
    const written = await db.transaction().execute(async (trx) => {
      if (((await lockIndexedRoot(trx, spaceId)) ?? EMPTY) !== from) return false;
      await writeConfigured(trx, spaceId, from, space.root, rows, removed, jobs);
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
export async function refreshStaleSearchIndexes(db: Db, jobs?: Jobs): Promise<number> {
  const stale = await staleIndexes(db, EMPTY);
  for (const { id } of stale) await refreshSearchIndex(db, id, jobs);
  return stale.length;
}

/** The job that moves a space's index to the configuration of its new language. */
export const SEARCH_LANGUAGE_JOB = 'search.language';

/**
 * Moves a space's rows to the text search configuration of its language, after the language
 * changed. Only the configuration column changes (segmentation follows the script, not the
 * language), and the database recomputes each row's tsvector from it: no page is read again.
 * Rows move in batches of short statements; the last pass holds the index's row lock, so a merge
 * writing rows meanwhile is either before it (and moved by it) or after it (and reads the new
 * language). Queries use both configurations until the job records the new one.
 */
export async function applySpaceLanguage(db: Db, spaceId: string): Promise<void> {
  const space = await spaceLanguage(db, spaceId);
  if (!space) return;
  const config = searchConfigFor(space.language);
  while ((await reconfigureRows(db, spaceId, config, 1000)) > 0);
  await db.transaction().execute(async (trx) => {
    await lockIndexedRoot(trx, spaceId);
    const current = searchConfigFor((await spaceLanguage(trx, spaceId))?.language);
    // Changed again since this job started: the job of that change finishes the work.
    if (current !== config) return;
    while ((await reconfigureRows(trx, spaceId, config, 1000)) > 0);
    await setIndexedConfig(trx, spaceId, config);
  });
}

/**
 * After an organization's default language changed (in the caller's transaction): the spaces
 * without a language of their own move to the new one, each by its `search.language` job.
 */
export async function followOrganizationLanguage(trx: Db, jobs: Jobs, organizationId: string): Promise<void> {
  for (const spaceId of await spacesFollowingOrganization(trx, organizationId)) await jobs.enqueue(SEARCH_LANGUAGE_JOB, { spaceId }, { db: trx });
}
