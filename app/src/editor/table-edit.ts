/**
 * Editing a grid table's text: column titles and cells of text columns, rows and columns added.
 * A table stays an atom holding its GitBook JSON; each edit makes a new table JSON (nothing else
 * of it changes). Only cells of plain text are inputs: a cell with marks, links or several blocks
 * is shown as text and left as it is, so editing the table never flattens rich cells.
 */
import { type GBNode, isRecord } from './model.ts';
import { h } from './preview.ts';
import { tableRows } from './preview.ts';

type Json = Record<string, unknown>;

function emptyParagraph(text = ''): Json {
  return { object: 'block', type: 'paragraph', data: {}, nodes: [{ object: 'text', leaves: [{ object: 'leaf', text, marks: [] }] }] };
}

/** The text of a cell that is plain text (one paragraph of unmarked text); null for a rich cell. */
export function plainCell(fragment: GBNode | undefined): string | null {
  if (!fragment) return '';
  const blocks = fragment.nodes ?? [];
  if (blocks.length === 0) return '';
  if (blocks.length !== 1 || blocks[0]!.type !== 'paragraph') return null;
  let text = '';
  for (const node of blocks[0]!.nodes ?? []) {
    if (node.object !== 'text' || !Array.isArray(node.leaves)) return null;
    for (const leaf of node.leaves as { text: string; marks: unknown[] }[]) {
      if (leaf.marks.length > 0) return null;
      text += leaf.text;
    }
  }
  return text;
}

/** The table with one cell's text set (its fragment made if it has none). */
export function setCellText(table: GBNode, recordId: string, columnId: string, text: string): GBNode {
  const data = table.data as Json;
  const records = { ...(data.records as Record<string, { orderIndex: string; values: Json }>) };
  const record = records[recordId]!;
  let fragmentId = record.values[columnId];
  if (typeof fragmentId !== 'string') {
    fragmentId = freshFragmentId(table, recordId, columnId);
    records[recordId] = { ...record, values: { ...record.values, [columnId]: fragmentId } };
  }
  const fragments = [...(table.fragments ?? [])];
  const at = fragments.findIndex((f) => f.fragment === fragmentId);
  if (at >= 0) {
    const fragment = fragments[at]!;
    const paragraph = fragment.nodes?.[0];
    // The paragraph keeps its key and data; only its text is new.
    const nodes = [paragraph && paragraph.type === 'paragraph' ? { ...paragraph, nodes: (emptyParagraph(text).nodes as GBNode[]) } : emptyParagraph(text)];
    fragments[at] = { ...fragment, nodes: nodes as GBNode[] };
  } else fragments.push({ object: 'fragment', fragment: fragmentId, nodes: [emptyParagraph(text) as GBNode] });
  return { ...table, data: { ...data, records }, fragments };
}

function freshFragmentId(table: GBNode, recordId: string, columnId: string): string {
  const taken = new Set((table.fragments ?? []).map((f) => f.fragment));
  let id = `${recordId}${columnId}`;
  for (let n = 1; taken.has(id); n++) id = `${recordId}${columnId}-${n}`;
  return id;
}

export function setColumnTitle(table: GBNode, columnId: string, title: string): GBNode {
  const data = table.data as Json;
  const definition = { ...(data.definition as Record<string, Json>) };
  definition[columnId] = { ...definition[columnId], title };
  return { ...table, data: { ...data, definition } };
}

export function addRow(table: GBNode): GBNode {
  const data = table.data as Json;
  const { columns, definition, records } = tableRows(table);
  const ids = new Set(Object.keys(isRecord(data.records) ? data.records : {}));
  let recordId = `r${ids.size}`;
  for (let n = ids.size + 1; ids.has(recordId); n++) recordId = `r${n}`;
  // After every other row: any longer string starting with the greatest index sorts after it.
  const last = records.at(-1)?.[1] as { orderIndex?: string } | undefined;
  const orderIndex = `${last?.orderIndex ?? 'a'}V`;
  const values: Json = {};
  let out: GBNode = { ...table, data: { ...data, records: { ...(data.records as Json), [recordId]: { orderIndex, values } } } };
  for (const column of columns) if (definition[column]?.type === 'text') out = setCellText(out, recordId, column, '');
  return out;
}

export function addColumn(table: GBNode): GBNode {
  const data = table.data as Json;
  const view = data.view as Json;
  const definition = { ...(data.definition as Record<string, Json>) };
  let n = Object.keys(definition).length;
  while (definition[`c${n}`]) n++;
  const id = `c${n}`;
  definition[id] = { id, title: `Column ${(view.columns as string[]).length + 1}`, type: 'text', textAlignment: 'left' };
  let out: GBNode = { ...table, data: { ...data, definition, view: { ...view, columns: [...(view.columns as string[]), id] } } };
  for (const [recordId] of tableRows(out).records) out = setCellText(out, recordId, id, '');
  return out;
}

/**
 * The editable grid of a table. `typed` gets the table after a title or cell edit (the grid stays:
 * the input keeps its focus), `reshaped` after a row or column is added (the grid is drawn again).
 */
export function tableEditor(table: GBNode, on: { typed(next: GBNode): void; reshaped(next: GBNode): void }): HTMLElement {
  let current = table;
  const update = (next: GBNode) => {
    current = next;
    on.typed(next);
  };
  const { columns, definition, records } = tableRows(table);
  const grid = h('table', { className: 'gb-table gb-table-edit' });
  const titles = columns.map((column, j) => {
    const input = h('input', { className: 'gb-input gb-cell-input', attrs: { type: 'text', 'aria-label': `Column ${j + 1} title` } });
    input.value = String(definition[column]?.title ?? '');
    input.addEventListener('input', () => update(setColumnTitle(current, column, input.value)));
    return h('th', { attrs: { scope: 'col' } }, [input]);
  });
  grid.appendChild(h('thead', {}, [h('tr', {}, titles)]));
  const body = h('tbody');
  records.forEach(([recordId, record], i) => {
    const row = h('tr');
    columns.forEach((column, j) => {
      const def = definition[column];
      const value = record.values[column];
      const fragment = typeof value === 'string' ? (table.fragments ?? []).find((f) => f.fragment === value) : undefined;
      const text = def?.type === 'text' ? plainCell(fragment) : null;
      if (text === null) {
        row.appendChild(h('td', { className: 'gb-cell-rich', text: fragment ? (fragment.nodes ?? []).map(textOf).join('\n') : String(value ?? ''), attrs: { title: 'Rich content, kept as it is' } }));
        return;
      }
      const input = h('input', { className: 'gb-input gb-cell-input', attrs: { type: 'text', 'aria-label': `Row ${i + 1}, column ${j + 1}` } });
      input.value = text;
      input.addEventListener('input', () => update(setCellText(current, recordId, column, input.value)));
      row.appendChild(h('td', {}, [input]));
    });
    body.appendChild(row);
  });
  grid.appendChild(body);
  const addRowButton = h('button', { className: 'gb-table-add', text: 'Add row', attrs: { type: 'button' } });
  addRowButton.addEventListener('click', () => on.reshaped(addRow(current)));
  const addColumnButton = h('button', { className: 'gb-table-add', text: 'Add column', attrs: { type: 'button' } });
  addColumnButton.addEventListener('click', () => on.reshaped(addColumn(current)));
  return h('div', { className: 'gb-table-wrap', attrs: { role: 'group', 'aria-label': 'Table' } }, [grid, h('div', { className: 'gb-table-tools' }, [addRowButton, addColumnButton])]);
}

function textOf(node: unknown): string {
  if (Array.isArray(node)) return node.map(textOf).join('');
  if (!isRecord(node)) return '';
  if (node.object === 'leaf') return String(node.text ?? '');
  if (node.object === 'text') return textOf(node.leaves);
  return textOf(node.nodes);
}
