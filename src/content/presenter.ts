import { createHash } from 'node:crypto';
import type { PageUrlScope, Urls } from '../platform/urls.ts';
import type { ContentReader, FileEntry, PageEntry } from './model.ts';
import { getDocuments, sortPages } from './model.ts';
import type { PageMetadata } from './markdown/front-matter.ts';
import { imageRefFromUrl } from './markdown/shared.ts';

/** Every layout option the official page shape requires, with GitBook's defaults. */
export const DEFAULT_LAYOUT = {
  width: 'default',
  cover: true,
  coverSize: 'hero',
  coverMask: 'none',
  title: true,
  description: true,
  tableOfContents: true,
  outline: true,
  pagination: true,
  metadata: true,
  tags: true,
  actions: true,
  anchors: true,
};

/** The path a page has in a git repository: README.md for a page with children, else <slug>.md. */
export function gitPath(path: string, hasChildren: boolean): string {
  return hasChildren ? `${path}/README.md` : `${path}.md`;
}

export function gitOid(text: string): string {
  // A blob id as git computes it, so a page's oid matches the file git sync would write.
  return createHash('sha1').update(`blob ${Buffer.byteLength(text)}\0${text}`).digest('hex');
}

export interface PagePresentOptions {
  /** Include git metadata (metadata=true, the default). */
  metadata: boolean;
}

export function presentPageEntry(
  urls: Urls,
  scope: PageUrlScope,
  page: PageEntry,
  path: string,
  children: object[],
  opts: PagePresentOptions & { markdown?: string | undefined; document?: object | undefined; source?: string | undefined },
) {
  if (page.type === 'group' || page.type === 'link') return presentNonDocument(page, path, children);
  // The official page shape carries its body as exactly one of `markdown` or `document`.
  const body = opts.document ? { document: opts.document } : { markdown: opts.markdown ?? '' };
  // The git blob is the stored markdown, whatever format (or evaluation) the read asked for.
  const source = opts.source ?? opts.markdown ?? '';
  return {
    ...body,
    id: page.id,
    title: page.title,
    kind: 'sheet' as const,
    type: 'document' as const,
    urls: { app: urls.pageApp(scope, path) },
    slug: page.slug,
    path,
    pages: children,
    layout: { ...DEFAULT_LAYOUT, ...(page.layout ?? {}) },
    tags: [],
    ...(page.doc ? { documentId: page.doc } : {}),
    ...(page.emoji ? { emoji: page.emoji } : {}),
    ...(page.icon ? { icon: page.icon } : {}),
    ...(page.description !== undefined ? { description: page.description } : {}),
    ...(page.linkTitle ? { linkTitle: page.linkTitle } : {}),
    createdAt: page.createdAt,
    updatedAt: page.updatedAt,
    hidden: page.hidden ?? false,
    noIndex: page.noIndex ?? false,
    noRobotsIndex: page.noRobotsIndex ?? false,
    ...(page.cover
      ? { cover: { ref: imageRefFromUrl(page.cover.url), yPos: page.cover.yPos, ...(page.cover.height !== undefined ? { height: page.cover.height } : {}) } }
      : {}),
    ...(page.metaLinks
      ? {
          metaLinks: {
            ...(page.metaLinks.canonical ? { canonical: { kind: 'url' as const, url: page.metaLinks.canonical } } : {}),
            ...(page.metaLinks.alternates ? { alternates: page.metaLinks.alternates.map((url) => ({ kind: 'url' as const, url })) } : {}),
          },
        }
      : {}),
    ...(page.variables ? { variables: page.variables } : {}),
    ...(opts.metadata ? { git: { oid: gitOid(source), path: gitPath(path, children.length > 0) } } : {}),
  };
}

/** A group (`RevisionPageGroup`: it holds pages, it has no body) or a link (`RevisionPageLink`). */
function presentNonDocument(page: PageEntry, path: string, children: object[]) {
  const base = {
    id: page.id,
    title: page.title,
    ...(page.emoji ? { emoji: page.emoji } : {}),
    ...(page.icon ? { icon: page.icon } : {}),
    ...(page.linkTitle ? { linkTitle: page.linkTitle } : {}),
    createdAt: page.createdAt,
    updatedAt: page.updatedAt,
    hidden: page.hidden ?? false,
  };
  if (page.type === 'link') {
    const target = page.target ?? { kind: 'url' as const, url: '' };
    return { ...base, kind: 'link' as const, type: 'link' as const, target, ...(target.kind === 'url' ? { href: target.url } : {}) };
  }
  return {
    ...base,
    kind: 'group' as const,
    type: 'group' as const,
    slug: page.slug,
    path,
    pages: children,
    noIndex: page.noIndex ?? false,
    noRobotsIndex: page.noRobotsIndex ?? false,
  };
}

export type PresentedPage = ReturnType<typeof presentPageEntry>;

/** The page's metadata as its front matter says it (markdown reads and exports write it back). */
export function frontMatterOf(page: PageEntry): PageMetadata {
  const out: PageMetadata = {};
  if (page.description !== undefined) out.description = page.description;
  if (page.icon) out.icon = page.icon;
  for (const k of ['hidden', 'noIndex', 'noRobotsIndex'] as const) if (page[k]) out[k] = true;
  if (page.cover) out.cover = page.cover;
  if (page.layout) out.layout = page.layout;
  if (page.metaLinks) out.metaLinks = page.metaLinks;
  if (page.condition) out.condition = page.condition;
  if (page.variables && Object.keys(page.variables).length) out.variables = page.variables;
  if (page.extra) out.extra = page.extra;
  if (page.keyOrder) out.keyOrder = page.keyOrder;
  return out;
}

/** The whole page tree of a revision, nested, in display order. */
export function presentPageTree(urls: Urls, scope: PageUrlScope, pages: Map<string, PageEntry>, opts: PagePresentOptions, markdown: Map<string, string>) {
  const byParent = new Map<string | null, PageEntry[]>();
  for (const page of pages.values()) {
    const list = byParent.get(page.parent) ?? [];
    list.push(page);
    byParent.set(page.parent, list);
  }
  const build = (parent: string | null, prefix: string): PresentedPage[] =>
    sortPages(byParent.get(parent) ?? []).map((page) => {
      const path = prefix ? `${prefix}/${page.slug}` : page.slug;
      const children = build(page.id, path);
      return presentPageEntry(urls, scope, page, path, children, { ...opts, markdown: page.doc ? markdown.get(page.doc) : '' });
    });
  return build(null, '');
}

export function presentFile(urls: Urls, file: FileEntry, opts: PagePresentOptions) {
  return {
    id: file.id,
    name: file.name,
    contentType: file.contentType,
    downloadURL: urls.api(`/blobs/${file.blob}/${encodeURIComponent(file.name)}`),
    size: file.size,
    ...(file.dimensions ? { dimensions: file.dimensions } : {}),
    ...(opts.metadata ? { git: { oid: file.blob, path: `.gitbook/assets/${file.name}` } } : {}),
  };
}

/** One page with its children (as a tree below it) and its path, for single-page reads. */
export async function loadPresentedPage(
  urls: Urls,
  scope: PageUrlScope,
  reader: ContentReader,
  page: PageEntry,
  opts: PagePresentOptions & { markdown?: string; document?: object; source?: string },
) {
  const path = await reader.path(page);
  // Children sets are trusted to form a tree, but a damaged one (a page listed below itself) must
  // end the walk rather than loop: each page is visited once.
  const descendants: PageEntry[] = [];
  const seen = new Set<string>([page.id]);
  const below = new Map<string, PageEntry[]>();
  const queue = [page];
  while (queue.length) {
    const parent = queue.shift()!;
    const children = (await reader.children(parent.id)).filter((child) => !seen.has(child.id));
    for (const child of children) seen.add(child.id);
    below.set(parent.id, children);
    descendants.push(...children);
    queue.push(...children);
  }
  const texts = await getDocuments(reader.db, descendants.map((d) => d.doc ?? ''));
  const build = async (parent: PageEntry, prefix: string): Promise<PresentedPage[]> => {
    const children = below.get(parent.id) ?? [];
    return Promise.all(
      children.map(async (child) =>
        presentPageEntry(urls, scope, child, `${prefix}/${child.slug}`, await build(child, `${prefix}/${child.slug}`), {
          ...opts,
          document: undefined,
          source: undefined,
          markdown: child.doc ? (texts.get(child.doc) ?? '') : '',
        }),
      ),
    );
  };
  return presentPageEntry(urls, scope, page, path, await build(page, path), opts);
}
