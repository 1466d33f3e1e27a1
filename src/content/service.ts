import type { Ctx } from '../platform/context.ts';
import type { Db } from '../platform/db/database.ts';
import type { RevisionRow, SpaceRow } from '../platform/db/schema.ts';
import { BadRequestError, NotFoundError } from '../platform/errors.ts';
import type { PageRequest } from '../platform/paging.ts';
import type { PageUrlScope } from '../platform/urls.ts';
import { spaceUrls } from '../spaces/presenter.ts';
import { loadSpace } from '../spaces/access.ts';
import { presentReusableContent, readBody, type BodyOptions } from './documents.ts';
import { contentExtensions, mayHoldComputedBlocks, resolveComputedBlocks } from './extensions.ts';
import type { Block } from './markdown/shared.ts';
import { isLargeMarkdown, markdownToDocumentForRead, markdownToDocumentJsonForRead } from './convert.ts';
import { ContentReader, getDocuments, type PageEntry } from './model.ts';
import { withFrontMatter } from './markdown/front-matter.ts';
import { pageDirectory, relativeCover, relativeLinks } from './page-links.ts';
import { frontMatterOf, loadPresentedPage, presentFile, presentPageTree, type PagePresentOptions } from './presenter.ts';
import { findRevision } from './store.ts';

/** Which content a read is about: the space's current revision, a revision by id, or a change request's head. */
export interface ContentTarget {
  space: SpaceRow;
  revision: RevisionRow;
  /** The number of the change request whose head this is: its pages' `urls.app` are inside it. */
  changeRequest?: number | undefined;
}

/** Where the target's pages are in the app: the space, or the change request read. */
export function pageUrlScope(target: ContentTarget): PageUrlScope {
  return { id: target.space.id, changeRequest: target.changeRequest };
}

export async function loadRevision(db: Db, spaceId: string, revisionId: string): Promise<RevisionRow> {
  const revision = await findRevision(db, spaceId, revisionId);
  if (!revision) throw new NotFoundError('Revision');
  return revision;
}

export async function currentContent(ctx: Ctx, spaceId: string): Promise<ContentTarget> {
  const { space } = await loadSpace(ctx, spaceId);
  return { space, revision: await loadRevision(ctx.db, space.id, space.revision_id) };
}

export async function revisionContent(ctx: Ctx, spaceId: string, revisionId: string): Promise<ContentTarget> {
  const { space, throughSite } = await loadSpace(ctx, spaceId);
  // A site publishes the current content only: its readers do not read the space's history.
  if (throughSite && revisionId !== space.revision_id) throw new NotFoundError('Revision');
  return { space, revision: await loadRevision(ctx.db, space.id, revisionId) };
}

export function readerFor(ctx: Ctx, target: ContentTarget): ContentReader {
  return new ContentReader(ctx.db, target.revision.root);
}

export interface ReadOptions extends PagePresentOptions, BodyOptions {
  format?: 'document' | 'markdown' | undefined;
  /** Resolve blocks that point into OpenAPI specs (`computed=true`). */
  computed?: boolean | undefined;
  /** How markdown writes links to pages and files: relative paths (the default) or ids. */
  markdownRefs?: 'relative' | 'stable' | undefined;
}

/** The revision resource: page tree, files and variables. */
/** For a merge revision, the change request it came from (the official shape requires it; src/change-requests/ answers it). */
async function mergedFrom(ctx: Ctx, target: ContentTarget) {
  if (target.revision.type !== 'merge' || !contentExtensions.mergedFrom) return {};
  const cr = await contentExtensions.mergedFrom(ctx, target.space, target.revision);
  return cr ? { mergedFrom: cr } : {};
}

export async function presentRevision(ctx: Ctx, target: ContentTarget, opts: PagePresentOptions) {
  const { pages, files, reusableContents, variables } = await readerFor(ctx, target).all();
  const markdown = await getDocuments(ctx.db, [...pages.values(), ...reusableContents].map((p) => p.doc ?? ''));
  const urls = spaceUrls(ctx.urls, target.space);
  return {
    object: 'revision' as const,
    id: target.revision.id,
    parents: target.revision.parents,
    type: target.revision.type,
    pages: presentPageTree(ctx.urls, pageUrlScope(target), pages, opts, markdown),
    files: files.map((f) => presentFile(ctx.urls, f, opts)),
    reusableContents: reusableContents.map((r) => presentReusableContent(r, opts, markdown.get(r.doc ?? '') ?? '')),
    tags: [],
    variables,
    createdAt: target.revision.created_at.toISOString(),
    ...(opts.metadata && target.revision.git
      ? { git: target.revision.git as { oid: string; message: string; createdByGitBook: boolean; url?: string; ref?: string } }
      : opts.metadata && target.revision.message
        ? { git: { oid: target.revision.id, message: target.revision.message, createdByGitBook: true } }
        : {}),
    urls: {
      app: ctx.urls.app(`/s/${target.space.id}/revisions/${target.revision.id}`),
      ...(urls.published ? { published: urls.published } : {}),
      ...(urls.public ? { public: urls.public } : {}),
    },
    ...(await mergedFrom(ctx, target)),
  };
}

export async function presentPages(ctx: Ctx, target: ContentTarget, opts: PagePresentOptions) {
  const { pages } = await readerFor(ctx, target).all();
  const markdown = await getDocuments(ctx.db, [...pages.values()].map((p) => p.doc ?? ''));
  return { pages: presentPageTree(ctx.urls, pageUrlScope(target), pages, opts, markdown) };
}

/** One page, with its markdown or its JSON document (expressions evaluated on request). */
export async function presentPage(ctx: Ctx, target: ContentTarget, page: PageEntry | undefined, opts: ReadOptions) {
  if (!page) throw new NotFoundError('Page');
  const reader = readerFor(ctx, target);
  const source = page.doc ? ((await getDocuments(ctx.db, [page.doc])).get(page.doc) ?? '') : '';
  let markdown = await readBody(reader, source, page, opts);
  // The markdown of a page carries its metadata as front matter and links relative to the page, as
  // GitBook exports it (or links by id, with `format.markdown.refs=stable`).
  if (opts.format === 'markdown') {
    const stable = opts.markdownRefs === 'stable';
    const directory = stable ? '' : await pageDirectory(reader, page);
    if (!stable) markdown = await relativeLinks(reader, markdown, directory);
    markdown = withFrontMatter(stable ? frontMatterOf(page) : await relativeCover(reader, frontMatterOf(page), directory), markdown);
  }
  if (opts.format !== 'markdown' && isLargeMarkdown(markdown)) {
    // A large document is converted and serialized on a worker thread; the page around it is
    // serialized here and the two texts are joined (see pageReadJson).
    const [documentJson, presented] = await Promise.all([
      markdownToDocumentJsonForRead(markdown),
      loadPresentedPage(ctx.urls, pageUrlScope(target), reader, page, { ...opts, source, document: DOCUMENT_SLOT }),
    ]);
    if (opts.computed && mayHoldComputedBlocks(markdown)) {
      const document = JSON.parse(documentJson);
      await resolveComputedBlocks(ctx, target.space.organization_id, markdown, document);
      return { page: presented, documentJson: JSON.stringify(document) };
    }
    return { page: presented, documentJson };
  }
  const document = opts.format === 'markdown' ? undefined : await markdownToDocumentForRead(markdown);
  if (document && opts.computed) await resolveComputedBlocks(ctx, target.space.organization_id, markdown, document as { nodes?: Block[] });
  return {
    page: await loadPresentedPage(ctx.urls, pageUrlScope(target), reader, page, {
      ...opts,
      source,
      ...(document === undefined ? { markdown } : { document }),
    }),
  };
}

/** Stands for a document that is JSON text already; replaced in `pageReadJson`. */
const DOCUMENT_SLOT = { object: '\u0000document-slot' };
const SLOT_JSON = JSON.stringify({ document: DOCUMENT_SLOT }).slice(1, -1);

/** A page read: the page, and its document as JSON text when it was serialized apart. */
export interface PageRead {
  page: Awaited<ReturnType<typeof loadPresentedPage>>;
  documentJson?: string;
}

/**
 * The response body of a page read whose document is JSON text: the page is serialized without
 * it and the text goes where the slot was. (Text values cannot hold a NUL, so the slot is unique.)
 */
export function pageReadJson(read: Required<PageRead>): string {
  const json = JSON.stringify(read.page);
  const at = json.indexOf(SLOT_JSON);
  if (at === -1) throw new Error('document slot missing from the page');
  return `${json.slice(0, at)}"document":${read.documentJson}${json.slice(at + SLOT_JSON.length)}`;
}

export async function pageById(ctx: Ctx, target: ContentTarget, pageId: string, opts: ReadOptions) {
  return presentPage(ctx, target, await readerFor(ctx, target).page(pageId), opts);
}

export async function pageByPath(ctx: Ctx, target: ContentTarget, path: string, opts: ReadOptions) {
  // The router has already decoded the path: decoding again would misread a literal '%'.
  return presentPage(ctx, target, await readerFor(ctx, target).byPath(path), opts);
}

export async function listFiles(ctx: Ctx, target: ContentTarget, page: PageRequest, opts: PagePresentOptions) {
  const { files } = await readerFor(ctx, target).all();
  // Files are few per revision and already in memory: page through them by position.
  const limit = page.limit ?? 50;
  const cursor = page.page ? Buffer.from(page.page, 'base64url').toString() : '0';
  if (!/^\d{1,9}$/.test(cursor)) throw new BadRequestError('Invalid "page" cursor: pass the value of "next.page" from the previous response');
  const start = Number(cursor);
  const items = files.slice(start, start + limit).map((f) => presentFile(ctx.urls, f, opts));
  const next = start + limit < files.length ? { page: Buffer.from(String(start + limit)).toString('base64url') } : undefined;
  return { items, count: files.length, ...(next ? { next } : {}) };
}

export async function fileById(ctx: Ctx, target: ContentTarget, fileId: string, opts: PagePresentOptions) {
  const file = await readerFor(ctx, target).file(fileId);
  if (!file) throw new NotFoundError('File');
  return presentFile(ctx.urls, file, opts);
}

