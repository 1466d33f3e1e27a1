/**
 * The blocks a writer can insert (the `/` menu and the markdown shortcuts share them): each with
 * its name, the words it is found by, the GitBook type it makes (to offer it only where the
 * official schema allows it) and how it is made.
 */
import type { Editor, JSONContent } from '@tiptap/core';
import type { Node as PMNode, ResolvedPos } from '@tiptap/pm/model';
import { Selection } from '@tiptap/pm/state';
import { ALLOWED_CHILDREN } from './model.ts';

export interface BlockChoice {
  id: string;
  name: string;
  /** Other words the filter matches. */
  keywords: string;
  /** The GitBook block type it makes. */
  gbType: string;
  /** Inserts it where the selection is (the `/query` text already removed). */
  insert(editor: Editor, context: InsertContext): boolean;
}

export interface InsertContext {
  /** Asks for an image file and uploads it; absent when the page has no uploads. */
  pickImage?: () => void;
}

const paragraph = (): JSONContent => ({ type: 'paragraph' });

/** A shell of a new GitBook node (no key: the server gives it its own). */
export function newShell(type: string, data: Record<string, unknown> = {}, extra: Record<string, unknown> = {}): Record<string, unknown> {
  return { object: 'block', type, data, nodes: null, ...extra };
}

/** Inserts a block at the selection, then puts the cursor in its first text (a code line, the first tab…). */
function insertJson(editor: Editor, content: JSONContent): boolean {
  const { $from } = editor.state.selection;
  // An empty paragraph is replaced by the block: it starts where the paragraph did.
  const start = $from.parent.isTextblock && $from.parent.content.size === 0 ? $from.before() : $from.pos;
  if (!editor.chain().focus().insertContent(content).run()) return false;
  const doc = editor.state.doc;
  const inserted = doc.nodeAt(Math.min(start, doc.content.size - 1));
  if (!inserted) return true;
  if (!inserted.isAtom) {
    editor.commands.setTextSelection(Selection.near(doc.resolve(Math.min(start + 1, doc.content.size)), 1).from);
    return true;
  }
  // After a block with no text (a table, a formula…), the writer goes on in a paragraph.
  const after = start + inserted.nodeSize;
  const next = doc.resolve(after).nodeAfter;
  if (next?.isTextblock) editor.commands.setTextSelection(after + 1);
  else editor.chain().insertContentAt(after, { type: 'paragraph' }).setTextSelection(after + 1).run();
  return true;
}

export function mathJson(formula = ''): JSONContent {
  return { type: 'gbBlock', attrs: { json: { object: 'block', type: 'math', data: { formula }, isVoid: true } } };
}

export function dividerJson(): JSONContent {
  return { type: 'gbBlock', attrs: { json: { object: 'block', type: 'divider', data: {}, isVoid: true } } };
}

export function codeBlockJson(syntax = ''): JSONContent {
  return { type: 'codeBlock', attrs: { gb: newShell('code', syntax ? { syntax } : {}) }, content: [{ type: 'codeLine' }] };
}

/** An images block of uploaded files. */
export function imagesJson(files: { id: string; alt?: string }[]): JSONContent {
  return {
    type: 'gbBlock',
    attrs: {
      json: {
        object: 'block',
        type: 'images',
        data: {},
        nodes: files.map((f) => ({ object: 'block', type: 'image', data: { ref: { kind: 'file', file: f.id }, ...(f.alt ? { alt: f.alt } : {}) }, fragments: [], isVoid: true })),
        isVoid: false,
      },
    },
  };
}

/** A grid table of text columns, as Folio's reader makes them from a markdown table. */
export function tableJson(columns = 2, rows = 2): JSONContent {
  const ids = Array.from({ length: columns }, (_, j) => `c${j}`);
  const records: Record<string, unknown> = {};
  const fragments: unknown[] = [];
  for (let i = 0; i < rows; i++) {
    const values: Record<string, string> = {};
    for (const id of ids) {
      values[id] = `r${i}${id}`;
      fragments.push({ object: 'fragment', fragment: `r${i}${id}`, nodes: [{ object: 'block', type: 'paragraph', data: {}, nodes: [{ object: 'text', leaves: [{ object: 'leaf', text: '', marks: [] }] }] }] });
    }
    records[`r${i}`] = { orderIndex: `a${i}`, values };
  }
  const definition = Object.fromEntries(ids.map((id, j) => [id, { id, title: `Column ${j + 1}`, type: 'text', textAlignment: 'left' }]));
  return {
    type: 'gbBlock',
    attrs: { json: { object: 'block', type: 'table', data: { view: { type: 'grid', columns: ids, hideHeader: false }, records, definition }, fragments, isVoid: true } },
  };
}

function tabsItem(title: string): JSONContent {
  return { type: 'tabsItem', attrs: { gb: newShell('tabs-item', { title }) }, content: [paragraph()] };
}

export function tabsItemJson(title: string): JSONContent {
  return tabsItem(title);
}

export const BLOCK_CHOICES: BlockChoice[] = [
  { id: 'text', name: 'Text', keywords: 'paragraph plain', gbType: 'paragraph', insert: (e) => e.chain().focus().setNode('paragraph').run() },
  ...[1, 2, 3].map(
    (level): BlockChoice => ({
      id: `heading-${level}`,
      name: `Heading ${level}`,
      keywords: `title h${level} ${'#'.repeat(level)}`,
      gbType: `heading-${level}`,
      insert: (e) => e.chain().focus().setNode('heading', { level }).run(),
    }),
  ),
  { id: 'bulleted-list', name: 'Bulleted list', keywords: 'unordered bullet ul -', gbType: 'list-unordered', insert: (e) => e.chain().focus().toggleList('bulletList', 'listItem').run() },
  { id: 'numbered-list', name: 'Numbered list', keywords: 'ordered ol 1.', gbType: 'list-ordered', insert: (e) => e.chain().focus().toggleList('orderedList', 'listItem').run() },
  { id: 'task-list', name: 'Task list', keywords: 'todo checkbox checklist', gbType: 'list-tasks', insert: (e) => e.chain().focus().toggleList('taskList', 'taskItem').run() },
  { id: 'quote', name: 'Quote', keywords: 'blockquote citation >', gbType: 'blockquote', insert: (e) => e.chain().focus().wrapIn('blockquote').run() },
  {
    id: 'hint',
    name: 'Hint',
    keywords: 'callout info warning danger success note',
    gbType: 'hint',
    insert: (e) => e.chain().focus().wrapIn('hint', { gb: newShell('hint', { style: 'info' }) }).run(),
  },
  { id: 'code', name: 'Code block', keywords: 'pre snippet ```', gbType: 'code', insert: (e) => insertJson(e, codeBlockJson()) },
  {
    id: 'tabs',
    name: 'Tabs',
    keywords: 'tab panels',
    gbType: 'tabs',
    insert: (e) => insertJson(e, { type: 'tabs', attrs: { gb: newShell('tabs') }, content: [tabsItem('First tab'), tabsItem('Second tab')] }),
  },
  {
    id: 'stepper',
    name: 'Stepper',
    keywords: 'steps tutorial',
    gbType: 'stepper',
    insert: (e) =>
      insertJson(e, {
        type: 'stepper',
        attrs: { gb: newShell('stepper') },
        content: [
          { type: 'stepperStep', content: [paragraph()] },
          { type: 'stepperStep', content: [paragraph()] },
        ],
      }),
  },
  {
    id: 'expandable',
    name: 'Expandable',
    keywords: 'details collapse accordion toggle',
    gbType: 'expandable',
    insert: (e) =>
      insertJson(e, {
        type: 'expandable',
        content: [
          { type: 'expandableTitle', content: [paragraph()] },
          { type: 'expandableBody', content: [paragraph()] },
        ],
      }),
  },
  { id: 'table', name: 'Table', keywords: 'grid rows columns', gbType: 'table', insert: (e) => insertJson(e, tableJson()) },
  {
    id: 'image',
    name: 'Image',
    keywords: 'picture photo upload',
    gbType: 'images',
    insert: (_e, context) => {
      if (!context.pickImage) return false;
      context.pickImage();
      return true;
    },
  },
  { id: 'math', name: 'Math', keywords: 'formula latex tex equation', gbType: 'math', insert: (e) => insertJson(e, mathJson()) },
  { id: 'divider', name: 'Divider', keywords: 'horizontal rule separator hr ---', gbType: 'divider', insert: (e) => insertJson(e, dividerJson()) },
];

/** PM container nodes and the GitBook container whose rules apply in them. */
const CONTAINER_OF: Record<string, keyof typeof ALLOWED_CHILDREN> = {
  doc: 'document',
  blockquote: 'blockquote',
  hint: 'hint',
  conditional: 'if',
  listItem: 'list-item',
  taskItem: 'list-item',
  tabsItem: 'tabs-item',
  stepperStep: 'stepper-step',
  column: 'column',
  update: 'update',
  expandableBody: 'expandable-body',
};

/** The GitBook container the block at `$pos` stands in (its nearest container ancestor). */
export function containerAt($pos: ResolvedPos): keyof typeof ALLOWED_CHILDREN | null {
  for (let depth = $pos.depth; depth >= 0; depth--) {
    const node: PMNode = $pos.node(depth);
    const container = CONTAINER_OF[node.type.name];
    if (container) return container;
    // Inside an expandable's title, a code line…: no block may be inserted there.
    if (node.type.name === 'expandableTitle' || node.type.name === 'codeLine') return null;
  }
  return 'document';
}

/** Choices a writer may insert at the selection, filtered by what they typed after `/`. */
export function choicesFor(editor: Editor, query: string, context: InsertContext): BlockChoice[] {
  const container = containerAt(editor.state.selection.$from);
  if (!container) return [];
  const allowed = ALLOWED_CHILDREN[container]!;
  const words = query.toLowerCase().trim().split(/\s+/).filter(Boolean);
  return BLOCK_CHOICES.filter((choice) => {
    if (!allowed.includes(choice.gbType)) return false;
    if (choice.id === 'image' && !context.pickImage) return false;
    const haystack = `${choice.name} ${choice.keywords}`.toLowerCase();
    return words.every((w) => haystack.includes(w));
  });
}
