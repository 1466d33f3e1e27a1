import { posix } from 'node:path';
import type { Warn } from '../markdown.ts';

/**
 * The navigation of a recognised project, before it becomes SUMMARY.md: pages (a source file, or
 * none for a section without a page of its own), groups (top level only in GitBook) and links.
 */
export type NavItem =
  | { kind: 'page'; path?: string; title?: string; children: NavItem[] }
  | { kind: 'group'; title: string; children: NavItem[] }
  | { kind: 'link'; title: string; href: string };

/** How a project's Markdown is read: its tool's idioms, plain Markdown (both tools' idioms tried), or GitBook Markdown already (converted HTML). */
export type Dialect = 'docusaurus' | 'mkdocs' | 'plain' | 'gitbook';

export interface Project {
  kind: 'docusaurus' | 'mkdocs' | 'folder' | 'website' | 'notion' | 'confluence' | 'html';
  dialect: Dialect;
  /** The folder holding the pages (paths of the nav are relative to the source tree's root). */
  docsDir: string;
  /** The project's root (where its configuration is): root-absolute links resolve under it too. */
  rootDir: string;
  nav: NavItem[];
  /**
   * The page file a link written as a site route leads to (Docusaurus: `/docs/<id>`, `other-doc#x`
   * relative to the page's route, front matter `slug`), when plain file paths found none.
   */
  resolveRoute?: (from: string, target: string) => string | undefined;
}

/** The source files: paths relative to the import's root, bytes. */
export type SourceTree = Map<string, Buffer>;

export const isMarkdown = (path: string) => /\.(md|mdx|markdown)$/i.test(path);

export const join = (dir: string, path: string) => (dir ? posix.join(dir, path) : posix.normalize(path)).replace(/^\.\/?/, '');

/** A folder name or file stem as a title: "getting-started" → "Getting started". */
export function titleOf(name: string): string {
  const words = name.replace(/\.(md|mdx|markdown)$/i, '').replace(/^\d+[-_.\s]+/, '').replace(/[-_]+/g, ' ').trim();
  return words ? words.charAt(0).toUpperCase() + words.slice(1) : name;
}

/** Markdown files and folders directly under `dir`. */
export function listDir(files: Iterable<string>, dir: string): { files: string[]; dirs: string[] } {
  const prefix = dir ? `${dir}/` : '';
  const out = new Set<string>();
  const dirs = new Set<string>();
  for (const f of files) {
    if (!f.startsWith(prefix)) continue;
    const rest = f.slice(prefix.length);
    const slash = rest.indexOf('/');
    if (slash < 0) out.add(f);
    else dirs.add(prefix + rest.slice(0, slash));
  }
  return { files: [...out].sort(), dirs: [...dirs].sort() };
}

const INDEX = /^(readme|index)\.(md|mdx|markdown)$/i;
export const isIndex = (path: string) => INDEX.test(posix.basename(path));

/** The folder's own page (README.md before index.md), if it has one. */
export function indexOf(files: string[]): string | undefined {
  return files.find((f) => /^readme\./i.test(posix.basename(f)) && isMarkdown(f)) ?? files.find((f) => isIndex(f) && isMarkdown(f));
}

/** Hidden and tool folders that hold no pages. */
export const skippedDir = (dir: string) => /(^|\/)(\.|_|node_modules($|\/))/.test(dir) && !/(^|\/)_category_/.test(dir);

/**
 * A plain folder's navigation: files in name order, each folder's README.md/index.md as its page,
 * other folders nested below it. `order` may reorder a folder's entries (Docusaurus positions).
 */
export function folderNav(
  files: SourceTree,
  dir: string,
  depth: number,
  opts: { order?: (entries: { path: string; dir: boolean }[]) => { path: string; dir: boolean; title?: string }[]; warn?: Warn } = {},
): NavItem[] {
  const names = [...files.keys()];
  const listing = listDir(names, dir);
  const md = listing.files.filter(isMarkdown);
  const own = depth > 0 ? indexOf(md) : undefined;
  let entries: { path: string; dir: boolean; title?: string }[] = [
    ...md.filter((f) => f !== own).map((path) => ({ path, dir: false })),
    ...listing.dirs.filter((d) => !skippedDir(posix.basename(d)) && names.some((n) => n.startsWith(`${d}/`) && isMarkdown(n))).map((path) => ({ path, dir: true })),
  ];
  if (opts.order) entries = opts.order(entries);
  else entries.sort((a, b) => (a.path < b.path ? -1 : 1));
  // At the top, the root's README/index comes first.
  if (depth === 0) {
    const top = indexOf(md);
    if (top) entries = [{ path: top, dir: false }, ...entries.filter((e) => e.path !== top)];
  }
  const items: NavItem[] = [];
  for (const e of entries) {
    if (!e.dir) {
      items.push({ kind: 'page', path: e.path, ...(e.title ? { title: e.title } : {}), children: [] });
      continue;
    }
    const sub = folderNav(files, e.path, depth + 1, opts);
    const subFiles = listDir(names, e.path).files.filter(isMarkdown);
    const page = indexOf(subFiles);
    const title = e.title ?? titleOf(posix.basename(e.path));
    if (page) items.push({ kind: 'page', path: page, ...(e.title ? { title: e.title } : {}), children: sub });
    else if (depth === 0) items.push({ kind: 'group', title, children: sub });
    else items.push({ kind: 'page', title, children: sub });
  }
  return items;
}
