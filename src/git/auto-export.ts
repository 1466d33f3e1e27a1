import type { Services } from '../platform/context.ts';
import type { Db } from '../platform/db/database.ts';
import { autoExportOf } from './store.ts';

export const GIT_IMPORT_JOB = 'git.import';
export const GIT_EXPORT_JOB = 'git.export';

/** What an import or export job carries. Credentials are encrypted; `stored` uses the space's settings. */
export interface GitJobPayload {
  spaceId: string;
  userId: string;
  stored?: boolean;
  url?: string;
  credentials?: string;
  ref?: string;
  projectDir?: string;
  repoTreeURL?: string;
  repoCommitURL?: string;
  commitMessage?: string;
  timestamp?: string;
  force?: boolean;
  standalone?: boolean;
}

/**
 * After a merge: queues an export when the space is set to export by itself (git sync settings).
 * `db`: the transaction of the merge, so that the export is queued if and only if the merge commits.
 */
export async function exportAfterMerge(
  services: Pick<Services, 'db' | 'jobs'>,
  space: { id: string; organization_id: string },
  message: string,
  db: Db = services.db,
): Promise<void> {
  const row = await autoExportOf(db, space.organization_id, space.id);
  if (!row?.auto_export || !row.url) return;
  await services.jobs.enqueue(GIT_EXPORT_JOB, { spaceId: space.id, userId: row.configured_by ?? '', stored: true, commitMessage: message, timestamp: new Date().toISOString() }, { db });
}
