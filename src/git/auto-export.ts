import type { Services } from '../platform/context.ts';
import type { Db } from '../platform/db/database.ts';

export const GIT_IMPORT_JOB = 'git.import';
export const GIT_EXPORT_JOB = 'git.export';

/**
 * After a merge: queues an export when the space is set to export by itself (git sync settings).
 * `db`: the transaction of the merge, so that the export is queued if and only if the merge commits.
 */
export async function exportAfterMerge(services: Pick<Services, 'db' | 'jobs'>, spaceId: string, message: string, db: Db = services.db): Promise<void> {
  const row = await db.selectFrom('git_syncs').select(['auto_export', 'url', 'configured_by']).where('space_id', '=', spaceId).executeTakeFirst();
  if (!row?.auto_export || !row.url) return;
  await services.jobs.enqueue(GIT_EXPORT_JOB, { spaceId, userId: row.configured_by ?? '', stored: true, commitMessage: message, timestamp: new Date().toISOString() }, { db });
}
