/**
 * Which top-level blocks of a page a change added, removed or kept: the longest common
 * subsequence of the two block lists, blocks compared as their JSON without node keys (a block
 * that only got a new key is the same block). Linear in memory per row; pages of a few thousand
 * blocks diff in milliseconds.
 */
import type { JSONDocument } from './convert.ts';

type Block = JSONDocument['nodes'][number];

export type DiffPart = { kind: 'same' | 'added' | 'removed'; blocks: Block[] };

/** A block's content as text, keys aside: equal texts are the same block. */
function fingerprint(block: Block): string {
  return JSON.stringify(block, (key, value) => (key === 'key' ? undefined : value));
}

export function diffBlocks(before: Block[], after: Block[]): DiffPart[] {
  const a = before.map(fingerprint);
  const b = after.map(fingerprint);
  // Common head and tail first: most edits touch a few blocks in the middle.
  let head = 0;
  while (head < a.length && head < b.length && a[head] === b[head]) head++;
  let tail = 0;
  while (tail < a.length - head && tail < b.length - head && a[a.length - 1 - tail] === b[b.length - 1 - tail]) tail++;
  const midA = a.slice(head, a.length - tail);
  const midB = b.slice(head, b.length - tail);
  // LCS lengths, row by row from the end.
  const n = midA.length;
  const m = midB.length;
  const table = Array.from({ length: n + 1 }, () => new Uint32Array(m + 1));
  for (let i = n - 1; i >= 0; i--) {
    for (let j = m - 1; j >= 0; j--) {
      table[i]![j] = midA[i] === midB[j] ? table[i + 1]![j + 1]! + 1 : Math.max(table[i + 1]![j]!, table[i]![j + 1]!);
    }
  }
  const parts: DiffPart[] = [];
  const push = (kind: DiffPart['kind'], block: Block) => {
    const last = parts[parts.length - 1];
    if (last && last.kind === kind) last.blocks.push(block);
    else parts.push({ kind, blocks: [block] });
  };
  for (let k = 0; k < head; k++) push('same', after[k]!);
  let i = 0;
  let j = 0;
  while (i < n || j < m) {
    if (i < n && j < m && midA[i] === midB[j]) {
      push('same', after[head + j]!);
      i++;
      j++;
    } else if (j === m || (i < n && table[i + 1]![j]! >= table[i]![j + 1]!)) {
      // On a tie, removed first: a changed block reads as its old, then its new version.
      push('removed', before[head + i]!);
      i++;
    } else {
      push('added', after[head + j]!);
      j++;
    }
  }
  for (let k = after.length - tail; k < after.length; k++) push('same', after[k]!);
  return parts;
}
