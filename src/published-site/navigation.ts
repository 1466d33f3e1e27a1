import type { Db } from '../platform/db/database.ts';
import { ContentReader, sortPages, type FileEntry, type PageEntry, type Variables } from '../content/model.ts';

/**
 * The page tree of a revision as a site shows it: titles, paths, order, and the flat reading order
 * for previous/next links. Revisions are immutable, so a tree is built once per revision root and
 * kept (a bounded number of them): a page view costs one tree per published revision, not one
 * per request.
 */

export interface NavPage {
  id: string;
  title: string;
  path: string;
  emoji?: string;
  hidden: boolean;
  condition?: string;
  parent: string | null;
  children: NavPage[];
  entry: PageEntry;
  /** A link page to a page of the space: that page, and the anchor in it. */
  linkTo?: { page: NavPage; anchor: string };
}

export interface Navigation {
  root: string;
  top: NavPage[];
  byId: Map<string, NavPage>;
  byPath: Map<string, NavPage>;
  /** Pages in reading order (depth first). */
  order: NavPage[];
  files: Map<string, FileEntry>;
  variables: Variables;
}

const MAX_TREES = 32;
const trees = new Map<string, Promise<Navigation>>();

export function navigationOf(db: Db, root: string): Promise<Navigation> {
  let tree = trees.get(root);
  if (tree) {
    // Most recently used last.
    trees.delete(root);
    trees.set(root, tree);
    return tree;
  }
  tree = build(db, root);
  tree.catch(() => trees.delete(root));
  trees.set(root, tree);
  while (trees.size > MAX_TREES) trees.delete(trees.keys().next().value!);
  return tree;
}

async function build(db: Db, root: string): Promise<Navigation> {
  const { pages, files, variables } = await new ContentReader(db, root).all();
  const children = new Map<string | null, PageEntry[]>();
  for (const page of pages.values()) {
    const list = children.get(page.parent) ?? [];
    list.push(page);
    children.set(page.parent, list);
  }
  const byId = new Map<string, NavPage>();
  const byPath = new Map<string, NavPage>();
  const order: NavPage[] = [];
  const seen = new Set<string>();
  const walk = (parent: string | null, prefix: string): NavPage[] =>
    sortPages(children.get(parent) ?? [])
      .filter((p) => !seen.has(p.id) && seen.add(p.id))
      .map((entry) => {
        const path = prefix ? `${prefix}/${entry.slug}` : entry.slug;
        const node: NavPage = {
          id: entry.id,
          title: entry.title,
          path,
          ...(entry.emoji ? { emoji: entry.emoji } : {}),
          hidden: entry.hidden ?? false,
          ...(entry.condition ? { condition: entry.condition } : {}),
          parent,
          children: [],
          entry,
        };
        byId.set(node.id, node);
        // Only documents are read: a link leaves the site, a group is a heading of the tree
        // (its path shows its first page, below).
        if (entry.type === 'document') {
          byPath.set(path, node);
          order.push(node);
        }
        node.children = walk(entry.id, path);
        return node;
      });
  const top = walk(null, '');
  const firstDocument = (pages: NavPage[]): NavPage | undefined => {
    for (const p of pages) {
      const found = p.entry.type === 'document' ? p : firstDocument(p.children);
      if (found) return found;
    }
    return undefined;
  };
  for (const node of byId.values()) {
    const target = node.entry.type === 'link' ? node.entry.target : undefined;
    const to = target && target.kind !== 'url' ? byId.get(target.page) : undefined;
    if (to) node.linkTo = { page: to, anchor: target!.kind === 'anchor' ? target!.anchor : '' };
  }
  for (const group of byId.values()) {
    const first = group.entry.type === 'group' && !byPath.has(group.path) ? firstDocument(group.children) : undefined;
    if (first) byPath.set(group.path, first);
  }
  return { root, top, byId, byPath, order, files: new Map(files.map((f) => [f.id, f])), variables };
}
