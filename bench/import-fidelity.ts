/**
 * Benchmark: how faithfully real projects' documentation is imported. Each project is read from a
 * bare git mirror (as the `fetch` tool leaves them under /work/.mirror/owner+name/…), its docs
 * folder and navigation file zipped the way a person would upload them, imported through
 * generateStorageUploadURL and startImportRun into a new space, and compared with the source:
 *
 * - pages: pages of the source's navigation that were imported (goal 100%);
 * - nav: of those navigation pages, the ones whose chain of parents and previous sibling are the
 *   same after the import (goal 100%);
 * - admonitions, tabs, code blocks: constructs counted in the source (by this file's own reading,
 *   not the importer's) against the blocks of the imported documents (goal ≥ 95% each);
 * - links: links between navigation pages that resolve in the source (by this file's own reading
 *   of the tool's rules) but are not page links after the import (goal 0).
 *
 *   npm run bench:import-fidelity                                  # every known mirror present
 *   npm run bench:import-fidelity -- /work/.mirror/jestjs+jest/repo …   # given mirrors
 *   BENCH_DATABASE_URL=postgres://… npm run bench:import-fidelity
 *   BENCH_VERBOSE=1: the pages that miss, per project
 */
import { execFileSync } from 'node:child_process';
import { existsSync, readdirSync } from 'node:fs';
import { posix } from 'node:path';
import { transformSync } from 'esbuild';
import { zipSync } from 'fflate';
import { parse as parseYaml } from 'yaml';
import { loadConfig } from '../src/platform/config.ts';
import { startServer } from '../src/server.ts';
import { createUser } from '../src/users/service.ts';
import { apiCaller, freshDatabaseConfig } from './support.ts';

const MIRRORS = '/work/.mirror';
const VERBOSE = !!process.env.BENCH_VERBOSE;

// --- Reading a mirror -------------------------------------------------------------------------

type Files = Map<string, Buffer>;

function git(gitDir: string, args: string[]): Buffer {
  return execFileSync('git', ['--git-dir', gitDir, ...args], { maxBuffer: 1 << 30, stdio: ['ignore', 'pipe', 'ignore'] });
}

/** Files of the mirror's HEAD under `paths` (folders or files), by their path in the repository. */
function readMirror(gitDir: string, paths: string[]): Files {
  const out: Files = new Map();
  const listed = git(gitDir, ['ls-tree', '-r', '-z', 'HEAD', '--', ...paths]).toString('utf8').split('\0').filter(Boolean);
  for (const entry of listed) {
    const [meta, path] = entry.split('\t') as [string, string];
    const [mode, type, sha] = meta.split(' ') as [string, string, string];
    if (type !== 'blob' || mode === '120000') continue;
    out.set(path, git(gitDir, ['cat-file', 'blob', sha]));
  }
  return out;
}

const hasPath = (gitDir: string, path: string) => {
  try {
    git(gitDir, ['cat-file', '-e', `HEAD:${path}`]);
    return true;
  } catch {
    return false;
  }
};

interface Source {
  name: string;
  tool: 'docusaurus' | 'mkdocs';
  /** Files uploaded (zipped in one folder named after the project), by path in the repository. */
  files: Files;
  docsDir: string;
  /** Docusaurus: the folder of the sidebars file and configuration. */
  siteDir: string;
  navFile: string;
  routeBase: string;
}

/** The text of the first `{ … }` (braces balanced) that `re` ends at. */
function objectAfter(src: string, re: RegExp): string | undefined {
  const m = re.exec(src);
  if (!m) return undefined;
  let depth = 0;
  for (let i = m.index + m[0].length - 1; i < src.length; i++) {
    if (src[i] === '{') depth++;
    else if (src[i] === '}' && --depth === 0) return src.slice(m.index + m[0].length, i);
  }
  return undefined;
}

/** What a person would zip: the docs folder and the navigation and configuration files beside it. */
function sourceOf(gitDir: string): Source | undefined {
  const name = posix.basename(gitDir.replace(/\/repo\/?$/, '')).replace('+', '/');
  if (hasPath(gitDir, 'mkdocs.yml')) {
    const config = git(gitDir, ['show', 'HEAD:mkdocs.yml']).toString('utf8');
    const docsDir = /^docs_dir:\s*['"]?([^'"\s]+)/m.exec(config)?.[1] ?? 'docs';
    return { name, tool: 'mkdocs', files: readMirror(gitDir, [docsDir, 'mkdocs.yml']), docsDir, siteDir: '', navFile: 'mkdocs.yml', routeBase: '' };
  }
  for (const siteDir of ['website', '']) {
    const navFile = ['sidebars.js', 'sidebars.ts', 'sidebars.json', 'sidebars.cjs', 'sidebars.mjs'].map((f) => (siteDir ? `${siteDir}/${f}` : f)).find((p) => hasPath(gitDir, p));
    if (!navFile) continue;
    const configFile = ['docusaurus.config.js', 'docusaurus.config.ts', 'docusaurus.config.mjs', 'docusaurus.config.cjs'].map((f) => (siteDir ? `${siteDir}/${f}` : f)).find((p) => hasPath(gitDir, p));
    const config = configFile ? git(gitDir, ['show', `HEAD:${configFile}`]).toString('utf8') : '';
    // The docs plugin's options: `docs: { path: '../docs', routeBasePath: '/' … }`.
    const docsOpts = objectAfter(config, /\bdocs\s*:\s*\(?\s*\{/g) ?? '';
    const rel = /\bpath\s*:\s*['"]([^'"]+)['"]/.exec(docsOpts)?.[1] ?? 'docs';
    const docsDir = posix.normalize(posix.join(siteDir || '.', rel)).replace(/^\.$/, '');
    const routeBase = (/\brouteBasePath\s*:\s*['"]([^'"]*)['"]/.exec(docsOpts)?.[1] ?? 'docs').replace(/^\/|\/$/g, '');
    const paths = [docsDir, navFile, ...(configFile ? [configFile] : [])];
    return { name, tool: 'docusaurus', files: readMirror(gitDir, paths), docsDir, siteDir, navFile, routeBase };
  }
  return undefined;
}

// --- The source's navigation, read here (not by the importer) --------------------------------

/** A navigation node: a page (its source file) or a section (a label). */
interface Nav {
  file?: string;
  label?: string;
  /** A sidebar's root: its own title is not compared (tools show none). */
  root?: boolean;
  children: Nav[];
}

const isMd = (p: string) => /\.(md|mdx|markdown)$/i.test(p);
const text = (files: Files, p: string) => files.get(p)?.toString('utf8') ?? '';

function frontMatter(src: string): Record<string, unknown> {
  const m = /^---\r?\n([\s\S]*?)\r?\n---/.exec(src);
  if (!m) return {};
  try {
    const v = parseYaml(m[1]!);
    return v && typeof v === 'object' ? v : {};
  } catch {
    return {};
  }
}

/** Docusaurus doc ids (folder + front matter id or file name, number prefixes dropped) → files. */
function docIds(s: Source): Map<string, string> {
  const ids = new Map<string, string>();
  for (const p of s.files.keys()) {
    if (!p.startsWith(`${s.docsDir}/`) || !isMd(p)) continue;
    const rel = p.slice(s.docsDir.length + 1);
    if (rel.split('/').some((seg) => seg.startsWith('_'))) continue; // partials are not docs
    const dir = posix.dirname(rel) === '.' ? '' : posix.dirname(rel).split('/').map((d) => d.replace(/^\d+[-_.]/, '')).join('/');
    const fm = frontMatter(text(s.files, p));
    const stem = posix.basename(rel).replace(/\.(md|mdx|markdown)$/i, '').replace(/^\d+[-_.]/, '');
    const id = typeof fm.id === 'string' ? fm.id : stem;
    ids.set(dir ? `${dir}/${id}` : id, p);
  }
  return ids;
}

async function docusaurusNav(s: Source): Promise<Nav[]> {
  let sidebars: Record<string, unknown>;
  const raw = text(s.files, s.navFile);
  if (s.navFile.endsWith('.json')) sidebars = JSON.parse(raw);
  else {
    // The sidebars module, run (this is the bench's own trusted input): TypeScript stripped, imports of types gone.
    const js = transformSync(raw, { loader: 'ts', format: 'esm' }).code.replace(/module\.exports\s*=/, 'export default ');
    sidebars = (await import(`data:text/javascript;base64,${Buffer.from(js).toString('base64')}`)).default;
  }
  const ids = docIds(s);
  const doc = (id: string): Nav[] => {
    const file = ids.get(id);
    if (!file) console.warn(`  (${s.name}: sidebar doc "${id}" has no file)`);
    return file ? [{ file, children: [] }] : [];
  };
  const autogenerated = (dir: string): Nav[] => {
    const base = dir === '.' ? s.docsDir : `${s.docsDir}/${dir}`;
    const entries = new Map<string, { pos: number; name: string; nav: Nav }>();
    for (const p of s.files.keys()) {
      if (!p.startsWith(`${base}/`) || !isMd(p)) continue;
      const rest = p.slice(base.length + 1);
      const first = rest.split('/')[0]!;
      if (first.startsWith('_')) continue;
      if (!rest.includes('/')) {
        const fm = frontMatter(text(s.files, p));
        entries.set(first, { pos: typeof fm.sidebar_position === 'number' ? fm.sidebar_position : Infinity, name: first, nav: { file: p, children: [] } });
      } else if (!entries.has(first)) {
        const cat = [...['_category_.json', '_category_.yml', '_category_.yaml']].map((n) => text(s.files, `${base}/${first}/${n}`)).find(Boolean);
        const meta = cat ? (parseYaml(cat) as { label?: string; position?: number }) : {};
        const children = autogenerated(posix.join(dir, first));
        entries.set(first, { pos: meta.position ?? Infinity, name: first, nav: { label: meta.label ?? first, children } });
      }
    }
    return [...entries.values()].sort((a, b) => a.pos - b.pos || (a.name < b.name ? -1 : 1)).map((e) => e.nav);
  };
  const items = (list: unknown): Nav[] => {
    if (Array.isArray(list)) return list.flatMap(item);
    if (list && typeof list === 'object') return Object.entries(list).map(([label, sub]) => ({ label, children: items(sub) }));
    return [];
  };
  const item = (i: unknown): Nav[] => {
    if (typeof i === 'string') return doc(i);
    const o = i as Record<string, any>;
    if (!o || typeof o !== 'object') return [];
    if (o.type === 'doc' || o.type === 'ref') return doc(o.id);
    if (o.type === 'autogenerated') return autogenerated(o.dirName ?? '.');
    if (o.type === 'category') {
      const children = items(o.items);
      const linked = o.link?.type === 'doc' ? ids.get(o.link.id) : undefined;
      return [{ ...(linked ? { file: linked } : {}), label: o.label, children: children.filter((c) => c.file !== linked || !linked) }];
    }
    if (!o.type) return items(o);
    return []; // links and html items are not pages
  };
  const names = Object.keys(sidebars);
  return names.length === 1 ? items(sidebars[names[0]!]) : names.map((n) => ({ label: n, root: true, children: items(sidebars[n]) }));
}

function mkdocsNav(s: Source): Nav[] {
  const rawConfig = text(s.files, 'mkdocs.yml').replace(/!!python\/\S+/g, '').replace(/!(ENV|relative)\b/g, '');
  const config = parseYaml(rawConfig, { logLevel: 'silent' } as never) as { nav?: unknown[]; theme?: { features?: string[] } };
  const indexes = (config.theme?.features ?? []).includes('navigation.indexes');
  const page = (p: string): Nav[] => (/^[a-z]+:\/\//i.test(p) ? [] : [{ file: posix.join(s.docsDir, p), children: [] }]);
  const items = (list: unknown[]): Nav[] =>
    list.flatMap((e): Nav[] => {
      if (typeof e === 'string') return page(e);
      return Object.entries(e as Record<string, unknown>).flatMap(([label, v]): Nav[] => {
        if (typeof v === 'string') return page(v);
        const children = items(v as unknown[]);
        // With navigation.indexes, a section's first index.md is the section's own page.
        const first = children[0];
        if (indexes && first?.file && /(^|\/)index\.md$/.test(first.file) && !first.children.length) return [{ file: first.file, label, children: children.slice(1) }];
        return [{ label, children }];
      });
    });
  return items(config.nav ?? []);
}

// --- Counting constructs in the source --------------------------------------------------------

/** Lines outside fenced code, and the fenced blocks (nested fences inside one count once): their info string, first and last line. */
function scanFences(src: string): { outside: { line: string; i: number }[]; fences: { info: string; from: number; to: number }[] } {
  const outside: { line: string; i: number }[] = [];
  let open: { ch: string; len: number; info: string; from: number; indent: number } | null = null;
  const fences: { info: string; from: number; to: number }[] = [];
  src.split(/\r?\n/).forEach((line, i) => {
    const m = /^(\s*)(`{3,}|~{3,})(.*)$/.exec(line);
    const indent = m ? m[1]!.replace(/\t/g, '    ').length : 0;
    const marker = m?.[2] ?? '';
    const rest = m?.[3] ?? '';
    if (open) {
      // CommonMark: a closing fence is indented at most 3 spaces more than the opening one.
      if (m && marker[0] === open.ch && marker.length >= open.len && !rest.trim() && indent <= open.indent + 3) {
        fences.push({ info: open.info, from: open.from, to: i });
        open = null;
      }
      return;
    }
    if (m && !(marker[0] === '`' && rest.includes('`'))) {
      open = { ch: marker[0]!, len: marker.length, info: rest.trim(), from: i, indent };
      return;
    }
    outside.push({ line, i });
  });
  const last = open as { info: string; from: number } | null;
  if (last) fences.push({ info: last.info, from: last.from, to: Infinity });
  return { outside, fences };
}

interface Counts {
  admonitions: number;
  tabs: number;
  code: number;
  details: number;
}

function countSource(src: string, tool: Source['tool']): Counts {
  let body = src.replace(/^---\r?\n[\s\S]*?\r?\n---\r?\n/, '');
  // Docusaurus renders what ```mdx-code-block fences hold as the page's own MDX: not code.
  if (tool === 'docusaurus') {
    const fence = scanFences(body).fences.filter((f) => f.info === 'mdx-code-block');
    const drop = new Set(fence.flatMap((f) => [f.from, f.to]));
    body = body.split(/\r?\n/).filter((_, i) => !drop.has(i)).join('\n');
  }
  const { outside, fences } = scanFences(body);
  const lines = body.split(/\r?\n/);
  let admonitions = 0;
  let tabs = 0;
  let details = 0;
  const lastAtIndent = new Map<number, boolean>(); // was the previous line at this indent a tab title?
  for (const { line } of outside) {
    if (/^\s*<details\b/i.test(line)) details++;
    if (tool === 'docusaurus') {
      if (/^\s*:{3,}[a-z]+/i.test(line)) admonitions++;
      if (/^\s*<Tabs\b/.test(line)) tabs++;
      continue;
    }
    if (/^\s*(!!!|\?\?\?\+?)\s+[\w-]+/.test(line)) admonitions++;
    if (!line.trim()) continue;
    const indent = /^\s*/.exec(line)![0].length;
    const isTab = /^\s*===!?\s+"/.test(line);
    if (isTab && !lastAtIndent.get(indent)) tabs++;
    lastAtIndent.set(indent, isTab);
    for (const k of [...lastAtIndent.keys()]) if (k > indent) lastAtIndent.delete(k);
  }
  if (tool === 'docusaurus') {
    // docusaurus-remark-plugin-tab-blocks: consecutive fences marked `tab` are one set of tabs.
    let prevTabEnd = -2;
    for (const f of fences) {
      if (!/(^|\s)tab(\s|$)/.test(f.info.replace(/^\S*/, ' '))) continue;
      const joined = prevTabEnd >= 0 && lines.slice(prevTabEnd + 1, f.from).every((l) => !l.trim());
      if (!joined) tabs++;
      prevTabEnd = f.to;
    }
  }
  return { admonitions, tabs, code: fences.length, details };
}

/** Markdown links outside code and HTML comments (not images), inline or by reference to a definition, with their targets. */
function sourceLinks(src: string): string[] {
  const body = src.replace(/^---\r?\n[\s\S]*?\r?\n---\r?\n/, '');
  const outside = scanFences(body).outside.map((o) => o.line.replace(/(?<!`)(`+)(?!`).*?(?<!`)\1(?!`)/g, '').replace(/<!--.*?-->/g, ''));
  const defs = new Map<string, string>();
  const defRe = /^\s*\[([^\]^][^\]]*)\]:\s*<?([^\s>]+)>?/;
  for (const line of outside) {
    const d = defRe.exec(line);
    if (d && !defs.has(d[1]!.toLowerCase())) defs.set(d[1]!.toLowerCase(), d[2]!);
  }
  const out: string[] = [];
  for (const line of outside) {
    if (defRe.test(line)) continue;
    for (const m of line.matchAll(/(!?)\[((?:[^\]]|\][^(\[])*?)\](?:\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)|\[([^\]]*)\])?/g)) {
      if (m[1] || m[2]!.startsWith('^')) continue;
      if (m[3]) out.push(m[3]);
      else {
        const to = defs.get((m[4] || m[2]!).toLowerCase());
        if (to) out.push(to);
      }
    }
  }
  return out;
}

/** The source file a link of `from` leads to by the tool's rules, if it is a page link. */
function resolveLink(s: Source, ids: Map<string, string>, from: string, target: string): string | undefined {
  if (/^([a-z][a-z0-9+.-]*:|\/\/|#)/i.test(target)) return undefined;
  let path = target.split(/[?#]/)[0]!;
  try {
    path = decodeURI(path);
  } catch {
    // kept as written
  }
  if (!path) return undefined;
  const fileCandidates = (p: string) => [p, `${p}.md`, `${p}.mdx`, `${p}/index.md`, `${p}/README.md`, `${p}/index.mdx`].map((c) => c.replace(/\/\//g, '/'));
  if (s.tool === 'mkdocs') {
    const p = posix.normalize(posix.join(posix.dirname(from), path)).replace(/\/$/, '');
    return fileCandidates(p).find((c) => s.files.has(c) && isMd(c));
  }
  // Docusaurus: a file path (relative, or from the docs folder when it starts with /), else a route.
  if (/\.(md|mdx)$/i.test(path)) {
    const p = path.startsWith('/') ? posix.join(s.docsDir, path) : posix.normalize(posix.join(posix.dirname(from), path));
    return s.files.has(p) ? p : undefined;
  }
  const idOf = new Map([...ids].map(([id, f]) => [f, id]));
  const fromId = idOf.get(from) ?? '';
  const base = `/${s.routeBase ? `${s.routeBase}/` : ''}`;
  // The page's route is base + id (an index/README doc is its folder's route).
  const route = base + fromId.replace(/(^|\/)(index|README)$/i, '$1');
  const abs = path.startsWith('/') ? path : posix.join(route.endsWith('/') ? route : posix.dirname(route), path);
  const norm = posix.normalize(abs).replace(/\/$/, '');
  if (!norm.startsWith(base.replace(/\/$/, '')) && base !== '/') return undefined;
  const id = norm.slice(base.length).replace(/^\//, '');
  return ids.get(id) ?? ids.get(`${id}/index`) ?? ids.get(`${id}/README`) ?? ids.get(id.toLowerCase());
}

// --- The imported space ----------------------------------------------------------------------

interface ApiPage {
  id: string;
  title: string;
  type: string;
  pages?: ApiPage[];
}

type Node = { object?: string; type?: string; nodes?: Node[]; data?: Record<string, any>; fragments?: Node[]; [k: string]: unknown };

function walk(node: unknown, visit: (n: Node) => void): void {
  if (Array.isArray(node)) return node.forEach((n) => walk(n, visit));
  if (!node || typeof node !== 'object') return;
  visit(node as Node);
  for (const v of Object.values(node)) if (v && typeof v === 'object') walk(v, visit);
}

// --- Comparison -------------------------------------------------------------------------------

interface Placed {
  chain: string;
  prev: string;
}

/** Each page file's chain of ancestors and previous sibling (sections by label, lower case; sidebar roots by "*"). */
function placements(nodes: Nav[], key: (n: Nav) => string): Map<string, Placed> {
  const out = new Map<string, Placed>();
  const visit = (list: Nav[], chain: string[]) => {
    let prev = '^';
    for (const n of list) {
      const k = key(n);
      if (n.file && !out.has(n.file)) out.set(n.file, { chain: chain.join(' > '), prev });
      visit(n.children, [...chain, k]);
      prev = k;
    }
  };
  visit(nodes, []);
  return out;
}

const navKey = (n: Nav) => (n.root ? '*' : n.file ?? `§${(n.label ?? '').toLowerCase()}`);

interface Row {
  name: string;
  tool: string;
  pages: [number, number];
  nav: [number, number];
  admonitions: [number, number];
  tabs: [number, number];
  code: [number, number];
  links: { resolvable: number; broken: number; brokenBefore: number };
  warnings: number;
  seconds: number;
}

async function measure(call: ReturnType<typeof apiCaller>, orgId: string, s: Source): Promise<Row> {
  // The expected navigation.
  const expected = s.tool === 'mkdocs' ? mkdocsNav(s) : await docusaurusNav(s);
  const navFiles: string[] = [];
  const collect = (l: Nav[]) => l.forEach((n) => (n.file && !navFiles.includes(n.file) && navFiles.push(n.file), collect(n.children)));
  collect(expected);

  // Upload and import.
  const folder = s.name.split('/')[1]!;
  const zip = Buffer.from(zipSync(Object.fromEntries([...s.files].map(([p, d]) => [`${folder}/${p}`, new Uint8Array(d)]))));
  const space = await call('POST', `/v1/orgs/${orgId}/spaces`, { title: s.name });
  const up = await call('POST', `/v1/orgs/${orgId}/storage/upload`, { file: { name: `${folder}.zip`, type: 'application/zip', size: zip.length }, kind: 'import_file' });
  const put = await fetch(up.url, { method: 'PUT', body: new Uint8Array(zip), headers: { 'content-type': 'application/zip' } });
  if (!put.ok) throw new Error(`upload: ${put.status} ${await put.text()}`);
  const started = performance.now();
  let run = await call('POST', `/v1/org/${orgId}/imports`, { source: { type: 'file', files: [up.key] }, target: { space: space.id } });
  while (run.status === 'pending' || run.status === 'in-progress') {
    await new Promise((r) => setTimeout(r, 100));
    run = await call('GET', `/v1/org/${orgId}/imports/${run.id}`);
  }
  const seconds = (performance.now() - started) / 1000;
  if (run.status !== 'completed') throw new Error(`${s.name}: import ${run.status}: ${run.reason}`);
  const sourceOf = new Map<string, string>(run.pages.filter((p: any) => p.sourceURL).map((p: any) => [p.id, p.sourceURL]));

  // The imported tree, as navigation nodes keyed the same way.
  const tree: ApiPage[] = (await call('GET', `/v1/spaces/${space.id}/content`)).pages;
  const toNav = (pages: ApiPage[], depth: number): Nav[] =>
    pages.map((p) => {
      // sourceURL is the page's path in the upload, relative to the zip's one folder: the repository's path.
      const file = sourceOf.get(p.id);
      return { ...(file ? { file } : { label: p.title }), root: depth === 0 && p.type === 'group' && expected.every((e) => e.root), children: toNav(p.pages ?? [], depth + 1) };
    });
  const actual = toNav(tree, 0);
  // A section with a page of its own (Docusaurus category links, Material indexes) is compared by its file.
  const want = placements(expected, navKey);
  const got = placements(actual, navKey);
  let pagesIn = 0;
  let placed = 0;
  const misses: string[] = [];
  for (const f of navFiles) {
    const g = got.get(f);
    if (g) pagesIn++;
    const w = want.get(f)!;
    if (g && g.chain === w.chain && g.prev === w.prev) placed++;
    else if (VERBOSE) misses.push(`${f}: want ${w.chain} after ${w.prev}; got ${g ? `${g.chain} after ${g.prev}` : 'not imported'}`);
  }

  // Constructs and links, page by page.
  const src: Counts = { admonitions: 0, tabs: 0, code: 0, details: 0 };
  const ids = s.tool === 'docusaurus' ? docIds(s) : new Map<string, string>();
  const navSet = new Set(navFiles);
  const wantLinks = new Map<string, Map<string, number>>();
  const perPage = new Map<string, Counts>();
  let brokenBefore = 0;
  for (const f of navFiles) {
    const c = countSource(text(s.files, f), s.tool);
    perPage.set(f, c);
    src.admonitions += c.admonitions;
    src.tabs += c.tabs;
    src.code += c.code;
    src.details += c.details;
    const targets = new Map<string, number>();
    for (const t of sourceLinks(text(s.files, f))) {
      if (/^([a-z][a-z0-9+.-]*:|\/\/|#)/i.test(t)) continue;
      const to = resolveLink(s, ids, f, t);
      if (to && navSet.has(to)) targets.set(to, (targets.get(to) ?? 0) + 1);
      else if (!to && !/\.(png|jpe?g|gif|svg|webp|zip|pdf|txt|json|ya?ml)$/i.test(t.split(/[?#]/)[0]!)) brokenBefore++;
    }
    wantLinks.set(f, targets);
  }
  const dst = { hints: 0, expandables: 0, tabs: 0, code: 0 };
  // An admonition holding code is split around it into hints of its style (GitBook hints hold text only): per page, at most the source's count is credited.
  // Likewise for tabs and code blocks: a page's surplus (say, an indented code block the source's tool read otherwise) never makes up for another's loss.
  let admonitionsKept = 0;
  let tabsKept = 0;
  let codeKept = 0;
  let resolvable = 0;
  let broken = 0;
  const brokenList: string[] = [];
  for (const [id, file] of sourceOf) {
    if (!navSet.has(file)) continue;
    const page = await call('GET', `/v1/spaces/${space.id}/content/page/${id}`);
    const linked = new Map<string, number>();
    const before = { ...dst };
    walk(page.document, (n) => {
      if (n.object !== 'block') {
        const ref = n.data?.ref as { kind?: string; page?: string } | undefined;
        if (n.type === 'link' && ref && (ref.kind === 'page' || ref.kind === 'anchor') && ref.page) {
          const to = sourceOf.get(ref.page);
          if (to) linked.set(to, (linked.get(to) ?? 0) + 1);
        }
        return;
      }
      if (n.type === 'hint') dst.hints++;
      else if (n.type === 'expandable') dst.expandables++;
      else if (n.type === 'tabs') dst.tabs++;
      else if (n.type === 'code') dst.code++;
    });
    const c = perPage.get(file)!;
    const got = { admonitions: dst.hints - before.hints + dst.expandables - before.expandables, tabs: dst.tabs - before.tabs, code: dst.code - before.code };
    admonitionsKept += Math.min(c.admonitions, Math.max(0, got.admonitions - c.details));
    tabsKept += Math.min(c.tabs, got.tabs);
    codeKept += Math.min(c.code, got.code);
    if (VERBOSE && (got.admonitions < c.admonitions || got.tabs < c.tabs || got.code < c.code)) {
      brokenList.push(`${file}: admonitions ${got.admonitions}/${c.admonitions}, tabs ${got.tabs}/${c.tabs}, code ${got.code}/${c.code}`);
    }
    for (const [to, count] of wantLinks.get(file) ?? []) {
      resolvable += count;
      const lost = Math.max(0, count - (linked.get(to) ?? 0));
      broken += lost;
      if (lost && VERBOSE) brokenList.push(`${file} → ${to} (${lost})`);
    }
  }
  if (VERBOSE) {
    for (const m of misses.slice(0, 40)) console.log(`  nav miss: ${m}`);
    for (const b of brokenList.slice(0, 80)) console.log(`  missing: ${b}`);
    for (const w of run.warnings.slice(0, 60)) console.log(`  warning: ${w.page ?? ''} ${w.message}`);
  }
  return {
    name: s.name,
    tool: s.tool,
    pages: [pagesIn, navFiles.length],
    nav: [placed, navFiles.length],
    admonitions: [admonitionsKept, src.admonitions],
    tabs: [tabsKept, src.tabs],
    code: [codeKept, src.code],
    links: { resolvable, broken, brokenBefore },
    warnings: run.warnings.length,
    seconds,
  };
}

const pct = ([a, b]: [number, number]) => (b ? `${((100 * a) / b).toFixed(1)}% (${a}/${b})` : 'n/a (0)');

async function main() {
  const given = process.argv.slice(2);
  const known = ['facebook+docusaurus', 'jestjs+jest', 'reduxjs+redux-toolkit', 'squidfunk+mkdocs-material'];
  const mirrors = given.length ? given : known.map((k) => `${MIRRORS}/${k}/repo`).filter((p) => existsSync(p));
  if (!given.length) for (const k of known) if (!existsSync(`${MIRRORS}/${k}/repo`)) console.log(`(${k.replace('+', '/')}: no mirror under ${MIRRORS}, skipped)`);
  if (!mirrors.length) throw new Error(`no mirrors: pass their git directories, or fetch them under ${MIRRORS} (found: ${existsSync(MIRRORS) ? readdirSync(MIRRORS).join(', ') : 'nothing'})`);

  const db = await freshDatabaseConfig(process.env.BENCH_DATABASE_URL);
  const server = await startServer(
    { ...loadConfig({}), port: 0, logLevel: process.env.BENCH_LOG_LEVEL ?? 'silent', rateLimitMax: 1e9, databaseUrl: undefined, jobPollMs: 20, ...db.config },
    { purpose: 'bench' },
  );
  server.services.config.publicUrl = server.url;
  const rows: Row[] = [];
  try {
    const { token } = await createUser(server.services.db, { email: `fidelity.${Date.now()}@example.com`, name: 'Bench' });
    const call = apiCaller(server.url, token);
    const org = await call('POST', '/v1/orgs', { title: 'Fidelity' });
    for (const gitDir of mirrors) {
      const s = sourceOf(gitDir);
      if (!s) {
        console.log(`${gitDir}: neither mkdocs.yml nor a Docusaurus sidebars file at its root or in website/: skipped`);
        continue;
      }
      const commit = git(gitDir, ['rev-parse', '--short', 'HEAD']).toString().trim();
      console.log(`${s.name}@${commit}: ${s.tool}, ${[...s.files.keys()].filter(isMd).length} Markdown files under ${s.docsDir}/, navigation ${s.navFile}`);
      rows.push(await measure(call, org.id, s));
    }
  } finally {
    await server.close();
    await db.cleanup();
  }
  console.log('\n| Project | Pages imported / in nav | Nav order & nesting | Admonitions | Tabs | Code blocks | Links broken by the import (resolvable in source; broken before) | Warnings | Import time |');
  console.log('|---|---|---|---|---|---|---|---|---|');
  for (const r of rows) {
    console.log(
      `| ${r.name} (${r.tool}) | ${pct(r.pages)} | ${pct(r.nav)} | ${pct(r.admonitions)} | ${pct(r.tabs)} | ${pct(r.code)} | ${r.links.broken} (of ${r.links.resolvable}; ${r.links.brokenBefore}) | ${r.warnings} | ${r.seconds.toFixed(1)} s |`,
    );
  }
  console.log('\nGoals: pages 100%, nav 100%, admonitions/tabs/code ≥ 95%, links broken by the import 0.');
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
