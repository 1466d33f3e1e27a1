import { slugify } from '../content/model.ts';
import { decodeEntities, escapeAttr } from '../content/markdown/tags.ts';
import { GitError } from './git.ts';
import { posix } from 'node:path';
import { parse as parseYaml } from 'yaml';

/**
 * GitBook's repository layout, read and written:
 * - `.gitbook.yaml` in the project directory: `root` (where the docs live), `structure.readme`,
 *   `structure.summary`, `redirects`;
 * - `SUMMARY.md`: the table of contents (`## Group` headings, `* [Title](path.md)` items nested by
 *   indentation, external links); without one, the tree follows the folders (`README.md` per folder);
 * - pages: `slug.md`, or `slug/README.md` for a page with children, with front matter.
 * Paths here are POSIX paths relative to the repository root.
 */

export interface GitbookConfig {
  /** Directory of the docs, relative to the repository root ('' for the root itself). */
  root: string;
  readme: string;
  summary: string;
  redirects: Record<string, string>;
}

/** Joins and normalizes a repository path; undefined when it escapes the repository. */
export function repoPath(...parts: string[]): string | undefined {
  const joined = posix.normalize(posix.join('/', ...parts)).replace(/^\/+/, '');
  if (joined.split('/').includes('..')) return undefined;
  return joined === '.' ? '' : joined.replace(/\/$/, '');
}

/** The project directory of a monorepo, checked: no absolute path, no `..`. */
export function projectDirectory(raw: string | undefined): string | undefined {
  if (!raw) return '';
  if (raw.startsWith('/') || raw.split(/[\\/]/).includes('..')) return undefined;
  return repoPath(raw);
}

export function readGitbookConfig(text: string | undefined, projectDir: string): GitbookConfig {
  let data: Record<string, any> = {};
  if (text !== undefined) {
    try {
      const parsed = parseYaml(text);
      if (parsed && typeof parsed === 'object') data = parsed as Record<string, any>;
    } catch (err) {
      throw new GitError(`.gitbook.yaml is not valid YAML: ${(err as Error).message.split('\n')[0]}`);
    }
  }
  const root = repoPath(projectDir, typeof data.root === 'string' ? data.root : '');
  if (root === undefined) throw new GitError('.gitbook.yaml: root points outside the repository');
  const structure = (data.structure ?? {}) as Record<string, unknown>;
  const redirects: Record<string, string> = {};
  if (data.redirects && typeof data.redirects === 'object') {
    for (const [k, v] of Object.entries(data.redirects)) if (typeof v === 'string') redirects[k] = v;
  }
  return {
    root,
    readme: typeof structure.readme === 'string' ? structure.readme : 'README.md',
    summary: typeof structure.summary === 'string' ? structure.summary : 'SUMMARY.md',
    redirects,
  };
}

/** One entry of the table of contents. */
export interface TocItem {
  kind: 'page' | 'group' | 'link';
  title: string;
  /** Repository path of the page's markdown file (pages; links to a page listed before). */
  path?: string;
  /** Anchor after the path (`page.md#section`), kept for the way back; a link's URL. */
  href?: string;
  /** A group's slug when its heading names one (`## Title <a href="#slug" id="slug"></a>`). */
  slug?: string;
  /** A link title after the target (`* [Title](page.md "Tooltip")`), as written. */
  tail?: string;
  /** The title of an item as written (`Encrypt\&Decrypt`), when GitBook would write it otherwise. */
  label?: string;
  /** The target of an item as written (`load\_name.md`, `Main\_Page`), when GitBook would write it otherwise. */
  written?: string;
  children: TocItem[];
}

const ITEM = /^(\s*)[*+-]\s+\[((?:\\.|[^\]\\])*)\]\(\s*(<[^>]*>|[^)\s]+)(\s+"[^"]*")?\s*\)\s*$/;

/** Backslash escapes removed (any ASCII punctuation, as CommonMark). */
function unescapeMarkdown(text: string): string {
  return text.replace(/\\([!-/:-@[-`{-~])/g, '$1');
}

/** A title in SUMMARY.md, escaped as GitBook escapes it (`\_`, `\*`, `\[`; not `<` or `>`). */
export function escapeTitle(text: string): string {
  return text.replace(/([\\[\]*_`])/g, '\\$1');
}

function isExternal(target: string): boolean {
  return /^[a-z][a-z0-9+.-]*:/i.test(target) || target.startsWith('//');
}

/** The anchor GitBook puts after a group's title to keep its slug: `<a href="#slug" id="slug"></a>`. */
const GROUP_ANCHOR = /\s*<a href="#([^"]+)" id="\1"><\/a>\s*$/;

/** Parses SUMMARY.md (at `summaryPath`) into a tree of items; page paths resolved from its folder. */
export function parseSummary(text: string, summaryPath: string): TocItem[] {
  const dir = posix.dirname(summaryPath) === '.' ? '' : posix.dirname(summaryPath);
  const top: TocItem[] = [];
  let list = top; // where items at indent 0 go (the current group's children, or the top level)
  const stack: { indent: number; item: TocItem }[] = [];
  let inFence = false;
  for (const line of text.split(/\r?\n/)) {
    // A fence may open in a list item (`* ```yaml`: the source of a computed page).
    if (/^\s*(?:[*+-]\s+)?(```|~~~)/.test(line)) inFence = !inFence;
    if (inFence) continue;
    const heading = /^(#{2,6})\s+(.+?)\s*#*\s*$/.exec(line);
    if (heading) {
      // GitBook writes the slug of a group whose title says another one as an empty anchor.
      const anchor = GROUP_ANCHOR.exec(heading[2]!);
      const title = unescapeMarkdown(anchor ? heading[2]!.slice(0, anchor.index).trimEnd() : heading[2]!);
      const group: TocItem = { kind: 'group', title, ...(anchor ? { slug: anchor[1]! } : {}), children: [] };
      top.push(group);
      list = group.children;
      stack.length = 0;
      continue;
    }
    if (/^ {0,3}([*_-])(?:[ \t]*\1){2,}[ \t]*$/.test(line)) {
      // A rule ends the group: what follows is at the top level again.
      list = top;
      stack.length = 0;
      continue;
    }
    const m = ITEM.exec(line.replace(/\t/g, '    '));
    if (!m) continue;
    const indent = m[1]!.length;
    const title = unescapeMarkdown(m[2]!);
    const tail = { ...(m[4] ? { tail: m[4] } : {}), ...(escapeTitle(title) === m[2] ? {} : { label: m[2]! }) };
    // Backslash escapes hold in link targets too (`load\_name.md` is `load_name.md`).
    let target = m[3]!.replace(/^<|>$/g, '').replace(/\\([!-/:-@[-`{-~])/g, '$1');
    let item: TocItem;
    if (isExternal(target)) item = { kind: 'link', title, href: target, ...tail, ...(m[3] === target ? {} : { written: m[3]! }), children: [] };
    else {
      const hash = target.indexOf('#');
      const anchor = hash >= 0 ? target.slice(hash) : '';
      if (hash >= 0) target = target.slice(0, hash);
      let decoded = target;
      try {
        decoded = decodeURI(target);
      } catch {
        // keep the raw text
      }
      const path = repoPath(dir, decoded);
      if (path === undefined || !path) continue; // escapes the repository: ignored
      const written = relativeLink(summaryPath, path) + anchor === m[3] ? {} : { written: m[3]! };
      item = { kind: 'page', title, path, ...(anchor ? { href: anchor } : {}), ...tail, ...written, children: [] };
    }
    while (stack.length && stack[stack.length - 1]!.indent >= indent) stack.pop();
    (stack.length ? stack[stack.length - 1]!.item.children : list).push(item);
    stack.push({ indent, item });
  }
  return top;
}

/** The tree of a docs folder without SUMMARY.md: README.md first, then files and folders by name. */
export function folderTree(markdownPaths: string[], root: string, readme: string): TocItem[] {
  const under = (p: string) => (root ? p.slice(root.length + 1) : p);
  const rootReadme = repoPath(root, readme);
  const dirs = new Map<string, { files: string[]; subdirs: Set<string> }>();
  const dirOf = (d: string) => {
    let entry = dirs.get(d);
    if (!entry) dirs.set(d, (entry = { files: [], subdirs: new Set() }));
    return entry;
  };
  for (const path of markdownPaths) {
    const rel = under(path);
    const parts = rel.split('/');
    for (let i = 0; i < parts.length - 1; i++) dirOf(parts.slice(0, i).join('/')).subdirs.add(parts.slice(0, i + 1).join('/'));
    dirOf(parts.slice(0, -1).join('/')).files.push(path);
  }
  const titleOf = (name: string) => name.replace(/\.md$/i, '').replace(/[-_]+/g, ' ').replace(/^\w/, (c) => c.toUpperCase());
  const build = (d: string): TocItem[] => {
    const entry = dirs.get(d);
    if (!entry) return [];
    const items: { name: string; item: TocItem }[] = [];
    for (const f of entry.files) {
      const name = posix.basename(f);
      if (/^readme\.md$/i.test(name)) continue;
      items.push({ name, item: { kind: 'page', title: titleOf(name), path: f, children: [] } });
    }
    for (const sub of entry.subdirs) {
      const subEntry = dirs.get(sub)!;
      const readmeFile = subEntry.files.find((f) => /^readme\.md$/i.test(posix.basename(f)));
      const name = posix.basename(sub);
      if (name.startsWith('.')) continue;
      const item: TocItem = readmeFile
        ? { kind: 'page', title: titleOf(name), path: readmeFile, children: build(sub) }
        : { kind: 'group', title: titleOf(name), children: build(sub) };
      items.push({ name, item });
    }
    items.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
    return items.map((i) => i.item);
  };
  const out = build('');
  const first = markdownPaths.find((p) => p === rootReadme) ?? dirs.get('')?.files.find((f) => /^readme\.md$/i.test(posix.basename(f)));
  if (first) out.unshift({ kind: 'page', title: 'Introduction', path: first, children: [] });
  return out;
}

/** A relative link from one repository file to another. */
export function relativeLink(fromFile: string, toFile: string): string {
  const rel = posix.relative(posix.dirname(`/${fromFile}`), `/${toFile}`);
  return encodeURI(rel || posix.basename(toFile));
}

/** SUMMARY.md for a tree, GitBook's layout. */
export function writeSummary(items: TocItem[], summaryPath: string): string {
  const lines = ['# Table of contents', ''];
  let inGroup = false;
  const write = (list: TocItem[], depth: number, top = false) => {
    for (const item of list) {
      const indent = '  '.repeat(depth);
      if (item.kind === 'group') {
        if (lines[lines.length - 1] !== '') lines.push('');
        const slug = item.slug && item.slug !== slugify(item.title) ? ` <a href="#${item.slug}" id="${item.slug}"></a>` : '';
        lines.push(`## ${item.title}${slug}`, '');
        write(item.children, 0);
        inGroup = true;
        continue;
      }
      if (top && inGroup) {
        // Pages after a group that are not in it follow a rule, as GitBook writes them.
        if (lines[lines.length - 1] !== '') lines.push('');
        lines.push('***', '');
        inGroup = false;
      }
      const target = item.written ?? (item.kind === 'link' && !item.path ? item.href! : relativeLink(summaryPath, item.path!) + (item.href ?? ''));
      lines.push(`${indent}* [${item.label ?? escapeTitle(item.title)}](${target}${item.tail ?? ''})`);
      write(item.children, depth + 1);
    }
  };
  write(items, 0, true);
  return `${lines.join('\n').replace(/\n+$/, '')}\n`;
}

const TYPES: Record<string, string> = {
  png: 'image/png',
  jpg: 'image/jpeg',
  jpeg: 'image/jpeg',
  gif: 'image/gif',
  svg: 'image/svg+xml',
  webp: 'image/webp',
  pdf: 'application/pdf',
  json: 'application/json',
  yaml: 'application/yaml',
  yml: 'application/yaml',
  txt: 'text/plain',
  csv: 'text/csv',
  zip: 'application/zip',
  mp4: 'video/mp4',
};

export function contentTypeOf(name: string): string {
  return TYPES[posix.extname(name).slice(1).toLowerCase()] ?? 'application/octet-stream';
}

const FENCE = /^ {0,3}(`{3,}|~{3,})/;

/** A link target as an attribute value, escaped as GitBook escapes attributes (`'` is `&#x27;`). */
export function attributeValue(target: string): string {
  return escapeAttr(decodeEntities(target));
}

/** How a link target is written: in markdown `](target)`, or as an attribute `src="target"`. */
export type LinkPlace = 'markdown' | 'attribute';

/**
 * A repository path as GitBook writes it in a link: as it is in an attribute; in markdown, between
 * angle brackets when it holds spaces or parentheses (`](<../.gitbook/assets/image (1).png>)`).
 */
export function linkSpelling(path: string, place: LinkPlace): string {
  return place === 'markdown' && /[\s()<>]/.test(path) ? `<${path}>` : path;
}

/** A relative link from one repository file to another, unencoded (see linkSpelling). */
export function relativePath(fromFile: string, toFile: string): string {
  return posix.relative(posix.dirname(`/${fromFile}`), `/${toFile}`) || posix.basename(toFile);
}

/**
 * Rewrites the link targets of a page body: markdown links and images `](target)`, and the
 * `src`/`url`/`href` attributes of tags and HTML, outside code blocks and code spans. `map`
 * gets the target (angle brackets removed), where it is, and its text as written; it returns
 * the new text (written as given) or undefined to keep it.
 */
export function rewriteLinks(markdown: string, map: (target: string, place: LinkPlace, written: string) => string | undefined): string {
  let fence: string | null = null;
  return markdown
    .split('\n')
    .map((line) => {
      const marker = FENCE.exec(line)?.[1];
      if (fence) {
        if (marker && marker[0] === fence[0] && marker.length >= fence.length && line.trim() === marker) fence = null;
        return line;
      }
      if (marker) {
        fence = marker;
        return line;
      }
      if (!line.includes('](') && !line.includes('="')) return line;
      const spans: string[] = [];
      const masked = line.replace(/(`+)[^`]*?\1/g, (span) => `\u0000${spans.push(span) - 1}\u0000`);
      return masked
        .replace(/(\]\(\s*)(<[^>\n]*>|[^)\s]+)/g, (whole, lead: string, target: string) => {
          const next = map(target.replace(/^<|>$/g, ''), 'markdown', target);
          return next === undefined ? whole : `${lead}${markdownDestination(next)}`;
        })
        .replace(/(\b(?:src|url|href)=")([^"\n]+)(")/g, (whole, lead: string, target: string, end: string) => {
          // An attribute's value is HTML: `Filice&#x27;s Talk.png` names `Filice's Talk.png`.
          const next = map(decodeEntities(target), 'attribute', target);
          return next === undefined ? whole : `${lead}${attributeValue(next)}${end}`;
        })
        .replace(/\u0000(\d+)\u0000/g, (_, i: string) => spans[Number(i)]!);
    })
    .join('\n');
}

/**
 * A link destination as markdown must spell it: in `<…>` when it holds a space or a parenthesis
 * (`<../.gitbook/assets/diagram (1).svg>`, as GitBook writes it), else as it is.
 */
function markdownDestination(target: string): string {
  if (/^<.*>$/.test(target) || !/[\s()]/.test(target)) return target;
  // A title after the destination (`x.png "Caption"`) stays outside the brackets.
  const titled = /^(\S.*?)(\s+"[^"]*")$/.exec(target);
  const [path, title] = titled ? [titled[1]!, titled[2]!] : [target, ''];
  return /[\s()]/.test(path) ? `<${path}>${title}` : target;
}

/**
 * The repository file a page's `cover:` names: relative to the page, as GitBook writes it, else to
 * the root of the docs (`root`); undefined for a URL, a markdown file or a path to nothing.
 */
export function coverPath(pagePath: string, url: string, root: string, has: (path: string) => boolean): string | undefined {
  for (const from of [pagePath, repoPath(root, 'README.md') ?? 'README.md']) {
    const r = resolveRelative(from, url);
    if (r && has(r.path) && !/\.md$/i.test(r.path)) return r.path;
  }
  return undefined;
}

/** A relative link target split into its repository path and anchor; undefined for external ones. */
export function resolveRelative(fromFile: string, target: string): { path: string; anchor: string } | undefined {
  if (!target || isExternal(target) || target.startsWith('#') || target.startsWith('/')) return undefined;
  const hash = target.indexOf('#');
  const anchor = hash >= 0 ? target.slice(hash + 1) : '';
  let raw = hash >= 0 ? target.slice(0, hash) : target;
  raw = raw.replace(/\?.*$/, '');
  try {
    raw = decodeURI(raw);
  } catch {
    // keep the raw text
  }
  const dir = posix.dirname(fromFile) === '.' ? '' : posix.dirname(fromFile);
  const path = repoPath(dir, raw);
  return path ? { path, anchor } : undefined;
}
