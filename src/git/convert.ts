import { GitError } from './git.ts';
import { posix } from 'node:path';
import { generateNKeysBetween } from 'fractional-indexing';
import { readMarkdownMetadata } from '../change-requests/edit.ts';
import { imageDimensions } from '../content/files.ts';
import type { Blobs } from '../platform/blob-store.ts';
import { type PageMetadata, variablesOf } from '../content/markdown/front-matter.ts';
import { parse as parseYaml, stringify as stringifyYaml } from 'yaml';
import { ContentEditor, ContentReader, EMPTY, getDocuments, putDocuments, REUSABLE_CONTENT_ID, slugify, sortPages, type FileEntry, type LinkTarget, type PageEntry, type PageType, type ReusableContentEntry, type Variables } from '../content/model.ts';
import { frontMatterOf, gitPath } from '../content/presenter.ts';
import { hashOf } from '../content/tree.ts';
import type { Db } from '../platform/db/database.ts';
import { newId } from '../platform/ids.ts';
import {
  contentTypeOf,
  coverPath,
  folderTree,
  parseSummary,
  readGitbookConfig,
  linkSpelling,
  relativeLink,
  relativePath,
  repoPath,
  resolveRelative,
  rewriteLinks,
  writeSummary,
  type LinkPlace,
  type TocItem,
} from './format.ts';
import { exportLinks, readIncludeFile, writeIncludeFile, writePageFile } from './page-file.ts';
import { keepUnchangedLines } from './keep-lines.ts';
import { realignPipeTables } from './pipe-tables.ts';
import type { RepoReader, TreeFile } from './repo.ts';

/**
 * Where each page and file of the last synced revision lives in the repository, and the hash of
 * what was synced. It lets an import keep page ids (a page whose path is unchanged is the same
 * page: comments and links survive) and lets an export leave unchanged files byte-identical
 * (an untouched page is written as the very blob it came from).
 */
export interface Manifest {
  commit: string;
  pages: Record<string, { kind: 'page' | 'group' | 'link'; path?: string; oid?: string; entry: string; href?: string; head?: PageHead; tail?: string; written?: string; label?: { title: string; as: string } }>;
  files: Record<string, { path: string; oid: string; blob: string }>;
  summary?: { path: string; oid: string; shape: string };
  /** Reusable contents ↔ `.gitbook/includes/<id>.md`. */
  includes?: Record<string, { path: string; oid: string; entry: string }>;
  /** Space variables ↔ `.gitbook/vars.yaml`. */
  vars?: { path: string; oid: string; hash: string };
  /**
   * Links of pages written otherwise than GitBook writes them today (`image%20%281%29.png`, `./`):
   * linkKey → the text as written (each occurrence's, in order, when they differ), used again
   * while the page and its target keep their paths.
   */
  links?: Record<string, string | string[]>;
  /** The repository's `.gitbook.yaml` as imported: written again where an export finds none. */
  config?: { path: string; text: string };
  /**
   * `.gitbook.yaml` redirects: a path of the space's URL (no leading slash) → the repository path
   * of the page it now goes to. Served by published sites (src/git/redirects.ts).
   */
  redirects?: Record<string, string>;
}

/**
 * What a page file says before its body (front matter, title line, blank lines), as written, and
 * the hash of what it says (headHash): a page whose metadata and title did not change is written
 * with this text again, however Folio would write it.
 */
export interface PageHead {
  text: string;
  hash: string;
  /** The page had no body: one written later needs a blank line after the head. */
  bodyless?: boolean;
}

const headHash = (p: PageEntry) => hashOf({ frontMatter: frontMatterOf(p), title: p.title });

/** What identifies a SUMMARY.md link: its URL, or the path and anchor of the page it names. */
const linkHref = (item: TocItem) => (item.path ? `${item.path}${item.href ?? ''}` : item.href!);

/** The target of a link page from its SUMMARY.md item. */
function linkTarget(item: TocItem, pageIdByPath: Map<string, string>): LinkTarget {
  const page = item.path ? pageIdByPath.get(item.path) : undefined;
  if (!page) return { kind: 'url', url: item.href! };
  const anchor = item.href?.replace(/^#/, '');
  return anchor ? { kind: 'anchor', page, anchor } : { kind: 'page', page };
}

/** Where a page links to, for Manifest.links. */
function linkKey(from: string, to: string, anchor: string, place: LinkPlace): string {
  return `${place === 'markdown' ? 'm' : 'a'}:${from}:${to}#${anchor}`;
}

/** An include line, `{% include "<path>" %}`, whatever the path. */
const INCLUDE = /^([ \t]*\{%[ \t]*include[ \t]+")([^"]+)("[ \t]*%\}[ \t]*)$/gm;

function rewriteIncludes(markdown: string, map: (path: string) => string | undefined): string {
  if (!markdown.includes('include')) return markdown;
  return markdown.replace(INCLUDE, (whole, lead: string, path: string, end: string) => {
    const next = map(path);
    return next === undefined ? whole : `${lead}${next}${end}`;
  });
}

const includeEntryHash = (e: ReusableContentEntry) => hashOf({ ...e, createdAt: undefined, updatedAt: undefined });

/** Hash of what a page's file says (its place in the tree is SUMMARY.md's business). */
function entryHash(p: PageEntry): string {
  return hashOf({ ...p, parent: undefined, pos: undefined, createdAt: undefined, updatedAt: undefined });
}

const GITBOOK_DIR = '.gitbook/';

export interface ImportStats {
  filesRead: number;
  pagesWritten: number;
  filesWritten: number;
}

/** Progress lines for the logs. */
export type Progress = (message: string, data?: Record<string, unknown>) => void;

/**
 * Turns a fetched commit into the content tree of a revision (stored in `db`), built with the
 * same ContentEditor every content change goes through. `base` is the content last synced (its
 * page ids, positions and dates are kept where nothing changed).
 */
export async function importTree(
  db: Db,
  repo: RepoReader,
  commit: string,
  opts: { spaceId: string; projectDir: string; base: { root: string; manifest: Manifest | null }; progress: Progress; blobs: Blobs },
): Promise<{ root: string; manifest: Manifest; stats: ImportStats }> {
  const files = await repo.files(commit, opts.projectDir);
  const byPath = new Map(files.map((f) => [f.path, f]));
  opts.progress('git import: files listed', { files: files.length });
  const configFile = byPath.get(repoPath(opts.projectDir, '.gitbook.yaml')!);
  const configText = configFile ? (await repo.blobs([configFile.oid])).get(configFile.oid)!.toString('utf8') : undefined;
  const config = readGitbookConfig(configText, opts.projectDir);
  const inRoot = (p: string) => !config.root || p.startsWith(`${config.root}/`);
  const summaryPath = repoPath(config.root, config.summary);
  const summaryFile = summaryPath ? byPath.get(summaryPath) : undefined;

  let toc: TocItem[];
  if (summaryFile) {
    toc = parseSummary((await repo.blobs([summaryFile.oid])).get(summaryFile.oid)!.toString('utf8'), summaryFile.path);
  } else {
    const markdown = files.filter((f) => inRoot(f.path) && /\.md$/i.test(f.path) && !f.path.slice(config.root ? config.root.length + 1 : 0).startsWith(GITBOOK_DIR));
    toc = folderTree(
      markdown.map((f) => f.path),
      config.root,
      config.readme,
    );
  }

  // Pages of the table of contents, in order; a file listed twice is one page.
  const seen = new Set<string>();
  const items: { item: TocItem; parent: TocItem | null }[] = [];
  const walk = (list: TocItem[], parent: TocItem | null) => {
    for (const item of list) {
      if (item.kind === 'page') {
        // A file listed again (`* [Buttons](inline.md#buttons)`) is a link to its page.
        if (seen.has(item.path!)) item.kind = 'link';
        else seen.add(item.path!);
      }
      items.push({ item, parent });
      // A link holds no pages: what SUMMARY.md nests below one follows it instead.
      walk(item.children, item.kind === 'link' ? parent : item);
    }
  };
  walk(toc, null);

  // Ids: the page or file that had the same path at the last sync keeps its id.
  const old = opts.base.manifest;
  const keyOf = (item: TocItem) => (item.kind === 'page' ? item.path! : item.kind === 'group' ? `group:${item.title}` : `link:${linkHref(item)}`);
  const idByKey = new Map<string, string>();
  if (old) {
    for (const [id, p] of Object.entries(old.pages)) idByKey.set(p.kind === 'page' ? p.path! : `${p.kind}:${p.href ?? ''}`, id);
    for (const [id, f] of Object.entries(old.files)) idByKey.set(`file:${f.path}`, id);
  }
  const ids = new Map<TocItem, string>();
  const taken = new Set<string>();
  for (const { item } of items) {
    const id = idByKey.get(keyOf(item));
    const chosen = id && !taken.has(id) ? id : newId();
    taken.add(chosen);
    ids.set(item, chosen);
  }
  const pageIdByPath = new Map<string, string>();
  for (const { item } of items) if (item.kind === 'page') pageIdByPath.set(item.path!, ids.get(item)!);

  // Page files, then the files they link to and everything under .gitbook/assets.
  const pageFiles = items.filter(({ item }) => item.kind === 'page' && byPath.has(item.path!)).map(({ item }) => byPath.get(item.path!)!);
  const texts = await repo.blobs(pageFiles.map((f) => f.oid));
  opts.progress('git import: pages read', { pages: pageFiles.length });
  const assetDir = repoPath(config.root, '.gitbook/assets');
  const assets = new Map<string, TreeFile>();
  for (const f of files) if (assetDir && f.path.startsWith(`${assetDir}/`)) assets.set(f.path, f);
  const parsed = new Map<string, { markdown: string; title?: string; metadata: ReturnType<typeof readMarkdownMetadata>['metadata'] }>();
  const coverFile = (page: string, url: string): TreeFile | undefined => {
    const path = coverPath(page, url, config.root, (p) => byPath.has(p));
    return path === undefined ? undefined : byPath.get(path);
  };
  const heads = new Map<string, string>();
  for (const f of pageFiles) {
    const text = texts.get(f.oid)!.toString('utf8');
    const meta = readMarkdownMetadata(text);
    parsed.set(f.path, meta);
    if (text.endsWith(meta.markdown)) heads.set(f.path, text.slice(0, text.length - meta.markdown.length));
    rewriteLinks(meta.markdown, (target) => {
      const r = resolveRelative(f.path, target);
      const file = r && byPath.get(r.path);
      if (file && !/\.md$/i.test(file.path) && !assets.has(file.path)) assets.set(file.path, file);
      return undefined;
    });
    const cover = meta.metadata.cover && coverFile(f.path, meta.metadata.cover.url);
    if (cover && !assets.has(cover.path)) assets.set(cover.path, cover);
  }
  const fileIdByPath = new Map<string, string>();
  for (const path of assets.keys()) fileIdByPath.set(path, idByKey.get(`file:${path}`) ?? newId());
  // A cover naming a file of the repository is a reference to that space file, as images are.
  for (const f of pageFiles) {
    const { metadata } = parsed.get(f.path)!;
    const file = metadata.cover && coverFile(f.path, metadata.cover.url);
    if (file && metadata.cover) metadata.cover = { ...metadata.cover, url: `/files/${fileIdByPath.get(file.path)!}` };
  }

  // Bodies with repository links turned into page and file references. How a link was written
  // is kept where GitBook would write it otherwise, so an export of the page writes it the same.
  const bodies = new Map<string, string>();
  const spellings = new Map<string, string[]>();
  const unusual = new Set<string>();
  const spelled = (from: string, to: string, anchor: string, place: LinkPlace, written: string) => {
    const key = linkKey(from, to, anchor, place);
    spellings.set(key, [...(spellings.get(key) ?? []), written]);
    if (written !== linkSpelling(relativePath(from, to) + (anchor ? `#${anchor}` : ''), place)) unusual.add(key);
  };
  for (const f of pageFiles) {
    const meta = parsed.get(f.path)!;
    const includesDir = repoPath(config.root, '.gitbook/includes');
    const body = rewriteIncludes(meta.markdown, (target) => {
      const r = resolveRelative(f.path, target);
      return r && includesDir && r.path.startsWith(`${includesDir}/`) ? `.gitbook/includes/${r.path.slice(includesDir.length + 1)}` : undefined;
    });
    // Pipe tables are padded again around the rewritten links, as an export pads them back.
    const rewritten = rewriteLinks(body, (target, place, written) => {
        const r = resolveRelative(f.path, target);
        if (!r) return undefined;
        const pagePath = pageIdByPath.has(r.path) ? r.path : /\/$|^$/.test(r.path) ? undefined : `${r.path}/README.md`;
        const page = pagePath && pageIdByPath.get(pagePath);
        if (page) {
          spelled(f.path, pagePath, r.anchor, place, written);
          return `/pages/${page}${r.anchor ? `#${r.anchor}` : ''}`;
        }
        const file = fileIdByPath.get(r.path);
        if (file) {
          spelled(f.path, r.path, '', place, written);
          return `/files/${file}`;
        }
        return undefined;
      });
    bodies.set(f.path, realignPipeTables(body, rewritten));
  }
  const links: Record<string, string | string[]> = {};
  for (const key of unusual) {
    const list = spellings.get(key)!;
    links[key] = new Set(list).size === 1 ? list[0]! : list;
  }
  const docPaths = [...bodies.keys()];
  const hashes = await putDocuments(db, opts.spaceId, docPaths.map((p) => bodies.get(p)!));
  const docByPath = new Map(docPaths.map((p, i) => [p, hashes[i]!]));

  const baseReader = new ContentReader(db, opts.base.root);
  const base = opts.base.root === EMPTY ? { pages: new Map<string, PageEntry>(), files: [] as FileEntry[], reusableContents: [] as ReusableContentEntry[], variables: {} as Variables } : await baseReader.all();
  const now = new Date().toISOString();
  const editor = new ContentEditor(db, EMPTY);
  const manifest: Manifest = {
    commit,
    pages: {},
    files: {},
    ...(configFile && configText !== undefined ? { config: { path: configFile.path, text: configText } } : {}),
    ...(Object.keys(links).length ? { links } : {}),
  };

  // Siblings, in table-of-contents order, per parent page.
  const siblings = new Map<string | null, TocItem[]>();
  for (const { item, parent } of items) {
    const parentId = parent ? ids.get(parent)! : null;
    const list = siblings.get(parentId) ?? [];
    list.push(item);
    siblings.set(parentId, list);
  }
  let pagesWritten = 0;
  const entries = new Map<TocItem, PageEntry>();
  for (const [parentId, list] of siblings) {
    const listIds = list.map((i) => ids.get(i)!);
    const oldPos = listIds.map((id) => base.pages.get(id)).map((p) => (p && p.parent === parentId ? p.pos : undefined));
    const keep = oldPos.every((p, i) => p !== undefined && (i === 0 || oldPos[i - 1]! < p));
    const positions = keep ? (oldPos as string[]) : generateNKeysBetween(null, null, list.length);
    const slugs = new Set<string>();
    for (const [i, item] of list.entries()) {
      const id = listIds[i]!;
      const meta = item.kind === 'page' ? parsed.get(item.path!) : undefined;
      const title = meta?.title ?? item.title;
      let slug: string;
      if (item.kind === 'page') {
        const name = posix.basename(item.path!).replace(/\.md$/i, '');
        const dir = posix.basename(posix.dirname(item.path!));
        slug = /^readme$/i.test(name) ? (dir && dir !== '.' && posix.dirname(item.path!) !== config.root ? slugify(dir) : slugify(title)) : slugify(name);
      } else slug = item.slug ? slugify(item.slug) : slugify(item.title);
      // SUMMARY.md groups are group pages; the official model has them at the top level only,
      // so a folder without README.md deeper down (no SUMMARY.md) stays an empty document.
      const type: PageType = item.kind === 'link' ? 'link' : item.kind === 'group' && parentId === null ? 'group' : 'document';
      for (let n = 2; slugs.has(slug); n++) slug = `${slug.replace(/-\d+$/, '')}-${n}`;
      slugs.add(slug);
      const before = base.pages.get(id);
      const entry: PageEntry = {
        id,
        type,
        title,
        slug,
        parent: parentId,
        pos: positions[i]!,
        doc: item.kind === 'page' ? (docByPath.get(item.path!) ?? (await putDocuments(db, opts.spaceId, ['']))[0]!) : null,
        ...(type === 'link' ? { target: linkTarget(item, pageIdByPath) } : {}),
        createdAt: before?.createdAt ?? now,
        updatedAt: now,
        ...(meta?.metadata ?? {}),
        // A SUMMARY.md title other than the page's own is its link title (folder names are not titles).
        ...(summaryFile && item.kind === 'page' && item.title !== title ? { linkTitle: item.title } : {}),
      } as PageEntry;
      const same = before && hashOf({ ...before, updatedAt: undefined }) === hashOf({ ...entry, updatedAt: undefined });
      const final = same ? before : entry;
      editor.putPage(final);
      entries.set(item, final);
      pagesWritten++;
      const file = item.kind === 'page' ? byPath.get(item.path!) : undefined; // not a link's page
      manifest.pages[id] = {
        kind: item.kind,
        ...(item.kind === 'page' ? { path: item.path! } : {}),
        ...(file ? { oid: file.oid } : {}),
        entry: entryHash(final),
        ...(item.kind === 'group' ? { href: item.title } : item.kind === 'link' ? { href: linkHref(item) } : item.href ? { href: item.href } : {}),
        ...(file && heads.has(file.path) ? { head: { text: heads.get(file.path)!, hash: headHash(final), ...(parsed.get(file.path)!.markdown ? {} : { bodyless: true }) } } : {}),
        ...(item.tail ? { tail: item.tail } : {}),
        ...(item.written ? { written: item.written } : {}),
        ...(item.label ? { label: { title: item.title, as: item.label } } : {}),
      };
    }
    await editor.setChildren(parentId, listIds);
  }
  opts.progress('git import: pages written', { pages: pagesWritten });

  // Files: bytes stored by hash; an unchanged file keeps its entry.
  const assetBytes = await repo.blobs([...assets.values()].map((f) => f.oid));
  const baseFiles = new Map(base.files.map((f) => [f.id, f]));
  for (const [path, f] of assets) {
    const id = fileIdByPath.get(path)!;
    const data = assetBytes.get(f.oid)!;
    const blob = await opts.blobs.put(data);
    const name = posix.basename(path);
    const contentType = contentTypeOf(name);
    const before = baseFiles.get(id);
    const dimensions = contentType.startsWith('image/') ? imageDimensions(data) : undefined;
    const entry: FileEntry = before && before.blob === blob && before.name === name ? before : { id, name, contentType, size: data.length, blob, ...(dimensions ? { dimensions } : {}) };
    editor.putFile(entry);
    manifest.files[id] = { path, oid: f.oid, blob };
  }
  // Reusable contents from .gitbook/includes/<id>.md; space variables from .gitbook/vars.yaml.
  const includesDir = repoPath(config.root, '.gitbook/includes')!;
  const includeFiles = files.filter((f) => f.path.startsWith(`${includesDir}/`) && /^[^/]+\.md$/.test(f.path.slice(includesDir.length + 1)));
  const includeTexts = await repo.blobs(includeFiles.map((f) => f.oid));
  const baseIncludes = new Map(base.reusableContents.map((r) => [r.id, r]));
  manifest.includes = {};
  for (const f of includeFiles) {
    const id = f.path.slice(includesDir.length + 1).replace(/\.md$/, '');
    if (!REUSABLE_CONTENT_ID.test(id)) continue;
    const { title, body } = readIncludeFile(includeTexts.get(f.oid)!.toString('utf8'), id);
    const [doc] = await putDocuments(db, opts.spaceId, [body]);
    const before = baseIncludes.get(id);
    const entry: ReusableContentEntry = before && before.title === title && before.doc === doc ? before : { id, title, doc: doc!, createdAt: before?.createdAt ?? now, updatedAt: now };
    editor.putReusableContent(entry);
    manifest.includes[id] = { path: f.path, oid: f.oid, entry: includeEntryHash(entry) };
  }
  const varsFile = byPath.get(repoPath(config.root, '.gitbook/vars.yaml')!);
  if (varsFile) {
    let parsedVars: unknown;
    try {
      parsedVars = parseYaml((await repo.blobs([varsFile.oid])).get(varsFile.oid)!.toString('utf8'));
    } catch {
      throw new GitError(`${varsFile.path} is not valid YAML`);
    }
    const variables = parsedVars == null ? {} : variablesOf(parsedVars);
    if (!variables) throw new GitError(`${varsFile.path}: variables must be a mapping of names to strings (up to 256 characters), numbers or booleans`);
    editor.setVariables(variables);
    manifest.vars = { path: varsFile.path, oid: varsFile.oid, hash: hashOf(variables) };
  }
  // Without SUMMARY.md, the shape is kept too: an export of the same tree writes none either.
  // The shape uses the titles an export would write (a link title, else the page's title).
  const titled = (list: TocItem[]): TocItem[] =>
    list.flatMap((i) => {
      const entry = entries.get(i);
      if (!entry) return [];
      const item: TocItem = {
        ...i,
        title: i.kind === 'group' ? i.title : (entry.linkTitle ?? entry.title),
        ...(i.kind === 'group' ? { slug: entry.slug } : {}),
        children: i.kind === 'link' ? [] : titled(i.children),
      };
      // What SUMMARY.md nests below a link follows it (see walk).
      return i.kind === 'link' ? [item, ...titled(i.children)] : [item];
    });
  const shape = hashOf(shapeOf(titled(toc)));
  manifest.summary = summaryFile ? { path: summaryFile.path, oid: summaryFile.oid, shape } : { path: '', oid: '', shape };
  const root = await editor.commit(db);
  opts.progress('git import: content tree written', { files: assets.size, reusableContents: includeFiles.length });
  const redirects = Object.entries(config.redirects).flatMap(([from, to]) => {
    const source = from.replace(/^\/+|\/+$/g, '');
    const target = repoPath(config.root, to);
    return source && target ? [[source, target] as const] : [];
  });
  if (redirects.length) manifest.redirects = Object.fromEntries(redirects);
  return { root, manifest, stats: { filesRead: pageFiles.length + assets.size, pagesWritten, filesWritten: assets.size } };
}

/** What SUMMARY.md says, without the text that does not matter (for comparisons). */
function shapeOf(items: TocItem[]): unknown {
  return items.map((i) => [i.kind, i.title, i.path ?? '', i.href ?? '', ...(i.kind === 'group' ? [i.slug ?? ''] : []), ...(i.tail ? [i.tail] : []), shapeOf(i.children)]);
}

export interface ExportPlan {
  files: { path: string; oid?: string; data?: Buffer }[];
  deletes: string[];
  manifest: Omit<Manifest, 'commit'>;
}

/**
 * The repository files of a revision: pages (`slug.md`, `slug/README.md` with children) with
 * front matter, SUMMARY.md, files under .gitbook/assets, and .gitbook.yaml when the repository
 * has none. What did not change since the last sync is written as the blob it was.
 */
export async function exportPlan(
  db: Db,
  root: string,
  opts: {
    blobs: Blobs;
    projectDir: string;
    existing: TreeFile[];
    configText: string | undefined;
    manifest: Manifest | null;
    /** Blobs of the last sync the target repository does not hold: what they held is written anew. */
    missing?: Set<string>;
    /**
     * Contents of blobs of the last sync (the repository's files): a page written again keeps the
     * lines its change did not touch as they were (keep-lines.ts). Without it, pages are written whole.
     */
    readBlobs?: (oids: string[]) => Promise<Map<string, Buffer>>;
  },
): Promise<ExportPlan> {
  const config = readGitbookConfig(opts.configText, opts.projectDir);
  const { pages, files, reusableContents, variables } = await new ContentReader(db, root).all();
  const docs = await getDocuments(db, [...pages.values()].map((p) => p.doc ?? ''));
  const children = new Map<string | null, PageEntry[]>();
  for (const p of pages.values()) {
    const list = children.get(p.parent) ?? [];
    list.push(p);
    children.set(p.parent, list);
  }
  for (const list of children.values()) sortPages(list);
  const m = opts.manifest;
  /** A blob of the last sync, when the commit being made may point at it. */
  const reusable = (oid: string | undefined): oid is string => !!oid && !opts.missing?.has(oid);
  const used = new Set<string>();
  const unique = (path: string) => {
    let candidate = path;
    for (let n = 2; used.has(candidate); n++) candidate = path.replace(/(\/README)?\.md$/, (end) => `-${n}${end}`);
    used.add(candidate);
    return candidate;
  };
  const inRoot = (...parts: string[]) => repoPath(config.root, ...parts)!;

  // Paths: kept from the last sync, else derived from the slugs.
  const pathOf = new Map<string, string>();
  const kindOf = new Map<string, 'page' | 'group' | 'link'>();
  for (const id of pages.keys()) {
    const known = m?.pages[id];
    const page = pages.get(id)!;
    // Groups and links are what their page says; a document keeps the role it had at the last
    // sync (a folder without README.md deeper down, or a group or link imported before they were
    // pages of their own), so it writes no file.
    const kind = page.type === 'group' ? 'group' : page.type === 'link' ? 'link' : (known?.kind ?? 'page');
    if (kind === 'page' && known?.kind === 'page' && known.path) pathOf.set(id, unique(known.path));
    kindOf.set(id, kind);
  }
  const assign = (parent: string | null, folder: string) => {
    for (const [index, p] of (children.get(parent) ?? []).entries()) {
      const hasChildren = (children.get(p.id)?.length ?? 0) > 0;
      if (kindOf.get(p.id) === 'page' && !pathOf.has(p.id)) {
        const first = parent === null && index === 0 && !hasChildren && !used.has(inRoot(config.readme));
        pathOf.set(p.id, unique(first ? inRoot(config.readme) : repoPath(folder, gitPath(p.slug, hasChildren))!));
      }
      const path = pathOf.get(p.id);
      const sub = path ? (/(^|\/)README\.md$/i.test(path) ? posix.dirname(path).replace(/^\.$/, '') : path.replace(/\.md$/i, '')) : repoPath(folder, p.slug)!;
      assign(p.id, sub);
    }
  };
  assign(null, config.root);

  const filePath = new Map<string, string>();
  for (const f of files) {
    const known = m?.files[f.id];
    filePath.set(f.id, unique(known && known.blob === f.blob ? known.path : known?.path ?? inRoot('.gitbook/assets', f.name)));
  }

  /** A link page's SUMMARY.md target: its URL, or the path (and anchor) of the page it names. */
  const linkOf = (p: PageEntry): { href: string; path?: string; anchor: string } | undefined => {
    if (!p.target) return undefined;
    if (p.target.kind === 'url') return { href: p.target.url, anchor: '' };
    const path = pathOf.get(p.target.page);
    const anchor = p.target.kind === 'anchor' ? `#${p.target.anchor}` : '';
    return path ? { href: `${path}${anchor}`, path, anchor } : undefined;
  };

  // The repository's .gitbook.yaml is left as it is, so its redirects still hold.
  const out: ExportPlan = {
    files: [],
    deletes: [],
    manifest: { pages: {}, files: {}, ...(m?.redirects ? { redirects: m.redirects } : {}), ...(m?.config ? { config: m.config } : {}), ...(m?.links ? { links: m.links } : {}) },
  };
  // The files of pages that changed since the last sync, read in one go, to keep their untouched lines.
  const changedFiles: string[] = [];
  for (const p of pages.values()) {
    const known = m?.pages[p.id];
    if (kindOf.get(p.id) === 'page' && known?.path === pathOf.get(p.id) && reusable(known?.oid) && known.entry !== entryHash(p)) changedFiles.push(known.oid);
  }
  const previousFiles = changedFiles.length && opts.readBlobs ? await opts.readBlobs(changedFiles) : new Map<string, Buffer>();
  for (const p of pages.values()) {
    const kind = kindOf.get(p.id)!;
    const known = m?.pages[p.id];
    const hash = entryHash(p);
    const path = pathOf.get(p.id);
    if (kind !== 'page' || !path) {
      const href = kind === 'group' ? p.title : kind === 'link' ? (linkOf(p)?.href ?? known?.href) : known?.href;
      const written = kind === 'link' && known?.written && known.href === href ? { written: known.written } : {};
      out.manifest.pages[p.id] = { kind, entry: hash, ...(href ? { href } : {}), ...(known?.tail ? { tail: known.tail } : {}), ...(known?.label ? { label: known.label } : {}), ...written };
      continue;
    }
    if (known && !known.oid && known.path === path && known.entry === hash) {
      // Listed in SUMMARY.md without a regular file (missing, or a symlink, which is never
      // followed): nothing was read, so nothing is written over whatever is there.
      out.manifest.pages[p.id] = known;
      continue;
    }
    let oid: string | undefined;
    let head: PageHead | undefined;
    if (reusable(known?.oid) && known.path === path && known.entry === hash) oid = known.oid;
    if (oid) {
      out.files.push({ path, oid });
      head = known?.head; // the file stays as it was
    } else {
      const occurrences = new Map<string, number>();
      const link = (to: string, anchor: string, place: LinkPlace) => {
        const key = linkKey(path, to, anchor, place);
        const written = m?.links?.[key];
        if (typeof written === 'string') return written;
        if (written?.length) {
          const n = occurrences.get(key) ?? 0;
          occurrences.set(key, n + 1);
          return written[Math.min(n, written.length - 1)]!;
        }
        return linkSpelling(relativePath(path, to) + (anchor ? `#${anchor}` : ''), place);
      };
      const body = exportLinks(docs.get(p.doc ?? '') ?? '', (target, place) => {
        const page = /^\/pages\/([^/#?]+)(?:#(.*))?$/.exec(target);
        if (page) {
          const to = pathOf.get(page[1]!);
          return to ? link(to, page[2] ?? '', place) : undefined;
        }
        const file = /^\/files\/([^/#?]+)$/.exec(target);
        if (file) {
          const to = filePath.get(file[1]!);
          return to ? link(to, '', place) : undefined;
        }
        return undefined;
      });
      const withIncludes = rewriteIncludes(body, (target) => (target.startsWith('.gitbook/includes/') ? relativeLink(path, inRoot(target)) : undefined));
      // Front matter and title as they were written while they say the same; else Folio's.
      head = known?.head && known.head.hash === headHash(p) ? known.head : undefined;
      const text = head
        ? head.text + (head.bodyless && withIncludes ? (head.text.endsWith('\n\n') ? '' : head.text.endsWith('\n') ? '\n' : '\n\n') : '') + withIncludes
        : writePageFile(p.title, coverAsPath(frontMatterOf(p), (file) => filePath.get(file), path), withIncludes);
      const previous = known?.oid ? previousFiles.get(known.oid)?.toString('utf8') : undefined;
      out.files.push({ path, data: Buffer.from(previous === undefined ? text : keepUnchangedLines(previous, text), 'utf8') });
    }
    out.manifest.pages[p.id] = { kind: 'page', path, entry: hash, ...(oid ? { oid } : {}), ...(known?.href && known.path === path ? { href: known.href } : {}), ...(head ? { head } : {}), ...(known?.tail ? { tail: known.tail } : {}), ...(known?.label ? { label: known.label } : {}), ...(known?.written && known.path === path ? { written: known.written } : {}) };
  }
  for (const f of files) {
    const path = filePath.get(f.id)!;
    const known = m?.files[f.id];
    if (known && known.blob === f.blob && known.path === path && reusable(known.oid)) {
      out.files.push({ path, oid: known.oid });
      out.manifest.files[f.id] = known;
    } else {
      const data = Buffer.from((await opts.blobs.read(f.blob)) ?? new Uint8Array());
      out.files.push({ path, data });
      out.manifest.files[f.id] = { path, oid: '', blob: f.blob };
    }
  }

  // Reusable contents and variables, each file kept as it was while unchanged.
  const includeDocs = await getDocuments(db, reusableContents.map((r) => r.doc ?? ''));
  out.manifest.includes = {};
  for (const r of reusableContents) {
    const known = m?.includes?.[r.id];
    const hash = includeEntryHash(r);
    const path = known?.path ?? inRoot('.gitbook/includes', `${r.id}.md`);
    used.add(path);
    const kept = known && known.entry === hash && reusable(known.oid);
    if (kept) out.files.push({ path, oid: known.oid });
    else {
      const body = includeDocs.get(r.doc ?? '') ?? '';
      out.files.push({ path, data: Buffer.from(writeIncludeFile(r.title, body), 'utf8') });
    }
    out.manifest.includes[r.id] = { path, oid: kept ? known.oid : '', entry: hash };
  }
  const varsHash = hashOf(variables);
  if (m?.vars && m.vars.hash === varsHash && reusable(m.vars.oid)) {
    out.files.push({ path: m.vars.path, oid: m.vars.oid });
    out.manifest.vars = m.vars;
  } else if (Object.keys(variables).length) {
    const path = m?.vars?.path ?? inRoot('.gitbook/vars.yaml');
    out.files.push({ path, data: Buffer.from(stringifyYaml(variables, { lineWidth: 0 }), 'utf8') });
    out.manifest.vars = { path, oid: '', hash: varsHash };
  }

  // SUMMARY.md: the same table of contents as last time is the same file.
  const toc = (parent: string | null): TocItem[] =>
    (children.get(parent) ?? []).map((p) => {
      const kind = kindOf.get(p.id)!;
      const known = m?.pages[p.id];
      const title = p.linkTitle ?? p.title;
      // The item's title and link title as written, while the title is the same.
      const tail = { ...(known?.tail ? { tail: known.tail } : {}), ...(known?.label && known.label.title === title ? { label: known.label.as } : {}) };
      if (kind === 'group') return { kind, title: p.title, slug: p.slug, children: toc(p.id) };
      if (kind === 'link') {
        const to = linkOf(p);
        const written = known?.written && known.href === (to?.href ?? known.href) ? { written: known.written } : {};
        return { kind, title, ...(to?.path ? { path: to.path, href: to.anchor } : { href: to?.href ?? known?.href ?? '' }), ...tail, ...written, children: toc(p.id) };
      }
      const href = out.manifest.pages[p.id]?.href;
      const written = known?.written && known.path === pathOf.get(p.id) ? { written: known.written } : {};
      return { kind, title, path: pathOf.get(p.id)!, ...(href ? { href } : {}), ...tail, ...written, children: toc(p.id) };
    });
  const items = toc(null);
  const summaryPath = inRoot(config.summary);
  const shape = hashOf(shapeOf(items));
  if (m?.summary && m.summary.shape === shape && m.summary.path === '') {
    out.manifest.summary = m.summary;
  } else if (m?.summary && m.summary.shape === shape && m.summary.path === summaryPath && reusable(m.summary.oid)) {
    out.files.push({ path: summaryPath, oid: m.summary.oid });
    out.manifest.summary = m.summary;
  } else {
    out.files.push({ path: summaryPath, data: Buffer.from(writeSummary(items, summaryPath), 'utf8') });
    out.manifest.summary = { path: summaryPath, oid: '', shape };
  }
  const configPath = repoPath(opts.projectDir, '.gitbook.yaml')!;
  const existing = new Set(opts.existing.map((f) => f.path));
  if (!existing.has(configPath) && m?.config?.path === configPath) {
    // The repository had one (a new branch of another repository, or an empty one, gets it too).
    out.files.push({ path: configPath, data: Buffer.from(m.config.text, 'utf8') });
  } else if (!existing.has(configPath) && !m) {
    const root = config.root === opts.projectDir ? './' : `./${posix.relative(opts.projectDir || '.', config.root)}/`;
    out.files.push({ path: configPath, data: Buffer.from(`root: ${root}\n\nstructure:\n  readme: ${config.readme}\n  summary: ${config.summary}\n`, 'utf8') });
  }

  // Files Folio wrote at the last sync and does not write now are removed; others stay.
  const written = new Set(out.files.map((f) => f.path));
  const before = new Set<string>();
  if (m) {
    for (const p of Object.values(m.pages)) if (p.path) before.add(p.path);
    for (const f of Object.values(m.files)) before.add(f.path);
    if (m.summary?.path) before.add(m.summary.path);
    for (const i of Object.values(m.includes ?? {})) before.add(i.path);
    if (m.vars) before.add(m.vars.path);
  }
  for (const path of before) if (!written.has(path) && existing.has(path)) out.deletes.push(path);
  // Writing a file where the tree has a folder (or the reverse) needs the other removed first.
  for (const f of out.files) {
    for (const e of existing) if (e.startsWith(`${f.path}/`) && !written.has(e)) out.deletes.push(e);
  }
  return out;
}

/**
 * Page metadata with a cover that references a space file (`/files/<id>`) written as the path of
 * that file relative to the page, unencoded as GitBook writes it (`.gitbook/assets/hero (1).png`).
 */
export function coverAsPath(metadata: PageMetadata, pathOfFile: (id: string) => string | undefined, pagePath: string): PageMetadata {
  const id = metadata.cover ? /^\/files\/([^/#?]+)$/.exec(metadata.cover.url)?.[1] : undefined;
  const to = id ? pathOfFile(id) : undefined;
  if (!to || !metadata.cover) return metadata;
  return { ...metadata, cover: { ...metadata.cover, url: posix.relative(posix.dirname(`/${pagePath}`), `/${to}`) } };
}
