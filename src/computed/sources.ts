import { BadRequestError } from '../platform/errors.ts';
import type { OpenAPIDocumentProps } from '../openapi/computed.ts';
import type { TranslationDocumentSource } from '../translations/computed.ts';

/**
 * The content sources of `getComputedDocument` and `getComputedRevision`, read from a request (or
 * from an integration's answer) into what Folio computes, with a 400 naming the field to fix.
 * The shapes are the official `ComputedContentSourceDocument` and `ComputedContentSourceRevision`:
 * `builtin:openapi` (a spec of the organization by slug), `builtin:translation` (the result of a
 * translation of the organization, by id) and `integration:<name>:<sourceId>`.
 */

export interface SourceInput {
  type: string;
  props?: Record<string, unknown> | undefined;
  dependencies?: Record<string, unknown> | undefined;
}

export type DocumentSource =
  | { kind: 'openapi'; spec: string; props: OpenAPIDocumentProps }
  | TranslationDocumentSource
  | { kind: 'integration'; name: string; sourceId: string; props: Record<string, unknown>; dependencies: Record<string, unknown> };

export interface OpenAPIRevisionProps {
  models: boolean;
  downloadLink: boolean;
  grouping: 'by-tag' | 'by-operation';
}

export type RevisionSource =
  | { kind: 'openapi'; spec: string; props: OpenAPIRevisionProps }
  | { kind: 'translation'; translation: string }
  | { kind: 'integration'; name: string; sourceId: string; props: Record<string, unknown>; dependencies: Record<string, unknown> };

const isObject = (value: unknown): value is Record<string, unknown> => !!value && typeof value === 'object' && !Array.isArray(value);

const TYPES = '"builtin:openapi", "builtin:translation" or "integration:<name>:<sourceId>"';
const INTEGRATION_TYPE = /^integration:([^:]+):([^:]+)$/;

/** The methods the official props accept (`hook` included, though no path has one). */
const METHODS = ['get', 'post', 'put', 'delete', 'patch', 'options', 'head', 'trace', 'hook'];
const DOCS = ['operation', 'operations', 'tag', 'info', 'models'];

function bad(field: string, message: string): never {
  throw new BadRequestError(`${field}: ${message}`);
}

/**
 * What the dependency `name` refers to: `{ref: {kind, [name]: <id>}}`, with or without its
 * resolved `value` (a value a request brings is not trusted: Folio reads its own).
 */
function dependencyRef(source: SourceInput, at: string, name: 'spec' | 'translation', kind: string, what: string): string {
  const dependency = source.dependencies?.[name];
  const shape = `must be {"ref": {"kind": "${kind}", "${name}": "<${what}>"}}`;
  if (!isObject(dependency)) bad(`${at}.dependencies.${name}`, `required; it ${shape}`);
  const ref = dependency.ref;
  const id = isObject(ref) && ref.kind === kind ? ref[name] : undefined;
  if (typeof id !== 'string' || id === '') bad(`${at}.dependencies.${name}`, shape);
  return id;
}

/** The slug of the spec the source depends on. */
const specSlug = (source: SourceInput, at: string) => dependencyRef(source, at, 'spec', 'openapi', 'slug of an OpenAPI spec of the organization');

/** The translation the source depends on. */
const translationId = (source: SourceInput, at: string) => dependencyRef(source, at, 'translation', 'translation', 'ID of a translation of the organization');

function integrationSource(source: SourceInput, at: string) {
  const m = INTEGRATION_TYPE.exec(source.type);
  if (!m) return undefined;
  if (!isObject(source.props)) bad(`${at}.props`, 'required: the object of properties passed to the integration');
  if (source.dependencies !== undefined && !isObject(source.dependencies)) bad(`${at}.dependencies`, 'must be an object of dependencies by name');
  return { kind: 'integration' as const, name: m[1]!, sourceId: m[2]!, props: source.props, dependencies: source.dependencies ?? {} };
}

function translationDocumentSource(source: SourceInput, at: string): TranslationDocumentSource {
  const translation = translationId(source, at);
  const props = source.props;
  if (!isObject(props)) bad(`${at}.props`, 'required: {"space": "<ID of the translation\'s source space>", "document": "<ID of a document of that space>"}');
  if (typeof props.space !== 'string' || props.space === '') bad(`${at}.props.space`, "required: the ID of the translation's source space");
  if (typeof props.document !== 'string' || props.document === '') bad(`${at}.props.document`, "required: the ID of a document of the source space (a page's documentId)");
  return { kind: 'translation', translation, space: props.space, document: props.document };
}

function unknownType(source: SourceInput, at: string): never {
  bad(`${at}.type`, `"${source.type}" is not a content source type; use ${TYPES}`);
}

/** A document source (`getComputedDocument`, a computed page of an integration's revision). */
export function documentSource(source: SourceInput, at = 'source'): DocumentSource {
  const integration = integrationSource(source, at);
  if (integration) return integration;
  if (source.type === 'builtin:translation') return translationDocumentSource(source, at);
  if (source.type !== 'builtin:openapi') unknownType(source, at);
  const spec = specSlug(source, at);
  const props = source.props;
  if (!isObject(props)) bad(`${at}.props`, `required: {"doc": ${DOCS.map((d) => `"${d}"`).join(' | ')}, …}`);
  const doc = props.doc;
  if (typeof doc !== 'string' || !DOCS.includes(doc)) bad(`${at}.props.doc`, `must be one of ${DOCS.map((d) => `"${d}"`).join(', ')}`);
  if (doc === 'models') return { kind: 'openapi', spec, props: { doc } };
  const page = props.page;
  const what = doc === 'operation' ? "the operation's path, as in the spec's paths (e.g. \"/pets/{id}\")" : 'the name of a tag of the spec';
  if (typeof page !== 'string' || page === '') bad(`${at}.props.page`, `required for doc "${doc}": ${doc === 'info' ? 'a non-empty string (the info page of the spec)' : what}`);
  if (doc !== 'operation') return { kind: 'openapi', spec, props: { doc: doc as 'operations' | 'tag' | 'info', page } };
  const method = props.method;
  if (typeof method !== 'string' || !METHODS.includes(method)) bad(`${at}.props.method`, `required for doc "operation": one of ${METHODS.map((x) => `"${x}"`).join(', ')}`);
  if (props.deprecated !== undefined && typeof props.deprecated !== 'boolean') bad(`${at}.props.deprecated`, 'must be true or false');
  return { kind: 'openapi', spec, props: { doc: 'operation', page, method } };
}

/** A revision source (`getComputedRevision`, a computed page of an integration's revision). */
export function revisionSource(source: SourceInput, at = 'source'): RevisionSource {
  const integration = integrationSource(source, at);
  if (integration) return integration;
  if (source.type === 'builtin:translation') {
    const translation = translationId(source, at);
    // The official props are an empty object: the translation's result is the whole revision.
    if (source.props !== undefined && (!isObject(source.props) || Object.keys(source.props).length > 0)) bad(`${at}.props`, 'must be {} (a translation\'s revision takes no properties)');
    return { kind: 'translation', translation };
  }
  if (source.type !== 'builtin:openapi') unknownType(source, at);
  const spec = specSlug(source, at);
  const props = source.props;
  if (!isObject(props)) bad(`${at}.props`, 'required: {"models": true | false, "downloadLink"?: true | false, "grouping"?: "by-tag" | "by-operation"}');
  if (typeof props.models !== 'boolean') bad(`${at}.props.models`, 'required: true or false (whether to add a Models page of the spec\'s schemas)');
  if (props.downloadLink !== undefined && typeof props.downloadLink !== 'boolean') bad(`${at}.props.downloadLink`, 'must be true or false');
  if (props.grouping !== undefined && props.grouping !== 'by-tag' && props.grouping !== 'by-operation') bad(`${at}.props.grouping`, 'must be "by-tag" or "by-operation"');
  return { kind: 'openapi', spec, props: { models: props.models, downloadLink: props.downloadLink === true, grouping: (props.grouping as OpenAPIRevisionProps['grouping'] | undefined) ?? 'by-tag' } };
}
