import { posix } from 'node:path';
import { parseHTML } from 'linkedom';
import { slugify } from '../content/model.ts';

/**
 * Recognises an HTML export (a folder of `.html` files) and reads its pages and their hierarchy:
 *
 * - Notion: files named `Title <32 hex id>.html`, each page's children in a folder of the same
 *   name beside it (`Title <id>/Child <id>.html`); children in the order the parent links to them.
 * - Confluence: `index.html` lists the space's page tree as nested `<ul><li><a href="Title_12345.html">`,
 *   the pages being `Title_12345.html` (title "Space : Title", content in `#main-content`).
 * - Any other folder of HTML files: folders become parents, `index.html` the folder's own page.
 *
 * Each page's `html` is its content only (`<article><h1>title</h1>…</article>`, without the
 * export's headers, breadcrumbs and attachment lists), ready for htmlToGitbookMarkdown. Links and
 * image sources in it stay relative to `sourcePath`, as in the export. `path` is the page's place
 * in the hierarchy: the slugs of its ancestors' titles and its own (unique among siblings).
 */

export interface ExportPage {
  path: string[];
  title: string;
  html: string;
  sourcePath: string;
}

export interface HtmlExport {
  kind: 'notion' | 'confluence' | 'html';
  pages: ExportPage[];
  warnings: string[];
}

const NOTION_FILE = /^(.*?) ?([0-9a-f]{32})\.html$/i;
const CONFLUENCE_FILE = /_(\d+)\.html$/i;

interface Node {
  sourcePath: string;
  title: string;
  html: string;
  children: Node[];
}

function decodePath(href: string): string {
  try {
    return decodeURIComponent(href);
  } catch {
    return href;
  }
}

function normalize(path: string): string {
  return posix.normalize(path.replace(/\\/g, '/')).replace(/^(\.\/)+/, '').replace(/^\/+/, '');
}

function isHtmlFile(path: string): boolean {
  return /\.html?$/i.test(path) && !posix.basename(path).startsWith('.');
}

function text(el: Element | null | undefined): string {
  return (el?.textContent ?? '').replace(/\s+/g, ' ').trim();
}

function article(title: string, body: string): string {
  return `<!doctype html><html><head><title>${escapeHtml(title)}</title></head><body><article><h1>${escapeHtml(title)}</h1>${body}</article></body></html>`;
}

function escapeHtml(s: string): string {
  return s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');
}

/** Relative hrefs of a page that point at .html files, resolved against its folder, in document order. */
function linkedFiles(document: Document, sourcePath: string): string[] {
  const dir = posix.dirname(sourcePath);
  const out: string[] = [];
  for (const a of Array.from(document.querySelectorAll('a[href]'))) {
    const href = a.getAttribute('href')!.split('#')[0]!.split('?')[0]!;
    if (!href || /^[a-z][a-z0-9+.-]*:/i.test(href) || href.startsWith('/')) continue;
    const target = normalize(posix.join(dir, decodePath(href)));
    if (!out.includes(target)) out.push(target);
  }
  return out;
}

/**
 * The file an export page's link points at, as a path of the export (`sourcePath` form), or
 * undefined for links out of the export (URLs, absolute paths). With the pages' sourcePaths, the
 * framework points links at the imported pages (htmlToGitbookMarkdown's rewriteLink).
 */
export function resolveExportHref(fromSourcePath: string, href: string): { path: string; anchor?: string } | undefined {
  const [target, anchor] = href.split('#', 2) as [string, string | undefined];
  const file = target.split('?')[0]!;
  if (/^[a-z][a-z0-9+.-]*:/i.test(href) || href.startsWith('/') || href.startsWith('//')) return undefined;
  const path = file === '' ? normalize(fromSourcePath) : normalize(posix.join(posix.dirname(fromSourcePath), decodePath(file)));
  if (path.startsWith('../') || path === '..') return undefined;
  return anchor ? { path, anchor } : { path };
}

/** Flattens a tree into pages, each with the slugs of its ancestors' titles and its own. */
function flatten(nodes: Node[], parent: string[], out: ExportPage[]): void {
  const used = new Set<string>();
  for (const node of nodes) {
    const base = slugify(node.title) || 'page';
    let slug = base;
    for (let n = 2; used.has(slug); n++) slug = `${base}-${n}`;
    used.add(slug);
    const path = [...parent, slug];
    out.push({ path, title: node.title, html: node.html, sourcePath: node.sourcePath });
    flatten(node.children, path, out);
  }
}

export function readHtmlExport(files: Map<string, Buffer>): HtmlExport | null {
  const htmlFiles = new Map<string, string>();
  for (const [path, data] of files) {
    const p = normalize(path);
    if (p.startsWith('../') || p.includes('/../') || p === '..') continue;
    if (isHtmlFile(p) && !p.split('/').some((s) => s === '__MACOSX')) htmlFiles.set(p, data.toString('utf8'));
  }
  if (htmlFiles.size === 0) return null;
  const names = [...htmlFiles.keys()];
  if (names.some((p) => NOTION_FILE.test(posix.basename(p)))) return readNotion(htmlFiles);
  const index = names.filter((p) => posix.basename(p).toLowerCase() === 'index.html').sort((a, b) => a.length - b.length)[0];
  if (index && names.some((p) => CONFLUENCE_FILE.test(p)) && /confluence|Available Pages/i.test(htmlFiles.get(index)!)) return readConfluence(htmlFiles, index);
  return readPlain(htmlFiles);
}

function readNotion(htmlFiles: Map<string, string>): HtmlExport {
  const warnings: string[] = [];
  const nodes = new Map<string, Node>();
  const links = new Map<string, string[]>();
  for (const [path, html] of htmlFiles) {
    const m = NOTION_FILE.exec(posix.basename(path));
    if (!m) {
      if (posix.basename(path).toLowerCase() !== 'index.html') warnings.push(`${path} is not a Notion page (no page id in its name) and was left out`);
      continue;
    }
    const { document } = parseHTML(html);
    const title = text(document.querySelector('.page-title')) || text(document.querySelector('title')) || m[1]!.trim() || 'Untitled';
    const body = document.querySelector('.page-body') ?? document.querySelector('article') ?? document.body;
    // The page's header (title, cover, properties table) is not content.
    body?.querySelector('header')?.remove();
    nodes.set(path, { sourcePath: path, title, html: article(title, body?.innerHTML ?? ''), children: [] });
    links.set(path, linkedFiles(document, path));
  }
  // A page's parent is the page whose name is the page's folder ("Parent <id>/Child <id>.html").
  const roots: Node[] = [];
  const childrenOf = new Map<string, string[]>();
  for (const path of nodes.keys()) {
    const dir = posix.dirname(path);
    const parent = dir === '.' ? undefined : `${dir}.html`;
    if (parent && nodes.has(parent)) childrenOf.set(parent, [...(childrenOf.get(parent) ?? []), path]);
    else roots.push(nodes.get(path)!);
  }
  for (const [parent, children] of childrenOf) {
    // In the order the parent page links to them, then by title.
    const order = links.get(parent) ?? [];
    const rank = (p: string) => (order.includes(p) ? order.indexOf(p) : Number.MAX_SAFE_INTEGER);
    children.sort((a, b) => rank(a) - rank(b) || nodes.get(a)!.title.localeCompare(nodes.get(b)!.title));
    nodes.get(parent)!.children = children.map((c) => nodes.get(c)!);
  }
  roots.sort((a, b) => a.title.localeCompare(b.title));
  const pages: ExportPage[] = [];
  flatten(roots, [], pages);
  return { kind: 'notion', pages, warnings };
}

function readConfluence(htmlFiles: Map<string, string>, index: string): HtmlExport {
  const warnings: string[] = [];
  const dir = posix.dirname(index);
  const { document: indexDoc } = parseHTML(htmlFiles.get(index)!);
  const placed = new Set<string>();
  const page = (path: string): Node | undefined => {
    const html = htmlFiles.get(path);
    if (html === undefined) return undefined;
    const { document } = parseHTML(html);
    let title = text(document.querySelector('#title-text')) || text(document.querySelector('h1')) || text(document.querySelector('title'));
    // "Space : Page" → "Page"
    const colon = /^.+? : (.+)$/.exec(title);
    if (colon) title = colon[1]!;
    title ||= posix.basename(path).replace(CONFLUENCE_FILE, '').replace(/[_-]+/g, ' ');
    const body = document.querySelector('#main-content') ?? document.querySelector('.wiki-content') ?? document.querySelector('#content') ?? document.body;
    return { sourcePath: path, title, html: article(title, body?.innerHTML ?? ''), children: [] };
  };
  // The page tree: nested lists of links to pages.
  const walk = (list: Element): Node[] => {
    const out: Node[] = [];
    for (const li of Array.from(list.childNodes).filter((n): n is Element => n.nodeType === 1 && (n as Element).tagName.toLowerCase() === 'li')) {
      const a = Array.from(li.childNodes).find((n): n is Element => n.nodeType === 1 && (n as Element).tagName.toLowerCase() === 'a') ?? li.querySelector('a[href]');
      const href = a?.getAttribute('href');
      const path = href ? normalize(posix.join(dir, decodePath(href.split('#')[0]!))) : undefined;
      const sub = Array.from(li.childNodes).find((n): n is Element => n.nodeType === 1 && /^(ul|ol)$/i.test((n as Element).tagName));
      const node = path && !placed.has(path) ? page(path) : undefined;
      if (path && !node && !placed.has(path)) warnings.push(`the page tree links to ${path}, which is not in the export`);
      if (node) {
        placed.add(path!);
        if (sub) node.children = walk(sub);
        out.push(node);
      } else if (sub) out.push(...walk(sub));
    }
    return out;
  };
  // The tree is the outermost list whose links go to pages (the "Available Pages" section).
  const lists = Array.from(indexDoc.querySelectorAll('ul, ol')).filter((l) => !l.parentElement?.closest('ul, ol'));
  const tree = lists.find((l) => Array.from(l.querySelectorAll('a[href]')).some((a) => CONFLUENCE_FILE.test(a.getAttribute('href') ?? '')));
  const roots = tree ? walk(tree) : [];
  // Pages the tree does not list (orphans) come after it.
  for (const path of [...htmlFiles.keys()].sort()) {
    if (path === index || placed.has(path) || !CONFLUENCE_FILE.test(path)) continue;
    const node = page(path)!;
    placed.add(path);
    roots.push(node);
    warnings.push(`${path} is not in the export's page tree: it was imported at the top level`);
  }
  const pages: ExportPage[] = [];
  flatten(roots, [], pages);
  return { kind: 'confluence', pages, warnings };
}

function readPlain(htmlFiles: Map<string, string>): HtmlExport {
  // Folders become parents: "guide/index.html" is the page of "guide", "guide/a.html" its child.
  const root: Node = { sourcePath: '', title: '', html: '', children: [] };
  const folders = new Map<string, Node>([['.', root]]);
  const folderNode = (dir: string): Node => {
    const known = folders.get(dir);
    if (known) return known;
    const parent = folderNode(posix.dirname(dir));
    const node: Node = { sourcePath: '', title: posix.basename(dir), html: '', children: [] };
    parent.children.push(node);
    folders.set(dir, node);
    return node;
  };
  const paths = [...htmlFiles.keys()].sort((a, b) => a.localeCompare(b));
  const pageOf = (path: string) => {
    const { document } = parseHTML(htmlFiles.get(path)!);
    const title = text(document.querySelector('h1')) || text(document.querySelector('title')) || posix.basename(path).replace(/\.html?$/i, '');
    return { title, html: htmlFiles.get(path)! };
  };
  for (const path of paths) {
    const dir = posix.dirname(path);
    const isIndex = /^index\.html?$/i.test(posix.basename(path));
    if (isIndex) {
      const node = folderNode(dir);
      Object.assign(node, { sourcePath: path, ...pageOf(path) });
    } else folderNode(dir).children.push({ sourcePath: path, ...pageOf(path), children: [] });
  }
  const pages: ExportPage[] = [];
  // The top folder's index is a page like the others, first.
  const top: Node[] = root.sourcePath ? [{ ...root, children: [] }, ...root.children] : root.children;
  flatten(top, [], pages);
  // Folders without an index.html are pages without content: the framework may make them groups.
  return { kind: 'html', pages: pages.map((p) => (p.sourcePath ? p : { ...p, html: article(p.title, '') })), warnings: [] };
}
