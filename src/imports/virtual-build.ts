import { posix } from 'node:path';
import { slugify } from '../content/model.ts';
import { docusaurusToGitbook, inlineReferenceLinks, mkdocsToGitbook, splitFrontMatter, splitHints } from './markdown.ts';
import { isIndex, isMarkdown, join, titleOf, type NavItem, type Project, type SourceTree } from './projects/nav.ts';
import { VirtualRepo } from './virtual-repo.ts';

/**
 * A recognised project turned into a virtual GitBook repository: each page of its navigation a
 * Markdown file with GitBook blocks, SUMMARY.md its navigation, referenced images and attachments
 * under `.gitbook/assets/`, links rewritten to the files' new places.
 */

export interface ImportWarning {
  /** The source file the warning is about (absent: the whole import). */
  page?: string;
  message: string;
}

export interface BuiltRepo {
  repo: VirtualRepo;
  pagesFound: number;
  pagesConverted: number;
  pagesFailed: number;
  warnings: ImportWarning[];
  /** Source path of each virtual page file (for the run's `pages`). */
  sources: Map<string, string>;
}

const EXTERNAL = /^([a-z][a-z0-9+.-]*:|\/\/|#)/i;

/** Every link target of Markdown outside fenced code, rewritten by `map` (undefined keeps it). */
export function rewriteTargets(markdown: string, map: (target: string) => string | undefined): string {
  let fence: string | null = null;
  return markdown
    .split('\n')
    .map((line) => {
      const f = /^\s*(`{3,}|~{3,})/.exec(line);
      if (fence !== null) {
        if (f && f[1]![0] === fence[0] && f[1]!.length >= fence.length) fence = null;
        return line;
      }
      if (f) {
        fence = f[1]!;
        return line;
      }
      return line
        .replace(/(\]\()(<[^>]*>|[^)\s]+)((?:\s+(?:"[^"]*"|'[^']*'))?\s*\))/g, (whole, a: string, target: string, b: string) => {
          const raw = target.replace(/^<|>$/g, '');
          const next = map(raw);
          return next === undefined ? whole : `${a}${/\s/.test(next) ? `<${next}>` : next}${b}`;
        })
        .replace(/^(\s{0,3}\[[^\]]+\]:\s*)(\S+)/, (whole, a: string, target: string) => {
          const next = map(target);
          return next === undefined ? whole : `${a}${next}`;
        })
        .replace(/(<img\b[^>]*?\bsrc=)(["'])([^"']+)\2/gi, (whole, a: string, q: string, target: string) => {
          const next = map(target);
          return next === undefined ? whole : `${a}${q}${next}${q}`;
        });
    })
    .join('\n');
}

const escapeTitle = (t: string) => t.replace(/([\\`*_[\]<>])/g, '\\$1');
const encodePath = (p: string) => p.split('/').map((s) => encodeURIComponent(s)).join('/');

export function buildVirtualRepo(files: SourceTree, project: Project, opts: { cancelled?: () => void } = {}): BuiltRepo {
  const warnings: ImportWarning[] = [];
  const out = new Map<string, Buffer | string>();
  const taken = new Set<string>(['SUMMARY.md', '.gitbook.yaml']);
  const virtualOf = new Map<string, string>(); // source page path → virtual path
  const sources = new Map<string, string>();

  const claim = (wanted: string): string => {
    let path = wanted;
    for (let n = 2; taken.has(path.toLowerCase()) || taken.has(path); n++) path = wanted.replace(/(\.[^./]+)?$/, `-${n}$1`);
    taken.add(path);
    return path;
  };
  const relToDocs = (path: string) => {
    for (const base of [project.docsDir, project.rootDir]) if (!base || path.startsWith(`${base}/`)) return base ? path.slice(base.length + 1) : path;
    return path;
  };
  // Virtual paths of pages: their place under the docs folder, `.md`, index.md as README.md.
  const assign = (items: NavItem[], parentDir: string) => {
    for (const item of items) {
      if (item.kind !== 'page') {
        if (item.kind === 'group') assign(item.children, parentDir);
        continue;
      }
      if (item.path && !virtualOf.has(item.path)) {
        let rel = relToDocs(item.path).replace(/\.(mdx|markdown)$/i, '.md');
        if (isIndex(rel)) rel = join(posix.dirname(rel), 'README.md');
        virtualOf.set(item.path, claim(rel));
      }
      const dir = item.path ? posix.dirname(virtualOf.get(item.path)!).replace(/^\.$/, '') : parentDir;
      assign(item.children, dir);
    }
  };
  assign(project.nav, '');

  // Pages without a file of their own (sections): a README.md in their children's folder when free.
  const firstPath = (items: NavItem[]): string | undefined => {
    for (const i of items) {
      if (i.kind === 'page' && i.path) return virtualOf.get(i.path);
      if (i.kind !== 'link') {
        const p = firstPath(i.children);
        if (p) return p;
      }
    }
    return undefined;
  };
  const generated = new Map<NavItem, string>();
  const generate = (items: NavItem[]) => {
    for (const item of items) {
      if (item.kind === 'link') continue;
      if (item.kind === 'page' && !item.path) {
        const first = firstPath(item.children);
        const dir = first ? posix.dirname(first).replace(/^\.$/, '') : '';
        const readme = join(dir, 'README.md');
        const path = dir && !taken.has(readme) && posix.basename(dir) === slugify(item.title ?? '').replace(/-/g, '-') ? claim(readme) : claim(join(dir, `${slugify(item.title ?? 'section')}.md`));
        generated.set(item, path);
        out.set(path, `# ${item.title ?? 'Section'}\n`);
      }
      generate(item.children);
    }
  };
  generate(project.nav);

  // Assets referenced by pages: under .gitbook/assets, one name each.
  const assetOf = new Map<string, string>();
  const asset = (source: string): string => {
    let path = assetOf.get(source);
    if (!path) {
      path = claim(`.gitbook/assets/${posix.basename(source)}`);
      assetOf.set(source, path);
      out.set(path, files.get(source)!);
    }
    return path;
  };
  const staticDir = join(project.rootDir, 'static');
  const resolve = (from: string, target: string): string | undefined => {
    const clean = target.split(/[?#]/)[0]!;
    let decoded: string;
    try {
      decoded = decodeURI(clean);
    } catch {
      decoded = clean;
    }
    const bases = decoded.startsWith('/')
      ? [join(staticDir, decoded.slice(1)), join(project.docsDir, decoded.slice(1)), join(project.docsDir, decoded.replace(/^\/docs\//, '')), join(project.rootDir, decoded.slice(1))]
      : [join(posix.dirname(from), decoded)];
    for (const base of bases) {
      if (base.startsWith('..')) continue;
      const b = base.replace(/\/$/, '');
      for (const c of [b, b.replace(/\.md$/i, ".mdx"), `${b}.md`, `${b}.mdx`, `${b}/README.md`, `${b}/index.md`, `${b}/index.mdx`]) if (files.has(c)) return c;
    }
    return project.resolveRoute?.(from, decoded);
  };

  let converted = 0;
  let failed = 0;
  const pageTitles = new Map<string, string>();
  const decoder = new TextDecoder('utf-8', { fatal: true });
  for (const [source, virtual] of virtualOf) {
    opts.cancelled?.();
    const warn = (message: string) => warnings.push({ page: source, message });
    let text: string;
    try {
      text = decoder.decode(files.get(source)!);
    } catch {
      failed++;
      warn('not UTF-8 text: the page was imported empty');
      out.set(virtual, `# ${titleOf(posix.basename(source))}\n`);
      continue;
    }
    try {
      const { data, body: raw } = splitFrontMatter(text, warn);
      let body =
        project.dialect === 'docusaurus'
          ? docusaurusToGitbook(raw, warn)
          : project.dialect === 'mkdocs'
            ? mkdocsToGitbook(raw, warn)
            : project.dialect === 'gitbook'
              ? raw
              : mkdocsToGitbook(docusaurusToGitbook(raw, warn, { mdx: /\.mdx$/i.test(source) }), warn);
      if (project.dialect !== 'gitbook') body = splitHints(inlineReferenceLinks(body), warn);
      body = rewriteTargets(body, (target) => {
        if (EXTERNAL.test(target) || !target) return undefined;
        const found = resolve(source, target);
        const hash = target.includes('#') ? target.slice(target.indexOf('#')) : '';
        if (!found) {
          if (/\.(md|mdx)$|^\.\.?\//.test(target.split(/[?#]/)[0]!)) warn(`link to "${target}": no such file in the import`);
          return undefined;
        }
        const to = virtualOf.get(found) ?? (isMarkdown(found) ? undefined : asset(found));
        if (!to) {
          warn(`link to "${target}": that page is not in the navigation, the link is kept as written`);
          return undefined;
        }
        const rel = posix.relative(posix.dirname(virtual), to) || posix.basename(to);
        return encodePath(rel) + hash;
      });
      const heading = /^\s*#\s+(.+?)\s*#*\s*(\r?\n|$)/.exec(body);
      const title = (typeof data.title === 'string' && data.title) || heading?.[1] || titleOf(posix.basename(source === virtual ? virtual : isIndex(source) ? posix.dirname(source) || 'Home' : source));
      if (heading) body = body.slice(heading[0].length);
      pageTitles.set(source, title);
      const front = typeof data.description === 'string' ? `---\ndescription: ${JSON.stringify(data.description)}\n---\n\n` : '';
      out.set(virtual, `${front}# ${title}\n\n${body.replace(/^\s*\n/, '')}`);
      converted++;
    } catch (err) {
      failed++;
      warn(`could not be converted (${(err as Error).message}): the page was imported empty`);
      out.set(virtual, `# ${titleOf(posix.basename(source))}\n`);
    }
    sources.set(virtual, source);
  }

  // SUMMARY.md: top-level pages, groups as headings (a rule returns to the top level).
  const lines = ['# Table of contents', ''];
  let inGroup = false;
  const write = (items: NavItem[], depth: number) => {
    for (const item of items) {
      const pad = '  '.repeat(depth);
      if (item.kind === 'link') lines.push(`${pad}* [${escapeTitle(item.title)}](${item.href})`);
      else if (item.kind === 'group') {
        lines.push('', `## ${item.title}`, '');
        inGroup = true;
        write(item.children, 0);
        continue;
      } else {
        const path = item.path ? virtualOf.get(item.path)! : generated.get(item)!;
        const title = item.title ?? (item.path ? pageTitles.get(item.path) : undefined) ?? 'Page';
        lines.push(`${pad}* [${escapeTitle(title)}](${encodePath(path)})`);
        write(item.children, depth + 1);
      }
    }
  };
  // Top-level items after a group go after a rule.
  for (const item of project.nav) {
    if (item.kind !== 'group' && inGroup) {
      lines.push('', '---', '');
      inGroup = false;
    }
    write([item], 0);
  }
  out.set('SUMMARY.md', `${lines.join('\n')}\n`);
  const found = virtualOf.size + generated.size;
  return { repo: new VirtualRepo(out), pagesFound: found, pagesConverted: converted + generated.size, pagesFailed: failed, warnings, sources };
}
