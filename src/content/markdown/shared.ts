import { createHash } from 'node:crypto';
import type {
  ContentRef,
  ContentRefFile,
  ContentRefURL,
  DocumentBlock,
  DocumentInline,
  DocumentText,
  DocumentTextLeaf,
  DocumentTextColor,
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

/**
 * Marks we read from and write to markdown, in the order they nest when written (outermost first).
 * A color mark is the key `color:<text>:<background>` (its data), so marks compare as strings.
 */
export const MARK_ORDER = ['color', 'bold', 'italic', 'strikethrough', 'superscript', 'subscript', 'keyboard', 'code'] as const;
export type MarkType = string;

/** Marks written as paired HTML tags, since markdown has no syntax for them. */
export const HTML_MARKS: Record<string, string> = { superscript: 'sup', subscript: 'sub', keyboard: 'kbd' };

/** Text and background colors the schema allows (`DocumentTextColor`). */
export const TEXT_COLORS = [
  'default', 'green', 'blue', 'red', 'orange', 'yellow', 'purple', 'pink', 'violet', 'cyan',
  '$primary', '$info', '$success', '$warning', '$danger', '$tint',
] as const;
export type TextColor = (typeof TEXT_COLORS)[number];

export function isTextColor(value: string | undefined): value is TextColor {
  return (TEXT_COLORS as readonly string[]).includes(value ?? '');
}

export function colorMark(text: TextColor, background: TextColor): MarkType {
  return `color:${text}:${background}`;
}

const markRank = (mark: string) => MARK_ORDER.indexOf((mark.startsWith('color:') ? 'color' : mark) as (typeof MARK_ORDER)[number]);

export function isMarkType(type: string): boolean {
  return markRank(type) >= 0;
}

export function sortMarks(marks: Iterable<MarkType>): MarkType[] {
  // One color per leaf: the innermost one written wins.
  const list = [...new Set(marks)];
  const colors = list.filter((m) => m.startsWith('color:'));
  const rest = list.filter((m) => !m.startsWith('color:'));
  const picked = colors.length > 0 ? [colors.at(-1)!, ...rest] : rest;
  return picked.sort((a, b) => markRank(a) - markRank(b));
}

export function markObjects(marks: readonly MarkType[]): DocumentTextMark[] {
  return marks.map((type) => {
    if (type.startsWith('color:')) {
      const [, text, background] = type.split(':');
      return { object: 'mark', type: 'color', data: { text: text as DocumentTextColor, background: background as DocumentTextColor } };
    }
    return { object: 'mark', type } as DocumentTextMark;
  });
}

/** A mark's key (see `MarkType`). */
export function markKey(mark: DocumentTextMark): MarkType {
  return mark.type === 'color' ? colorMark(mark.data?.text ?? 'default', mark.data?.background ?? 'default') : mark.type;
}

/** The mark keys of a leaf, sorted. */
export function leafMarks(leaf: DocumentTextLeaf): MarkType[] {
  return sortMarks(leaf.marks.map(markKey).filter(isMarkType));
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

/** Emoji in text: a flag, or a pictograph with its modifiers and zero-width-joined parts. */
export const EMOJI =
  /\p{RI}\p{RI}|(?:\p{Emoji_Presentation}|\p{Extended_Pictographic}\uFE0F)(?:\p{Emoji_Modifier}|\uFE0F|\u200D(?:\p{Emoji_Presentation}|\p{Extended_Pictographic}))*/gu;

/** The emoji code of a sequence of characters: hex code points joined by `-`. */
export function emojiCode(chars: string): string {
  return [...chars].map((c) => c.codePointAt(0)!.toString(16)).join('-');
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
