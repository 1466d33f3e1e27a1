import { merge as diff3 } from 'node-diff3';
import type { Db } from '../platform/db/database.ts';
import { ContentEditor, getDocuments, putDocuments, sortPages, type PageEntry } from './model.ts';
import { sameValue, Tree, type Value } from './tree.ts';

/**
 * Three-way merge of revision contents: the changes from `base` to `theirs` are applied on top
 * of `ours`. Different pages merge independently; a page changed on both sides merges field by
 * field, and its markdown line by line (diff3). Children are sets ordered by each page's position,
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
  opts: { keepConflicts: boolean; labels?: { theirs: string; ours: string } },
): Promise<MergeOutcome> {
  const tree = new Tree(db);
  const [theirChanges, ourChanges] = await Promise.all([tree.diff(roots.base, roots.theirs), tree.diff(roots.base, roots.ours)]);
  const ours = new Map(ourChanges.map(([k, b, o]) => [k, { b, o }]));
  const editor = new ContentEditor(db, roots.ours, tree);
  const conflicts: Conflict[] = [];
  const touchedParents = new Set<string | null>();
  const labels = opts.labels ?? { theirs: 'change request', ours: 'space' };
  const docMerges: { page: string; base: string | null; ours: string | null; theirs: string | null }[] = [];
  const pending = new Map<string, PageEntry>();

  for (const [key, base, theirs] of theirChanges) {
    const other = ours.get(key);
    if (!other) {
      editor.setRaw(key, theirs);
      if (key.startsWith('p:')) {
        const p = (theirs ?? base) as PageEntry;
        touchedParents.add(p.parent);
      }
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
        if (opts.keepConflicts) editor.setRaw(key, kept);
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
          merged[f] = tf;
        }
      }
      for (const f of Object.keys(merged)) if (merged[f] === undefined) delete merged[f];
      if (clashes.length) conflicts.push({ page: t.id, title: t.title, reason: `${clashes.join(', ')} changed on both sides` });
      pending.set(t.id, merged as unknown as PageEntry);
      touchedParents.add(t.parent).add(o.parent);
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
      const result = diff3(lines(d.theirs), lines(d.base), lines(d.ours), { label: { a: labels.theirs, b: labels.ours } });
      const page = pending.get(d.page)!;
      if (result.conflict) conflicts.push({ page: d.page, title: page.title, reason: 'the same lines were changed on both sides' });
      if (!result.conflict || opts.keepConflicts) {
        const [hash] = await putDocuments(db, [result.result.join('\n')]);
        editor.setRaw(`p:${d.page}`, { ...page, doc: hash });
      }
    }
  }

  // A page whose parent is gone was added under a page deleted on the other side.
  for (const parent of touchedParents) {
    if (!parent) continue;
    for (const childId of await editor.childIds(parent)) {
      const child = await editor.page(childId);
      if (child && !(await editor.page(parent))) {
        conflicts.push({ page: child.id, title: child.title, reason: `its parent page ${parent} was deleted on the other side` });
        if (opts.keepConflicts) {
          // Keep the page reachable: it moves to the top level.
          editor.setRaw(`p:${child.id}`, { ...child, parent: null });
          editor.setRaw(`k:${parent}`, undefined);
          editor.setRaw('k:', [...new Set([...(await editor.childIds(null)), child.id])].sort());
          touchedParents.add(null);
        }
      }
    }
  }

  // Pages added on both sides may share a slug: the first in display order keeps it, the same
  // whichever side merged first.
  for (const parent of touchedParents) {
    const siblings = sortPages(await editor.children(parent));
    const seen = new Set<string>();
    for (const page of siblings) {
      let slug = page.slug;
      for (let i = 2; seen.has(slug); i++) slug = `${page.slug}-${i}`;
      seen.add(slug);
      if (slug !== page.slug) editor.setRaw(`p:${page.id}`, { ...page, slug });
    }
  }

  const root = await editor.commit(db);
  return { root, conflicts };
}

/** Whether a page still holds the markers a conflicting update left in it. */
export function hasConflictMarkers(markdown: string): boolean {
  return /^<<<<<<< /m.test(markdown) && /^=======$/m.test(markdown) && /^>>>>>>> /m.test(markdown);
}
