import { posix } from 'node:path';
import { parseExpressionAt, type Expression, type Node } from 'acorn';
import { parse as parseYaml } from 'yaml';
import { splitFrontMatter, type Warn } from '../markdown.ts';
import { folderNav, isIndex, isMarkdown, join, titleOf, type NavItem, type Project, type SourceTree } from './nav.ts';

/**
 * A Docusaurus project: its sidebars (sidebars.js / sidebars.ts, read as data: the file is
 * parsed, never run), `_category_.json`/`_category_.yml` and front matter `sidebar_position`,
 * `sidebar_label`, `title`, `id` make the navigation.
 */

export function findDocusaurus(files: SourceTree): string | undefined {
  const roots = [...files.keys()]
    .filter((p) => /(^|\/)(sidebars\.(js|ts|cjs|mjs|json)|docusaurus\.config\.(js|ts|mjs|cjs))$/.test(p))
    .map((p) => posix.dirname(p).replace(/^\.$/, ''));
  if (roots.length) return roots.sort((a, b) => a.length - b.length)[0];
  if ([...files.keys()].some((p) => /(^|\/)_category_\.(json|ya?ml)$/.test(p))) return '';
  return undefined;
}

interface DocInfo {
  path: string;
  id: string;
  data: Record<string, unknown>;
}

const stripNumber = (name: string) => name.replace(/^\d+[-_.]/, '');

/** Every doc of the docs folder by id (folder + front matter `id` or file stem, number prefixes stripped). */
function docsById(files: SourceTree, docsDir: string): Map<string, DocInfo> {
  const out = new Map<string, DocInfo>();
  for (const [path, bytes] of files) {
    if (!isMarkdown(path) || (docsDir && !path.startsWith(`${docsDir}/`))) continue;
    const rel = docsDir ? path.slice(docsDir.length + 1) : path;
    const { data } = splitFrontMatter(bytes.toString('utf8'), () => {});
    const dir = posix.dirname(rel) === '.' ? '' : posix.dirname(rel).split('/').map(stripNumber).join('/');
    const stem = posix.basename(rel).replace(/\.(md|mdx|markdown)$/i, '');
    const id = typeof data.id === 'string' ? data.id : stripNumber(stem);
    const info = { path, id: dir ? `${dir}/${id}` : id, data };
    out.set(info.id, info);
    // Links and sidebars also name a doc by its file path.
    const raw = rel.replace(/\.(md|mdx|markdown)$/i, '');
    if (!out.has(raw)) out.set(raw, info);
  }
  return out;
}

function category(files: SourceTree, dir: string): { label?: string; position?: number; link?: unknown } {
  for (const name of ['_category_.json', '_category_.yml', '_category_.yaml']) {
    const bytes = files.get(join(dir, name));
    if (!bytes) continue;
    try {
      const data = name.endsWith('.json') ? JSON.parse(bytes.toString('utf8')) : parseYaml(bytes.toString('utf8'));
      if (data && typeof data === 'object') return data as { label?: string; position?: number; link?: unknown };
    } catch {
      // An unreadable category file: the folder's name serves.
    }
  }
  return {};
}

/** Literal values of an expression (objects, arrays, strings, numbers, booleans); undefined for the rest. */
function literal(node: Node | null | undefined, warn: Warn): unknown {
  if (!node) return undefined;
  const n = node as Expression;
  switch (n.type) {
    case 'Literal':
      return n.value;
    case 'TemplateLiteral':
      return n.expressions.length ? undefined : n.quasis.map((q) => q.value.cooked).join('');
    case 'ArrayExpression':
      return n.elements.map((e) => (e && e.type !== 'SpreadElement' ? literal(e, warn) : undefined)).filter((v) => v !== undefined);
    case 'ObjectExpression': {
      const out: Record<string, unknown> = {};
      for (const p of n.properties) {
        if (p.type !== 'Property' || p.computed) continue;
        const key = p.key.type === 'Identifier' ? p.key.name : p.key.type === 'Literal' ? String(p.key.value) : undefined;
        if (key !== undefined) out[key] = literal(p.value, warn);
      }
      return out;
    }
    case 'TSAsExpression' as string:
    case 'TSSatisfiesExpression' as string:
      return literal((n as unknown as { expression: Node }).expression, warn);
    default:
      warn(`sidebars: a ${n.type} is not plain data and was skipped`);
      return undefined;
  }
}

/** The sidebars object of sidebars.js/ts (read from its text: the file is never run) or sidebars.json. */
export function readSidebars(text: string, warn: Warn, json = false): Record<string, unknown> | undefined {
  if (json) {
    try {
      const value = JSON.parse(text) as unknown;
      if (value && typeof value === 'object' && !Array.isArray(value)) return value as Record<string, unknown>;
      warn('sidebars.json does not hold an object: the folder structure is used instead');
    } catch (err) {
      warn(`sidebars.json cannot be read (${(err as Error).message}): the folder structure is used instead`);
    }
    return undefined;
  }
  const starts = [/\bmodule\.exports\s*=\s*/g, /\bexport\s+default\s+/g, /\bconst\s+sidebars\s*(?::[^=]+)?=\s*/g];
  for (const re of starts) {
    for (const m of text.matchAll(re)) {
      const at = m.index! + m[0].length;
      if (text[at] !== '{') continue;
      try {
        const node = parseExpressionAt(text, at, { ecmaVersion: 'latest', sourceType: 'module' });
        const value = literal(node, warn);
        if (value && typeof value === 'object' && !Array.isArray(value)) return value as Record<string, unknown>;
      } catch (err) {
        warn(`sidebars: cannot be read (${(err as Error).message}): the folder structure is used instead`);
        return undefined;
      }
    }
  }
  warn('sidebars: no object literal found (module.exports = { … } or export default { … }): the folder structure is used instead');
  return undefined;
}

/** The text between the braces of the first `{ … }` that `re` ends at (braces balanced, strings not looked into). */
function objectAfter(text: string, re: RegExp): string | undefined {
  const m = re.exec(text);
  if (!m) return undefined;
  let depth = 0;
  for (let i = m.index + m[0].length - 1; i < text.length; i++) {
    if (text[i] === '{') depth++;
    else if (text[i] === '}' && --depth === 0) return text.slice(m.index + m[0].length, i);
  }
  return undefined;
}

/**
 * The docs plugin's options in docusaurus.config.* that the import needs (`path`: the docs
 * folder, often `../docs` beside the website folder; `routeBasePath`), read from the text as
 * literals (the file is never run). Undefined fields were not found or were not plain strings.
 */
export function docsOptions(config: string): { path?: string; routeBasePath?: string } {
  const docs = objectAfter(config, /\bdocs\s*:\s*\(?\s*\{/g);
  if (docs === undefined) return {};
  // Only the options object's own fields: nested objects (remark plugins, editUrl functions…) blanked.
  let own = '';
  let depth = 0;
  for (const ch of docs) {
    if (ch === '{' || ch === '(' || ch === '[') depth++;
    else if (ch === '}' || ch === ')' || ch === ']') depth--;
    else if (depth === 0) own += ch;
  }
  const str = (name: string) => new RegExp(`(?:^|[\\s,{])${name}\\s*:\\s*(?:'([^']*)'|"([^"]*)"|\`([^\`$]*)\`)`).exec(own);
  const path = str('path');
  const base = str('routeBasePath');
  return {
    ...(path ? { path: path[1] ?? path[2] ?? path[3] } : {}),
    ...(base ? { routeBasePath: base[1] ?? base[2] ?? base[3] } : {}),
  };
}

export function docusaurusProject(files: SourceTree, root: string, warn: Warn): Project {
  const hasDocs = (d: string) => !d.startsWith('..') && [...files.keys()].some((p) => p.startsWith(d ? `${d}/` : '') && isMarkdown(p));
  const configFile = [...files.keys()].find((p) => posix.dirname(p).replace(/^\.$/, '') === root && /^docusaurus\.config\.(js|ts|mjs|cjs)$/.test(posix.basename(p)));
  const options = configFile ? docsOptions(files.get(configFile)!.toString('utf8')) : {};
  const configured = options.path !== undefined ? posix.normalize(posix.join(root || '.', options.path)).replace(/^\.\/?$/, '').replace(/\/$/, '') : undefined;
  if (configured !== undefined && !hasDocs(configured)) warn(`docusaurus.config: the docs folder "${options.path}" is not in the files: looking for docs/ instead`);
  // The configured folder, else docs/ beside the configuration, else docs/ one level up (a website/ folder beside docs/), else the root.
  const docsDir = [configured, join(root, 'docs'), root ? join(posix.dirname(root).replace(/^\.$/, ''), 'docs') : undefined, root].find((d): d is string => d !== undefined && hasDocs(d))!;
  const docs = docsById(files, docsDir);
  const byPath = new Map([...docs.values()].map((d) => [d.path, d]));
  const str = (v: unknown) => (typeof v === 'string' ? v : undefined);
  const label = (d: DocInfo | undefined) => (d ? (str(d.data.sidebar_label) ?? undefined) : undefined);

  // The folder structure with Docusaurus's order: sidebar_position, then _category_ position, then name.
  const autogenerated = (dir: string, depth: number) =>
    folderNav(files, dir, depth, {
      order: (entries) =>
        entries
          .map((e) => {
            if (e.dir) {
              const c = category(files, e.path);
              return { ...e, ...(c.label ? { title: c.label } : {}), pos: typeof c.position === 'number' ? c.position : Infinity };
            }
            const d = byPath.get(e.path);
            const pos = d && typeof d.data.sidebar_position === 'number' ? d.data.sidebar_position : Infinity;
            return { ...e, ...(label(d) ? { title: label(d)! } : {}), pos };
          })
          .sort((a, b) => a.pos - b.pos || (stripNumber(posix.basename(a.path)) < stripNumber(posix.basename(b.path)) ? -1 : 1)),
    });

  const sidebarFile = [...files.keys()].find((p) => posix.dirname(p).replace(/^\.$/, '') === root && /^sidebars\.(js|ts|cjs|mjs|json)$/.test(posix.basename(p)));
  const sidebars = sidebarFile ? readSidebars(files.get(sidebarFile)!.toString('utf8'), warn, sidebarFile.endsWith('.json')) : undefined;
  if (!sidebars) return { kind: 'docusaurus', dialect: 'docusaurus', docsDir, rootDir: root, nav: autogenerated(docsDir, 0), resolveRoute: routeResolver(docs, options.routeBasePath ?? 'docs') };

  const resolveRoute = routeResolver(docs, options.routeBasePath ?? 'docs');
  const docItem = (id: string, title?: string): NavItem | undefined => {
    const d = docs.get(id);
    if (!d) {
      warn(`sidebars: doc "${id}" not found`);
      return undefined;
    }
    const t = title ?? label(d);
    return { kind: 'page', path: d.path, ...(t ? { title: t } : {}), children: [] };
  };
  const items = (list: unknown, depth: number): NavItem[] => {
    if (list && typeof list === 'object' && !Array.isArray(list)) {
      // Shorthand: { "Category": [ … ] }.
      return Object.entries(list as Record<string, unknown>).flatMap(([title, sub]) => itemOf({ type: 'category', label: title, items: sub }, depth));
    }
    return Array.isArray(list) ? list.flatMap((i) => itemOf(i, depth)) : [];
  };
  const itemOf = (raw: unknown, depth: number): NavItem[] => {
    if (typeof raw === 'string') return [docItem(raw)].filter((x): x is NavItem => !!x);
    if (!raw || typeof raw !== 'object') return [];
    const o = raw as Record<string, unknown>;
    switch (o.type) {
      case 'doc':
      case 'ref':
        return [docItem(String(o.id), str(o.label))].filter((x): x is NavItem => !!x);
      case 'link':
        return str(o.href) ? [{ kind: 'link', title: str(o.label) ?? String(o.href), href: String(o.href) }] : [];
      case 'autogenerated':
        return autogenerated(join(docsDir, str(o.dirName) ?? '.'), depth);
      case 'html':
        warn('sidebars: an html item was skipped');
        return [];
      case 'category': {
        const title = str(o.label) ?? 'Category';
        const children = items(o.items, depth + 1);
        const link = o.link as Record<string, unknown> | undefined;
        const linked = link && link.type === 'doc' && str(link.id) ? docs.get(String(link.id)) : undefined;
        if (linked) return [{ kind: 'page', path: linked.path, title, children: children.filter((c) => !(c.kind === 'page' && c.path === linked.path)) }];
        return [depth === 0 ? { kind: 'group', title, children } : { kind: 'page', title, children }];
      }
      default:
        if (!o.type) return items(o, depth); // a nested shorthand object
        warn(`sidebars: item type "${String(o.type)}" was skipped`);
        return [];
    }
  };
  const names = Object.keys(sidebars);
  const nav = names.length === 1 ? items(sidebars[names[0]!], 0) : names.map((n): NavItem => ({ kind: 'group', title: titleOf(n.replace(/Sidebar$/, '')), children: items(sidebars[n], 1) }));
  // A group inside a group is not possible: nested top-level groups of several sidebars become pages.
  for (const g of nav) if (g.kind === 'group') g.children = g.children.map((c) => (c.kind === 'group' ? { kind: 'page', title: c.title, children: c.children } : c));
  return { kind: 'docusaurus', dialect: 'docusaurus', docsDir, rootDir: root, nav, resolveRoute };
}

/**
 * Links written as the site's routes: each doc is served at `/<routeBasePath>/<id>` (an `index` or
 * `README` doc at its folder's route, a front matter `slug` where it has one), and a relative link
 * resolves against the page's route as a browser would.
 */
function routeResolver(docs: Map<string, DocInfo>, routeBasePath: string): (from: string, target: string) => string | undefined {
  const base = `/${routeBasePath.replace(/^\/+|\/+$/g, '')}`.replace(/\/$/, '');
  const routes = new Map<string, string>(); // route (lower case, no trailing slash) → file
  const routeOf = new Map<string, string>(); // file → route
  for (const d of new Set(docs.values())) {
    const dir = posix.dirname(d.id) === '.' ? '' : posix.dirname(d.id);
    let route = `${base}/${d.id.replace(/(^|\/)(index|readme)$/i, '')}`.replace(/\/$/, '') || '/';
    const slug = typeof d.data.slug === 'string' ? d.data.slug : undefined;
    if (slug) route = (slug.startsWith('/') ? `${base}${slug}` : `${base}/${dir ? `${dir}/` : ''}${slug}`).replace(/\/$/, '') || '/';
    routeOf.set(d.path, route);
    if (!routes.has(route.toLowerCase())) routes.set(route.toLowerCase(), d.path);
    const plain = `${base}/${d.id}`.toLowerCase();
    if (!routes.has(plain)) routes.set(plain, d.path);
  }
  return (from, target) => {
    const path = target.split(/[?#]/)[0]!;
    if (!path || /\.(md|mdx)$/i.test(path)) return undefined;
    const current = routeOf.get(from) ?? base;
    const abs = posix.normalize(path.startsWith('/') ? path : posix.join(posix.dirname(current), path)).replace(/\/$/, '') || '/';
    return routes.get(abs.toLowerCase());
  };
}

export { isIndex };
