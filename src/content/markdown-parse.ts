import type {
  DocumentBlockCode,
  DocumentBlockHeading,
  DocumentBlockHint,
  DocumentBlockImage,
  DocumentBlockImages,
  DocumentBlockListItem,
  DocumentBlockMath,
  DocumentBlockParagraph,
  DocumentBlockQuote,
  DocumentBlockTable,
  DocumentFragment,
  DocumentInline,
  DocumentInlineImage,
  DocumentInlineLink,
  DocumentTableDefinition,
  DocumentTableRecord,
  DocumentTextLeaf,
} from '@gitbook/api';
import { generateNKeysBetween } from 'fractional-indexing';
import type * as md from 'mdast';
import remarkGfm from 'remark-gfm';
import remarkParse from 'remark-parse';
import { unified } from 'unified';
import {
  type Block,
  type GitBookDocument,
  type HintStyle,
  type InlineOrText,
  type MarkType,
  HINT_STYLES,
  HTML_MARKS,
  SCHEMA_VERSION,
  hashKey,
  imageRefFromUrl,
  markObjects,
  refFromUrl,
  sortMarks,
  textNode,
} from './markdown-shared.ts';

/**
 * Markdown → GitBook document. remark parses CommonMark + GFM; GitBook's own syntax is recognised
 * around it: `{% hint %}` / `{% code %}` tags, `$$` math, `<code class="expression">` expressions,
 * `<sup>`/`<sub>`/`<kbd>` marks and `<a id>` heading anchors.
 */

export interface ParseOptions {
  /** Key of the node at a position path such as `3.0.f1.0` (indices; `f<n>` is a fragment). */
  keyFor?: (path: string) => string;
}

export interface ParsedMarkdown {
  document: GitBookDocument;
  /** Markdown depth (1–6) of each top-level heading block; the document only has three levels. */
  headingDepth: WeakMap<object, number>;
}

const processor = unified().use(remarkParse).use(remarkGfm);

// Math is cut out before parsing so markdown never rewrites it (`*`, `_`, `\{` and `|` are all
// common in TeX); it is swapped for a placeholder that markdown leaves alone: private-use characters
// inside `$…$`, so emphasis next to it flanks as it did next to `$$`.
const PLACEHOLDER = /\$\uE000(\d+)\uE001\$|\$%EE%80%80(\d+)%EE%80%81\$/g;
const MATH_INFO = '\uE002math';
// A formula never holds a backtick, so `$$` in two code spans on one line is not math.
const INLINE_MATH = /(?<!\\)\$\$(?!\$)([^`]+?)(?<!\\)\$\$/g;
const FENCE_OPEN = /^(\s*)(`{3,}|~{3,})(.*)$/;
// Line prefixes: blockquote markers, then indentation, then (on an opening line) a list marker.
const QUOTE_PREFIX = String.raw`((?:[ \t]*>)*)[ \t]*`;
const LIST_MARKER = String.raw`(?:(?:[-+*]|\d{1,9}[.)])[ \t]+)?`;
const MATH_OPEN = new RegExp(`^(${QUOTE_PREFIX}${LIST_MARKER})\\$\\$\\s*$`);
const MATH_CLOSE = new RegExp(`^(${QUOTE_PREFIX})\\$\\$\\s*$`);
const TAG_LINE = new RegExp(`^${QUOTE_PREFIX}${LIST_MARKER}\\{%\\s*(end)?(hint|code|embed)\\b[^%]*%\\}\\s*$`);
const TAG = /^\{%\s*(end)?(hint|code|embed)\b(.*?)%\}$/;
const FRONT_MATTER = /^---\r?\n([\s\S]*?)\r?\n---[ \t]*(?:\r?\n|$)/;

interface Source {
  text: string;
  math: { formula: string; raw: string }[];
}

function stripFrontMatter(markdown: string): string {
  const m = FRONT_MATTER.exec(markdown);
  if (!m) return markdown;
  // Only YAML-looking blocks without blank lines: `---`, a paragraph, `---` is content.
  const lines = m[1]!.split(/\r?\n/);
  const yamlish = /^[\w-]+\s*:/.test(lines[0]!) && lines.every((line) => line.trim() !== '' && /^([\w-]+\s*:|\s|-\s|#)/.test(line));
  return yamlish ? markdown.slice(m[0].length) : markdown;
}

/** Protects math and isolates GitBook tags on their own paragraphs, leaving fenced code untouched. */
function prepareSource(markdown: string): Source {
  const math: Source['math'] = [];
  const placeholder = (formula: string, raw: string) => `$\uE000${math.push({ formula, raw }) - 1}\uE001$`;
  const lines = stripFrontMatter(markdown.replace(/[\uE000-\uE003]/g, '\uFFFD')).replace(/\r\n?/g, '\n').split('\n');
  const out: string[] = [];
  let fence: { char: string; length: number } | null = null;
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i]!;
    if (fence) {
      const close = /^\s*(`+|~+)\s*$/.exec(line);
      if (close && close[1]![0] === fence.char && close[1]!.length >= fence.length) fence = null;
      out.push(line);
      continue;
    }
    const open = FENCE_OPEN.exec(line);
    if (open && !(open[2]![0] === '`' && open[3]!.includes('`'))) {
      fence = { char: open[2]![0]!, length: open[2]!.length };
      out.push(line);
      continue;
    }
    // `$$` lines become a fence, so the formula between them is read verbatim.
    const mathOpen = MATH_OPEN.exec(line);
    if (mathOpen) {
      const end = lines.findIndex((l, j) => j > i && MATH_CLOSE.test(l));
      if (end > 0) {
        const body = lines.slice(i + 1, end);
        const ticks = '`'.repeat(Math.max(3, ...body.map((l) => Math.max(0, ...(l.match(/`+/g) ?? []).map((r) => r.length + 1)))));
        const closeIndent = MATH_CLOSE.exec(lines[end]!)![1]!;
        out.push(`${mathOpen[1]}${ticks}${MATH_INFO}`, ...body, `${closeIndent}${ticks}`);
        i = end;
        continue;
      }
    }
    // A tag gets a paragraph of its own, however the text around it is written.
    const tag = TAG_LINE.exec(line);
    if (tag) {
      const quote = (tag[1] ?? '').replace(/[ \t]/g, '');
      out.push(quote, line, quote);
      continue;
    }
    out.push(line.replace(INLINE_MATH, (raw, formula: string) => placeholder(formula, raw)));
  }
  return { text: out.join('\n'), math };
}

type Piece = { kind: 'text'; text: string; marks: MarkType[] } | { kind: 'inline'; node: DocumentInline };

// Which blocks each container may hold, per the official schema.
const ESSENTIALS = ['paragraph', 'heading-1', 'heading-2', 'heading-3', 'list-ordered', 'list-unordered', 'list-tasks', 'divider'];
const IN_QUOTE = new Set([...ESSENTIALS, 'blockquote']);
const IN_HINT = new Set([...ESSENTIALS, 'table', 'embed']);
const IN_LIST_ITEM = new Set([...ESSENTIALS, 'code', 'hint', 'blockquote', 'math', 'table']);
const TOP_LEVEL = new Set([...ESSENTIALS, 'blockquote', 'hint', 'images', 'code', 'math', 'table', 'embed']);

function paragraph(nodes: InlineOrText[]): DocumentBlockParagraph {
  return { object: 'block', type: 'paragraph', data: {}, nodes };
}

function leaf(text: string, marks: MarkType[] = []): DocumentTextLeaf {
  return { object: 'leaf', text, marks: markObjects(sortMarks(marks)) };
}

/** Joins pieces into the node list of a block: adjacent texts share one text node, equal marks one leaf. */
function assemble(pieces: Piece[]): InlineOrText[] {
  const out: InlineOrText[] = [];
  let leaves: { text: string; marks: MarkType[] }[] = [];
  const flush = () => {
    if (leaves.length > 0) out.push(textNode(leaves.map((l) => leaf(l.text, l.marks))));
    leaves = [];
  };
  for (const piece of pieces) {
    if (piece.kind === 'inline') {
      flush();
      out.push(piece.node);
      continue;
    }
    if (piece.text === '') continue;
    const marks = sortMarks(piece.marks);
    const last = leaves.at(-1);
    if (last && last.marks.join() === marks.join()) last.text += piece.text;
    else leaves.push({ text: piece.text, marks });
  }
  flush();
  if (out.length === 0) out.push(textNode([leaf('')]));
  return out;
}

/**
 * Removes whitespace (line breaks from `<br>` included) at the very start and end of a block, as
 * markdown does; code keeps its spaces.
 */
function trimEdges(pieces: Piece[]): Piece[] {
  const out = pieces.map((p) => ({ ...p }));
  for (const p of out) {
    if (p.kind !== 'text' || p.marks.includes('code')) break;
    p.text = p.text.replace(/^\s+/, '');
    if (p.text !== '') break;
  }
  for (let i = out.length - 1; i >= 0; i--) {
    const p = out[i]!;
    if (p.kind !== 'text' || p.marks.includes('code')) break;
    p.text = p.text.replace(/\s+$/, '');
    if (p.text !== '') break;
  }
  return out;
}

function plainOfPieces(pieces: Piece[]): string {
  return pieces
    .map((p) => {
      if (p.kind === 'text') return p.text;
      if (p.node.type === 'inline-math') return `$$${p.node.data.formula}$$`;
      if (p.node.type === 'expression') return p.node.data.expression;
      return '';
    })
    .join('');
}

function htmlAttr(attrs: string, name: string): string | undefined {
  const m = new RegExp(`\\b${name}\\s*=\\s*"([^"]*)"`, 'i').exec(attrs) ?? new RegExp(`\\b${name}\\s*=\\s*'([^']*)'`, 'i').exec(attrs);
  return m ? decodeEntities(m[1]!) : undefined;
}

function codePoint(n: number): string {
  return n > 0 && n <= 0x10ffff ? String.fromCodePoint(n) : '\uFFFD';
}

function decodeEntities(text: string): string {
  return text
    .replace(/&#x([0-9a-f]{1,8});/gi, (_, hex: string) => codePoint(parseInt(hex, 16)))
    .replace(/&#(\d{1,9});/g, (_, dec: string) => codePoint(Number(dec)))
    .replace(/&quot;/g, '"')
    .replace(/&#39;|&apos;/g, "'")
    .replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>')
    .replace(/&amp;/g, '&');
}

function tagAttrs(text: string): Record<string, string> {
  const attrs: Record<string, string> = {};
  for (const m of text.matchAll(/(\w+)\s*=\s*"([^"]*)"/g)) attrs[m[1]!] = m[2]!;
  return attrs;
}

type Tag = { end: boolean; name: 'hint' | 'code' | 'embed'; attrs: Record<string, string> };

/** Inline HTML tags read as marks. */
const TAG_MARKS: Record<string, MarkType> = {
  b: 'bold',
  strong: 'bold',
  i: 'italic',
  em: 'italic',
  s: 'strikethrough',
  del: 'strikethrough',
  strike: 'strikethrough',
  ...Object.fromEntries(Object.entries(HTML_MARKS).map(([mark, tag]) => [tag, mark])),
};

/** Inline tags an HTML block keeps when its text is read as markdown. */
const INLINE_TAG = /^<\/?(b|strong|i|em|s|del|strike|sup|sub|kbd|code|br|img)(\s[^>]*)?\/?>$/i;

class Reader {
  constructor(
    private readonly source: Source,
    private readonly definitions = new Map<string, md.Definition>(),
    readonly headingDepth = new WeakMap<object, number>(),
    /** How many HTML blocks this text is nested in. */
    private readonly htmlDepth = 0,
  ) {}

  /**
   * The GitBook tag a paragraph consists of. Read from the source, so that an escaped `\{%` (how a
   * paragraph that merely looks like a tag is written) stays text.
   */
  private liquidTag(node: md.RootContent): Tag | null {
    if (node.type !== 'paragraph') return null;
    const m = TAG.exec(this.raw(node).trim());
    return m ? { end: Boolean(m[1]), name: m[2] as Tag['name'], attrs: tagAttrs(m[3]!) } : null;
  }

  read(root: md.Root): Block[] {
    const collect = (node: md.Nodes) => {
      if (node.type === 'definition' && !this.definitions.has(node.identifier)) this.definitions.set(node.identifier, node);
      if ('children' in node) for (const child of node.children) collect(child);
    };
    collect(root);
    return this.flow(root.children, TOP_LEVEL);
  }

  /** Puts math back where a placeholder stands in a string that is not rich text (code, URLs, HTML). */
  private restore(text: string): string {
    return text.replace(PLACEHOLDER, (_, a?: string, b?: string) => this.source.math[Number(a ?? b)]?.raw ?? '');
  }

  /** Source text of a node, or (given two) between them. */
  private raw(start: md.Node | undefined, end?: md.Node): string {
    const from = end ? start?.position?.end.offset : start?.position?.start.offset;
    const to = end ? end.position?.start.offset : start?.position?.end.offset;
    return from === undefined || to === undefined ? '' : this.restore(this.source.text.slice(from, to));
  }

  // ---- Blocks ----

  /** Blocks of a container, made to fit what it may hold (`allowed`). */
  private flow(children: md.RootContent[], allowed: Set<string>): Block[] {
    const out: Block[] = [];
    for (let i = 0; i < children.length; i++) {
      const tag = this.liquidTag(children[i]!);
      if (tag?.name === 'embed' && !tag.end && tag.attrs.url) {
        out.push({ object: 'block', type: 'embed', data: { url: tag.attrs.url }, isVoid: true });
        continue;
      }
      if (tag && !tag.end) {
        const end = this.closingTag(children, i, tag.name);
        if (end > 0) {
          const inner = children.slice(i + 1, end);
          if (tag.name === 'hint') out.push(this.hint(tag.attrs.style, this.flow(inner, IN_HINT)));
          else out.push(...this.flow(inner, allowed).map((b) => (b.type === 'code' ? withCodeAttrs(b, tag.attrs) : b)));
          i = end;
          continue;
        }
      }
      out.push(...this.block(children[i]!, allowed));
    }
    return fit(out, allowed);
  }

  private closingTag(children: md.RootContent[], from: number, name: Tag['name']): number {
    let depth = 0;
    for (let j = from; j < children.length; j++) {
      const tag = this.liquidTag(children[j]!);
      if (!tag || tag.name !== name) continue;
      depth += tag.end ? -1 : 1;
      if (depth === 0) return j;
    }
    return -1;
  }

  private hint(style: string | undefined, inner: Block[]): DocumentBlockHint {
    const known = (HINT_STYLES as readonly string[]).includes(style ?? '') ? (style as HintStyle) : 'info';
    return { object: 'block', type: 'hint', data: { style: known }, nodes: inner as DocumentBlockHint['nodes'] };
  }

  private block(node: md.RootContent, allowed: Set<string>): Block[] {
    switch (node.type) {
      case 'paragraph':
        return this.paragraphBlock(node, allowed);
      case 'heading':
        return [this.heading(node)];
      case 'thematicBreak':
        return [{ object: 'block', type: 'divider', data: {}, isVoid: true }];
      case 'blockquote': {
        const quote: DocumentBlockQuote = {
          object: 'block',
          type: 'blockquote',
          data: {},
          nodes: this.flow(node.children, IN_QUOTE) as DocumentBlockQuote['nodes'],
        };
        return [quote];
      }
      case 'list':
        return [this.list(node)];
      case 'code':
        return [this.code(node)];
      case 'html':
        return this.htmlBlock(node, allowed);
      case 'table':
        return [this.table(node)];
      case 'footnoteDefinition': {
        const blocks = this.flow(node.children, allowed);
        const label = `[^${node.label ?? node.identifier}]: `;
        const first = blocks[0];
        if (first?.type === 'paragraph') first.nodes = mergeTexts([textNode([leaf(label)]), ...first.nodes]);
        else blocks.unshift(paragraph([textNode([leaf(label.trimEnd())])]));
        return blocks;
      }
      default:
        // Definitions are resolved into their references; YAML and the like carry no content.
        return [];
    }
  }

  /** A paragraph's block: none when it holds only whitespace (markdown can't write an empty paragraph). */
  private paragraphBlock(node: md.Paragraph, allowed: Set<string>): Block[] {
    const pieces = trimEdges(this.phrasing(node.children, [])).filter((p) => p.kind === 'inline' || p.text !== '');
    if (pieces.length === 0) return [];
    // A paragraph of nothing but a formula is a math block.
    const only = pieces.length === 1 ? pieces[0] : undefined;
    if (only?.kind === 'inline' && only.node.type === 'inline-math') return [mathBlock(only.node.data.formula)];
    // A paragraph of nothing but images is an images block, where one may stand.
    const images = pieces.flatMap((p) => (p.kind === 'inline' && p.node.type === 'inline-image' ? [p.node] : []));
    const onlyImages = pieces.every((p) => (p.kind === 'inline' ? p.node.type === 'inline-image' : p.text.trim() === ''));
    if (allowed.has('images') && images.length > 0 && onlyImages) {
      return [imagesBlock(images.map(({ data }) => imageBlock(data.ref, data.alt ?? '', data.caption ?? '')))];
    }
    return [paragraph(assemble(pieces))];
  }

  private resolveImage(node: md.PhrasingContent): { url: string; alt: string; title: string } | null {
    if (node.type === 'image') return { url: this.restore(node.url), alt: this.restore(node.alt ?? ''), title: this.restore(node.title ?? '') };
    if (node.type === 'imageReference') {
      const def = this.definitions.get(node.identifier);
      if (def) return { url: this.restore(def.url), alt: this.restore(node.alt ?? ''), title: this.restore(def.title ?? '') };
    }
    return null;
  }

  private heading(node: md.Heading): DocumentBlockHeading {
    let children = node.children;
    let id: string | undefined;
    // GitBook writes custom anchors as a trailing `<a href="#id" id="id"></a>`.
    let tail = children.length;
    while (tail > 0 && children[tail - 1]!.type === 'html') tail--;
    if (tail < children.length) {
      const html = children
        .slice(tail)
        .map((c) => (c as md.Html).value)
        .join('');
      const m = /^<a\s([^>]*)>\s*<\/a>$/i.exec(html);
      const anchor = m ? htmlAttr(m[1]!, 'id') : undefined;
      if (anchor && /^[-a-z0-9.+_]+$/.test(anchor)) {
        id = anchor;
        children = children.slice(0, tail);
      }
    }
    const pieces = trimEdges(this.phrasing(children, []).map((p) => (p.kind === 'text' ? { ...p, text: p.text.replace(/\n/g, ' ') } : p)));
    const type = (['heading-1', 'heading-2', 'heading-3'] as const)[Math.min(node.depth, 3) - 1]!;
    const block: DocumentBlockHeading = { object: 'block', type, data: id ? { id } : {}, nodes: assemble(pieces) };
    this.headingDepth.set(block, node.depth);
    return block;
  }

  private list(node: md.List): Block {
    const tasks = node.children.some((item) => typeof item.checked === 'boolean');
    const items: DocumentBlockListItem[] = node.children.map((item) => {
      const nodes = this.flow(item.children, IN_LIST_ITEM) as DocumentBlockListItem['nodes'];
      if (nodes.length === 0) nodes.push(paragraph(assemble([])));
      return { object: 'block', type: 'list-item', data: tasks ? { checked: item.checked === true } : {}, nodes };
    });
    if (tasks) return { object: 'block', type: 'list-tasks', data: {}, nodes: items };
    if (!node.ordered) return { object: 'block', type: 'list-unordered', data: {}, nodes: items };
    const start = node.start ?? 1;
    return { object: 'block', type: 'list-ordered', data: start === 1 ? {} : { start }, nodes: items };
  }

  private code(node: md.Code): Block {
    const value = this.restore(node.value);
    if (node.lang === MATH_INFO) return mathBlock(value);
    return {
      object: 'block',
      type: 'code',
      data: node.lang ? { syntax: this.restore(node.lang) } : {},
      nodes: value.split('\n').map((line) => ({ object: 'block', type: 'code-line', data: {}, nodes: [textNode([leaf(line)])] })),
    };
  }

  private htmlBlock(node: md.Html, allowed: Set<string>): Block[] {
    const html = this.restore(node.value).trim();
    if (/^<!--[\s\S]*-->$/.test(html)) return [];
    const figure = /^<figure>\s*<img\s([^>]*?)\/?>\s*(?:<figcaption>([\s\S]*?)<\/figcaption>\s*)?<\/figure>$/i.exec(html);
    if (figure) {
      const src = htmlAttr(figure[1]!, 'src');
      if (src !== undefined) {
        const caption = decodeEntities((figure[2] ?? '').replace(/<[^>]*>/g, '')).trim();
        return [imagesBlock([imageBlock(imageRefFromUrl(src), htmlAttr(figure[1]!, 'alt') ?? '', caption)])];
      }
    }
    // Other HTML: its text, read as markdown. Inline tags we know are kept the first time; any `<`
    // left is escaped, and nested HTML keeps no tags at all, so this always ends.
    const text = html
      .replace(/<(script|style)\b[\s\S]*?<\/\1\s*>/gi, '')
      .replace(/<!--[\s\S]*?-->/g, '')
      .replace(/<[^>]*>/g, (tag) => (this.htmlDepth === 0 && INLINE_TAG.test(tag) ? tag.replace(/^</, '\uE003') : ''))
      .replace(/</g, '&lt;')
      .replace(/\uE003/g, '<');
    const inner = new Reader(prepareSource(text), this.definitions, this.headingDepth, this.htmlDepth + 1);
    return inner.flow(processor.parse(inner.source.text).children, allowed);
  }

  private table(node: md.Table): DocumentBlockTable {
    const [header, ...rows] = node.children;
    const width = Math.max(node.align?.length ?? 0, header?.children.length ?? 0);
    const columns = Array.from({ length: width }, (_, j) => `c${j}`);
    const definition: Record<string, DocumentTableDefinition> = {};
    columns.forEach((id, j) => {
      const cell = header?.children[j];
      definition[id] = {
        id,
        title: cell ? plainOfPieces(this.phrasing(cell.children, [])).replace(/\n/g, ' ').trim() : '',
        type: 'text',
        textAlignment: node.align?.[j] ?? 'left',
      };
    });
    const orderIndexes = generateNKeysBetween(null, null, rows.length);
    const records: Record<string, DocumentTableRecord> = {};
    const fragments: DocumentFragment[] = [];
    rows.forEach((row, i) => {
      const values: DocumentTableRecord['values'] = {};
      columns.forEach((column, j) => {
        const fragment = `r${i}${column}`;
        values[column] = fragment;
        const pieces = this.phrasing(row.children[j]?.children ?? [], []);
        fragments.push({ object: 'fragment', fragment, nodes: [paragraph(assemble(trimEdges(pieces)))] });
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

  // ---- Inlines ----

  private phrasing(children: md.PhrasingContent[], marks: MarkType[]): Piece[] {
    const out: Piece[] = [];
    for (let i = 0; i < children.length; i++) {
      const node = children[i]!;
      switch (node.type) {
        case 'text':
          out.push(...this.text(node.value, marks));
          break;
        case 'emphasis':
          out.push(...this.phrasing(node.children, [...marks, 'italic']));
          break;
        case 'strong':
          out.push(...this.phrasing(node.children, [...marks, 'bold']));
          break;
        case 'delete':
          out.push(...this.phrasing(node.children, [...marks, 'strikethrough']));
          break;
        case 'inlineCode':
          out.push({ kind: 'text', text: this.restore(node.value), marks: [...marks, 'code'] });
          break;
        case 'break':
          out.push({ kind: 'text', text: '\n', marks });
          break;
        case 'link':
          out.push(this.link(this.restore(node.url), node.children, marks));
          break;
        case 'linkReference': {
          const def = this.definitions.get(node.identifier);
          if (def) out.push(this.link(this.restore(def.url), node.children, marks));
          else out.push(...this.phrasing(node.children, marks));
          break;
        }
        case 'image':
        case 'imageReference': {
          const image = this.resolveImage(node);
          if (image) out.push({ kind: 'inline', node: inlineImage(imageRefFromUrl(image.url), image.alt, image.title) });
          break;
        }
        case 'html':
          i = this.inlineHtml(children, i, marks, out);
          break;
        case 'footnoteReference':
          out.push({ kind: 'text', text: `[^${node.label ?? node.identifier}]`, marks });
          break;
        default:
          break;
      }
    }
    return out;
  }

  private text(value: string, marks: MarkType[]): Piece[] {
    const out: Piece[] = [];
    let last = 0;
    for (const m of value.matchAll(PLACEHOLDER)) {
      out.push({ kind: 'text', text: value.slice(last, m.index), marks });
      const formula = this.source.math[Number(m[1] ?? m[2])]!.formula;
      out.push({ kind: 'inline', node: { object: 'inline', type: 'inline-math', data: { formula }, isVoid: true } });
      last = m.index + m[0].length;
    }
    out.push({ kind: 'text', text: value.slice(last), marks });
    return out;
  }

  private link(url: string, children: md.PhrasingContent[], marks: MarkType[]): Piece {
    // A link holds only text and images: other inlines inside it are kept as their text.
    const pieces = this.phrasing(children, marks).map((p): Piece => {
      if (p.kind === 'text' || p.node.type === 'inline-image') return p;
      return { kind: 'text', text: plainOfPieces([p]), marks };
    });
    const nodes = assemble(pieces) as DocumentInlineLink['nodes'];
    return { kind: 'inline', node: { object: 'inline', type: 'link', data: { ref: refFromUrl(url) }, nodes, isVoid: false } };
  }

  /** Reads inline HTML at `children[i]`; returns the index of the last sibling it consumed. */
  private inlineHtml(children: md.PhrasingContent[], i: number, marks: MarkType[], out: Piece[]): number {
    const html = (children[i] as md.Html).value;
    const closing = (pattern: RegExp, opening?: RegExp) => {
      let depth = 1;
      for (let k = i + 1; k < children.length; k++) {
        const child = children[k]!;
        if (child.type !== 'html') continue;
        if (opening?.test(child.value)) depth++;
        else if (pattern.test(child.value) && --depth === 0) return k;
      }
      return -1;
    };
    if (/^<code\s+class=["']expression["']\s*>$/i.test(html)) {
      const end = closing(/^<\/code\s*>$/i);
      if (end > 0) {
        const expression = this.raw(children[i], children[end]).trim();
        out.push({ kind: 'inline', node: { object: 'inline', type: 'expression', data: { expression }, isVoid: true } });
        return end;
      }
    }
    if (/^<code(\s[^>]*)?>$/i.test(html)) {
      const end = closing(/^<\/code\s*>$/i);
      if (end > 0) {
        out.push({ kind: 'text', text: decodeEntities(this.raw(children[i], children[end])), marks: [...marks, 'code'] });
        return end;
      }
    }
    const open = /^<([a-z]+)(\s[^>]*)?>$/i.exec(html);
    const mark = open ? TAG_MARKS[open[1]!.toLowerCase()] : undefined;
    if (open && mark) {
      const name = open[1]!.toLowerCase();
      const end = closing(new RegExp(`^</${name}\\s*>$`, 'i'), new RegExp(`^<${name}(\\s[^>]*)?>$`, 'i'));
      if (end > 0) {
        out.push(...this.phrasing(children.slice(i + 1, end), [...marks, mark]));
        return end;
      }
    }
    if (/^<br\s*\/?>$/i.test(html)) out.push({ kind: 'text', text: '\n', marks });
    const img = /^<img\s([^>]*?)\/?>$/i.exec(html);
    const src = img ? htmlAttr(img[1]!, 'src') : undefined;
    if (img && src !== undefined) {
      out.push({ kind: 'inline', node: inlineImage(imageRefFromUrl(src), htmlAttr(img[1]!, 'alt') ?? '', htmlAttr(img[1]!, 'title') ?? '') });
    }
    // Any other tag is dropped; the text it wraps is read as usual.
    return i;
  }
}

function withCodeAttrs(block: DocumentBlockCode, attrs: Record<string, string>): DocumentBlockCode {
  const data = { ...block.data };
  if (attrs.title) data.title = attrs.title;
  if (attrs.lineNumbers === 'true') data.lineNumbers = true;
  if (attrs.overflow === 'wrap') data.overflow = 'wrap';
  if (attrs.fullWidth === 'true') data.fullWidth = true;
  return { ...block, data };
}

function mathBlock(formula: string): DocumentBlockMath {
  return { object: 'block', type: 'math', data: { formula }, isVoid: true };
}

function imageBlock(ref: DocumentBlockImage['data']['ref'], alt: string, caption: string): DocumentBlockImage {
  const fragments: DocumentBlockImage['fragments'] = caption
    ? [{ object: 'fragment', fragment: 'caption', nodes: [paragraph([textNode([leaf(caption)])])] }]
    : [];
  return { object: 'block', type: 'image', data: { ref, ...(alt ? { alt } : {}) }, fragments, isVoid: true };
}

function imagesBlock(nodes: DocumentBlockImage[]): DocumentBlockImages {
  return { object: 'block', type: 'images', data: {}, nodes, isVoid: false };
}

function inlineImage(ref: DocumentInlineImage['data']['ref'], alt: string, caption: string): DocumentInlineImage {
  return {
    object: 'inline',
    type: 'inline-image',
    data: { ref, ...(alt ? { alt } : {}), ...(caption ? { caption } : {}) },
    isVoid: true,
  };
}

/**
 * Rewrites blocks a container may not hold (per the schema) into ones it may: code becomes
 * code-marked paragraphs, images inline images, math inline math, tables one paragraph per row,
 * and hints and quotes give up their wrapper.
 */
function fit(blocks: Block[], allowed: Set<string>): Block[] {
  const out: Block[] = [];
  for (const block of blocks) {
    if (allowed.has(block.type)) {
      out.push(block);
      continue;
    }
    switch (block.type) {
      case 'code':
        for (const line of block.nodes) {
          const text = line.nodes.map((n) => (n.object === 'text' ? n.leaves.map((l) => l.text).join('') : '')).join('');
          if (text.trim() !== '') out.push(paragraph([textNode([leaf(text, ['code'])])]));
        }
        break;
      case 'images':
        out.push(
          paragraph(
            block.nodes.map((image) => {
              const caption = (image.fragments[0]?.nodes as DocumentBlockParagraph[] | undefined)
                ?.flatMap((p) => p.nodes.map((n) => (n.object === 'text' ? n.leaves.map((l) => l.text).join('') : '')))
                .join('');
              return inlineImage(image.data.ref, image.data.alt ?? '', caption ?? '');
            }),
          ),
        );
        break;
      case 'math':
        out.push(paragraph([{ object: 'inline', type: 'inline-math', data: { formula: block.data.formula }, isVoid: true }]));
        break;
      case 'embed': {
        const { url } = block.data;
        const text = textNode([leaf(url)]);
        out.push(paragraph([{ object: 'inline', type: 'link', data: { ref: { kind: 'url', url } }, nodes: [text], isVoid: false }]));
        break;
      }
      case 'hint':
      case 'blockquote':
        out.push(...fit(block.nodes as Block[], allowed));
        break;
      case 'table': {
        const { view, records, definition } = block.data;
        const columns = view.type === 'grid' ? view.columns : Object.keys(definition);
        out.push(paragraph([textNode([leaf(columns.map((c) => definition[c]?.title ?? '').join(' | '))])]));
        const rows = Object.values(records).sort((a, b) => (a.orderIndex < b.orderIndex ? -1 : 1));
        for (const record of rows) {
          const nodes: InlineOrText[] = [];
          columns.forEach((column, j) => {
            if (j > 0) nodes.push(textNode([leaf(' | ')]));
            const name = record.values[column];
            const fragment = block.fragments.find((f) => f.fragment === name);
            for (const p of fragment?.nodes ?? []) if (p.type === 'paragraph') nodes.push(...p.nodes);
          });
          out.push(paragraph(mergeTexts(nodes)));
        }
        break;
      }
      default:
        break;
    }
  }
  return out;
}

/** Merges neighbouring text nodes (and their equal-marked leaves) so a rebuilt paragraph is canonical. */
function mergeTexts(nodes: InlineOrText[]): InlineOrText[] {
  const pieces: Piece[] = [];
  for (const node of nodes) {
    if (node.object === 'text') {
      for (const l of node.leaves) pieces.push({ kind: 'text', text: l.text, marks: l.marks.map((m) => m.type as MarkType) });
    } else pieces.push({ kind: 'inline', node });
  }
  return assemble(pieces);
}

type Keyed = { object: string; type?: string; key?: string; nodes?: Keyed[]; fragments?: Keyed[] };

/** Gives blocks, inlines and fragments their position key, written right after `object`/`type`. */
function withKeys(nodes: Keyed[], prefix: string, keyFor: (path: string) => string, moved: (from: Keyed, to: Keyed) => void): Keyed[] {
  return nodes.map((node, i) => {
    if (node.object !== 'block' && node.object !== 'inline') return node;
    const path = prefix === '' ? String(i) : `${prefix}.${i}`;
    const { object, type, key: _key, ...rest } = node;
    const keyed: Keyed = { object, type, key: keyFor(path), ...rest };
    if (node.nodes) keyed.nodes = withKeys(node.nodes, path, keyFor, moved);
    if (node.fragments) {
      keyed.fragments = node.fragments.map((fragment, j) => {
        const fragmentPath = `${path}.f${j}`;
        const { object: fragmentObject, key: _fragmentKey, ...fragmentRest } = fragment;
        return { object: fragmentObject, key: keyFor(fragmentPath), ...fragmentRest, nodes: withKeys(fragment.nodes ?? [], fragmentPath, keyFor, moved) };
      });
    }
    moved(node, keyed);
    return keyed;
  });
}

export function parseMarkdown(markdown: string, opts: ParseOptions = {}): ParsedMarkdown {
  const source = prepareSource(markdown);
  const reader = new Reader(source);
  const blocks = reader.read(processor.parse(source.text));
  const headingDepth = new WeakMap<object, number>();
  const moved = (from: Keyed, to: Keyed) => {
    const depth = reader.headingDepth.get(from);
    if (depth !== undefined) headingDepth.set(to, depth);
  };
  const nodes = withKeys(blocks as unknown as Keyed[], '', opts.keyFor ?? hashKey, moved) as unknown as GitBookDocument['nodes'];
  return { document: { object: 'document', data: { schemaVersion: SCHEMA_VERSION }, nodes }, headingDepth };
}
