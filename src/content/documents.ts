import type { Ctx } from '../platform/context.ts';
import type { Db } from '../platform/db/database.ts';
import type { SpaceRow } from '../platform/db/schema.ts';
import { NotFoundError } from '../platform/errors.ts';
import { loadSpace } from '../spaces/access.ts';
import type { GitBookDocument } from './markdown/markdown.ts';
import { isLargeMarkdown, markdownToDocumentForRead, markdownToDocumentJsonForRead } from './convert.ts';
import { evaluateExpressions } from './expressions.ts';
import { gitOid } from './presenter.ts';
import { ContentReader, getDocuments, type PageEntry, type ReusableContentEntry } from './model.ts';
import type { ContentTarget } from './service.ts';
import { markDocumentsIndexed, recordSpaceDocuments, revisionRoot, spaceHoldsHash } from './store.ts';

/**
 * Documents as the official reads serve them (`JSONDocument`): a page's or a reusable content's
 * body by its own id, or by the id of the stored document. A body is read the same way whatever
 * asks for it: includes expanded when dereferenced, expressions evaluated when evaluated.
 */

export interface BodyOptions {
  evaluated?: boolean | 'deterministic-only' | undefined;
  /** `true` and `reusable-contents` both expand includes: reusable contents are the references Folio can inline. */
  dereferenced?: boolean | 'reusable-contents' | undefined;
}

/** Includes nest at most this deep; a cycle (a content including itself) stops at the first repeat. */
const MAX_INCLUDE_DEPTH = 10;
/** `{% include ".gitbook/includes/<id>.md" %}` on a line of its own (the form GitBook writes). */
const INCLUDE_LINE = /^([ \t]*)\{%[ \t]*include[ \t]+"((?:\.\.\/)*(?:\.\/)?\.gitbook\/includes\/([^"/]+)\.md)"[ \t]*%\}[ \t]*$/gm;

/** The markdown with each include replaced by the reusable content it names (unknown ones are left as written). */
export async function expandIncludes(reader: ContentReader, markdown: string, seen: string[] = []): Promise<string> {
  if (!markdown.includes('{%') || seen.length >= MAX_INCLUDE_DEPTH) return markdown;
  const ids = new Set<string>();
  for (const m of markdown.matchAll(INCLUDE_LINE)) if (!seen.includes(m[3]!)) ids.add(m[3]!);
  if (!ids.size) return markdown;
  const entries = await Promise.all([...ids].map((id) => reader.reusableContent(id)));
  const docs = await getDocuments(reader.db, entries.map((e) => e?.doc ?? ''));
  const expanded = new Map<string, string>();
  for (const entry of entries) {
    if (!entry) continue;
    const text = entry.doc ? (docs.get(entry.doc) ?? '') : '';
    expanded.set(entry.id, (await expandIncludes(reader, text, [...seen, entry.id])).replace(/\n+$/, ''));
  }
  return markdown.replace(INCLUDE_LINE, (whole, indent: string, _path: string, id: string) => {
    const text = expanded.get(id);
    return text === undefined ? whole : text.split('\n').map((line) => (line ? indent + line : line)).join('\n');
  });
}

/** A stored body made ready for a read: includes expanded and expressions evaluated as asked. */
export async function readBody(reader: ContentReader, source: string, page: Pick<PageEntry, 'variables'> | undefined, opts: BodyOptions): Promise<string> {
  let markdown = source;
  if (opts.dereferenced) markdown = await expandIncludes(reader, markdown);
  if (opts.evaluated) markdown = evaluateExpressions(markdown, { space: await reader.variables(), page: page?.variables ?? {} });
  return markdown;
}

/** A JSON document response: an object for small documents, JSON text converted on a worker for large ones. */
export type DocumentRead = { document: GitBookDocument } | { json: string };

async function documentRead(markdown: string): Promise<DocumentRead> {
  if (isLargeMarkdown(markdown)) return { json: await markdownToDocumentJsonForRead(markdown) };
  return { document: await markdownToDocumentForRead(markdown) };
}

/** The stored markdown of a document hash ('' for none). */
export async function storedText(db: Db, hash: string | null): Promise<string> {
  return hash ? ((await getDocuments(db, [hash])).get(hash) ?? '') : '';
}

/** `getPageDocumentInRevisionById`: the page's body alone, as a document. */
export async function pageDocument(ctx: Ctx, target: ContentTarget, pageId: string, opts: BodyOptions): Promise<DocumentRead> {
  const reader = new ContentReader(ctx.db, target.revision.root);
  const page = await reader.page(pageId);
  if (!page) throw new NotFoundError('Page');
  return documentRead(await readBody(reader, await storedText(ctx.db, page.doc), page, opts));
}

/** The official `RevisionReusableContent`: its document is the id of the stored body; git metadata names its file. */
export function presentReusableContent(entry: ReusableContentEntry, opts: { metadata: boolean }, source: string) {
  return {
    id: entry.id,
    title: entry.title,
    ...(entry.doc ? { document: entry.doc } : {}),
    ...(opts.metadata ? { git: { oid: gitOid(source), path: `.gitbook/includes/${entry.id}.md` } } : {}),
  };
}

async function requireReusableContent(reader: ContentReader, id: string): Promise<ReusableContentEntry> {
  const entry = await reader.reusableContent(id);
  if (!entry) throw new NotFoundError('Reusable content');
  return entry;
}

export async function reusableContentById(ctx: Ctx, target: ContentTarget, id: string, opts: { metadata: boolean }) {
  const entry = await requireReusableContent(new ContentReader(ctx.db, target.revision.root), id);
  return presentReusableContent(entry, opts, await storedText(ctx.db, entry.doc));
}

export async function reusableContentDocument(ctx: Ctx, target: ContentTarget, id: string, opts: BodyOptions): Promise<DocumentRead> {
  const reader = new ContentReader(ctx.db, target.revision.root);
  const entry = await requireReusableContent(reader, id);
  return documentRead(await readBody(reader, await storedText(ctx.db, entry.doc), undefined, opts));
}

/**
 * `getDocumentById`: a stored document, if the space holds it. Documents are shared by hash across
 * spaces, so the space must be recorded as holding this one (see migration 0008); a space from
 * before that record existed is indexed from its current content on its first document read.
 */
export async function documentById(ctx: Ctx, spaceId: string, hash: string): Promise<DocumentRead> {
  const { space } = await loadSpace(ctx, spaceId);
  if (!(await spaceHoldsDocument(ctx.db, space, hash))) throw new NotFoundError('Document');
  return documentRead(await storedText(ctx.db, hash));
}

/** Whether the space holds (or held) the stored document: what scopes a document id to a space. */
export async function spaceHoldsDocument(db: Db, space: Pick<SpaceRow, 'id' | 'organization_id' | 'revision_id' | 'documents_indexed'>, hash: string): Promise<boolean> {
  let held = await spaceHoldsHash(db, space.id, hash);
  if (!held && !space.documents_indexed) {
    await indexSpaceDocuments(db, space);
    held = await spaceHoldsHash(db, space.id, hash);
  }
  return held;
}

/** Records the documents of a space's current content as held by it (once per space, for spaces older than the record). */
async function indexSpaceDocuments(db: Db, space: Pick<SpaceRow, 'id' | 'organization_id' | 'revision_id'>): Promise<void> {
  const root = await revisionRoot(db, space.organization_id, space.revision_id);
  const { pages, reusableContents } = await new ContentReader(db, root).all();
  const hashes = [...new Set([...pages.values(), ...reusableContents].map((e) => e.doc).filter((h): h is string => !!h))];
  for (let i = 0; i < hashes.length; i += 500) await recordSpaceDocuments(db, space.id, hashes.slice(i, i + 500));
  await markDocumentsIndexed(db, space.organization_id, space.id);
}
