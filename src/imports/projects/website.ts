import { join as joinPath } from 'node:path/posix';
import { rewriteTargets } from '../virtual-build.ts';
import type { Warn } from '../markdown.ts';
import type { NavItem, Project, SourceTree } from './nav.ts';

/**
 * A crawled website as a source tree and a project: each page a Markdown file at its path (a page
 * with pages below it is that folder's README.md), the crawl's order and nesting the navigation,
 * links between crawled pages rewritten to their files. The HTML → Markdown conversion is given
 * (src/imports/html.ts once wired), so this module depends on no converter.
 */

export interface CrawledPage {
  url: string;
  path: string[];
  title: string;
  html: string;
}

export type HtmlToMarkdown = (html: string, opts: { baseUrl?: string }) => { markdown: string; title?: string; warnings: string[]; assets: string[] };

const segment = (s: string) => s.replace(/[^\w.-]+/g, '-').replace(/^[.-]+/, '') || 'page';

export function websiteProject(
  pages: CrawledPage[],
  toMarkdown: HtmlToMarkdown,
  warn: Warn,
): { tree: SourceTree; project: Project; urls: Map<string, string>; assets: Map<string, string[]> } {
  const keyOf = (path: string[]) => path.map(segment).join('/');
  const hasChildren = new Set<string>();
  for (const p of pages) for (let i = 1; i < p.path.length; i++) hasChildren.add(keyOf(p.path.slice(0, i)));
  const fileOf = new Map<string, string>(); // page key → file
  for (const p of pages) {
    const key = keyOf(p.path);
    if (fileOf.has(key)) continue;
    fileOf.set(key, !key ? 'README.md' : hasChildren.has(key) ? `${key}/README.md` : `${key}.md`);
  }
  const byUrl = new Map(pages.map((p) => [p.url.replace(/[#?].*$/, '').replace(/\/$/, ''), fileOf.get(keyOf(p.path))!]));
  const tree: SourceTree = new Map();
  const urls = new Map<string, string>();
  const assets = new Map<string, string[]>();
  const items = new Map<string, NavItem & { kind: 'page' }>();
  const nav: NavItem[] = [];
  for (const p of pages) {
    const key = keyOf(p.path);
    const file = fileOf.get(key)!;
    if (tree.has(file)) continue;
    const converted = toMarkdown(p.html, { baseUrl: p.url });
    for (const w of converted.warnings) warn(`${p.url}: ${w}`);
    const markdown = rewriteTargets(converted.markdown, (target) => {
      let absolute: string;
      try {
        absolute = new URL(target, p.url).toString();
      } catch {
        return undefined;
      }
      const hash = absolute.includes('#') ? absolute.slice(absolute.indexOf('#')) : '';
      const to = byUrl.get(absolute.replace(/[#?].*$/, '').replace(/\/$/, ''));
      if (!to) return undefined;
      const from = file.split('/').slice(0, -1).join('/');
      const rel = joinPath(...(from ? from.split('/').map(() => '..') : []), to);
      return rel + hash;
    });
    const title = converted.title ?? p.title;
    urls.set(file, p.url);
    if (converted.assets.length) assets.set(file, converted.assets);
    tree.set(file, Buffer.from(/^\s*#\s/.test(markdown) ? markdown : `# ${title}\n\n${markdown}`));
    const item: NavItem & { kind: 'page' } = { kind: 'page', path: file, children: [] };
    items.set(key, item);
    // Below the nearest crawled ancestor, else at the top.
    let parent: (NavItem & { kind: 'page' }) | undefined;
    for (let i = p.path.length - 1; i > 0 && !parent; i--) parent = items.get(keyOf(p.path.slice(0, i)));
    (parent ? parent.children : nav).push(item);
  }
  return { tree, urls, assets, project: { kind: 'website', dialect: 'gitbook', docsDir: '', rootDir: '', nav } };
}

/**
 * Points the pages' images at downloaded copies: `stored` maps an image URL to the file holding it
 * in the tree (the virtual repository then makes it a space file). Images not downloaded stay
 * links to the site.
 */
export function attachWebsiteAssets(tree: SourceTree, assets: Map<string, string[]>, stored: Map<string, string>): void {
  for (const [file, urls] of assets) {
    if (!urls.some((u) => stored.has(u))) continue;
    const from = file.split('/').slice(0, -1).join('/');
    const markdown = rewriteTargets(tree.get(file)!.toString('utf8'), (target) => {
      const to = stored.get(target);
      if (!to) return undefined;
      return encodeURI(joinPath(...(from ? from.split('/').map(() => '..') : []), to));
    });
    tree.set(file, Buffer.from(markdown));
  }
}
