import assert from 'node:assert/strict';
import { test } from 'node:test';
import { diffBlocks } from '../app/src/editor/diff.ts';
import type { JSONDocument } from '../app/src/editor/convert.ts';

type Block = JSONDocument['nodes'][number];
const paragraph = (text: string, key?: string) =>
  ({ object: 'block', type: 'paragraph', ...(key ? { key } : {}), nodes: [{ object: 'text', leaves: [{ object: 'leaf', text, marks: [] }] }] }) as unknown as Block;
const texts = (parts: ReturnType<typeof diffBlocks>) =>
  parts.map((p) => `${p.kind}:${p.blocks.map((b) => JSON.stringify(b).match(/"text":"([^"]*)"/)![1]).join(',')}`);

test('a change request diff marks the blocks added and removed, a changed block as its old then its new version', () => {
  const before = ['a', 'b', 'c', 'd'].map((t) => paragraph(t));
  const after = ['a', 'B', 'c', 'e', 'd'].map((t) => paragraph(t));
  assert.deepEqual(texts(diffBlocks(before, after)), ['same:a', 'removed:b', 'added:B', 'same:c', 'added:e', 'same:d']);
});

test('a created page is all added, a deleted one all removed, an unchanged one all the same', () => {
  assert.deepEqual(texts(diffBlocks([], [paragraph('x'), paragraph('y')])), ['added:x,y']);
  assert.deepEqual(texts(diffBlocks([paragraph('x')], [])), ['removed:x']);
  assert.deepEqual(texts(diffBlocks([paragraph('x')], [paragraph('x')])), ['same:x']);
});

test('a block that only got a new node key is the same block', () => {
  assert.deepEqual(texts(diffBlocks([paragraph('x', 'k1')], [paragraph('x', 'k2')])), ['same:x']);
});

test('a long page with one edit in the middle diffs to that edit', () => {
  const before = Array.from({ length: 3000 }, (_, i) => paragraph(`p${i}`));
  const after = before.slice();
  after[1500] = paragraph('changed');
  const parts = diffBlocks(before, after);
  assert.deepEqual(parts.map((p) => [p.kind, p.blocks.length]), [['same', 1500], ['removed', 1], ['added', 1], ['same', 1499]]);
});
