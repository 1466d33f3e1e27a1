import { sql } from 'kysely';
import { json, type Db } from '../platform/db/database.ts';
import type { OpenAPIErrorCode, OpenAPIProcessError, OpenAPISpecRow, OpenAPISpecVersionRow, OpenAPIVersionFile } from '../platform/db/schema.ts';
import { newId } from '../platform/ids.ts';
import { paginate, type PageRequest } from '../platform/paging.ts';

/** SQL of OpenAPI specs; every query is scoped by organization. */

export function specsOf(db: Db, organizationId: string) {
  return db.selectFrom('openapi_specs').selectAll().where('organization_id', '=', organizationId);
}

export function findSpec(db: Db, organizationId: string, slug: string) {
  return specsOf(db, organizationId).where('slug', '=', slug).executeTakeFirst();
}

export function lockSpec(db: Db, organizationId: string, slug: string) {
  return specsOf(db, organizationId).where('slug', '=', slug).forUpdate().executeTakeFirst();
}

export function versionsOf(db: Db, organizationId: string, specId: string) {
  return db.selectFrom('openapi_spec_versions').selectAll().where('organization_id', '=', organizationId).where('spec_id', '=', specId);
}

export function findVersion(db: Db, organizationId: string, specId: string, versionId: string) {
  return versionsOf(db, organizationId, specId).where('id', '=', versionId).executeTakeFirst();
}

/** A page of the organization's specs (only public ones for guests), oldest first. */
export async function listSpecs(db: Db, organizationId: string, publicOnly: boolean, page: PageRequest) {
  const base = specsOf(db, organizationId).$if(publicOnly, (q) => q.where('visibility', '=', 'public'));
  return paginate(base, { kind: 'openapi-specs', sortExpr: null, seqExpr: sql.ref('openapi_specs.seq'), direction: 'asc' }, page);
}

/** The first spec of the organization with this slug or source URL. */
export async function findSpecBy(db: Db, organizationId: string, key: { slug?: string; url?: string }): Promise<OpenAPISpecRow | undefined> {
  let query = specsOf(db, organizationId);
  query = key.slug !== undefined ? query.where('slug', '=', key.slug) : query.where('source_url', '=', key.url ?? '');
  return query.orderBy('seq').executeTakeFirst();
}

/** The spec a processing job is for (by id: the job names no organization). */
export async function findSpecById(db: Db, specId: string): Promise<OpenAPISpecRow | undefined> {
  return db.selectFrom('openapi_specs').selectAll().where('id', '=', specId).executeTakeFirst();
}

export async function lockSpecById(db: Db, organizationId: string, specId: string): Promise<OpenAPISpecRow | undefined> {
  return specsOf(db, organizationId).where('id', '=', specId).forUpdate().executeTakeFirst();
}

/** Where a spec's content comes from: a URL or a text. */
export type SourceColumns = { source_url: string; source_text: null } | { source_url: null; source_text: string };

/** Inserts a new private spec, pending its first processing. */
export async function insertSpec(db: Db, organizationId: string, slug: string, source: SourceColumns): Promise<OpenAPISpecRow> {
  const now = new Date();
  return db
    .insertInto('openapi_specs')
    .values({ id: newId(), organization_id: organizationId, slug, ...source, visibility: 'private', processing_state: 'pending', generation: 1, last_errors: json([]), last_error_count: 0, created_at: now, updated_at: now })
    .returningAll()
    .executeTakeFirstOrThrow();
}

/** Gives a spec a new source and the next generation, pending processing. */
export async function resetSpecSource(db: Db, organizationId: string, spec: OpenAPISpecRow, source: SourceColumns): Promise<OpenAPISpecRow> {
  return db
    .updateTable('openapi_specs')
    .set({ ...source, processing_state: 'pending', generation: spec.generation + 1, updated_at: new Date() })
    .where('organization_id', '=', organizationId)
    .where('id', '=', spec.id)
    .returningAll()
    .executeTakeFirstOrThrow();
}

export async function setSpecVisibility(db: Db, organizationId: string, specId: string, visibility: 'private' | 'public'): Promise<OpenAPISpecRow | undefined> {
  return db
    .updateTable('openapi_specs')
    .set({ visibility, updated_at: new Date() })
    .where('id', '=', specId)
    .where('organization_id', '=', organizationId)
    .returningAll()
    .executeTakeFirst();
}

/** Deletes a spec (its versions go with it). */
export async function deleteSpec(db: Db, organizationId: string, specId: string): Promise<void> {
  await db.deleteFrom('openapi_specs').where('id', '=', specId).where('organization_id', '=', organizationId).execute();
}

/** A page of a spec's versions, newest first. */
export async function listVersions(db: Db, organizationId: string, specId: string, page: PageRequest) {
  return paginate(versionsOf(db, organizationId, specId), { kind: 'openapi-versions', sortExpr: null, seqExpr: sql.ref('openapi_spec_versions.seq'), direction: 'desc' }, page);
}

/** A version of the organization by id (a spec's latest). */
export async function findVersionById(db: Db, organizationId: string, versionId: string): Promise<OpenAPISpecVersionRow | undefined> {
  return db.selectFrom('openapi_spec_versions').selectAll().where('id', '=', versionId).where('organization_id', '=', organizationId).executeTakeFirst();
}

/** Marks the spec as being processed, unless a PUT started a newer generation. */
export async function markInProgress(db: Db, organizationId: string, specId: string, generation: number): Promise<void> {
  await db
    .updateTable('openapi_specs')
    .set({ processing_state: 'progress' })
    .where('organization_id', '=', organizationId)
    .where('id', '=', specId)
    .where('generation', '=', generation)
    .execute();
}

export async function versionHash(db: Db, organizationId: string, versionId: string): Promise<string | undefined> {
  const row = await db
    .selectFrom('openapi_spec_versions')
    .select('content_hash')
    .where('organization_id', '=', organizationId)
    .where('id', '=', versionId)
    .executeTakeFirst();
  return row?.content_hash;
}

export async function insertVersion(
  db: Db,
  organizationId: string,
  version: { id: string; specId: string; url: string; contentHash: string; files: OpenAPIVersionFile[]; createdAt: Date },
): Promise<void> {
  await db
    .insertInto('openapi_spec_versions')
    .values({
      id: version.id,
      spec_id: version.specId,
      organization_id: organizationId,
      url: version.url,
      content_hash: version.contentHash,
      files: json(version.files),
      created_at: version.createdAt,
    })
    .execute();
}

/** Records a successful processing: `versionId` is the latest version. */
export async function recordProcessed(db: Db, organizationId: string, specId: string, versionId: string | null, now: Date): Promise<void> {
  await db
    .updateTable('openapi_specs')
    .set({ processing_state: 'complete', last_version_id: versionId, last_processed_at: now, last_error_code: null, last_errors: json([]), last_error_count: 0, updated_at: now })
    .where('organization_id', '=', organizationId)
    .where('id', '=', specId)
    .execute();
}

/** Records a failed processing; the latest version stays. */
export async function recordFailed(
  db: Db,
  organizationId: string,
  specId: string,
  failure: { code: OpenAPIErrorCode; errors: OpenAPIProcessError[]; count: number },
  now: Date,
): Promise<void> {
  await db
    .updateTable('openapi_specs')
    .set({ processing_state: 'complete', last_processed_at: now, last_error_code: failure.code, last_errors: json(failure.errors), last_error_count: failure.count, updated_at: now })
    .where('organization_id', '=', organizationId)
    .where('id', '=', specId)
    .execute();
}
