import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import { loadSpace, requireSpaceRole } from '../spaces/access.ts';
import type { Ctx, Services } from '../platform/context.ts';
import type { Db } from '../platform/db/database.ts';
import type { GitSyncRow, SpaceRow } from '../platform/db/schema.ts';
import { BadRequestError, NotFoundError, UnauthorizedError } from '../platform/errors.ts';
import { projectDirectory } from './format.ts';
import { checkRef, parseRemote, vetRemoteForRequest, type Remote } from './git.ts';
import { decryptSecret, encryptSecret } from '../platform/secrets.ts';
import { GIT_EXPORT_JOB, GIT_IMPORT_JOB, type GitJobPayload } from './auto-export.ts';
import * as store from './store.ts';

/**
 * Git sync as the API asks for it: import and export requests (which queue the jobs of jobs.ts),
 * the sync's state, its two-way settings and the push webhooks that queue imports.
 */

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
    await store.saveSync(trx, space, settings);
    await setPublicGitSync(trx, space, { url: body.gitInfo?.url ?? body.repoTreeURL ?? remote.url, provider, updatedAt: now, repo: remote.url });
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

/** The space's public `git_sync`: the summary a space resource shows. */
async function setPublicGitSync(db: Db, space: Pick<SpaceRow, 'id' | 'organization_id'>, info: { url: string; provider: string; updatedAt: Date; repo: string }) {
  await store.setSpaceGitSync(db, space.organization_id, space.id, {
    installationId: space.id,
    installationProvider: info.provider,
    installationStatus: 'active',
    repoName: repoName(info.repo),
    integration: info.provider,
    url: info.url,
    updatedAt: info.updatedAt.toISOString(),
  });
}

/** The official GitSyncState of a space; 404 when no git provider was ever set up. */
export async function gitInfo(ctx: Ctx, spaceId: string) {
  const { space } = await loadSpace(ctx, spaceId);
  const row = await store.findSync(ctx.db, space.organization_id, space.id);
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
    await store.deleteSync(trx, space.organization_id, space.id);
    await store.setSpaceGitSync(trx, space.organization_id, space.id, null);
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
  const existing = await store.webhookSecretOf(ctx.db, space.organization_id, space.id);
  let secret: string | undefined;
  if (!existing || body.rotateWebhookSecret) secret = randomBytes(24).toString('base64url');
  const sealedSecret = secret ? await encryptSecret(ctx.db, ctx.config, secret) : existing!;
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
    const saved = await store.saveSync(trx, space, values);
    await setPublicGitSync(trx, space, { url: remote.url, provider, updatedAt: now, repo: remote.url });
    return saved;
  });
  return presentSettings(ctx, row, secret);
}

export async function getSyncSettings(ctx: Ctx, spaceId: string) {
  const { space } = await requireSpaceRole(ctx, spaceId, 'admin', 'read the git sync settings');
  const row = await store.findSync(ctx.db, space.organization_id, space.id);
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
  // The webhook knows only the space: its sync names the organization.
  const row = await store.syncOfSpace(services.db, spaceId);
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
