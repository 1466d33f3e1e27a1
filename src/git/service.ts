import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import { sql } from 'kysely';
import { newRevision } from '../change-requests/service.ts';
import { loadRevision } from '../content/service.ts';
import { mergeContents } from '../content/merge.ts';
import { refreshSearchIndex } from '../search/indexer.ts';
import { loadSpace, requireSpaceRole } from '../spaces/access.ts';
import type { Ctx, Services } from '../platform/context.ts';
import { json, type Db } from '../platform/db/database.ts';
import type { GitSyncRow, SpaceRow } from '../platform/db/schema.ts';
import { BadRequestError, NotFoundError, UnauthorizedError } from '../platform/errors.ts';
import { newId } from '../platform/ids.ts';
import type { JobContext } from '../platform/jobs.ts';
import { exportPlan, importTree, type Manifest } from './convert.ts';
import { projectDirectory, readGitbookConfig, repoPath } from './format.ts';
import { checkRef, GitError, GitTimeoutError, parseRemote, redactRemote, vetRemoteForRequest, type Remote } from './git.ts';
import { FetchedRepo } from './repo.ts';
import { decryptSecret, encryptSecret } from './secrets.ts';
import { GitSyncEvents } from './events.ts';
import { emitSpaceEvent } from '../events/outbox.ts';
import { presentUser } from '../users/presenter.ts';

import { exportAfterMerge, GIT_EXPORT_JOB, GIT_IMPORT_JOB } from './auto-export.ts';

export { GIT_EXPORT_JOB, GIT_IMPORT_JOB };

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

export interface GitRequestBody {
  url: string;
  ref: string;
  commitMessage?: string | undefined;
  repoCacheID?: string | undefined;
  repoTreeURL?: string | undefined;
  repoCommitURL?: string | undefined;
  repoProjectDirectory?: string | undefined;
  timestamp?: string | undefined;
  force?: boolean | undefined;
  standalone?: boolean | undefined;
  gitInfo?: { provider?: 'github' | 'gitlab' | undefined; url?: string | undefined } | undefined;
}

function repoName(url: string): string {
  return new URL(url).pathname.replace(/^\/+|\/+$/g, '').replace(/\.git$/, '');
}

function providerOf(url: string, given?: string | null): 'github' | 'gitlab' {
  if (given === 'github' || given === 'gitlab') return given;
  return /gitlab/i.test(new URL(url).hostname) ? 'gitlab' : 'github';
}

async function sealCredentials(db: Db, services: Pick<Services, 'config'>, remote: Remote): Promise<string | undefined> {
  if (remote.username === undefined && remote.password === undefined) return undefined;
  return encryptSecret(db, services.config, JSON.stringify({ u: remote.username ?? '', p: remote.password ?? '' }));
}

async function openCredentials(db: Db, services: Pick<Services, 'config'>, sealed: string | null | undefined): Promise<Pick<Remote, 'username' | 'password'>> {
  if (!sealed) return {};
  const { u, p } = JSON.parse(await decryptSecret(db, services.config, sealed)) as { u: string; p: string };
  return { username: u, password: p };
}

/** Validates an import or export request, records the space's git settings, and queues the job. */
export async function requestSync(ctx: Ctx, spaceId: string, direction: 'import' | 'export', body: GitRequestBody): Promise<void> {
  const { space } = await requireSpaceRole(ctx, spaceId, 'edit', 'trigger a git sync');
  const remote = parseRemote(body.url);
  checkRef(body.ref);
  const projectDir = projectDirectory(body.repoProjectDirectory);
  if (projectDir === undefined) throw new BadRequestError('repoProjectDirectory: must be a relative path inside the repository (no "..", not absolute)');
  for (const field of ['repoTreeURL', 'repoCommitURL'] as const) {
    const value = body[field];
    if (value !== undefined && !/^https?:\/\/[^\s]+$/.test(value)) throw new BadRequestError(`${field}: must be an http(s) URL`);
  }
  if (body.timestamp !== undefined && Number.isNaN(Date.parse(body.timestamp))) throw new BadRequestError('timestamp: must be an ISO 8601 date-time');
  if (direction === 'export' && !body.commitMessage?.trim()) throw new BadRequestError('commitMessage: must not be empty');
  await vetRemoteForRequest(remote, ctx.config);
  const credentials = await sealCredentials(ctx.db, ctx, remote);
  const now = new Date();
  const provider = providerOf(remote.url, body.gitInfo?.provider);
  // What this operation sets, whether the space syncs for the first time or again.
  const settings = {
    url: remote.url,
    ref: body.ref,
    project_directory: projectDir,
    credentials: credentials ?? null,
    repo_tree_url: body.repoTreeURL ?? null,
    repo_commit_url: body.repoCommitURL ?? null,
    provider,
    configured_by: ctx.user.id,
    op_state: 'running',
    op_direction: direction,
    op_started_at: now,
    op_ended_at: null,
    op_error: null,
    updated_at: now,
  };
  await ctx.db.transaction().execute(async (trx) => {
    await trx
      .insertInto('git_syncs')
      .values({ space_id: space.id, organization_id: space.organization_id, ...settings })
      .onConflict((oc) => oc.column('space_id').doUpdateSet(settings))
      .execute();
    await setPublicGitSync(trx, space.id, { url: body.gitInfo?.url ?? body.repoTreeURL ?? remote.url, provider, updatedAt: now, repo: remote.url });
    const payload: GitJobPayload = {
      spaceId: space.id,
      userId: ctx.user.id,
      url: remote.url,
      ...(credentials ? { credentials } : {}),
      ref: body.ref,
      projectDir,
      ...(body.repoTreeURL ? { repoTreeURL: body.repoTreeURL } : {}),
      ...(body.repoCommitURL ? { repoCommitURL: body.repoCommitURL } : {}),
      ...(body.commitMessage ? { commitMessage: body.commitMessage } : {}),
      ...(body.timestamp ? { timestamp: new Date(body.timestamp).toISOString() } : {}),
      ...(body.force ? { force: true } : {}),
      ...(body.standalone && direction === 'import' ? { standalone: true } : {}),
    };
    await ctx.jobs.enqueue(direction === 'import' ? GIT_IMPORT_JOB : GIT_EXPORT_JOB, payload, { db: trx });
  });
}

async function setPublicGitSync(db: Db, spaceId: string, info: { url: string; provider: string; updatedAt: Date; repo: string }) {
  await db
    .updateTable('spaces')
    .set({
      git_sync: json({
        installationId: spaceId,
        installationProvider: info.provider,
        installationStatus: 'active',
        repoName: repoName(info.repo),
        integration: info.provider,
        url: info.url,
        updatedAt: info.updatedAt.toISOString(),
      }),
    })
    .where('id', '=', spaceId)
    .execute();
}

/** The official GitSyncState of a space; 404 when no git provider was ever set up. */
export async function gitInfo(ctx: Ctx, spaceId: string) {
  const { space } = await loadSpace(ctx, spaceId);
  const row = await ctx.db.selectFrom('git_syncs').selectAll().where('space_id', '=', space.id).executeTakeFirst();
  if (!row || !row.url) throw new NotFoundError('Git sync of the space');
  return presentGitSyncState(row);
}

export function presentGitSyncState(row: GitSyncRow) {
  return {
    installationId: row.space_id,
    installationProvider: providerOf(row.url!, row.provider),
    installationStatus: 'active' as const,
    repoName: repoName(row.url!),
    integration: providerOf(row.url!, row.provider),
    url: row.repo_tree_url ?? row.url!,
    updatedAt: row.updated_at.toISOString(),
    ...(row.op_state && row.op_direction && row.op_started_at
      ? {
          operation: {
            state: row.op_state as 'running' | 'success' | 'failure' | 'timeout',
            direction: row.op_direction as 'import' | 'export',
            startedAt: row.op_started_at.toISOString(),
            ...(row.op_ended_at ? { endedAt: row.op_ended_at.toISOString() } : {}),
            ...(row.op_error ? { error: row.op_error } : {}),
          },
        }
      : {}),
  };
}

/** Removes the space's git connection (204 also when there was none). */
export async function deleteLegacyInstallation(ctx: Ctx, spaceId: string): Promise<void> {
  const { space } = await requireSpaceRole(ctx, spaceId, 'admin', 'remove the git installation');
  await ctx.db.transaction().execute(async (trx) => {
    await trx.deleteFrom('git_syncs').where('space_id', '=', space.id).execute();
    await trx.updateTable('spaces').set({ git_sync: null }).where('id', '=', space.id).execute();
  });
}

// ---------------------------------------------------------------------------------------------
// Two-way sync settings and push webhooks (Folio's own operations).

export interface SyncSettingsBody {
  url: string;
  ref: string;
  projectDirectory?: string | undefined;
  autoExport?: boolean | undefined;
  /** Rotate the webhook secret (it is shown only in this response). */
  rotateWebhookSecret?: boolean | undefined;
}

export async function putSyncSettings(ctx: Ctx, spaceId: string, body: SyncSettingsBody) {
  const { space } = await requireSpaceRole(ctx, spaceId, 'admin', 'configure git sync');
  const remote = parseRemote(body.url);
  checkRef(body.ref);
  const projectDir = projectDirectory(body.projectDirectory);
  if (projectDir === undefined) throw new BadRequestError('projectDirectory: must be a relative path inside the repository (no "..", not absolute)');
  await vetRemoteForRequest(remote, ctx.config);
  const credentials = await sealCredentials(ctx.db, ctx, remote);
  const existing = await ctx.db.selectFrom('git_syncs').select(['webhook_secret']).where('space_id', '=', space.id).executeTakeFirst();
  let secret: string | undefined;
  if (!existing?.webhook_secret || body.rotateWebhookSecret) secret = randomBytes(24).toString('base64url');
  const sealedSecret = secret ? await encryptSecret(ctx.db, ctx.config, secret) : existing!.webhook_secret!;
  const now = new Date();
  const provider = providerOf(remote.url);
  const values = {
    url: remote.url,
    ref: body.ref,
    project_directory: projectDir,
    credentials: credentials ?? null,
    webhook_secret: sealedSecret,
    auto_export: body.autoExport ?? false,
    provider,
    configured_by: ctx.user.id,
    updated_at: now,
  };
  const row = await ctx.db.transaction().execute(async (trx) => {
    const saved = await trx
      .insertInto('git_syncs')
      .values({ space_id: space.id, organization_id: space.organization_id, ...values })
      .onConflict((oc) => oc.column('space_id').doUpdateSet(values))
      .returningAll()
      .executeTakeFirstOrThrow();
    await setPublicGitSync(trx, space.id, { url: remote.url, provider, updatedAt: now, repo: remote.url });
    return saved;
  });
  return presentSettings(ctx, row, secret);
}

export async function getSyncSettings(ctx: Ctx, spaceId: string) {
  const { space } = await requireSpaceRole(ctx, spaceId, 'admin', 'read the git sync settings');
  const row = await ctx.db.selectFrom('git_syncs').selectAll().where('space_id', '=', space.id).executeTakeFirst();
  if (!row?.url) throw new NotFoundError('Git sync of the space');
  return presentSettings(ctx, row, undefined);
}

function presentSettings(ctx: Ctx, row: GitSyncRow, secret: string | undefined) {
  return {
    url: row.url!,
    ref: row.ref!,
    projectDirectory: row.project_directory,
    autoExport: row.auto_export,
    hasCredentials: !!row.credentials,
    webhookURL: ctx.urls.api(`/git/webhooks/${row.space_id}`),
    ...(secret ? { webhookSecret: secret } : {}),
    ...(row.synced_commit ? { syncedCommit: row.synced_commit } : {}),
    ...(row.synced_revision ? { syncedRevision: row.synced_revision } : {}),
  };
}

function safeEqual(a: string, b: string): boolean {
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && timingSafeEqual(x, y);
}

/**
 * A push webhook from GitHub (X-Hub-Signature-256), Gitea/Forgejo (X-Gitea-Signature,
 * X-Forgejo-Signature: HMAC-SHA256 of the body) or GitLab (X-Gitlab-Token: the secret itself).
 * A push to the synced branch queues an import; anything else is acknowledged and ignored.
 */
export async function receiveWebhook(services: Services, spaceId: string, headers: Record<string, string | string[] | undefined>, raw: Buffer): Promise<'queued' | 'ignored'> {
  const row = await services.db.selectFrom('git_syncs').selectAll().where('space_id', '=', spaceId).executeTakeFirst();
  const header = (name: string) => {
    const v = headers[name];
    return Array.isArray(v) ? v[0] : v;
  };
  const refuse = () => new UnauthorizedError('The webhook signature does not match: set the secret Folio gave for this space (PUT /v1/spaces/{spaceId}/git/sync)');
  if (!row?.webhook_secret || !row.url) throw refuse();
  const secret = await decryptSecret(services.db, services.config, row.webhook_secret);
  const hmac = createHmac('sha256', secret).update(raw).digest('hex');
  const github = header('x-hub-signature-256');
  const gitea = header('x-gitea-signature') ?? header('x-forgejo-signature');
  const gitlab = header('x-gitlab-token');
  const ok = github ? safeEqual(github, `sha256=${hmac}`) : gitea ? safeEqual(gitea, hmac) : gitlab ? safeEqual(gitlab, secret) : false;
  if (!ok) throw refuse();
  let payload: { ref?: unknown; after?: unknown };
  try {
    payload = JSON.parse(raw.toString('utf8'));
  } catch {
    throw new BadRequestError('The webhook body is not JSON');
  }
  if (typeof payload !== 'object' || payload === null || payload.ref !== row.ref) return 'ignored';
  if (typeof payload.after === 'string' && /^0+$/.test(payload.after)) return 'ignored'; // branch deleted
  await services.jobs.enqueue(GIT_IMPORT_JOB, { spaceId, userId: row.configured_by ?? '', stored: true, timestamp: new Date().toISOString() } satisfies GitJobPayload);
  return 'queued';
}

// ---------------------------------------------------------------------------------------------
// The jobs.

const LOCK_MS = 10 * 60_000;

/** One git operation per space at a time, across workers: imports and exports never interleave. */
async function withSpaceLock<T>(db: Db, spaceId: string, jobId: number, fn: () => Promise<T>): Promise<T> {
  for (let waited = 0; ; waited += 200) {
    const now = new Date();
    const got = await db
      .updateTable('git_syncs')
      .set({ lock_job: jobId, lock_until: new Date(now.getTime() + LOCK_MS) })
      .where('space_id', '=', spaceId)
      .where((eb) =>
        eb.or([
          eb('lock_job', 'is', null),
          eb('lock_until', '<', now),
          eb('lock_job', '=', jobId),
          // The holder's worker died (its job is no longer running under a live lease): take over.
          eb.not(eb.exists(eb.selectFrom('jobs').select('jobs.id').whereRef('jobs.id', '=', 'git_syncs.lock_job').where('jobs.status', '=', 'running').where('jobs.locked_until', '>=', now))),
        ]),
      )
      .executeTakeFirst();
    if (Number(got.numUpdatedRows) > 0) break;
    const exists = await db.selectFrom('git_syncs').select('space_id').where('space_id', '=', spaceId).executeTakeFirst();
    if (!exists) throw new GitError('The git sync of this space was removed');
    if (waited > LOCK_MS) throw new Error('another git operation on this space is still running');
    await new Promise((r) => setTimeout(r, 200));
  }
  try {
    return await fn();
  } finally {
    await db.updateTable('git_syncs').set({ lock_job: null, lock_until: null }).where('space_id', '=', spaceId).where('lock_job', '=', jobId).execute();
  }
}

async function setOperation(db: Db, spaceId: string, op: { state: string; direction?: string; started?: boolean; error?: string | null }) {
  const now = new Date();
  await db
    .updateTable('git_syncs')
    .set({
      op_state: op.state,
      ...(op.direction ? { op_direction: op.direction } : {}),
      ...(op.started ? { op_started_at: now, op_ended_at: null } : { op_ended_at: op.state === 'running' ? null : now }),
      op_error: op.error ?? null,
    })
    .where('space_id', '=', spaceId)
    .execute();
}

interface JobTarget {
  row: GitSyncRow;
  space: SpaceRow;
  remote: Remote;
  ref: string;
  projectDir: string;
  repoCommitURL: string | undefined;
}

async function jobTarget(services: Services, db: Db, p: GitJobPayload): Promise<JobTarget | undefined> {
  const row = await db.selectFrom('git_syncs').selectAll().where('space_id', '=', p.spaceId).executeTakeFirst();
  const space = await db.selectFrom('spaces').selectAll().where('id', '=', p.spaceId).executeTakeFirst();
  if (!row || !space || space.deleted_at) return undefined;
  const url = p.stored ? row.url : p.url;
  const ref = p.stored ? row.ref : p.ref;
  if (!url || !ref) return undefined;
  const credentials = await openCredentials(db, services, p.stored ? row.credentials : p.credentials);
  return {
    row,
    space,
    remote: { url, ...credentials },
    ref,
    projectDir: (p.stored ? row.project_directory : p.projectDir) ?? '',
    repoCommitURL: p.stored ? (row.repo_commit_url ?? undefined) : p.repoCommitURL,
  };
}

/** An older event than the last one synced is skipped unless forced (ordering by `timestamp`). */
function outOfOrder(row: GitSyncRow, p: GitJobPayload): string | undefined {
  if (p.force || !p.timestamp || !row.last_event_at) return undefined;
  const at = new Date(p.timestamp);
  if (at >= row.last_event_at) return undefined;
  return `Skipped: this operation is for an event at ${at.toISOString()}, older than the last synchronised event (${row.last_event_at.toISOString()}); send force: true to run it anyway`;
}

function newerEvent(row: GitSyncRow, p: GitJobPayload): Date | null {
  if (!p.timestamp) return row.last_event_at;
  const at = new Date(p.timestamp);
  return !row.last_event_at || at > row.last_event_at ? at : row.last_event_at;
}

/**
 * Runs a job body under the space lock, recording the operation and its integration events (see
 * GitSyncEvents); user-actionable failures end the job.
 */
async function runOperation(services: Services, job: JobContext, p: GitJobPayload, direction: 'import' | 'export', body: (t: JobTarget, events: GitSyncEvents) => Promise<void>) {
  const target = await jobTarget(services, job.db, p);
  if (!target) return; // the space or its git settings are gone: nothing to do
  await withSpaceLock(job.db, p.spaceId, job.jobId, async () => {
    const fresh = await job.db.selectFrom('git_syncs').selectAll().where('space_id', '=', p.spaceId).executeTakeFirstOrThrow();
    const space = await job.db.selectFrom('spaces').select(['id', 'organization_id', 'revision_id']).where('id', '=', p.spaceId).executeTakeFirst();
    if (!space) return; // purged while the job waited for the lock
    // Until the run knows better: the space's revision now, and the last commit synced ('' before the first sync).
    const events = new GitSyncEvents(services.jobs, space, { revisionId: space.revision_id, commitId: fresh.synced_commit ?? '' });
    const skipped = outOfOrder(fresh, p);
    await setOperation(job.db, p.spaceId, { state: 'running', direction, started: true });
    if (skipped) {
      await events.finish(job.db, 'failure', async (trx) => {
        await setOperation(trx, p.spaceId, { state: 'failure', error: skipped });
        return { result: undefined };
      });
      services.jobs.logger?.info({ space: p.spaceId, direction }, 'git sync: older event skipped');
      return;
    }
    try {
      await body({ ...target, row: fresh }, events);
    } catch (err) {
      // Once the outcome is recorded (and its `completed` sent), the sync is over: what fails
      // afterwards (cleaning up) is logged, not retried, so the sync never runs twice.
      if (events.finished) {
        services.jobs.logger?.error({ space: p.spaceId, direction, err }, 'git sync: failed after it completed');
        return;
      }
      const message = err instanceof GitError || err instanceof BadRequestError ? err.message : `Unexpected error: ${redactRemote((err as Error).message)}`;
      // What the user must fix is not retried; anything else is (the job runs again later).
      const retried = !(err instanceof GitError || err instanceof BadRequestError) && !job.lastAttempt;
      const record = (db: Db) => setOperation(db, p.spaceId, { state: err instanceof GitTimeoutError ? 'timeout' : 'failure', error: message });
      // The sync is over when no retry follows: its integrations learn it failed.
      if (retried) await record(job.db);
      else {
        await events.finish(job.db, 'failure', async (trx) => {
          await record(trx);
          return { result: undefined };
        });
      }
      services.jobs.logger?.warn({ space: p.spaceId, direction, err: message }, 'git sync failed');
      if (retried) throw err;
    }
  });
}

function manifestOf(row: GitSyncRow): Manifest | null {
  return (row.manifest as Manifest | null) ?? null;
}

export function importJob(services: Services) {
  return async (p: GitJobPayload, job: JobContext) =>
    runOperation(services, job, p, 'import', async (t, events) => {
      const log = (message: string, data: Record<string, unknown> = {}) => services.jobs.logger?.info({ space: p.spaceId, ...data }, message);
      const repo = await FetchedRepo.open(t.remote, services.config);
      try {
        const commit = (await repo.fetch(t.ref, { depth: 1 }))!;
        log('git import: fetched', { commit });
        const db = job.db;
        // An import starts from the space's current revision, towards the commit it fetched.
        await events.started(db, { commitId: commit });
        if (!p.force && !p.standalone && commit === t.row.synced_commit) {
          // Already in sync (the commit Folio exported, or one imported before): nothing changes.
          await events.finish(db, 'success', async (trx) => {
            await trx.updateTable('git_syncs').set({ last_event_at: newerEvent(t.row, p), op_state: 'success', op_ended_at: new Date() }).where('space_id', '=', p.spaceId).execute();
            return { result: undefined };
          });
          return;
        }
        const message = await repo.commitMessage(commit);
        const synced = t.row.synced_revision ? await loadRevision(db, t.space.id, t.row.synced_revision).catch(() => undefined) : undefined;
        const manifest = synced ? manifestOf(t.row) : null;
        const baseRoot = synced?.root ?? (await loadRevision(db, t.space.id, t.space.revision_id)).root;
        const built = await importTree(db, repo, commit, { spaceId: t.space.id, projectDir: t.projectDir, base: { root: baseRoot, manifest }, progress: log });
        const git = {
          oid: commit,
          message,
          createdByGitBook: false,
          ref: t.ref,
          ...(t.repoCommitURL ? { url: `${t.repoCommitURL.replace(/\/?$/, '/')}${commit}` } : {}),
        };
        const userId = p.userId || t.row.configured_by || t.space.created_by!;
        // Completed names the revision that now holds the commit: the space's new revision (the
        // merge, when both sides moved), the standalone revision, or, when the commit conflicts,
        // the revision of the commit itself that the conflict change request starts from.
        const outcome = await events.finish<{ kind: 'standalone' | 'unchanged' | 'replaced' | 'merged' | 'conflicts'; revision: string }>(db, 'success', async (trx) => {
          const space = await trx.selectFrom('spaces').selectAll().where('id', '=', t.space.id).forNoKeyUpdate().executeTakeFirstOrThrow();
          const current = await loadRevision(trx, space.id, space.revision_id);
          const setGit = (id: string) => trx.updateTable('revisions').set({ git: json(git) }).where('id', '=', id).execute();
          if (p.standalone) {
            const id = await newRevision(trx, space, built.root, [current.id], 'edits', userId);
            await setGit(id);
            await setOperation(trx, p.spaceId, { state: 'success' });
            return { result: { kind: 'standalone' as const, revision: id }, ids: { revisionId: id } };
          }
          let merge: string | undefined;
          let synchronised: string;
          let result: 'unchanged' | 'replaced' | 'merged' | 'conflicts';
          // `force` only overrides the event order: work done on both sides is always merged.
          if (!synced || current.id === synced.id) {
            if (current.root === built.root) {
              synchronised = current.id;
              result = 'unchanged';
            } else {
              synchronised = await newRevision(trx, space, built.root, [current.id], 'edits', userId);
              await setGit(synchronised);
              await trx.updateTable('spaces').set({ revision_id: synchronised, updated_at: new Date() }).where('id', '=', space.id).execute();
              result = 'replaced';
            }
          } else {
            // Both sides moved since the last sync: a three-way merge with the synced revision as base.
            const incoming = await newRevision(trx, space, built.root, [synced.id], 'edits', userId);
            await setGit(incoming);
            synchronised = incoming;
            const merged = await mergeContents(trx, { base: synced.root, ours: current.root, theirs: built.root }, { spaceId: space.id, keepConflicts: false });
            if (!merged.conflicts.length) {
              merge = await newRevision(trx, space, merged.root, [current.id, incoming], 'edits', userId);
              await trx.updateTable('spaces').set({ revision_id: merge, updated_at: new Date() }).where('id', '=', space.id).execute();
              result = 'merged';
            } else {
              await conflictChangeRequest(trx, space, { base: synced, incoming: { id: incoming, root: built.root }, current, userId, commit, message });
              result = 'conflicts';
            }
          }
          await trx
            .updateTable('git_syncs')
            .set({
              synced_commit: commit,
              synced_revision: synchronised,
              manifest: json(built.manifest),
              last_event_at: newerEvent(t.row, p),
              op_state: 'success',
              op_ended_at: new Date(),
              op_error: result === 'conflicts' ? null : null,
            })
            .where('space_id', '=', space.id)
            .execute();
          if (result === 'replaced' || result === 'merged') {
            // The space's content moved, as after a merged change request: integrations hear of it.
            const author = await trx.selectFrom('users').selectAll().where('id', '=', userId).executeTakeFirst();
            await emitSpaceEvent(trx, services.jobs, space, { type: 'space_content_updated', revisionId: merge ?? synchronised, updatedBy: author ? [presentUser(services.urls, author)] : [] });
          }
          // A merge of both sides is new to the repository: sent back when the space exports by
          // itself, queued with the merge (nothing after this transaction may fail the job, which
          // would run the sync, and send its events, again).
          if (result === 'merged') await exportAfterMerge(services, space.id, `Merge of ${commit.slice(0, 7)} with changes made in Folio`, trx);
          return { result: { kind: result, revision: synchronised }, ids: { revisionId: merge ?? synchronised } };
        });
        log('git import: revision committed', { result: outcome.kind });
        if (outcome.kind !== 'standalone') {
          await refreshSearchIndex(db, t.space.id).catch((err) => services.jobs.logger?.error({ err, space: t.space.id }, 'search index refresh failed'));
        }
        log('git import: done', { result: outcome.kind, revision: outcome.revision, ...built.stats });
      } finally {
        await repo.dispose();
      }
    });
}

/** The incoming commit as a change request whose head holds both sides of each conflict. */
async function conflictChangeRequest(
  trx: Db,
  space: SpaceRow,
  opts: { base: { id: string; root: string }; incoming: { id: string; root: string }; current: { id: string; root: string }; userId: string; commit: string; message: string },
) {
  const outcome = await mergeContents(trx, { base: opts.base.root, ours: opts.incoming.root, theirs: opts.current.root }, { spaceId: space.id, keepConflicts: true, labels: { theirs: 'space', ours: 'git' } });
  const head = await newRevision(trx, space, outcome.root, [opts.incoming.id, opts.current.id], 'update', opts.userId);
  const last = await trx.selectFrom('change_requests').select(sql<number>`coalesce(max(number), 0)`.as('n')).where('space_id', '=', space.id).executeTakeFirstOrThrow();
  const now = new Date();
  const subject = `Git: ${opts.message.split('\n')[0] || opts.commit.slice(0, 7)}`.slice(0, 100);
  await trx
    .insertInto('change_requests')
    .values({
      id: newId(),
      space_id: space.id,
      organization_id: space.organization_id,
      number: Number(last.n) + 1,
      status: 'open',
      subject,
      description: null,
      created_by: opts.userId,
      created_at: now,
      updated_at: now,
      revision_initial: opts.base.id,
      revision: head,
      revision_merged_ancestor: opts.current.id,
      revision_merged: null,
      merged_by: null,
      merged_at: null,
      conflicts: json([...new Set(outcome.conflicts.map((c) => c.page).filter(Boolean))]),
    })
    .execute();
}

export function exportJob(services: Services) {
  return async (p: GitJobPayload, job: JobContext) =>
    runOperation(services, job, p, 'export', async (t, events) => {
      const log = (message: string, data: Record<string, unknown> = {}) => services.jobs.logger?.info({ space: p.spaceId, ...data }, message);
      const db = job.db;
      const repo = await FetchedRepo.open(t.remote, services.config);
      try {
        // Only the tip is needed: the new commit's parent is the remote's head, which it has.
        const head0 = await repo.fetch(t.ref, { depth: 1, allowMissing: true });
        if (head0) events.know({ commitId: head0 });
        if (head0 && t.row.synced_commit && head0 !== t.row.synced_commit && !p.force) {
          throw new GitError(`The branch has commits that were not imported into the space yet (${head0.slice(0, 7)}): import first, or export with force: true to overwrite them`);
        }
        // A new branch starts from the commit last synced, as a branch for a pull request does:
        // it keeps the rest of the repository, and the blobs of unchanged files are there.
        const manifest = t.row.synced_revision ? manifestOf(t.row) : null;
        const parent = head0 ?? (t.row.synced_commit ? await repo.fetchCommit(t.row.synced_commit) : undefined);
        const space = await db.selectFrom('spaces').selectAll().where('id', '=', t.space.id).executeTakeFirstOrThrow();
        const revision = await loadRevision(db, space.id, space.revision_id);
        // An export starts from the revision it exports and the branch head it commits on (the
        // last synced commit, or '', when the branch does not exist yet).
        await events.started(db, { revisionId: revision.id });
        const existing = parent ? await repo.files(parent, t.projectDir) : [];
        const configFile = existing.find((f) => f.path === repoPath(t.projectDir, '.gitbook.yaml'));
        const configText = configFile ? (await repo.blobs([configFile.oid])).get(configFile.oid)!.toString('utf8') : undefined;
        readGitbookConfig(configText, t.projectDir); // refuses a broken .gitbook.yaml before writing
        let plan = await exportPlan(db, revision.root, { projectDir: t.projectDir, existing, configText, manifest });
        // Blobs of the last sync the repository does not hold (another repository, or a branch
        // without that history) are written from the space's content instead.
        const missing = await repo.missing(plan.files.flatMap((f) => (f.oid ? [f.oid] : [])));
        if (missing.size) plan = await exportPlan(db, revision.root, { projectDir: t.projectDir, existing, configText, manifest, missing });
        log('git export: files prepared', { files: plan.files.length, written: plan.files.filter((f) => f.data).length, deleted: plan.deletes.length });
        const message = p.commitMessage ?? `Folio: revision ${revision.id}`;
        const made = await repo.commit({ parent, message, deletes: plan.deletes, files: plan.files, when: new Date() });
        let head = made.commit;
        if (parent && made.tree === (await repo.treeOf(parent))) {
          head = parent; // nothing changed: no commit (a new branch is made at the commit it starts from)
          if (!head0) await repo.push(head, t.ref, false);
        } else await repo.push(made.commit, t.ref, !!p.force);
        // The blob ids of what was written, for the next export to reuse.
        const listed = new Map((await repo.files(head, t.projectDir)).map((f) => [f.path, f.oid]));
        const next: Manifest = { commit: head, ...plan.manifest };
        for (const page of Object.values(next.pages)) if (page.path && listed.has(page.path)) page.oid = listed.get(page.path)!;
        for (const file of Object.values(next.files)) if (listed.has(file.path)) file.oid = listed.get(file.path)!;
        if (next.summary?.path && listed.has(next.summary.path)) next.summary.oid = listed.get(next.summary.path)!;
        for (const inc of Object.values(next.includes ?? {})) if (listed.has(inc.path)) inc.oid = listed.get(inc.path)!;
        if (next.vars && listed.has(next.vars.path)) next.vars.oid = listed.get(next.vars.path)!;
        // Completed names the exported revision and the branch head now (the new commit, or the
        // previous head when the export changed nothing).
        await events.finish(db, 'success', async (trx) => {
          const git = { oid: head, message: head === parent ? await repo.commitMessage(head) : message, createdByGitBook: true, ref: t.ref, ...(t.repoCommitURL ? { url: `${t.repoCommitURL.replace(/\/?$/, '/')}${head}` } : {}) };
          await trx.updateTable('revisions').set({ git: json(git) }).where('id', '=', revision.id).execute();
          await trx
            .updateTable('git_syncs')
            .set({ synced_commit: head, synced_revision: revision.id, manifest: json(next), last_event_at: newerEvent(t.row, p), op_state: 'success', op_ended_at: new Date(), op_error: null })
            .where('space_id', '=', space.id)
            .execute();
          return { result: undefined, ids: { revisionId: revision.id, commitId: head } };
        });
        log('git export: done', { commit: head, pushed: head !== parent, branched: !head0 });
      } finally {
        await repo.dispose();
      }
    });
}
