import type { DocumentBlockHeading } from '@gitbook/api';
import { type ParseOptions, parseMarkdown, parseMarkdownPieces } from './parse.ts';
import { serializeDocument } from './serialize.ts';
import { type Block, type GitBookDocument, SCHEMA_VERSION } from './shared.ts';
import { type LinkRef, Slugger, blockLines, blocksText, collectLinks, anchorSlug } from './text.ts';

/**
 * Page content: GitBook-flavoured markdown (how Folio stores pages) and the GitBook JSON document
 * (how the API serves them), with the text views search and link checking need.
 *
 * Markdown read: CommonMark, GFM (tables, task lists, strikethrough, autolinks, footnotes as text),
 * `{% hint style="…" %}…{% endhint %}`, `{% code title="…" lineNumbers="true" %}…{% endcode %}`,
 * `$$…$$` math (a paragraph or `$$` lines of its own = block, inside text = inline),
 * `<code class="expression">…</code>` expressions, `<sup>`/`<sub>`/`<kbd>` marks,
 * `<figure><img><figcaption>` images, `## Title <a href="#id" id="id"></a>` heading anchors, and
 * links to `/pages/<id>`, `/pages/<id>#anchor`, `#anchor` and `/files/<id>` as content references.
 */

export type { GitBookDocument } from './shared.ts';
export type { ParseOptions } from './parse.ts';
export type { LinkRef } from './text.ts';
export { anchorSlug } from './text.ts';

/**
 * Parses markdown into a document that validates against the official `JSONDocument` schema.
 * Keys come from each node's position (`keyFor(path)`, a hash by default), so equal markdown gives
 * an equal document.
 */
export function markdownToDocument(markdown: string, opts?: ParseOptions): GitBookDocument {
  return parseMarkdown(markdown, opts).document;
}

/**
 * The document of a page as JSON text, serialized piece by piece as it is parsed: for large
 * pages, the whole document's objects never need to be alive at once (less garbage to collect).
 */
export function markdownToDocumentJson(markdown: string): string {
  const parts: string[] = [];
  for (const piece of parseMarkdownPieces(markdown)) {
    for (const node of piece.document.nodes) parts.push(JSON.stringify(node));
  }
  return `{"object":"document","data":{"schemaVersion":${SCHEMA_VERSION}},"nodes":[${parts.join(',')}]}`;
}

/** Writes a document as markdown that `markdownToDocument` reads back to the same document. */
export function documentToMarkdown(doc: GitBookDocument): string {
  return serializeDocument(doc);
}

export interface MarkdownSection {
  /** Anchor of the heading (its custom id, or a unique slug of its text); '' for the text before the first heading. */
  id: string;
  /** Heading text; '' for the text before the first heading. */
  title: string;
  /** Markdown heading depth (1–6); 0 for the text before the first heading. */
  depth: number;
  /** Plain text of the section, headings excluded. */
  body: string;
}

/** Splits a page at its top-level headings. The text before the first heading is a section when there is any. */
export function markdownSections(markdown: string): MarkdownSection[] {
  return sectionsOf(parseMarkdown(markdown));
}

/** Sections and plain text from one parse: what the search index keeps of a page. */
export function markdownSearchText(markdown: string): { sections: MarkdownSection[]; body: string } {
  const parsed = parseMarkdown(markdown);
  return { sections: sectionsOf(parsed), body: blocksText(parsed.document.nodes as Block[]) };
}

/** Link and image URLs, and the anchors headings define, from one parse: what link checking needs. */
export function markdownLinkTargets(markdown: string): { urls: string[]; anchors: string[] } {
  const parsed = parseMarkdown(markdown);
  return {
    urls: collectLinks(parsed.document.nodes as Block[]).map((l) => l.url),
    anchors: sectionsOf(parsed).map((s) => s.id).filter(Boolean),
  };
}

function sectionsOf({ document, headingDepth }: ReturnType<typeof parseMarkdown>): MarkdownSection[] {
  const slugger = new Slugger();
  const sections: MarkdownSection[] = [];
  let current: MarkdownSection & { blocks: Block[] } = { id: '', title: '', depth: 0, body: '', blocks: [] };
  const close = () => {
    const body = blocksText(current.blocks);
    if (current.depth > 0 || body !== '') sections.push({ id: current.id, title: current.title, depth: current.depth, body });
  };
  for (const block of document.nodes as Block[]) {
    if (block.type === 'heading-1' || block.type === 'heading-2' || block.type === 'heading-3') {
      close();
      const heading = block as DocumentBlockHeading;
      const title = blockLines(heading).join(' ').trim();
      const id = slugger.slug(heading.data.id ?? anchorSlug(title));
      current = { id, title, depth: headingDepth.get(block) ?? Number(block.type.slice(-1)), body: '', blocks: [] };
    } else current.blocks.push(block);
  }
  close();
  return sections;
}

/** Every link and image URL of the page with its text (alt text for images), in page order. */
export function markdownLinks(markdown: string): LinkRef[] {
  return collectLinks(markdownToDocument(markdown).nodes as Block[]);
}

/** The page's visible text, one line per paragraph, list item, code line or table row. */
export function plainText(markdown: string): string {
  return blocksText(markdownToDocument(markdown).nodes as Block[]);
}
