import type {
  DocumentBlockCode,
  DocumentBlockImage,
  DocumentBlockImages,
  DocumentBlockTable,
  DocumentFragment,
  DocumentInline,
  DocumentInlineImage,
  DocumentTableDefinition,
  Length,
} from '@gitbook/api';
import type * as md from 'mdast';
import type { Handle } from 'mdast-util-to-markdown';
import { gitbookGfm } from './gfm.ts';
import remarkStringify from 'remark-stringify';
import { unified } from 'unified';
import {
  type Block,
  type GitBookDocument,
  type InlineOrText,
  type MarkType,
  HTML_MARKS,
  emoji,
  leafMarks,
  urlFromRef,
} from './shared.ts';
import { escapeAttr, escapeHtmlText, liquidTag } from './tags.ts';

/**
 * GitBook document → markdown, written so that `parse.ts` reads it back to the same document.
 * Marks are grouped into the fewest nested markdown spans; GitBook constructs without markdown
 * syntax are written the way GitBook itself writes them (`{% hint %}`, `{% tabs %}`, `<details>`,
 * `<figure>`, `<table data-view="cards">`, `<mark>`, `$$`…).
 */

/**
 * Text as GitBook escapes it: markdown's escapes, plus every `_` (GitBook writes `:heavy\_plus\_sign:`
 * where markdown would leave an underscore inside a word alone).
 */
const text: Handle = (node: md.Text, _parent, state, info) => state.safe(node.value, info).replace(/(?<!\\)_/g, '\\_');

const processor = unified().use(gitbookGfm).use(remarkStringify, {
  handlers: { text },
  listItemIndent: 'mixed',
  // GitBook's own choices, so that an exported page only changes where its content did.
  bullet: '*',
  emphasis: '_',
  strong: '*',
  rule: '*',
  fence: '`',
  fences: true,
  // Text that would read back as math or as a GitBook tag is escaped.
  join: [tagSpacing],
  // `[https://x](https://x)`, not `<https://x>`.
  resourceLink: true,
  unsafe: [
    { character: '$', after: '\\$' },
    { character: '{', after: '%', atBreak: true },
  ],
});

/**
 * GitBook writes a container's tags right against its content: no blank line after an opening tag
 * (`{% hint %}`, `{% tabs %}` then `{% tab %}`…) nor before a closing one; blocks and items are
 * separated by one blank line as usual.
 */
function tagSpacing(left: md.Node, right: md.Node): number | undefined {
  if ((left.data as TagData | undefined)?.tag === 'open' || (right.data as TagData | undefined)?.tag === 'close') return 0;
  return undefined;
}

type TagData = { tag?: 'open' | 'close' };

/** One run of text, or an inline node, with the marks it carries; `null` marks nest under any mark. */
type Item = { text: string; marks: MarkType[] } | { node: md.PhrasingContent | md.PhrasingContent[]; marks: MarkType[] | null };

interface Context {
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

type Notes = md.FootnoteDefinition[];

const html = (value: string): md.Html => ({ type: 'html', value });

function textOf(nodes: readonly unknown[] | undefined): string {
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

function imgTag(data: DocumentInlineImage['data'] | DocumentBlockImage['data'], extra = ''): string {
  const attrs = [`src="${escapeAttr(urlFromRef(data.ref))}"`, `alt="${escapeAttr(data.alt ?? '')}"`];
  if ('caption' in data && data.caption) attrs.push(`title="${escapeAttr(data.caption)}"`);
  if ('size' in data && data.size) attrs.push(`data-size="${data.size}"`);
  if ('width' in data && data.width !== undefined) attrs.push(`width="${lengthText(data.width)}"`);
  if ('height' in data && data.height !== undefined) attrs.push(`height="${lengthText(data.height)}"`);
  const img = `<img ${attrs.join(' ')}${extra}>`;
  if (!data.refDark) return img;
  return `<picture><source srcset="${escapeAttr(urlFromRef(data.refDark))}" media="(prefers-color-scheme: dark)">${img}</picture>`;
}

function lengthText(length: Length): string {
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
      return [{ node: html(`$$${node.data.formula.replace(/\n/g, ' ')}$$`), marks: null }];
    case 'expression':
      return [{ node: html(`<code class="expression">${node.data.expression}</code>`), marks: null }];
    case 'emoji':
      if (ctx.emojiSpans) return [{ node: html(`<span data-gb-custom-inline data-tag="emoji" data-code="${escapeAttr(node.data.code)}">${emoji(node.data.code)}</span>`), marks: null }];
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

function phrasing(nodes: readonly InlineOrText[], notes: Notes, opts: Partial<Context> = {}): md.PhrasingContent[] {
  const ctx: Context = { inCell: false, inHeading: false, html: false, emojiSpans: false, notes, ...opts };
  const out = group(items(nodes, ctx), new Set(), ctx);
  // A break that ends the block can't be a backslash (one at the end is a backslash): GitBook writes `<br>`.
  let last = out.at(-1);
  while (last && 'children' in last && last.children.length > 0 && last.type !== 'link') last = last.children.at(-1);
  if (last?.type === 'break') Object.assign(last, html('<br>'));
  return out;
}

/** Rich text as one line, for places inside HTML (captions, cells, summaries): HTML tags, escaped text. */
function inlineMarkdown(nodes: readonly InlineOrText[], notes: Notes, opts: { emojiSpans?: boolean } = {}): string {
  const children = phrasing(nodes, notes, { inCell: true, html: true, emojiSpans: opts.emojiSpans ?? false });
  if (children.length === 0) return '';
  return processor.stringify({ type: 'root', children: [{ type: 'paragraph', children }] }).replace(/\n+$/, '');
}

/** A code line's text in `<pre>`: GitBook escapes `&` and `<` (so no tag or reference can open). */
const preText = (text: string) => text.replace(/&/g, '&#x26;').replace(/</g, '&#x3C;');

/**
 * A code block with highlighted lines, the way GitBook writes one: `<pre>` with the options as
 * `data-` attributes, every line followed by its newline, a highlighted line (newline included)
 * in `<strong>`.
 */
function preCode(block: DocumentBlockCode): md.Html {
  const { syntax, title, overflow, lineNumbers, fullWidth, expandable, collapsedLineCount } = block.data;
  const attrs: string[] = syntax ? [`class="language-${escapeAttr(syntax)}"`] : [];
  if (title) attrs.push(`data-title="${escapeAttr(title)}"`);
  if (overflow === 'wrap') attrs.push('data-overflow="wrap"');
  if (lineNumbers) attrs.push('data-line-numbers');
  if (fullWidth) attrs.push('data-full-width="true"');
  if (expandable) attrs.push('data-expandable="true"');
  if (collapsedLineCount !== undefined) attrs.push(`data-collapsed-line-count="${collapsedLineCount}"`);
  const lines = block.nodes.map((line) => {
    const text = `${preText(textOf(line.nodes))}\n`;
    return line.data?.highlighted ? `<strong>${text}</strong>` : text;
  });
  const code = syntax ? `<code class="lang-${escapeAttr(syntax)}">` : '<code>';
  return html(`<pre${attrs.map((a) => ` ${a}`).join('')}>${code}${lines.join('')}</code></pre>`);
}

function codeBlock(block: DocumentBlockCode): md.RootContent[] {
  if (block.nodes.some((line) => line.data?.highlighted)) return [preCode(block)];
  const value = block.nodes.map((line) => textOf(line.nodes)).join('\n');
  const code: md.Code = { type: 'code', lang: block.data.syntax || null, meta: null, value };
  const { title, lineNumbers, overflow, fullWidth, expandable, collapsedLineCount } = block.data;
  const attrs = {
    title: title || undefined,
    overflow: overflow === 'wrap' ? 'wrap' : undefined,
    lineNumbers: lineNumbers ? 'true' : undefined,
    fullWidth: fullWidth ? 'true' : undefined,
    expandable: expandable ? 'true' : undefined,
    collapsedLineCount: collapsedLineCount !== undefined ? String(collapsedLineCount) : undefined,
  };
  if (Object.values(attrs).every((v) => v === undefined)) return [code];
  return tagged(liquidTag('code', attrs), 'code', [code]);
}

export function captionNodes(fragments: readonly DocumentFragment[] | undefined): InlineOrText[] | null {
  const caption = fragments?.find((f) => f.fragment === 'caption');
  const first = caption?.nodes[0] as { nodes?: InlineOrText[] } | undefined;
  return first?.nodes ?? null;
}

function figure(image: DocumentBlockImage, notes: Notes): string {
  const caption = captionNodes(image.fragments);
  const text = caption ? inlineMarkdown(caption, notes, { emojiSpans: true }) : '';
  return `<figure>${imgTag(image.data)}<figcaption>${text ? `<p>${text}</p>` : ''}</figcaption></figure>`;
}

function imagesBlock(node: DocumentBlockImages, notes: Notes): md.RootContent[] {
  if (node.nodes.length === 0) return [];
  const { align, fullWidth, withFrame } = node.data;
  // Always figures, as GitBook writes block images; several side by side are separated by a space.
  const figures = node.nodes.map((image) => figure(image, notes)).join(' ');
  const attrs = [align ? `align="${align}"` : '', fullWidth !== undefined ? `data-full-width="${fullWidth}"` : '', withFrame ? 'data-with-frame="true"' : ''].filter(Boolean);
  return [html(attrs.length > 0 || node.nodes.length > 1 ? `<div${attrs.map((a) => ` ${a}`).join('')}>${figures}</div>` : figures)];
}

export function sortedRecords(block: DocumentBlockTable) {
  return Object.entries(block.data.records).sort(([ia, a], [ib, b]) =>
    a.orderIndex < b.orderIndex ? -1 : a.orderIndex > b.orderIndex ? 1 : ia < ib ? -1 : 1,
  );
}

export function fragmentOf(block: DocumentBlockTable, value: unknown): DocumentFragment | undefined {
  return typeof value === 'string' ? block.fragments.find((f) => f.fragment === value) : undefined;
}

function cellValue(block: DocumentBlockTable, def: DocumentTableDefinition | undefined, value: unknown, notes: Notes): md.PhrasingContent[] {
  if (value === undefined || value === null) return [];
  if (def?.type === 'text' || (def === undefined && typeof value === 'string')) {
    const fragment = fragmentOf(block, value);
    if (!fragment) return [];
    const out: md.PhrasingContent[] = [];
    for (const node of fragment.nodes) {
      if (out.length > 0) out.push(html('<br>'));
      if (node.type === 'paragraph' || node.type.startsWith('heading-')) out.push(...phrasing((node as { nodes: InlineOrText[] }).nodes, notes, { inCell: true }));
      else out.push({ type: 'text', value: textOf([node]).replace(/\n/g, ' ') });
    }
    return out;
  }
  if (def?.type === 'checkbox') return [{ type: 'text', value: value ? '✓' : '' }];
  if (def?.type === 'select' && Array.isArray(value)) {
    const labels = value.map((v) => def.options.find((o) => o.value === v)?.label ?? String(v));
    return [{ type: 'text', value: labels.join(', ') }];
  }
  if (typeof value === 'object' && value !== null && 'kind' in value) {
    const url = urlFromRef(value as Parameters<typeof urlFromRef>[0]);
    return [{ type: 'link', url, title: null, children: [{ type: 'text', value: url }] }];
  }
  return [{ type: 'text', value: Array.isArray(value) ? value.join(', ') : String(value) }];
}

/** Whether a table can be a pipe table: a plain grid of one-paragraph text cells. */
function isPipeTable(block: DocumentBlockTable): boolean {
  const { view, definition, fullWidth, search, cellMerges } = block.data;
  // What only HTML attributes can say (a width, `data-full-width`, `data-search`, `valign`) makes an HTML table.
  if (view.type !== 'grid' || view.hideHeader || view.columnWidths || fullWidth !== undefined || search !== undefined) return false;
  if ((cellMerges && cellMerges.length > 0) || view.columns.length === 0 || view.columns.length !== Object.keys(definition).length) return false;
  if (!view.columns.every((c) => { const def = definition[c]; return def?.type === 'text' && !def.verticalAlignment; })) return false;
  return Object.values(block.data.records).every((record) =>
    view.columns.every((c) => {
      const fragment = fragmentOf(block, record.values[c]);
      return fragment !== undefined && fragment.nodes.length === 1 && fragment.nodes[0]!.type === 'paragraph';
    }),
  );
}

function pipeTable(block: DocumentBlockTable, notes: Notes): md.Table {
  const { view, definition } = block.data;
  const columns = view.columns;
  const align = columns.map((c) => {
    const def = definition[c];
    const a = def && 'textAlignment' in def ? def.textAlignment : undefined;
    return a === 'center' || a === 'right' ? a : null;
  });
  const header: md.TableRow = {
    type: 'tableRow',
    children: columns.map((c) => ({ type: 'tableCell', children: [{ type: 'text', value: definition[c]?.title ?? '' }] })),
  };
  const rows = sortedRecords(block).map(
    ([, record]): md.TableRow => ({
      type: 'tableRow',
      children: columns.map((c) => ({ type: 'tableCell', children: cellValue(block, definition[c], record.values[c], notes) })),
    }),
  );
  return { type: 'table', align, children: [header, ...rows] };
}

/** The HTML heading tag of a heading block, as `<hN>` lines are read (parse.ts `htmlBlock`). */
/** GitBook's levels: heading-1 is `<h2>` (as `##`), heading-2 `<h3>`, heading-3 `<h4>`; `<h1>` is the page title. */
const htmlHeadingTag = (type: string) => `h${Number(type.slice(-1)) + 1}`;

/** A text cell: its only paragraph as is; else each paragraph in `<p>`, each heading in `<hN>` (card titles). */
function cellHtml(nodes: readonly Block[], notes: Notes): string {
  const many = nodes.length > 1;
  return nodes
    .map((n) => {
      if (n.type === 'list-ordered' || n.type === 'list-unordered') {
        // A list in a cell: `<ul><li>…</li></ul>`, each item's first paragraph as its text.
        const tag = n.type === 'list-ordered' ? 'ol' : 'ul';
        const items = (n.nodes as Block[]).map((item) => {
          const first = (item as { nodes?: Block[] }).nodes?.[0] as { nodes?: InlineOrText[] } | undefined;
          return `<li>${inlineMarkdown((first?.nodes ?? []) as InlineOrText[], notes, { emojiSpans: true })}</li>`;
        });
        return `<${tag}>${items.join('')}</${tag}>`;
      }
      const text = inlineMarkdown(((n as { nodes?: InlineOrText[] }).nodes ?? []) as InlineOrText[], notes, { emojiSpans: true });
      if (n.type.startsWith('heading-')) return `<${htmlHeadingTag(n.type)}>${text.replace(/<br>/g, ' ')}</${htmlHeadingTag(n.type)}>`;
      return many ? `<p>${text}</p>` : text;
    })
    .join('');
}

/** Any other table as HTML, the way GitBook writes cards and tables with widths or typed columns. */
function htmlTable(block: DocumentBlockTable, notes: Notes): string {
  const { view, definition, fullWidth, search } = block.data;
  // Columns of the view first, then the hidden ones.
  const ids = [...view.columns, ...Object.keys(definition).filter((id) => !view.columns.includes(id))].filter((id) => definition[id]);
  const tableAttrs: string[] = [];
  if (view.type === 'cards') {
    tableAttrs.push('data-view="cards"');
    if (view.cardSize === 'large') tableAttrs.push('data-card-size="large"');
    if (view.wrap === false) tableAttrs.push('data-card-wrap="false"');
    if (view.hideColumnTitle) tableAttrs.push('data-hide-column-title');
  } else if (view.hideHeader) tableAttrs.push('data-header-hidden');
  // An explicit `false` is kept: GitBook writes it for a table switched back from full width.
  if (fullWidth !== undefined) tableAttrs.push(`data-full-width="${fullWidth}"`);
  if (search !== undefined) tableAttrs.push(`data-search="${search}"`);
  // GitBook writes a table's attributes in alphabetical order.
  tableAttrs.sort();
  const th = ids.map((id) => {
    const def = definition[id]!;
    const attrs: string[] = [];
    if (!view.columns.includes(id)) attrs.push('data-hidden');
    if (view.type === 'cards') {
      if (view.targetDefinition === id) attrs.push('data-card-target');
      if (view.coverDefinition === id) attrs.push('data-card-cover');
      if (view.coverDefinitionDark === id) attrs.push('data-card-cover-dark');
    } else if (view.columnWidths?.[id] !== undefined) attrs.push(`width="${view.columnWidths[id]}"`);
    if (def.type !== 'text' && def.type !== 'select') attrs.push(`data-type="${def.type}"`);
    attrs.push(...alignments(def));
    if (def.type === 'rating') attrs.push(`data-max="${def.max}"`);
    const title = def.title ? inlineMarkdown([{ object: 'text', leaves: [{ object: 'leaf', text: def.title, marks: [] }] }], notes) : '';
    return `<th${attrs.map((a) => ` ${a}`).join('')}>${title}${def.type === 'select' ? selectOptionsHtml(def) : ''}</th>`;
  });
  // GitBook labels a card's link with the URL, or the file or page name of a relative one.
  const link = (url: string) => `<a href="${escapeAttr(url)}">${escapeHtmlText(/^[a-z][a-z0-9+.-]*:/i.test(url) ? url : mentionLabel(url))}</a>`;
  const rows = sortedRecords(block).map(([, record]) => {
    const cells = ids.map((id) => {
      const def = definition[id]!;
      const value = record.values[id];
      let inner = '';
      if (value === null || value === undefined) inner = '';
      else if (def.type === 'content-ref' || def.type === 'image') {
        const ref = typeof value === 'object' && !Array.isArray(value) ? ('kind' in value ? value : value.ref) : null;
        inner = ref ? link(urlFromRef(ref)) : '';
      } else if (def.type === 'files') inner = (Array.isArray(value) ? value : []).map((file) => link(urlFromRef({ kind: 'file', file }))).join('');
      else if (def.type === 'number' || def.type === 'rating' || def.type === 'checkbox') inner = String(value);
      else if (def.type === 'select') inner = selectedOptionsHtml(def, value);
      else {
        const fragment = fragmentOf(block, value);
        inner = cellHtml(fragment?.nodes ?? [], notes);
      }
      // A column's alignments are repeated on each of its cells, as GitBook writes them.
      const align = alignments(def);
      return `<td${align.map((a) => ` ${a}`).join('')}>${inner}</td>`;
    });
    return `<tr>${cells.join('')}</tr>`;
  });
  return `<table${tableAttrs.map((a) => ` ${a}`).join('')}><thead><tr>${th.join('')}</tr></thead><tbody>${rows.join('')}</tbody></table>`;
}

/** A select column's options, written in its header as GitBook does. */
function selectOptionsHtml(def: Extract<DocumentTableDefinition, { type: 'select' }>): string {
  const options = def.options.map((o) => `<option value="${escapeAttr(o.value)}" label="${escapeAttr(o.label)}" color="${escapeAttr(o.color)}"></option>`);
  return `<select${def.multiple ? ' multiple' : ''}>${options.join('')}</select>`;
}

/** The options a cell chose, each a span naming its option; labels separated by `, ` inside the spans. */
function selectedOptionsHtml(def: Extract<DocumentTableDefinition, { type: 'select' }>, value: unknown): string {
  const chosen = Array.isArray(value) ? value.map(String) : [];
  return chosen
    .map((v, i) => {
      const label = def.options.find((o) => o.value === v)?.label ?? v;
      return `<span data-option="${escapeAttr(v)}">${escapeHtmlText(label)}${i < chosen.length - 1 ? ', ' : ''}</span>`;
    })
    .join('');
}

/** The `align` and `valign` attributes of a text column (left and no vertical alignment: none). */
function alignments(def: DocumentTableDefinition): string[] {
  if (def.type !== 'text') return [];
  const out: string[] = [];
  if (def.textAlignment && def.textAlignment !== 'left') out.push(`align="${def.textAlignment}"`);
  if (def.verticalAlignment) out.push(`valign="${def.verticalAlignment}"`);
  return out;
}

function listItemChildren(nodes: Block[], notes: Notes): md.BlockContent[] {
  const children = blocks(nodes, notes) as md.BlockContent[];
  // An empty item is written `- <br>` (which reads back empty): a bare `-` can turn into something
  // else, and a checkbox needs text after it.
  const first = nodes[0];
  if (first?.type === 'paragraph') {
    const lead = children[0];
    if (lead?.type === 'paragraph' && lead.children.length === 0) children.shift();
    if (children[0]?.type !== 'paragraph' || children[0] !== lead) children.unshift({ type: 'paragraph', children: [html('<br>')] });
  }
  return children;
}

function blocks(nodes: readonly Block[], notes: Notes): md.RootContent[] {
  return nodes.flatMap((node) => block(node, notes));
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

/** A container written as an opening tag, its content and the closing tag. */
function tagged(open: string, name: string, children: md.RootContent[]): md.RootContent[] {
  const tag = (value: string, side: 'open' | 'close'): md.Html => ({ type: 'html', value, data: { tag: side } as md.Data });
  return [tag(open, 'open'), ...children, tag(`{% end${name} %}`, 'close')];
}

const ALIGN_ATTR: Record<string, string> = { start: 'left', center: 'center', end: 'right' };

function block(node: Block, notes: Notes): md.RootContent[] {
  switch (node.type) {
    case 'paragraph': {
      if (node.data?.align) {
        const inner = inlineMarkdown(node.nodes, notes);
        return [html(`<p align="${ALIGN_ATTR[node.data.align]}">${inner}</p>`)];
      }
      const children = phrasing(node.nodes, notes);
      // An empty paragraph is an empty line between blank ones, as GitBook writes it (parse-reader reads it back).
      return [{ type: 'paragraph', children }];
    }
    case 'heading-1':
    case 'heading-2':
    case 'heading-3': {
      // One level below the page title, as GitBook writes them: heading-1 is `##` (see headingType).
      const depth = (Number(node.type.slice(-1)) + 1) as 2 | 3 | 4;
      const anchor = node.data.id ? `<a href="#${node.data.id}" id="${node.data.id}"></a>` : '';
      if (node.data.align) {
        const inner = inlineMarkdown(node.nodes, notes).replace(/<br>/g, ' ');
        return [html(`<h${depth} align="${ALIGN_ATTR[node.data.align]}">${inner}${anchor ? ` ${anchor}` : ''}</h${depth}>`)];
      }
      const children = phrasing(node.nodes, notes, { inHeading: true });
      if (anchor) children.push({ type: 'text', value: ' ' }, html(anchor));
      return [{ type: 'heading', depth, children }];
    }
    case 'list-ordered':
    case 'list-unordered':
    case 'list-tasks': {
      const start = node.type === 'list-ordered' ? (node.data.start ?? 1) : null;
      return [
        {
          type: 'list',
          ordered: node.type === 'list-ordered',
          start,
          spread: false,
          children: node.nodes.map(
            (item): md.ListItem => ({
              type: 'listItem',
              // As GitBook writes items: one holding several blocks besides nested lists is "spread"
              // (blank lines between its blocks, content indented to the next tab stop); items are
              // never separated by blank lines.
              spread: (item.nodes as Block[]).filter((b) => !b.type.startsWith('list-')).length > 1,
              checked: node.type === 'list-tasks' ? item.data?.checked === true : null,
              children: listItemChildren(item.nodes as Block[], notes),
            }),
          ),
        },
      ];
    }
    case 'list-item':
      return blocks(node.nodes as Block[], notes);
    case 'divider':
      return [{ type: 'thematicBreak' }];
    case 'blockquote':
      return [{ type: 'blockquote', children: blocks(node.nodes as Block[], notes) as md.BlockContent[] }];
    case 'hint':
      return tagged(liquidTag('hint', { style: node.data.style, icon: node.data.icon }), 'hint', blocks(node.nodes as Block[], notes));
    case 'code':
      return codeBlock(node);
    case 'math':
      // One-line formulas stay on one line so they can open a list item (a task's checkbox needs text after it).
      if (!node.data.formula.includes('\n') && node.data.formula.trim() !== '') return [{ type: 'paragraph', children: [html(`$$${node.data.formula}$$`)] }];
      return [html(`$$\n${node.data.formula}\n$$`)];
    case 'images':
      return imagesBlock(node, notes);
    case 'image':
      return [html(figure(node, notes))];
    case 'table':
      return isPipeTable(node) ? [pipeTable(node, notes)] : [html(htmlTable(node, notes))];
    case 'embed': {
      const open = liquidTag('embed', { url: node.data.url, fullWidth: node.data.fullWidth ? 'true' : undefined });
      const caption = captionNodes((node as { fragments?: DocumentFragment[] }).fragments);
      const children = caption ? phrasing(caption, notes) : [];
      return children.length > 0 ? tagged(open, 'embed', [{ type: 'paragraph', children }]) : [html(open)];
    }
    case 'file': {
      const caption = captionNodes((node as { fragments?: DocumentFragment[] }).fragments);
      const children = caption ? phrasing(caption, notes) : [];
      const open = liquidTag('file', { src: urlFromRef(node.data.ref) });
      return children.length > 0 ? tagged(open, 'file', [{ type: 'paragraph', children }]) : [html(open)];
    }
    case 'drawing':
      // As GitBook writes a drawing today (`{% drawing %}` is still read).
      return node.data.ref ? [html(`<img src="${escapeAttr(urlFromRef(node.data.ref))}" alt="" class="gitbook-drawing">`)] : [];
    case 'content-ref': {
      const url = urlFromRef(node.data.ref);
      const link: md.Link = { type: 'link', url, title: null, children: [{ type: 'text', value: url }] };
      return tagged(liquidTag('content-ref', { url }), 'content-ref', [{ type: 'paragraph', children: [link] }]);
    }
    case 'reusable-content':
      return [html(liquidTag('include', {}, [`.gitbook/includes/${node.data.ref.reusableContent}.md`]))];
    case 'swagger': {
      const { ref, path, method, expanded, fullWidth } = node.data;
      const src = urlFromRef(ref);
      const attrs = { src, path, method, expanded: expanded ? 'true' : undefined, fullWidth: fullWidth ? 'true' : undefined };
      const link: md.Link = { type: 'link', url: src, title: null, children: [{ type: 'text', value: src }] };
      return tagged(liquidTag('openapi', attrs), 'openapi', [{ type: 'paragraph', children: [link] }]);
    }
    case 'openapi-operation':
      return tagged(liquidTag('openapi-operation', { spec: node.data.ref.spec, path: node.data.path, method: node.data.method }), 'openapi-operation', []);
    case 'openapi-schemas': {
      const { ref, schemas, grouped, title } = node.data;
      const attrs = { spec: ref.spec, schemas: schemas.join(','), grouped: grouped === undefined ? undefined : String(grouped), title };
      return tagged(liquidTag('openapi-schemas', attrs), 'openapi-schemas', []);
    }
    case 'openapi-webhook':
      return tagged(liquidTag('openapi-webhook', { spec: node.data.ref.spec, name: node.data.name, method: node.data.method }), 'openapi-webhook', []);
    case 'integration': {
      const props: Record<string, string> = {};
      for (const [key, value] of Object.entries(node.data.props ?? {})) props[key] = typeof value === 'string' ? value : JSON.stringify(value);
      const name = node.data.block ? `@${node.data.integration}/${node.data.block}` : `@${node.data.integration}`;
      return [html(liquidTag(name, props))];
    }
    case 'tabs':
      return tagged(
        '{% tabs %}',
        'tabs',
        node.nodes.flatMap((tab) => tagged(liquidTag('tab', { title: tab.data.title ?? '', icon: tab.data.icon }), 'tab', blocks(tab.nodes as Block[], notes))),
      );
    case 'stepper':
      return tagged(
        '{% stepper %}',
        'stepper',
        node.nodes.flatMap((step) => tagged(liquidTag('step', { icon: step.data.icon }), 'step', blocks(step.nodes as Block[], notes))),
      );
    case 'columns':
      return tagged(
        liquidTag('columns', { fullWidth: node.data.fullWidth ? 'true' : undefined }),
        'columns',
        node.nodes.flatMap((column) =>
          tagged(
            liquidTag('column', {
              width: column.data.width === undefined ? undefined : lengthText(column.data.width),
              valign: column.data.verticalAlignment,
            }),
            'column',
            blocks(column.nodes as Block[], notes),
          ),
        ),
      );
    case 'updates':
      return tagged(
        liquidTag('updates', { format: node.data.format }),
        'updates',
        node.nodes.flatMap((update) => {
          const date = update.data.date.endsWith('T00:00:00.000Z') ? update.data.date.slice(0, 10) : update.data.date;
          const tags = update.data.tags && update.data.tags.length > 0 ? update.data.tags.map((t) => t.tag).join(',') : undefined;
          return tagged(liquidTag('update', { date, tags }), 'update', blocks(update.nodes as Block[], notes));
        }),
      );
    case 'if': {
      const expression = node.data.expression;
      // The bare form GitBook writes, unless the expression could be mistaken for attributes.
      const bare = expression !== '' && !expression.includes('%}') && !/^condition\s*=/.test(expression) && !/^['"]/.test(expression);
      return tagged(bare ? `{% if ${expression} %}` : liquidTag('if', { condition: expression }), 'if', blocks(node.nodes as Block[], notes));
    }
    case 'prompt': {
      const { description, icon, openInAIProviders, defaultExpanded } = node.data;
      const attrs = {
        description,
        icon,
        openInAIProviders: openInAIProviders === undefined ? undefined : String(openInAIProviders),
        defaultExpanded,
      };
      return tagged(liquidTag('prompt', attrs), 'prompt', blocks(node.nodes as Block[], notes));
    }
    case 'expandable': {
      const title = node.fragments.find((f) => f.fragment === 'expandable-title');
      const body = node.fragments.find((f) => f.fragment === 'expandable-body');
      const titleNodes = ((title?.nodes[0] as { nodes?: InlineOrText[] } | undefined)?.nodes ?? []) as InlineOrText[];
      return [
        html(node.data.defaultExpanded ? '<details open>' : '<details>'),
        html(`<summary>${inlineMarkdown(titleNodes, notes)}</summary>`),
        ...blocks((body?.nodes ?? []) as Block[], notes),
        html('</details>'),
      ];
    }
    default: {
      // Blocks without a markdown form keep their content.
      const loose = node as { nodes?: unknown[]; fragments?: DocumentFragment[] };
      const children = (loose.nodes ?? []) as { object?: string }[];
      const out: md.RootContent[] = [];
      for (const fragment of loose.fragments ?? []) out.push(...blocks(fragment.nodes, notes));
      if (children.some((c) => c.object === 'block')) out.push(...blocks(children as Block[], notes));
      else if (children.length > 0) {
        const inline = phrasing(children as InlineOrText[], notes);
        if (inline.length > 0) out.push({ type: 'paragraph', children: inline });
      }
      return out;
    }
  }
}

export function serializeDocument(doc: GitBookDocument): string {
  const notes: Notes = [];
  const children = blocks(doc.nodes as Block[], notes);
  const root: md.Root = { type: 'root', children: [...children, ...notes] };
  return processor.stringify(root);
}
