import type { Blobs } from '../platform/blob-store.ts';
import type { Db } from '../platform/db/database.ts';
import { memberRole } from '../access/store.ts';
import type { OpenAPISpecRow, OpenAPISpecVersionRow } from '../platform/db/schema.ts';
import { openAPISpecPermissions, type Membership } from '../platform/policy.ts';
import { pointerSegments } from './parse.ts';
import { versionDocuments } from './service.ts';
import { findSpecBy, findVersionById } from './store.ts';

/**
 * Page blocks that point into an OpenAPI spec (`openapi-operation`, `openapi-schemas`,
 * `openapi-webhook`, and the legacy `swagger` block whose `src` names a spec by slug or by its
 * source URL) are resolved against the spec's latest version when a page is read with
 * `computed=true`: the block's `data.resolved` gets the spec and version it was resolved against
 * and the operation (summary, description, parameters, request body, responses), the schemas or
 * the webhook, with `$ref`s replaced by what they point to (also across files). A reference cycle
 * stays a `$ref`, and one block expands at most MAX_RESOLVED_NODES values, so a spec whose
 * references multiply cannot make a page read explode. What cannot be resolved says why in
 * `data.resolved.error`.
 */

const MAX_RESOLVED_NODES = 50_000;
const MAX_REF_DEPTH = 64;
export const METHODS = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'];

type Json = null | boolean | number | string | Json[] | { [key: string]: Json };
interface Block {
  object?: string;
  type?: string;
  data?: Record<string, any>;
  nodes?: Block[];
  fragments?: Block[];
}

const TYPES = new Set(['openapi-operation', 'openapi-schemas', 'openapi-webhook', 'swagger']);

/** Whether a markdown text may hold blocks this module resolves (cheap test before any work). */
export function mayHoldOpenAPIBlocks(markdown: string): boolean {
  return /\{%\s*(openapi|swagger)/.test(markdown);
}

export interface LoadedSpec {
  spec: OpenAPISpecRow;
  version: OpenAPISpecVersionRow | undefined;
  documents: Map<string, unknown>;
  rootUrl: string | undefined;
}

/** The caller's membership in the organization, as the spec rules read it; `null` is the published site (a reader). */
export async function specMembership(db: Db, organizationId: string, userId: string | null): Promise<Membership | undefined> {
  const role = userId === null ? 'read' : await memberRole(db, organizationId, userId);
  return role === undefined ? undefined : { role, ownsTeam: false };
}

/**
 * A spec of the organization, by slug or by source URL, with the parsed files of its latest
 * version; undefined when there is none the membership may see (the two are not told apart).
 */
export async function loadSpec(db: Db, blobs: Blobs, organizationId: string, membership: Membership | undefined, key: { slug?: string; url?: string }): Promise<LoadedSpec | undefined> {
  const spec = await findSpecBy(db, organizationId, key);
  if (!spec || !openAPISpecPermissions(membership, spec.visibility).view) return undefined;
  const version = spec.last_version_id
    ? await findVersionById(db, organizationId, spec.last_version_id)
    : undefined;
  const docs = version ? await versionDocuments(blobs, version) : undefined;
  return { spec, version, documents: docs?.documents ?? new Map(), rootUrl: version?.files[0]?.url };
}

/**
 * Resolves the OpenAPI blocks of a document in place, as the caller (`userId`) may see the specs;
 * `null` is the organization's published site, which shows what its members (readers) may see.
 */
export async function resolveOpenAPIBlocks(db: Db, blobs: Blobs, organizationId: string, userId: string | null, document: { nodes?: Block[] }): Promise<void> {
  const blocks: Block[] = [];
  const stack: Block[] = [...(document.nodes ?? [])];
  while (stack.length) {
    const node = stack.pop()!;
    if (node && typeof node === 'object') {
      if (node.object === 'block' && node.type && TYPES.has(node.type)) blocks.push(node);
      for (const child of [...(node.nodes ?? []), ...(node.fragments ?? [])]) stack.push(child);
    }
  }
  if (blocks.length === 0) return;
  const membership = await specMembership(db, organizationId, userId);
  const loaded = new Map<string, LoadedSpec | undefined>();
  const load = async (key: { slug?: string; url?: string }): Promise<LoadedSpec | undefined> => {
    const id = key.slug !== undefined ? `slug:${key.slug}` : `url:${key.url}`;
    if (!loaded.has(id)) loaded.set(id, await loadSpec(db, blobs, organizationId, membership, key));
    return loaded.get(id);
  };

  for (const block of blocks) {
    const data = (block.data ??= {});
    let key: { slug?: string; url?: string };
    if (block.type === 'swagger') {
      const ref = data.ref as { kind?: string; url?: string } | undefined;
      if (ref?.kind !== 'url') {
        data.resolved = { error: 'This block points at a file of the space; only specs of the organization (by slug or source URL) are resolved' };
        continue;
      }
      const src = ref.url ?? '';
      key = /^https?:\/\//i.test(src) ? { url: src } : { slug: src };
    } else {
      key = { slug: String((data.ref as { spec?: string } | undefined)?.spec ?? '') };
    }
    const loadedSpec = await load(key);
    if (!loadedSpec) {
      data.resolved = { error: `No OpenAPI spec ${key.slug !== undefined ? `with the slug "${key.slug}"` : `from ${key.url}`} that you can see in this organization` };
      continue;
    }
    const { spec, version, documents, rootUrl } = loadedSpec;
    if (!version || !rootUrl) {
      data.resolved = { error: `The OpenAPI spec "${spec.slug}" has no version yet (processing state: ${spec.processing_state})` };
      continue;
    }
    const origin = { spec: { id: spec.id, slug: spec.slug }, version: version.id };
    const resolver = new Resolver(documents);
    const root = documents.get(rootUrl) as Record<string, any> | undefined;
    if (block.type === 'openapi-schemas') {
      const names: string[] = Array.isArray(data.schemas) ? data.schemas : [];
      const pool = (root?.components?.schemas ?? root?.definitions ?? {}) as Record<string, unknown>;
      const missing = names.filter((n) => !Object.hasOwn(pool, n));
      const schemas = Object.fromEntries(names.filter((n) => Object.hasOwn(pool, n)).map((n) => [n, resolver.expand(pool[n], rootUrl)]));
      data.resolved = { ...origin, schemas, ...(missing.length ? { error: `Not in the spec: ${missing.join(', ')}` } : {}) };
      continue;
    }
    const method = String(data.method ?? '').toLowerCase();
    const isWebhook = block.type === 'openapi-webhook';
    const where = isWebhook ? String(data.name ?? '') : String(data.path ?? '');
    const items = (isWebhook ? root?.webhooks : root?.paths) as Record<string, unknown> | undefined;
    let item = items && Object.hasOwn(items, where) ? items[where] : undefined;
    let itemUrl = rootUrl;
    if (item && typeof item === 'object' && typeof (item as { $ref?: unknown }).$ref === 'string') {
      const target = resolver.target((item as { $ref: string }).$ref, rootUrl);
      item = target?.value;
      itemUrl = target?.url ?? rootUrl;
    }
    const operation = item && typeof item === 'object' && METHODS.includes(method) ? (item as Record<string, any>)[method] : undefined;
    if (!operation || typeof operation !== 'object') {
      data.resolved = { ...origin, error: `The spec has no ${method.toUpperCase() || '(no method)'} ${isWebhook ? 'webhook' : 'operation'} ${where ? `"${where}"` : '(no path)'}` };
      continue;
    }
    // Path-level parameters apply to every operation of the path, unless the operation redefines them.
    const own = Array.isArray(operation.parameters) ? operation.parameters : [];
    const shared = Array.isArray((item as Record<string, any>).parameters) ? (item as Record<string, any>).parameters : [];
    const parameters = [...own, ...shared].map((p) => resolver.expand(p, itemUrl)) as Record<string, any>[];
    const seen = new Set<string>();
    const unique = parameters.filter((p) => {
      const id = `${p?.in}:${p?.name}`;
      if (seen.has(id)) return false;
      seen.add(id);
      return true;
    });
    data.resolved = {
      ...origin,
      operation: {
        method,
        ...(isWebhook ? { name: where } : { path: where }),
        ...pick(operation, ['operationId', 'summary', 'description', 'deprecated', 'tags']),
        parameters: unique,
        ...(operation.requestBody !== undefined ? { requestBody: resolver.expand(operation.requestBody, itemUrl) } : {}),
        responses: resolver.expand(operation.responses ?? {}, itemUrl),
      },
      ...(resolver.truncated ? { truncated: true } : {}),
    };
  }
}

function pick(value: Record<string, unknown>, keys: string[]) {
  return Object.fromEntries(keys.filter((k) => value[k] !== undefined).map((k) => [k, value[k]]));
}

/** Replaces `$ref`s by their targets (across the spec's files), within a budget of values. */
export class Resolver {
  private budget = MAX_RESOLVED_NODES;
  truncated = false;

  constructor(private readonly documents: Map<string, unknown>) {}

  target(ref: string, baseUrl: string): { value: unknown; url: string } | undefined {
    let target: URL;
    try {
      target = new URL(ref, baseUrl);
    } catch {
      return undefined;
    }
    const url = target.href.replace(/#.*$/, '');
    let value = this.documents.get(url);
    const fragment = decodeURIComponent(target.hash.slice(1));
    if (fragment) {
      if (!fragment.startsWith('/')) return undefined;
      for (const s of pointerSegments(fragment)) {
        if (value === null || typeof value !== 'object' || !Object.hasOwn(value, s)) return undefined;
        value = (value as Record<string, unknown>)[s];
      }
    }
    return value === undefined ? undefined : { value, url };
  }

  expand(value: unknown, baseUrl: string, refs: string[] = []): Json {
    if (value === null || typeof value !== 'object') return value as Json;
    if (--this.budget < 0) {
      this.truncated = true;
      return null;
    }
    const ref = (value as { $ref?: unknown }).$ref;
    if (typeof ref === 'string' && !Array.isArray(value)) {
      const target = this.target(ref, baseUrl);
      const id = target ? `${target.url}#${ref.split('#')[1] ?? ''}` : ref;
      // A cycle, or a chain too long: left as the reference it is.
      if (!target || refs.includes(id) || refs.length >= MAX_REF_DEPTH) return value as Json;
      return this.expand(target.value, target.url, [...refs, id]);
    }
    if (Array.isArray(value)) return value.map((v) => this.expand(v, baseUrl, refs));
    const out: Record<string, Json> = {};
    for (const [k, v] of Object.entries(value)) out[k] = this.expand(v, baseUrl, refs);
    return out;
  }
}
