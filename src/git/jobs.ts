import { SITES_CONTENT, SITES_TOPIC } from '../platform/bus.ts';
import { loadRevision } from '../content/service.ts';
import { mergeContents } from '../content/merge.ts';
import { refreshSearchIndex } from '../search/indexer.ts';
import type { Services } from '../platform/context.ts';
import type { Db } from '../platform/db/database.ts';
import type { GitSyncRow, SpaceRow } from '../platform/db/schema.ts';
import { BadRequestError } from '../platform/errors.ts';
import type { JobContext } from '../platform/jobs.ts';
import { exportPlan, importTree, type Manifest } from './convert.ts';
import { readGitbookConfig, repoPath } from './format.ts';
import { GitError, GitTimeoutError, redactRemote, type Remote } from './git.ts';
import { FetchedRepo } from './repo.ts';
import { decryptSecret } from '../platform/secrets.ts';
import { GitSyncEvents } from './events.ts';
import { emitSpaceEvent } from '../events/outbox.ts';
import { presentUser } from '../users/presenter.ts';
import { usersById } from '../users/store.ts';
import { exportAfterMerge, type GitJobPayload } from './auto-export.ts';
import { insertNumberedChangeRequest, newRevision } from '../change-requests/service.ts';
import { lockSpace, setSpaceRevision } from '../change-requests/store.ts';
import * as store from './store.ts';

/**
 * The git import and export jobs (queued by requests.ts, by webhooks and after merges): one
 * operation per space at a time, recorded in the space's git sync and told to its integrations.
 */

async function openCredentials(db: Db, services: Pick<Services, 'config'>, sealed: string | null | undefined): Promise<Pick<Remote, 'username' | 'password'>> {
  if (!sealed) return {};
  const { u, p } = JSON.parse(await decryptSecret(db, services.config, sealed)) as { u: string; p: string };
  return { username: u, password: p };
}

const LOCK_MS = 10 * 60_000;

/** One git operation per space at a time, across workers: imports and exports never interleave. */
async function withSpaceLock<T>(db: Db, organizationId: string, spaceId: string, jobId: number, fn: () => Promise<T>): Promise<T> {
  for (let waited = 0; ; waited += 200) {
    const now = new Date();
    if (await store.takeLock(db, organizationId, spaceId, jobId, now, new Date(now.getTime() + LOCK_MS))) break;
    if (!(await store.syncExists(db, organizationId, spaceId))) throw new GitError('The git sync of this space was removed');
    if (waited > LOCK_MS) throw new Error('another git operation on this space is still running');
    await new Promise((r) => setTimeout(r, 200));
  }
  try {
    return await fn();
  } finally {
    await store.releaseLock(db, organizationId, spaceId, jobId);
  }
}

async function setOperation(db: Db, organizationId: string, spaceId: string, op: { state: string; direction?: string; started?: boolean; error?: string | null }) {
  const now = new Date();
  await store.updateSync(db, organizationId, spaceId, {
    op_state: op.state,
    ...(op.direction ? { op_direction: op.direction } : {}),
    ...(op.started ? { op_started_at: now, op_ended_at: null } : { op_ended_at: op.state === 'running' ? null : now }),
    op_error: op.error ?? null,
  });
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
  // A job knows only the space: its sync names the organization.
  const row = await store.syncOfSpace(db, p.spaceId);
  const space = row ? await store.findSpace(db, row.organization_id, p.spaceId) : undefined;
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
  const org = target.space.organization_id;
  await withSpaceLock(job.db, org, p.spaceId, job.jobId, async () => {
    const fresh = await store.readSync(job.db, org, p.spaceId);
    const space = await store.findSpace(job.db, org, p.spaceId);
    if (!space) return; // purged while the job waited for the lock
    // Until the run knows better: the space's revision now, and the last commit synced ('' before the first sync).
    const events = new GitSyncEvents(services.jobs, space, { revisionId: space.revision_id, commitId: fresh.synced_commit ?? '' });
    const skipped = outOfOrder(fresh, p);
    await setOperation(job.db, org, p.spaceId, { state: 'running', direction, started: true });
    if (skipped) {
      await events.finish(job.db, 'failure', async (trx) => {
        await setOperation(trx, org, p.spaceId, { state: 'failure', error: skipped });
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
      const record = (db: Db) => setOperation(db, org, p.spaceId, { state: err instanceof GitTimeoutError ? 'timeout' : 'failure', error: message });
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
            await store.updateSync(trx, t.space.organization_id, p.spaceId, { last_event_at: newerEvent(t.row, p), op_state: 'success', op_ended_at: new Date() });
            return { result: undefined };
          });
          return;
        }
        const message = await repo.commitMessage(commit);
        const synced = t.row.synced_revision ? await loadRevision(db, t.space.id, t.row.synced_revision).catch(() => undefined) : undefined;
        const manifest = synced ? manifestOf(t.row) : null;
        const baseRoot = synced?.root ?? (await loadRevision(db, t.space.id, t.space.revision_id)).root;
        const built = await importTree(db, repo, commit, { spaceId: t.space.id, projectDir: t.projectDir, base: { root: baseRoot, manifest }, progress: log, blobs: services.blobs });
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
          const space = await lockSpace(trx, t.space.organization_id, t.space.id);
          const current = await loadRevision(trx, space.id, space.revision_id);
          const setGit = (id: string) => store.setRevisionGit(trx, space.organization_id, id, git);
          if (p.standalone) {
            const id = await newRevision(trx, space, built.root, [current.id], 'edits', userId);
            await setGit(id);
            await setOperation(trx, space.organization_id, p.spaceId, { state: 'success' });
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
              await setSpaceRevision(trx, space.organization_id, space.id, synchronised, new Date());
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
              await setSpaceRevision(trx, space.organization_id, space.id, merge, new Date());
              result = 'merged';
            } else {
              await conflictChangeRequest(trx, space, { base: synced, incoming: { id: incoming, root: built.root }, current, userId, commit, message });
              result = 'conflicts';
            }
          }
          await store.updateSync(trx, space.organization_id, space.id, {
            synced_commit: commit,
            synced_revision: synchronised,
            manifest: built.manifest,
            last_event_at: newerEvent(t.row, p),
            op_state: 'success',
            op_ended_at: new Date(),
            op_error: result === 'conflicts' ? null : null,
          });
          if (result === 'replaced' || result === 'merged') {
            // The space's content moved, as after a merged change request: integrations hear of it.
            const author = (await usersById(trx, [userId])).get(userId);
            await emitSpaceEvent(trx, services.jobs, space, { type: 'space_content_updated', revisionId: merge ?? synchronised, updatedBy: author ? [presentUser(services.urls, author)] : [] });
          }
          // A merge of both sides is new to the repository: sent back when the space exports by
          // itself, queued with the merge (nothing after this transaction may fail the job, which
          // would run the sync, and send its events, again).
          if (result === 'merged') await exportAfterMerge(services, space, `Merge of ${commit.slice(0, 7)} with changes made in Folio`, trx);
          return { result: { kind: result, revision: synchronised }, ids: { revisionId: merge ?? synchronised } };
        });
        log('git import: revision committed', { result: outcome.kind });
        // Published sites showing the space show the new revision, in every process.
        if (outcome.kind === 'replaced' || outcome.kind === 'merged') void services.bus.publish(SITES_TOPIC, SITES_CONTENT);
        if (outcome.kind !== 'standalone') {
          await refreshSearchIndex(db, t.space.id, services.jobs).catch((err) => services.jobs.logger?.error({ err, space: t.space.id }, 'search index refresh failed'));
        }
        log('git import: done', { result: outcome.kind, revision: outcome.revision, ...built.stats });
      } finally {
        await repo.dispose();
      }
    });
}

/**
 * The incoming commit as a change request whose head holds both sides of each conflict, numbered
 * by change requests' own rule (the caller's transaction holds the space locked, as it requires).
 */
async function conflictChangeRequest(
  trx: Db,
  space: SpaceRow,
  opts: { base: { id: string; root: string }; incoming: { id: string; root: string }; current: { id: string; root: string }; userId: string; commit: string; message: string },
) {
  const outcome = await mergeContents(trx, { base: opts.base.root, ours: opts.incoming.root, theirs: opts.current.root }, { spaceId: space.id, keepConflicts: true, labels: { theirs: 'space', ours: 'git' } });
  const head = await newRevision(trx, space, outcome.root, [opts.incoming.id, opts.current.id], 'update', opts.userId);
  const subject = `Git: ${opts.message.split('\n')[0] || opts.commit.slice(0, 7)}`.slice(0, 100);
  await insertNumberedChangeRequest(trx, space, {
    subject,
    createdBy: opts.userId,
    base: opts.base.id,
    revision: head,
    mergedAncestor: opts.current.id,
    cluster: null,
    conflicts: [...new Set(outcome.conflicts.map((c) => c.page).filter(Boolean))],
  });
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
        const space = await store.readSpace(db, t.space.organization_id, t.space.id);
        const revision = await loadRevision(db, space.id, space.revision_id);
        // An export starts from the revision it exports and the branch head it commits on (the
        // last synced commit, or '', when the branch does not exist yet).
        await events.started(db, { revisionId: revision.id });
        const existing = parent ? await repo.files(parent, t.projectDir) : [];
        const configFile = existing.find((f) => f.path === repoPath(t.projectDir, '.gitbook.yaml'));
        const configText = configFile ? (await repo.blobs([configFile.oid])).get(configFile.oid)!.toString('utf8') : undefined;
        readGitbookConfig(configText, t.projectDir); // refuses a broken .gitbook.yaml before writing
        // The files of the last sync, for pages written again to keep the lines their change did
        // not touch (a file the repository no longer holds is written whole).
        const readBlobs = async (oids: string[]) => {
          const gone = await repo.missing(oids);
          return repo.blobs(oids.filter((oid) => !gone.has(oid)));
        };
        let plan = await exportPlan(db, revision.root, { blobs: services.blobs, projectDir: t.projectDir, existing, configText, manifest, readBlobs });
        // Blobs of the last sync the repository does not hold (another repository, or a branch
        // without that history) are written from the space's content instead.
        const missing = await repo.missing(plan.files.flatMap((f) => (f.oid ? [f.oid] : [])));
        if (missing.size) plan = await exportPlan(db, revision.root, { blobs: services.blobs, projectDir: t.projectDir, existing, configText, manifest, missing, readBlobs });
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
          await store.setRevisionGit(trx, space.organization_id, revision.id, git);
          await store.updateSync(trx, space.organization_id, space.id, {
            synced_commit: head,
            synced_revision: revision.id,
            manifest: next,
            last_event_at: newerEvent(t.row, p),
            op_state: 'success',
            op_ended_at: new Date(),
            op_error: null,
          });
          return { result: undefined, ids: { revisionId: revision.id, commitId: head } };
        });
        log('git export: done', { commit: head, pushed: head !== parent, branched: !head0 });
      } finally {
        await repo.dispose();
      }
    });
}
