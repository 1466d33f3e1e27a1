import assert from 'node:assert/strict';
import { createHmac } from 'node:crypto';
import { describe, test } from 'node:test';
import { Jobs } from '../src/platform/jobs.ts';
import { GIT_EXPORT_JOB, GIT_IMPORT_JOB } from '../src/git/auto-export.ts';
import { exportJob, importJob } from '../src/git/jobs.ts';
import { newOrg } from './support/factories.ts';
import { gitSyncHarness, PASSWORD } from './support/git-sync.ts';

const { h, gitJobsDone, info, importRepo, exportRepo, pages, markdownOf, editAndMerge, newSpace } = gitSyncHarness();

describe('git sync, both ways', () => {
  test('timestamps keep operations in event order unless forced', async () => {
    const { admin, org } = await newOrg(h.t, 'Order Inc');
    const space = await newSpace(admin, org.id);
    h.g.createRepo('order');
    h.g.commit('order', { 'README.md': '# One\n' }, 'one');
    await importRepo(admin, space.id, 'order', { repoProjectDirectory: undefined, timestamp: '2026-01-02T00:00:00.000Z' });
    h.g.commit('order', { 'README.md': '# Two\n' }, 'two');
    const stale = await importRepo(admin, space.id, 'order', { repoProjectDirectory: undefined, timestamp: '2026-01-01T00:00:00.000Z' });
    assert.equal(stale.operation?.state, 'failure');
    assert.match(stale.operation!.error!, /older/);
    assert.equal((await pages(admin, space.id))[0]!.title, 'One');
    const forced = await importRepo(admin, space.id, 'order', { repoProjectDirectory: undefined, timestamp: '2026-01-01T00:00:00.000Z', force: true });
    assert.equal(forced.operation?.state, 'success', forced.operation?.error);
    assert.equal((await pages(admin, space.id))[0]!.title, 'Two');
  });

  test('two-way sync: push webhooks import, merges export, both-sides changes merge or become a change request with conflicts', async () => {
    const { admin, org } = await newOrg(h.t, 'Twoway Inc');
    const space = await newSpace(admin, org.id);
    h.g.createRepo('two');
    h.g.commit('two', { 'README.md': '# Home\n\nline one\n\nline two\n', 'other.md': '# Other\n\nother text\n', 'SUMMARY.md': '# Table of contents\n\n* [Home](README.md)\n* [Other](other.md)\n' }, 'init');
    const settings = await h.t.request('PUT', `/v1/spaces/${space.id}/git/sync`, { token: admin.token, body: { url: h.g.urlOf('two'), ref: 'refs/heads/main', autoExport: true } });
    assert.equal(settings.status, 200, JSON.stringify(settings.body));
    assert.ok(!JSON.stringify(settings.body).includes(PASSWORD));
    assert.equal(settings.body.hasCredentials, true);
    const secret: string = settings.body.webhookSecret;
    assert.ok(secret);
    assert.equal((await h.t.request('GET', `/v1/spaces/${space.id}/git/sync`, { token: admin.token })).body.webhookSecret, undefined);

    const hook = async (body: object, headers: (raw: string) => Record<string, string>) => {
      const raw = JSON.stringify(body);
      const res = await h.t.request('POST', `/v1/git/webhooks/${space.id}`, { raw, headers: { 'content-type': 'application/json', ...headers(raw) } });
      await gitJobsDone();
      return res;
    };
    const github = (raw: string) => ({ 'x-hub-signature-256': `sha256=${createHmac('sha256', secret).update(raw).digest('hex')}` });
    assert.equal((await hook({ ref: 'refs/heads/main' }, () => ({ 'x-hub-signature-256': 'sha256=00' }))).status, 401);
    assert.equal((await hook({ ref: 'refs/heads/main' }, () => ({}))).status, 401);
    const pushed = await hook({ ref: 'refs/heads/main', after: h.g.head('two') }, github);
    assert.equal(pushed.status, 200);
    assert.equal(pushed.body.result, 'queued');
    assert.deepEqual((await pages(admin, space.id)).map((p) => p.title), ['Home', 'Other']);
    assert.equal((await hook({ ref: 'refs/heads/other' }, (raw) => ({ 'x-gitea-signature': createHmac('sha256', secret).update(raw).digest('hex') }))).body.result, 'ignored');

    // A merge exports by itself.
    const ids = new Map((await pages(admin, space.id)).map((p) => [p.title, p.id]));
    await editAndMerge(admin, space.id, [{ operation: 'update_page', page: ids.get('Other')!, document: { markdown: '# Other\n\nother text, edited in Folio\n' } }]);
    await gitJobsDone();
    assert.equal(h.g.files('two').get('other.md')!.toString(), '# Other\n\nother text, edited in Folio\n');
    const headAfterMerge = h.g.head('two');

    // Both sides change different pages: the import merges them, and the merge goes back to git.
    await h.t.request('PUT', `/v1/spaces/${space.id}/git/sync`, { token: admin.token, body: { url: h.g.urlOf('two'), ref: 'refs/heads/main', autoExport: false } });
    await editAndMerge(admin, space.id, [{ operation: 'update_page', page: ids.get('Other')!, document: { markdown: '# Other\n\nFolio side\n' } }]);
    await gitJobsDone();
    assert.equal(h.g.head('two'), headAfterMerge, 'no export without autoExport');
    h.g.commit('two', { 'README.md': '# Home\n\nline one changed in git\n\nline two\n' }, 'git side');
    assert.equal((await hook({ ref: 'refs/heads/main' }, (raw) => ({ 'x-gitlab-token': secret }))).body.result, 'queued');
    assert.match(await markdownOf(admin, space.id, ids.get('Home')!), /changed in git/);
    assert.match(await markdownOf(admin, space.id, ids.get('Other')!), /Folio side/);

    // Both sides change the same lines: a change request with the conflicts, nothing overwritten.
    await h.t.request('POST', `/v1/spaces/${space.id}/git/export`, { token: admin.token, body: { url: h.g.urlOf('two'), ref: 'refs/heads/main', commitMessage: 'sync' } });
    await gitJobsDone();
    assert.equal(h.g.files('two').get('other.md')!.toString(), '# Other\n\nFolio side\n');
    await editAndMerge(admin, space.id, [{ operation: 'update_page', page: ids.get('Home')!, document: { markdown: '# Home\n\nline one from Folio\n\nline two\n' } }]);
    h.g.commit('two', { 'README.md': '# Home\n\nline one from git\n\nline two\n' }, 'conflicting edit');
    const crsBefore = (await admin.api.spaces.listChangeRequestsForSpace(space.id)).data.count;
    await hook({ ref: 'refs/heads/main' }, github);
    assert.equal((await info(admin, space.id)).operation?.state, 'success');
    assert.match(await markdownOf(admin, space.id, ids.get('Home')!), /line one from Folio/, 'the space keeps its side');
    const crs = (await admin.api.spaces.listChangeRequestsForSpace(space.id)).data;
    assert.equal(crs.count, (crsBefore ?? 0) + 1);
    const cr = crs.items.find((c: { subject: string }) => c.subject.includes('conflicting edit'))!;
    assert.ok(cr);
    const crPage = ((await admin.api.spaces.getPageInChangeRequestById(space.id, cr.id, ids.get('Home')!, { format: 'markdown', 'format.markdown.refs': 'stable' } as never)).data as unknown as { markdown: string }).markdown;
    assert.match(crPage, /<<<<<<< space/);
    assert.match(crPage, />>>>>>> git/);
    assert.match(crPage, /line one from git/);
    assert.match(crPage, /line one from Folio/);
    // An export now refuses to overwrite? No: the commit was imported (as the change request).
    const exp = await exportRepo(admin, space.id, 'two', 'after conflict', { repoProjectDirectory: undefined });
    assert.equal(exp.operation?.state, 'success', exp.operation?.error);
  });

  test('an export of a page edited as a document rewrites only the edited lines of a page written by hand', async () => {
    const { admin, org } = await newOrg(h.t, 'Handwritten Inc');
    const space = await newSpace(admin, org.id);
    h.g.createRepo('hand');
    // Written otherwise than GitBook writes (- and + bullets, __bold__, a * * * rule, unescaped
    // underscores): Folio's writer alone writes most of these lines differently.
    const original = ['# Home', '', '- first item', '- second item with __bold__ words', '', 'A paragraph about snake_case names.', '', '* * *', '', 'The middle paragraph.', '', '3. third', '4. fourth', '', '+ plus item', '', 'The last paragraph.', ''].join('\n');
    h.g.commit('hand', { 'README.md': original, 'SUMMARY.md': '# Table of contents\n\n* [Home](README.md)\n' }, 'init');
    await importRepo(admin, space.id, 'hand', { repoProjectDirectory: undefined });
    const home = (await pages(admin, space.id))[0]!;
    // An edit of the JSON document (what the editor and the document API send): the page's
    // markdown is written again whole by Folio's writer.
    const editDocument = async (from: string, to: string) => {
      const page = (await admin.api.spaces.getPageById(space.id, home.id)).data as { document?: unknown };
      const text = JSON.stringify(page.document);
      assert.ok(text.includes(from), `the document holds ${from}`);
      await editAndMerge(admin, space.id, [{ operation: 'update_page', page: home.id, document: { document: JSON.parse(text.replace(from, to)) } }]);
    };
    await editDocument('The middle paragraph.', 'The middle paragraph, edited in Folio.');
    assert.match(await markdownOf(admin, space.id, home.id), /^\* first item$/m, "the stored page is Folio's writing");
    await exportRepo(admin, space.id, 'hand', 'Edit in Folio', { repoProjectDirectory: undefined });
    const exported = h.g.files('hand').get('README.md')!.toString('utf8');
    assert.equal(exported, original.replace('The middle paragraph.', 'The middle paragraph, edited in Folio.'));

    // Where a kept line would read otherwise beside a rewritten one, the page is written as Folio
    // writes it: it reads as edited.
    await editDocument('fourth', 'fourth, edited');
    await exportRepo(admin, space.id, 'hand', 'Edit a list', { repoProjectDirectory: undefined });
    const again = h.g.files('hand').get('README.md')!.toString('utf8');
    assert.match(again, /fourth, edited/);
    assert.match(again, /^- first item$/m, 'lines the edit did not touch stay as written');
    assert.match(again, /__bold__/);
  });

  test('an import that merges both sides sends the merge back when the space exports by itself', async () => {
    const { admin, org } = await newOrg(h.t, 'Roundtrip Inc');
    const space = await newSpace(admin, org.id);
    h.g.createRepo('round');
    h.g.commit('round', { 'README.md': '# Home\n\nfrom git\n', 'other.md': '# Other\n\nother text\n', 'SUMMARY.md': '# Table of contents\n\n* [Home](README.md)\n* [Other](other.md)\n' }, 'init');
    const settings = await h.t.request('PUT', `/v1/spaces/${space.id}/git/sync`, { token: admin.token, body: { url: h.g.urlOf('round'), ref: 'refs/heads/main', autoExport: true } });
    assert.equal(settings.status, 200, JSON.stringify(settings.body));
    assert.equal((await importRepo(admin, space.id, 'round', { repoProjectDirectory: undefined })).operation?.state, 'success');
    const ids = new Map((await pages(admin, space.id)).map((p) => [p.title, p.id]));
    // Git moves on; a merge in Folio then cannot export (the branch has a commit not imported yet).
    h.g.commit('round', { 'README.md': '# Home\n\nchanged in git\n' }, 'git side');
    await editAndMerge(admin, space.id, [{ operation: 'update_page', page: ids.get('Other')!, document: { markdown: '# Other\n\nchanged in Folio\n' } }]);
    await gitJobsDone();
    assert.match((await info(admin, space.id)).operation?.error ?? '', /not imported into the space yet/);
    assert.equal(h.g.files('round').get('other.md')!.toString(), '# Other\n\nother text\n');
    // The import merges both sides and queues the export of the merge with it: git gets both.
    assert.equal((await importRepo(admin, space.id, 'round', { repoProjectDirectory: undefined })).operation?.state, 'success');
    await gitJobsDone();
    assert.equal((await info(admin, space.id)).operation?.state, 'success');
    assert.equal(h.g.files('round').get('other.md')!.toString(), '# Other\n\nchanged in Folio\n');
    assert.match(h.g.files('round').get('README.md')!.toString(), /changed in git/);
  });

  test('concurrent imports and exports on one space never interleave', async () => {
    const { admin, org } = await newOrg(h.t, 'Concurrent Inc');
    const space = await newSpace(admin, org.id);
    h.g.createRepo('conc');
    h.g.commit('conc', { 'README.md': '# Home\n', 'a.md': '# A\n' }, 'init');
    await importRepo(admin, space.id, 'conc', { repoProjectDirectory: undefined });
    const services = h.t.server.services;
    // A second worker beside the server's: both take jobs at once.
    const second = new Jobs(services.db, { pollMs: 50 });
    second.register(GIT_IMPORT_JOB, importJob(services));
    second.register(GIT_EXPORT_JOB, exportJob(services));
    await services.jobs.stop();
    try {
      const ids = new Map((await pages(admin, space.id)).map((p) => [p.title, p.id]));
      await editAndMerge(admin, space.id, [{ operation: 'update_page', page: ids.get('A')!, document: { markdown: '# A\n\nfrom Folio\n' } }]);
      for (let i = 0; i < 3; i++) {
        await admin.api.spaces.exportToGitRepository(space.id, { url: h.g.urlOf('conc'), ref: 'refs/heads/main', commitMessage: `export ${i}` });
        await admin.api.spaces.importGitRepository(space.id, { url: h.g.urlOf('conc'), ref: 'refs/heads/main' });
      }
      await Promise.all([services.jobs.drain(), second.drain(), second.drain()]);
      const row = await services.db.selectFrom('git_syncs').selectAll().where('space_id', '=', space.id).executeTakeFirstOrThrow();
      assert.equal(row.lock_job, null);
      assert.equal(row.op_state, 'success', row.op_error ?? '');
      assert.equal(row.synced_commit, h.g.head('conc'));
      assert.equal(h.g.files('conc').get('a.md')!.toString(), '# A\n\nfrom Folio\n');
      assert.match(await markdownOf(admin, space.id, ids.get('A')!), /from Folio/);
      const failed = await services.db.selectFrom('jobs').select('last_error').where('type', 'in', [GIT_IMPORT_JOB, GIT_EXPORT_JOB]).where('status', '=', 'failed').execute();
      assert.deepEqual(failed, []);
    } finally {
      services.jobs.start();
    }
  });

  test('an import whose worker died mid-way leaves the space on its previous revision, and is taken again', async () => {
    const { admin, org } = await newOrg(h.t, 'Crash Inc');
    const space = await newSpace(admin, org.id);
    h.g.createRepo('crash');
    h.g.commit('crash', { 'README.md': '# Before\n' }, 'one');
    await importRepo(admin, space.id, 'crash', { repoProjectDirectory: undefined });
    const revision = (await admin.api.spaces.getSpaceById(space.id)).data.revision;
    h.g.commit('crash', { 'README.md': '# After\n' }, 'two');
    const services = h.t.server.services;
    const db = services.db;
    await services.jobs.stop();
    try {
      await admin.api.spaces.importGitRepository(space.id, { url: h.g.urlOf('crash'), ref: 'refs/heads/main' });
      // As a worker that claimed the job, took the space's lock and died: lease expired, lock left behind.
      const job = await db.selectFrom('jobs').select('id').where('type', '=', GIT_IMPORT_JOB).where('status', '=', 'queued').executeTakeFirstOrThrow();
      await db.updateTable('jobs').set({ status: 'running', attempts: 1, locked_until: new Date(Date.now() - 1000) }).where('id', '=', job.id).execute();
      await db.updateTable('git_syncs').set({ lock_job: job.id, lock_until: new Date(Date.now() + 600_000) }).where('space_id', '=', space.id).execute();
      assert.equal((await admin.api.spaces.getSpaceById(space.id)).data.revision, revision);
      assert.equal((await pages(admin, space.id))[0]!.title, 'Before');
      // A later export waits for the space's lock, which the dead job no longer holds once retried.
      await admin.api.spaces.exportToGitRepository(space.id, { url: h.g.urlOf('crash'), ref: 'refs/heads/main', commitMessage: 'after crash' });
    } finally {
      services.jobs.start();
    }
    await gitJobsDone();
    const retried = await db.selectFrom('jobs').select(['status', 'attempts']).where('type', '=', GIT_IMPORT_JOB).orderBy('id', 'desc').executeTakeFirstOrThrow();
    assert.deepEqual(retried, { status: 'done', attempts: 2 });
    assert.equal((await pages(admin, space.id))[0]!.title, 'After');
    const state = await info(admin, space.id);
    assert.equal(state.operation?.state, 'success', state.operation?.error);
    assert.equal(state.operation?.direction, 'export');
  });
});
