import { sql, type Updateable } from 'kysely';
import { json, type Db } from '../platform/db/database.ts';
import type { ImportRunRow, ImportRunsTable, ImportRunStatus } from '../platform/db/schema.ts';
import { paginate, type PageRequest } from '../platform/paging.ts';

/** SQL of import runs; every function is scoped to an organization. */

export interface ImportProgress {
  pagesFound: number;
  pagesConverted: number;
  pagesFailed: number;
}

export const NO_PROGRESS: ImportProgress = { pagesFound: 0, pagesConverted: 0, pagesFailed: 0 };

export interface NewImportRun {
  id: string;
  spaceId: string;
  changeRequestId: string | null;
  pageId: string | null;
  siteId: string | null;
  source: unknown;
  createdBy: string;
  at: Date;
}

export async function insertImportRun(db: Db, organizationId: string, run: NewImportRun): Promise<ImportRunRow> {
  return db
    .insertInto('import_runs')
    .values({
      id: run.id,
      organization_id: organizationId,
      space_id: run.spaceId,
      change_request_id: run.changeRequestId,
      page_id: run.pageId,
      site_id: run.siteId,
      source: json(run.source),
      status: 'pending',
      reason: null,
      project: null,
      progress: json(NO_PROGRESS),
      warnings: json([]),
      pages: null,
      result_revision: null,
      job_id: null,
      created_by: run.createdBy,
      created_at: run.at,
      updated_at: run.at,
      started_at: null,
      completed_at: null,
    })
    .returningAll()
    .executeTakeFirstOrThrow();
}

export async function findImportRun(db: Db, organizationId: string, id: string): Promise<ImportRunRow | undefined> {
  return db.selectFrom('import_runs').selectAll().where('organization_id', '=', organizationId).where('id', '=', id).executeTakeFirst();
}

/** A run by id alone: for its job, which knows only the run. */
export async function importRunById(db: Db, id: string): Promise<ImportRunRow | undefined> {
  return db.selectFrom('import_runs').selectAll().where('id', '=', id).executeTakeFirst();
}

/** The run, locked against a concurrent cancel or completion until the transaction ends. */
export async function lockImportRun(db: Db, organizationId: string, id: string): Promise<ImportRunRow | undefined> {
  return db.selectFrom('import_runs').selectAll().where('organization_id', '=', organizationId).where('id', '=', id).forUpdate().executeTakeFirst();
}

export interface ImportRunFilters {
  spaceIds: string[] | null;
  space?: string | undefined;
  changeRequest?: string | undefined;
  site?: string | undefined;
  status?: ImportRunStatus | 'active' | undefined;
}

/** Runs of the organization, most recent first; `spaceIds` (when not null) limits them to the spaces the caller sees. */
export async function listImportRuns(db: Db, organizationId: string, filters: ImportRunFilters, page: PageRequest) {
  let base = db.selectFrom('import_runs').selectAll().where('organization_id', '=', organizationId);
  if (filters.spaceIds) base = filters.spaceIds.length ? base.where('space_id', 'in', filters.spaceIds) : base.where(sql<boolean>`false`);
  if (filters.space) base = base.where('space_id', '=', filters.space);
  if (filters.changeRequest) base = base.where('change_request_id', '=', filters.changeRequest);
  if (filters.site) base = base.where('site_id', '=', filters.site);
  if (filters.status === 'active') base = base.where('status', 'in', ['pending', 'in-progress']);
  else if (filters.status) base = base.where('status', '=', filters.status);
  return paginate(base, { kind: 'import-runs', sortExpr: null, seqExpr: sql.ref('seq'), direction: 'desc' }, page);
}

export type ImportRunUpdate = Omit<Updateable<ImportRunsTable>, 'progress' | 'warnings' | 'pages'> & { progress?: ImportProgress; warnings?: unknown[]; pages?: unknown[] };

export async function updateImportRun(db: Db, organizationId: string, id: string, set: ImportRunUpdate): Promise<ImportRunRow | undefined> {
  const { progress, warnings, pages, ...rest } = set;
  return db
    .updateTable('import_runs')
    .set({
      ...rest,
      ...(progress ? { progress: json(progress) } : {}),
      ...(warnings ? { warnings: json(warnings) } : {}),
      ...(pages ? { pages: json(pages) } : {}),
      updated_at: new Date(),
    })
    .where('organization_id', '=', organizationId)
    .where('id', '=', id)
    .returningAll()
    .executeTakeFirst();
}

/**
 * Runs still pending or in progress whose job is over (it failed past its attempts, or its worker
 * died past them): they never reported back, and are shown as failed.
 */
export async function abandonedRuns(db: Db, rows: ImportRunRow[]): Promise<Set<string>> {
  const active = rows.filter((r) => (r.status === 'pending' || r.status === 'in-progress') && r.job_id !== null);
  if (!active.length) return new Set();
  const over = await db
    .selectFrom('jobs')
    .select('id')
    .where('id', 'in', active.map((r) => r.job_id!))
    .where('status', 'in', ['done', 'failed'])
    .execute();
  const ids = new Set(over.map((j) => Number(j.id)));
  return new Set(active.filter((r) => ids.has(Number(r.job_id))).map((r) => r.id));
}
