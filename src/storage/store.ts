import type { Db } from '../platform/db/database.ts';
import type { StorageUploadsTable } from '../platform/db/schema.ts';
import type { Insertable, Selectable } from 'kysely';

export type UploadRow = Selectable<StorageUploadsTable>;

export async function insertUpload(db: Db, row: Insertable<StorageUploadsTable>): Promise<void> {
  await db.insertInto('storage_uploads').values(row).execute();
}

export async function findUpload(db: Db, organizationId: string, key: string): Promise<UploadRow | undefined> {
  return db.selectFrom('storage_uploads').selectAll().where('organization_id', '=', organizationId).where('key', '=', key).executeTakeFirst();
}

/** Records the hash the upload's bytes are stored under. */
export async function setUploadBlob(db: Db, organizationId: string, key: string, blob: string): Promise<void> {
  await db.updateTable('storage_uploads').set({ blob }).where('organization_id', '=', organizationId).where('key', '=', key).execute();
}
