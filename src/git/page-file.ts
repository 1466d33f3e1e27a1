import { readMarkdownMetadata } from '../change-requests/service.ts';
import { type PageMetadata, gitbookYaml, readFrontMatter, withFrontMatter } from '../content/front-matter.ts';
import { documentToMarkdown, markdownToDocument } from '../content/markdown.ts';
import type { PageEntry } from '../content/model.ts';
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
export function roundTripPageFile(text: string): string {
  const page = readPageFile(text);
  // The metadata goes through the page entry as an import stores it (src/git/convert.ts).
  const entry = { ...page.metadata } as PageEntry;
  return writePageFile(page.title ?? '', frontMatterOf(entry), documentToMarkdown(markdownToDocument(page.body)));
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
export function roundTripIncludeFile(text: string, id: string): string {
  const { title, body } = readIncludeFile(text, id);
  return writeIncludeFile(title, documentToMarkdown(markdownToDocument(body)));
}
