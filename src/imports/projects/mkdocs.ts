import { posix } from 'node:path';
import { parse as parseYaml } from 'yaml';
import type { Warn } from '../markdown.ts';
import { folderNav, isIndex, isMarkdown, join, type NavItem, type Project, type SourceTree } from './nav.ts';

/**
 * An MkDocs (or Material for MkDocs) project: mkdocs.yml's `nav` (its Python tags such as
 * `!!python/name:` tolerated: they are dropped before reading), `docs_dir`; without a nav, the
 * folder structure as MkDocs builds it.
 */

export function findMkdocs(files: SourceTree): string | undefined {
  const configs = [...files.keys()].filter((p) => /(^|\/)mkdocs\.ya?ml$/.test(p)).sort((a, b) => a.length - b.length);
  return configs[0];
}

export function readMkdocsConfig(text: string, warn: Warn): Record<string, unknown> {
  // Python-specific tags (`!!python/name:…`, `!!python/object/apply:…`) and MkDocs' own (`!ENV`, `!relative`).
  const cleaned = text.replace(/!!python\/[^\s,\]}]+/g, '').replace(/!(ENV|relative)\b/g, '');
  try {
    const parsed = parseYaml(cleaned, { logLevel: 'silent' } as never);
    return parsed && typeof parsed === 'object' ? (parsed as Record<string, unknown>) : {};
  } catch (err) {
    warn(`mkdocs.yml cannot be read (${(err as Error).message.split('\n')[0]}): the folder structure is used instead`);
    return {};
  }
}

export function mkdocsProject(files: SourceTree, configPath: string, warn: Warn): Project {
  const root = posix.dirname(configPath).replace(/^\.$/, '');
  const config = readMkdocsConfig(files.get(configPath)!.toString('utf8'), warn);
  const docsDir = join(root, typeof config.docs_dir === 'string' ? config.docs_dir : 'docs');
  const project = (nav: NavItem[]): Project => ({ kind: 'mkdocs', dialect: 'mkdocs', docsDir, rootDir: root, nav });
  if (!Array.isArray(config.nav)) return project(folderNav(files, docsDir, 0));

  const page = (target: string, title?: string): NavItem | undefined => {
    if (/^[a-z][a-z0-9+.-]*:/i.test(target)) return { kind: 'link', title: title ?? target, href: target };
    const path = join(docsDir, target);
    if (!files.has(path) || !isMarkdown(path)) {
      warn(`mkdocs.yml nav: "${target}" not found`);
      return undefined;
    }
    return { kind: 'page', path, ...(title ? { title } : {}), children: [] };
  };
  const items = (list: unknown[], depth: number): NavItem[] =>
    list.flatMap((entry): NavItem[] => {
      if (typeof entry === 'string') return [page(entry)].filter((x): x is NavItem => !!x);
      if (!entry || typeof entry !== 'object') return [];
      return Object.entries(entry as Record<string, unknown>).flatMap(([title, value]): NavItem[] => {
        if (typeof value === 'string') return [page(value, title)].filter((x): x is NavItem => !!x);
        if (!Array.isArray(value)) return [];
        const children = items(value, depth + 1);
        // A section whose first entry is its index page (Material's navigation.indexes) has that page.
        const first = children[0];
        if (first && first.kind === 'page' && first.path && isIndex(first.path) && !first.children.length) {
          return [{ kind: 'page', path: first.path, title, children: children.slice(1) }];
        }
        return [depth === 0 ? { kind: 'group', title, children } : { kind: 'page', title, children }];
      });
    });
  return project(items(config.nav, 0));
}
