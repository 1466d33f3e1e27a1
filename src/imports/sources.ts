import { posix } from 'node:path';
import { ArchiveError, DEFAULT_ARCHIVE_LIMITS, isZip, readZip, safeEntryPath, type ArchiveLimits } from './archive.ts';
import type { Warn } from './markdown.ts';
import { docusaurusProject, findDocusaurus } from './projects/docusaurus.ts';
import { folderProject } from './projects/folder.ts';
import { findMkdocs, mkdocsProject } from './projects/mkdocs.ts';
import { isMarkdown, type Project, type SourceTree } from './projects/nav.ts';
import type { CrawledPage, HtmlToMarkdown } from './projects/website.ts';
import type { Services } from '../platform/context.ts';

/**
 * Website imports, once wired (src/imports/website.ts and html.ts): `crawl` fetches the pages
 * under the URL (an adapter giving the crawler its settings from `services.config`), `toMarkdown`
 * converts each page. While either is missing, `{type: "website"}` sources are refused (400).
 */
export const websiteImports: {
  crawl?: (url: string, services: Services, opts?: { signal?: AbortSignal; onProgress?: (pages: number) => void }) => Promise<{ pages: CrawledPage[]; warnings: string[] }>;
  toMarkdown?: HtmlToMarkdown;
  /** Downloads an image the pages show (absolute URL), to store it as a space file; absent: images stay links to the site. */
  fetchAsset?: (url: string, services: Services, opts: { signal: AbortSignal; maxBytes: number }) => Promise<{ data: Buffer; contentType?: string }>;
} = {};

/**
 * Readers of a whole tree of files that is an export of pages with its own hierarchy (Notion,
 * Confluence, a folder of HTML files): tried, in order, when the files hold no Markdown, before
 * the per-file converters. The first that recognises the tree gives the Markdown tree, its
 * navigation, and the source file of each page.
 */
export type TreeReader = (tree: SourceTree, warn: Warn) => Promise<{ tree: SourceTree; project: Project; sources: Map<string, string>; label: string } | undefined>;
export const TREE_READERS: TreeReader[] = [];

/**
 * From uploaded files to a source tree, and from a source tree to a recognised project. Each kind
 * of upload is one entry of FILE_KINDS: HTML and Word files plug in there (their converters turn
 * them into Markdown files of the tree), until then they are refused with a clear reason.
 */

/** A failure the person importing can act on: the run fails with this reason (a 4xx-style message). */
export class ImportError extends Error {}

export interface Upload {
  key: string;
  name: string;
  contentType: string;
  data: Buffer;
}

type FileKind = {
  test: (u: Pick<Upload, 'name' | 'contentType'>) => boolean;
  /** Files to add to the tree (paths relative to where the upload lands); undefined: not supported. */
  read?: (u: Upload, ctx: { limits: ArchiveLimits; warn: Warn }) => Promise<{ path: string; data: Buffer }[]>;
  unsupported?: string;
};

const ext = (name: string) => posix.extname(name).toLowerCase();

/**
 * Converters of other formats into Markdown files of the tree, by extension (`.html`, `.docx`):
 * each turns one file (uploaded, or inside an archive) into Markdown files and the assets they
 * reference, paths relative to the file's folder. Registering one makes uploads of that
 * extension accepted; the converted files then go through project recognition like any other.
 */
export type Converter = (file: { path: string; data: Buffer }, warn: Warn) => Promise<{ path: string; data: Buffer }[]>;
export const CONVERTERS = new Map<string, Converter>();

export const FILE_KINDS: FileKind[] = [
  {
    test: (u) => ext(u.name) === '.zip' || /zip/.test(u.contentType),
    read: async (u, { limits }) => {
      if (!isZip(u.data)) throw new ImportError(`${u.name}: not a zip archive`);
      try {
        return stripCommonFolder(await readZip(u.data, limits));
      } catch (err) {
        if (err instanceof ArchiveError) throw new ImportError(`${u.name}: ${err.message}`);
        throw err;
      }
    },
  },
  { test: (u) => ['.html', '.htm'].includes(ext(u.name)), unsupported: 'HTML files are not supported yet' },
  { test: (u) => ext(u.name) === '.docx', unsupported: 'Word (.docx) files are not supported yet' },
  { test: (u) => ['.doc', '.pdf', '.odt', '.rtf'].includes(ext(u.name)), unsupported: 'this document format is not supported: export it as Markdown, HTML or .docx' },
  // Markdown, MDX, images and any other attachment: the file itself.
  { test: () => true, read: async (u) => [{ path: safeEntryPath(posix.basename(u.name)) || 'file', data: u.data }] },
];

/** Why an upload of this name cannot be imported, or undefined when it can. */
export function unsupportedReason(name: string, contentType = ''): string | undefined {
  if (CONVERTERS.has(ext(name))) return undefined;
  const kind = FILE_KINDS.find((k) => k.test({ name, contentType }))!;
  return kind.unsupported ? `${name}: ${kind.unsupported}` : undefined;
}

/** The entries of an archive holding one folder, as if that folder were the archive. */
function stripCommonFolder(entries: { path: string; data: Buffer }[]): { path: string; data: Buffer }[] {
  const visible = entries.filter((e) => !/(^|\/)(__MACOSX|\.DS_Store$)/.test(e.path));
  const first = visible[0]?.path.split('/')[0];
  if (first && visible.every((e) => e.path.startsWith(`${first}/`))) return visible.map((e) => ({ ...e, path: e.path.slice(first.length + 1) }));
  return visible;
}

/**
 * The uploads as a tree and what it is: an export a TREE_READER recognises (when the files hold no
 * Markdown and nothing a per-file converter other than HTML's reads), else the converted tree and
 * its recognised project.
 */
export async function sourceProject(
  uploads: Upload[],
  opts: { limits?: ArchiveLimits; warn: Warn },
): Promise<{ tree: SourceTree; project: Project; label: string; sources?: Map<string, string> }> {
  const raw = await gatherTree(uploads, opts);
  const paths = [...raw.keys()];
  if (TREE_READERS.length && !paths.some(isMarkdown) && !paths.some((p) => CONVERTERS.has(ext(p)) && !/\.html?$/i.test(p))) {
    for (const reader of TREE_READERS) {
      const read = await reader(raw, opts.warn);
      if (read) return { ...read, label: uploads.length === raw.size && read.label === 'html' ? 'files' : read.label };
    }
  }
  const tree = await convertTree(raw, opts.warn);
  const project = recognise(tree, opts.warn);
  return { tree, project, label: uploads.length === raw.size ? 'files' : project.kind };
}

/** All uploads as one tree: a single archive is the tree; several uploads sit side by side (archives in a folder named after them). */
export async function sourceTree(uploads: Upload[], opts: { limits?: ArchiveLimits; warn: Warn; maxFiles?: number }): Promise<SourceTree> {
  return convertTree(await gatherTree(uploads, opts), opts.warn);
}

async function gatherTree(uploads: Upload[], opts: { limits?: ArchiveLimits; warn: Warn }): Promise<SourceTree> {
  const limits = opts.limits ?? DEFAULT_ARCHIVE_LIMITS;
  const tree: SourceTree = new Map();
  let total = 0;
  for (const u of uploads) {
    const kind = CONVERTERS.has(ext(u.name)) ? FILE_KINDS.at(-1)! : FILE_KINDS.find((k) => k.test(u))!;
    if (!kind.read) throw new ImportError(`${u.name}: ${kind.unsupported}`);
    const entries = await kind.read(u, { limits, warn: opts.warn });
    const isArchive = entries.length !== 1 || entries[0]!.path !== posix.basename(u.name);
    const prefix = uploads.length > 1 && isArchive ? u.name.replace(/\.[^.]+$/, '').replace(/[^\w.-]+/g, '-') : '';
    for (const e of entries) {
      let path = prefix ? `${prefix}/${e.path}` : e.path;
      for (let n = 2; tree.has(path); n++) path = path.replace(/(\.[^./]+)?$/, `-${n}$1`);
      tree.set(path, e.data);
      total += e.data.length;
    }
    if (tree.size > limits.maxFiles) throw new ImportError(`the files hold more than ${limits.maxFiles} entries, more than an import takes`);
    if (total > limits.maxBytes) throw new ImportError(`the files expand to more than ${limits.maxBytes} bytes, more than an import takes`);
  }
  return tree;
}

async function convertTree(tree: SourceTree, warn: Warn): Promise<SourceTree> {
  // Files of other formats (uploaded or archived) become Markdown where a converter is registered.
  for (const [path, data] of [...tree]) {
    const convert = CONVERTERS.get(ext(path));
    if (!convert) continue;
    tree.delete(path);
    const dir = posix.dirname(path) === '.' ? '' : posix.dirname(path);
    for (const out of await convert({ path, data }, (message) => warn(`${path}: ${message}`))) {
      const target = dir ? `${dir}/${safeEntryPath(out.path)}` : safeEntryPath(out.path);
      if (!tree.has(target)) tree.set(target, out.data);
    }
  }
  if (![...tree.keys()].some(isMarkdown)) throw new ImportError('no Markdown file (.md, .mdx) in the files to import');
  return tree;
}

/** Docusaurus, then MkDocs, else a plain folder of Markdown. */
export function recognise(tree: SourceTree, warn: Warn): Project {
  const mkdocs = findMkdocs(tree);
  const docusaurus = findDocusaurus(tree);
  if (docusaurus !== undefined && (!mkdocs || docusaurus.split('/').length <= mkdocs.split('/').length - 1)) return docusaurusProject(tree, docusaurus, warn);
  if (mkdocs) return mkdocsProject(tree, mkdocs, warn);
  return folderProject(tree, '');
}
