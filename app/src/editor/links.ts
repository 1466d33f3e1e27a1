/**
 * Where a GitBook content reference leads, for `href`s: only http(s) and mailto URLs (never
 * `javascript:` or `data:`), in-page anchors, and files through the page's file URLs. Page, space
 * and other references are shown but not made links here (the app's screens know their addresses).
 */
import { isRecord } from './model.ts';

const SAFE_PROTOCOLS = new Set(['http:', 'https:', 'mailto:']);

/** The URL as an href, when it is one a click may safely follow. */
export function safeUrl(url: unknown): string | undefined {
  if (typeof url !== 'string' || url.trim() === '') return undefined;
  try {
    const parsed = new URL(url.trim());
    return SAFE_PROTOCOLS.has(parsed.protocol) ? parsed.href : undefined;
  } catch {
    return undefined;
  }
}

export interface RefContext {
  fileURL?: (fileId: string) => string | undefined;
}

export function hrefOf(ref: unknown, context: RefContext = {}): string | undefined {
  if (!isRecord(ref)) return undefined;
  switch (ref.kind) {
    case 'url':
      return safeUrl(ref.url);
    case 'anchor':
      return !ref.page && typeof ref.anchor === 'string' ? `#${encodeURIComponent(ref.anchor)}` : undefined;
    case 'file':
      return typeof ref.file === 'string' ? safeUrl(context.fileURL?.(ref.file)) ?? sameOrigin(context.fileURL?.(ref.file)) : undefined;
    default:
      return undefined;
  }
}

/** A path on this server (a file's download URL may be one). */
function sameOrigin(url: string | undefined): string | undefined {
  return url && /^\/(?!\/)/.test(url) ? url : undefined;
}

/** A short readable description of a reference: what a link points to. */
export function describeRef(ref: unknown): string {
  if (!isRecord(ref)) return 'nothing';
  const str = (v: unknown) => (typeof v === 'string' ? v : '');
  switch (ref.kind) {
    case 'url':
      return str(ref.url);
    case 'page':
      return `page ${str(ref.page)}${ref.space ? ` (space ${str(ref.space)})` : ''}`;
    case 'anchor':
      return `#${str(ref.anchor)}${ref.page ? ` on page ${str(ref.page)}` : ''}`;
    case 'file':
      return `file ${str(ref.file)}`;
    case 'user':
      return `user ${str(ref.user)}`;
    case 'space':
      return `space ${str(ref.space)}`;
    case 'collection':
      return `collection ${str(ref.collection)}`;
    case 'reusable-content':
      return `reusable content ${str(ref.reusableContent)}`;
    case 'tag':
      return `tag ${str(ref.tag)}`;
    case 'openapi':
      return `OpenAPI spec ${str(ref.spec)}`;
    default:
      return String(ref.kind ?? 'reference');
  }
}

/** The src of an image reference (a URL or a space file). */
export function imageSrc(ref: unknown, context: RefContext): string | undefined {
  if (!isRecord(ref)) return undefined;
  if (ref.kind === 'url') return safeUrl(ref.url);
  if (ref.kind === 'file' && typeof ref.file === 'string') {
    const url = context.fileURL?.(ref.file);
    return safeUrl(url) ?? sameOrigin(url);
  }
  return undefined;
}
