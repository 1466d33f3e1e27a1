import type {
  DocumentBlockCode,
  DocumentBlockImage,
  DocumentBlockImages,
  DocumentBlockMath,
  DocumentBlockParagraph,
  DocumentInline,
  DocumentInlineImage,
  DocumentInlineLink,
  DocumentTextLeaf,
  TextAlignment,
} from '@gitbook/api';
import { type Block, type InlineOrText, type MarkType, emoji, markKey, markObjects, sortMarks, textNode } from './shared.ts';

/**
 * What the reader builds with: pieces of rich text (text with its marks, or an inline node) and
 * the blocks and inlines made from them, plus the attribute values tags and HTML share.
 */

export type Piece = { kind: 'text'; text: string; marks: MarkType[] } | { kind: 'inline'; node: DocumentInline };

export function paragraph(nodes: InlineOrText[], align?: string): DocumentBlockParagraph {
  return { object: 'block', type: 'paragraph', data: align ? { align: align as TextAlignment } : {}, nodes };
}

export function leaf(text: string, marks: MarkType[] = []): DocumentTextLeaf {
  return { object: 'leaf', text, marks: markObjects(sortMarks(marks)) };
}

/** Joins pieces into the node list of a block: adjacent texts share one text node, equal marks one leaf. */
export function assemble(pieces: Piece[]): InlineOrText[] {
  const out: InlineOrText[] = [];
  let leaves: { text: string; marks: MarkType[] }[] = [];
  const flush = () => {
    if (leaves.length > 0) out.push(textNode(leaves.map((l) => leaf(l.text, l.marks))));
    leaves = [];
  };
  for (const piece of pieces) {
    if (piece.kind === 'inline') {
      flush();
      out.push(piece.node);
      continue;
    }
    if (piece.text === '') continue;
    const marks = sortMarks(piece.marks);
    const last = leaves.at(-1);
    if (last && last.marks.join() === marks.join()) last.text += piece.text;
    else leaves.push({ text: piece.text, marks });
  }
  flush();
  if (out.length === 0) out.push(textNode([leaf('')]));
  return out;
}

/**
 * Removes whitespace (line breaks from `<br>` included) at the very start and end of a block, as
 * markdown does; code keeps its spaces.
 */
export function trimEdges(pieces: Piece[], keep: { start?: boolean; end?: boolean } = {}): Piece[] {
  const out = pieces.map((p) => ({ ...p }));
  for (const p of keep.start ? [] : out) {
    if (p.kind !== 'text' || p.marks.includes('code')) break;
    p.text = p.text.replace(/^\s+/, '');
    if (p.text !== '') break;
  }
  for (let i = keep.end ? -1 : out.length - 1; i >= 0; i--) {
    const p = out[i]!;
    if (p.kind !== 'text' || p.marks.includes('code')) break;
    p.text = p.text.trimEnd();
    if (p.text !== '') break;
  }
  return out;
}

export function plainOfPieces(pieces: Piece[]): string {
  return pieces
    .map((p) => {
      if (p.kind === 'text') return p.text;
      if (p.node.type === 'inline-math') return `$$${p.node.data.formula}$$`;
      if (p.node.type === 'expression') return p.node.data.expression;
      if (p.node.type === 'emoji') return emoji(p.node.data.code);
      if (p.node.type === 'button') return p.node.data.label;
      if (p.node.type === 'annotation') return p.node.nodes.map((t) => t.leaves.map((l) => l.text).join('')).join('');
      return '';
    })
    .join('');
}

/** Merges neighbouring text nodes (and their equal-marked leaves) so a rebuilt paragraph is canonical. */
export function mergeTexts(nodes: InlineOrText[]): InlineOrText[] {
  const pieces: Piece[] = [];
  for (const node of nodes) {
    if (node.object === 'text') {
      for (const l of node.leaves) pieces.push({ kind: 'text', text: l.text, marks: l.marks.map(markKey) });
    } else pieces.push({ kind: 'inline', node });
  }
  return assemble(pieces);
}

export function codeBlock(value: string, data: DocumentBlockCode['data']): DocumentBlockCode {
  return {
    object: 'block',
    type: 'code',
    data,
    nodes: value.split('\n').map((line) => ({ object: 'block', type: 'code-line', data: {}, nodes: [textNode([leaf(line)])] })),
  };
}

/** A void block (one that holds no blocks), as the one-element list a tag stands for. */
export function voidBlock<T extends Block['type']>(type: T, data: Extract<Block, { type: T }>['data']): Block[] {
  return [{ object: 'block', type, data, isVoid: true } as Block];
}

export function mathBlock(formula: string): DocumentBlockMath {
  return { object: 'block', type: 'math', data: { formula }, isVoid: true };
}

export function imageBlock(ref: DocumentBlockImage['data']['ref'], alt: string, caption: InlineOrText[] | null): DocumentBlockImage {
  const fragments: DocumentBlockImage['fragments'] = caption ? [{ object: 'fragment', fragment: 'caption', nodes: [paragraph(caption)] }] : [];
  return { object: 'block', type: 'image', data: { ref, ...(alt ? { alt } : {}) }, fragments, isVoid: true };
}

export function imagesBlock(nodes: DocumentBlockImage[]): DocumentBlockImages {
  return { object: 'block', type: 'images', data: {}, nodes, isVoid: false };
}

export function inlineImage(ref: DocumentInlineImage['data']['ref'], alt: string, caption: string): DocumentInlineImage {
  return {
    object: 'inline',
    type: 'inline-image',
    data: { ref, ...(alt ? { alt } : {}), ...(caption ? { caption } : {}) },
    isVoid: true,
  };
}

export function linkParagraph(ref: DocumentInlineLink['data']['ref'], text: string): DocumentBlockParagraph {
  return paragraph([{ object: 'inline', type: 'link', data: { ref }, nodes: [textNode([leaf(text)])], isVoid: false }]);
}

/** `50%` → `{ unit: '%', value: 50 }`, `120` → 120 (the official `Length`). */
export function parseLength(value: string | undefined): Length | undefined {
  if (value === undefined || value.trim() === '') return undefined;
  const m = /^\s*(-?\d+(?:\.\d+)?(?:e[-+]?\d+)?)\s*([a-z%]*)\s*$/i.exec(value);
  if (!m) return undefined;
  const n = Number(m[1]);
  if (!Number.isFinite(n)) return undefined;
  return m[2] ? { unit: m[2], value: n } : n;
}
export type Length = number | { unit: string; value: number };

export const isTrue = (value: string | undefined) => value === 'true' || value === '';
