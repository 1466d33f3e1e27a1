import type * as md from 'mdast';
import type { Block, MarkType } from './shared.ts';
import { type LiquidTag, decodeEntities, scanLiquidTag } from './tags.ts';
import { blockquote, fencedCode, footnoteBlocks, heading, list, paragraphBlock } from './parse-blocks.ts';
import { markdownTable } from './parse-html-table.ts';
import { TOP_LEVEL, fit } from './parse-containers.ts';
import { expandable, htmlBlock } from './parse-html.ts';
import { phrasing } from './parse-inline.ts';
import { knownTag, tagBlock } from './parse-liquid.ts';
import { type Piece, paragraph, trimEdges } from './parse-nodes.ts';
import { PLACEHOLDER, type Source, prepareSource, processor } from './parse-source.ts';

/**
 * GitBook writes an empty paragraph as an empty line between blank ones, so a run of blank lines
 * between two blocks is one or more empty paragraphs: three blank lines hold one, five hold two.
 * Reading them keeps them, and writing them back gives the same lines.
 */
function emptyParagraphsBetween(source: Source, previous: md.RootContent | undefined, next: md.RootContent): Block[] {
  const from = previous?.position?.end.line;
  const to = next.position?.start.line;
  if (from === undefined || to === undefined || to - from < 4) return [];
  let blank = to - from - 1;
  for (let line = from + 1; line < to; line++) if (source.added.has(line)) blank--;
  const count = Math.floor((blank - 1) / 2);
  return Array.from({ length: count }, () => paragraph([{ object: 'text', leaves: [{ object: 'leaf', text: '', marks: [] }] }]));
}

/**
 * Reads remark's tree of one piece of source: holds what the whole text shares (link definitions,
 * footnotes, heading depths), pairs opening and closing tags among siblings, and hands each node to
 * the family of constructs that reads it. Nested readers read markdown found inside HTML or tags.
 */
export class Reader {
  constructor(
    readonly source: Source,
    readonly definitions = new Map<string, md.Definition>(),
    readonly headingDepth = new WeakMap<object, number>(),
    /** How many HTML blocks this text is nested in. */
    readonly htmlDepth = 0,
    /** Footnote definitions with the reader whose source they come from (their positions are in it). */
    readonly footnotes = new Map<string, { def: md.FootnoteDefinition; owner: Reader }>(),
    /** Footnotes some reference points at (they become annotations, not text). */
    readonly referenced = new Set<string>(),
    /**
     * Emoji characters are text, not emoji: in cells and captions GitBook writes an emoji as
     * `<span data-tag="emoji">`, so a bare character there was text in its document.
     */
    readonly emojiAsText = false,
  ) {}

  /**
   * The GitBook tag a paragraph consists of. Read from the source, so that an escaped `\{%` (how a
   * paragraph that merely looks like a tag is written) stays text.
   */
  liquidTag(node: md.RootContent | undefined): LiquidTag | null {
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
  restore(text: string): string {
    return text.replace(PLACEHOLDER, (_, a?: string, b?: string) => this.source.math[Number(a ?? b)]?.raw ?? '');
  }

  /** Source text of a node, or (given two) between them. */
  raw(start: md.Node | undefined, end?: md.Node): string {
    const from = end ? start?.position?.end.offset : start?.position?.start.offset;
    const to = end ? end.position?.start.offset : start?.position?.end.offset;
    return from === undefined || to === undefined ? '' : this.restore(this.source.text.slice(from, to));
  }

  /** A nested reader for a piece of markdown found inside HTML or a tag (captions, cells, summaries). */
  nested(markdown: string, emojiAsText = this.emojiAsText): { reader: Reader; root: md.Root } {
    // Footnote references only parse where their definition is in the same text: stub ones are added.
    let text = markdown;
    if (markdown.includes('[^') && this.footnotes.size > 0) {
      text += '\n\n' + [...this.footnotes.values()].map(({ def: f }) => `[^${f.label ?? f.identifier}]: -`).join('\n');
    }
    const reader = new Reader(prepareSource(text), this.definitions, this.headingDepth, this.htmlDepth + 1, this.footnotes, this.referenced, emojiAsText);
    const root = processor.parse(reader.source.text);
    if (text !== markdown) root.children = root.children.filter((c) => c.type !== 'footnoteDefinition');
    return { reader, root };
  }

  /** Rich text of a one-paragraph piece of markdown (`<br>` and `<p>` boundaries become line breaks). */
  inlineMarkdown(markdown: string, marks: MarkType[] = [], opts: { keepSpaces?: boolean; emojiAsText?: boolean } = {}): Piece[] {
    if (opts.keepSpaces) {
      // Inside HTML (cells, summaries) GitBook writes the spaces a text starts or ends with, which
      // markdown would drop: they are kept as text.
      const [, lead, body, trail] = /^( *)([\s\S]*?)( *)$/.exec(markdown)!;
      if (lead || trail) {
        const pieces = this.inlineMarkdown(body!, marks, { emojiAsText: opts.emojiAsText });
        return [{ kind: 'text', text: lead!, marks: [] }, ...pieces, { kind: 'text', text: trail!, marks: [] }];
      }
    }
    const { reader, root } = this.nested(markdown, opts.emojiAsText);
    const out: Piece[] = [];
    for (const child of root.children) {
      if (out.length > 0) out.push({ kind: 'text', text: '\n', marks: [] });
      if (child.type === 'paragraph' || child.type === 'heading') out.push(...phrasing(reader, child.children, marks));
      else if (child.type === 'html') out.push({ kind: 'text', text: decodeEntities(child.value.replace(/<[^>]*>/g, '')), marks });
    }
    return trimEdges(out);
  }

  /**
   * Pairs each opening tag among the siblings with its closing tag (index → index), in one pass:
   * a closing tag closes the latest open tag of its name; tags left open stay unpaired.
   */
  pairs(children: md.RootContent[]): Map<number, number> {
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
  flow(children: md.RootContent[], allowed: Set<string>): Block[] {
    const out: Block[] = [];
    const pairs = this.pairs(children);
    for (let i = 0; i < children.length; i++) {
      const child = children[i]!;
      out.push(...emptyParagraphsBetween(this.source, children[i - 1], child));
      const end = pairs.get(i);
      const tag = this.liquidTag(child);
      if (tag && !tag.end) {
        const inner = end === undefined ? [] : children.slice(i + 1, end);
        const made = tagBlock(this, tag, inner, end !== undefined, allowed);
        if (made) {
          out.push(...made);
          if (end !== undefined) i = end;
          continue;
        }
      }
      if (child.type === 'html' && end !== undefined) {
        out.push(expandable(this, child, children.slice(i + 1, end)));
        i = end;
        continue;
      }
      out.push(...this.block(child, allowed));
    }
    return fit(out, allowed);
  }

  /** The block(s) of one node of markdown, each construct read by its own family. */
  block(node: md.RootContent, allowed: Set<string>): Block[] {
    switch (node.type) {
      case 'paragraph':
        return paragraphBlock(this, node, allowed);
      case 'heading':
        return [heading(this, node)];
      case 'thematicBreak':
        return [{ object: 'block', type: 'divider', data: {}, isVoid: true }];
      case 'blockquote':
        return [blockquote(this, node)];
      case 'list':
        return [list(this, node)];
      case 'code':
        return [fencedCode(this, node)];
      case 'html':
        return htmlBlock(this, node, allowed);
      case 'table':
        return [markdownTable(this, node)];
      case 'footnoteDefinition':
        return footnoteBlocks(this, node, allowed);
      default:
        // Definitions are resolved into their references; YAML and the like carry no content.
        return [];
    }
  }
}
