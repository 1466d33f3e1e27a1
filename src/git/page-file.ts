import { readMarkdownMetadata } from '../change-requests/edit.ts';
import { type PageMetadata, gitbookYaml, readFrontMatter, withFrontMatter } from '../content/markdown/front-matter.ts';
import { documentToMarkdown, markdownToDocument } from '../content/markdown/markdown.ts';
import { mentionLabel } from '../content/markdown/serialize-inline.ts';
import { keepMentionText } from '../content/markdown/mention-text.ts';
import { decodeEntities } from '../content/markdown/tags.ts';
import type { PageEntry } from '../content/model.ts';
import { attributeValue, rewriteLinks, type LinkPlace } from './format.ts';
import { realignPipeTables } from './pipe-tables.ts';
import { frontMatterOf } from '../content/presenter.ts';

/**
 * A page's markdown file in a GitBook repository: front matter, the title as the one `#` heading,
 * then the body (whose headings start at `##`, GitBook's heading-1). Git sync reads and writes
 * pages through these two functions; the corpus check (bench/gitbook-roundtrip.ts) too.
 */

export interface PageFile {
  title?: string;
  metadata: PageMetadata;
  /** The markdown after the title line (what Folio stores as the page's document). */
  body: string;
}

export function readPageFile(text: string): PageFile {
  const { markdown, title, metadata } = readMarkdownMetadata(text);
  return { ...(title !== undefined ? { title } : {}), metadata, body: markdown };
}

export function writePageFile(title: string, metadata: PageMetadata, body: string): string {
  return withFrontMatter(metadata, `# ${title}\n${body.trim() ? `\n${body.replace(/\n*$/, '\n')}` : ''}`);
}

/**
 * A page file after what an edit through the document API does to it: body → JSON document →
 * markdown, written back with the same title and front matter. GitBook-written pages should come
 * back byte for byte (see the README's list of normalisations for what does not).
 */
export function roundTripPageFile(text: string, links?: LinkMapping): string {
  const page = readPageFile(text);
  // The metadata goes through the page entry as an import stores it (src/git/convert.ts).
  const entry = { ...page.metadata } as PageEntry;
  return writePageFile(page.title ?? '', frontMatterOf(entry), throughDocument(page.body, links));
}

/**
 * How git sync turns repository links into page and file references (`/pages/<id>`, `/files/<id>`)
 * on import, and back on export; applied with the same `rewriteLinks` around the conversion.
 */
export interface LinkMapping {
  inward(target: string): string | undefined;
  outward(target: string): string | undefined;
}

/** A page body after an edit of its document through the API (which keeps its mentions' texts). */
function throughDocument(body: string, links: LinkMapping | undefined): string {
  if (!links) return keepMentionText(documentToMarkdown(markdownToDocument(body)), body);
  const inside = realignPipeTables(body, rewriteLinks(body, (target) => links.inward(target)));
  return exportLinks(keepMentionText(documentToMarkdown(markdownToDocument(inside)), inside), (target) => links.outward(target));
}

/**
 * Rewrites the page and file references of a written page into repository links (`map`), and
 * gives the links whose text the writer derived from the reference (mentions, page-link blocks,
 * card targets: `/pages/<id>`, or its last segment) the text GitBook gives them: the name of the
 * file or folder linked to (`share.md`, `embedding`), or the anchor.
 */
export function exportLinks(markdown: string, map: (target: string, place: LinkPlace, written: string) => string | undefined): string {
  const internalOf = new Map<string, string>();
  const out = rewriteLinks(markdown, (target, place, written) => {
    const next = map(target, place, written);
    if (next !== undefined) internalOf.set(place === 'attribute' ? attributeValue(next) : next, target);
    return next;
  });
  if (internalOf.size === 0) return realignPipeTables(markdown, out);
  const label = (text: string, target: string) => {
    const internal = internalOf.get(target);
    // (an attribute's target is HTML: its label is what it names, `Filice's Talk.png`)
    return internal !== undefined && (text === internal || text === mentionLabel(internal)) ? mentionLabel(decodeEntities(target)) : text;
  };
  const labelled = out
    .replace(/\[([^\]\n]*)\]\(([^)\s]+)( "mention")?\)/g, (whole, text: string, target: string, mention = '') => `[${label(text, target)}](${target}${mention})`)
    .replace(/<a href="([^"]+)">([^<]*)<\/a>/g, (whole, target: string, text: string) => `<a href="${target}">${label(text, target)}</a>`);
  // Rewritten links change the length of pipe-table cells: their columns are padded again.
  return realignPipeTables(markdown, labelled);
}

/** A reusable content's file, `.gitbook/includes/<id>.md`: its title as front matter, then its body. */
export function writeIncludeFile(title: string, body: string): string {
  return `---\n${gitbookYaml({ title })}---\n\n${body.replace(/\n*$/, '\n')}`;
}

export function readIncludeFile(text: string, id: string): { title: string; body: string } {
  const { metadata, body } = readFrontMatter(text);
  const title = typeof metadata.extra?.title === 'string' ? metadata.extra.title : id;
  return { title, body: body.replace(/^(?:[ \t]*\r?\n)+/, '') };
}

/** An include file after an edit of its document through the API. */
export function roundTripIncludeFile(text: string, id: string, links?: LinkMapping): string {
  const { title, body } = readIncludeFile(text, id);
  return writeIncludeFile(title, throughDocument(body, links));
}
