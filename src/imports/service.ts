import { requireMembership } from '../access/organizations.ts';
import { spaceRoles } from '../access/effective.ts';
import { assertLive, assertOpen, loadChangeRequest } from '../change-requests/service.ts';
import { ContentReader } from '../content/model.ts';
import { loadRevision } from '../content/service.ts';
import type { Ctx } from '../platform/context.ts';
import type { ImportRunRow } from '../platform/db/schema.ts';
import { BadRequestError, ForbiddenError, NotFoundError } from '../platform/errors.ts';
import { newId } from '../platform/ids.ts';
import type { PageRequest } from '../platform/paging.ts';
import { assertContentRole, atLeast } from '../platform/policy.ts';
import { loadSpace } from '../spaces/access.ts';
import { findUpload } from '../storage/store.ts';
import type { StartImportInput } from './schemas.ts';
import { unsupportedReason, websiteImports } from './sources.ts';
import './converters.ts';
import * as store from './store.ts';

/**
 * Import runs (startImportRun and friends): organization scoped; a run is visible to whoever can
 * read its target space (404 otherwise), started and cancelled by whoever can edit it (403).
 * The work is a job (jobs.ts): this module records the run and queues it in one transaction.
 */

export const IMPORT_RUN_JOB = 'import.run';


export async function startImportRun(ctx: Ctx, organizationId: string, input: StartImportInput): Promise<ImportRunRow> {
  await requireMembership(ctx, organizationId);
  const access = await loadSpace(ctx, input.target.space).catch((err) => {
    if (err instanceof NotFoundError) throw new NotFoundError('Space', `target.space: space "${input.target.space}" does not exist or you cannot read it`);
    throw err;
  });
  if (access.space.organization_id !== organizationId) throw new NotFoundError('Space', `target.space: space "${input.target.space}" is not in this organization`);
  assertContentRole(access.role, 'edit', 'import content into the space');
  assertLive(access.space, 'import content into it');
  let root = (await loadRevision(ctx.db, access.space.id, access.space.revision_id)).root;
  let changeRequestId: string | null = null;
  if (input.target.changeRequest) {
    const { cr } = await loadChangeRequest(ctx, access.space.id, input.target.changeRequest);
    assertOpen(cr, 'import into the change request');
    changeRequestId = cr.id;
    root = (await loadRevision(ctx.db, access.space.id, cr.revision)).root;
  }
  if (input.target.page) {
    const page = await new ContentReader(ctx.db, root).page(input.target.page);
    if (!page) throw new BadRequestError(`target.page: no page "${input.target.page}" in the ${changeRequestId ? 'change request' : 'space'}`);
    if (page.type === 'link') throw new BadRequestError(`target.page: "${input.target.page}" is a link: pages can only be imported under a document or a group`);
  }
  if (input.site) {
    const site = await ctx.db.selectFrom('sites').select('id').where('organization_id', '=', organizationId).where('id', '=', input.site).executeTakeFirst();
    if (!site) throw new BadRequestError(`site: no site "${input.site}" in this organization`);
  }
  if (input.source.type === 'website') {
    if (!websiteImports.crawl || !websiteImports.toMarkdown) throw new BadRequestError('source: website imports are not supported yet: upload the pages as files (Markdown, or a zip archive of a folder)');
    if (!/^https?:\/\/[^/]/i.test(input.source.url)) throw new BadRequestError('source.url: only http(s) websites can be imported');
  } else {
    for (const [i, key] of input.source.files.entries()) {
      const upload = await findUpload(ctx.db, organizationId, key);
      if (!upload) throw new BadRequestError(`source.files[${i}]: no upload "${key}" in this organization (use the key generateStorageUploadURL answered)`);
      const reason = unsupportedReason(upload.name, upload.content_type);
      if (reason) throw new BadRequestError(`source.files[${i}]: ${reason}`);
    }
  }
  return ctx.db.transaction().execute(async (trx) => {
    const row = await store.insertImportRun(trx, organizationId, {
      id: newId(),
      spaceId: access.space.id,
      changeRequestId,
      pageId: input.target.page ?? null,
      siteId: input.site ?? null,
      source: input.source,
      createdBy: ctx.user.id,
      at: new Date(ctx.now()),
    });
    const jobId = await ctx.jobs.enqueue(IMPORT_RUN_JOB, { run: row.id }, { db: trx });
    return (await store.updateImportRun(trx, organizationId, row.id, { job_id: jobId }))!;
  });
}

/** The run, if the caller can read its target space (404 otherwise, its existence not revealed). */
async function visibleRun(ctx: Ctx, organizationId: string, id: string) {
  await requireMembership(ctx, organizationId);
  const row = await store.findImportRun(ctx.db, organizationId, id);
  if (!row) throw new NotFoundError('Import run');
  const access = await loadSpace(ctx, row.space_id, { includeDeleted: true }).catch((err) => {
    if (err instanceof NotFoundError) throw new NotFoundError('Import run');
    throw err;
  });
  return { row, access };
}

/** The run, and whether it was abandoned (its job ended without it reporting back: shown as failed). */
export async function getImportRun(ctx: Ctx, organizationId: string, id: string): Promise<{ row: ImportRunRow; abandoned: boolean }> {
  const { row } = await visibleRun(ctx, organizationId, id);
  return { row, abandoned: (await store.abandonedRuns(ctx.db, [row])).has(row.id) };
}

export async function listImportRuns(ctx: Ctx, organizationId: string, query: Omit<store.ImportRunFilters, 'spaceIds'> & PageRequest) {
  const membership = await requireMembership(ctx, organizationId);
  // Admins see every run; others the runs of the spaces they can read (one query for the set).
  let spaceIds: string[] | null = null;
  if (membership.role !== 'admin') {
    const ids = (await ctx.db.selectFrom('import_runs').select('space_id').distinct().where('organization_id', '=', organizationId).execute()).map((r) => r.space_id);
    const spaces = ids.length ? await ctx.db.selectFrom('spaces').selectAll().where('organization_id', '=', organizationId).where('id', 'in', ids).execute() : [];
    const roles = await spaceRoles(ctx.db, organizationId, { userId: ctx.user.id, orgRole: membership.role }, spaces);
    spaceIds = spaces.filter((s) => atLeast(roles.get(s.id) ?? null, 'read')).map((s) => s.id);
  }
  const page = await store.listImportRuns(ctx.db, organizationId, { ...query, spaceIds }, query);
  return { ...page, abandoned: await store.abandonedRuns(ctx.db, page.items) };
}

/**
 * Cancels a run that has not finished: the job notices before it writes anything (its final write
 * locks the run and checks it is still in progress), so a cancelled import leaves nothing behind.
 */
export async function cancelImportRun(ctx: Ctx, organizationId: string, id: string): Promise<ImportRunRow> {
  const { access } = await visibleRun(ctx, organizationId, id);
  if (!atLeast(access.role, 'edit')) throw new ForbiddenError('Only members who can edit the target space can cancel its imports');
  return ctx.db.transaction().execute(async (trx) => {
    const row = await store.lockImportRun(trx, organizationId, id);
    if (!row) throw new NotFoundError('Import run');
    if (row.status !== 'pending' && row.status !== 'in-progress') throw new BadRequestError(`The import run is already ${row.status}: only a pending or in-progress run can be cancelled`);
    return (await store.updateImportRun(trx, organizationId, id, { status: 'cancelled' }))!;
  });
}
