/**
 * What changed between two versions of a page, block by block: the longest common subsequence of
 * their top-level blocks, compared without their `key`s (Folio's keys follow positions, so a block
 * inserted above would otherwise make every block below it "changed"). A block that differs is a
 * removal then an addition, side by side.
 */
import type { JSONDocument } from './model.ts';
import { isRecord } from './model.ts';

export type BlockStatus = 'same' | 'added' | 'removed';

export interface DiffEntry {
  status: BlockStatus;
  block: JSONDocument['nodes'][number];
}

/** A block as text for comparison: its JSON without keys. */
export function comparable(value: unknown): string {
  return JSON.stringify(value, function (this: unknown, key, v) {
    return key === 'key' && isRecord(this) && typeof this.object === 'string' ? undefined : v;
  });
}

export function diffBlocks(before: JSONDocument | null, after: JSONDocument | null): DiffEntry[] {
  const a = before?.nodes ?? [];
  const b = after?.nodes ?? [];
  const ka = a.map(comparable);
  const kb = b.map(comparable);
  // Equal heads and tails need no table.
  let head = 0;
  while (head < a.length && head < b.length && ka[head] === kb[head]) head++;
  let tail = 0;
  while (tail < a.length - head && tail < b.length - head && ka[a.length - 1 - tail] === kb[b.length - 1 - tail]) tail++;
  const n = a.length - head - tail;
  const m = b.length - head - tail;
  // lengths[i][j]: LCS of a[head+i…] and b[head+j…], one row of m+1 per i.
  const lengths = new Uint32Array((n + 1) * (m + 1));
  const at = (i: number, j: number) => i * (m + 1) + j;
  for (let i = n - 1; i >= 0; i--) {
    for (let j = m - 1; j >= 0; j--) {
      lengths[at(i, j)] = ka[head + i] === kb[head + j] ? lengths[at(i + 1, j + 1)]! + 1 : Math.max(lengths[at(i + 1, j)]!, lengths[at(i, j + 1)]!);
    }
  }
  const out: DiffEntry[] = a.slice(0, head).map((_, k) => ({ status: 'same', block: b[k]! }));
  let i = 0;
  let j = 0;
  let removed: DiffEntry[] = [];
  let added: DiffEntry[] = [];
  // Removals and additions of one stretch are shown together: what was, then what is.
  const flush = () => {
    out.push(...removed, ...added);
    removed = [];
    added = [];
  };
  while (i < n || j < m) {
    if (i < n && j < m && ka[head + i] === kb[head + j]) {
      flush();
      out.push({ status: 'same', block: b[head + j]! });
      i++;
      j++;
    } else if (j < m && (i >= n || lengths[at(i, j + 1)]! >= lengths[at(i + 1, j)]!)) {
      added.push({ status: 'added', block: b[head + j]! });
      j++;
    } else {
      removed.push({ status: 'removed', block: a[head + i]! });
      i++;
    }
  }
  flush();
  for (let k = b.length - tail; k < b.length; k++) out.push({ status: 'same', block: b[k]! });
  return out;
}
