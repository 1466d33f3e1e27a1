import type {
  DocumentBlockCode,
  DocumentBlockImage,
  DocumentBlockTable,
  DocumentFragment,
  DocumentInline,
  DocumentTableDefinition,
} from '@gitbook/api';
import type * as md from 'mdast';
import remarkGfm from 'remark-gfm';
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
} from './markdown-shared.ts';

/**
 * GitBook document → markdown, written so that `markdown-parse` reads it back to the same document.
 * Marks are grouped into the fewest nested markdown spans; GitBook constructs without markdown
 * syntax are written the way GitBook itself writes them (`{% hint %}`, `$$`, HTML tags).
 */

const processor = unified().use(remarkGfm).use(remarkStringify, {
  bullet: '-',
  emphasis: '*',
  strong: '*',
  rule: '-',
  fence: '`',
  fences: true,
  listItemIndent: 'one',
  // Text that would read back as math or as a GitBook tag is escaped.
  unsafe: [
    { character: '$', after: '\\$' },
    { character: '{', after: '%', atBreak: true },
  ],
});

/** One run of text, or an inline node, with the marks it carries; `null` marks nest under any mark. */
type Item = { text: string; marks: MarkType[] } | { node: md.PhrasingContent; marks: MarkType[] | null };

interface Context {
  /** Table cells can't hold line breaks: they are written as `<br>`. */
  inCell: boolean;
  /** Headings can't either: they become spaces. */
  inHeading: boolean;
}

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

function inlineItems(node: DocumentInline, ctx: Context): Item[] {
  switch (node.type) {
    case 'link': {
      const inner = items(node.nodes as InlineOrText[], ctx);
      // Marks on every character of the link text are written around the link, so that
      // `**a [b](u) c**` stays one bold span.
      const leaves = inner.filter((i): i is { text: string; marks: MarkType[] } => 'text' in i);
      const common = leaves.length === 0 ? [] : leaves[0]!.marks.filter((m) => m !== 'code' && leaves.every((l) => l.marks.includes(m)));
      const children = group(inner, new Set(common), ctx);
      return [{ node: { type: 'link', url: urlFromRef(node.data.ref), title: null, children }, marks: common }];
    }
    case 'inline-image':
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
      return [{ text: emoji(node.data.code), marks: [] }];
    default: {
      // Emoji, mentions, buttons, annotations…: keep whatever text they carry.
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
    const mark = pending[0]!;
    let j = i + 1;
    while (j < list.length && (list[j]!.marks === null || list[j]!.marks!.includes(mark))) j++;
    while (j > i + 1 && list[j - 1]!.marks === null) j--;
    out.push(...wrap(mark, group(list.slice(i, j), new Set([...applied, mark]), ctx)));
    i = j;
  }
  return out;
}

function emit(item: Item, applied: Set<MarkType>, ctx: Context): md.PhrasingContent[] {
  if ('node' in item) return [item.node];
  let text = item.text;
  if (ctx.inHeading) text = text.replace(/\n/g, ' ');
  if (applied.has('code')) return [{ type: 'inlineCode', value: text.replace(/\n/g, ' ') }];
  if (!ctx.inCell) return [{ type: 'text', value: text }];
  const out: md.PhrasingContent[] = [];
  text.split('\n').forEach((part, k) => {
    if (k > 0) out.push(html('<br>'));
    if (part) out.push({ type: 'text', value: part });
  });
  return out;
}

function wrap(mark: MarkType, children: md.PhrasingContent[]): md.PhrasingContent[] {
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
      const tag = HTML_MARKS[mark]!;
      return [html(`<${tag}>`), ...children, html(`</${tag}>`)];
    }
  }
}

function phrasing(nodes: readonly InlineOrText[], ctx: Context = { inCell: false, inHeading: false }): md.PhrasingContent[] {
  return group(items(nodes, ctx), new Set(), ctx);
}

function codeBlock(block: DocumentBlockCode): md.RootContent[] {
  const value = block.nodes.map((line) => textOf(line.nodes)).join('\n');
  const code: md.Code = { type: 'code', lang: block.data.syntax || null, meta: null, value };
  const { title, lineNumbers, overflow, fullWidth } = block.data;
  const attrs = [
    title ? `title="${title.replace(/"/g, "'")}"` : '',
    lineNumbers ? 'lineNumbers="true"' : '',
    overflow === 'wrap' ? 'overflow="wrap"' : '',
    fullWidth ? 'fullWidth="true"' : '',
  ].filter(Boolean);
  return attrs.length > 0 ? [html(`{% code ${attrs.join(' ')} %}`), code, html('{% endcode %}')] : [code];
}

function image(block: DocumentBlockImage): md.Image {
  const caption = block.fragments.find((f) => f.fragment === 'caption');
  const title = caption ? textOf((caption.nodes as { nodes: unknown[] }[]).flatMap((p) => p.nodes)).replace(/\n/g, ' ') : '';
  return { type: 'image', url: urlFromRef(block.data.ref), alt: block.data.alt ?? '', title: title || null };
}

function cellValue(block: DocumentBlockTable, def: DocumentTableDefinition | undefined, value: unknown): md.PhrasingContent[] {
  const ctx: Context = { inCell: true, inHeading: false };
  if (value === undefined || value === null) return [];
  if (def?.type === 'text' || (def === undefined && typeof value === 'string')) {
    const fragment = block.fragments.find((f) => f.fragment === value);
    if (!fragment) return [];
    const out: md.PhrasingContent[] = [];
    for (const node of fragment.nodes) {
      if (out.length > 0) out.push(html('<br>'));
      if (node.type === 'paragraph' || node.type.startsWith('heading-')) out.push(...phrasing((node as { nodes: InlineOrText[] }).nodes, ctx));
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

function table(block: DocumentBlockTable): md.Table {
  const { view, records, definition } = block.data;
  const columns = view.type === 'grid' ? view.columns : Object.keys(definition);
  const align = columns.map((c) => {
    const def = definition[c];
    const a = def && 'textAlignment' in def ? def.textAlignment : undefined;
    return a === 'center' || a === 'right' ? a : null;
  });
  const header: md.TableRow = {
    type: 'tableRow',
    children: columns.map((c) => ({ type: 'tableCell', children: [{ type: 'text', value: definition[c]?.title ?? '' }] })),
  };
  const rows = Object.entries(records)
    .sort(([ia, a], [ib, b]) => (a.orderIndex < b.orderIndex ? -1 : a.orderIndex > b.orderIndex ? 1 : ia < ib ? -1 : 1))
    .map(
      ([, record]): md.TableRow => ({
        type: 'tableRow',
        children: columns.map((c) => ({ type: 'tableCell', children: cellValue(block, definition[c], record.values[c]) })),
      }),
    );
  return { type: 'table', align, children: [header, ...rows] };
}

function listItemChildren(nodes: Block[]): md.BlockContent[] {
  const children = blocks(nodes) as md.BlockContent[];
  // An empty item is written `- <br>` (which reads back empty): a bare `-` can turn into something
  // else, and a checkbox needs text after it.
  const first = nodes[0];
  if (first?.type === 'paragraph' && children[0]?.type !== 'paragraph') children.unshift({ type: 'paragraph', children: [html('<br>')] });
  return children;
}

function blocks(nodes: readonly Block[]): md.RootContent[] {
  return nodes.flatMap(block);
}

function block(node: Block): md.RootContent[] {
  switch (node.type) {
    case 'paragraph': {
      const children = phrasing(node.nodes);
      return children.length > 0 ? [{ type: 'paragraph', children }] : [];
    }
    case 'heading-1':
    case 'heading-2':
    case 'heading-3': {
      const children = phrasing(node.nodes, { inCell: false, inHeading: true });
      if (node.data.id) children.push({ type: 'text', value: ' ' }, html(`<a href="#${node.data.id}" id="${node.data.id}"></a>`));
      return [{ type: 'heading', depth: Number(node.type.slice(-1)) as 1 | 2 | 3, children }];
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
              spread: false,
              checked: node.type === 'list-tasks' ? item.data?.checked === true : null,
              children: listItemChildren(item.nodes as Block[]),
            }),
          ),
        },
      ];
    }
    case 'list-item':
      return blocks(node.nodes as Block[]);
    case 'divider':
      return [{ type: 'thematicBreak' }];
    case 'blockquote':
      return [{ type: 'blockquote', children: blocks(node.nodes as Block[]) as md.BlockContent[] }];
    case 'hint':
      return [html(`{% hint style="${node.data.style}" %}`), ...blocks(node.nodes as Block[]), html('{% endhint %}')];
    case 'code':
      return codeBlock(node);
    case 'math':
      // One-line formulas stay on one line so they can open a list item (a task's checkbox needs text after it).
      if (!node.data.formula.includes('\n') && node.data.formula.trim() !== '') return [{ type: 'paragraph', children: [html(`$$${node.data.formula}$$`)] }];
      return [html(`$$\n${node.data.formula}\n$$`)];
    case 'images': {
      const children = node.nodes.map(image);
      return children.length > 0 ? [{ type: 'paragraph', children }] : [];
    }
    case 'image':
      return [{ type: 'paragraph', children: [image(node)] }];
    case 'table':
      return [table(node)];
    case 'embed':
      return [html(`{% embed url="${node.data.url.replace(/"/g, '%22')}" %}`)];
    default: {
      // Blocks markdown can't express (tabs, expandables, embeds…) keep their content.
      const loose = node as { nodes?: unknown[]; fragments?: DocumentFragment[] };
      const children = (loose.nodes ?? []) as { object?: string }[];
      const out: md.RootContent[] = [];
      for (const fragment of loose.fragments ?? []) out.push(...blocks(fragment.nodes));
      if (children.some((c) => c.object === 'block')) out.push(...blocks(children as Block[]));
      else if (children.length > 0) {
        const inline = phrasing(children as InlineOrText[]);
        if (inline.length > 0) out.push({ type: 'paragraph', children: inline });
      }
      return out;
    }
  }
}

export function serializeDocument(doc: GitBookDocument): string {
  const root: md.Root = { type: 'root', children: blocks(doc.nodes as Block[]) };
  return processor.stringify(root);
}
