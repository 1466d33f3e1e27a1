import type {
  DocumentBlockHeading,
  DocumentBlockListItem,
  DocumentBlockQuote,
  TextAlignment,
} from '@gitbook/api';
import type * as md from 'mdast';
import { type Block, textNode } from './shared.ts';
import { tokenizeHtml } from './tags.ts';
import { IN_LIST_ITEM, IN_QUOTE } from './parse-containers.ts';
import { phrasing } from './parse-inline.ts';
import { assemble, codeBlock, imageBlock, imagesBlock, leaf, mathBlock, mergeTexts, paragraph, trimEdges } from './parse-nodes.ts';
import type { Reader } from './parse-reader.ts';
import { MATH_INFO } from './parse-source.ts';

/**
 * Markdown's own blocks: paragraphs, headings (with their anchors), quotes, lists, fenced code, GFM
 * tables and footnotes no reference reads.
 */

/**
 * Which edges of a block hold whitespace written on purpose: GitBook writes a space that ends (or
 * starts) a paragraph as `&#x20;` and a line break that ends one as `<br>`; those are content.
 */
function spelledOutEdges(r: Reader, node: md.Node): { start: boolean; end: boolean } {
  const raw = r.raw(node);
  const space = /&#(?:x20|32|x9|9);/i;
  return {
    // A paragraph may also start with a line break: GitBook writes it `\` alone on the first line.
    start: new RegExp(`^(?:#{1,6}[ \\t]+)?${space.source}`, 'i').test(raw) || /^\\\r?\n/.test(raw),
    end: new RegExp(`(?:${space.source}|<br\\s*/?>)(?:[ \\t]*<a [^>]*></a>)?[ \\t]*#*[ \\t]*$`, 'i').test(raw),
  };
}

/** A paragraph's block: none when it holds only whitespace (markdown can't write an empty paragraph). */
export function paragraphBlock(r: Reader, node: md.Paragraph, allowed: Set<string>, align?: string): Block[] {
  const pieces = trimEdges(phrasing(r, node.children, []), spelledOutEdges(r, node)).filter((p) => p.kind === 'inline' || p.text !== '');
  if (pieces.length === 0) return [];
  // A paragraph of nothing but a formula is a math block.
  const only = pieces.length === 1 ? pieces[0] : undefined;
  if (!align && only?.kind === 'inline' && only.node.type === 'inline-math') return [mathBlock(only.node.data.formula)];
  // A paragraph of nothing but images is an images block, where one may stand.
  const images = pieces.flatMap((p) => (p.kind === 'inline' && p.node.type === 'inline-image' ? [p.node] : []));
  const onlyImages = pieces.every((p) => (p.kind === 'inline' ? p.node.type === 'inline-image' : p.text.trim() === ''));
  if (!align && allowed.has('images') && images.length > 0 && onlyImages && images.every((img) => !img.data.size && !img.data.refDark)) {
    return [imagesBlock(images.map(({ data }) => imageBlock(data.ref, data.alt ?? '', data.caption ? [textNode([leaf(data.caption)])] : null)))];
  }
  return [paragraph(assemble(pieces), align)];
}

export function heading(r: Reader, node: md.Heading, align?: string): DocumentBlockHeading {
  let children = node.children;
  let id: string | undefined;
  // GitBook writes custom anchors as a trailing `<a href="#id" id="id"></a>`.
  let tail = children.length;
  while (tail > 0 && children[tail - 1]!.type === 'html') tail--;
  if (tail < children.length) {
    const html = children
      .slice(tail)
      .map((c) => (c as md.Html).value)
      .join('');
    const tokens = tokenizeHtml(html);
    const anchor = tokens.length === 2 && tokens[0]!.kind === 'open' && tokens[0]!.name === 'a' && tokens[1]!.kind === 'close' ? tokens[0]!.attrs.id : undefined;
    if (anchor && /^[-a-z0-9.+_]+$/.test(anchor)) {
      id = anchor;
      children = children.slice(0, tail);
    }
  }
  const pieces = trimEdges(
    phrasing(r, children, []).map((p) => (p.kind === 'text' ? { ...p, text: p.text.replace(/\n/g, ' ') } : p)),
    spelledOutEdges(r, node),
  );
  // GitBook writes the text, a space, then the anchor: spaces beyond that one end the text
  // (`## DeepL  <a href="#deepl" id="deepl"></a>` is the heading `DeepL `).
  const before = id !== undefined ? children.at(-1) : undefined;
  if (before?.type === 'text') {
    const spaces = / ( +)$/.exec(before.value)?.[1];
    if (spaces && (children.length > 1 || before.value.trim() !== '')) pieces.push({ kind: 'text', text: spaces, marks: [] });
  }
  const type = headingType(node.depth);
  const data: DocumentBlockHeading['data'] = id ? { id } : {};
  if (align) data.align = align as TextAlignment;
  const block: DocumentBlockHeading = { object: 'block', type, data, nodes: assemble(pieces) };
  r.headingDepth.set(block, node.depth);
  return block;
}

/**
 * The heading block of a markdown heading depth, as GitBook maps them: `#` is the page title, so
 * the body's `##` is heading-1, `###` heading-2 and `####` heading-3. A `#` inside the body (the
 * title line is taken off before the body is read) is a heading-1 too, and `#####`/`######` are
 * heading-3: the document has three levels.
 */
export function headingType(depth: number): 'heading-1' | 'heading-2' | 'heading-3' {
  return depth <= 2 ? 'heading-1' : depth === 3 ? 'heading-2' : 'heading-3';
}

/** `>` quote. */
export function blockquote(r: Reader, node: md.Blockquote): DocumentBlockQuote {
  return {
    object: 'block',
    type: 'blockquote',
    data: {},
    nodes: r.flow(node.children, IN_QUOTE) as DocumentBlockQuote['nodes'],
  };
}

export function list(r: Reader, node: md.List): Block {
  const tasks = node.children.some((item) => typeof item.checked === 'boolean');
  const items: DocumentBlockListItem[] = node.children.map((item) => {
    const nodes = r.flow(item.children, IN_LIST_ITEM) as DocumentBlockListItem['nodes'];
    if (nodes.length === 0) nodes.push(paragraph(assemble([])));
    return { object: 'block', type: 'list-item', data: tasks ? { checked: item.checked === true } : {}, nodes };
  });
  if (tasks) return { object: 'block', type: 'list-tasks', data: {}, nodes: items };
  if (!node.ordered) return { object: 'block', type: 'list-unordered', data: {}, nodes: items };
  const start = node.start ?? 1;
  return { object: 'block', type: 'list-ordered', data: start === 1 ? {} : { start }, nodes: items };
}

export function fencedCode(r: Reader, node: md.Code): Block {
  const value = r.restore(node.value);
  if (node.lang === MATH_INFO) return mathBlock(value);
  return codeBlock(value, node.lang ? { syntax: r.restore(node.lang) } : {});
}

/** A footnote definition no reference reads as an annotation: its blocks, after its `[^label]: `. */
export function footnoteBlocks(r: Reader, node: md.FootnoteDefinition, allowed: Set<string>): Block[] {
  // Definitions referenced by an annotation are read there.
  if (r.referenced.has(node.identifier)) return [];
  const blocks = r.flow(node.children, allowed);
  const label = `[^${node.label ?? node.identifier}]: `;
  const first = blocks[0];
  if (first?.type === 'paragraph') first.nodes = mergeTexts([textNode([leaf(label)]), ...first.nodes]);
  else blocks.unshift(paragraph([textNode([leaf(label.trimEnd())])]));
  return blocks;
}
