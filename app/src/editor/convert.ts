/**
 * GitBook document ⇄ ProseMirror document, losslessly: `fromProseMirror(toProseMirror(d))` is `d`
 * for every document Folio stores (same keys, data, fragments, leaves and marks, in the same
 * order). How:
 *
 * - every PM node keeps its GitBook node minus its children in the `gb` attribute, the children's
 *   place marked with `null` so the rebuilt object has its keys in their order;
 * - blocks without a rich node (tables, images, embeds, OpenAPI, math…) and inlines other than
 *   links and annotations become `gbBlock`/`gbInline` atoms holding their JSON untouched; so does
 *   any container whose shape the editor cannot hold (a tabs block without tabs, say);
 * - a block a container may not hold (per the official schema) is kept as an atom where it stands;
 * - text is stored the way Folio's reader writes it (src/content/markdown/parse-nodes.ts
 *   `assemble`): neighbouring texts are one text object, equal-marked neighbouring leaves one leaf,
 *   marks in a fixed order, and a block without text holds one empty leaf. ProseMirror holds text
 *   the same way (it merges equal-marked text), so this is what comes back.
 *
 * New nodes (no `gb`) get the shape Folio's reader gives them (`object`, `type`, `data`, `nodes`).
 */
import { getSchema } from '@tiptap/core';
import type { JSONContent } from '@tiptap/core';
import type { Mark as PMMark, Node as PMNode, Schema } from '@tiptap/pm/model';
import { ALLOWED_CHILDREN, type GBLeaf, type GBMark, type GBNode, type JSONDocument, LEAF_MARKS, isRecord } from './model.ts';
import { PM_NAME_OF, schemaExtensions } from './schema.ts';

export type { JSONDocument };

type Json = Record<string, unknown>;
type ContainerType = keyof typeof ALLOWED_CHILDREN;

const LEAF_MARK_SET = new Set<string>(LEAF_MARKS);

/** The node without its children: each child list (`nodes`, `fragments`) present is set to `null`, keeping its place. */
function shell(node: GBNode, children: readonly string[]): Json {
  const out: Json = { ...node };
  for (const key of children) if (key in out) out[key] = null;
  return out;
}

// ───────────────────────────── GitBook → ProseMirror ─────────────────────────────

export function toProseMirror(doc: JSONDocument): JSONContent {
  const nodes = (doc.nodes ?? []) as unknown as GBNode[];
  return { type: 'doc', attrs: { gb: shell(doc as unknown as GBNode, ['nodes']) }, content: blocksToPM(nodes, 'document') };
}

/**
 * Top-level blocks as PM nodes (JSON), for loading a long page piece by piece: the page's blocks
 * converted in slices give what `toProseMirror` gives for the whole page.
 */
export function topLevelToProseMirror(nodes: JSONDocument['nodes']): JSONContent[] {
  return nodes.length === 0 ? [] : blocksToPM(nodes, 'document');
}

function atom(node: GBNode): JSONContent {
  return { type: 'gbBlock', attrs: { json: node } };
}

function placeholderParagraph(): JSONContent {
  return { type: 'paragraph', attrs: { gb: null, placeholder: true } };
}

/** The children of a container: never empty (a placeholder paragraph stands in), each one it may hold. */
function blocksToPM(nodes: unknown, container: ContainerType): JSONContent[] {
  if (!Array.isArray(nodes) || nodes.length === 0) return [placeholderParagraph()];
  const allowed = ALLOWED_CHILDREN[container]!;
  return nodes.map((node: GBNode) => (allowed.includes(node.type ?? '') ? blockToPM(node) : atom(node)));
}

function isBlock(node: unknown): node is GBNode {
  return isRecord(node) && node.object === 'block' && typeof node.type === 'string';
}

/** Children of a list-like container, each of the one type it holds; null when any is not. */
function itemsOf(node: GBNode, itemType: string): GBNode[] | null {
  const items = node.nodes;
  if (!Array.isArray(items) || items.length === 0) return null;
  return items.every((item) => isBlock(item) && item.type === itemType) ? items : null;
}

function blockToPM(node: GBNode): JSONContent {
  if (!isBlock(node)) return atom(node);
  const gb = (...children: string[]) => shell(node, children.length ? children : ['nodes']);
  switch (node.type) {
    case 'paragraph':
    case 'heading-1':
    case 'heading-2':
    case 'heading-3': {
      const content = inlinesToPM(node.nodes);
      if (!content) return atom(node);
      if (node.type === 'paragraph') return { type: 'paragraph', attrs: { gb: gb() }, content };
      return { type: 'heading', attrs: { gb: gb(), level: Number(node.type.slice(-1)) }, content };
    }
    case 'list-unordered':
    case 'list-ordered':
    case 'list-tasks': {
      const items = itemsOf(node, 'list-item');
      if (!items) return atom(node);
      const itemName = node.type === 'list-tasks' ? 'taskItem' : 'listItem';
      return {
        type: PM_NAME_OF[node.type],
        attrs: { gb: gb() },
        content: items.map((item) => ({ type: itemName, attrs: { gb: shell(item, ['nodes']) }, content: blocksToPM(item.nodes, 'list-item') })),
      };
    }
    case 'blockquote':
    case 'hint':
    case 'if':
      return { type: PM_NAME_OF[node.type], attrs: { gb: gb() }, content: blocksToPM(node.nodes, node.type) };
    case 'code': {
      const lines = itemsOf(node, 'code-line');
      if (!lines) return atom(node);
      const content: JSONContent[] = [];
      for (const line of lines) {
        const inlines = inlinesToPM(line.nodes, CODE_LINE_INLINES);
        if (!inlines) return atom(node);
        content.push({ type: 'codeLine', attrs: { gb: shell(line, ['nodes']) }, content: inlines });
      }
      return { type: 'codeBlock', attrs: { gb: gb() }, content };
    }
    case 'tabs':
    case 'stepper':
    case 'columns':
    case 'updates': {
      const itemType = ITEM_OF[node.type]!;
      const items = itemsOf(node, itemType.gb);
      if (!items) return atom(node);
      return {
        type: PM_NAME_OF[node.type],
        attrs: { gb: gb() },
        content: items.map((item) => ({ type: itemType.pm, attrs: { gb: shell(item, ['nodes']) }, content: blocksToPM(item.nodes, itemType.gb as ContainerType) })),
      };
    }
    case 'expandable': {
      const [title, body, ...rest] = Array.isArray(node.fragments) ? node.fragments : [];
      const titleParagraph = title?.nodes?.[0];
      if (
        rest.length > 0 ||
        title?.object !== 'fragment' ||
        title.fragment !== 'expandable-title' ||
        body?.object !== 'fragment' ||
        body.fragment !== 'expandable-body' ||
        title.nodes?.length !== 1 ||
        !isBlock(titleParagraph) ||
        titleParagraph.type !== 'paragraph'
      ) {
        return atom(node);
      }
      const titleInlines = inlinesToPM(titleParagraph.nodes);
      if (!titleInlines) return atom(node);
      return {
        type: 'expandable',
        attrs: { gb: gb('fragments') },
        content: [
          {
            type: 'expandableTitle',
            attrs: { gb: shell(title, ['nodes']) },
            content: [{ type: 'paragraph', attrs: { gb: shell(titleParagraph, ['nodes']) }, content: titleInlines }],
          },
          { type: 'expandableBody', attrs: { gb: shell(body, ['nodes']) }, content: blocksToPM(body.nodes, 'expandable-body') },
        ],
      };
    }
    default:
      return atom(node);
  }
}

const ITEM_OF: Record<string, { gb: string; pm: string }> = {
  tabs: { gb: 'tabs-item', pm: 'tabsItem' },
  stepper: { gb: 'stepper-step', pm: 'stepperStep' },
  columns: { gb: 'column', pm: 'column' },
  updates: { gb: 'update', pm: 'update' },
};

/** A code line holds plain text (and annotations); other inlines stay atoms, and marked text cannot be held. */
const CODE_LINE_INLINES = { links: false, marks: false };
const RICH_INLINES = { links: true, marks: true };

/**
 * Text and inlines as PM inline content; null when some part cannot be held (a block where text
 * belongs). Links and annotations become marks over their text when they have any, atoms otherwise.
 */
function inlinesToPM(nodes: unknown, options: { links: boolean; marks: boolean } = RICH_INLINES): JSONContent[] | null {
  if (!Array.isArray(nodes)) return nodes === undefined ? [] : null;
  const out: JSONContent[] = [];
  for (const node of nodes as GBNode[]) {
    if (!isRecord(node)) return null;
    if (node.object === 'text') {
      if (!pushText(out, node, [], options.marks)) return null;
    } else if (node.object === 'inline') {
      if ((node.type === 'link' && options.links) || node.type === 'annotation') {
        const wrapped = wrapperToPM(node, options.marks);
        if (wrapped) out.push(...wrapped);
        else out.push({ type: 'gbInline', attrs: { json: node } });
      } else out.push({ type: 'gbInline', attrs: { json: node } });
    } else return null;
  }
  return out;
}

/** A link's or annotation's content under its mark; null when it has no text to carry the mark. */
function wrapperToPM(node: GBNode, leafMarksAllowed: boolean): JSONContent[] | null {
  const children = node.nodes;
  if (!Array.isArray(children)) return null;
  const mark = { type: node.type === 'link' ? 'link' : 'annotation', attrs: { gb: shell(node, ['nodes']) } };
  const out: JSONContent[] = [];
  for (const child of children) {
    if (!isRecord(child)) return null;
    if (child.object === 'text') {
      if (!pushText(out, child, [mark], leafMarksAllowed)) return null;
    } else if (node.type === 'link' && child.object === 'inline' && child.type === 'inline-image') {
      out.push({ type: 'gbInline', attrs: { json: child }, marks: [mark] });
    } else return null;
  }
  // An empty link (or one of nothing but empty leaves) cannot carry a mark: it stays whole as an atom.
  if (out.length === 0) return null;
  // Two neighbouring texts of one link would merge: only the canonical form is held.
  return out;
}

function pushText(out: JSONContent[], text: GBNode, outer: JSONContent['marks'] & object, leafMarksAllowed: boolean): boolean {
  if (text.key !== undefined) return false;
  const leaves = text.leaves;
  if (!Array.isArray(leaves)) return false;
  for (const leaf of leaves as GBLeaf[]) {
    if (!isRecord(leaf) || typeof leaf.text !== 'string') return false;
    if (leaf.text === '') continue;
    const marks = [...outer];
    const own = Array.isArray(leaf.marks) ? leaf.marks : [];
    if (own.length > 0 && !leafMarksAllowed) return false;
    for (const mark of own) {
      if (!LEAF_MARK_SET.has(mark.type)) continue;
      if (mark.type === 'color') {
        const data = isRecord(mark.data) ? mark.data : {};
        marks.push({ type: 'color', attrs: { text: data.text ?? 'default', background: data.background ?? 'default' } });
      } else marks.push({ type: mark.type });
    }
    out.push(marks.length ? { type: 'text', text: leaf.text, marks } : { type: 'text', text: leaf.text });
  }
  return true;
}

// ───────────────────────────── ProseMirror → GitBook ─────────────────────────────

let cachedSchema: Schema | undefined;

/** The editor schema (built once; no DOM needed). */
export function editorSchema(): Schema {
  cachedSchema ??= getSchema(schemaExtensions);
  return cachedSchema;
}

export function fromProseMirror(json: JSONContent): JSONDocument {
  return fromProseMirrorNode(editorSchema().nodeFromJSON(json));
}

/**
 * The GitBook document of a PM document. Blocks are converted once per PM node: PM keeps unchanged
 * subtrees as the same objects from one state to the next, so after an edit only the blocks on the
 * path to it are converted again (what keeps saving a long page cheap while typing).
 */
export function fromProseMirrorNode(doc: PMNode): JSONDocument {
  const gb = doc.attrs.gb as Json | null;
  const nodes = containerChildren(doc);
  const out: Json = gb ? { ...gb } : { object: 'document', data: { schemaVersion: 1 }, nodes: null };
  out.nodes = nodes;
  return out as unknown as JSONDocument;
}

const blockCache = new WeakMap<PMNode, GBNode>();

function containerChildren(node: PMNode): GBNode[] {
  // A placeholder left empty stands for an empty container.
  if (node.childCount === 1) {
    const only = node.child(0);
    if (only.type.name === 'paragraph' && only.attrs.placeholder === true && only.childCount === 0) return [];
  }
  const out: GBNode[] = [];
  node.forEach((child) => {
    const block = blockFromPM(child);
    if (block) out.push(block);
  });
  return out;
}

function blockFromPM(node: PMNode): GBNode | null {
  const cached = blockCache.get(node);
  if (cached) return cached;
  const block = convertBlock(node);
  if (block) blockCache.set(node, block);
  return block;
}

/** The node's `gb` with its type set and its children put back (`defaults` when it has none: a new node). */
function rebuild(node: PMNode, type: string, defaults: () => Json, children: Json): GBNode {
  const gb = node.attrs.gb as Json | null;
  const out: Json = gb ? { ...gb } : defaults();
  if ('type' in out || !gb) out.type = type;
  for (const [key, value] of Object.entries(children)) out[key] = value;
  return out as GBNode;
}

const blockShape = (type: string, data: Json = {}) => () => ({ object: 'block', type, data, nodes: null });

function convertBlock(node: PMNode): GBNode | null {
  const name = node.type.name;
  switch (name) {
    case 'gbBlock':
      return (node.attrs.json as GBNode | null) ?? null;
    case 'paragraph':
      return rebuild(node, 'paragraph', blockShape('paragraph'), { nodes: inlinesFromPM(node) });
    case 'heading': {
      const type = `heading-${Math.min(3, Math.max(1, Number(node.attrs.level) || 1))}`;
      return rebuild(node, type, blockShape(type), { nodes: inlinesFromPM(node) });
    }
    case 'bulletList':
    case 'orderedList':
    case 'taskList': {
      const type = name === 'bulletList' ? 'list-unordered' : name === 'orderedList' ? 'list-ordered' : 'list-tasks';
      const items: GBNode[] = [];
      node.forEach((item) => items.push(listItemFromPM(item, name === 'taskList')));
      return rebuild(node, type, blockShape(type), { nodes: items });
    }
    case 'blockquote':
      return rebuild(node, 'blockquote', blockShape('blockquote'), { nodes: containerChildren(node) });
    case 'hint':
      return rebuild(node, 'hint', blockShape('hint', { style: 'info' }), { nodes: containerChildren(node) });
    case 'conditional':
      return rebuild(node, 'if', blockShape('if', { expression: '' }), { nodes: containerChildren(node) });
    case 'codeBlock': {
      const lines: GBNode[] = [];
      node.forEach((line) => lines.push(rebuild(line, 'code-line', blockShape('code-line'), { nodes: inlinesFromPM(line) })));
      return rebuild(node, 'code', blockShape('code'), { nodes: lines });
    }
    case 'tabs':
    case 'stepper':
    case 'columns':
    case 'updates': {
      const type = name;
      const itemType = ITEM_OF[type]!.gb;
      const items: GBNode[] = [];
      node.forEach((item) => items.push(rebuild(item, itemType, itemDefaults(itemType), { nodes: containerChildren(item) })));
      const defaults = type === 'updates' ? blockShape('updates', { format: 'full' }) : type === 'columns' ? () => ({ ...blockShape('columns')(), isVoid: false }) : blockShape(type);
      return rebuild(node, type, defaults, { nodes: items });
    }
    case 'expandable': {
      const title = node.child(0);
      const body = node.child(1);
      const titleParagraph = blockFromPM(title.child(0))!;
      const fragments = [
        rebuild(title, 'expandable-title', fragmentShape('expandable-title'), { nodes: [titleParagraph] }),
        rebuild(body, 'expandable-body', fragmentShape('expandable-body'), { nodes: containerChildren(body) }),
      ];
      return rebuild(node, 'expandable', () => ({ object: 'block', type: 'expandable', data: {}, fragments: null, isVoid: true }), { fragments });
    }
    default:
      return null;
  }
}

function fragmentShape(name: string) {
  return () => ({ object: 'fragment', fragment: name, type: name, nodes: null });
}

function itemDefaults(type: string): () => Json {
  if (type === 'tabs-item') return blockShape(type, { title: '' });
  if (type === 'update') return blockShape(type, { date: new Date().toISOString() });
  return blockShape(type);
}

function listItemFromPM(item: PMNode, task: boolean): GBNode {
  const out = rebuild(item, 'list-item', blockShape('list-item', task ? { checked: false } : {}), { nodes: containerChildren(item) });
  // The item of a task list says whether it is checked; an item of any other list does not.
  const data = isRecord(out.data) ? out.data : undefined;
  if (task && (!data || typeof data.checked !== 'boolean')) out.data = { ...data, checked: false };
  if (!task && data && 'checked' in data) {
    const { checked: _checked, ...rest } = data;
    out.data = rest;
  }
  return out;
}

/** A wrapper mark (link, annotation) of a PM inline node, if any. */
function wrapperMark(node: PMNode): PMMark | undefined {
  return node.marks.find((m) => m.type.name === 'link' || m.type.name === 'annotation');
}

function inlinesFromPM(block: PMNode): GBNode[] {
  const children: PMNode[] = [];
  block.forEach((child) => children.push(child));
  const out: GBNode[] = [];
  let i = 0;
  while (i < children.length) {
    const child = children[i]!;
    const wrapper = wrapperMark(child);
    if (wrapper) {
      let j = i + 1;
      while (j < children.length && wrapperMark(children[j]!)?.eq(wrapper)) j++;
      const gb = (wrapper.attrs.gb as Json | null) ?? { object: 'inline', type: wrapper.type.name, data: {}, nodes: null };
      const inner = inlineRun(children.slice(i, j));
      const node: Json = { ...gb, nodes: inner };
      if (!gb || !('type' in gb)) node.type = wrapper.type.name;
      out.push(node as GBNode);
      i = j;
    } else {
      let j = i + 1;
      while (j < children.length && !wrapperMark(children[j]!)) j++;
      out.push(...inlineRun(children.slice(i, j)));
      i = j;
    }
  }
  if (out.length === 0) out.push({ object: 'text', leaves: [{ object: 'leaf', text: '', marks: [] }] });
  return out;
}

/** Texts and atoms with no wrapper between them: neighbouring texts make one text object. */
function inlineRun(nodes: PMNode[]): GBNode[] {
  const out: GBNode[] = [];
  let leaves: GBLeaf[] | null = null;
  for (const node of nodes) {
    if (node.isText) {
      if (!leaves) {
        leaves = [];
        out.push({ object: 'text', leaves });
      }
      leaves.push({ object: 'leaf', text: node.text ?? '', marks: leafMarks(node.marks) });
    } else {
      leaves = null;
      const json = node.attrs.json as GBNode | null;
      if (json) out.push(json);
    }
  }
  return out;
}

function leafMarks(marks: readonly PMMark[]): GBMark[] {
  const out: GBMark[] = [];
  for (const mark of marks) {
    const type = mark.type.name;
    if (!LEAF_MARK_SET.has(type)) continue;
    if (type === 'color') out.push({ object: 'mark', type, data: { text: mark.attrs.text, background: mark.attrs.background } });
    else out.push({ object: 'mark', type });
  }
  return out;
}
