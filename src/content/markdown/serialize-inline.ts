import type { DocumentBlockImage, DocumentInline, DocumentInlineImage, Length } from '@gitbook/api';
import type * as md from 'mdast';
import { type Block, type InlineOrText, type MarkType, HTML_MARKS, emoji, leafMarks, urlFromRef } from './shared.ts';
import { escapeAttr, escapeHtmlText } from './tags.ts';
import { blocks } from './serialize-blocks.ts';
import { type HtmlParagraphData, processor } from './serialize-remark.ts';
import { processor as reader } from './parse-source.ts';

/**
 * Rich text: runs of text and inline nodes nested under the fewest mark spans, as markdown or (in
 * cells, captions and summaries) as the HTML GitBook writes there; annotations become footnotes,
 * whose bodies are blocks (so this module and serialize-blocks.ts call each other).
 */

/** One run of text, or an inline node, with the marks it carries; `null` marks nest under any mark. */
type Item = { text: string; marks: MarkType[] } | { node: md.PhrasingContent | md.PhrasingContent[]; marks: MarkType[] | null };

export interface Context {
  /** Table cells, captions and summaries are one line: breaks are written as `<br>`. */
  inCell: boolean;
  /** Headings can't hold breaks either: they become spaces. */
  inHeading: boolean;
  /**
   * Inside HTML (cells, captions, summaries, aligned paragraphs), marks, links and code are HTML
   * tags (`<strong>`, `<a href>`, `<code>`), `&` and `<` character references: what GitBook writes.
   */
  html: boolean;
  /** Emoji as GitBook's `<span data-tag="emoji">` (in table cells and captions; summaries keep the character). */
  emojiSpans: boolean;
  /** Annotation bodies, written as footnotes at the end of the page. */
  notes: Notes;
}

export type Notes = md.FootnoteDefinition[];

export const html = (value: string): md.Html => ({ type: 'html', value });

export function textOf(nodes: readonly unknown[] | undefined): string {
  let out = '';
  type Loose = { object?: string; type?: string; leaves?: { text: string }[]; nodes?: unknown[]; data?: Partial<Record<'formula' | 'expression' | 'alt', string>> };
  for (const node of (nodes ?? []) as Loose[]) {
    if (node.object === 'text') out += (node.leaves ?? []).map((l) => l.text).join('');
    else if (node.type === 'inline-math') out += node.data?.formula ?? '';
    else if (node.type === 'expression') out += node.data?.expression ?? '';
    else if (node.type === 'inline-image') out += node.data?.alt ?? '';
    else out += textOf(node.nodes);
  }
  return out;
}

function items(nodes: readonly InlineOrText[], ctx: Context): Item[] {
  const out: Item[] = [];
  for (const node of nodes) {
    if (node.object === 'text') {
      for (const leaf of node.leaves) if (leaf.text !== '') out.push({ text: leaf.text, marks: leafMarks(leaf) });
    } else out.push(...inlineItems(node, ctx));
  }
  return out;
}

export function imgTag(data: DocumentInlineImage['data'] | DocumentBlockImage['data'], extra = ''): string {
  const attrs = [`src="${escapeAttr(urlFromRef(data.ref))}"`, `alt="${escapeAttr(data.alt ?? '')}"`];
  if ('caption' in data && data.caption) attrs.push(`title="${escapeAttr(data.caption)}"`);
  if ('size' in data && data.size) attrs.push(`data-size="${data.size}"`);
  if ('width' in data && data.width !== undefined) attrs.push(`width="${lengthText(data.width)}"`);
  if ('height' in data && data.height !== undefined) attrs.push(`height="${lengthText(data.height)}"`);
  const img = `<img ${attrs.join(' ')}${extra}>`;
  if (!data.refDark) return img;
  return `<picture><source srcset="${escapeAttr(urlFromRef(data.refDark))}" media="(prefers-color-scheme: dark)">${img}</picture>`;
}

export function lengthText(length: Length): string {
  return typeof length === 'number' ? String(length) : `${length.value}${length.unit}`;
}

function inlineItems(node: DocumentInline, ctx: Context): Item[] {
  switch (node.type) {
    case 'link': {
      // Marks go inside the link, as GitBook writes them: `[**Tint color**](url)`.
      const children = group(items(node.nodes as InlineOrText[], ctx), new Set(), ctx);
      const url = urlFromRef(node.data.ref);
      if (ctx.html) return [{ node: [html(`<a href="${escapeAttr(url)}">`), ...children, html('</a>')], marks: [] }];
      return [{ node: { type: 'link', url, title: null, children }, marks: [] }];
    }
    case 'mention': {
      const url = urlFromRef(node.data.ref);
      return [{ node: { type: 'link', url, title: 'mention', children: [{ type: 'text', value: mentionLabel(url) }] }, marks: null }];
    }
    case 'inline-image':
      if (node.data.size || node.data.refDark || ctx.html) return [{ node: html(imgTag(node.data)), marks: null }];
      return [
        {
          node: { type: 'image', url: urlFromRef(node.data.ref), alt: node.data.alt ?? '', title: node.data.caption || null },
          marks: null,
        },
      ];
    case 'inline-math':
      // An empty formula has no markdown (`$$$$` would read back as text).
      if (node.data.formula.trim() === '') return [];
      return [{ node: html(`$$${node.data.formula.replace(/\n/g, ' ')}$$`), marks: null }];
    case 'expression':
      return [{ node: html(`<code class="expression">${node.data.expression}</code>`), marks: null }];
    case 'emoji':
      if (ctx.emojiSpans) return [{ node: html(`<span data-gb-custom-inline data-tag="emoji" data-code="${escapeAttr(node.data.code)}">${spanEmoji(node.data.code)}</span>`), marks: null }];
      return [{ node: { type: 'text', value: emoji(node.data.code) }, marks: null }];
    case 'icon': {
      const style = node.data.color ? ` style="color:${node.data.color};"` : '';
      return [{ node: html(`<i class="fa-${escapeAttr(node.data.icon)}"${style}>:${escapeHtmlText(node.data.icon)}:</i>`), marks: null }];
    }
    case 'button': {
      // GitBook's forms: `<a href class="button primary" data-icon>` for a link (no `href` when it
      // goes nowhere), `<button type="button" class data-action data-query data-icon>` for an action.
      const data = node.data;
      const attrs: string[] = [];
      if ('ref' in data) {
        const href = urlFromRef(data.ref);
        if (href !== '') attrs.push(`href="${escapeAttr(href)}"`);
      } else attrs.push('type="button"');
      attrs.push(`class="button ${data.kind}"`);
      if ('action' in data) {
        attrs.push(`data-action="${data.action.action}"`);
        if ('query' in data.action && data.action.query !== undefined) attrs.push(`data-query="${escapeAttr(data.action.query)}"`);
        if ('slug' in data.action) attrs.push(`data-slug="${escapeAttr(data.action.slug)}"`);
      }
      if (data.icon) attrs.push(`data-icon="${escapeAttr(data.icon)}"`);
      if (data.size) attrs.push(`data-size="${data.size}"`);
      const tag = 'action' in data ? 'button' : 'a';
      return [{ node: html(`<${tag} ${attrs.join(' ')}>${escapeHtmlText(data.label)}</${tag}>`), marks: null }];
    }
    case 'annotation': {
      const label = String(ctx.notes.length + 1);
      const note: md.FootnoteDefinition = { type: 'footnoteDefinition', identifier: label, label, children: [] };
      ctx.notes.push(note);
      const body = node.fragments.flatMap((f) => f.nodes) as Block[];
      note.children = blocks(body, ctx.notes) as md.FootnoteDefinition['children'];
      return [...items(node.nodes, ctx), { node: { type: 'footnoteReference', identifier: label, label }, marks: null }];
    }
    default: {
      const nested = (node as { nodes?: InlineOrText[] }).nodes;
      if (nested) return items(nested, ctx);
      const text = textOf([node]);
      return text ? [{ text, marks: [] }] : [];
    }
  }
}

/** Nests items under the fewest mark spans: each run of items sharing a mark gets one span. */
function group(list: Item[], applied: Set<MarkType>, ctx: Context): md.PhrasingContent[] {
  const out: md.PhrasingContent[] = [];
  let i = 0;
  while (i < list.length) {
    const item = list[i]!;
    const pending = item.marks?.filter((m) => !applied.has(m)) ?? [];
    if (pending.length === 0) {
      out.push(...emit(item, applied, ctx));
      i++;
      continue;
    }
    // GitBook puts italic outside bold: `_**both**_`.
    const mark = pending.includes('italic') && pending.includes('bold') ? 'italic' : pending[0]!;
    let j = i + 1;
    while (j < list.length && (list[j]!.marks === null || list[j]!.marks!.includes(mark))) j++;
    while (j > i + 1 && list[j - 1]!.marks === null) j--;
    out.push(...wrap(mark, group(list.slice(i, j), new Set([...applied, mark]), ctx), ctx));
    i = j;
  }
  return out;
}

function emit(item: Item, applied: Set<MarkType>, ctx: Context): md.PhrasingContent[] {
  if ('node' in item) return Array.isArray(item.node) ? item.node : [item.node];
  let text = item.text;
  if (ctx.inHeading) text = text.replace(/\n/g, ' ');
  if (applied.has('code')) {
    if (ctx.html) return [html(`<code>${text.replace(/\n/g, ' ').replace(/&/g, '&#x26;').replace(/</g, '&#x3C;')}</code>`)];
    return [{ type: 'inlineCode', value: text.replace(/\n/g, ' ') }];
  }
  const out: md.PhrasingContent[] = [];
  if (!ctx.inCell) {
    // A line break is GitBook's `\` at the end of the line.
    text.split('\n').forEach((part, k) => {
      if (k > 0) out.push({ type: 'break' });
      if (part) out.push({ type: 'text', value: part });
    });
    return out;
  }
  text.split('\n').forEach((part, k) => {
    if (k > 0) out.push(html('<br>'));
    if (!part) return;
    if (!ctx.html) out.push({ type: 'text', value: part });
    // `&` and `<` as GitBook writes them in HTML (`&#x26;`, `&#x3C;`); the rest as escaped text.
    else for (const piece of part.split(/([&<])/)) if (piece) out.push(piece === '&' ? html('&#x26;') : piece === '<' ? html('&#x3C;') : { type: 'text', value: piece });
  });
  return out;
}

const HTML_TAG_OF: Record<string, string> = { bold: 'strong', italic: 'em', strikethrough: 's' };

function wrap(mark: MarkType, children: md.PhrasingContent[], ctx: Context): md.PhrasingContent[] {
  if (ctx.html && HTML_TAG_OF[mark]) return [html(`<${HTML_TAG_OF[mark]}>`), ...children, html(`</${HTML_TAG_OF[mark]}>`)];
  switch (mark) {
    case 'bold':
      return [{ type: 'strong', children }];
    case 'italic':
      return [{ type: 'emphasis', children }];
    case 'strikethrough':
      return [{ type: 'delete', children }];
    case 'code':
      return children;
    default: {
      if (mark.startsWith('color:')) {
        const [, text, background] = mark.split(':');
        const style = `${text !== 'default' ? `color:${text};` : ''}${background !== 'default' ? `background-color:${background};` : ''}`;
        return [html(style ? `<mark style="${style}">` : '<mark>'), ...children, html('</mark>')];
      }
      const tag = HTML_MARKS[mark]!;
      return [html(`<${tag}>`), ...children, html(`</${tag}>`)];
    }
  }
}

export function phrasing(nodes: readonly InlineOrText[], notes: Notes, opts: Partial<Context> = {}): md.PhrasingContent[] {
  const ctx: Context = { inCell: false, inHeading: false, html: false, emojiSpans: false, notes, ...opts };
  const out = group(items(nodes, ctx), new Set(), ctx);
  // A break that ends the block can't be a backslash (one at the end is a backslash): GitBook writes `<br>`.
  let last = out.at(-1);
  while (last && 'children' in last && last.children.length > 0 && last.type !== 'link') last = last.children.at(-1);
  if (last?.type === 'break') Object.assign(last, html('<br>'));
  return out;
}

/** Rich text as one line, for places inside HTML (captions, cells, summaries): HTML tags, escaped text. */
export function inlineMarkdown(nodes: readonly InlineOrText[], notes: Notes, opts: { emojiSpans?: boolean } = {}): string {
  const children = phrasing(nodes, notes, { inCell: true, html: true, emojiSpans: opts.emojiSpans ?? false });
  if (children.length === 0) return '';
  // Inside HTML, GitBook writes the spaces a text starts or ends with as they are (markdown would
  // drop them, so remark encodes them as `&#x20;`).
  const written = processor
    .stringify({ type: 'root', children: [{ type: 'paragraph', children, data: { insideHtml: true } as HtmlParagraphData }] })
    .replace(/\n+$/, '')
    .replace(/^&#x20;/, ' ')
    .replace(/&#x20;$/, ' ');
  return withoutNeedlessEscapes(written);
}

/**
 * GitBook escapes nothing in the text of HTML (`amp_only`, `[detail]`, `<code>id</code>*`): the
 * backslashes markdown would put before `_`, `[` and `*` are left out wherever the text reads
 * back the same without them (the reader reads a cell's text as markdown).
 */
function withoutNeedlessEscapes(written: string): string {
  if (!/\\[_[*]/.test(written)) return written;
  // Only in text, not inside tags (attribute values are written as they are).
  const bare = written.replace(/(<[^>]*>)|\\([_[*])/g, (whole, tag: string | undefined, char: string | undefined) => tag ?? char!);
  return sameMarkdown(written, bare) ? bare : written;
}

function sameMarkdown(a: string, b: string): boolean {
  const shape = (text: string) => JSON.stringify(reader.parse(text), (key, value: unknown) => (key === 'position' ? undefined : value));
  return shape(a) === shape(b);
}

/**
 * The text GitBook gives a mention: the anchor (`#setup`), else the last segment of the path
 * (`share.md`, `embedding` for `../publish/embedding/`).
 */
export function mentionLabel(url: string): string {
  const hash = url.indexOf('#');
  if (hash >= 0) return url.slice(hash);
  const segments = url.replace(/[?].*$/, '').split('/').filter(Boolean);
  return segments.at(-1) ?? url;
}

/** The text GitBook gives a card's link: the URL itself, or the file or page name of a relative one. */
export function cardLinkLabel(url: string): string {
  return /^[a-z][a-z0-9+.-]*:/i.test(url) ? url : mentionLabel(url);
}

/**
 * The character of an emoji span: GitBook adds the emoji presentation selector (U+FE0F) to a
 * character that is text by default (`1f6e0` is written 🛠️).
 */
function spanEmoji(code: string): string {
  const char = emoji(code);
  return /^\p{Extended_Pictographic}$/u.test(char) && !/^\p{Emoji_Presentation}$/u.test(char) ? `${char}\uFE0F` : char;
}
