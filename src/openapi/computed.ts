import type { Block, GitBookDocument, InlineOrText } from '../content/markdown/shared.ts';
import { SCHEMA_VERSION, textNode } from '../content/markdown/shared.ts';
import { markdownToDocument } from '../content/markdown/markdown.ts';
import { checkMarkdownLimits, ContentLimitError } from '../platform/document-limits.ts';
import { plainDocument } from '../content/convert-worker.ts';
import { HttpError } from '../platform/errors.ts';
import { METHODS, Resolver, type LoadedSpec } from './blocks.ts';

/**
 * Content computed from an OpenAPI spec (the `builtin:openapi` source of `getComputedDocument` and
 * `getComputedRevision`): the spec's operations grouped by tag, its info and its schemas, as
 * documents made of the same blocks a page writes by hand (`openapi-operation` and
 * `openapi-schemas` pointing at the spec by slug), so a computed page reads, round-trips through
 * markdown and renders on a published site like any page. Descriptions, which OpenAPI writes in
 * CommonMark, become rich text.
 *
 * Everything here works on a spec already loaded (see `loadSpec` in blocks.ts) and is pure, so the
 * same spec and props always give the same content.
 */

type Any = Record<string, any>;

export interface ApiOperation {
  path: string;
  /** Lowercase HTTP method. */
  method: string;
  operation: Any;
  tags: string[];
}

export interface ApiTag {
  name: string;
  /** The page title: `x-page-title`, else `x-displayName`, else the name. */
  title: string;
  /** `x-page-slug` when the spec sets one. */
  slug?: string;
  description?: string;
}

/** What computed pages are made of, read once from a spec's latest version. */
export interface ApiModel {
  slug: string;
  info: { title: string; version: string; description?: string };
  /** Tags in the order of the spec's `tags`, then in the order operations first name them. */
  tags: ApiTag[];
  /** Operations in the order of `paths`, methods in METHODS order. */
  operations: ApiOperation[];
  /** Names of `components.schemas` (OpenAPI 3) or `definitions` (Swagger 2). */
  schemaNames: string[];
}

const text = (value: unknown): string | undefined => (typeof value === 'string' && value.trim() !== '' ? value : undefined);

/** Operations a spec hides from its reference (`x-internal`, `x-gitbook-ignore`) are left out. */
const hidden = (value: Any | undefined) => value?.['x-internal'] === true || value?.['x-gitbook-ignore'] === true;

/** The model of a loaded spec; a 409 when the spec has no version to compute from. */
export function apiModel(loaded: LoadedSpec): ApiModel {
  const { spec, version, documents, rootUrl } = loaded;
  const root = rootUrl ? (documents.get(rootUrl) as Any | undefined) : undefined;
  if (!version || !rootUrl || !root || typeof root !== 'object') {
    throw new HttpError(409, `The OpenAPI spec "${spec.slug}" has no processed version yet (processing state: ${spec.processing_state}); wait until it is processed`);
  }
  const resolver = new Resolver(documents);
  const operations: ApiOperation[] = [];
  const paths = root.paths && typeof root.paths === 'object' ? (root.paths as Any) : {};
  for (const [path, raw] of Object.entries(paths)) {
    let item: unknown = raw;
    // A path item may live in another file (`$ref`), as blocks.ts resolves it for page reads.
    if (item && typeof item === 'object' && typeof (item as Any).$ref === 'string') item = resolver.target((item as Any).$ref, rootUrl)?.value;
    if (!item || typeof item !== 'object' || hidden(item as Any)) continue;
    for (const method of METHODS) {
      const operation = (item as Any)[method];
      if (!operation || typeof operation !== 'object' || Array.isArray(operation) || hidden(operation)) continue;
      const tags: string[] = Array.isArray(operation.tags) ? [...new Set<string>(operation.tags.filter((t: unknown): t is string => typeof t === 'string' && t !== ''))] : [];
      operations.push({ path, method, operation, tags });
    }
  }
  // A tag hidden from the reference hides its operations too.
  const rootTags: Any[] = (Array.isArray(root.tags) ? root.tags : []).filter((t: unknown): t is Any => !!t && typeof t === 'object' && typeof (t as Any).name === 'string' && (t as Any).name !== '');
  const hiddenTags = new Set(rootTags.filter((t) => hidden(t)).map((t) => t.name as string));
  const shown = operations.filter((op) => !op.tags.some((t) => hiddenTags.has(t)));
  const tags: ApiTag[] = [];
  const seen = new Set<string>(hiddenTags);
  const addTag = (name: string, value: Any | undefined) => {
    if (seen.has(name)) return;
    seen.add(name);
    const tag: ApiTag = { name, title: text(value?.['x-page-title']) ?? text(value?.['x-displayName']) ?? name };
    const slug = text(value?.['x-page-slug']);
    if (slug) tag.slug = slug;
    const description = text(value?.description);
    if (description) tag.description = description;
    tags.push(tag);
  };
  for (const tag of rootTags) addTag(tag.name, tag);
  for (const op of shown) for (const name of op.tags) addTag(name, undefined);
  const pool = (root.components?.schemas ?? root.definitions ?? {}) as Any;
  const info = (root.info ?? {}) as Any;
  return {
    slug: spec.slug,
    info: { title: text(info.title) ?? spec.slug, version: typeof info.version === 'string' ? info.version : String(info.version ?? ''), ...(text(info.description) ? { description: info.description } : {}) },
    tags,
    operations: shown,
    schemaNames: pool && typeof pool === 'object' && !Array.isArray(pool) ? Object.keys(pool) : [],
  };
}

// ------------------------------------------------------------------ documents

/** What `getComputedDocument` may ask of a spec (the official `ComputedContentSourceDocumentOpenAPI` props). */
export type OpenAPIDocumentProps =
  | { doc: 'models' }
  | { doc: 'operations' | 'info' | 'tag'; page: string }
  | { doc: 'operation'; page: string; method: string };

const paragraph = (value: string): Block => ({ object: 'block', type: 'paragraph', data: {}, nodes: [textNode([{ object: 'leaf', text: value, marks: [] }])] as InlineOrText[] }) as Block;
const heading = (value: string): Block => ({ object: 'block', type: 'heading-1', data: {}, nodes: [textNode([{ object: 'leaf', text: value, marks: [] }])] as InlineOrText[] }) as Block;

/**
 * A description (CommonMark) as blocks. Text past the content limits, or too deep for the parser,
 * is kept as plain paragraphs rather than refused: it is the spec's text, not the caller's input.
 */
function descriptionBlocks(markdown: string | undefined): Block[] {
  if (!markdown) return [];
  try {
    checkMarkdownLimits(markdown);
    return markdownToDocument(markdown).nodes as Block[];
  } catch (err) {
    if (err instanceof ContentLimitError || err instanceof RangeError) return plainDocument(markdown).nodes as Block[];
    throw err;
  }
}

function operationBlock(slug: string, op: Pick<ApiOperation, 'path' | 'method'>): Block {
  return { object: 'block', type: 'openapi-operation', data: { ref: { kind: 'openapi', spec: slug }, path: op.path, method: op.method }, isVoid: true } as Block;
}

export function findTag(model: ApiModel, name: string): ApiTag {
  const tag = model.tags.find((t) => t.name === name);
  if (!tag) throw new HttpError(404, `The OpenAPI spec "${model.slug}" has no tag "${name}" (its tags: ${model.tags.map((t) => t.name).join(', ') || 'none'})`);
  return tag;
}

export function findOperation(model: ApiModel, path: string, method: string): ApiOperation {
  const op = model.operations.find((o) => o.path === path && o.method === method);
  if (!op) throw new HttpError(404, `The OpenAPI spec "${model.slug}" has no ${method.toUpperCase()} operation at "${path}"`);
  return op;
}

const documentOf = (nodes: Block[]): GitBookDocument => ({ object: 'document', data: { schemaVersion: SCHEMA_VERSION }, nodes }) as GitBookDocument;

/** The document of a page of the spec's reference (keys are set by the caller, from its seed). */
export function openAPIDocument(model: ApiModel, props: OpenAPIDocumentProps): GitBookDocument {
  switch (props.doc) {
    case 'operation':
      return documentOf([operationBlock(model.slug, findOperation(model, props.page, props.method))]);
    case 'operations': {
      const tag = findTag(model, props.page);
      const ops = model.operations.filter((o) => o.tags.includes(tag.name));
      return documentOf([...descriptionBlocks(tag.description), ...ops.map((o) => operationBlock(model.slug, o))]);
    }
    case 'tag':
      return documentOf(descriptionBlocks(findTag(model, props.page).description));
    case 'info':
      return documentOf([heading(model.info.title), ...descriptionBlocks(model.info.description), ...(model.info.version ? [paragraph(`Version: ${model.info.version}`)] : [])]);
    case 'models': {
      if (model.schemaNames.length === 0) throw new HttpError(404, `The OpenAPI spec "${model.slug}" has no schemas (components.schemas) to show as models`);
      const block = { object: 'block', type: 'openapi-schemas', data: { ref: { kind: 'openapi', spec: model.slug }, schemas: model.schemaNames, grouped: true }, isVoid: true };
      return documentOf([block as Block]);
    }
  }
}

// ------------------------------------------------------------------ revision plan

/** A page of the computed reference: `key` names it for its seeded id, `props` is its document. */
export interface PlannedPage {
  key: string;
  title: string;
  slug: string;
  props: OpenAPIDocumentProps;
  children: PlannedPage[];
}

function operationTitle(op: ApiOperation): string {
  return text(op.operation.summary)?.trim() ?? text(op.operation.operationId) ?? `${op.method.toUpperCase()} ${op.path}`;
}

function operationPage(op: ApiOperation, scope: string): PlannedPage {
  const title = operationTitle(op);
  return { key: `${scope}operation:${op.method} ${op.path}`, title, slug: title, props: { doc: 'operation', page: op.path, method: op.method }, children: [] };
}

/**
 * The pages of a spec's reference. `by-tag` (the default): a page per tag with its operations;
 * `by-operation`: a page per tag (its description) with a page per operation below it. Operations
 * without a tag get a page each at the top. `models` adds a Models page when the spec has schemas.
 * Slugs are the wanted ones here; the caller makes them unique among siblings.
 */
export function planRevision(model: ApiModel, props: { models: boolean; grouping?: 'by-tag' | 'by-operation' | undefined }): PlannedPage[] {
  const pages: PlannedPage[] = [];
  for (const tag of model.tags) {
    const ops = model.operations.filter((o) => o.tags.includes(tag.name));
    if (ops.length === 0) continue;
    const base = { key: `tag:${tag.name}`, title: tag.title, slug: tag.slug ?? tag.title };
    if (props.grouping === 'by-operation') {
      pages.push({ ...base, props: { doc: 'tag', page: tag.name }, children: ops.map((op) => operationPage(op, `tag:${tag.name}:`)) });
    } else {
      pages.push({ ...base, props: { doc: 'operations', page: tag.name }, children: [] });
    }
  }
  for (const op of model.operations) if (op.tags.length === 0) pages.push(operationPage(op, ''));
  if (props.models && model.schemaNames.length > 0) pages.push({ key: 'models', title: 'Models', slug: 'models', props: { doc: 'models' }, children: [] });
  return pages;
}
