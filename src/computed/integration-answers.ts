import type { Ctx } from '../platform/context.ts';
import type { SpaceRow } from '../platform/db/schema.ts';
import { BadRequestError, HttpError, NotFoundError } from '../platform/errors.ts';
import { openAPISpecPermissions } from '../platform/policy.ts';
import { loadSpace } from '../spaces/access.ts';
import { specMembership } from '../openapi/blocks.ts';
import { findSpec } from '../openapi/store.ts';
import { computeWithIntegration, IntegrationAnswerError } from '../integrations/computed.ts';
import { translatedDocumentMarkdown, translationDependencyValue } from '../translations/computed.ts';
import { breather, documentPage, type ComputedFile, type ComputedPage, seededDocument, seededId, Slugs } from '../content/computed-pages.ts';
import { openAPIMarkdown, SpecLoader } from '../openapi/computed-pages.ts';
import { documentSource, revisionSource, type SourceInput } from './sources.ts';
import { documentInputToMarkdown } from '../content/convert.ts';
import type { GitBookDocument } from '../content/markdown/markdown.ts';
import { MAX_PAGE_DEPTH } from '../content/model.ts';

/**
 * What an integration answers to `content_compute_document` (`{document}`: markdown, a JSON
 * document, or nothing) and to `content_compute_revision` (`{pages, files}`, the official
 * `InputPage` and `InputFile`), checked and turned into the official answers of
 * `getComputedDocument` and `getComputedRevision`. Whatever the integration got wrong is a 502
 * naming the place in its answer (`pages[2].title: …`): the caller's request was fine.
 *
 * A document page of the answer carries its body (`markdown` or `document`) or a `computed`
 * source: an OpenAPI or a translation one is computed here, an integration one is asked of that
 * integration (at most MAX_COMPUTED_DOCUMENTS per revision). Pages come back with their documents
 * inline, as the official page shape allows.
 */

const MAX_PAGES = 1000;
const MAX_FILES = 1000;
const MAX_COMPUTED_DOCUMENTS = 100;
const MAX_DEPENDENCIES = 20;
const PAGE_ID = /^[a-zA-Z0-9]{1,40}$/;

const isObject = (value: unknown): value is Record<string, any> => !!value && typeof value === 'object' && !Array.isArray(value);

type IntegrationSource = { name: string; sourceId: string; props: Record<string, unknown>; dependencies: Record<string, unknown> };

// ------------------------------------------------------------------ dependencies

/** The space a dependency names, as the computation sees it: only a space of the same organization the caller can read. */
async function spaceValue(ctx: Ctx, space: SpaceRow, id: string) {
  let target: SpaceRow = space;
  if (id !== space.id) {
    try {
      target = (await loadSpace(ctx, id)).space;
    } catch (err) {
      if (err instanceof NotFoundError) return null;
      throw err;
    }
    if (target.organization_id !== space.organization_id) return null;
  }
  return { object: 'space', id: target.id, revision: target.revision_id };
}

/**
 * The dependencies with their values resolved by Folio (values a request brings are not trusted):
 * a space (`{object: 'space', id, revision}`), an OpenAPI spec (`{object: 'openapi-spec', id,
 * slug, lastVersion, visibility}`) or a translation's result (`{space, revision, language}`), null
 * when the caller cannot see it (or the translation has not run yet).
 */
export async function resolveDependencies(ctx: Ctx, space: SpaceRow, dependencies: Record<string, unknown>, at: string): Promise<Record<string, unknown>> {
  const names = Object.keys(dependencies);
  if (names.length > MAX_DEPENDENCIES) throw new BadRequestError(`${at}.dependencies: at most ${MAX_DEPENDENCIES} dependencies`);
  const out: [string, unknown][] = [];
  for (const name of names) {
    const where = `${at}.dependencies.${name}`;
    const dep = dependencies[name];
    if (!isObject(dep) || !isObject(dep.ref)) {
      throw new BadRequestError(`${where}: must be {"ref": {"kind": "space", "space": "<id>"}}, {"ref": {"kind": "openapi", "spec": "<slug>"}} or {"ref": {"kind": "translation", "translation": "<id>"}}`);
    }
    const ref = dep.ref;
    if (ref.kind === 'space') {
      if (typeof ref.space !== 'string' || ref.space === '') throw new BadRequestError(`${where}.ref.space: required, the id of a space`);
      out.push([name, { ref: { kind: 'space', space: ref.space }, value: await spaceValue(ctx, space, ref.space) }]);
    } else if (ref.kind === 'openapi') {
      if (typeof ref.spec !== 'string' || ref.spec === '') throw new BadRequestError(`${where}.ref.spec: required, the slug of an OpenAPI spec`);
      const spec = await findSpec(ctx.db, space.organization_id, ref.spec);
      const visible = spec && openAPISpecPermissions(await specMembership(ctx.db, space.organization_id, ctx.user.id), spec.visibility).view;
      out.push([
        name,
        {
          ref: { kind: 'openapi', spec: ref.spec },
          value: spec && visible ? { object: 'openapi-spec', id: spec.id, slug: spec.slug, ...(spec.last_version_id ? { lastVersion: spec.last_version_id } : {}), visibility: spec.visibility } : null,
        },
      ]);
    } else if (ref.kind === 'translation') {
      if (typeof ref.translation !== 'string' || ref.translation === '') throw new BadRequestError(`${where}.ref.translation: required, the ID of a translation`);
      out.push([name, { ref: { kind: 'translation', translation: ref.translation }, value: await translationDependencyValue(ctx, space, ref.translation) }]);
    } else {
      throw new BadRequestError(`${where}.ref.kind: must be "space", "openapi" or "translation"`);
    }
  }
  // Own properties whatever the names (`__proto__` included).
  return Object.fromEntries(out);
}

// ------------------------------------------------------------------ documents

/** The markdown of a document an integration answered: `{markdown}`, `{document}`, a JSON document, or `{}` (empty). */
async function answerMarkdown(name: string, value: unknown, where: string): Promise<string> {
  const who = `The integration "${name}"`;
  if (isObject(value) && typeof value.markdown === 'string') return value.markdown;
  const doc = isObject(value) && value.object === 'document' ? value : isObject(value) && isObject(value.document) ? value.document : undefined;
  if (doc) {
    try {
      return await documentInputToMarkdown(doc, where);
    } catch (err) {
      if (err instanceof BadRequestError) throw new IntegrationAnswerError(`${who} answered a document Folio cannot read: ${err.message}`);
      throw err;
    }
  }
  if (isObject(value) && Object.keys(value).length === 0) return '';
  throw new IntegrationAnswerError(`${who} answered ${where}, which is not a document: expected {"markdown": "…"}, {"document": <JSON document>} or a JSON document`);
}

async function askDocument(ctx: Ctx, space: SpaceRow, source: IntegrationSource, at: string): Promise<string> {
  const answer = await computeWithIntegration(ctx, space, source, {
    type: 'content_compute_document',
    props: source.props,
    dependencies: await resolveDependencies(ctx, space, source.dependencies, at),
  });
  if (!isObject(answer) || !('document' in answer)) {
    throw new IntegrationAnswerError(`The integration "${source.name}" answered content_compute_document without a "document" (expected {"document": {"markdown": "…"}} or {"document": <JSON document>})`);
  }
  return answerMarkdown(source.name, answer.document, 'document');
}

/** `getComputedDocument` of an integration source. */
export async function integrationDocument(ctx: Ctx, space: SpaceRow, source: IntegrationSource, seed: string): Promise<GitBookDocument> {
  return seededDocument(await askDocument(ctx, space, source, 'source'), seed);
}

// ------------------------------------------------------------------ revisions

const REF_FIELDS: Record<string, { required: string; optional: string[] }> = {
  url: { required: 'url', optional: [] },
  page: { required: 'page', optional: ['space'] },
  anchor: { required: 'anchor', optional: ['space', 'page'] },
  file: { required: 'file', optional: ['space'] },
  user: { required: 'user', optional: [] },
  collection: { required: 'collection', optional: [] },
  space: { required: 'space', optional: [] },
  'reusable-content': { required: 'reusableContent', optional: ['space'] },
  tag: { required: 'tag', optional: ['space'] },
  openapi: { required: 'spec', optional: [] },
};

/** Reads one answer of `content_compute_revision`; ids and slugs are unique across it. */
class RevisionAnswer {
  private readonly ids = new Set<string>();
  private pageCount = 0;
  private computedCount = 0;
  private readonly specs: SpecLoader;
  private readonly breathe = breather();

  constructor(
    private readonly ctx: Ctx,
    private readonly space: SpaceRow,
    private readonly name: string,
    private readonly seed: string,
  ) {
    this.specs = new SpecLoader(ctx, space);
  }

  fail(message: string): never {
    throw new IntegrationAnswerError(`The integration "${this.name}" answered a revision Folio cannot use: ${message}`);
  }

  async pages(list: unknown, at: string, prefix: string, depth: number): Promise<ComputedPage[]> {
    if (!Array.isArray(list)) this.fail(`${at}: must be a list of pages`);
    if (depth >= MAX_PAGE_DEPTH) this.fail(`${at}: pages nest more than ${MAX_PAGE_DEPTH} levels deep`);
    const slugs = new Slugs();
    const out: ComputedPage[] = [];
    for (let i = 0; i < list.length; i++) out.push(await this.page(list[i], `${at}[${i}]`, prefix, slugs, depth));
    return out;
  }

  private async page(raw: unknown, at: string, prefix: string, slugs: Slugs, depth: number): Promise<ComputedPage> {
    await this.breathe();
    if (!isObject(raw)) this.fail(`${at}: must be a page object`);
    if (++this.pageCount > MAX_PAGES) this.fail(`${at}: a computed revision has at most ${MAX_PAGES} pages`);
    const { title, type } = raw;
    if (typeof title !== 'string' || title.trim() === '') this.fail(`${at}.title: required, a non-empty string`);
    if (type !== 'document' && type !== 'group' && type !== 'link' && type !== 'computed') this.fail(`${at}.type: must be "document", "group", "link" or "computed"`);
    let id: string;
    if (raw.id === undefined) id = seededId(this.seed, `page:${at}`);
    else if (typeof raw.id === 'string' && PAGE_ID.test(raw.id)) id = raw.id;
    else this.fail(`${at}.id: must be 1 to 40 letters and digits`);
    if (this.ids.has(id)) this.fail(`${at}.id: "${id}" is the id of another page`);
    this.ids.add(id);
    const extra: Record<string, unknown> = {};
    if (typeof raw.linkTitle === 'string' && raw.linkTitle !== '') extra.linkTitle = raw.linkTitle.slice(0, 100);
    if (typeof raw.emoji === 'string' && raw.emoji !== '') extra.emoji = raw.emoji;
    else if (typeof raw.icon === 'string' && raw.icon !== '') extra.icon = raw.icon;

    if (type === 'link') return { id, title, kind: 'link', type: 'link', ...this.linkTarget(raw.target, `${at}.target`), ...extra };
    if (type === 'computed') return { id, title, type: 'computed', computed: this.computedRevisionSource(raw.computed, `${at}.computed`), ...extra };
    const slug = slugs.take(typeof raw.slug === 'string' && raw.slug !== '' ? raw.slug : title);
    const path = prefix ? `${prefix}/${slug}` : slug;
    if (type === 'group') {
      // The official shapes put groups at the top only: their pages, and a document's, are documents, links or computed pages.
      if (depth > 0) this.fail(`${at}.type: a group can only be at the top level`);
      return { id, title, kind: 'group', type: 'group', slug, path, pages: await this.pages(raw.pages, `${at}.pages`, path, depth + 1), ...extra };
    }
    if (typeof raw.description === 'string' && raw.description !== '') extra.description = raw.description.slice(0, 300);
    const document = await seededDocument(await this.body(raw, at), id);
    const pages = raw.pages === undefined ? [] : await this.pages(raw.pages, `${at}.pages`, path, depth + 1);
    return documentPage(this.ctx, this.space, { id, title, slug, path, document, pages, extra });
  }

  private linkTarget(target: unknown, at: string) {
    const fields = isObject(target) && typeof target.kind === 'string' ? REF_FIELDS[target.kind] : undefined;
    if (!isObject(target) || !fields) this.fail(`${at}: must be a content reference ({"kind": "url", "url": "…"}, {"kind": "page", "page": "<id>"}, …)`);
    if (typeof target[fields.required] !== 'string' || target[fields.required] === '') this.fail(`${at}.${fields.required}: required, a string`);
    const ref: Record<string, string> = { kind: target.kind, [fields.required]: target[fields.required] };
    for (const key of fields.optional) if (typeof target[key] === 'string') ref[key] = target[key];
    return { target: ref, ...(ref.kind === 'url' ? { href: ref.url } : {}) };
  }

  private computedRevisionSource(raw: unknown, at: string) {
    if (!isObject(raw) || typeof raw.type !== 'string') this.fail(`${at}: must be a content source ({"type": "…", "props": {…}, "dependencies": {…}})`);
    try {
      revisionSource(raw as SourceInput, at);
    } catch (err) {
      if (err instanceof BadRequestError) this.fail(err.message);
      throw err;
    }
    return { type: raw.type, ...(raw.props !== undefined ? { props: raw.props } : {}), ...(raw.dependencies !== undefined ? { dependencies: raw.dependencies } : {}) };
  }

  /** The markdown of a document page: its own, or computed from its source. */
  private async body(raw: Record<string, any>, at: string): Promise<string> {
    if (raw.computed !== undefined) {
      const where = `${at}.computed`;
      if (!isObject(raw.computed) || typeof raw.computed.type !== 'string') this.fail(`${where}: must be a content source ({"type": "…", "props": {…}})`);
      try {
        const source = documentSource(raw.computed as SourceInput, where);
        if (source.kind === 'openapi') return await openAPIMarkdown(this.specs, source.spec, source.props);
        if (source.kind === 'translation') return await translatedDocumentMarkdown(this.ctx, this.space, source, where);
        if (++this.computedCount > MAX_COMPUTED_DOCUMENTS) this.fail(`${where}: at most ${MAX_COMPUTED_DOCUMENTS} pages of a revision are computed by an integration`);
        return await askDocument(this.ctx, this.space, source, where);
      } catch (err) {
        // The page's source is the integration's doing: a source Folio refuses is its error, not the caller's.
        if (err instanceof HttpError && err.statusCode < 500) this.fail(err.message.startsWith(where) ? err.message : `${where}: ${err.message}`);
        throw err;
      }
    }
    if (typeof raw.markdown === 'string') return raw.markdown;
    if (raw.document !== undefined) return answerMarkdown(this.name, raw.document, `${at}.document`);
    return '';
  }

  files(raw: unknown): ComputedFile[] {
    if (raw === undefined) return [];
    if (!Array.isArray(raw)) this.fail('files: must be a list of files');
    if (raw.length > MAX_FILES) this.fail(`files: at most ${MAX_FILES} files`);
    const ids = new Set<string>();
    return raw.map((file, i) => {
      const at = `files[${i}]`;
      if (!isObject(file)) this.fail(`${at}: must be a file object`);
      for (const key of ['name', 'contentType', 'downloadURL']) if (typeof file[key] !== 'string' || file[key] === '') this.fail(`${at}.${key}: required, a non-empty string`);
      if (typeof file.size !== 'number' || !Number.isFinite(file.size) || file.size < 0) this.fail(`${at}.size: required, a number of bytes`);
      let id: string;
      if (file.id === undefined) id = seededId(this.seed, `file:${i}`);
      else if (typeof file.id === 'string' && file.id !== '' && file.id.length <= 100) id = file.id;
      else this.fail(`${at}.id: must be a string of 1 to 100 characters`);
      if (ids.has(id)) this.fail(`${at}.id: "${id}" is the id of another file`);
      ids.add(id);
      const dims = file.dimensions;
      if (dims !== undefined && !(isObject(dims) && typeof dims.width === 'number' && typeof dims.height === 'number')) this.fail(`${at}.dimensions: must be {"width": <number>, "height": <number>}`);
      return { id, name: file.name, contentType: file.contentType, downloadURL: file.downloadURL, size: file.size, ...(dims ? { dimensions: { width: dims.width, height: dims.height } } : {}) };
    });
  }
}

/** `getComputedRevision` of an integration source. */
export async function integrationRevision(ctx: Ctx, space: SpaceRow, source: IntegrationSource, seed: string) {
  const answer = await computeWithIntegration(ctx, space, source, {
    type: 'content_compute_revision',
    props: source.props,
    dependencies: await resolveDependencies(ctx, space, source.dependencies, 'source'),
  });
  const reader: RevisionAnswer = new RevisionAnswer(ctx, space, source.name, seed);
  if (!isObject(answer)) reader.fail('the answer must be an object {"pages": […], "files": […]}');
  const pages = await reader.pages(answer.pages, 'pages', '', 0);
  return { pages, files: reader.files(answer.files), reusableContents: [] };
}
