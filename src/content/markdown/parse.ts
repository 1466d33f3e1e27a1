import type {
  DocumentBlockCode,
  DocumentBlockColumn,
  DocumentBlockColumns,
  DocumentBlockEmbed,
  DocumentBlockExpandable,
  DocumentBlockFile,
  DocumentBlockIf,
  DocumentBlockOpenAPI,
  DocumentBlockOpenAPISchemas,
  DocumentBlockPrompt,
  DocumentBlockStepperStep,
  DocumentBlockTabsItem,
  DocumentBlockUpdate,
  DocumentInlineAnnotation,
  DocumentInlineButton,
  DocumentInlineIcon,
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
import type { DocumentTextColor, TextAlignment, VerticalAlignment } from '@gitbook/api';
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
  EMOJI,
  HINT_STYLES,
  HTML_MARKS,
  SCHEMA_VERSION,
  colorMark,
  emoji,
  emojiCode,
  hashKey,
  imageRefFromUrl,
  isTextColor,
  markKey,
  markObjects,
  refFromUrl,
  sortMarks,
  textNode,
  urlFromRef,
} from './shared.ts';
import { shiftPath, splitTopLevel } from './chunks.ts';
import { type HtmlToken, type LiquidTag, decodeEntities, parseStyle, scanLiquidTag, tokenizeHtml } from './tags.ts';

/**
 * Markdown → GitBook document. remark parses CommonMark + GFM; GitBook's own syntax is recognised
 * around it: `{% hint %}` / `{% code %}` tags, `$$` math, `<code class="expression">` expressions,
 * `<sup>`/`<sub>`/`<kbd>` marks and `<a id>` heading anchors.
 */

export interface ParseOptions {
  /** Key of the node at a position path such as `3.0.f1.0` (indices; `f<n>` is a fragment). */
  keyFor?: (path: string) => string;
  /** Size of the pieces a long page is parsed in (tests set it small to compare with a whole parse). */
  pieceChars?: number;
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
const PRE_OPEN = new RegExp(`^${QUOTE_PREFIX}${LIST_MARKER}<pre(?:[ \\t>]|$)`, 'i');
const LINE_PREFIX = new RegExp(`^(${QUOTE_PREFIX})${LIST_MARKER}`);

/** GitBook's Liquid block tags; `@owner/block` integration tags are recognised by their `@`. */
export const BLOCK_TAGS = new Set([
  'hint', 'code', 'embed', 'tabs', 'tab', 'stepper', 'step', 'columns', 'column', 'updates', 'update', 'if',
  'prompt', 'content-ref', 'file', 'include', 'openapi', 'swagger', 'openapi-operation', 'openapi-schemas',
  'openapi-webhook', 'drawing',
]);

function knownTag(tag: LiquidTag | null): tag is LiquidTag {
  return tag !== null && (BLOCK_TAGS.has(tag.name) || (tag.name.startsWith('@') && !tag.end));
}

/** The quote markers of a line that holds only a block tag or a `<details>`/`<summary>` line; null otherwise. */
function isolatedLine(line: string): string | null {
  const m = LINE_PREFIX.exec(line);
  const rest = line.slice(m ? m[0].length : 0).trim();
  if (rest.startsWith('{%')) return knownTag(scanLiquidTag(rest)) ? (m?.[1] ?? '').replace(/[ \t]/g, '') : null;
  const lower = rest.slice(0, 10).toLowerCase();
  if (lower.startsWith('<details') || lower.startsWith('</details') || lower.startsWith('<summary')) return (m?.[1] ?? '').replace(/[ \t]/g, '');
  return null;
}
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
  // The next `$$` line after each line, found in one pass from the end (a search forward from
  // every opening line would cost the square of the page's length).
  const closeAfter = new Array<number>(lines.length);
  for (let i = lines.length - 1, next = -1; i >= 0; i--) {
    closeAfter[i] = next;
    if (MATH_CLOSE.test(lines[i]!)) next = i;
  }
  let fence: { char: string; length: number } | null = null;
  let pre = false;
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i]!;
    // A `<pre>` block is code too (GitBook's form for highlighted lines): its lines stay as written.
    if (pre || (!fence && PRE_OPEN.test(line))) {
      pre = !/<\/pre>/i.test(line);
      out.push(line);
      continue;
    }
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
      const end = closeAfter[i]!;
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
    const quote = isolatedLine(line);
    if (quote !== null) {
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
const IN_HINT = new Set([...ESSENTIALS, 'table', 'embed', 'integration']);
const IN_LIST_ITEM = new Set([...ESSENTIALS, 'code', 'hint', 'blockquote', 'math', 'table']);
const IN_ANNOTATION = new Set([...ESSENTIALS, 'code']);
const TOP_LEVEL = new Set([
  ...ESSENTIALS, 'blockquote', 'hint', 'prompt', 'images', 'file', 'drawing', 'embed', 'code', 'math', 'expandable', 'tabs',
  'table', 'swagger', 'openapi-operation', 'openapi-schemas', 'openapi-webhook', 'content-ref', 'integration',
  'reusable-content', 'stepper', 'if', 'columns', 'updates',
]);
const IN_TAB = new Set([
  ...ESSENTIALS, 'content-ref', 'code', 'embed', 'file', 'images', 'drawing', 'hint', 'prompt', 'blockquote', 'math', 'integration',
]);
const IN_STEP = new Set([...IN_TAB, 'expandable']);
const IN_UPDATE = new Set([...IN_TAB, 'tabs', 'expandable']);
const IN_COLUMN = new Set([...IN_TAB, 'table', 'expandable', 'stepper']);
const IN_EXPANDABLE = new Set([
  ...ESSENTIALS, 'file', 'images', 'code', 'table', 'hint', 'prompt', 'blockquote', 'reusable-content', 'integration',
]);

function paragraph(nodes: InlineOrText[], align?: string): DocumentBlockParagraph {
  return { object: 'block', type: 'paragraph', data: align ? { align: align as TextAlignment } : {}, nodes };
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
function trimEdges(pieces: Piece[], keep: { start?: boolean; end?: boolean } = {}): Piece[] {
  const out = pieces.map((p) => ({ ...p }));
  for (const p of keep.start ? [] : out) {
    if (p.kind !== 'text' || p.marks.includes('code')) break;
    p.text = p.text.replace(/^\s+/, '');
    if (p.text !== '') break;
  }
  for (let i = keep.end ? -1 : out.length - 1; i >= 0; i--) {
    const p = out[i]!;
    if (p.kind !== 'text' || p.marks.includes('code')) break;
    p.text = p.text.trimEnd();
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
      if (p.node.type === 'emoji') return emoji(p.node.data.code);
      if (p.node.type === 'button') return p.node.data.label;
      if (p.node.type === 'annotation') return p.node.nodes.map((t) => t.leaves.map((l) => l.text).join('')).join('');
      return '';
    })
    .join('');
}

/** Inline HTML tags read as marks. */
const TAG_MARKS: Record<string, MarkType> = {
  b: 'bold',
  strong: 'bold',
  em: 'italic',
  s: 'strikethrough',
  del: 'strikethrough',
  strike: 'strikethrough',
  ...Object.fromEntries(Object.entries(HTML_MARKS).map(([mark, tag]) => [tag, mark])),
};

/** Inline tags an unknown HTML block keeps when its text is read as markdown. */
const INLINE_TAG = /^<\/?(b|strong|i|em|s|del|strike|sup|sub|kbd|code|br|img|mark|a)(\s[^>]*)?\/?>$/i;

/** `50%` → `{ unit: '%', value: 50 }`, `120` → 120 (the official `Length`). */
function parseLength(value: string | undefined): Length | undefined {
  if (value === undefined || value.trim() === '') return undefined;
  const m = /^\s*(-?\d+(?:\.\d+)?(?:e[-+]?\d+)?)\s*([a-z%]*)\s*$/i.exec(value);
  if (!m) return undefined;
  const n = Number(m[1]);
  if (!Number.isFinite(n)) return undefined;
  return m[2] ? { unit: m[2], value: n } : n;
}
type Length = number | { unit: string; value: number };

const isTrue = (value: string | undefined) => value === 'true' || value === '';

/** A date as the schema's date-time: a bare `YYYY-MM-DD` is midnight UTC. */
function timestamp(date: string): string {
  return /^\d{4}-\d{2}-\d{2}$/.test(date) ? `${date}T00:00:00.000Z` : date;
}

/** `.gitbook/includes/name.md` (with any `../`) → `name`. */
function includeId(path: string): string {
  let p = path.trim();
  while (p.startsWith('../') || p.startsWith('./')) p = p.slice(p.indexOf('/') + 1);
  if (p.startsWith('/')) p = p.slice(1);
  if (p.startsWith('.gitbook/includes/')) p = p.slice('.gitbook/includes/'.length);
  return p.endsWith('.md') ? p.slice(0, -3) : p;
}

/** Options of an HTML `<a class="button …">`. */
function buttonData(attrs: Record<string, string>, label: string): DocumentInlineButton['data'] | null {
  const classes = (attrs.class ?? '').split(/\s+/);
  if (!classes.includes('button')) return null;
  const kind = classes.includes('secondary') ? 'secondary' : 'primary';
  const base: { label: string; kind: 'primary' | 'secondary'; size?: 'small' | 'medium' | 'large'; icon?: string } = { label, kind };
  const size = attrs['data-size'];
  if (size === 'small' || size === 'medium' || size === 'large') base.size = size;
  if (attrs['data-icon']) base.icon = attrs['data-icon'];
  const action = attrs['data-action'];
  if (action === 'search' || action === 'ask') {
    return { ...base, action: attrs['data-query'] !== undefined ? { action, query: attrs['data-query'] } : { action } };
  }
  if (action === 'select' && attrs['data-slug'] !== undefined) return { ...base, action: { action, slug: attrs['data-slug'] } };
  return { ...base, ref: refFromUrl(attrs.href ?? '') };
}

/** Footnotes being expanded into annotations right now (conversion is synchronous: one at a time per thread). */
const expandingFootnotes = new Set<md.FootnoteDefinition>();

class Reader {
  constructor(
    readonly source: Source,
    private readonly definitions = new Map<string, md.Definition>(),
    readonly headingDepth = new WeakMap<object, number>(),
    /** How many HTML blocks this text is nested in. */
    private readonly htmlDepth = 0,
    /** Footnote definitions with the reader whose source they come from (their positions are in it). */
    private readonly footnotes = new Map<string, { def: md.FootnoteDefinition; owner: Reader }>(),
    /** Footnotes some reference points at (they become annotations, not text). */
    private readonly referenced = new Set<string>(),
  ) {}

  /**
   * The GitBook tag a paragraph consists of. Read from the source, so that an escaped `\{%` (how a
   * paragraph that merely looks like a tag is written) stays text.
   */
  private liquidTag(node: md.RootContent | undefined): LiquidTag | null {
    if (node?.type !== 'paragraph') return null;
    const tag = scanLiquidTag(this.raw(node));
    return knownTag(tag) ? tag : null;
  }

  read(root: md.Root): Block[] {
    const collect = (node: md.Nodes) => {
      if (node.type === 'definition' && !this.definitions.has(node.identifier)) this.definitions.set(node.identifier, node);
      if (node.type === 'footnoteDefinition' && !this.footnotes.has(node.identifier)) this.footnotes.set(node.identifier, { def: node, owner: this });
      if (node.type === 'footnoteReference') this.referenced.add(node.identifier);
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

  /** A nested reader for a piece of markdown found inside HTML or a tag (captions, cells, summaries). */
  private nested(markdown: string): { reader: Reader; root: md.Root } {
    // Footnote references only parse where their definition is in the same text: stub ones are added.
    let text = markdown;
    if (markdown.includes('[^') && this.footnotes.size > 0) {
      text += '\n\n' + [...this.footnotes.values()].map(({ def: f }) => `[^${f.label ?? f.identifier}]: -`).join('\n');
    }
    const reader = new Reader(prepareSource(text), this.definitions, this.headingDepth, this.htmlDepth + 1, this.footnotes, this.referenced);
    const root = processor.parse(reader.source.text);
    if (text !== markdown) root.children = root.children.filter((c) => c.type !== 'footnoteDefinition');
    return { reader, root };
  }

  /** Rich text of a one-paragraph piece of markdown (`<br>` and `<p>` boundaries become line breaks). */
  inlineMarkdown(markdown: string, marks: MarkType[] = []): Piece[] {
    const { reader, root } = this.nested(markdown);
    const out: Piece[] = [];
    for (const child of root.children) {
      if (out.length > 0) out.push({ kind: 'text', text: '\n', marks: [] });
      if (child.type === 'paragraph' || child.type === 'heading') out.push(...reader.phrasing(child.children, marks));
      else if (child.type === 'html') out.push({ kind: 'text', text: decodeEntities(child.value.replace(/<[^>]*>/g, '')), marks });
    }
    return trimEdges(out);
  }

  // ---- Blocks ----

  /**
   * Pairs each opening tag among the siblings with its closing tag (index → index), in one pass:
   * a closing tag closes the latest open tag of its name; tags left open stay unpaired.
   */
  private pairs(children: md.RootContent[]): Map<number, number> {
    const open = new Map<string, number[]>();
    const pairs = new Map<number, number>();
    for (let j = 0; j < children.length; j++) {
      const child = children[j]!;
      let name: string | null = null;
      let end = false;
      const tag = this.liquidTag(child);
      if (tag) {
        name = tag.name;
        end = tag.end;
      } else if (child.type === 'html') {
        const value = child.value.trim().toLowerCase();
        if (value.startsWith('<details')) name = 'details';
        else if (value.startsWith('</details')) [name, end] = ['details', true];
      }
      if (name === null) continue;
      const stack = open.get(name) ?? [];
      open.set(name, stack);
      if (!end) stack.push(j);
      else if (stack.length > 0) pairs.set(stack.pop()!, j);
    }
    return pairs;
  }

  /** Blocks of a container, made to fit what it may hold (`allowed`). */
  private flow(children: md.RootContent[], allowed: Set<string>): Block[] {
    const out: Block[] = [];
    const pairs = this.pairs(children);
    for (let i = 0; i < children.length; i++) {
      const child = children[i]!;
      const end = pairs.get(i);
      const tag = this.liquidTag(child);
      if (tag && !tag.end) {
        const inner = end === undefined ? [] : children.slice(i + 1, end);
        const made = this.tagBlock(tag, inner, end !== undefined, allowed);
        if (made) {
          out.push(...made);
          if (end !== undefined) i = end;
          continue;
        }
      }
      if (child.type === 'html' && end !== undefined) {
        out.push(this.expandable(child, children.slice(i + 1, end)));
        i = end;
        continue;
      }
      out.push(...this.block(child, allowed));
    }
    return fit(out, allowed);
  }

  /** Items of a list container (`{% tabs %}` → `{% tab %}`…): content outside any item is kept after it. */
  private items(inner: md.RootContent[], name: string, make: (tag: LiquidTag, body: md.RootContent[]) => Block): { items: Block[]; stray: md.RootContent[] } {
    const pairs = this.pairs(inner);
    const items: Block[] = [];
    const stray: md.RootContent[] = [];
    for (let j = 0; j < inner.length; j++) {
      const tag = this.liquidTag(inner[j]);
      const end = pairs.get(j);
      if (tag && !tag.end && tag.name === name && end !== undefined) {
        items.push(make(tag, inner.slice(j + 1, end)));
        j = end;
      } else stray.push(inner[j]!);
    }
    return { items, stray };
  }

  /** The block(s) a Liquid tag stands for; null when the tag is not complete (it then stays text). */
  private tagBlock(tag: LiquidTag, inner: md.RootContent[], closed: boolean, allowed: Set<string>): Block[] | null {
    const a = tag.attrs;
    const wrap = (block: Block, stray: md.RootContent[] = []) => [block, ...(stray.length > 0 ? this.flow(stray, allowed) : [])];
    switch (tag.name) {
      case 'hint': {
        if (!closed) return null;
        const style = (HINT_STYLES as readonly string[]).includes(a.style ?? '') ? (a.style as HintStyle) : 'info';
        const data: DocumentBlockHint['data'] = { style };
        if (a.icon) data.icon = a.icon;
        return [{ object: 'block', type: 'hint', data, nodes: this.flow(inner, IN_HINT) as DocumentBlockHint['nodes'] }];
      }
      case 'code':
        if (!closed) return null;
        return this.flow(inner, allowed).map((b) => (b.type === 'code' ? withCodeAttrs(b, a) : b));
      case 'tabs': {
        if (!closed) return null;
        const { items, stray } = this.items(inner, 'tab', (t, body) => {
          const data: DocumentBlockTabsItem['data'] = { title: t.attrs.title ?? '' };
          if (t.attrs.icon) data.icon = t.attrs.icon;
          return { object: 'block', type: 'tabs-item', data, nodes: this.flow(body, IN_TAB) as DocumentBlockTabsItem['nodes'] };
        });
        return wrap({ object: 'block', type: 'tabs', data: {}, nodes: items as DocumentBlockTabsItem[] }, stray);
      }
      case 'stepper': {
        if (!closed) return null;
        const { items, stray } = this.items(inner, 'step', (t, body) => ({
          object: 'block',
          type: 'stepper-step',
          data: t.attrs.icon ? { icon: t.attrs.icon } : {},
          nodes: this.flow(body, IN_STEP) as DocumentBlockStepperStep['nodes'],
        }));
        return wrap({ object: 'block', type: 'stepper', data: {}, nodes: items as DocumentBlockStepperStep[] }, stray);
      }
      case 'columns': {
        if (!closed) return null;
        const { items, stray } = this.items(inner, 'column', (t, body) => {
          const data: DocumentBlockColumn['data'] = {};
          const width = parseLength(t.attrs.width);
          if (width !== undefined) data.width = width;
          const valign = t.attrs.valign;
          if (valign === 'top' || valign === 'middle' || valign === 'bottom') data.verticalAlignment = valign as VerticalAlignment;
          return { object: 'block', type: 'column', data, nodes: this.flow(body, IN_COLUMN) as DocumentBlockColumn['nodes'] };
        });
        const data: DocumentBlockColumns['data'] = isTrue(a.fullWidth) ? { fullWidth: true } : {};
        return wrap({ object: 'block', type: 'columns', data, nodes: items as DocumentBlockColumn[], isVoid: false }, stray);
      }
      case 'updates': {
        if (!closed) return null;
        const { items, stray } = this.items(inner, 'update', (t, body) => {
          const data: DocumentBlockUpdate['data'] = { date: timestamp(t.attrs.date ?? '1970-01-01') };
          const tags = (t.attrs.tags ?? '').split(',').map((x) => x.trim()).filter(Boolean);
          if (tags.length > 0) data.tags = tags.map((x) => ({ kind: 'tag', tag: x }));
          return { object: 'block', type: 'update', data, nodes: this.flow(body, IN_UPDATE) as DocumentBlockUpdate['nodes'] };
        });
        const format = a.format === 'numeric' || a.format === 'short' ? a.format : 'full';
        return wrap({ object: 'block', type: 'updates', data: { format }, nodes: items as DocumentBlockUpdate[] }, stray);
      }
      case 'if': {
        if (!closed) return null;
        const expression = a.condition ?? tag.rest;
        return [{ object: 'block', type: 'if', data: { expression }, nodes: this.flow(inner, TOP_LEVEL) as DocumentBlockIf['nodes'] }];
      }
      case 'prompt': {
        if (!closed) return null;
        const blocks = this.flow(inner, TOP_LEVEL);
        const code = blocks.find((b): b is DocumentBlockCode => b.type === 'code') ?? codeBlock(blocksPlain(blocks), {});
        const data = { description: a.description ?? '' } as DocumentBlockPrompt['data'];
        if (a.icon) data.icon = a.icon;
        if (a.openInAIProviders !== undefined) data.openInAIProviders = isTrue(a.openInAIProviders);
        if (a.defaultExpanded === 'hidden' || a.defaultExpanded === 'partial' || a.defaultExpanded === 'full') data.defaultExpanded = a.defaultExpanded;
        return [{ object: 'block', type: 'prompt', data, nodes: [code] }];
      }
      case 'content-ref':
        if (!closed && a.url === undefined) return null;
        return voidBlock('content-ref', { ref: refFromUrl(a.url ?? '') });
      case 'embed': {
        const url = a.url ?? tag.args[0];
        if (url === undefined) return null;
        const block: DocumentBlockEmbed = { object: 'block', type: 'embed', data: { url }, isVoid: true };
        if (isTrue(a.fullWidth)) block.data.fullWidth = true;
        const caption = this.captionFragment(inner);
        if (caption) (block as { fragments?: DocumentFragment[] }).fragments = [caption];
        return [block];
      }
      case 'file': {
        const src = a.src ?? tag.args[0] ?? '';
        const ref = refFromUrl(src);
        if (ref.kind !== 'file') return [linkParagraph(ref, src)];
        const block: DocumentBlockFile = { object: 'block', type: 'file', data: { ref }, isVoid: true };
        const caption = this.captionFragment(inner);
        if (caption) (block as { fragments?: DocumentFragment[] }).fragments = [caption];
        return [block];
      }
      case 'drawing': {
        const ref = a.src === undefined ? undefined : refFromUrl(a.src);
        return voidBlock('drawing', ref?.kind === 'file' ? { ref } : {});
      }
      case 'include': {
        const path = tag.args[0] ?? a.src;
        if (path === undefined) return null;
        return voidBlock('reusable-content', { ref: { kind: 'reusable-content', reusableContent: includeId(path) } });
      }
      case 'openapi':
      case 'swagger': {
        const src = a.src ?? '';
        const ref = refFromUrl(src);
        const data: DocumentBlockOpenAPI['data'] = { ref: ref.kind === 'file' ? ref : { kind: 'url', url: src }, path: a.path ?? '', method: a.method ?? '' };
        if (isTrue(a.expanded)) data.expanded = true;
        if (isTrue(a.fullWidth)) data.fullWidth = true;
        return voidBlock('swagger', data);
      }
      case 'openapi-operation':
        return voidBlock('openapi-operation', { ref: { kind: 'openapi', spec: a.spec ?? '' }, path: a.path ?? '', method: a.method ?? '' });
      case 'openapi-schemas': {
        const schemas = (a.schemas ?? '').split(',').map((x) => x.trim()).filter(Boolean);
        const data: DocumentBlockOpenAPISchemas['data'] = { ref: { kind: 'openapi', spec: a.spec ?? '' }, schemas };
        if (a.grouped !== undefined) data.grouped = isTrue(a.grouped);
        if (a.title !== undefined) data.title = a.title;
        return voidBlock('openapi-schemas', data);
      }
      case 'openapi-webhook':
        return voidBlock('openapi-webhook', { ref: { kind: 'openapi', spec: a.spec ?? '' }, name: a.name ?? '', method: a.method ?? '' });
      default: {
        if (!tag.name.startsWith('@')) return null;
        const slash = tag.name.indexOf('/');
        const integration = slash > 0 ? tag.name.slice(1, slash) : tag.name.slice(1);
        const block = slash > 0 ? tag.name.slice(slash + 1) : '';
        return voidBlock('integration', { integration, block, props: { ...a } });
      }
    }
  }

  /** The caption written between a void tag and its end tag (`{% embed %}caption{% endembed %}`). */
  private captionFragment(inner: md.RootContent[]): DocumentFragment | null {
    const blocks = this.flow(inner, new Set(['paragraph'])).filter((b) => b.type === 'paragraph');
    if (blocks.length === 0) return null;
    return { object: 'fragment', fragment: 'caption', nodes: blocks };
  }

  /** `<details>` … `</details>`: an expandable whose title is the `<summary>`. */
  private expandable(open: md.Html, inner: md.RootContent[]): DocumentBlockExpandable {
    const tokens = tokenizeHtml(open.value);
    const details = tokens.find((t) => t.kind === 'open' && t.name === 'details');
    const defaultExpanded = details?.kind === 'open' && 'open' in details.attrs;
    let summary = this.summary(open.value);
    let body = inner;
    if (summary === null && inner[0]?.type === 'html') {
      summary = this.summary(inner[0].value);
      if (summary !== null) body = inner.slice(1);
    }
    const title = paragraph(assemble(summary ?? []));
    const blocks = this.flow(body, IN_EXPANDABLE);
    if (blocks.length === 0) blocks.push(paragraph(assemble([])));
    return {
      object: 'block',
      type: 'expandable',
      data: defaultExpanded ? { defaultExpanded: true } : {},
      fragments: [
        { object: 'fragment', fragment: 'expandable-title', type: 'expandable-title', nodes: [title] },
        { object: 'fragment', fragment: 'expandable-body', type: 'expandable-body', nodes: blocks as DocumentBlockExpandable['fragments'][1]['nodes'] },
      ] as DocumentBlockExpandable['fragments'],
      isVoid: true,
    };
  }

  private summary(html: string): Piece[] | null {
    const lower = html.toLowerCase();
    const start = lower.indexOf('<summary');
    if (start < 0) return null;
    const open = lower.indexOf('>', start);
    const close = lower.lastIndexOf('</summary');
    if (open < 0 || close < open) return null;
    return this.inlineMarkdown(html.slice(open + 1, close));
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
        // Definitions referenced by an annotation are read there.
        if (this.referenced.has(node.identifier)) return [];
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

  /**
   * Which edges of a block hold whitespace written on purpose: GitBook writes a space that ends (or
   * starts) a paragraph as `&#x20;` and a line break that ends one as `<br>`; those are content.
   */
  private spelledOutEdges(node: md.Node): { start: boolean; end: boolean } {
    const raw = this.raw(node);
    const space = /&#(?:x20|32|x9|9);/i;
    return {
      start: new RegExp(`^(?:#{1,6}[ \\t]+)?${space.source}`, 'i').test(raw),
      end: new RegExp(`(?:${space.source}|<br\\s*/?>)(?:[ \\t]*<a [^>]*></a>)?[ \\t]*#*[ \\t]*$`, 'i').test(raw),
    };
  }

  /** A paragraph's block: none when it holds only whitespace (markdown can't write an empty paragraph). */
  private paragraphBlock(node: md.Paragraph, allowed: Set<string>, align?: string): Block[] {
    const pieces = trimEdges(this.phrasing(node.children, []), this.spelledOutEdges(node)).filter((p) => p.kind === 'inline' || p.text !== '');
    if (pieces.length === 0) return [];
    // A paragraph of nothing but a formula is a math block.
    const only = pieces.length === 1 ? pieces[0] : undefined;
    if (!align && only?.kind === 'inline' && only.node.type === 'inline-math') return [mathBlock(only.node.data.formula)];
    // A paragraph of nothing but images is an images block, where one may stand.
    const images = pieces.flatMap((p) => (p.kind === 'inline' && p.node.type === 'inline-image' ? [p.node] : []));
    const onlyImages = pieces.every((p) => (p.kind === 'inline' ? p.node.type === 'inline-image' : p.text.trim() === ''));
    if (!align && allowed.has('images') && images.length > 0 && onlyImages && images.every((img) => !img.data.size && !img.data.refDark)) {
      return [imagesBlock(images.map(({ data }) => imageBlock(data.ref, data.alt ?? '', data.caption ? [textNode([leaf(data.caption)])] : null)))];
    }
    return [paragraph(assemble(pieces), align)];
  }

  private resolveImage(node: md.PhrasingContent): { url: string; alt: string; title: string } | null {
    if (node.type === 'image') return { url: this.restore(node.url), alt: this.restore(node.alt ?? ''), title: this.restore(node.title ?? '') };
    if (node.type === 'imageReference') {
      const def = this.definitions.get(node.identifier);
      if (def) return { url: this.restore(def.url), alt: this.restore(node.alt ?? ''), title: this.restore(def.title ?? '') };
    }
    return null;
  }

  private heading(node: md.Heading, align?: string): DocumentBlockHeading {
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
      const tokens = tokenizeHtml(html);
      const anchor = tokens.length === 2 && tokens[0]!.kind === 'open' && tokens[0]!.name === 'a' && tokens[1]!.kind === 'close' ? tokens[0]!.attrs.id : undefined;
      if (anchor && /^[-a-z0-9.+_]+$/.test(anchor)) {
        id = anchor;
        children = children.slice(0, tail);
      }
    }
    const pieces = trimEdges(
      this.phrasing(children, []).map((p) => (p.kind === 'text' ? { ...p, text: p.text.replace(/\n/g, ' ') } : p)),
      this.spelledOutEdges(node),
    );
    const type = headingType(node.depth);
    const data: DocumentBlockHeading['data'] = id ? { id } : {};
    if (align) data.align = align as TextAlignment;
    const block: DocumentBlockHeading = { object: 'block', type, data, nodes: assemble(pieces) };
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
    return codeBlock(value, node.lang ? { syntax: this.restore(node.lang) } : {});
  }

  private htmlBlock(node: md.Html, allowed: Set<string>): Block[] {
    const html = this.restore(node.value).trim();
    const tokens = tokenizeHtml(html);
    const first = tokens.find((t) => t.kind !== 'text' || t.text.trim() !== '');
    if (!first) return [];
    if (first.kind === 'open') {
      if (first.name === 'pre') {
        const code = preCode(tokens);
        if (code) return [code];
      }
      if (first.name === 'table') {
        const table = this.htmlTable(html, tokens);
        if (table) return [table];
      }
      if (first.name === 'figure' || (first.name === 'div' && tokens.some((t) => t.kind === 'open' && t.name === 'figure'))) {
        const images = this.figures(html, tokens, first.name === 'div' ? first.attrs : {});
        if (images) return [images];
      }
      if (first.name === 'p' || /^h[1-6]$/.test(first.name)) {
        const last = tokens.at(-1);
        if (last?.kind === 'close' && last.name === first.name && tokens.filter((t) => t.kind === 'open' && t.name === first.name).length === 1) {
          const inner = html.slice(first.end, last.start);
          const align = ({ center: 'center', right: 'end', left: 'start' } as Record<string, string>)[first.attrs.align ?? ''];
          const { reader, root } = this.nested(inner.replace(/\n/g, ' '));
          const para = root.children[0];
          if (root.children.length === 1 && para?.type === 'paragraph') {
            if (first.name === 'p') return reader.paragraphBlock(para, allowed, align);
            // `<h2 align="center">` is an aligned heading-1, as `##` is.
            const depth = Number(first.name[1]) as md.Heading['depth'];
            return [reader.heading({ type: 'heading', depth, children: para.children }, align)];
          }
        }
      }
    }
    if (tokens.length > 0 && tokens.every((t) => t.kind === 'text' && t.text.trim() === '')) return [];
    // Other HTML: its text, read as markdown. Inline tags we know are kept the first time; any `<`
    // left is escaped, and nested HTML keeps no tags at all, so this always ends.
    const text = html
      .replace(/<(script|style)\b[\s\S]*?<\/\1\s*>/gi, '')
      .replace(/<!--[\s\S]*?-->/g, '')
      .replace(/<[^<>]*>/g, (t) => (this.htmlDepth === 0 && INLINE_TAG.test(t) ? t.replace(/^</, '\uE003') : ''))
      .replace(/</g, '&lt;')
      .replace(/\uE003/g, '<');
    const { reader, root } = this.nested(text);
    return reader.flow(root.children, allowed);
  }

  /** `<figure>`s (in a `<div>` carrying the block's alignment, width and frame): an images block. */
  private figures(html: string, tokens: HtmlToken[], wrapper: Record<string, string>): DocumentBlockImages | null {
    const images: DocumentBlockImage[] = [];
    for (let k = 0; k < tokens.length; k++) {
      const t = tokens[k]!;
      if (t.kind !== 'open' || t.name !== 'figure') continue;
      let img: Record<string, string> | undefined;
      let dark: string | undefined;
      let caption: InlineOrText[] | null = null;
      for (k++; k < tokens.length; k++) {
        const u = tokens[k]!;
        if (u.kind === 'close' && u.name === 'figure') break;
        if (u.kind === 'open' && u.name === 'img') img = u.attrs;
        if (u.kind === 'open' && u.name === 'source' && (u.attrs.media ?? '').includes('dark')) dark = u.attrs.srcset;
        if (u.kind === 'open' && u.name === 'figcaption') {
          // The `</figcaption>` after it, searched from here on (not from the start).
          let close = k + 1;
          for (; close < tokens.length; close++) {
            const v = tokens[close]!;
            if (v.kind === 'close' && v.name === 'figcaption') break;
          }
          if (close < tokens.length) {
            const inner = html.slice(u.end, tokens[close]!.start).trim().replace(/^<p>/i, '').replace(/<\/p>$/i, '');
            const pieces = this.inlineMarkdown(inner);
            caption = pieces.some((p) => p.kind === 'inline' || p.text !== '') ? assemble(pieces) : null;
            k = close;
          }
        }
      }
      if (!img || img.src === undefined) return null;
      const image = imageBlock(imageRefFromUrl(img.src), img.alt ?? '', caption);
      if (dark !== undefined) image.data.refDark = imageRefFromUrl(dark);
      const width = parseLength(img.width);
      if (width !== undefined) image.data.width = width;
      const height = parseLength(img.height);
      if (height !== undefined) image.data.height = height;
      images.push(image);
    }
    if (images.length === 0) return null;
    const block = imagesBlock(images);
    const align = wrapper.align;
    if (align === 'left' || align === 'right' || align === 'center') block.data.align = align;
    if (isTrue(wrapper['data-full-width'])) block.data.fullWidth = true;
    if (isTrue(wrapper['data-with-frame'])) block.data.withFrame = true;
    return block;
  }

  /** An HTML `<table>`: grid or cards view, column types, widths and hidden columns from `<th>` attributes. */
  private htmlTable(html: string, tokens: HtmlToken[]): DocumentBlockTable | null {
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
    const head = rows.find((r) => r.head);
    const body = rows.filter((r) => r !== head);
    const width = Math.max(head?.cells.length ?? 0, ...body.map((r) => r.cells.length));
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
      const title = th ? plainOfPieces(this.inlineMarkdown(th.raw)).replace(/\n/g, ' ').trim() : '';
      const type = attrs['data-type'];
      if (type === 'content-ref' || type === 'files' || type === 'number' || type === 'checkbox' || type === 'image') {
        definition[id] = { id, title, type } as DocumentTableDefinition;
      } else if (type === 'rating') {
        definition[id] = { id, title, type, max: Number(attrs['data-max'] ?? 5) || 5 };
      } else {
        const align = attrs.align === 'center' || attrs.align === 'right' ? attrs.align : 'left';
        definition[id] = { id, title, type: 'text', textAlignment: align };
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
    body.forEach((r, i) => {
      const values: DocumentTableRecord['values'] = {};
      columns.forEach((column, j) => {
        const raw = r.cells[j]?.raw ?? '';
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
          default: {
            const fragment = `r${i}${column}`;
            values[column] = fragment;
            fragments.push({ object: 'fragment', fragment, nodes: this.cellBlocks(raw) });
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
    } else {
      view = { type: 'grid', columns: visible, hideHeader: 'data-header-hidden' in tableAttrs };
      if (Object.keys(widths).length > 0) view.columnWidths = widths;
    }
    const data: DocumentBlockTable['data'] = { view, records, definition };
    if (isTrue(tableAttrs['data-full-width'])) data.fullWidth = true;
    return { object: 'block', type: 'table', data, fragments, isVoid: true };
  }

  /**
   * A cell's rich text: one paragraph per `<p>` and one heading per `<h1>`…`<h6>` (card titles are
   * written `<td><h4>…</h4></td>`), text between them a paragraph of its own; one paragraph when
   * the cell has none of them.
   */
  private cellBlocks(raw: string): (DocumentBlockParagraph | DocumentBlockHeading)[] {
    const tokens = tokenizeHtml(raw);
    const isBlock = (t: HtmlToken | undefined) => t?.kind === 'open' && (t.name === 'p' || /^h[1-6]$/.test(t.name));
    const spans: { from: number; to: number; tag: string | null }[] = [];
    let loose = 0;
    const looseText = (to: number) => {
      if (raw.slice(loose, to).replace(/<\/?p>/gi, '').trim() !== '') spans.push({ from: loose, to, tag: null });
    };
    for (let k = 0; k < tokens.length; k++) {
      const t = tokens[k]!;
      if (!isBlock(t) || t.kind !== 'open') continue;
      looseText(t.start);
      // It runs to its closing tag, or to the next paragraph or heading (an unclosed `<p>`), or to the end.
      let j = k + 1;
      while (j < tokens.length && !isBlock(tokens[j]) && !(tokens[j]!.kind === 'close' && (tokens[j] as { name: string }).name === t.name)) j++;
      const stop = tokens[j];
      spans.push({ from: t.end, to: stop ? stop.start : raw.length, tag: t.name });
      loose = stop ? (stop.kind === 'close' ? stop.end : stop.start) : raw.length;
      k = stop?.kind === 'close' ? j : j - 1;
    }
    if (spans.length === 0) return [paragraph(assemble(this.inlineMarkdown(raw.replace(/\n/g, ' '))))];
    looseText(raw.length);
    return spans.map(({ from, to, tag }) => {
      const inner = raw.slice(from, to).replace(/\n/g, ' ');
      if (tag === null || tag === 'p') return paragraph(assemble(this.inlineMarkdown(inner)));
      const { reader, root } = this.nested(inner);
      const para = root.children[0];
      const children = root.children.length === 1 && para?.type === 'paragraph' ? para.children : [{ type: 'text' as const, value: plainOfPieces(this.inlineMarkdown(inner)) }];
      return reader.heading({ type: 'heading', depth: Number(tag[1]) as 1 | 2 | 3, children });
    });
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

  phrasing(children: md.PhrasingContent[], marks: MarkType[]): Piece[] {
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
          out.push(this.link(this.restore(node.url), node.children, marks, node.title));
          break;
        case 'linkReference': {
          const def = this.definitions.get(node.identifier);
          if (def) out.push(this.link(this.restore(def.url), node.children, marks, def.title));
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
        case 'footnoteReference': {
          const found = this.footnotes.get(node.identifier);
          // A footnote is read by the reader of its own source; one referenced from inside its own
          // body stays text (it would expand forever).
          if (found && !expandingFootnotes.has(found.def)) {
            this.referenced.add(node.identifier);
            expandingFootnotes.add(found.def);
            try {
              out.push(found.owner.annotation(found.def, out));
            } finally {
              expandingFootnotes.delete(found.def);
            }
          }
          else out.push({ kind: 'text', text: `[^${node.label ?? node.identifier}]`, marks });
          break;
        }
        default:
          break;
      }
    }
    return out;
  }

  /** `word[^1]`: an annotation on the word before the reference, its body the footnote. */
  private annotation(def: md.FootnoteDefinition, out: Piece[]): Piece {
    const last = out.at(-1);
    let word: { text: string; marks: MarkType[] } = { text: '', marks: [] };
    if (last?.kind === 'text' && !last.marks.includes('code')) {
      const m = /\S+$/.exec(last.text);
      if (m) {
        word = { text: m[0], marks: last.marks };
        last.text = last.text.slice(0, m.index);
      }
    }
    const body = this.flow(def.children, IN_ANNOTATION);
    if (body.length === 0) body.push(paragraph(assemble([])));
    const node: DocumentInlineAnnotation = {
      object: 'inline',
      type: 'annotation',
      data: {},
      nodes: [textNode([leaf(word.text, word.marks)])],
      fragments: [{ object: 'fragment', fragment: 'annotation-body', type: 'annotation-body', nodes: body as DocumentInlineAnnotation['fragments'][0]['nodes'] }],
      isVoid: false,
    };
    return { kind: 'inline', node };
  }

  /** Text with its formulas (placeholders) and emoji as inline nodes. */
  private text(value: string, marks: MarkType[]): Piece[] {
    const out: Piece[] = [];
    const plain = (text: string) => {
      if (text === '') return;
      if (marks.includes('code')) {
        out.push({ kind: 'text', text, marks });
        return;
      }
      let last = 0;
      for (const m of text.matchAll(EMOJI)) {
        out.push({ kind: 'text', text: text.slice(last, m.index), marks });
        out.push({ kind: 'inline', node: { object: 'inline', type: 'emoji', data: { code: emojiCode(m[0]) }, isVoid: true } });
        last = m.index + m[0].length;
      }
      out.push({ kind: 'text', text: text.slice(last), marks });
    };
    let last = 0;
    for (const m of value.matchAll(PLACEHOLDER)) {
      plain(value.slice(last, m.index));
      const formula = this.source.math[Number(m[1] ?? m[2])]!.formula;
      out.push({ kind: 'inline', node: { object: 'inline', type: 'inline-math', data: { formula }, isVoid: true } });
      last = m.index + m[0].length;
    }
    plain(value.slice(last));
    return out;
  }

  private link(url: string, children: md.PhrasingContent[], marks: MarkType[], title?: string | null): Piece {
    if (title === 'mention') return { kind: 'inline', node: { object: 'inline', type: 'mention', data: { ref: refFromUrl(url) }, isVoid: true } };
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
    const tokens = tokenizeHtml(html);
    const tag = tokens.length === 1 ? tokens[0]! : undefined;
    /** The sibling closing `name`, nested ones skipped; -1 when there is none. */
    const closing = (name: string) => {
      let depth = 1;
      for (let k = i + 1; k < children.length; k++) {
        const child = children[k]!;
        if (child.type !== 'html') continue;
        const t = tokenizeHtml(child.value);
        if (t.length !== 1) continue;
        if (t[0]!.kind === 'open' && t[0]!.name === name && !t[0]!.selfClosing) depth++;
        else if (t[0]!.kind === 'close' && t[0]!.name === name && --depth === 0) return k;
      }
      return -1;
    };
    if (tag?.kind === 'open') {
      const { name, attrs } = tag;
      if (name === 'code') {
        const end = closing('code');
        if (end > 0) {
          const inner = this.raw(children[i], children[end]);
          if ((attrs.class ?? '').split(/\s+/).includes('expression')) {
            out.push({ kind: 'inline', node: { object: 'inline', type: 'expression', data: { expression: inner.trim() }, isVoid: true } });
          } else out.push({ kind: 'text', text: decodeEntities(inner), marks: [...marks, 'code'] });
          return end;
        }
      }
      if (name === 'i' && (attrs.class ?? '').startsWith('fa-')) {
        const end = closing('i');
        const icon = (attrs.class ?? '').split(/\s+/)[0]!.slice(3);
        const node: DocumentInlineIcon = { object: 'inline', type: 'icon', data: { icon }, isVoid: true };
        const color = parseStyle(attrs.style ?? '').color;
        if (isTextColor(color)) node.data.color = color as DocumentTextColor;
        out.push({ kind: 'inline', node });
        return end > 0 ? end : i;
      }
      // GitBook writes link buttons as `<a class="button …">`, action buttons as `<button class="button …">`.
      if (name === 'a' || name === 'button') {
        const end = closing(name);
        if (end > 0) {
          const label = decodeEntities(this.raw(children[i], children[end]).replace(/<[^<>]*>/g, '')).trim();
          const button = buttonData(attrs, label);
          if (button) out.push({ kind: 'inline', node: { object: 'inline', type: 'button', data: button, isVoid: true } });
          else if (attrs.href !== undefined) out.push(this.link(attrs.href, children.slice(i + 1, end), marks, attrs.title));
          else out.push(...this.phrasing(children.slice(i + 1, end), marks));
          return end;
        }
      }
      if (name === 'mark') {
        const end = closing('mark');
        if (end > 0) {
          const style = parseStyle(attrs.style ?? '');
          const text = isTextColor(style.color) ? style.color : 'default';
          const background = isTextColor(style['background-color']) ? style['background-color'] : 'default';
          out.push(...this.phrasing(children.slice(i + 1, end), [...marks, colorMark(text, background)]));
          return end;
        }
      }
      if (name === 'picture') {
        const end = closing('picture');
        if (end > 0) {
          const inner = tokenizeHtml(children.slice(i, end + 1).map((c) => (c.type === 'html' ? c.value : '')).join(''));
          const img = inner.find((t) => t.kind === 'open' && t.name === 'img');
          const source = inner.find((t) => t.kind === 'open' && t.name === 'source');
          if (img?.kind === 'open' && img.attrs.src !== undefined) {
            const node = this.imgInline(img.attrs);
            if (source?.kind === 'open' && source.attrs.srcset !== undefined) node.data.refDark = imageRefFromUrl(source.attrs.srcset);
            out.push({ kind: 'inline', node });
          }
          return end;
        }
      }
      const mark = TAG_MARKS[name];
      if (mark) {
        const end = closing(name);
        if (end > 0) {
          out.push(...this.phrasing(children.slice(i + 1, end), [...marks, mark]));
          return end;
        }
      }
      if (name === 'i') {
        const end = closing('i');
        if (end > 0) {
          out.push(...this.phrasing(children.slice(i + 1, end), [...marks, 'italic']));
          return end;
        }
      }
      if (name === 'br') out.push({ kind: 'text', text: '\n', marks });
      if (name === 'img' && attrs.src !== undefined) out.push({ kind: 'inline', node: this.imgInline(attrs) });
    }
    // Any other tag is dropped; the text it wraps is read as usual.
    return i;
  }

  private imgInline(attrs: Record<string, string>): DocumentInlineImage {
    const node = inlineImage(imageRefFromUrl(attrs.src ?? ''), attrs.alt ?? '', attrs.title ?? '');
    const size = attrs['data-size'];
    if (size === 'line' || size === 'original') node.data.size = size;
    return node;
  }
}

/**
 * `<pre class="language-yaml"><code class="lang-yaml">…</code></pre>`: how GitBook writes a code
 * block some of whose lines are highlighted, each such line (its newline included) in `<strong>`.
 * Highlighting is what the document can hold (`code-line` `data.highlighted`); other tags inside
 * (`<em>`, links) have no place in a code line and leave only their text. Every line is written
 * with its newline, so one newline at the very end is the last line's, not an empty line.
 */
function preCode(tokens: HtmlToken[]): DocumentBlockCode | null {
  const pre = tokens.find((t) => t.kind !== 'text' || t.text.trim() !== '');
  const open = tokens.findIndex((t) => t.kind === 'open' && t.name === 'code');
  let close = tokens.length - 1;
  while (close > open && !(tokens[close]!.kind === 'close' && (tokens[close] as { name: string }).name === 'code')) close--;
  if (pre?.kind !== 'open' || open < 0 || close <= open) return null;
  // Nothing but the `<pre>` may stand before the code, nor anything but `</pre>` after it.
  const outside = [...tokens.slice(0, open), ...tokens.slice(close + 1)];
  if (outside.some((t) => (t.kind === 'text' ? t.text.trim() !== '' : t.name !== 'pre'))) return null;
  const lines: { text: string; highlighted: boolean }[] = [{ text: '', highlighted: false }];
  let strong = 0;
  for (const t of tokens.slice(open + 1, close)) {
    if (t.kind === 'open' && (t.name === 'strong' || t.name === 'b')) strong++;
    else if (t.kind === 'close' && (t.name === 'strong' || t.name === 'b')) strong = Math.max(0, strong - 1);
    else if (t.kind === 'open' && t.name === 'br') lines.push({ text: '', highlighted: false });
    else if (t.kind === 'text') {
      t.text.split('\n').forEach((part, k) => {
        // A newline belongs to the line it ends: inside `<strong>`, that line is highlighted.
        if (k > 0) {
          if (strong > 0) lines.at(-1)!.highlighted = true;
          lines.push({ text: '', highlighted: false });
        }
        lines.at(-1)!.text += part;
        if (strong > 0 && part !== '') lines.at(-1)!.highlighted = true;
      });
    }
  }
  if (lines.length > 1 && lines.at(-1)!.text === '' && !lines.at(-1)!.highlighted) lines.pop();
  const lang = (classes: string | undefined, prefix: string) => (classes ?? '').split(/\s+/).find((c) => c.startsWith(prefix))?.slice(prefix.length);
  const code = tokens[open] as Extract<HtmlToken, { kind: 'open' }>;
  const syntax = lang(code.attrs.class, 'lang-') || lang(code.attrs.class, 'language-') || lang(pre.attrs.class, 'language-');
  const a = pre.attrs;
  const data: DocumentBlockCode['data'] = syntax ? { syntax } : {};
  if (a['data-title']) data.title = a['data-title'];
  if (a['data-overflow'] === 'wrap') data.overflow = 'wrap';
  if (isTrue(a['data-line-numbers'])) data.lineNumbers = true;
  if (isTrue(a['data-full-width'])) data.fullWidth = true;
  if (isTrue(a['data-expandable'])) data.expandable = true;
  const collapsed = Number(a['data-collapsed-line-count']);
  if (Number.isInteger(collapsed) && collapsed >= 1) data.collapsedLineCount = collapsed;
  return {
    object: 'block',
    type: 'code',
    data,
    nodes: lines.map((line) => ({ object: 'block', type: 'code-line', data: line.highlighted ? { highlighted: true } : {}, nodes: [textNode([leaf(line.text)])] })),
  };
}

/**
 * The heading block of a markdown heading depth, as GitBook maps them: `#` is the page title, so
 * the body's `##` is heading-1, `###` heading-2 and `####` heading-3. A `#` inside the body (the
 * title line is taken off before the body is read) is a heading-1 too, and `#####`/`######` are
 * heading-3: the document has three levels.
 */
export function headingType(depth: number): 'heading-1' | 'heading-2' | 'heading-3' {
  return depth <= 2 ? 'heading-1' : depth === 3 ? 'heading-2' : 'heading-3';
}

function withCodeAttrs(block: DocumentBlockCode, attrs: Record<string, string>): DocumentBlockCode {
  const data = { ...block.data };
  if (attrs.title) data.title = attrs.title;
  if (attrs.lineNumbers === 'true') data.lineNumbers = true;
  if (attrs.overflow === 'wrap') data.overflow = 'wrap';
  if (attrs.fullWidth === 'true') data.fullWidth = true;
  if (attrs.expandable === 'true') data.expandable = true;
  const collapsed = Number(attrs.collapsedLineCount);
  if (Number.isInteger(collapsed) && collapsed >= 1) data.collapsedLineCount = collapsed;
  return { ...block, data };
}

function codeBlock(value: string, data: DocumentBlockCode['data']): DocumentBlockCode {
  return {
    object: 'block',
    type: 'code',
    data,
    nodes: value.split('\n').map((line) => ({ object: 'block', type: 'code-line', data: {}, nodes: [textNode([leaf(line)])] })),
  };
}

function blocksPlain(blocks: Block[]): string {
  const lines: string[] = [];
  const visit = (nodes: unknown[]) => {
    for (const n of nodes as { object: string; nodes?: unknown[]; leaves?: { text: string }[] }[]) {
      if (n.object === 'text') lines.push((n.leaves ?? []).map((l) => l.text).join(''));
      else visit(n.nodes ?? []);
    }
  };
  visit(blocks);
  return lines.join('\n');
}

/** A void block (one that holds no blocks), as the one-element list a tag stands for. */
function voidBlock<T extends Block['type']>(type: T, data: Extract<Block, { type: T }>['data']): Block[] {
  return [{ object: 'block', type, data, isVoid: true } as Block];
}

function mathBlock(formula: string): DocumentBlockMath {
  return { object: 'block', type: 'math', data: { formula }, isVoid: true };
}

function imageBlock(ref: DocumentBlockImage['data']['ref'], alt: string, caption: InlineOrText[] | null): DocumentBlockImage {
  const fragments: DocumentBlockImage['fragments'] = caption ? [{ object: 'fragment', fragment: 'caption', nodes: [paragraph(caption)] }] : [];
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

function linkParagraph(ref: DocumentInlineLink['data']['ref'], text: string): DocumentBlockParagraph {
  return paragraph([{ object: 'inline', type: 'link', data: { ref }, nodes: [textNode([leaf(text)])], isVoid: false }]);
}

/**
 * Rewrites blocks a container may not hold (per the schema) into ones it may: code becomes
 * code-marked paragraphs, images inline images, math inline math, tables one paragraph per row,
 * references links, and containers (hints, quotes, tabs, steps, columns…) give up their wrapper.
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
      case 'embed':
        out.push(linkParagraph({ kind: 'url', url: block.data.url }, block.data.url));
        break;
      case 'content-ref':
      case 'file':
        out.push(linkParagraph(block.data.ref, urlFromRef(block.data.ref)));
        break;
      case 'drawing':
        if (block.data.ref) out.push(linkParagraph(block.data.ref, urlFromRef(block.data.ref)));
        break;
      case 'reusable-content':
      case 'swagger':
        out.push(linkParagraph(block.data.ref, urlFromRef(block.data.ref)));
        break;
      case 'openapi-operation':
      case 'openapi-schemas':
      case 'openapi-webhook':
      case 'integration':
        break;
      case 'expandable':
        out.push(...fit(block.fragments.flatMap((f) => f.nodes) as Block[], allowed));
        break;
      case 'table': {
        const { view, records, definition } = block.data;
        const columns = view.columns.length > 0 ? view.columns : Object.keys(definition);
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
      default: {
        const nested = (block as { nodes?: Block[] }).nodes;
        if (nested && nested.every((n) => n.object === 'block')) out.push(...fit(nested, allowed));
        break;
      }
    }
  }
  return out;
}

/** Merges neighbouring text nodes (and their equal-marked leaves) so a rebuilt paragraph is canonical. */
function mergeTexts(nodes: InlineOrText[]): InlineOrText[] {
  const pieces: Piece[] = [];
  for (const node of nodes) {
    if (node.object === 'text') {
      for (const l of node.leaves) pieces.push({ kind: 'text', text: l.text, marks: l.marks.map(markKey) });
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
  const nodes: GitBookDocument['nodes'] = [];
  const headingDepth = new WeakMap<object, number>();
  for (const parsed of parseMarkdownPieces(markdown, opts)) {
    for (const node of parsed.document.nodes) {
      nodes.push(node);
      const depth = parsed.headingDepth.get(node);
      if (depth !== undefined) headingDepth.set(node, depth);
    }
  }
  return { document: { object: 'document', data: { schemaVersion: SCHEMA_VERSION }, nodes }, headingDepth };
}

/**
 * The page parsed piece by piece (one piece for a short page): each piece's blocks take the
 * positions, and so the keys, they have in the whole page. A caller that consumes pieces as they
 * come (serializing them, say) never holds the whole document's objects at once.
 */
export function* parseMarkdownPieces(markdown: string, opts: ParseOptions = {}): Generator<ParsedMarkdown> {
  const keyFor = opts.keyFor ?? hashKey;
  let offset = 0;
  for (const piece of splitTopLevel(markdown, opts.pieceChars ?? PIECE_CHARS)) {
    const at = offset;
    const parsed = parsePiece(piece, at === 0 ? keyFor : (path) => keyFor(shiftPath(path, at)));
    offset += parsed.document.nodes.length;
    yield parsed;
  }
}

/** Pages longer than this are parsed in pieces of about this size (see chunks.ts). */
const PIECE_CHARS = 32 * 1024;

function parsePiece(markdown: string, keyFor: (path: string) => string): ParsedMarkdown {
  const source = prepareSource(markdown);
  const reader = new Reader(source);
  const blocks = reader.read(processor.parse(source.text));
  const headingDepth = new WeakMap<object, number>();
  const moved = (from: Keyed, to: Keyed) => {
    const depth = reader.headingDepth.get(from);
    if (depth !== undefined) headingDepth.set(to, depth);
  };
  const nodes = withKeys(blocks as unknown as Keyed[], '', keyFor, moved) as unknown as GitBookDocument['nodes'];
  return { document: { object: 'document', data: { schemaVersion: SCHEMA_VERSION }, nodes }, headingDepth };
}
