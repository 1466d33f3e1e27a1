import type { Ctx } from '../platform/context.ts';
import type { SpaceRow, TranslationRow } from '../platform/db/schema.ts';
import { BadRequestError, ConflictError, HttpError, NotFoundError } from '../platform/errors.ts';
import { loadSpace } from '../spaces/access.ts';
import { findSpace } from '../spaces/store.ts';
import { breather, documentPage, type ComputedPage, seededDocument, seededId } from '../content/computed-pages.ts';
import { presentReusableContent, spaceHoldsDocument, storedText } from '../content/documents.ts';
import { ContentReader, getDocuments, sortPages, type PageEntry } from '../content/model.ts';
import { DEFAULT_LAYOUT, presentFile } from '../content/presenter.ts';
import { loadRevision } from '../content/service.ts';
import * as store from './store.ts';

/** A document of a translation's source space (`props.space`, `props.document`), read in the translation's result. */
export interface TranslationDocumentSource {
  kind: 'translation';
  translation: string;
  space: string;
  document: string;
}

/**
 * `builtin:translation` computed content: what a translation's latest run produced, read from its
 * result (the revision of the target space that run merged, `result.revision` of the
 * translation), never from the target's current revision. That revision and the page mapping
 * (`translation_pages`, source page to target page with the source document each target page was
 * translated from) are written together at the end of a run, so they always agree, and the
 * content answered is the one the dependency's value (`TranslationResult`) names.
 *
 * Access is the content's: the translation is found in the organization of the space in the path,
 * and the caller must read its target space (and, for a document, its source space) with their
 * own rights. A translation whose content the caller cannot read is not found, as a space is.
 */

/** A computed revision converts every page's document in one request: beyond this, read the target space. */
const MAX_PAGES = 1000;

export interface TranslationResultContent {
  row: TranslationRow;
  target: SpaceRow;
  /** The revision the latest run produced, and its tree. */
  revision: string;
  root: string;
}

/** The space if the caller can read it, else undefined (invisible and missing look the same). */
async function readableSpace(ctx: Ctx, spaceId: string): Promise<SpaceRow | undefined> {
  try {
    return (await loadSpace(ctx, spaceId)).space;
  } catch (err) {
    if (err instanceof NotFoundError) return undefined;
    throw err;
  }
}

/**
 * The translation's result as the caller may read it: 404 when the translation is not in the
 * organization or its content is not readable by the caller, 409 when it has no result yet.
 */
export async function translationResult(ctx: Ctx, space: Pick<SpaceRow, 'organization_id'>, id: string, at = 'source'): Promise<TranslationResultContent> {
  const where = `${at}.dependencies.translation`;
  const invisible = () => new HttpError(404, `${where}: no translation "${id}" whose content you can read in this organization`);
  const row = await store.findTranslation(ctx.db, space.organization_id, id);
  if (!row) throw invisible();
  const found = row.result_space_id && row.result_revision ? await findSpace(ctx.db, row.result_space_id) : undefined;
  const target = found && !found.deleted_at && found.organization_id === row.organization_id ? found : undefined;
  if (!target) {
    // Only who reads the source learns that the translation exists without a result.
    if (!(await readableSpace(ctx, row.source_space_id))) throw invisible();
    // 409, as for an OpenAPI spec with no processed version yet (src/openapi/computed.ts): the
    // request is right, the translation is not yet in a state to answer it, and running it is the fix.
    const run = `POST /v1/orgs/${row.organization_id}/translations/${row.id}/run`;
    throw new ConflictError(
      row.result_revision
        ? `${where}: the target space of the translation "${id}" was deleted, so it has no translated content; run it again (${run}) to write a new one`
        : `${where}: the translation "${id}" has not run yet, so it has no translated content; run it first (${run}) and wait until its status is "completed"`,
    );
  }
  if (!(await readableSpace(ctx, target.id))) throw invisible();
  const revision = await loadRevision(ctx.db, target.id, row.result_revision!);
  return { row, target, revision: revision.id, root: revision.root };
}

/** The official `TranslationResult` of a dependency, or null when the caller cannot read it or it has not run. */
export async function translationDependencyValue(ctx: Ctx, space: Pick<SpaceRow, 'organization_id'>, id: string) {
  try {
    const result = await translationResult(ctx, space, id);
    return { space: result.target.id, revision: result.revision, language: result.row.language };
  } catch (err) {
    if (err instanceof HttpError && (err.statusCode === 404 || err.statusCode === 409)) return null;
    throw err;
  }
}

/** What a computed page keeps of the translated page besides its title, slug and body. */
function pageExtra(page: PageEntry): Record<string, unknown> {
  return {
    layout: { ...DEFAULT_LAYOUT, ...(page.layout ?? {}) },
    ...(page.emoji ? { emoji: page.emoji } : page.icon ? { icon: page.icon } : {}),
    ...(page.description !== undefined ? { description: page.description } : {}),
    ...(page.linkTitle ? { linkTitle: page.linkTitle } : {}),
    ...(page.variables && Object.keys(page.variables).length ? { variables: page.variables } : {}),
    hidden: page.hidden ?? false,
    noIndex: page.noIndex ?? false,
    noRobotsIndex: page.noRobotsIndex ?? false,
  };
}

/**
 * `getComputedRevision` of a translation: the pages of its result, in their order, with ids from
 * the seed (one per target page) and each document seeded with its page's id, as every computed
 * revision's. Files and reusable contents are the result's own: the documents refer to them by id.
 */
export async function translatedRevision(ctx: Ctx, space: SpaceRow, translationId: string, seed: string) {
  const result = await translationResult(ctx, space, translationId);
  const { pages, files, reusableContents } = await new ContentReader(ctx.db, result.root).all();
  if (pages.size > MAX_PAGES) {
    throw new BadRequestError(
      `source.dependencies.translation: the result of the translation "${translationId}" has ${pages.size} pages, more than the ${MAX_PAGES} one computed revision holds; read it from its target space instead (getRevisionById of space "${result.target.id}", revision "${result.revision}")`,
    );
  }
  const markdown = await getDocuments(ctx.db, [...pages.values()].map((p) => p.doc ?? ''));
  const byParent = new Map<string | null, PageEntry[]>();
  for (const page of pages.values()) byParent.set(page.parent, [...(byParent.get(page.parent) ?? []), page]);
  const breathe = breather();
  const build = async (parent: string | null, prefix: string): Promise<ComputedPage[]> => {
    const out: ComputedPage[] = [];
    for (const page of sortPages(byParent.get(parent) ?? [])) {
      await breathe();
      const id = seededId(seed, `page:${page.id}`);
      const path = prefix ? `${prefix}/${page.slug}` : page.slug;
      const document = await seededDocument(page.doc ? (markdown.get(page.doc) ?? '') : '', id);
      out.push(documentPage(ctx, space, { id, title: page.title, slug: page.slug, path, document, pages: await build(page.id, path), extra: pageExtra(page) }));
    }
    return out;
  };
  return {
    pages: await build(null, ''),
    files: files.map((f) => presentFile(ctx.urls, f, { metadata: false })),
    reusableContents: reusableContents.map((r) => presentReusableContent(r, { metadata: false }, '')),
  };
}

/**
 * The markdown of a source document translated: the target page the latest run wrote from that
 * very document (the mapping's fingerprint is the source document a target page was translated
 * from), as the result holds it. 404 for a document the source space never held; 409 for one of
 * the source space that the latest run did not translate (its page is new or changed since).
 */
export async function translatedDocumentMarkdown(ctx: Ctx, space: Pick<SpaceRow, 'organization_id'>, source: TranslationDocumentSource, at = 'source'): Promise<string> {
  const result = await translationResult(ctx, space, source.translation, at);
  const origin = await readableSpace(ctx, source.space);
  if (!origin) throw new HttpError(404, `${at}.props.space: no space "${source.space}" that you can read`);
  if (origin.id !== result.row.source_space_id) {
    throw new BadRequestError(`${at}.props.space: space "${source.space}" is not the source of the translation "${source.translation}"; give the ID of the space it translates`);
  }
  const mapped = await store.targetPagesOfDocument(ctx.db, result.row.id, source.document);
  const reader = new ContentReader(ctx.db, result.root);
  // Pages with the same text share a document: any of their translations is its translation.
  for (const { target_page_id } of mapped) {
    const page = await reader.page(target_page_id);
    if (page) return storedText(ctx.db, page.doc);
  }
  if (!(await spaceHoldsDocument(ctx.db, origin, source.document))) {
    throw new HttpError(404, `${at}.props.document: no document "${source.document}" in space "${origin.id}" (give the documentId of one of its pages)`);
  }
  throw new ConflictError(
    `${at}.props.document: the latest run of the translation "${source.translation}" translated no page from document "${source.document}": its page was added or changed since that run (run the translation again), or it is no longer the text of any page`,
  );
}
