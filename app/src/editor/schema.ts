/**
 * The editor's ProseMirror schema, as Tiptap extensions: one node or mark per GitBook type that has
 * a rich editing UI, and two atoms (`gbBlock`, `gbInline`) that hold any other GitBook node as its
 * JSON, untouched. Every node carries `gb`: the GitBook node it came from minus its children (key,
 * data, isVoid, meta… in their order), so conversion back gives exactly what came in.
 *
 * This module has no DOM or React: tests build the schema in node (`getSchema(schemaExtensions)`).
 * Node views and editing behaviour are added on top in nodeviews.ts and behaviour.ts.
 */
import { type Attribute, Mark, Node, mergeAttributes } from '@tiptap/core';
import { Fragment } from '@tiptap/pm/model';
import { describeRef, hrefOf } from './links.ts';
import { ALLOWED_CHILDREN, isRecord } from './model.ts';

/** The PM node name of each GitBook block type with a rich node; any other is a `gbBlock` atom. */
export const PM_NAME_OF: Record<string, string> = {
  paragraph: 'paragraph',
  'heading-1': 'heading',
  'heading-2': 'heading',
  'heading-3': 'heading',
  'list-unordered': 'bulletList',
  'list-ordered': 'orderedList',
  'list-tasks': 'taskList',
  blockquote: 'blockquote',
  hint: 'hint',
  code: 'codeBlock',
  tabs: 'tabs',
  stepper: 'stepper',
  expandable: 'expandable',
  columns: 'columns',
  if: 'conditional',
  updates: 'updates',
};

/** Content expression of a container that may hold the given GitBook types (the atom may stand anywhere a block may). */
export function contentOf(container: keyof typeof ALLOWED_CHILDREN): string {
  const names = new Set<string>();
  for (const type of ALLOWED_CHILDREN[container]!) names.add(PM_NAME_OF[type] ?? 'gbBlock');
  names.add('gbBlock');
  return `(${[...names].join(' | ')})+`;
}

/** Reads the `data-gb` attribute written by `gbAttribute` (clipboard HTML within the editor). */
function readJsonAttribute(element: HTMLElement, name: string): Record<string, unknown> | null {
  const text = element.getAttribute(name);
  if (!text) return null;
  try {
    const value: unknown = JSON.parse(text);
    return isRecord(value) ? value : null;
  } catch {
    return null;
  }
}

/**
 * The GitBook node minus its children. Not kept on split: the new half of a split paragraph is a
 * new node (no key of its own yet), not a copy.
 */
const gbAttribute: Attribute = {
  default: null,
  keepOnSplit: false,
  parseHTML: (element) => readJsonAttribute(element, 'data-gb'),
  renderHTML: (attributes) => (attributes.gb ? { 'data-gb': JSON.stringify(attributes.gb) } : {}),
};

/** A whole GitBook node kept as JSON (atoms). */
const jsonAttribute: Attribute = {
  default: null,
  parseHTML: (element) => readJsonAttribute(element, 'data-json'),
  renderHTML: (attributes) => (attributes.json ? { 'data-json': JSON.stringify(attributes.json) } : {}),
};

/** The `data` of a node's `gb` attribute (or of the atom's `json`). */
export function gbData(attrs: Record<string, unknown>): Record<string, unknown> {
  const source = (attrs.gb ?? attrs.json) as Record<string, unknown> | null;
  return source && isRecord(source.data) ? source.data : {};
}

function container(name: string, gbType: keyof typeof ALLOWED_CHILDREN, tag: string, className: string, group?: string) {
  return Node.create({
    name,
    ...(group ? { group } : {}),
    content: contentOf(gbType),
    defining: true,
    addAttributes: () => ({ gb: gbAttribute }),
    parseHTML: () => [{ tag: `${tag}.${className}` }],
    renderHTML: ({ HTMLAttributes }) => [tag, mergeAttributes(HTMLAttributes, { class: className }), 0],
  });
}

const Doc = Node.create({
  name: 'doc',
  topNode: true,
  content: contentOf('document'),
  addAttributes: () => ({ gb: { default: null, rendered: false } }),
});

const Text = Node.create({ name: 'text', group: 'inline' });

const Paragraph = Node.create({
  name: 'paragraph',
  group: 'block',
  content: 'inline*',
  priority: 1000,
  addAttributes: () => ({
    gb: gbAttribute,
    // Stands in an empty container (the schema asks for one block); dropped again if left empty.
    placeholder: { default: false, keepOnSplit: false, rendered: false },
  }),
  parseHTML: () => [{ tag: 'p' }],
  renderHTML: ({ HTMLAttributes }) => ['p', HTMLAttributes, 0],
});

const Heading = Node.create({
  name: 'heading',
  group: 'block',
  content: 'inline*',
  defining: true,
  addAttributes: () => ({
    gb: gbAttribute,
    level: { default: 1, rendered: false },
  }),
  parseHTML: () => [
    { tag: 'h1', attrs: { level: 1 } },
    { tag: 'h2', attrs: { level: 1 } },
    { tag: 'h3', attrs: { level: 2 } },
    { tag: 'h4', attrs: { level: 3 } },
    { tag: 'h5', attrs: { level: 3 } },
    { tag: 'h6', attrs: { level: 3 } },
  ],
  // heading-1 is the page's first level under its title: an h2 on the page.
  renderHTML: ({ node, HTMLAttributes }) => {
    const id = gbData(node.attrs).id;
    return [`h${Math.min(Number(node.attrs.level) + 1, 4)}`, mergeAttributes(HTMLAttributes, typeof id === 'string' ? { id } : {}), 0];
  },
});

const BulletList = Node.create({
  name: 'bulletList',
  group: 'block',
  content: 'listItem+',
  addAttributes: () => ({ gb: gbAttribute }),
  parseHTML: () => [{ tag: 'ul:not(.gb-tasks)' }],
  renderHTML: ({ HTMLAttributes }) => ['ul', HTMLAttributes, 0],
});

const OrderedList = Node.create({
  name: 'orderedList',
  group: 'block',
  content: 'listItem+',
  addAttributes: () => ({ gb: gbAttribute }),
  parseHTML: () => [{ tag: 'ol' }],
  renderHTML: ({ node, HTMLAttributes }) => {
    const start = gbData(node.attrs).start;
    return ['ol', mergeAttributes(HTMLAttributes, typeof start === 'number' ? { start } : {}), 0];
  },
});

const TaskList = Node.create({
  name: 'taskList',
  group: 'block',
  content: 'taskItem+',
  addAttributes: () => ({ gb: gbAttribute }),
  parseHTML: () => [{ tag: 'ul.gb-tasks', priority: 60 }],
  renderHTML: ({ HTMLAttributes }) => ['ul', mergeAttributes(HTMLAttributes, { class: 'gb-tasks' }), 0],
});

const ListItem = Node.create({
  name: 'listItem',
  content: contentOf('list-item'),
  defining: true,
  addAttributes: () => ({ gb: gbAttribute }),
  parseHTML: () => [{ tag: 'li' }],
  renderHTML: ({ HTMLAttributes }) => ['li', HTMLAttributes, 0],
});

const TaskItem = Node.create({
  name: 'taskItem',
  content: contentOf('list-item'),
  defining: true,
  addAttributes: () => ({ gb: gbAttribute }),
  parseHTML: () => [{ tag: 'li.gb-task', priority: 60 }],
  renderHTML: ({ node, HTMLAttributes }) => [
    'li',
    mergeAttributes(HTMLAttributes, { class: 'gb-task', 'data-checked': gbData(node.attrs).checked === true ? 'true' : 'false' }),
    0,
  ],
});

const Blockquote = container('blockquote', 'blockquote', 'blockquote', 'gb-quote', 'block');
const Hint = container('hint', 'hint', 'div', 'gb-hint', 'block');
const Conditional = container('conditional', 'if', 'div', 'gb-if', 'block');

const CodeBlock = Node.create({
  name: 'codeBlock',
  group: 'block',
  content: 'codeLine+',
  defining: true,
  addAttributes: () => ({ gb: gbAttribute }),
  parseHTML: () => [
    {
      tag: 'pre',
      preserveWhitespace: 'full',
      getContent: (dom, schema) => {
        const lines = (dom.textContent ?? '').replace(/\n$/, '').split('\n');
        return Fragment.from(lines.map((line) => schema.nodes.codeLine!.create(null, line ? schema.text(line) : null)));
      },
    },
  ],
  renderHTML: ({ HTMLAttributes }) => ['pre', mergeAttributes(HTMLAttributes, { class: 'gb-code' }), 0],
});

const CodeLine = Node.create({
  name: 'codeLine',
  content: '(text | gbInline)*',
  marks: 'annotation',
  whitespace: 'pre',
  addAttributes: () => ({ gb: gbAttribute }),
  parseHTML: () => [{ tag: 'div.gb-code-line', preserveWhitespace: 'full' }],
  renderHTML: ({ node, HTMLAttributes }) => [
    'div',
    mergeAttributes(HTMLAttributes, { class: gbData(node.attrs).highlighted === true ? 'gb-code-line gb-highlighted' : 'gb-code-line' }),
    0,
  ],
});

const Tabs = Node.create({
  name: 'tabs',
  group: 'block',
  content: 'tabsItem+',
  defining: true,
  addAttributes: () => ({ gb: gbAttribute }),
  parseHTML: () => [{ tag: 'div.gb-tabs' }],
  renderHTML: ({ HTMLAttributes }) => ['div', mergeAttributes(HTMLAttributes, { class: 'gb-tabs' }), 0],
});
const TabsItem = container('tabsItem', 'tabs-item', 'section', 'gb-tab');

const Stepper = Node.create({
  name: 'stepper',
  group: 'block',
  content: 'stepperStep+',
  defining: true,
  addAttributes: () => ({ gb: gbAttribute }),
  parseHTML: () => [{ tag: 'ol.gb-stepper' }],
  renderHTML: ({ HTMLAttributes }) => ['ol', mergeAttributes(HTMLAttributes, { class: 'gb-stepper' }), 0],
});
const StepperStep = container('stepperStep', 'stepper-step', 'li', 'gb-step');

const Columns = Node.create({
  name: 'columns',
  group: 'block',
  content: 'column+',
  defining: true,
  addAttributes: () => ({ gb: gbAttribute }),
  parseHTML: () => [{ tag: 'div.gb-columns' }],
  renderHTML: ({ HTMLAttributes }) => ['div', mergeAttributes(HTMLAttributes, { class: 'gb-columns' }), 0],
});
const Column = container('column', 'column', 'div', 'gb-column');

const Updates = Node.create({
  name: 'updates',
  group: 'block',
  content: 'update+',
  defining: true,
  addAttributes: () => ({ gb: gbAttribute }),
  parseHTML: () => [{ tag: 'div.gb-updates' }],
  renderHTML: ({ HTMLAttributes }) => ['div', mergeAttributes(HTMLAttributes, { class: 'gb-updates' }), 0],
});
const Update = container('update', 'update', 'section', 'gb-update');

const Expandable = Node.create({
  name: 'expandable',
  group: 'block',
  content: 'expandableTitle expandableBody',
  defining: true,
  addAttributes: () => ({ gb: gbAttribute }),
  parseHTML: () => [{ tag: 'div.gb-expandable' }],
  renderHTML: ({ HTMLAttributes }) => ['div', mergeAttributes(HTMLAttributes, { class: 'gb-expandable' }), 0],
});
const ExpandableTitle = Node.create({
  name: 'expandableTitle',
  content: 'paragraph',
  defining: true,
  addAttributes: () => ({ gb: gbAttribute }),
  parseHTML: () => [{ tag: 'div.gb-expandable-title' }],
  renderHTML: ({ HTMLAttributes }) => ['div', mergeAttributes(HTMLAttributes, { class: 'gb-expandable-title' }), 0],
});
const ExpandableBody = container('expandableBody', 'expandable-body', 'div', 'gb-expandable-body');

/** Any other GitBook block (tables, images, embeds, OpenAPI…), kept whole as JSON and shown as a preview. */
const GbBlock = Node.create({
  name: 'gbBlock',
  group: 'block',
  atom: true,
  selectable: true,
  addAttributes: () => ({ json: jsonAttribute }),
  parseHTML: () => [{ tag: 'div[data-gb-block]' }],
  renderHTML: ({ node, HTMLAttributes }) => [
    'div',
    mergeAttributes(HTMLAttributes, { 'data-gb-block': String((node.attrs.json as { type?: string } | null)?.type ?? '') }),
  ],
});

/** Any GitBook inline but links and annotations (emoji, math, images, mentions, buttons, variables…), kept as JSON. */
const GbInline = Node.create({
  name: 'gbInline',
  group: 'inline',
  inline: true,
  atom: true,
  selectable: true,
  addAttributes: () => ({ json: jsonAttribute }),
  parseHTML: () => [{ tag: 'span[data-gb-inline]' }],
  renderHTML: ({ node, HTMLAttributes }) => [
    'span',
    mergeAttributes(HTMLAttributes, { 'data-gb-inline': String((node.attrs.json as { type?: string } | null)?.type ?? '') }),
  ],
});

// Marks, in the order ProseMirror sorts them on a text node: the leaf marks come in Folio's order
// (color, bold, italic, strikethrough, superscript, subscript, keyboard, code) so that a leaf's
// marks come back in the order they were stored.
const Link = Mark.create({
  name: 'link',
  inclusive: false,
  excludes: 'annotation',
  addAttributes: () => ({ gb: { ...gbAttribute, keepOnSplit: true } }),
  parseHTML: () => [
    {
      tag: 'a[href]',
      getAttrs: (element) => {
        const stored = readJsonAttribute(element, 'data-gb');
        if (stored) return { gb: stored };
        const href = element.getAttribute('href') ?? '';
        return { gb: { object: 'inline', type: 'link', data: { ref: { kind: 'url', url: href } }, nodes: null, isVoid: false } };
      },
    },
  ],
  // Only safe URLs and in-page anchors get an href (links.ts); any link says where it points.
  renderHTML: ({ mark, HTMLAttributes }) => {
    const ref = gbData(mark.attrs).ref;
    const href = hrefOf(ref);
    const extra: Record<string, string> = { class: 'gb-link', title: describeRef(ref) };
    if (href) Object.assign(extra, { href, rel: 'noopener noreferrer nofollow' });
    return ['a', mergeAttributes(HTMLAttributes, extra), 0];
  },
});

const Annotation = Mark.create({
  name: 'annotation',
  inclusive: false,
  excludes: 'link',
  addAttributes: () => ({ gb: { ...gbAttribute, keepOnSplit: true } }),
  parseHTML: () => [{ tag: 'span.gb-annotation', getAttrs: (element) => ({ gb: readJsonAttribute(element, 'data-gb') }) }],
  renderHTML: ({ HTMLAttributes }) => ['span', mergeAttributes(HTMLAttributes, { class: 'gb-annotation' }), 0],
});

const COLOR_VALUES = /^(default|green|blue|red|orange|yellow|purple|pink|violet|cyan|\$primary|\$info|\$success|\$warning|\$danger|\$tint)$/;
const Color = Mark.create({
  name: 'color',
  addAttributes: () => ({
    text: { default: 'default', parseHTML: (el) => el.getAttribute('data-text') ?? 'default', renderHTML: (a) => ({ 'data-text': a.text }) },
    background: {
      default: 'default',
      parseHTML: (el) => el.getAttribute('data-background') ?? 'default',
      renderHTML: (a) => ({ 'data-background': a.background }),
    },
  }),
  parseHTML: () => [
    {
      tag: 'mark.gb-color',
      getAttrs: (el) => (COLOR_VALUES.test(el.getAttribute('data-text') ?? 'default') ? null : false),
    },
  ],
  renderHTML: ({ HTMLAttributes }) => ['mark', mergeAttributes(HTMLAttributes, { class: 'gb-color' }), 0],
});

function simpleMark(name: string, tag: string, tags: string[]) {
  return Mark.create({
    name,
    parseHTML: () => tags.map((t) => ({ tag: t })),
    renderHTML: ({ HTMLAttributes }) => [tag, HTMLAttributes, 0],
  });
}

const Bold = simpleMark('bold', 'strong', ['strong', 'b']);
const Italic = simpleMark('italic', 'em', ['em', 'i']);
const Strikethrough = simpleMark('strikethrough', 's', ['s', 'del', 'strike']);
const Superscript = simpleMark('superscript', 'sup', ['sup']);
const Subscript = simpleMark('subscript', 'sub', ['sub']);
const Keyboard = simpleMark('keyboard', 'kbd', ['kbd']);
const Code = simpleMark('code', 'code', ['code']);

/** The schema's nodes and marks (no views, no behaviour). Order matters: marks rank in this order. */
export const schemaExtensions = [
  Doc,
  Text,
  Paragraph,
  Heading,
  BulletList,
  OrderedList,
  TaskList,
  ListItem,
  TaskItem,
  Blockquote,
  Hint,
  Conditional,
  CodeBlock,
  CodeLine,
  Tabs,
  TabsItem,
  Stepper,
  StepperStep,
  Columns,
  Column,
  Updates,
  Update,
  Expandable,
  ExpandableTitle,
  ExpandableBody,
  GbBlock,
  GbInline,
  Link,
  Annotation,
  Color,
  Bold,
  Italic,
  Strikethrough,
  Superscript,
  Subscript,
  Keyboard,
  Code,
];
