import type { DocumentBlockCode, DocumentBlockDrawing, DocumentBlockExpandable, DocumentBlockImage, DocumentBlockImages } from '@gitbook/api';
import type * as md from 'mdast';
import { type Block, type InlineOrText, imageRefFromUrl, textNode } from './shared.ts';
import { type HtmlToken, tokenizeHtml } from './tags.ts';
import { heading, paragraphBlock } from './parse-blocks.ts';
import { IN_EXPANDABLE } from './parse-containers.ts';
import { htmlTable } from './parse-html-table.ts';
import { type Piece, assemble, imageBlock, imagesBlock, isTrue, leaf, paragraph, parseLength } from './parse-nodes.ts';
import type { Reader } from './parse-reader.ts';

/**
 * HTML blocks: `<pre>` code, `<table>`s (parse-html-table.ts), `<figure>` images, aligned `<p>` and
 * `<hN>`, `<details>` expandables; any other HTML leaves its text, read as markdown.
 */

/** Inline tags an unknown HTML block keeps when its text is read as markdown. */
const INLINE_TAG = /^<\/?(b|strong|i|em|s|del|strike|sup|sub|kbd|code|br|img|mark|a)(\s[^>]*)?\/?>$/i;

export function htmlBlock(r: Reader, node: md.Html, allowed: Set<string>): Block[] {
  const html = r.restore(node.value).trim();
  const tokens = tokenizeHtml(html);
  const first = tokens.find((t) => t.kind !== 'text' || t.text.trim() !== '');
  if (!first) return [];
  if (first.kind === 'open') {
    if (first.name === 'pre') {
      const code = preCode(tokens);
      if (code) return [code];
    }
    if (first.name === 'img' && /(?:^|\s)gitbook-drawing(?:\s|$)/.test(first.attrs.class ?? '') && first.attrs.src !== undefined) {
      // `<img … class="gitbook-drawing">`: a drawing of the space's files. The drawing block holds
      // only its file, so one drawn elsewhere (a URL) stays an image, which keeps its text too.
      const ref = imageRefFromUrl(first.attrs.src);
      if (ref.kind === 'file') {
        const drawing: DocumentBlockDrawing = { object: 'block', type: 'drawing', data: { ref }, isVoid: true };
        return [drawing];
      }
      return [imagesBlock([imageBlock(ref, first.attrs.alt ?? '', null)])];
    }
    if (first.name === 'table') {
      const table = htmlTable(r, html, tokens);
      if (table) return [table];
    }
    if (first.name === 'figure' || (first.name === 'div' && tokens.some((t) => t.kind === 'open' && t.name === 'figure'))) {
      const images = figures(r, html, tokens, first.name === 'div' ? first.attrs : {});
      if (images) return [images];
    }
    if (first.name === 'p' || /^h[1-6]$/.test(first.name)) {
      const last = tokens.at(-1);
      if (last?.kind === 'close' && last.name === first.name && tokens.filter((t) => t.kind === 'open' && t.name === first.name).length === 1) {
        const inner = html.slice(first.end, last.start);
        const align = ({ center: 'center', right: 'end', left: 'start' } as Record<string, string>)[first.attrs.align ?? ''];
        const { reader, root } = r.nested(inner.replace(/\n/g, ' '));
        const para = root.children[0];
        if (root.children.length === 1 && para?.type === 'paragraph') {
          if (first.name === 'p') return paragraphBlock(reader, para, allowed, align);
          // `<h2 align="center">` is an aligned heading-1, as `##` is.
          const depth = Number(first.name[1]) as md.Heading['depth'];
          return [heading(reader, { type: 'heading', depth, children: para.children }, align)];
        }
      }
    }
  }
  if (tokens.length > 0 && tokens.every((t) => t.kind === 'text' && t.text.trim() === '')) return [];
  // Other HTML: its text, read as markdown. Inline tags we know are kept the first time; any `<`
  // left is escaped, and nested HTML keeps no tags at all, so this always ends.
  const text = html
    .replace(/<(script|style)\b[\s\S]*?<\/\1\s*>/gi, '')
    .replace(/<!--[\s\S]*?-->/g, '')
    .replace(/<[^<>]*>/g, (t) => (r.htmlDepth === 0 && INLINE_TAG.test(t) ? t.replace(/^</, '\uE003') : ''))
    .replace(/</g, '&lt;')
    .replace(/\uE003/g, '<');
  const { reader, root } = r.nested(text);
  return reader.flow(root.children, allowed);
}

/** `<details>` … `</details>`: an expandable whose title is the `<summary>`. */
export function expandable(r: Reader, open: md.Html, inner: md.RootContent[]): DocumentBlockExpandable {
  const tokens = tokenizeHtml(open.value);
  const details = tokens.find((t) => t.kind === 'open' && t.name === 'details');
  const defaultExpanded = details?.kind === 'open' && 'open' in details.attrs;
  let summary = summaryPieces(r, open.value);
  let body = inner;
  if (summary === null && inner[0]?.type === 'html') {
    summary = summaryPieces(r, inner[0].value);
    if (summary !== null) body = inner.slice(1);
  }
  const title = paragraph(assemble(summary ?? []));
  const blocks = r.flow(body, IN_EXPANDABLE);
  if (blocks.length === 0) blocks.push(paragraph(assemble([])));
  return {
    object: 'block',
    type: 'expandable',
    data: defaultExpanded ? { defaultExpanded: true } : {},
    fragments: [
      { object: 'fragment', fragment: 'expandable-title', type: 'expandable-title', nodes: [title] },
      { object: 'fragment', fragment: 'expandable-body', type: 'expandable-body', nodes: blocks as DocumentBlockExpandable['fragments'][1]['nodes'] },
    ] as DocumentBlockExpandable['fragments'],
    isVoid: true,
  };
}

function summaryPieces(r: Reader, html: string): Piece[] | null {
  const lower = html.toLowerCase();
  const start = lower.indexOf('<summary');
  if (start < 0) return null;
  const open = lower.indexOf('>', start);
  const close = lower.lastIndexOf('</summary');
  if (open < 0 || close < open) return null;
  return r.inlineMarkdown(html.slice(open + 1, close), [], { keepSpaces: true });
}

/** `<figure>`s (in a `<div>` carrying the block's alignment, width and frame): an images block. */
function figures(r: Reader, html: string, tokens: HtmlToken[], wrapper: Record<string, string>): DocumentBlockImages | null {
  const images: DocumentBlockImage[] = [];
  for (let k = 0; k < tokens.length; k++) {
    const t = tokens[k]!;
    if (t.kind !== 'open' || t.name !== 'figure') continue;
    let img: Record<string, string> | undefined;
    let dark: string | undefined;
    let caption: InlineOrText[] | null = null;
    for (k++; k < tokens.length; k++) {
      const u = tokens[k]!;
      if (u.kind === 'close' && u.name === 'figure') break;
      if (u.kind === 'open' && u.name === 'img') img = u.attrs;
      if (u.kind === 'open' && u.name === 'source' && (u.attrs.media ?? '').includes('dark')) dark = u.attrs.srcset;
      if (u.kind === 'open' && u.name === 'figcaption') {
        // The `</figcaption>` after it, searched from here on (not from the start).
        let close = k + 1;
        for (; close < tokens.length; close++) {
          const v = tokens[close]!;
          if (v.kind === 'close' && v.name === 'figcaption') break;
        }
        if (close < tokens.length) {
          const inner = html.slice(u.end, tokens[close]!.start).trim().replace(/^<p>/i, '').replace(/<\/p>$/i, '');
          const pieces = r.inlineMarkdown(inner, [], { emojiAsText: true });
          caption = pieces.some((p) => p.kind === 'inline' || p.text !== '') ? assemble(pieces) : null;
          k = close;
        }
      }
    }
    if (!img || img.src === undefined) return null;
    const image = imageBlock(imageRefFromUrl(img.src), img.alt ?? '', caption);
    if (dark !== undefined) image.data.refDark = imageRefFromUrl(dark);
    const width = parseLength(img.width);
    if (width !== undefined) image.data.width = width;
    const height = parseLength(img.height);
    if (height !== undefined) image.data.height = height;
    images.push(image);
  }
  if (images.length === 0) return null;
  const block = imagesBlock(images);
  const align = wrapper.align;
  if (align === 'left' || align === 'right' || align === 'center') block.data.align = align;
  // `data-full-width="false"` is kept as such: GitBook writes it for images switched back from full width.
  if (wrapper['data-full-width'] === 'false') block.data.fullWidth = false;
  else if (isTrue(wrapper['data-full-width'])) block.data.fullWidth = true;
  if (isTrue(wrapper['data-with-frame'])) block.data.withFrame = true;
  return block;
}

/**
 * `<pre class="language-yaml"><code class="lang-yaml">…</code></pre>`: how GitBook writes a code
 * block some of whose lines are highlighted, each such line (its newline included) in `<strong>`.
 * Highlighting is what the document can hold (`code-line` `data.highlighted`); other tags inside
 * (`<em>`, links) have no place in a code line and leave only their text. Every line is written
 * with its newline, so one newline at the very end is the last line's, not an empty line.
 */
function preCode(tokens: HtmlToken[]): DocumentBlockCode | null {
  const pre = tokens.find((t) => t.kind !== 'text' || t.text.trim() !== '');
  const open = tokens.findIndex((t) => t.kind === 'open' && t.name === 'code');
  let close = tokens.length - 1;
  while (close > open && !(tokens[close]!.kind === 'close' && (tokens[close] as { name: string }).name === 'code')) close--;
  if (pre?.kind !== 'open' || open < 0 || close <= open) return null;
  // Nothing but the `<pre>` may stand before the code, nor anything but `</pre>` after it.
  const outside = [...tokens.slice(0, open), ...tokens.slice(close + 1)];
  if (outside.some((t) => (t.kind === 'text' ? t.text.trim() !== '' : t.name !== 'pre'))) return null;
  const lines: { text: string; highlighted: boolean }[] = [{ text: '', highlighted: false }];
  let strong = 0;
  for (const t of tokens.slice(open + 1, close)) {
    if (t.kind === 'open' && (t.name === 'strong' || t.name === 'b')) strong++;
    else if (t.kind === 'close' && (t.name === 'strong' || t.name === 'b')) strong = Math.max(0, strong - 1);
    else if (t.kind === 'open' && t.name === 'br') lines.push({ text: '', highlighted: false });
    else if (t.kind === 'text') {
      t.text.split('\n').forEach((part, k) => {
        // A newline belongs to the line it ends: inside `<strong>`, that line is highlighted.
        if (k > 0) {
          if (strong > 0) lines.at(-1)!.highlighted = true;
          lines.push({ text: '', highlighted: false });
        }
        lines.at(-1)!.text += part;
        if (strong > 0 && part !== '') lines.at(-1)!.highlighted = true;
      });
    }
  }
  if (lines.length > 1 && lines.at(-1)!.text === '' && !lines.at(-1)!.highlighted) lines.pop();
  const lang = (classes: string | undefined, prefix: string) => (classes ?? '').split(/\s+/).find((c) => c.startsWith(prefix))?.slice(prefix.length);
  const code = tokens[open] as Extract<HtmlToken, { kind: 'open' }>;
  const syntax = lang(code.attrs.class, 'lang-') || lang(code.attrs.class, 'language-') || lang(pre.attrs.class, 'language-');
  const a = pre.attrs;
  const data: DocumentBlockCode['data'] = syntax ? { syntax } : {};
  if (a['data-title']) data.title = a['data-title'];
  if (a['data-overflow'] === 'wrap') data.overflow = 'wrap';
  if (isTrue(a['data-line-numbers'])) data.lineNumbers = true;
  if (isTrue(a['data-full-width'])) data.fullWidth = true;
  if (isTrue(a['data-expandable'])) data.expandable = true;
  const collapsed = Number(a['data-collapsed-line-count']);
  if (Number.isInteger(collapsed) && collapsed >= 1) data.collapsedLineCount = collapsed;
  return {
    object: 'block',
    type: 'code',
    data,
    nodes: lines.map((line) => ({ object: 'block', type: 'code-line', data: line.highlighted ? { highlighted: true } : {}, nodes: [textNode([leaf(line.text)])] })),
  };
}
