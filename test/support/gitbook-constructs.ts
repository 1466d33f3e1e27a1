import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { readFileSync, readdirSync, statSync } from 'node:fs';
import { join, posix, relative } from 'node:path';
import { isDeepStrictEqual } from 'node:util';
import { parse as parseYaml } from 'yaml';
import { readMarkdownMetadata } from '../../src/change-requests/edit.ts';
import { readFrontMatter, writeFrontMatter } from '../../src/content/markdown/front-matter.ts';
import { documentToMarkdown, markdownToDocument } from '../../src/content/markdown/markdown.ts';
import { coverAsPath } from '../../src/git/convert.ts';
import { coverPath, resolveRelative, rewriteLinks } from '../../src/git/format.ts';

/**
 * How many of the GitBook constructs of a set of pages come out of Folio's markdown reader as the
 * block they stand for (issue 23): each construct is found in the source (outside code), given a
 * key (its first code line, its file, its icon, its column titles…), and counted as kept when the
 * document has a block of that kind with that key. Links are resolved as a git import resolves them
 * (a path to a file of the repository becomes `/files/<id>`, to a page `/pages/<id>`), so file
 * blocks, images and covers are checked against the space file they must reference.
 *
 * `kept` is the parse of the page; `roundTrip` the parse of the markdown Folio writes for that
 * document, so a construct counts there only if it is also written back as something that reads as
 * the same block.
 */

export interface Page {
  path: string;
  text: string;
}

export interface Corpus {
  name: string;
  pages: Page[];
  /** Every file path of the repository (pages, assets…). */
  files: Set<string>;
}

export const CONSTRUCTS = [
  'code as <pre>',
  'file block',
  'icon',
  'HTML table',
  'HTML table, <th> widths',
  'figure image',
  'tabs',
  'stepper',
  'cover file',
  'layout round trip',
] as const;
export type Construct = (typeof CONSTRUCTS)[number];

export interface Figure {
  total: number;
  kept: number;
  roundTrip: number;
  /**
   * Occurrences that cannot be kept: the official schema has no place for them where they stand (a
   * table in a step, say), or (a cover) the file they name is not in the repository.
   */
  unrepresentable: number;
  /** Pages with an occurrence that was not kept (for inspection). */
  missed: string[];
}

export type Figures = Record<Construct, Figure>;

/** The markdown pages and file paths of a directory (a work tree) or a bare git directory. */
export function loadCorpus(path: string, name = path): Corpus {
  const isBare = statSync(path).isDirectory() && !statSync(path, { throwIfNoEntry: false })?.isFile() && exists(join(path, 'HEAD')) && exists(join(path, 'objects'));
  return isBare ? loadGit(path, name) : loadDirectory(path, name);
}

function exists(path: string): boolean {
  return statSync(path, { throwIfNoEntry: false }) !== undefined;
}

function loadDirectory(root: string, name: string): Corpus {
  const files = new Set<string>();
  const pages: Page[] = [];
  const walk = (dir: string) => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      if (entry.name === '.git' || entry.name === 'node_modules') continue;
      const full = join(dir, entry.name);
      if (entry.isDirectory()) walk(full);
      else if (entry.isFile()) {
        const rel = relative(root, full).split('\\').join('/');
        files.add(rel);
        if (rel.endsWith('.md')) pages.push({ path: rel, text: readFileSync(full, 'utf8') });
      }
    }
  };
  walk(root);
  return { name, pages: pages.filter((p) => isPage(p.path)), files };
}

function loadGit(gitDir: string, name: string): Corpus {
  const listing = execFileSync('git', ['--git-dir', gitDir, 'ls-tree', '-r', '-z', 'HEAD'], { maxBuffer: 1 << 28 }).toString('utf8');
  const files = new Set<string>();
  const wanted: { oid: string; path: string }[] = [];
  for (const record of listing.split('\0')) {
    if (!record) continue;
    const tab = record.indexOf('\t');
    const [, type, oid] = record.slice(0, tab).split(' ');
    const path = record.slice(tab + 1);
    if (type !== 'blob') continue;
    files.add(path);
    if (path.endsWith('.md') && isPage(path)) wanted.push({ oid: oid!, path });
  }
  const out = execFileSync('git', ['--git-dir', gitDir, 'cat-file', '--batch'], { input: wanted.map((w) => w.oid).join('\n') + '\n', maxBuffer: 1 << 30 });
  const pages: Page[] = [];
  let at = 0;
  for (const w of wanted) {
    const eol = out.indexOf(10, at);
    const header = out.subarray(at, eol).toString('utf8');
    const size = Number(header.split(' ')[2]);
    if (!Number.isFinite(size)) {
      at = eol + 1; // "<oid> missing"
      continue;
    }
    pages.push({ path: w.path, text: out.subarray(eol + 1, eol + 1 + size).toString('utf8') });
    at = eol + 1 + size + 1;
  }
  return { name, pages, files };
}

/** Markdown files that are pages (not SUMMARY.md, not files under `.gitbook/`). */
function isPage(path: string): boolean {
  return !/(^|\/)SUMMARY\.md$/.test(path) && !/(^|\/)\.gitbook\//.test(path) && !/(^|\/)\.github\//.test(path);
}

const idOf = (prefix: string, path: string) => `${prefix}${createHash('sha1').update(path).digest('hex').slice(0, 10)}`;

/** A page's link target as a git import stores it: `/files/<id>`, `/pages/<id>`, or as written. */
function resolver(corpus: Corpus, from: string) {
  return (target: string): string | undefined => {
    const r = resolveRelative(from, target);
    if (!r || !corpus.files.has(r.path)) return undefined;
    if (r.path.endsWith('.md') && !r.path.includes('.gitbook/')) return `/pages/${idOf('p', r.path)}${r.anchor ? `#${r.anchor}` : ''}`;
    return `/files/${idOf('f', r.path)}`;
  };
}

/** The source with fenced code blocks and code spans blanked (same length), so examples are not counted. */
function visible(markdown: string): string {
  let fence: string | null = null;
  return markdown
    .split('\n')
    .map((line) => {
      const marker = /^[ \t>]*(`{3,}|~{3,})/.exec(line)?.[1];
      if (fence) {
        if (marker && marker[0] === fence[0] && marker.length >= fence.length && line.trim().replace(/^>\s*/, '') === marker) fence = null;
        return ' '.repeat(line.length);
      }
      if (marker && !(marker[0] === '`' && line.slice(line.indexOf(marker) + marker.length).includes('`'))) {
        fence = marker;
        return ' '.repeat(line.length);
      }
      return line.replace(/(`+)[^`]*?\1/g, (span) => ' '.repeat(span.length));
    })
    .join('\n');
}

const decode = (s: string) =>
  s
    .replace(/&#x([0-9a-f]+);/gi, (_, h: string) => String.fromCodePoint(parseInt(h, 16)))
    .replace(/&#(\d+);/g, (_, d: string) => String.fromCodePoint(Number(d)))
    .replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>')
    .replace(/&quot;/g, '"')
    .replace(/&amp;/g, '&');
const stripTags = (s: string) => decode(s.replace(/<[^>]*>/g, ''));
const firstLine = (s: string) => s.split('\n').map((l) => l.trim()).find((l) => l !== '') ?? '';

type Keys = Map<string, number>;
const add = (keys: Keys, key: string) => keys.set(key, (keys.get(key) ?? 0) + 1);
const overlap = (a: Keys, b: Keys) => [...a].reduce((n, [key, count]) => n + Math.min(count, b.get(key) ?? 0), 0);

type BodyConstruct = Exclude<Construct, 'cover file' | 'layout round trip'>;
const BODY: BodyConstruct[] = ['code as <pre>', 'file block', 'icon', 'HTML table', 'HTML table, <th> widths', 'figure image', 'tabs', 'stepper'];

/** Each construct of a page's body (links already resolved), by key. */
function sourceKeys(body: string): Record<BodyConstruct, Keys> {
  const text = visible(body);
  const keys = Object.fromEntries(BODY.map((c) => [c, new Map()])) as Record<BodyConstruct, Keys>;
  // A `<pre>` that starts a line (one in a table cell can't be a block: cells hold text).
  for (const m of text.matchAll(/^[ \t>]*<pre\b[^>]*>\s*<code\b[^>]*>([\s\S]*?)<\/code>/gm)) add(keys['code as <pre>'], firstLine(stripTags(m[1]!)));
  for (const m of text.matchAll(/\{%\s*file\s+src="([^"]*)"/g)) if (m[1]!.startsWith('/files/')) add(keys['file block'], m[1]!);
  for (const m of text.matchAll(/<i\s+class="fa-([^"\s]+)[^"]*"/g)) add(keys.icon, m[1]!);
  for (const m of text.matchAll(/<table\b[^>]*>([\s\S]*?)<\/table>/g)) {
    const head = /<thead>([\s\S]*?)<\/thead>/.exec(m[1]!)?.[1] ?? '';
    const titles = [...head.matchAll(/<th\b([^>]*)>([\s\S]*?)<\/th>/g)];
    const key = titles.map((t) => stripTags(t[2]!).replace(/\s+/g, ' ').trim()).join('|');
    add(keys['HTML table'], key);
    if (titles.some((t) => /\swidth=/.test(t[1]!))) add(keys['HTML table, <th> widths'], key);
  }
  for (const m of text.matchAll(/<figure>\s*(?:<picture>[\s\S]*?)?<img\s[^>]*?src="([^"]*)"/g)) add(keys['figure image'], decode(m[1]!));
  for (const m of text.matchAll(/\{%\s*tabs\s*%\}\s*\{%\s*tab\s+title="([^"]*)"/g)) add(keys.tabs, m[1]!);
  for (const _ of text.matchAll(/\{%\s*stepper\s*%\}/g)) add(keys.stepper, 'stepper');
  return keys;
}

type Node = { object?: string; type?: string; data?: any; nodes?: Node[]; fragments?: Node[]; leaves?: { text: string }[] };

const textOf = (nodes: Node[] | undefined): string =>
  (nodes ?? []).map((n) => (n.object === 'text' ? (n.leaves ?? []).map((l) => l.text).join('') : textOf(n.nodes))).join('');

function urlOf(ref: { kind?: string; file?: string; url?: string; page?: string } | undefined): string {
  if (!ref) return '';
  if (ref.kind === 'file') return `/files/${ref.file}`;
  if (ref.kind === 'url') return ref.url ?? '';
  return '';
}

/** The same constructs, as blocks of a document. */
function documentKeys(nodes: Node[]): Record<BodyConstruct, Keys> {
  const keys = Object.fromEntries(BODY.map((c) => [c, new Map()])) as Record<BodyConstruct, Keys>;
  const walk = (list: Node[] | undefined) => {
    for (const n of list ?? []) {
      switch (n.type) {
        case 'code':
          add(keys['code as <pre>'], firstLine((n.nodes ?? []).map((line) => textOf(line.nodes)).join('\n')));
          break;
        case 'file':
          add(keys['file block'], urlOf(n.data?.ref));
          break;
        case 'icon':
          add(keys.icon, n.data?.icon);
          break;
        case 'table': {
          const def = n.data?.definition ?? {};
          const ids = Object.keys(def).sort((a, b) => Number(a.slice(1)) - Number(b.slice(1)));
          const key = ids.map((id) => def[id].title).join('|');
          add(keys['HTML table'], key);
          add(keys['HTML table, <th> widths'], key);
          break;
        }
        case 'image':
          add(keys['figure image'], urlOf(n.data?.ref));
          break;
        case 'tabs':
          add(keys.tabs, n.nodes?.[0]?.data?.title ?? '');
          break;
        case 'stepper':
          add(keys.stepper, 'stepper');
          break;
      }
      walk(n.nodes);
      walk(n.fragments);
    }
  };
  walk(nodes);
  return keys;
}

/**
 * Which constructs each container cannot hold, per the official schema (`DocumentBlockStepperStep`
 * and the others' `nodes`): there the reader must turn them into something else.
 */
const NO_PLACE: Record<string, BodyConstruct[]> = {
  step: ['HTML table', 'HTML table, <th> widths', 'tabs', 'stepper'],
  tab: ['HTML table', 'HTML table, <th> widths', 'tabs', 'stepper'],
  update: ['HTML table', 'HTML table, <th> widths', 'stepper'],
  column: ['tabs'],
  hint: ['code as <pre>', 'figure image', 'file block', 'tabs', 'stepper'],
  details: ['tabs', 'stepper'],
  quote: ['code as <pre>', 'figure image', 'file block', 'HTML table', 'HTML table, <th> widths', 'tabs', 'stepper'],
  'list item': ['figure image', 'file block', 'tabs', 'stepper'],
};

const CONSTRUCT_START: [BodyConstruct, RegExp][] = [
  ['code as <pre>', /^[ \t>]*<pre\b/],
  ['figure image', /<figure>/g],
  ['file block', /\{%\s*file\s/g],
  ['HTML table', /<table\b/g],
  ['tabs', /\{%\s*tabs\s*%\}/g],
  ['stepper', /\{%\s*stepper\s*%\}/g],
];

/**
 * Occurrences standing in a container the schema does not let hold them (the innermost container
 * decides), by construct: a line-by-line walk keeping the open tags and whether a list item goes on.
 */
function unrepresentable(body: string): Partial<Record<BodyConstruct, number>> {
  const out: Partial<Record<BodyConstruct, number>> = {};
  const count = (c: BodyConstruct, n = 1) => (out[c] = (out[c] ?? 0) + n);
  const stack: string[] = [];
  let inList = false;
  for (const line of visible(body).split('\n')) {
    if (/^\s*([-*+]|\d{1,9}[.)])\s/.test(line)) inList = true;
    else if (line.trim() !== '' && !/^\s/.test(line)) inList = false;
    const quoted = /^\s*>/.test(line);
    const context = quoted ? 'quote' : inList && /^\s*([-*+]|\d{1,9}[.)])?\s/.test(line) ? 'list item' : stack.at(-1);
    const banned = context ? (NO_PLACE[context] ?? []) : [];
    for (const [c, re] of CONSTRUCT_START) {
      if (!banned.includes(c)) continue;
      const n = [...line.matchAll(new RegExp(re.source, 'g'))].length;
      if (n === 0) continue;
      count(c, n);
      if (c === 'HTML table') for (const t of line.matchAll(/<table\b[\s\S]*?(<\/table>|$)/g)) if (/<th\b[^>]*\swidth=/.test(t[0])) count('HTML table, <th> widths');
    }
    for (const m of line.matchAll(/\{%\s*(end)?(step|tab|update|column|hint)\b[^%]*%\}|<(\/)?details\b/g)) {
      const name = m[2] ?? 'details';
      if (m[1] || m[3]) {
        const at = stack.lastIndexOf(name);
        if (at >= 0) stack.splice(at);
      } else stack.push(name);
    }
  }
  return out;
}

const LAYOUT_KEYS = ['cover', 'coverY', 'coverHeight', 'layout'];

/** The front matter keys about the cover and the layout, as YAML data (for comparisons). */
function layoutData(markdown: string): Record<string, unknown> | null {
  const m = /^---\r?\n([\s\S]*?)\r?\n---/.exec(markdown);
  if (!m) return null;
  let data: Record<string, unknown>;
  try {
    data = (parseYaml(m[1]!) ?? {}) as Record<string, unknown>;
  } catch {
    return null;
  }
  const out: Record<string, unknown> = {};
  for (const key of LAYOUT_KEYS) if (data[key] !== undefined) out[key] = data[key];
  return out;
}

export function emptyFigures(): Figures {
  return Object.fromEntries(CONSTRUCTS.map((c) => [c, { total: 0, kept: 0, roundTrip: 0, unrepresentable: 0, missed: [] }])) as unknown as Figures;
}

/** Counts the constructs of every page of a corpus into `figures` (new ones when not given). */
export function measure(corpus: Corpus, figures = emptyFigures()): Figures {
  for (const page of corpus.pages) {
    const resolve = resolver(corpus, page.path);
    const { markdown, metadata } = readMarkdownMetadata(page.text);
    const body = rewriteLinks(markdown, resolve);
    const expected = sourceKeys(body);
    if (BODY.every((c) => expected[c].size === 0) && !metadata.cover && !metadata.layout) continue;
    const doc = markdownToDocument(body);
    const found = documentKeys(doc.nodes as Node[]);
    const again = documentKeys(markdownToDocument(documentToMarkdown(doc)).nodes as Node[]);
    const lost = unrepresentable(body);
    for (const c of BODY) {
      const total = [...expected[c].values()].reduce((a, b) => a + b, 0);
      if (total === 0) continue;
      const f = figures[c];
      const kept = overlap(expected[c], found[c]);
      f.total += total;
      f.kept += kept;
      f.roundTrip += overlap(expected[c], again[c]);
      f.unrepresentable += Math.min(lost[c] ?? 0, total - kept);
      if (kept < total) f.missed.push(`${corpus.name}:${page.path}`);
    }
    // Front matter: a cover given as a path must become the reference of that file, found as the
    // import finds it; a path to a file the repository does not hold cannot (counted apart).
    const cover = metadata.cover;
    if (cover && !/^[a-z][a-z0-9+.-]*:|^\/\//i.test(cover.url)) {
      const f = figures['cover file'];
      f.total++;
      const found = coverPath(page.path, cover.url, '', (p) => corpus.files.has(p));
      if (found !== undefined) {
        f.kept++;
        // Written back as the same path (see coverAsPath, used by exports).
        const back = coverAsPath({ cover: { ...cover, url: `/files/${idOf('f', found)}` } }, () => found, page.path).cover?.url;
        if (posix.normalize(posix.join(posix.dirname(page.path), back ?? '')) === found) f.roundTrip++;
      } else {
        f.unrepresentable++;
        f.missed.push(`${corpus.name}:${page.path} (no file ${cover.url})`);
      }
    }
    // Layout (and cover position) keys must come back as they were written.
    const before = layoutData(page.text);
    if (before && Object.keys(before).some((k) => k === 'layout' || k === 'coverY' || k === 'coverHeight')) {
      const f = figures['layout round trip'];
      f.total++;
      const after = layoutData(writeFrontMatter(readFrontMatter(page.text).metadata));
      const same = isDeepStrictEqual(after, before);
      if (same) {
        f.kept++;
        f.roundTrip++;
      } else f.missed.push(`${corpus.name}:${page.path}`);
    }
  }
  return figures;
}

export function formatFigures(figures: Figures, title: string): string {
  const pct = (a: number, b: number) => (b === 0 ? '   –  ' : `${((100 * a) / b).toFixed(1).padStart(5)}%`);
  const lines = [title, `${'construct'.padEnd(26)} ${'found'.padStart(6)} ${'kept'.padStart(6)} ${''.padStart(6)}  ${'round trip'.padStart(10)}  cannot be kept (no place in the schema, no such file)`];
  for (const c of CONSTRUCTS) {
    const f = figures[c];
    lines.push(`${c.padEnd(26)} ${String(f.total).padStart(6)} ${String(f.kept).padStart(6)} ${pct(f.kept, f.total)}  ${`${f.roundTrip} ${pct(f.roundTrip, f.total)}`.padStart(10)}  ${f.unrepresentable || ''}`);
  }
  return lines.join('\n');
}
