import assert from 'node:assert/strict';
import { PassThrough } from 'node:stream';
import { after, before } from 'node:test';
import { GIT_EXPORT_JOB, GIT_IMPORT_JOB } from '../../src/git/auto-export.ts';
import { mergeChanges, newSpace as newSpaceIn, type ChangeInput } from './factories.ts';
import { startGitServer, type GitServer } from './git-server.ts';
import { startTestServer, type TestServer, type TestUser } from './server.ts';
import { eventually, settleJobs } from './wait.ts';

export const PASSWORD = 's3cret-pass';

/** A Folio server (allowed to reach 127.0.0.1, logs captured) and a git server, for one test file. */
export function gitSyncHarness() {
  const h = { t: undefined as unknown as TestServer, g: undefined as unknown as GitServer, logs: '' };
  before(async () => {
    const logStream = new PassThrough();
    logStream.on('data', (chunk: Buffer) => (h.logs += chunk.toString()));
    h.t = await startTestServer({ fetchAllowPrivate: true, logLevel: 'info' }, { logStream });
    h.g = await startGitServer('tester', PASSWORD);
  });
  after(async () => {
    await h.t?.close();
    await h.g?.close();
  });
  const t = () => h.t;
  const g = () => h.g;

  /** Runs the job queue until idle, and again until no git job is left (one retried after its backoff included). */
  async function gitJobsDone() {
    const db = t().server.services.db;
    await eventually(
      async () => {
        await settleJobs(t());
        const pending = await db.selectFrom('jobs').select(['id', 'type', 'status']).where('type', 'in', [GIT_IMPORT_JOB, GIT_EXPORT_JOB]).where('status', 'in', ['queued', 'running']).execute();
        assert.deepEqual(pending, [], 'git jobs still queued or running');
      },
      { what: 'git jobs to finish', timeoutMs: 30_000 },
    );
  }

  async function info(user: TestUser, spaceId: string) {
    return (await user.api.spaces.getSpaceGitInfo(spaceId)).data;
  }

  async function importRepo(user: TestUser, spaceId: string, repo: string, extra: Record<string, unknown> = {}) {
    const res = await user.api.spaces.importGitRepository(spaceId, { url: g().urlOf(repo), ref: 'refs/heads/main', repoProjectDirectory: 'site', ...extra });
    assert.equal(res.status, 204);
    await gitJobsDone();
    return info(user, spaceId);
  }

  async function exportRepo(user: TestUser, spaceId: string, repo: string, commitMessage = 'Update from Folio', extra: Record<string, unknown> = {}) {
    const res = await user.api.spaces.exportToGitRepository(spaceId, { url: g().urlOf(repo), ref: 'refs/heads/main', commitMessage, repoProjectDirectory: 'site', ...extra });
    assert.equal(res.status, 204);
    await gitJobsDone();
    return info(user, spaceId);
  }

  function flatten(pages: PageNode[], out: PageNode[] = []): PageNode[] {
    for (const p of pages) {
      out.push(p);
      flatten(p.pages ?? [], out);
    }
    return out;
  }

  async function pages(user: TestUser, spaceId: string) {
    return (await user.api.spaces.listPages(spaceId)).data.pages as unknown as PageNode[];
  }

  async function markdownOf(user: TestUser, spaceId: string, pageId: string) {
    return ((await user.api.spaces.getPageById(spaceId, pageId, { format: 'markdown', 'format.markdown.refs': 'stable' } as never)).data as unknown as { markdown: string }).markdown;
  }

  async function editAndMerge(user: TestUser, spaceId: string, changes: unknown[]) {
    await mergeChanges(user, spaceId, changes as ChangeInput[], { subject: 'Edit' });
  }

  async function newSpace(user: TestUser, orgId: string, title = 'Docs') {
    return newSpaceIn(user, orgId, title);
  }

  return { h, t, g, gitJobsDone, info, importRepo, exportRepo, flatten, pages, markdownOf, editAndMerge, newSpace };
}

export type PageNode = { id: string; title: string; path?: string; pages?: PageNode[]; hidden?: boolean; linkTitle?: string; description?: string };
