import { mergeLines } from './merge-lines.ts';
import type { Db } from '../platform/db/database.ts';
import { ContentEditor, getDocuments, putDocuments, sortPages, type PageEntry } from './model.ts';
import { sameValue, Tree, type Value } from './tree.ts';

/**
 * Three-way merge of revision contents: the changes from `base` to `theirs` are applied on top
 * of `ours`. Different pages merge independently; a page changed on both sides merges field by
 * field, and its markdown line by line (three-way, merge-lines.ts). Children are sets ordered by each page's position,
 * so inserts on both sides never conflict and land in the same order whichever side merges first.
 *
 * Real conflicts are reported, never silently resolved: the same field or the same lines changed
 * differently on both sides, or a page edited (or given a new child) on one side and deleted on the
 * other. With `keepConflicts`, the result still holds every page: a conflicting markdown keeps both
 * versions between conflict markers, and for other fields `theirs` wins; the conflicts are listed.
 */

export interface Conflict {
  page: string;
  title: string;
  reason: string;
}

export interface MergeOutcome {
  root: string;
  conflicts: Conflict[];
}


type SetValue = string[] | undefined;

function mergeSets(base: SetValue, ours: SetValue, theirs: SetValue): SetValue {
  const b = new Set(base ?? []);
  const t = new Set(theirs ?? []);
  const result = new Set(ours ?? []);
  for (const id of t) if (!b.has(id)) result.add(id);
  for (const id of b) if (!t.has(id)) result.delete(id);
  return result.size ? [...result].sort() : undefined;
}

export async function mergeContents(
  db: Db,
  roots: { base: string; ours: string; theirs: string },
  opts: { spaceId: string | null; keepConflicts: boolean; labels?: { theirs: string; ours: string } },
): Promise<MergeOutcome> {
  const tree = new Tree(db);
  const [theirChanges, ourChanges] = await Promise.all([tree.diff(roots.base, roots.theirs), tree.diff(roots.base, roots.ours)]);
  const ours = new Map(ourChanges.map(([k, b, o]) => [k, { b, o }]));
  const editor = new ContentEditor(db, roots.ours, tree);
  const conflicts: Conflict[] = [];
  const labels = opts.labels ?? { theirs: 'change request', ours: 'space' };
  const docMerges: { page: string; base: string | null; ours: string | null; theirs: string | null }[] = [];
  const pending = new Map<string, PageEntry>();

  for (const [key, base, theirs] of theirChanges) {
    const other = ours.get(key);
    if (!other) {
      editor.setRaw(key, theirs);
      continue;
    }
    const mine = other.o;
    if (sameValue(mine, theirs)) continue;
    if (key.startsWith('k:')) {
      editor.setRaw(key, mergeSets(base as SetValue, mine as SetValue, theirs as SetValue));
      continue;
    }
    if (key.startsWith('p:')) {
      const b = base as PageEntry | undefined;
      const o = mine as PageEntry | undefined;
      const t = theirs as PageEntry | undefined;
      if (!t || !o) {
        const kept = (t ?? o)!;
        const [edited, deleted] = t ? [labels.theirs, labels.ours] : [labels.ours, labels.theirs];
        conflicts.push({ page: kept.id, title: kept.title, reason: `edited in the ${edited}, deleted in the ${deleted}` });
        // Kept even when the result is only used for its conflicts: which side deleted the page
        // must not change what the structure checks below find (the same conflicts either way).
        editor.setRaw(key, kept);
        continue;
      }
      const merged: Record<string, Value> = {};
      const fields = new Set([...Object.keys(b ?? {}), ...Object.keys(o), ...Object.keys(t)]);
      const clashes: string[] = [];
      for (const f of fields) {
        const bf = (b as Record<string, Value> | undefined)?.[f];
        const of = (o as unknown as Record<string, Value>)[f];
        const tf = (t as unknown as Record<string, Value>)[f];
        if (sameValue(tf, bf)) merged[f] = of;
        else if (sameValue(of, bf) || sameValue(of, tf)) merged[f] = tf;
        else if (f === 'updatedAt') merged[f] = (of as string) > (tf as string) ? of : tf;
        else if (f === 'doc') {
          merged[f] = tf;
          docMerges.push({ page: t.id, base: (bf as string | null) ?? null, ours: (of as string | null) ?? null, theirs: (tf as string | null) ?? null });
        } else {
          clashes.push(f);
          // `theirs` wins where conflicts are kept; otherwise the result only serves to find the
          // other conflicts, and keeping the base value finds the same ones in either merge order.
          merged[f] = opts.keepConflicts ? tf : bf;
        }
      }
      for (const f of Object.keys(merged)) if (merged[f] === undefined) delete merged[f];
      if (clashes.length) conflicts.push({ page: t.id, title: t.title, reason: `${clashes.join(', ')} changed on both sides` });
      pending.set(t.id, merged as unknown as PageEntry);
      editor.setRaw(key, merged);
      continue;
    }
    if (key === 'v') {
      const b = (base ?? {}) as Record<string, string>;
      const o = { ...((mine ?? {}) as Record<string, string>) };
      const t = (theirs ?? {}) as Record<string, string>;
      for (const name of new Set([...Object.keys(b), ...Object.keys(t)])) {
        if (sameValue(t[name], b[name])) continue;
        if (!sameValue(o[name], b[name]) && !sameValue(o[name], t[name])) {
          conflicts.push({ page: '', title: `variable ${name}`, reason: 'changed on both sides' });
        }
        if (t[name] === undefined) delete o[name];
        else o[name] = t[name]!;
      }
      editor.setRaw(key, Object.keys(o).length ? o : undefined);
      continue;
    }
    // Files and other entries are replaced whole: differing versions on both sides conflict.
    conflicts.push({ page: '', title: key, reason: 'changed on both sides' });
    if (opts.keepConflicts) editor.setRaw(key, theirs);
  }

  // Markdown changed on both sides: merge line by line.
  if (docMerges.length) {
    const texts = await getDocuments(db, docMerges.flatMap((d) => [d.base, d.ours, d.theirs]).filter((h): h is string => !!h));
    for (const d of docMerges) {
      const lines = (h: string | null) => (h ? (texts.get(h) ?? '') : '').split('\n');
      const result = mergeLines(lines(d.base), lines(d.ours), lines(d.theirs), labels);
      const page = pending.get(d.page)!;
      if (result.conflict) conflicts.push({ page: d.page, title: page.title, reason: 'the same lines were changed on both sides' });
      if (!result.conflict || opts.keepConflicts) {
        const [hash] = await putDocuments(db, opts.spaceId, [result.result.join('\n')]);
        editor.setRaw(`p:${d.page}`, { ...page, doc: hash });
      }
    }
  }

  await checkStructure(editor, ourChanges, theirChanges, conflicts, opts.keepConflicts);

  const root = await editor.commit(db);
  return { root, conflicts };
}

/**
 * Combining both sides can break the page tree even where no entry changed on both sides, so the
 * tree is checked around every page either side inserted, changed, moved or deleted (O(changes),
 * never O(pages)). Each check looks only at the merged result, so it finds the same problems
 * whichever side is `ours`: the merge must not depend on which branch is merged first.
 *  - Children sets agree with the pages' `parent`: with kept conflicts (`theirs` wins a clashing
 *    parent while both children sets got the page) or a kept page deleted on the other side.
 *  - A page added or moved under a page the other side deleted is a conflict. (This was checked
 *    only for pages `theirs` added, so deleting in the space and adding in the change request
 *    merged "cleanly" into a page whose parent did not exist.)
 *  - Two moves that are fine alone but put pages under each other (A into B on one side, B into
 *    A on the other) make a cycle unreachable from the top level: a conflict, not a silent loss.
 *  - Pages from both sides under one parent may share a slug: the first in display order keeps
 *    it, the same whichever side merged first. Only parents where both sides placed a page can
 *    have such a clash (one side alone keeps its slugs unique).
 * With `keepConflicts`, pages that would be unreachable move to the top level so nothing is lost.
 */
async function checkStructure(
  editor: ContentEditor,
  ourChanges: [string, Value | undefined, Value | undefined][],
  theirChanges: [string, Value | undefined, Value | undefined][],
  conflicts: Conflict[],
  keepConflicts: boolean,
) {
  const parentsOf = new Map<string, Set<string | null>>();
  const bySide = { ours: new Set<string>(), theirs: new Set<string>() };
  for (const [side, changes] of [['ours', ourChanges], ['theirs', theirChanges]] as const) {
    for (const [key, before, after] of changes) {
      if (!key.startsWith('p:')) continue;
      const id = key.slice(2);
      bySide[side].add(id);
      const parents = parentsOf.get(id) ?? new Set();
      for (const p of [before, after] as (PageEntry | undefined)[]) if (p) parents.add(p.parent);
      parentsOf.set(id, parents);
    }
  }
  const changed = [...parentsOf.keys()].sort();
  const reported = new Set(conflicts.map((c) => c.page));
  const conflict = (page: PageEntry, reason: string) => {
    if (!reported.has(page.id)) conflicts.push({ page: page.id, title: page.title, reason });
    reported.add(page.id);
  };
  let movedToTop = false;
  const moveToTop = async (page: PageEntry) => {
    await editor.setChildren(page.parent, (await editor.childIds(page.parent)).filter((c) => c !== page.id));
    editor.setRaw(`p:${page.id}`, { ...page, parent: null });
    await editor.setChildren(null, [...(await editor.childIds(null)), page.id]);
    movedToTop = true;
  };

  for (const id of changed) {
    const page = await editor.page(id);
    for (const parent of new Set([...parentsOf.get(id)!, ...(page ? [page.parent] : [])])) {
      const ids = await editor.childIds(parent);
      const listed = ids.includes(id);
      if (page?.parent === parent && !listed) await editor.setChildren(parent, [...ids, id]);
      if (page?.parent !== parent && listed) await editor.setChildren(parent, ids.filter((c) => c !== id));
    }
  }

  for (const id of changed) {
    const page = await editor.page(id);
    if (!page?.parent || (await editor.page(page.parent))) continue;
    conflict(page, `its parent page ${page.parent} was deleted on the other side`);
    if (keepConflicts) await moveToTop(page);
  }

  for (const id of changed) {
    const page = await editor.page(id);
    if (!page) continue;
    const seen = new Set<string>();
    let cycle = false;
    for (let p: PageEntry | undefined = page; p?.parent; p = await editor.page(p.parent)) {
      if (p.parent === id) cycle = true;
      if (cycle || seen.has(p.parent)) break;
      seen.add(p.parent);
    }
    if (!cycle) continue;
    for (const member of [id, ...seen]) {
      const moved = parentsOf.has(member) && (await editor.page(member))!;
      if (moved) conflict(moved, 'moved under each other on the two sides');
    }
    if (keepConflicts) await moveToTop(page);
  }

  const placed = async (ids: Set<string>) => {
    const out = new Set<string | null>();
    for (const id of ids) {
      const page = await editor.page(id);
      if (page) out.add(page.parent);
    }
    return out;
  };
  const [ourParents, theirParents] = [await placed(bySide.ours), await placed(bySide.theirs)];
  const shared = new Set([...ourParents].filter((p) => theirParents.has(p)));
  if (movedToTop) shared.add(null);
  for (const parent of shared) {
    const siblings = sortPages(await editor.children(parent));
    const seen = new Set<string>();
    for (const page of siblings) {
      let slug = page.slug;
      for (let i = 2; seen.has(slug); i++) slug = `${page.slug}-${i}`;
      seen.add(slug);
      if (slug !== page.slug) editor.setRaw(`p:${page.id}`, { ...page, slug });
    }
  }
}

/** Whether a page still holds the markers a conflicting update left in it. */
export function hasConflictMarkers(markdown: string): boolean {
  return /^<<<<<<< /m.test(markdown) && /^=======$/m.test(markdown) && /^>>>>>>> /m.test(markdown);
}
