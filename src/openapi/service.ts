import type { Ctx, Services } from '../platform/context.ts';
import type { OpenAPISpecRow, OpenAPISpecVersionRow, OpenAPIVersionFile } from '../platform/db/schema.ts';
import { ConflictError, isUniqueViolation, NotFoundError } from '../platform/errors.ts';
import { newId } from '../platform/ids.ts';
import type { PageRequest } from '../platform/paging.ts';
import { assertCanEditOpenAPISpecs, openAPISpecPermissions, type Membership } from '../platform/policy.ts';
import type { Blobs } from '../platform/blob-store.ts';
import { requireMembership } from '../access/organizations.ts';
import { specPath } from './presenter.ts';
import type { ProcessOutcome, SpecSource } from './process.ts';
import { processInWorker } from './workers.ts';
import * as store from './store.ts';

export const OPENAPI_PROCESS_JOB = 'openapi.process';

interface ProcessPayload {
  specId: string;
  generation: number;
}

function sourceColumns(source: SpecSource): store.SourceColumns {
  return 'url' in source ? { source_url: new URL(source.url).href, source_text: null } : { source_url: null, source_text: source.text };
}

/** A spec the caller may see (404 otherwise, so private specs are not revealed to guests). */
async function visibleSpec(ctx: Ctx, organizationId: string, slug: string): Promise<{ spec: OpenAPISpecRow; membership: Membership }> {
  const membership = await requireMembership(ctx, organizationId);
  const spec = await store.findSpec(ctx.db, organizationId, slug);
  if (!spec || !openAPISpecPermissions(membership, spec.visibility).view) throw new NotFoundError('OpenAPI spec');
  return { spec, membership };
}

export async function listSpecs(ctx: Ctx, organizationId: string, query: PageRequest) {
  const membership = await requireMembership(ctx, organizationId);
  const page = await store.listSpecs(ctx.db, organizationId, membership.role === null, query);
  return { membership, page };
}

export async function getSpec(ctx: Ctx, organizationId: string, slug: string) {
  return visibleSpec(ctx, organizationId, slug);
}

export async function createSpec(ctx: Ctx, organizationId: string, input: { slug: string; source: SpecSource }) {
  const membership = await requireMembership(ctx, organizationId);
  assertCanEditOpenAPISpecs(membership);
  try {
    const spec = await ctx.db.transaction().execute(async (trx) => {
      const row = await store.insertSpec(trx, organizationId, input.slug, sourceColumns(input.source));
      await ctx.jobs.enqueue(OPENAPI_PROCESS_JOB, { specId: row.id, generation: row.generation } satisfies ProcessPayload, { db: trx });
      return row;
    });
    return { spec, membership };
  } catch (err) {
    if (isUniqueViolation(err)) throw new ConflictError(`An OpenAPI spec with the slug "${input.slug}" already exists in this organization; use PUT to update it`);
    throw err;
  }
}

/** Creates the spec or gives it a new source; either way it is (re)processed from the source. */
export async function putSpec(ctx: Ctx, organizationId: string, slug: string, input: { source: SpecSource }) {
  const membership = await requireMembership(ctx, organizationId);
  assertCanEditOpenAPISpecs(membership);
  const updated = await ctx.db.transaction().execute(async (trx) => {
    const spec = await store.lockSpec(trx, organizationId, slug);
    if (!spec) return undefined;
    const row = await store.resetSpecSource(trx, organizationId, spec, sourceColumns(input.source));
    await ctx.jobs.enqueue(OPENAPI_PROCESS_JOB, { specId: row.id, generation: row.generation } satisfies ProcessPayload, { db: trx });
    return row;
  });
  if (updated) return { spec: updated, membership, created: false };
  try {
    return { ...(await createSpec(ctx, organizationId, { slug, source: input.source })), created: true };
  } catch (err) {
    // Created by a concurrent PUT meanwhile: update that one.
    if (err instanceof ConflictError) return putSpec(ctx, organizationId, slug, input);
    throw err;
  }
}

export async function updateSpecVisibility(ctx: Ctx, organizationId: string, slug: string, visibility: 'private' | 'public') {
  const { spec, membership } = await visibleSpec(ctx, organizationId, slug);
  assertCanEditOpenAPISpecs(membership);
  const row = await store.setSpecVisibility(ctx.db, organizationId, spec.id, visibility);
  if (!row) throw new NotFoundError('OpenAPI spec');
  return { spec: row, membership };
}

/** Deletes the spec and its versions; 204 also when there was none. */
export async function deleteSpec(ctx: Ctx, organizationId: string, slug: string) {
  const membership = await requireMembership(ctx, organizationId);
  const spec = await store.findSpec(ctx.db, organizationId, slug);
  if (!spec) return;
  if (!openAPISpecPermissions(membership, spec.visibility).view) return;
  assertCanEditOpenAPISpecs(membership);
  await store.deleteSpec(ctx.db, organizationId, spec.id);
}

export async function listVersions(ctx: Ctx, organizationId: string, slug: string, query: PageRequest) {
  const { spec } = await visibleSpec(ctx, organizationId, slug);
  const page = await store.listVersions(ctx.db, organizationId, spec.id, query);
  return { spec, page };
}

/** A version by id, or the latest one for `latest`. */
export async function getVersion(ctx: Ctx, organizationId: string, slug: string, versionId: string | 'latest') {
  const { spec } = await visibleSpec(ctx, organizationId, slug);
  const id = versionId === 'latest' ? spec.last_version_id : versionId;
  const version = id ? await store.findVersion(ctx.db, organizationId, spec.id, id) : undefined;
  if (!version) throw new NotFoundError(versionId === 'latest' ? 'OpenAPI spec version (the spec has not been processed successfully yet)' : 'OpenAPI spec version');
  return { spec, version };
}

/**
 * The version content as JSON text, assembled from the stored JSON of each file (never parsed
 * and serialized again): `{ filesystem: {path: document}, url, entrypoint, urls }`.
 */
export async function versionContentJson(ctx: Ctx, spec: OpenAPISpecRow, version: OpenAPISpecVersionRow): Promise<string> {
  const parts: string[] = [];
  for (const file of version.files) {
    const data = await ctx.blobs.read(file.json);
    if (!data) throw new Error(`blob ${file.json} of OpenAPI version ${version.id} is missing`);
    parts.push(`${JSON.stringify(file.path)}:${Buffer.from(data).toString('utf8')}`);
  }
  const publicUrl = spec.visibility === 'public' && spec.source_url ? spec.source_url : null;
  const tail = JSON.stringify({ url: version.url, entrypoint: version.files[0]?.path ?? '', urls: { source: version.url, public: publicUrl } }).slice(1);
  return `{"filesystem":{${parts.join(',')}},${tail}`;
}

export async function rawRoot(ctx: Ctx, version: OpenAPISpecVersionRow) {
  const root = version.files[0];
  const data = root ? await ctx.blobs.read(root.raw) : undefined;
  if (!root || !data) throw new NotFoundError('Raw content of this OpenAPI spec version');
  return { text: Buffer.from(data).toString('utf8'), format: root.format };
}

/** The parsed documents of a version by path, root first (for resolving blocks in pages). */
export async function versionDocuments(blobs: Blobs, version: OpenAPISpecVersionRow): Promise<{ files: OpenAPIVersionFile[]; documents: Map<string, unknown> }> {
  const documents = new Map<string, unknown>();
  for (const file of version.files) {
    const data = await blobs.read(file.json);
    if (data) documents.set(file.url, JSON.parse(Buffer.from(data).toString('utf8')));
  }
  return { files: version.files, documents };
}

/**
 * The processing job: reads the source outside any transaction (fetches can take
 * FETCH_TIMEOUT_MS), then records the outcome if no PUT came meanwhile. A new version is stored
 * only when the files' hash differs from the latest version's; a failed fetch or parse keeps the
 * latest version and records the errors. A spec given by URL is queued again after
 * OPENAPI_REFRESH_INTERVAL_MS, with the same generation (a PUT starts a new chain and ends this one).
 */
export function processSpecJob(services: Services) {
  return async (payload: ProcessPayload): Promise<void> => {
    const { db } = services;
    const spec = await store.findSpecById(db, payload.specId);
    if (!spec || spec.generation !== payload.generation) return;
    const organizationId = spec.organization_id;
    await store.markInProgress(db, organizationId, spec.id, payload.generation);
    const source: SpecSource = spec.source_url ? { url: spec.source_url } : { text: spec.source_text ?? '' };
    let outcome: ProcessOutcome;
    try {
      outcome = await processInWorker(source, services.config);
    } catch (err) {
      // The worker itself failed (out of memory on a huge document, say): recorded on the spec
      // rather than left in `progress` while the job is retried to no end.
      outcome = { ok: false, code: 'PARSE_ERROR', errors: [{ code: 'PARSE_ERROR', message: `processing the spec failed: ${(err as Error)?.message ?? String(err)}` }], count: 1 };
    }
    // The files' bytes are stored by hash before the transaction (the store may be a bucket over the
    // network); bytes of a version not recorded in the end are left unreferenced, never wrong.
    const stored = outcome.ok
      ? await Promise.all(outcome.files.map(async (f) => ({ raw: await services.blobs.put(f.raw), json: await services.blobs.put(Buffer.from(f.json, 'utf8')) })))
      : [];
    await db.transaction().execute(async (trx) => {
      const current = await store.lockSpecById(trx, organizationId, spec.id);
      if (!current || current.generation !== payload.generation) return;
      // The services' clock: the next refresh is due by the clock the job queue reads.
      const now = new Date(services.now());
      if (outcome.ok) {
        const latestHash = current.last_version_id ? await store.versionHash(trx, organizationId, current.last_version_id) : undefined;
        let versionId = current.last_version_id;
        if (latestHash !== outcome.contentHash) {
          versionId = newId();
          const files: OpenAPIVersionFile[] = [];
          for (const [i, f] of outcome.files.entries()) files.push({ path: f.path, url: f.url, format: f.format, ...stored[i]! });
          const url = spec.source_url ?? services.urls.api(`${specPath(spec.organization_id, spec.slug)}/versions/${versionId}/content`);
          await store.insertVersion(trx, organizationId, { id: versionId, specId: spec.id, url, contentHash: outcome.contentHash, files, createdAt: now });
        }
        await store.recordProcessed(trx, organizationId, spec.id, versionId, now);
      } else {
        await store.recordFailed(trx, organizationId, spec.id, outcome, now);
      }
      if (current.source_url && services.config.openapiRefreshMs > 0) {
        await services.jobs.enqueue(OPENAPI_PROCESS_JOB, payload, { runAt: new Date(now.getTime() + services.config.openapiRefreshMs), db: trx });
      }
    });
  };
}
