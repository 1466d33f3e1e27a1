import { diffArrays } from 'diff';

/**
 * Three-way merge of the lines of one page, in time that grows with the size of the page plus the
 * size of the edits (Myers' O(ND) diff of each side against the base), not with the square of the
 * page: an LCS-based diff3 takes minutes on a page whose blank lines repeat thousands of times.
 *
 * The lines all three versions share at the start and the end are set aside first; the middle is
 * diffed base → each side. Edits of the two sides that overlap or touch are one region: identical
 * edits merge, different ones are a conflict written between markers, `theirs` first.
 * The diff's work is about lines × edit length; past a fixed budget of that product the edits
 * are not diffed finely: the whole middle counts as replaced, so a huge rewrite on both sides is a
 * conflict rather than seconds of work. The budget depends only on the input, so a merge gives
 * the same result on any machine.
 */

const WORK_BUDGET = 10_000_000;
const MAX_EDIT = 5_000;

interface Hunk {
  /** Base lines [start, end) are replaced by `lines`. */
  start: number;
  end: number;
  lines: string[];
}

function hunks(base: string[], side: string[]): Hunk[] {
  const lines = Math.max(1, base.length + side.length);
  const changes = diffArrays(base, side, { maxEditLength: Math.max(1, Math.min(MAX_EDIT, Math.floor(WORK_BUDGET / lines))) });
  if (!changes) return [{ start: 0, end: base.length, lines: side }];
  const out: Hunk[] = [];
  let at = 0;
  let open: Hunk | undefined;
  for (const change of changes) {
    if (!change.added && !change.removed) {
      if (open) out.push(open);
      open = undefined;
      at += change.count;
      continue;
    }
    open ??= { start: at, end: at, lines: [] };
    if (change.removed) {
      at += change.count;
      open.end = at;
    } else open.lines.push(...change.value);
  }
  if (open) out.push(open);
  return out;
}

/** The lines of base[start, end) with a side's hunks inside that range applied. */
function apply(base: string[], start: number, end: number, side: Hunk[]): string[] {
  const out: string[] = [];
  let at = start;
  for (const h of side) {
    for (; at < h.start; at++) out.push(base[at]!);
    out.push(...h.lines);
    at = h.end;
  }
  for (; at < end; at++) out.push(base[at]!);
  return out;
}

const same = (a: string[], b: string[]) => a.length === b.length && a.every((line, i) => line === b[i]);

/**
 * Merges `ours` and `theirs`, both edits of `base`. With labels, a conflict is written between
 * markers (a change request's merge); with `'theirs'`, `theirs` wins it.
 */
export function mergeLines(
  base: string[],
  ours: string[],
  theirs: string[],
  labels: { ours: string; theirs: string } | 'theirs',
): { conflict: boolean; result: string[] } {
  // Lines shared at both ends by all three versions.
  let head = 0;
  const shortest = Math.min(base.length, ours.length, theirs.length);
  while (head < shortest && base[head] === ours[head] && base[head] === theirs[head]) head++;
  let tail = 0;
  while (
    tail < shortest - head &&
    base[base.length - 1 - tail] === ours[ours.length - 1 - tail] &&
    base[base.length - 1 - tail] === theirs[theirs.length - 1 - tail]
  ) {
    tail++;
  }
  const mid = (lines: string[]) => lines.slice(head, lines.length - tail);
  const b = mid(base);
  const o = hunks(b, mid(ours)).map((h) => ({ ...h, side: 'ours' as const }));
  const t = hunks(b, mid(theirs)).map((h) => ({ ...h, side: 'theirs' as const }));
  const all = [...o, ...t].sort((x, y) => x.start - y.start || x.end - y.end);

  const result = base.slice(0, head);
  let conflict = false;
  let at = 0;
  for (let i = 0; i < all.length; ) {
    // A region: hunks that overlap or touch, from either side.
    const start = all[i]!.start;
    let end = all[i]!.end;
    const region = [all[i]!];
    for (i++; i < all.length && all[i]!.start <= end; i++) {
      region.push(all[i]!);
      end = Math.max(end, all[i]!.end);
    }
    for (; at < start; at++) result.push(b[at]!);
    const mine = region.filter((h) => h.side === 'ours');
    const other = region.filter((h) => h.side === 'theirs');
    const ourLines = apply(b, start, end, mine);
    const theirLines = apply(b, start, end, other);
    if (!mine.length) result.push(...theirLines);
    else if (!other.length || same(ourLines, theirLines)) result.push(...ourLines);
    else {
      conflict = true;
      // 'theirs': the other side's lines win a conflict (no markers), for callers that only keep
      // one side's way of writing where the other did not change anything (src/git/keep-lines.ts).
      if (labels === 'theirs') result.push(...theirLines);
      else result.push(`<<<<<<< ${labels.theirs}`, ...theirLines, '=======', ...ourLines, `>>>>>>> ${labels.ours}`);
    }
    at = end;
  }
  for (; at < b.length; at++) result.push(b[at]!);
  result.push(...base.slice(base.length - tail));
  return { conflict, result };
}
