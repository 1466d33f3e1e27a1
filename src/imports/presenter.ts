import type { ImportRunRow } from '../platform/db/schema.ts';
import type { Urls } from '../platform/urls.ts';
import type { ContentImportRunResource } from './schemas.ts';
import { NO_PROGRESS, type ImportProgress } from './store.ts';

/** The reason of a run whose job ended without it reporting back (see store.abandonedRuns). */
export const ABANDONED = 'The import stopped without reporting back (its job ended): start it again';

export function presentImportRun(urls: Urls, row: ImportRunRow, abandoned = false): ContentImportRunResource {
  if (abandoned) row = { ...row, status: 'failed', reason: row.reason ?? ABANDONED };
  return {
    object: 'import-run',
    id: row.id,
    status: row.status,
    ...(row.status === 'failed' && row.reason ? { reason: row.reason } : {}),
    source: row.source as ContentImportRunResource['source'],
    target: { space: row.space_id, ...(row.change_request_id ? { changeRequest: row.change_request_id } : {}), ...(row.page_id ? { page: row.page_id } : {}) },
    ...(row.site_id ? { site: row.site_id } : {}),
    ...(row.created_by ? { createdBy: row.created_by } : {}),
    createdAt: row.created_at.toISOString(),
    updatedAt: row.updated_at.toISOString(),
    ...(row.started_at ? { startedAt: row.started_at.toISOString() } : {}),
    ...(row.completed_at ? { completedAt: row.completed_at.toISOString() } : {}),
    urls: { location: urls.api(`/org/${encodeURIComponent(row.organization_id)}/imports/${row.id}`) },
    ...(row.pages ? { pages: row.pages as NonNullable<ContentImportRunResource['pages']> } : {}),
    ...(row.project ? { project: row.project } : {}),
    progress: { ...NO_PROGRESS, ...(row.progress as ImportProgress) },
    warnings: (row.warnings as ContentImportRunResource['warnings']) ?? [],
    ...(row.result_revision ? { result: { revision: row.result_revision, ...(row.change_request_id ? { changeRequest: row.change_request_id } : {}) } } : {}),
  };
}
