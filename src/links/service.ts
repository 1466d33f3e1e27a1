import { posix } from 'node:path';
import type { Ctx } from '../platform/context.ts';
import type { Db } from '../platform/db/database.ts';
import type { SpaceRow } from '../platform/db/schema.ts';
import { BadRequestError, NotFoundError } from '../platform/errors.ts';
import { DEFAULT_LIMIT, type PageRequest } from '../platform/paging.ts';
import { loadSpace } from '../spaces/access.ts';
import { linkTargetsOf } from '../content/convert.ts';
import { refFromUrl } from '../content/markdown/shared.ts';
import { ContentReader, getDocuments, sortPages, type PageEntry } from '../content/model.ts';
import { currentContent, loadRevision, type ContentTarget } from '../content/service.ts';
import { openChangeRequestRevisions } from '../change-requests/store.ts';

/**
 * Link checking: every link of the pages of a revision, resolved against that revision's pages,
 * anchors and files. Lists are computed in memory from the revision and paged by position.
 */

export type LinkStatus = 'ok' | 'broken' | 'in-app';

export type TargetReference =
  | { kind: 'page'; page: string; space: string }
  | { kind: 'anchor'; anchor: string; page: string; space: string }
  | { kind: 'file'; file: string; space: string }
  | { kind: 'space'; space: string }
  | { kind: 'url'; url: string };

const OTHER_REFERENCE = /^\/(?:spaces\/[^/#?]+\/)?(?:users|collections|openapi|reusable-contents|tags)\//;

export interface PageSummary {
  id: string;
  title: string;
  path: string;
}

export interface LinkItem {
  status: LinkStatus;
  relation: 'reference';
  url: string;
  organization: string;
  space: string;
  page: PageSummary;
  targetReference: TargetReference;
}

// Documents are stored by hash, so what is parsed out of one never changes: keep a bounded cache.
const CACHE_SIZE = 5000;
const linkCache = new Map<string, string[]>();
const anchorCache = new Map<string, Set<string>>();

function remember<T>(cache: Map<string, T>, key: string, value: T): void {
  if (cache.has(key)) return;
  if (cache.size >= CACHE_SIZE) cache.delete(cache.keys().next().value!);
  cache.set(key, value);
}

const MAY_LINK = /\]|<|@|https?:|www\.|url=/i;

/** One revision's content loaded for link resolution. */
class RevisionIndex {
  readonly paths = new Map<string, string>();
  readonly byPath = new Map<string, string>();
  readonly hasChildren = new Set<string>();
  /** Pages in display order (depth first). */
  readonly ordered: PageEntry[] = [];

  private constructor(
    private readonly db: Db,
    readonly space: SpaceRow,
    readonly revision: string,
    readonly pages: Map<string, PageEntry>,
    readonly files: Set<string>,
    readonly markdown: Map<string, string>,
  ) {
    const children = new Map<string | null, PageEntry[]>();
    for (const p of pages.values()) {
      const parent = p.parent && pages.has(p.parent) ? p.parent : null;
      if (parent) this.hasChildren.add(parent);
      const siblings = children.get(parent);
      if (siblings) siblings.push(p);
      else children.set(parent, [p]);
    }
    const walk = (parent: string | null, prefix: string) => {
      for (const p of sortPages(children.get(parent) ?? [])) {
        const path = prefix ? `${prefix}/${p.slug}` : p.slug;
        this.paths.set(p.id, path);
        this.byPath.set(path, p.id);
        this.ordered.push(p);
        walk(p.id, path);
      }
    };
    walk(null, '');
  }

  /**
   * Loads a revision's pages and files, with the markdown of the pages in `withMarkdown` (every page
   * when omitted); other pages' markdown is read when an anchor into them is checked.
   */
  static async load(ctx: Ctx, space: SpaceRow, revision: { id: string; root: string }, withMarkdown?: string[]): Promise<RevisionIndex> {
    const { pages, files } = await new ContentReader(ctx.db, revision.root).all();
    const wanted = withMarkdown ? withMarkdown.map((id) => pages.get(id)) : [...pages.values()];
    const markdown = await getDocuments(ctx.db, wanted.map((p) => p?.doc ?? ''));
    return new RevisionIndex(ctx.db, space, revision.id, pages, new Set(files.map((f) => f.id)), markdown);
  }

  summary(page: PageEntry): PageSummary {
    return { id: page.id, title: page.title, path: this.paths.get(page.id) ?? page.slug };
  }

  /** Reads a page's links and anchors in one parse (a large page on a worker thread) and caches both by document. */
  private async targets(doc: string, markdown: string): Promise<void> {
    if (linkCache.has(doc) && anchorCache.has(doc)) return;
    const { urls, anchors } = await linkTargetsOf(markdown);
    remember(linkCache, doc, urls);
    remember(anchorCache, doc, new Set(anchors));
  }

  async urls(page: PageEntry): Promise<string[]> {
    if (!page.doc) return [];
    const markdown = this.markdown.get(page.doc) ?? '';
    // Every way to write a link needs one of these: most pages of a large space have none, skip parsing them.
    if (!MAY_LINK.test(markdown)) return [];
    await this.targets(page.doc, markdown);
    return linkCache.get(page.doc) ?? [];
  }

  async anchors(pageId: string): Promise<Set<string>> {
    const page = this.pages.get(pageId);
    if (!page?.doc) return new Set();
    if (!this.markdown.has(page.doc) && !anchorCache.has(page.doc)) {
      for (const [hash, text] of await getDocuments(this.db, [page.doc])) this.markdown.set(hash, text);
    }
    await this.targets(page.doc, this.markdown.get(page.doc) ?? '');
    return anchorCache.get(page.doc) ?? new Set();
  }

  /** The page a relative markdown path (`../guide/install.md#x`) names, seen from `from`. */
  resolvePath(from: PageEntry, target: string): string | undefined {
    const own = this.paths.get(from.id) ?? from.slug;
    // A page with children is written as `<path>/README.md`, others as `<path>.md`.
    const dir = target.startsWith('/') ? '/' : this.hasChildren.has(from.id) ? `/${own}` : posix.dirname(`/${own}`);
    let path = posix.normalize(posix.join(dir, decodeURIComponentSafe(target)));
    path = path.replace(/\.md$/i, '').replace(/(^|\/)README$/i, '').replace(/^\/+|\/+$/g, '');
    return this.byPath.get(path);
  }
}

function decodeURIComponentSafe(s: string): string {
  try {
    return decodeURIComponent(s);
  } catch {
    return s;
  }
}

/** Resolves links against a revision, and against other spaces' current content when a link names one. */
class LinkResolver {
  private readonly others = new Map<string, Promise<RevisionIndex | undefined>>();
  private readonly origins: Set<string>;

  constructor(
    private readonly ctx: Ctx,
    readonly index: RevisionIndex,
  ) {
    this.origins = new Set([originOf(ctx.config.appUrl), originOf(ctx.config.publicUrl)].filter((o): o is string => !!o));
  }

  /** A linked space other than this one, only when the caller can read it (else its links count as broken). */
  private other(spaceId: string): Promise<RevisionIndex | undefined> {
    let found = this.others.get(spaceId);
    if (!found) {
      found = (async () => {
        try {
          const { space } = await loadSpace(this.ctx, spaceId);
          return await RevisionIndex.load(this.ctx, space, await loadRevision(this.ctx.db, space.id, space.revision_id), []);
        } catch (err) {
          if (err instanceof NotFoundError) return undefined;
          throw err;
        }
      })();
      this.others.set(spaceId, found);
    }
    return found;
  }

  async resolve(from: PageEntry, url: string): Promise<{ status: LinkStatus; targetReference: TargetReference }> {
    const here = this.index;
    const ref = refFromUrl(url);
    const scope = async (spaceId: string | undefined) => (!spaceId || spaceId === here.space.id ? here : await this.other(spaceId));
    switch (ref.kind) {
      case 'page': {
        const index = await scope(ref.space);
        const space = ref.space ?? here.space.id;
        return { status: index?.pages.has(ref.page) ? 'ok' : 'broken', targetReference: { kind: 'page', page: ref.page, space } };
      }
      case 'anchor': {
        const index = await scope(ref.space);
        const space = ref.space ?? here.space.id;
        const page = ref.page ?? from.id;
        const ok = !!index?.pages.has(page) && (await index.anchors(page)).has(ref.anchor);
        return { status: ok ? 'ok' : 'broken', targetReference: { kind: 'anchor', anchor: ref.anchor, page, space } };
      }
      case 'file': {
        const index = await scope(ref.space);
        const space = ref.space ?? here.space.id;
        return { status: index?.files.has(ref.file) ? 'ok' : 'broken', targetReference: { kind: 'file', file: ref.file, space } };
      }
      default:
        break;
    }
    const external = /^[a-z][a-z0-9+.-]*:/i.test(url) || url.startsWith('//');
    if (external) {
      const origin = originOf(url.startsWith('//') ? `https:${url}` : url);
      return { status: origin && this.origins.has(origin) ? 'in-app' : 'ok', targetReference: { kind: 'url', url } };
    }
    // Other content references (written `/spaces/<id>`, `/users/<id>`, …) are not pages of a revision.
    const space = /^\/spaces\/([^/#?]+)\/?$/.exec(url);
    if (space) {
      const found = space[1] === here.space.id || !!(await this.other(space[1]!));
      return { status: found ? 'ok' : 'broken', targetReference: { kind: 'space', space: space[1]! } };
    }
    if (OTHER_REFERENCE.test(url)) return { status: 'ok', targetReference: { kind: 'url', url } };
    // A relative path (as written by Git sync): a page of this revision, or nothing.
    const [path = '', anchor] = splitOnce(url.split('?')[0]!, '#');
    const pageId = path === '' ? from.id : here.resolvePath(from, path);
    if (!pageId) return { status: 'broken', targetReference: { kind: 'url', url } };
    if (anchor) {
      const ok = (await here.anchors(pageId)).has(decodeURIComponentSafe(anchor));
      return { status: ok ? 'ok' : 'broken', targetReference: { kind: 'anchor', anchor, page: pageId, space: here.space.id } };
    }
    return { status: 'ok', targetReference: { kind: 'page', page: pageId, space: here.space.id } };
  }

  async linksOf(page: PageEntry): Promise<LinkItem[]> {
    const out: LinkItem[] = [];
    for (const url of await this.index.urls(page)) {
      const resolved = await this.resolve(page, url);
      out.push({
        ...resolved,
        relation: 'reference',
        url,
        organization: this.index.space.organization_id,
        space: this.index.space.id,
        page: this.index.summary(page),
      });
    }
    return out;
  }
}

function splitOnce(s: string, sep: string): [string, string | undefined] {
  const i = s.indexOf(sep);
  return i < 0 ? [s, undefined] : [s.slice(0, i), s.slice(i + 1)];
}

function originOf(url: string): string | undefined {
  try {
    const parsed = new URL(url);
    return parsed.protocol === 'http:' || parsed.protocol === 'https:' ? parsed.origin : undefined;
  } catch {
    return undefined;
  }
}

/** Pages by position: the cursor is the base64url offset of the next item. */
function pageThrough<T>(all: T[], request: PageRequest): { items: T[]; count: number; next?: { page: string } } {
  const limit = request.limit ?? DEFAULT_LIMIT;
  const cursor = request.page ? Buffer.from(request.page, 'base64url').toString() : '0';
  if (!/^\d{1,9}$/.test(cursor)) throw new BadRequestError('Invalid "page" cursor: pass the value of "next.page" from the previous response');
  const start = Number(cursor);
  const items = all.slice(start, start + limit);
  const next = start + limit < all.length ? { page: Buffer.from(String(start + limit)).toString('base64url') } : undefined;
  return { items, count: all.length, ...(next ? { next } : {}) };
}

export interface LinkQuery extends PageRequest {
  status?: LinkStatus | undefined;
}

/**
 * Broken links in the heads of the space's open change requests: the links of the pages each one
 * changed relative to its base (restricted to `onlyPage` when given) that are broken in its head.
 */
async function brokenInChangeRequests(ctx: Ctx, space: SpaceRow, onlyPage?: string): Promise<number> {
  const crs = await openChangeRequestRevisions(ctx.db, space.organization_id, space.id);
  let broken = 0;
  for (const cr of crs) {
    const [base, head] = await Promise.all([
      loadRevision(ctx.db, space.id, cr.revision_merged_ancestor ?? cr.revision_initial),
      loadRevision(ctx.db, space.id, cr.revision),
    ]);
    if (base.root === head.root) continue;
    const reader = new ContentReader(ctx.db, head.root);
    const changed = new Set<string>();
    for (const [key, , after] of await reader.tree.diff(base.root, head.root)) {
      if (key.startsWith('p:') && after) changed.add(key.slice(2));
    }
    if (onlyPage !== undefined) {
      if (!changed.has(onlyPage)) continue;
      changed.clear();
      changed.add(onlyPage);
    }
    if (changed.size === 0) continue;
    const resolver = new LinkResolver(ctx, await RevisionIndex.load(ctx, space, head, [...changed]));
    for (const id of changed) {
      const page = resolver.index.pages.get(id);
      if (page) broken += (await resolver.linksOf(page)).filter((l) => l.status === 'broken').length;
    }
  }
  return broken;
}

async function listing(ctx: Ctx, target: ContentTarget, query: LinkQuery, onlyPage?: string) {
  const resolver = new LinkResolver(ctx, await RevisionIndex.load(ctx, target.space, target.revision, onlyPage === undefined ? undefined : [onlyPage]));
  let pages = resolver.index.ordered;
  if (onlyPage !== undefined) {
    const page = resolver.index.pages.get(onlyPage);
    if (!page) throw new NotFoundError('Page');
    pages = [page];
  }
  const all: LinkItem[] = [];
  for (const page of pages) all.push(...(await resolver.linksOf(page)));
  const filtered = query.status ? all.filter((l) => l.status === query.status) : all;
  const stats = {
    total: all.length,
    broken: {
      total: all.filter((l) => l.status === 'broken').length,
      changeRequest: await brokenInChangeRequests(ctx, target.space, onlyPage),
    },
  };
  return { ...pageThrough(filtered, query), stats };
}

/** Every link of every page of the space's current revision. */
export async function listSpaceLinks(ctx: Ctx, spaceId: string, query: LinkQuery) {
  return listing(ctx, await currentContent(ctx, spaceId), query);
}

/** The links of one page of the space's current revision. */
export async function listPageLinks(ctx: Ctx, spaceId: string, pageId: string, query: LinkQuery) {
  return listing(ctx, await currentContent(ctx, spaceId), query, pageId);
}

/** The pages of the space's current revision that reference a file (by link, image or cover). */
export async function listFileBacklinks(ctx: Ctx, spaceId: string, fileId: string, query: PageRequest) {
  const target = await currentContent(ctx, spaceId);
  const index = await RevisionIndex.load(ctx, target.space, target.revision);
  if (!index.files.has(fileId)) throw new NotFoundError('File');
  const refersTo = (ref: unknown) => {
    const r = ref as { kind?: string; file?: string; space?: string } | undefined;
    return r?.kind === 'file' && r.file === fileId && (!r.space || r.space === target.space.id);
  };
  const pages: PageEntry[] = [];
  for (const page of index.ordered) {
    const cover = page.cover as { ref?: unknown; refDark?: unknown } | undefined;
    if ((cover && (refersTo(cover.ref) || refersTo(cover.refDark))) || (await index.urls(page)).some((url) => refersTo(refFromUrl(url)))) {
      pages.push(page);
    }
  }
  const items = pages.map((page) => ({
    kind: 'page' as const,
    organization: target.space.organization_id,
    space: target.space.id,
    versionContext: { type: 'revision' as const, revision: target.revision.id },
    page: index.summary(page),
    file: fileId,
  }));
  return pageThrough(items, query);
}
