import { openBucket } from './blob-store.ts';
import type { Config } from './config.ts';
import type { BackupSection, SectionHandler } from './db/backup.ts';

/**
 * The files manifest of a backup: the files whose bytes are not in the database (they are in the
 * S3 bucket, at `blobs/<hash>`). The `blobs` table's rows are in the backup like every table's;
 * this section lists those rows' objects so that a restore can check the bucket still holds
 * them. The bucket's bytes themselves are backed up with the bucket (versioning, replication).
 */
export const FILES_SECTION: BackupSection = {
  kind: 'files',
  meta: { store: 's3', key: 'blobs/<hash>' },
  query: 'SELECT hash, size FROM blobs WHERE data IS NULL ORDER BY hash',
};

/** What a restore found of the files manifest. */
export interface FilesReport {
  /** Files whose bytes the backup names in the bucket. */
  inBucket: number;
  /** Whether the bucket was checked (the S3_* settings were given to the restore). */
  checked: boolean;
  /** Up to 20 hashes the bucket does not hold, and how many in all. */
  missing: string[];
  missingCount: number;
}

/**
 * Checks, while a backup is restored, that the bucket holds every object of its files manifest.
 * Without a bucket configured the objects are counted, not checked (the report says so); missing
 * objects are reported, not fatal: the rest of the database is still worth having.
 */
export function filesSectionHandler(config: Pick<Config, 's3'>, report: FilesReport): SectionHandler {
  return async (_meta, rows) => {
    const bucket = await openBucket(config);
    report.checked = !!bucket;
    try {
      for await (const row of rows) {
        const hash = (row as { hash?: unknown }).hash;
        if (typeof hash !== 'string') continue;
        report.inBucket++;
        if (bucket && !(await bucket.exists(hash))) {
          report.missingCount++;
          if (report.missing.length < 20) report.missing.push(hash);
        }
      }
    } finally {
      bucket?.close();
    }
  };
}

export const emptyFilesReport = (): FilesReport => ({ inBucket: 0, checked: false, missing: [], missingCount: 0 });
