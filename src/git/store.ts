import type { Insertable, Updateable } from 'kysely';
import { json, type Db } from '../platform/db/database.ts';
import type { GitSyncRow, GitSyncsTable, SpaceRow } from '../platform/db/schema.ts';

/**
 * The SQL of git sync: a space's `git_syncs` row (settings, operation state, the lock of its jobs)
 * and what a sync writes beside it (the space's public `git_sync`, a revision's `git`). Every
 * query takes the organization id, except `syncOfSpace`: a push webhook and a queued job know only
 * the space id, and read the organization from the row it returns. (The key sealing git secrets
 * is an instance setting: platform/settings.ts.)
 */

/** The git sync of a space, whatever its organization: for the webhook and the jobs, which know only the space. */
export async function syncOfSpace(db: Db, spaceId: string): Promise<GitSyncRow | undefined> {
  return db.selectFrom('git_syncs').selectAll().where('space_id', '=', spaceId).executeTakeFirst();
}

export async function findSync(db: Db, organizationId: string, spaceId: string): Promise<GitSyncRow | undefined> {
  return db.selectFrom('git_syncs').selectAll().where('organization_id', '=', organizationId).where('space_id', '=', spaceId).executeTakeFirst();
}

/** The git sync of a space that must exist (throws otherwise). */
export async function readSync(db: Db, organizationId: string, spaceId: string): Promise<GitSyncRow> {
  return db.selectFrom('git_syncs').selectAll().where('organization_id', '=', organizationId).where('space_id', '=', spaceId).executeTakeFirstOrThrow();
}

export async function syncExists(db: Db, organizationId: string, spaceId: string): Promise<boolean> {
  const row = await db.selectFrom('git_syncs').select('space_id').where('organization_id', '=', organizationId).where('space_id', '=', spaceId).executeTakeFirst();
  return !!row;
}

export async function webhookSecretOf(db: Db, organizationId: string, spaceId: string): Promise<string | null | undefined> {
  const row = await db.selectFrom('git_syncs').select(['webhook_secret']).where('organization_id', '=', organizationId).where('space_id', '=', spaceId).executeTakeFirst();
  return row?.webhook_secret;
}

/** Whether a merge is exported by itself, and as whom. */
export async function autoExportOf(db: Db, organizationId: string, spaceId: string) {
  return db
    .selectFrom('git_syncs')
    .select(['auto_export', 'url', 'configured_by'])
    .where('organization_id', '=', organizationId)
    .where('space_id', '=', spaceId)
    .executeTakeFirst();
}

/** The manifest of the last sync (null before the first one). */
export async function syncedManifest(db: Db, organizationId: string, spaceId: string): Promise<unknown> {
  const row = await db.selectFrom('git_syncs').select('manifest').where('organization_id', '=', organizationId).where('space_id', '=', spaceId).executeTakeFirst();
  return row?.manifest;
}

export type SyncValues = Omit<Insertable<GitSyncsTable>, 'space_id' | 'organization_id'>;

/** Records a space's git settings, whether it syncs for the first time or again. */
export async function saveSync(db: Db, space: Pick<SpaceRow, 'id' | 'organization_id'>, values: SyncValues): Promise<GitSyncRow> {
  return db
    .insertInto('git_syncs')
    .values({ space_id: space.id, organization_id: space.organization_id, ...values })
    .onConflict((oc) => oc.column('space_id').doUpdateSet(values))
    .returningAll()
    .executeTakeFirstOrThrow();
}

/** Changes to a space's git sync; `manifest` is the JSON of the last sync. */
export type SyncChanges = Omit<Updateable<GitSyncsTable>, 'manifest'> & { manifest?: unknown };

export async function updateSync(db: Db, organizationId: string, spaceId: string, changes: SyncChanges): Promise<void> {
  const { manifest, ...columns } = changes;
  await db
    .updateTable('git_syncs')
    .set({ ...columns, ...(manifest !== undefined ? { manifest: json(manifest) } : {}) })
    .where('organization_id', '=', organizationId)
    .where('space_id', '=', spaceId)
    .execute();
}

export async function deleteSync(db: Db, organizationId: string, spaceId: string): Promise<void> {
  await db.deleteFrom('git_syncs').where('organization_id', '=', organizationId).where('space_id', '=', spaceId).execute();
}

/** The space's public `git_sync` (the official GitSyncState summary), or null to remove it. */
export async function setSpaceGitSync(db: Db, organizationId: string, spaceId: string, gitSync: unknown): Promise<void> {
  await db
    .updateTable('spaces')
    .set({ git_sync: gitSync === null ? null : json(gitSync) })
    .where('organization_id', '=', organizationId)
    .where('id', '=', spaceId)
    .execute();
}

/**
 * Takes the lock of the space's git operations for a job, until `until`: free, expired, already
 * the job's, or held by a job that is no longer running under a live lease (its worker died).
 */
export async function takeLock(db: Db, organizationId: string, spaceId: string, jobId: number, now: Date, until: Date): Promise<boolean> {
  const got = await db
    .updateTable('git_syncs')
    .set({ lock_job: jobId, lock_until: until })
    .where('organization_id', '=', organizationId)
    .where('space_id', '=', spaceId)
    .where((eb) =>
      eb.or([
        eb('lock_job', 'is', null),
        eb('lock_until', '<', now),
        eb('lock_job', '=', jobId),
        eb.not(eb.exists(eb.selectFrom('jobs').select('jobs.id').whereRef('jobs.id', '=', 'git_syncs.lock_job').where('jobs.status', '=', 'running').where('jobs.locked_until', '>=', now))),
      ]),
    )
    .executeTakeFirst();
  return Number(got.numUpdatedRows) > 0;
}

export async function releaseLock(db: Db, organizationId: string, spaceId: string, jobId: number): Promise<void> {
  await db
    .updateTable('git_syncs')
    .set({ lock_job: null, lock_until: null })
    .where('organization_id', '=', organizationId)
    .where('space_id', '=', spaceId)
    .where('lock_job', '=', jobId)
    .execute();
}

export async function findSpace(db: Db, organizationId: string, spaceId: string): Promise<SpaceRow | undefined> {
  return db.selectFrom('spaces').selectAll().where('organization_id', '=', organizationId).where('id', '=', spaceId).executeTakeFirst();
}

/** The space as it is now (it must exist). */
export async function readSpace(db: Db, organizationId: string, spaceId: string): Promise<SpaceRow> {
  return db.selectFrom('spaces').selectAll().where('organization_id', '=', organizationId).where('id', '=', spaceId).executeTakeFirstOrThrow();
}

/** The commit a revision was imported from or exported to (a revision's official `git`). */
export async function setRevisionGit(db: Db, organizationId: string, revisionId: string, git: unknown): Promise<void> {
  await db.updateTable('revisions').set({ git: json(git) }).where('organization_id', '=', organizationId).where('id', '=', revisionId).execute();
}
