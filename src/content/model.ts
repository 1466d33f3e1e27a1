import { createHash } from 'node:crypto';
import { generateKeyBetween } from 'fractional-indexing';
import type { Db } from '../platform/db/database.ts';
import { BadRequestError } from '../platform/errors.ts';
import { newId } from '../platform/ids.ts';
import { slugFrom } from '../platform/slug.ts';
import type { PageLayout, PageMetadata } from './markdown/front-matter.ts';
import { EMPTY, Tree, type Value } from './tree.ts';
import { documentsByHash, insertDocuments, recordSpaceDocuments } from './store.ts';

/**
 * The content of a revision, stored in a Tree:
 *   p:<pageId>      PageEntry (metadata, parent, position among siblings, markdown hash)
 *   k:<parentId>    sorted ids of the children of a page ('' for the top level): a set, ordered for
 *                   display by each child's `pos` (a fractional key), so concurrent inserts merge
 *                   without conflicts and in the same order whichever merges first
 *   f:<fileId>      FileEntry (bytes live in `blobs`, by hash)
 *   v               variables of the space
 *   r:<id>          ReusableContentEntry (its markdown in `documents`, like a page's)
 * Page markdown lives in `documents`, by hash: an unchanged page is never stored twice.
 */

/**
 * Kinds of pages (the official RevisionPage types Folio stores): a document has a body; a group
 * (a `## Heading` of SUMMARY.md) only holds pages, at the top level; a link points elsewhere.
 */
export type PageType = 'document' | 'group' | 'link';

/** Where a link page points: a URL, or a page of the space (an anchor in it): official ContentRefs. */
export type LinkTarget = { kind: 'url'; url: string } | { kind: 'page'; page: string } | { kind: 'anchor'; page: string; anchor: string };

export interface PageEntry {
  id: string;
  type: PageType;
  title: string;
  slug: string;
  parent: string | null;
  pos: string;
  doc: string | null;
  emoji?: string;
  icon?: string;
  description?: string;
  linkTitle?: string;
  hidden?: boolean;
  noIndex?: boolean;
  noRobotsIndex?: boolean;
  layout?: PageLayout;
  /** Cover image (front matter `cover`, `coverY`, `coverHeight`). */
  cover?: { url: string; yPos: number; height?: number };
  metaLinks?: { canonical?: string; alternates?: string[] };
  /** Visibility condition (front matter `if`). */
  condition?: string;
  /** Front matter keys Folio does not model, written back unchanged. */
  extra?: Record<string, unknown>;
  /** The front matter's key order, when the page's file had its own (front-matter.ts `keyOrder`). */
  keyOrder?: string[];
  variables?: Variables;
  /** Link pages: the target. */
  target?: LinkTarget;
  createdAt: string;
  updatedAt: string;
}

export interface FileEntry {
  id: string;
  name: string;
  contentType: string;
  size: number;
  blob: string;
  dimensions?: { width: number; height: number };
}

/** A variable's value, as the official `VariableValue`. */
export type VariableValue = string | number | boolean;
export type Variables = Record<string, VariableValue>;

/**
 * A block of content shared by pages (`{% include ".gitbook/includes/<id>.md" %}`). Its id is also
 * its file name in a git repository, so an include written by hand names it directly.
 */
export interface ReusableContentEntry {
  id: string;
  title: string;
  doc: string | null;
  createdAt: string;
  updatedAt: string;
}

/** Ids of reusable contents: usable as a file name and in an include path. */
export const REUSABLE_CONTENT_ID = /^[A-Za-z0-9][A-Za-z0-9_-]{0,99}$/;

export const pageKey = (id: string) => `p:${id}`;
export const reusableContentKey = (id: string) => `r:${id}`;
export const childrenKey = (parent: string | null) => `k:${parent ?? ''}`;
export const fileKey = (id: string) => `f:${id}`;
export const VARIABLES_KEY = 'v';

/** Pages nest at most this deep (ancestors are walked on every path read). */
export const MAX_PAGE_DEPTH = 50;

/** The slug of a page title (the platform's rule; 'page' when nothing is left). */
export function slugify(text: string): string {
  return slugFrom(text, 'page', 100, { keepCutHyphen: true });
}

export function markdownHash(markdown: string): string {
  return createHash('sha256').update(markdown).digest('base64url');
}

/**
 * Stores markdown by hash (idempotent) for a space and returns the hashes. The space is recorded as
 * holding each document, which is what scopes a document read by id to its space (`null`: no space,
 * for code below the level of spaces).
 */
export async function putDocuments(db: Db, spaceId: string | null, markdowns: string[]): Promise<string[]> {
  const rows = markdowns.map((markdown) => ({ hash: markdownHash(markdown), markdown }));
  const unique = [...new Map(rows.map((r) => [r.hash, r])).values()];
  for (let i = 0; i < unique.length; i += 500) {
    const batch = unique.slice(i, i + 500);
    await insertDocuments(db, batch);
    if (spaceId === null) continue; // below the level of spaces (tests, benchmarks): nothing to scope
    await recordSpaceDocuments(db, spaceId, batch.map((r) => r.hash));
  }
  return rows.map((r) => r.hash);
}

export async function getDocuments(db: Db, hashes: string[]): Promise<Map<string, string>> {
  const wanted = [...new Set(hashes.filter(Boolean))];
  const out = new Map<string, string>();
  for (let i = 0; i < wanted.length; i += 1000) {
    const rows = await documentsByHash(db, wanted.slice(i, i + 1000));
    for (const r of rows) out.set(r.hash, r.markdown);
  }
  return out;
}

/** Reads of one revision's content. */
export class ContentReader {
  readonly tree: Tree;
  constructor(
    readonly db: Db,
    readonly root: string,
    tree?: Tree,
  ) {
    this.tree = tree ?? new Tree(db);
  }

  async page(id: string): Promise<PageEntry | undefined> {
    return (await this.tree.get(this.root, pageKey(id))) as PageEntry | undefined;
  }

  async childIds(parent: string | null): Promise<string[]> {
    return ((await this.tree.get(this.root, childrenKey(parent))) as string[] | undefined) ?? [];
  }

  /** Children of a page in display order. */
  async children(parent: string | null): Promise<PageEntry[]> {
    const ids = await this.childIds(parent);
    const entries = await this.tree.getMany(this.root, ids.map(pageKey));
    return sortPages([...entries.values()] as PageEntry[]);
  }

  /** Slugs from the top level down to the page (its path is their join). */
  async ancestors(entry: PageEntry): Promise<PageEntry[]> {
    const chain: PageEntry[] = [];
    let parent = entry.parent;
    for (let guard = 0; parent && guard < MAX_PAGE_DEPTH * 4; guard++) {
      const p = await this.page(parent);
      if (!p) break;
      chain.unshift(p);
      parent = p.parent;
    }
    return chain;
  }

  async path(entry: PageEntry): Promise<string> {
    return [...(await this.ancestors(entry)), entry].map((p) => p.slug).join('/');
  }

  /** Resolves a page path (slugs joined by '/') by walking down from the top level. */
  async byPath(path: string): Promise<PageEntry | undefined> {
    const parts = path.split('/').filter(Boolean);
    let parent: string | null = null;
    let found: PageEntry | undefined;
    for (const slug of parts) {
      found = (await this.children(parent)).find((p) => p.slug === slug);
      if (!found) return undefined;
      parent = found.id;
    }
    return found;
  }

  async file(id: string): Promise<FileEntry | undefined> {
    return (await this.tree.get(this.root, fileKey(id))) as FileEntry | undefined;
  }

  async variables(): Promise<Variables> {
    return ((await this.tree.get(this.root, VARIABLES_KEY)) as Variables | undefined) ?? {};
  }

  async reusableContent(id: string): Promise<ReusableContentEntry | undefined> {
    return (await this.tree.get(this.root, reusableContentKey(id))) as ReusableContentEntry | undefined;
  }

  /** Every file of the revision. */
  async files(): Promise<FileEntry[]> {
    return (await this.all()).files;
  }

  /** The whole content at once (for whole-revision reads). */
  async all(): Promise<RevisionContent> {
    const entries = await this.tree.entries(this.root);
    const pages = new Map<string, PageEntry>();
    const files: FileEntry[] = [];
    const reusableContents: ReusableContentEntry[] = [];
    let variables: Variables = {};
    for (const [key, value] of entries) {
      if (key.startsWith('p:')) pages.set(key.slice(2), value as PageEntry);
      else if (key.startsWith('f:')) files.push(value as FileEntry);
      else if (key.startsWith('r:')) reusableContents.push(value as ReusableContentEntry);
      else if (key === VARIABLES_KEY) variables = value as Variables;
    }
    files.sort((a, b) => (a.id < b.id ? -1 : 1));
    reusableContents.sort((a, b) => (a.id < b.id ? -1 : 1));
    return { pages, files, reusableContents, variables };
  }
}

export interface RevisionContent {
  pages: Map<string, PageEntry>;
  files: FileEntry[];
  reusableContents: ReusableContentEntry[];
  variables: Variables;
}

export function sortPages(pages: PageEntry[]): PageEntry[] {
  return pages.sort((a, b) => (a.pos < b.pos ? -1 : a.pos > b.pos ? 1 : a.id < b.id ? -1 : 1));
}

export interface PageInput extends Omit<PageMetadata, 'description' | 'icon' | 'hidden' | 'noIndex' | 'noRobotsIndex'> {
  title?: string | undefined;
  slug?: string | undefined;
  emoji?: string | undefined;
  icon?: string | undefined;
  description?: string | undefined;
  hidden?: boolean | undefined;
  noIndex?: boolean | undefined;
  noRobotsIndex?: boolean | undefined;
}

/**
 * Edits of one revision's content, accumulated in memory and written as one new root. Reads see
 * the edits made so far, so a batch of operations applies in order, all or nothing.
 */
export class ContentEditor extends ContentReader {
  private readonly changes = new Map<string, Value | undefined>();
  readonly touched = new Set<string>();

  override async page(id: string): Promise<PageEntry | undefined> {
    const key = pageKey(id);
    if (this.changes.has(key)) return this.changes.get(key) as PageEntry | undefined;
    return super.page(id);
  }

  override async childIds(parent: string | null): Promise<string[]> {
    const key = childrenKey(parent);
    if (this.changes.has(key)) return (this.changes.get(key) as string[] | undefined) ?? [];
    return super.childIds(parent);
  }

  override async children(parent: string | null): Promise<PageEntry[]> {
    const ids = await this.childIds(parent);
    const pages = await Promise.all(ids.map((id) => this.page(id)));
    return sortPages(pages.filter((p): p is PageEntry => !!p));
  }

  override async file(id: string): Promise<FileEntry | undefined> {
    const key = fileKey(id);
    if (this.changes.has(key)) return this.changes.get(key) as FileEntry | undefined;
    return super.file(id);
  }

  // Reads see the edits of the batch made so far, like every other read of the editor.
  override async variables(): Promise<Variables> {
    if (this.changes.has(VARIABLES_KEY)) return (this.changes.get(VARIABLES_KEY) as Variables | undefined) ?? {};
    return super.variables();
  }

  override async reusableContent(id: string): Promise<ReusableContentEntry | undefined> {
    const key = reusableContentKey(id);
    if (this.changes.has(key)) return this.changes.get(key) as ReusableContentEntry | undefined;
    return super.reusableContent(id);
  }

  override async files(): Promise<FileEntry[]> {
    const byId = new Map((await super.files()).map((f) => [f.id, f]));
    for (const [key, value] of this.changes) {
      if (!key.startsWith('f:')) continue;
      if (value === undefined) byId.delete(key.slice(2));
      else byId.set(key.slice(2), value as FileEntry);
    }
    return [...byId.values()];
  }

  /** Sets the space's variables (all of them: none removes the entry). */
  setVariables(variables: Variables) {
    this.set(VARIABLES_KEY, Object.keys(variables).length ? variables : undefined);
  }

  putReusableContent(entry: ReusableContentEntry) {
    this.set(reusableContentKey(entry.id), entry);
  }

  deleteReusableContent(id: string) {
    this.set(reusableContentKey(id), undefined);
  }

  private set(key: string, value: Value | undefined) {
    this.changes.set(key, value);
  }

  /** Sets the children of a page (or of the top level): a set, stored sorted; none removes the key. */
  async setChildren(parent: string | null, ids: string[]) {
    const unique = [...new Set(ids)].sort();
    this.set(childrenKey(parent), unique.length ? unique : undefined);
  }

  putPage(entry: PageEntry) {
    this.set(pageKey(entry.id), entry);
    this.touched.add(entry.id);
  }

  /** A position key for index `at` among the children of `parent` (end when omitted). */
  async positionAt(parent: string | null, at: number | undefined, movingId?: string): Promise<string> {
    const siblings = (await this.children(parent)).filter((p) => p.id !== movingId);
    const index = at === undefined ? siblings.length : Math.min(at, siblings.length);
    const before = siblings[index - 1]?.pos ?? null;
    const after = siblings[index]?.pos ?? null;
    // Equal neighbours (a concurrent insert chose the same key) cannot be split: go after both.
    if (before !== null && after !== null && before >= after) return generateKeyBetween(before, null);
    return generateKeyBetween(before, after);
  }

  async uniqueSlug(parent: string | null, wanted: string, selfId?: string, strict = false): Promise<string> {
    const taken = new Set((await this.children(parent)).filter((p) => p.id !== selfId).map((p) => p.slug));
    if (!taken.has(wanted)) return wanted;
    if (strict) throw new BadRequestError(`slug "${wanted}" is already used by a sibling page`);
    for (let i = 2; ; i++) if (!taken.has(`${wanted}-${i}`)) return `${wanted}-${i}`;
  }

  /** Refuses a parent (given with its ancestors) that would put a page deeper than MAX_PAGE_DEPTH. */
  private assertDepthBelow(parentChain: PageEntry[]) {
    if (parentChain.length + 1 > MAX_PAGE_DEPTH) {
      throw new BadRequestError(`into: pages can be nested at most ${MAX_PAGE_DEPTH} levels deep`);
    }
  }

  /**
   * The table of contents' shape, as the official model has it: groups stand at the top level only,
   * and a link holds no pages.
   */
  private assertPlacement(type: PageType, parent: PageEntry | undefined) {
    if (type === 'group' && parent) throw new BadRequestError('into: a group stands at the top level of the table of contents');
    if (parent?.type === 'link') throw new BadRequestError(`into: "${parent.title}" is a link, which holds no pages`);
  }

  async insertPage(
    input: PageInput & { parent: string | null; at?: number | undefined; doc: string | null; title: string; id?: string; type?: PageType; target?: LinkTarget },
  ): Promise<PageEntry> {
    const type = input.type ?? 'document';
    const parent = input.parent ? await this.page(input.parent) : undefined;
    if (input.parent && !parent) throw new BadRequestError(`into: page ${input.parent} not found`);
    this.assertPlacement(type, parent);
    if (parent) this.assertDepthBelow([...(await this.ancestors(parent)), parent]);
    if (input.target?.kind === 'page' && !(await this.page(input.target.page))) throw new BadRequestError(`target.page: page ${input.target.page} not found`);
    const now = new Date().toISOString();
    const id = input.id ?? newId();
    // Ids are the server's: a new page never takes the place of one that exists.
    if (await this.page(id)) throw new BadRequestError(`page ${id} already exists`);
    const entry: PageEntry = {
      id,
      type,
      title: input.title,
      slug: await this.uniqueSlug(input.parent, input.slug ?? slugify(input.title), undefined, input.slug !== undefined),
      parent: input.parent,
      pos: await this.positionAt(input.parent, input.at),
      doc: input.doc,
      createdAt: now,
      updatedAt: now,
      ...metadata(input),
      ...(input.target ? { target: input.target } : {}),
    };
    this.putPage(entry);
    await this.setChildren(input.parent, [...(await this.childIds(input.parent)), id]);
    return entry;
  }

  async updatePage(
    id: string,
    input: PageInput & { doc?: string | null | undefined; into?: string | null | undefined; at?: number | undefined; target?: LinkTarget | undefined },
  ): Promise<PageEntry> {
    const current = await this.page(id);
    if (!current) throw new BadRequestError(`page ${id} not found in the change request`);
    if (input.target && current.type !== 'link') throw new BadRequestError(`target: "${current.title}" is a ${current.type}, not a link`);
    if (input.target?.kind === 'page' && !(await this.page(input.target.page))) throw new BadRequestError(`target.page: page ${input.target.page} not found`);
    if (input.doc !== undefined && current.type !== 'document') throw new BadRequestError(`document: "${current.title}" is a ${current.type}, which has no content`);
    let parent = current.parent;
    let pos = current.pos;
    if (input.into !== undefined && input.into !== current.parent) {
      if (input.into !== null) {
        const target = await this.page(input.into);
        if (!target) throw new BadRequestError(`into: page ${input.into} not found`);
        this.assertPlacement(current.type, target);
        const chain = [...(await this.ancestors(target)), target];
        if (chain.some((p) => p.id === id)) throw new BadRequestError('into: a page cannot move under itself or one of its descendants');
        this.assertDepthBelow(chain);
      }
      await this.setChildren(current.parent, (await this.childIds(current.parent)).filter((c) => c !== id));
      parent = input.into;
      await this.setChildren(parent, [...(await this.childIds(parent)), id]);
      pos = await this.positionAt(parent, input.at, id);
    } else if (input.at !== undefined) {
      pos = await this.positionAt(parent, input.at, id);
    }
    const title = input.title ?? current.title;
    let slug = current.slug;
    if (input.slug !== undefined) slug = await this.uniqueSlug(parent, input.slug, id, true);
    else if (input.title !== undefined && input.title !== current.title) slug = await this.uniqueSlug(parent, slugify(title), id);
    else if (parent !== current.parent) slug = await this.uniqueSlug(parent, slug, id);
    const entry: PageEntry = {
      ...current,
      ...metadata(input),
      title,
      slug,
      parent,
      pos,
      ...(input.doc !== undefined ? { doc: input.doc } : {}),
      ...(input.target ? { target: input.target } : {}),
      updatedAt: new Date().toISOString(),
    };
    for (const k of ['emoji', 'icon'] as const) if (input[k] === '') delete entry[k];
    this.putPage(entry);
    return entry;
  }

  /** Deletes a page and everything below it. */
  async deletePage(id: string): Promise<void> {
    const current = await this.page(id);
    if (!current) throw new BadRequestError(`page ${id} not found in the change request`);
    await this.setChildren(current.parent, (await this.childIds(current.parent)).filter((c) => c !== id));
    const stack = [id];
    const seen = new Set<string>();
    while (stack.length) {
      const pageId = stack.pop()!;
      if (seen.has(pageId)) continue; // a damaged tree must not keep this loop going
      seen.add(pageId);
      stack.push(...(await this.childIds(pageId)));
      this.set(pageKey(pageId), undefined);
      this.set(childrenKey(pageId), undefined);
      this.touched.add(pageId);
    }
  }

  /** Makes a page what it was in another revision: restored, reset, or removed if it did not exist. */
  async revertPage(id: string, from: ContentReader): Promise<void> {
    const old = await from.page(id);
    const current = await this.page(id);
    if (!old && !current) throw new BadRequestError(`page ${id} not found in the change request or in the revision it reverts to`);
    if (!old) {
      await this.deletePage(id);
      return;
    }
    if (old.parent && !(await this.page(old.parent))) {
      throw new BadRequestError(`page ${id} cannot be restored: its parent page ${old.parent} no longer exists`);
    }
    if (current && current.parent !== old.parent) {
      await this.setChildren(current.parent, (await this.childIds(current.parent)).filter((c) => c !== id));
    }
    this.putPage({ ...old, slug: await this.uniqueSlug(old.parent, old.slug, id) });
    await this.setChildren(old.parent, [...(await this.childIds(old.parent)), id]);
    if (!current) {
      // A deleted page comes back with the pages that were below it.
      for (const child of await from.children(id)) if (!(await this.page(child.id))) await this.revertPage(child.id, from);
    }
  }

  putFile(file: FileEntry) {
    this.set(fileKey(file.id), file);
  }

  setRaw(key: string, value: Value | undefined) {
    this.set(key, value);
  }

  /** Writes the edits as a new tree and returns its root (nodes stored in `db`, e.g. a transaction). */
  async commit(db: Db): Promise<string> {
    const root = await this.tree.update(this.root, this.changes);
    await this.tree.flush(db);
    return root;
  }
}

function metadata(input: PageInput): Partial<PageEntry> {
  const out: Partial<PageEntry> = {};
  for (const k of ['layout', 'cover', 'metaLinks', 'condition', 'extra', 'variables', 'keyOrder'] as const) if (input[k] !== undefined) (out as Record<string, unknown>)[k] = input[k];
  if (input.emoji) out.emoji = input.emoji;
  if (input.icon) out.icon = input.icon;
  if (input.description !== undefined) out.description = input.description;
  if (input.hidden !== undefined) out.hidden = input.hidden;
  if (input.noIndex !== undefined) out.noIndex = input.noIndex;
  if (input.noRobotsIndex !== undefined) out.noRobotsIndex = input.noRobotsIndex;
  return out;
}

export { EMPTY };
