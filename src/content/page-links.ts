import { posix } from 'node:path';
import { gitPath } from './presenter.ts';
import type { ContentReader, PageEntry } from './model.ts';

/**
 * Links between pages and to files, as GitBook's markdown writes them (`../guides/setup.md#install`,
 * `../.gitbook/assets/diagram.png`) and as Folio stores them (`/pages/<id>#install`,
 * `/files/<id>`).
 *
 * Stored markdown names pages and files by id, so a link stays right when its target is moved or
 * renamed. Writing a page turns the relative links that resolve in its revision into ids
 * (`canonicalLinks`); a markdown read turns ids back into paths relative to the page as it is now
 * (`relativeLinks`). A page that nobody moved comes back as it was written.
 */

/** Where a URL sits in markdown: a link or image destination, or an href/src/url attribute (HTML and liquid tags). */
const LINK_URL = /\]\(<?([^)\s>]+)|\b(?:href|src|url)="([^"]*)"/g;
const FENCE = /^ {0,3}(`{3,}|~{3,})/;
const SCHEME = /^[a-z][a-z0-9+.-]*:/i;
const ASSETS = '.gitbook/assets/';
const STORED_PAGE = /^\/pages\/([^/#?]+)(#.*)?$/;
const STORED_FILE = /^\/files\/([^/#?]+)$/;

interface Found {
  at: number;
  url: string;
}

/** The link URLs of a markdown text with their offsets, outside code blocks and code spans. */
function findLinkUrls(markdown: string): Found[] {
  const found: Found[] = [];
  let fence: string | null = null;
  let offset = 0;
  for (const line of markdown.split('\n')) {
    const start = offset;
    offset += line.length + 1;
    const marker = FENCE.exec(line)?.[1];
    if (fence) {
      if (marker && marker[0] === fence[0] && marker.length >= fence.length && line.trim() === marker) fence = null;
      continue;
    }
    if (marker) {
      fence = marker;
      continue;
    }
    if (!line.includes('](') && !line.includes('="')) continue;
    // Code spans keep their length but lose their content, so offsets still match the line.
    const visible = line.replace(/(`+)[^`]*?\1/g, (span) => ' '.repeat(span.length));
    for (const m of visible.matchAll(LINK_URL)) {
      const url = m[1] ?? m[2]!;
      const within = m.index! + m[0].length - url.length - (m[1] === undefined ? 1 : 0);
      found.push({ at: start + within, url: line.slice(within, within + url.length) });
    }
  }
  return found;
}

/** The text with the URLs at the found offsets replaced (each found URL maps to its replacement, or stays). */
function replaceUrls(markdown: string, found: Found[], replacement: Map<string, string>): string {
  let out = '';
  let last = 0;
  for (const f of found) {
    const next = replacement.get(f.url);
    if (next === undefined) continue;
    out += markdown.slice(last, f.at) + next;
    last = f.at + f.url.length;
  }
  return last === 0 ? markdown : out + markdown.slice(last);
}

function splitUrl(url: string): { path: string; anchor: string } {
  const hash = url.indexOf('#');
  const path = hash < 0 ? url : url.slice(0, hash);
  const query = path.indexOf('?');
  return { path: query < 0 ? path : path.slice(0, query), anchor: hash < 0 ? '' : url.slice(hash) };
}

function decode(path: string): string {
  try {
    return decodeURIComponent(path);
  } catch {
    return path;
  }
}

/** The directory a page's markdown file is in, in a repository of the space. */
export async function pageDirectory(reader: ContentReader, page: PageEntry): Promise<string> {
  const path = await reader.path(page);
  return posix.dirname(gitPath(path, (await reader.childIds(page.id)).length > 0));
}

/** The directory of a reusable content's file. */
export const INCLUDES_DIRECTORY = '.gitbook/includes';

/**
 * Relative links to pages and files of the revision, rewritten as ids (`/pages/<id>`,
 * `/files/<id>`). `directory` is where the markdown's file is (see pageDirectory). Links that
 * resolve to nothing stay as written.
 */
export async function canonicalLinks(reader: ContentReader, markdown: string, directory: string): Promise<string> {
  const found = findLinkUrls(markdown).filter((f) => f.url && !SCHEME.test(f.url) && !f.url.startsWith('/') && !f.url.startsWith('#'));
  if (!found.length) return markdown;
  let filesByName: Map<string, string> | undefined;
  const replacement = new Map<string, string>();
  for (const url of new Set(found.map((f) => f.url))) {
    const { path, anchor } = splitUrl(url);
    const target = posix.normalize(posix.join(directory, decode(path)));
    if (target.startsWith('..')) continue;
    const asset = target.lastIndexOf(ASSETS);
    if (asset >= 0) {
      filesByName ??= new Map((await reader.files()).map((f) => [f.name, f.id]));
      const id = filesByName.get(target.slice(asset + ASSETS.length));
      if (id) replacement.set(url, `/files/${id}`);
      continue;
    }
    if (!/\.md$/i.test(path) && !path.endsWith('/')) continue;
    const pagePath = target.replace(/\.md$/i, '').replace(/(^|\/)README$/i, '').replace(/\/$/, '');
    const page = pagePath === '.' || pagePath === '' ? (await reader.children(null))[0] : await reader.byPath(pagePath);
    if (page) replacement.set(url, `/pages/${page.id}${anchor}`);
  }
  return replaceUrls(markdown, found, replacement);
}

/** Stored links (`/pages/<id>`, `/files/<id>`) as paths relative to `directory`, where the markdown's file is. */
export async function relativeLinks(reader: ContentReader, markdown: string, directory: string): Promise<string> {
  const found = findLinkUrls(markdown).filter((f) => STORED_PAGE.test(f.url) || STORED_FILE.test(f.url));
  if (!found.length) return markdown;
  const relative = (to: string) => {
    const path = posix.relative(directory === '.' ? '' : directory, to);
    return encodeURI(path || posix.basename(to));
  };
  const replacement = new Map<string, string>();
  for (const url of new Set(found.map((f) => f.url))) {
    const page = STORED_PAGE.exec(url);
    if (page) {
      const target = await reader.page(page[1]!);
      if (!target) continue;
      const file = gitPath(await reader.path(target), (await reader.childIds(target.id)).length > 0);
      replacement.set(url, relative(file) + (page[2] ?? ''));
      continue;
    }
    const file = await reader.file(STORED_FILE.exec(url)![1]!);
    if (file) replacement.set(url, relative(ASSETS + file.name));
  }
  return replaceUrls(markdown, found, replacement);
}

/**
 * A page's cover given as a path to a space file (`.gitbook/assets/hero.png`, relative to the page,
 * or to the space root as GitBook also writes it) stored as `/files/<id>`, as links are; any other
 * cover (a URL, a path to nothing) stays as written.
 */
export async function canonicalCover<T extends { cover?: { url: string } }>(reader: ContentReader, page: T, directory: string): Promise<T> {
  const url = page.cover?.url;
  if (!url || SCHEME.test(url) || url.startsWith('/') || url.startsWith('#')) return page;
  const { path } = splitUrl(url);
  const files = new Map((await reader.files()).map((f) => [f.name, f.id]));
  for (const dir of [directory, '.']) {
    const target = posix.normalize(posix.join(dir, decode(path)));
    const asset = target.lastIndexOf(ASSETS);
    const id = asset >= 0 && !target.startsWith('..') ? files.get(target.slice(asset + ASSETS.length)) : undefined;
    if (id) return { ...page, cover: { ...page.cover!, url: `/files/${id}` } };
  }
  return page;
}

/** A stored cover (`/files/<id>`) as the path of its file relative to `directory`, unencoded as GitBook writes front matter. */
export async function relativeCover<T extends { cover?: { url: string } }>(reader: ContentReader, metadata: T, directory: string): Promise<T> {
  const id = metadata.cover ? STORED_FILE.exec(metadata.cover.url)?.[1] : undefined;
  const file = id ? await reader.file(id) : undefined;
  if (!file) return metadata;
  const path = posix.relative(directory === '.' ? '' : directory, ASSETS + file.name) || file.name;
  return { ...metadata, cover: { ...metadata.cover!, url: path } };
}
