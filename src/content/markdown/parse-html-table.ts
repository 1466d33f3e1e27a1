import type {
  DocumentBlockHeading,
  DocumentBlockListItem,
  DocumentBlockListOrdered,
  DocumentBlockListUnordered,
  DocumentBlockParagraph,
  DocumentBlockTable,
  DocumentFragment,
  DocumentTableDefinition,
  DocumentTableDefinitionText,
  DocumentTableRecord,
  VerticalAlignment,
} from '@gitbook/api';
import { generateNKeysBetween } from 'fractional-indexing';
import type * as md from 'mdast';
import { refFromUrl } from './shared.ts';
import { type HtmlToken, tokenizeHtml } from './tags.ts';
import { heading } from './parse-blocks.ts';
import { phrasing } from './parse-inline.ts';
import { assemble, isTrue, paragraph, plainOfPieces, trimEdges } from './parse-nodes.ts';
import type { Reader } from './parse-reader.ts';

/*
 * Tables, both as GitBook writes them: HTML `<table>`s (cards, widths, typed columns) and markdown
 * pipe tables, whose cells may hold HTML for several paragraphs or a list.
 */

/** An HTML `<table>`: grid or cards view, column types, widths and hidden columns from `<th>` attributes. */
export function htmlTable(r: Reader, html: string, tokens: HtmlToken[]): DocumentBlockTable | null {
  const table = tokens[0]!.kind === 'open' ? tokens[0]! : tokens.find((t) => t.kind === 'open' && t.name === 'table')!;
  const tableAttrs = table.kind === 'open' ? table.attrs : {};
  type Cell = { attrs: Record<string, string>; raw: string };
  const rows: { head: boolean; cells: Cell[] }[] = [];
  let inHead = false;
  let row: Cell[] | null = null;
  for (let k = 0; k < tokens.length; k++) {
    const t = tokens[k]!;
    if (t.kind === 'open' && t.name === 'thead') inHead = true;
    else if (t.kind === 'close' && t.name === 'thead') inHead = false;
    else if (t.kind === 'open' && t.name === 'tr') row = [];
    else if (t.kind === 'close' && t.name === 'tr' && row) {
      rows.push({ head: inHead, cells: row });
      row = null;
    } else if (t.kind === 'open' && (t.name === 'td' || t.name === 'th') && row) {
      let depth = 1;
      let j = k + 1;
      for (; j < tokens.length; j++) {
        const u = tokens[j]!;
        if (u.kind === 'open' && (u.name === 'td' || u.name === 'th')) depth++;
        if (u.kind === 'close' && (u.name === 'td' || u.name === 'th') && --depth === 0) break;
      }
      if (j >= tokens.length) return null;
      row.push({ attrs: t.attrs, raw: html.slice(t.end, tokens[j]!.start) });
      k = j;
    }
  }
  const head = rows.find((tr) => tr.head);
  const body = rows.filter((tr) => tr !== head);
  const width = Math.max(head?.cells.length ?? 0, ...body.map((tr) => tr.cells.length));
  if (width === 0) return null;
  const columns = Array.from({ length: width }, (_, j) => `c${j}`);
  const definition: Record<string, DocumentTableDefinition> = {};
  const cards = tableAttrs['data-view'] === 'cards';
  const visible: string[] = [];
  const widths: Record<string, number> = {};
  let target: string | undefined;
  let cover: string | undefined;
  let coverDark: string | undefined;
  columns.forEach((id, j) => {
    const th = head?.cells[j];
    const attrs = th?.attrs ?? {};
    // A select column names its options in the header: `Status<select multiple><option value label color>…</select>`.
    const select = th ? /<select\b([^>]*)>([\s\S]*?)<\/select>/i.exec(th.raw) : null;
    const titleHtml = th ? (select ? th.raw.slice(0, select.index) + th.raw.slice(select.index + select[0].length) : th.raw) : '';
    const title = th ? plainOfPieces(r.inlineMarkdown(titleHtml)).replace(/\n/g, ' ').trim() : '';
    const type = attrs['data-type'];
    if (select) {
      const options = tokenizeHtml(select[2]!).flatMap((t) =>
        t.kind === 'open' && t.name === 'option' ? [{ value: t.attrs.value ?? '', label: t.attrs.label ?? '', color: t.attrs.color ?? '' }] : [],
      );
      definition[id] = { id, title, type: 'select', multiple: /\bmultiple\b/i.test(select[1]!), options };
    } else if (type === 'content-ref' || type === 'files' || type === 'number' || type === 'checkbox' || type === 'image') {
      definition[id] = { id, title, type } as DocumentTableDefinition;
    } else if (type === 'rating') {
      definition[id] = { id, title, type, max: Number(attrs['data-max'] ?? 5) || 5 };
    } else {
      const align = attrs.align === 'center' || attrs.align === 'right' ? attrs.align : 'left';
      const text: DocumentTableDefinitionText = { id, title, type: 'text', textAlignment: align };
      const valign = attrs.valign;
      if (valign === 'top' || valign === 'middle' || valign === 'bottom') text.verticalAlignment = valign as VerticalAlignment;
      definition[id] = text;
    }
    if (!('data-hidden' in attrs)) visible.push(id);
    const w = Number(attrs.width);
    if (attrs.width !== undefined && Number.isFinite(w)) widths[id] = w;
    if ('data-card-target' in attrs) target = id;
    if ('data-card-cover' in attrs) cover = id;
    if ('data-card-cover-dark' in attrs) coverDark = id;
  });
  const orderIndexes = generateNKeysBetween(null, null, body.length);
  const records: Record<string, DocumentTableRecord> = {};
  const fragments: DocumentFragment[] = [];
  body.forEach((tr, i) => {
    const values: DocumentTableRecord['values'] = {};
    columns.forEach((column, j) => {
      const raw = tr.cells[j]?.raw ?? '';
      const def = definition[column]!;
      const links = () => tokenizeHtml(raw).flatMap((t) => (t.kind === 'open' && t.name === 'a' && t.attrs.href !== undefined ? [t.attrs.href] : []));
      const text = () => tokenizeHtml(raw).flatMap((t) => (t.kind === 'text' ? [t.text] : [])).join('').trim();
      switch (def.type) {
        case 'content-ref': {
          const href = links()[0];
          values[column] = href === undefined ? null : refFromUrl(href);
          break;
        }
        case 'files':
        case 'image': {
          const refs = links().map(refFromUrl);
          if (def.type === 'image') values[column] = refs[0] && (refs[0].kind === 'file' || refs[0].kind === 'url') ? refs[0] : null;
          else values[column] = refs.flatMap((ref) => (ref.kind === 'file' ? [ref.file] : []));
          break;
        }
        case 'number':
        case 'rating': {
          const t = text();
          const n = Number(t);
          values[column] = t === '' || !Number.isFinite(n) ? null : n;
          break;
        }
        case 'checkbox':
          values[column] = text() === 'true';
          break;
        case 'select':
          // `<span data-option="<value>">Label</span>` per chosen option, in the cell's order.
          values[column] = tokenizeHtml(raw).flatMap((t) => (t.kind === 'open' && t.name === 'span' && t.attrs['data-option'] !== undefined ? [t.attrs['data-option']] : []));
          break;
        default: {
          const fragment = `r${i}${column}`;
          values[column] = fragment;
          fragments.push({ object: 'fragment', fragment, nodes: cellBlocks(r, raw) });
        }
      }
    });
    records[`r${i}`] = { orderIndex: orderIndexes[i]!, values };
  });
  let view: DocumentBlockTable['data']['view'];
  if (cards) {
    const cardSize = tableAttrs['data-card-size'] === 'large' ? 'large' : 'medium';
    view = { type: 'cards', columns: visible, cardSize };
    if (target) view.targetDefinition = target;
    if (cover) view.coverDefinition = cover;
    if (coverDark) view.coverDefinitionDark = coverDark;
    if ('data-hide-column-title' in tableAttrs) view.hideColumnTitle = true;
    if (tableAttrs['data-card-wrap'] === 'false') view.wrap = false;
  } else {
    view = { type: 'grid', columns: visible, hideHeader: 'data-header-hidden' in tableAttrs };
    if (Object.keys(widths).length > 0) view.columnWidths = widths;
  }
  const data: DocumentBlockTable['data'] = { view, records, definition };
  // Explicit either way: GitBook writes `data-full-width="false"` too, and `data-search`.
  const fullWidth = booleanAttr(tableAttrs['data-full-width']);
  if (fullWidth !== undefined) data.fullWidth = fullWidth;
  const search = booleanAttr(tableAttrs['data-search']);
  if (search !== undefined) data.search = search;
  return { object: 'block', type: 'table', data, fragments, isVoid: true };
}

/** `"true"` (or a bare attribute) and `"false"`; undefined when absent or anything else. */
function booleanAttr(value: string | undefined): boolean | undefined {
  if (value === 'false') return false;
  return isTrue(value) ? true : undefined;
}

/** A list in a cell (`<ul><li>…</li></ul>`, as GitBook writes one): an item per `<li>`, its text a paragraph. */
function cellList(r: Reader, inner: string, ordered: boolean): DocumentBlockListOrdered | DocumentBlockListUnordered {
  const items: DocumentBlockListItem[] = [];
  for (const m of inner.matchAll(/<li\b[^>]*>([\s\S]*?)<\/li>/gi)) {
    items.push({ object: 'block', type: 'list-item', data: {}, nodes: [paragraph(assemble(r.inlineMarkdown(m[1]!, [], { keepSpaces: true, emojiAsText: true })))] });
  }
  if (items.length === 0) items.push({ object: 'block', type: 'list-item', data: {}, nodes: [paragraph(assemble(r.inlineMarkdown(inner.replace(/<\/?li\b[^>]*>/gi, ''), [], { emojiAsText: true })))] });
  return ordered ? { object: 'block', type: 'list-ordered', data: {}, nodes: items } : { object: 'block', type: 'list-unordered', data: {}, nodes: items };
}

export function markdownTable(r: Reader, node: md.Table): DocumentBlockTable {
  const [header, ...rows] = node.children;
  const width = Math.max(node.align?.length ?? 0, header?.children.length ?? 0);
  const columns = Array.from({ length: width }, (_, j) => `c${j}`);
  const definition: Record<string, DocumentTableDefinition> = {};
  columns.forEach((id, j) => {
    const cell = header?.children[j];
    definition[id] = {
      id,
      title: cell ? plainOfPieces(phrasing(r, cell.children, [])).replace(/\n/g, ' ').trim() : '',
      type: 'text',
      textAlignment: node.align?.[j] ?? 'left',
    };
  });
  const orderIndexes = generateNKeysBetween(null, null, rows.length);
  const records: Record<string, DocumentTableRecord> = {};
  const fragments: DocumentFragment[] = [];
  const edges = cellEdges(r, node, width);
  rows.forEach((row, i) => {
    const values: DocumentTableRecord['values'] = {};
    columns.forEach((column, j) => {
      const fragment = `r${i}${column}`;
      values[column] = fragment;
      const cell = row.children[j];
      // GitBook writes a cell holding several paragraphs or a list as HTML inside the pipe table.
      // (a cell's source may include its delimiting pipes)
      const raw = cell ? r.raw(cell).replace(/^\s*\|/, '').replace(/(?<!\\)\|\s*$/, '') : '';
      if (/<(?:p|ul|ol)\b[^>]*>/i.test(raw)) {
        fragments.push({ object: 'fragment', fragment, nodes: cellBlocks(r, raw.replace(/\\\|/g, '|')) });
        return;
      }
      const pieces = trimEdges(phrasing(r, cell?.children ?? [], []));
      const edge = edges[i]?.[j];
      if (edge?.start) pieces.unshift({ kind: 'text', text: edge.start, marks: [] });
      if (edge?.end) pieces.push({ kind: 'text', text: edge.end, marks: [] });
      fragments.push({ object: 'fragment', fragment, nodes: [paragraph(assemble(pieces))] });
    });
    records[`r${i}`] = { orderIndex: orderIndexes[i]!, values };
  });
  return {
    object: 'block',
    type: 'table',
    data: { view: { type: 'grid', columns, hideHeader: false }, records, definition },
    fragments,
    isVoid: true,
  };
}

/**
 * Spaces at the edges of body cells that markdown trims but GitBook's text had: GitBook writes a
 * cell as `| ` + its text + padding + ` |`, so spaces beyond the first after the pipe start the
 * text, and a column padded wider than its longest cell (its delimiter row says how wide) had
 * spaces ending a cell — given to its longest cell, which gives the column the same width again.
 * Only for tables laid out that way (every row padded to the delimiter row's widths).
 */
function cellEdges(r: Reader, node: md.Table, width: number): { start?: string; end?: string }[][] {
  const lines = r.raw(node).split('\n');
  const split = (line: string) => {
    const m = /^\|(.*)\|\s*$/.exec(line.trimEnd());
    return m ? m[1]!.split(/(?<!\\)\|/) : null;
  };
  const rows = lines.map(split);
  if (rows.some((cells) => cells === null || cells.length !== width)) return [];
  const widths = rows[1]!.map((c) => (/^ -+ $/.test(c) ? c.length - 2 : -1));
  // Every row padded to those widths: a cell is ` text<padding> `.
  if (widths.includes(-1) || !rows.every((cells) => cells!.every((c, j) => c.length === widths[j]! + 2 && c.startsWith(' ') && c.endsWith(' ')))) return [];
  const body = rows.slice(2) as string[][];
  const out = body.map((cells) =>
    cells.map((c): { start?: string; end?: string } => {
      const lead = /^ ( *)/.exec(c)![1]!;
      return lead && c.trim() !== '' ? { start: lead } : {};
    }),
  );
  widths.forEach((w, j) => {
    const lengths = [rows[0]![j]!, ...body.map((cells) => cells[j]!)].map((c) => c.slice(1).trimEnd().length);
    const longest = Math.max(...lengths);
    const at = lengths.lastIndexOf(longest) - 1;
    if (longest < w && at >= 0 && body[at]![j]!.trim() !== '') out[at]![j]!.end = ' '.repeat(w - longest);
  });
  return out;
}

/**
 * A cell's rich text: one paragraph per `<p>` and one heading per `<h1>`…`<h6>` (card titles are
 * written `<td><h4>…</h4></td>`), text between them a paragraph of its own; one paragraph when
 * the cell has none of them.
 */
function cellBlocks(r: Reader, raw: string): (DocumentBlockParagraph | DocumentBlockHeading | DocumentBlockListOrdered | DocumentBlockListUnordered)[] {
  const tokens = tokenizeHtml(raw);
  const isBlock = (t: HtmlToken | undefined) => t?.kind === 'open' && (t.name === 'p' || t.name === 'ul' || t.name === 'ol' || /^h[1-6]$/.test(t.name));
  const spans: { from: number; to: number; tag: string | null }[] = [];
  let loose = 0;
  const looseText = (to: number) => {
    if (raw.slice(loose, to).replace(/<\/?p>/gi, '').trim() !== '') spans.push({ from: loose, to, tag: null });
  };
  for (let k = 0; k < tokens.length; k++) {
    const t = tokens[k]!;
    if (!isBlock(t) || t.kind !== 'open') continue;
    looseText(t.start);
    if (t.name === 'ul' || t.name === 'ol') {
      // A list runs to its own closing tag (lists may nest).
      let depth = 0;
      let j = k;
      for (; j < tokens.length; j++) {
        const u = tokens[j]!;
        if (u.kind === 'open' && u.name === t.name) depth++;
        if (u.kind === 'close' && u.name === t.name && --depth === 0) break;
      }
      const stop = tokens[j];
      spans.push({ from: t.end, to: stop ? stop.start : raw.length, tag: t.name });
      loose = stop ? stop.end : raw.length;
      k = j;
      continue;
    }
    // It runs to its closing tag, or to the next paragraph or heading (an unclosed `<p>`), or to the end.
    let j = k + 1;
    while (j < tokens.length && !isBlock(tokens[j]) && !(tokens[j]!.kind === 'close' && (tokens[j] as { name: string }).name === t.name)) j++;
    const stop = tokens[j];
    spans.push({ from: t.end, to: stop ? stop.start : raw.length, tag: t.name });
    loose = stop ? (stop.kind === 'close' ? stop.end : stop.start) : raw.length;
    k = stop?.kind === 'close' ? j : j - 1;
  }
  if (spans.length === 0) return [paragraph(assemble(r.inlineMarkdown(raw.replace(/\n/g, ' '), [], { keepSpaces: true, emojiAsText: true })))];
  looseText(raw.length);
  return spans.map(({ from, to, tag }) => {
    const inner = raw.slice(from, to).replace(/\n/g, ' ');
    if (tag === null || tag === 'p') return paragraph(assemble(r.inlineMarkdown(inner, [], { keepSpaces: true, emojiAsText: true })));
    if (tag === 'ul' || tag === 'ol') return cellList(r, inner, tag === 'ol');
    const { reader, root } = r.nested(inner, true);
    const para = root.children[0];
    const children = root.children.length === 1 && para?.type === 'paragraph' ? para.children : [{ type: 'text' as const, value: plainOfPieces(r.inlineMarkdown(inner)) }];
    return heading(reader, { type: 'heading', depth: Number(tag[1]) as 1 | 2 | 3, children });
  });
}
