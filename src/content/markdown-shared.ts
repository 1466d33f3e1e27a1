import { createHash } from 'node:crypto';
import type {
  ContentRef,
  ContentRefFile,
  ContentRefURL,
  DocumentBlock,
  DocumentInline,
  DocumentText,
  DocumentTextLeaf,
  DocumentTextMark,
  JSONDocument,
} from '@gitbook/api';

/**
 * Vocabulary shared by the markdown parser and serializer: the official document types, the marks we
 * map to markdown, and how content references are written as URLs.
 */

/** A GitBook rich-text document, exactly as the official `JSONDocument` schema defines it. */
export type GitBookDocument = JSONDocument;

export type Block = DocumentBlock;
export type InlineOrText = DocumentInline | DocumentText;

/** Document schema version written into `data.schemaVersion`, the value the rest of Folio uses. */
export const SCHEMA_VERSION = 1;

/** Marks we read from and write to markdown, in the order they nest when written (outermost first). */
export const MARK_ORDER = ['bold', 'italic', 'strikethrough', 'superscript', 'subscript', 'keyboard', 'code'] as const;
export type MarkType = (typeof MARK_ORDER)[number];

/** Marks written as paired HTML tags, since markdown has no syntax for them. */
export const HTML_MARKS: Partial<Record<MarkType, string>> = { superscript: 'sup', subscript: 'sub', keyboard: 'kbd' };

export function isMarkType(type: string): type is MarkType {
  return (MARK_ORDER as readonly string[]).includes(type);
}

export function sortMarks(marks: Iterable<MarkType>): MarkType[] {
  return [...new Set(marks)].sort((a, b) => MARK_ORDER.indexOf(a) - MARK_ORDER.indexOf(b));
}

export function markObjects(marks: readonly MarkType[]): DocumentTextMark[] {
  return marks.map((type) => ({ object: 'mark', type }) as DocumentTextMark);
}

/** The mark types of a leaf we know how to write; others (colors) are dropped when writing markdown. */
export function leafMarks(leaf: DocumentTextLeaf): MarkType[] {
  return sortMarks(leaf.marks.map((m) => m.type).filter(isMarkType));
}

export function textNode(leaves: DocumentTextLeaf[]): DocumentText {
  return { object: 'text', leaves };
}

/** The default block key: a short hash of the node's position path, so equal trees get equal keys. */
export function hashKey(path: string): string {
  return createHash('sha256').update(path).digest('base64url').slice(0, 12);
}

// Internal links are written as Folio API-style paths; anything else is an external URL.
const SPACE_PREFIX = '(?:/spaces/([^/#?]+))?';
const PAGE_LINK = new RegExp(`^${SPACE_PREFIX}/pages/([^/#?]+)(?:#(.+))?$`);
const FILE_LINK = new RegExp(`^${SPACE_PREFIX}/files/([^/#?]+)$`);

/** The content reference a markdown link URL stands for. */
export function refFromUrl(url: string): ContentRef {
  const page = PAGE_LINK.exec(url);
  if (page) {
    const [, space, pageId, anchor] = page;
    const scope = space ? { space } : {};
    return anchor ? { kind: 'anchor', anchor, page: pageId!, ...scope } : { kind: 'page', page: pageId!, ...scope };
  }
  if (url.startsWith('#') && url.length > 1) return { kind: 'anchor', anchor: url.slice(1) };
  const file = FILE_LINK.exec(url);
  if (file) return { kind: 'file', file: file[2]!, ...(file[1] ? { space: file[1] } : {}) };
  return { kind: 'url', url };
}

/** The reference of an image URL: images may only point at a URL or an uploaded file. */
export function imageRefFromUrl(url: string): ContentRefURL | ContentRefFile {
  const ref = refFromUrl(url);
  return ref.kind === 'file' ? ref : { kind: 'url', url };
}

/** The URL a content reference is written as in markdown (the inverse of `refFromUrl`). */
export function urlFromRef(ref: ContentRef): string {
  const inSpace = (space: string | undefined, path: string) => (space ? `/spaces/${space}${path}` : path);
  switch (ref.kind) {
    case 'url':
      return ref.url;
    case 'page':
      return inSpace(ref.space, `/pages/${ref.page}`);
    case 'anchor':
      return ref.page ? inSpace(ref.space, `/pages/${ref.page}#${ref.anchor}`) : `#${ref.anchor}`;
    case 'file':
      return inSpace(ref.space, `/files/${ref.file}`);
    case 'user':
      return `/users/${ref.user}`;
    case 'collection':
      return `/collections/${ref.collection}`;
    case 'space':
      return `/spaces/${ref.space}`;
    case 'reusable-content':
      return inSpace(ref.space, `/reusable-contents/${ref.reusableContent}`);
    case 'tag':
      return inSpace(ref.space, `/tags/${ref.tag}`);
    case 'openapi':
      return `/openapi/${ref.spec}`;
  }
}

/** An emoji code (`1f600`, or `1f44b-1f3fd` for sequences) as the characters it stands for. */
export function emoji(code: string): string {
  try {
    return String.fromCodePoint(...code.split('-').map((hex) => parseInt(hex, 16)));
  } catch {
    return '';
  }
}

/** Hint styles the schema allows; anything else reads as `info`. */
export const HINT_STYLES = ['info', 'warning', 'danger', 'success'] as const;
export type HintStyle = (typeof HINT_STYLES)[number];
