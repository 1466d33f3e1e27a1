import { posix } from 'node:path';
import type { HtmlExport } from '../html-export.ts';
import { resolveExportHref } from '../html-export.ts';
import type { HtmlToMarkdownOptions, HtmlToMarkdownResult } from '../html.ts';
import type { Warn } from '../markdown.ts';
import type { NavItem, Project, SourceTree } from './nav.ts';

/**
 * An HTML export (Notion, Confluence, a folder of HTML files, one HTML file) as a source tree and
 * a project: each page a GitBook Markdown file at the place its hierarchy gives it (a page with
 * pages below it is that folder's README.md), the export's order and nesting the navigation.
 * Links between pages point at their files and images at the export's files (kept in the tree
 * at their own paths), so the virtual repository turns them into page references and space files.
 */

type Convert = (html: string, opts: HtmlToMarkdownOptions) => HtmlToMarkdownResult;

/** A relative path as a link target that buildVirtualRepo reads back (decodeURI). */
const encodeTarget = (path: string) => encodeURI(path);

export function htmlExportProject(files: SourceTree, read: HtmlExport, convert: Convert, warn: Warn): { tree: SourceTree; project: Project; sources: Map<string, string> } {
  const key = (path: string[]) => path.join('/');
  const hasChildren = new Set<string>();
  for (const p of read.pages) for (let i = 1; i < p.path.length; i++) hasChildren.add(key(p.path.slice(0, i)));
  const fileOf = new Map<string, string>(); // page key → Markdown file
  const fileOfSource = new Map<string, string>(); // export file → Markdown file
  for (const p of read.pages) {
    const k = key(p.path);
    if (fileOf.has(k)) continue;
    const file = hasChildren.has(k) ? `${k}/README.md` : `${k}.md`;
    fileOf.set(k, file);
    if (p.sourcePath) fileOfSource.set(p.sourcePath, file);
  }
  const tree: SourceTree = new Map();
  // The export's other files (images, attachments) stay where they are: pages link to them.
  for (const [path, data] of files) if (!/\.html?$/i.test(path)) tree.set(path, data);
  const sources = new Map<string, string>();
  const items = new Map<string, NavItem & { kind: 'page' }>();
  const nav: NavItem[] = [];
  for (const p of read.pages) {
    const k = key(p.path);
    const file = fileOf.get(k)!;
    if (tree.has(file)) continue;
    const dir = posix.dirname(file) === '.' ? '' : posix.dirname(file);
    const from = (target: string) => encodeTarget(posix.relative(dir || '.', target) || posix.basename(target));
    const converted = convert(p.html, {
      rewriteAsset: (src) => {
        if (!p.sourcePath) return src;
        const found = resolveExportHref(p.sourcePath, src);
        if (found && files.has(found.path)) return from(found.path);
        if (found && !/^[a-z][a-z0-9+.-]*:/i.test(src)) warn(`${p.sourcePath}: the image "${src}" is not in the export`);
        return src;
      },
      rewriteLink: (href) => {
        if (!p.sourcePath) return href;
        const found = resolveExportHref(p.sourcePath, href);
        if (!found) return href;
        const page = fileOfSource.get(found.path);
        if (page) return from(page) + (found.anchor ? `#${found.anchor}` : '');
        if (files.has(found.path) && !/\.html?$/i.test(found.path)) return from(found.path);
        return href;
      },
    });
    for (const w of converted.warnings) warn(`${p.sourcePath || file}: ${w}`);
    const title = (converted.title ?? p.title).replace(/\s+/g, ' ').trim() || p.title;
    tree.set(file, Buffer.from(`# ${title}\n\n${converted.markdown}`));
    sources.set(file, p.sourcePath || file);
    const item: NavItem & { kind: 'page' } = { kind: 'page', path: file, children: [] };
    items.set(k, item);
    let parent: (NavItem & { kind: 'page' }) | undefined;
    for (let i = p.path.length - 1; i > 0 && !parent; i--) parent = items.get(key(p.path.slice(0, i)));
    (parent ? parent.children : nav).push(item);
  }
  return { tree, sources, project: { kind: read.kind, dialect: 'gitbook', docsDir: '', rootDir: '', nav } };
}
