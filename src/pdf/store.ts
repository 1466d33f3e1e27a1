import { json, type Db } from '../platform/db/database.ts';
import type { PdfExportRow, PdfExportStatus } from '../platform/db/schema.ts';

/** SQL of PDF exports; every function but those of the job and the link (which know only the id) is scoped to an organization. */

/** What an export prints. */
export interface PdfRequest {
  /** Root of the revision printed. */
  root: string;
  title: string;
  subtitle?: string | undefined;
  /** When the revision was made (the date on the title page). */
  date: string;
  page?: string | undefined;
  only?: boolean | undefined;
}

export interface NewPdfExport {
  id: string;
  spaceId: string;
  key: string;
  request: PdfRequest;
  status: 'pending' | 'running';
  pagesTotal: number;
  name: string;
  at: Date;
}

export async function insertPdfExport(db: Db, organizationId: string, e: NewPdfExport): Promise<PdfExportRow> {
  return db
    .insertInto('pdf_exports')
    .values({
      id: e.id,
      organization_id: organizationId,
      space_id: e.spaceId,
      key: e.key,
      request: json(e.request),
      status: e.status,
      pages_total: e.pagesTotal,
      blob: null,
      name: e.name,
      reason: null,
      job_id: null,
      created_at: e.at,
      updated_at: e.at,
    })
    .returningAll()
    .executeTakeFirstOrThrow();
}

/** The newest export of the same content that is printed or being printed (failed ones are not reused). */
export async function reusablePdfExport(db: Db, organizationId: string, key: string): Promise<PdfExportRow | undefined> {
  return db
    .selectFrom('pdf_exports')
    .selectAll()
    .where('organization_id', '=', organizationId)
    .where('key', '=', key)
    .where('status', '!=', 'failed')
    .orderBy('created_at', 'desc')
    .limit(1)
    .executeTakeFirst();
}

export async function pdfExportById(db: Db, id: string): Promise<PdfExportRow | undefined> {
  return db.selectFrom('pdf_exports').selectAll().where('id', '=', id).executeTakeFirst();
}

export async function setPdfExportJob(db: Db, id: string, jobId: number): Promise<void> {
  await db.updateTable('pdf_exports').set({ job_id: jobId }).where('id', '=', id).execute();
}

/** Moves an export on; `from`: only while it is in one of these states (false when it no longer was). */
export async function updatePdfExport(
  db: Db,
  id: string,
  set: { status?: PdfExportStatus; pagesDone?: number; blob?: string; reason?: string },
  from: PdfExportStatus[] = ['pending', 'running'],
): Promise<boolean> {
  const row = await db
    .updateTable('pdf_exports')
    .set({
      ...(set.status ? { status: set.status } : {}),
      ...(set.pagesDone !== undefined ? { pages_done: set.pagesDone } : {}),
      ...(set.blob ? { blob: set.blob } : {}),
      ...(set.reason !== undefined ? { reason: set.reason.slice(0, 2000) } : {}),
      updated_at: new Date(),
    })
    .where('id', '=', id)
    .where('status', 'in', from)
    .returning('id')
    .executeTakeFirst();
  return !!row;
}

/** The state of the job printing an export (undefined: no job, or it is gone). */
export async function pdfJobStatus(db: Db, jobId: number): Promise<string | undefined> {
  const row = await db.selectFrom('jobs').select('status').where('id', '=', jobId).executeTakeFirst();
  return row?.status;
}
