import type { DocumentBlockTable, DocumentFragment, DocumentTableDefinition } from '@gitbook/api';
import type * as md from 'mdast';
import { type Block, type InlineOrText, urlFromRef } from './shared.ts';
import { escapeAttr, escapeHtmlText } from './tags.ts';
import { type Notes, cardLinkLabel, html, inlineMarkdown, phrasing, textOf } from './serialize-inline.ts';

/** Tables: a plain grid as a pipe table, any other (cards, widths, typed columns) as GitBook's HTML. */

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
export function isPipeTable(block: DocumentBlockTable): boolean {
  const { view, definition, fullWidth, search, cellMerges } = block.data;
  // What only HTML attributes can say (a width, `data-full-width`, `data-search`, `valign`) makes an HTML table.
  if (view.type !== 'grid' || view.hideHeader || view.columnWidths || fullWidth !== undefined || search !== undefined) return false;
  if ((cellMerges && cellMerges.length > 0) || view.columns.length === 0 || view.columns.length !== Object.keys(definition).length) return false;
  if (!view.columns.every((c) => { const def = definition[c]; return def?.type === 'text' && !def.verticalAlignment; })) return false;
  // Cells of paragraphs, lists and headings fit: several of them are written as HTML in the cell, as GitBook does.
  return Object.values(block.data.records).every((record) =>
    view.columns.every((c) => {
      const fragment = fragmentOf(block, record.values[c]);
      return fragment !== undefined && fragment.nodes.length > 0 && fragment.nodes.every((n) => PIPE_CELL_BLOCKS.has(n.type));
    }),
  );
}

const PIPE_CELL_BLOCKS = new Set(['paragraph', 'list-ordered', 'list-unordered', 'heading-1', 'heading-2', 'heading-3']);

/** A pipe table's cell: one paragraph as markdown; anything richer as one line of HTML, its `|` escaped. */
function pipeCell(block: DocumentBlockTable, def: DocumentTableDefinition | undefined, value: unknown, notes: Notes): md.PhrasingContent[] {
  const fragment = fragmentOf(block, value);
  const only = fragment?.nodes.length === 1 ? fragment.nodes[0]! : undefined;
  // GitBook writes a paragraph holding a line break as HTML too: `<p>none<br>(just a check)</p>`.
  if (only?.type === 'paragraph' && textOf([only]).includes('\n')) return [html(`<p>${cellHtml(fragment!.nodes, notes)}</p>`.replace(/\|/g, '\\|'))];
  if (!fragment || only?.type === 'paragraph') return cellValue(block, def, value, notes);
  return [html(cellHtml(fragment.nodes, notes).replace(/\|/g, '\\|'))];
}

export function pipeTable(block: DocumentBlockTable, notes: Notes): md.Table {
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
      children: columns.map((c) => ({ type: 'tableCell', children: pipeCell(block, definition[c], record.values[c], notes) })),
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
export function htmlTable(block: DocumentBlockTable, notes: Notes): string {
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
  const link = (url: string) => `<a href="${escapeAttr(url)}">${escapeHtmlText(cardLinkLabel(url))}</a>`;
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
