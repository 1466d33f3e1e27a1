import assert from 'node:assert/strict';
import { createHmac } from 'node:crypto';
import { PassThrough } from 'node:stream';
import { after, before, describe, test } from 'node:test';
import { Jobs } from '../src/platform/jobs.ts';
import { exportJob, GIT_EXPORT_JOB, GIT_IMPORT_JOB, importJob } from '../src/git/service.ts';
import { newOrg } from './support/factories.ts';
import { startGitServer, type GitServer } from './support/git-server.ts';
import { expectStatus, startTestServer, type TestServer, type TestUser } from './support/server.ts';

let t: TestServer;
let g: GitServer;
let logs = '';
const PASSWORD = 's3cret-pass';

before(async () => {
  const logStream = new PassThrough();
  logStream.on('data', (chunk: Buffer) => (logs += chunk.toString()));
  t = await startTestServer({ fetchAllowPrivate: true, logLevel: 'info' }, { logStream });
  g = await startGitServer('tester', PASSWORD);
});
after(async () => {
  await t?.close();
  await g?.close();
});

// A tiny valid PNG (1x1).
const PNG = Buffer.from('89504e470d0a1a0a0000000d49484452000000010000000108060000001f15c4890000000d49444154789c6360000002000154a24f5d0000000049454e44ae426082', 'hex');

const INSTALL = `---
description: How to install the thing
icon: rocket
---

# Install [beta]

Read the [welcome page](../README.md) and the [section](../README.md#start) first.

{% hint style="warning" %}
Back up your data.
{% endhint %}

{% tabs %}
{% tab title="npm" %}
\`\`\`bash
npm install thing
\`\`\`
{% endtab %}

{% tab title="yarn" %}
\`\`\`bash
yarn add thing
\`\`\`
{% endtab %}
{% endtabs %}

| Option | Meaning |
| ------ | ------- |
| \`-v\`   | verbose |

<details>

<summary>More</summary>

Hidden text with **bold**, *italic*, ~~strike~~ and \`code\`.

</details>

1. First
2. Second

- [x] done
- [ ] todo

> A quote

$$
E = mc^2
$$

{% embed url="https://example.com/video" %}

{% file src="../.gitbook/assets/manual.pdf" %}
The manual
{% endfile %}

{% include "../.gitbook/includes/snippet.md" %}

![The logo](../.gitbook/assets/logo.png)
`;

function fixture(): Record<string, string | Buffer> {
  return {
    'README.md': '# The monorepo\n\nNot documentation.\n',
    'app/index.js': 'console.log(1);\n',
    'site/.gitbook.yaml': 'root: ./docs/\n\nstructure:\n  readme: README.md\n  summary: SUMMARY.md\n\nredirects:\n  old/install: guides/install.md\n',
    'site/docs/README.md': '---\ndescription: Start here\n---\n\n# Welcome\n\n## Start\n\nSee [Install](guides/install.md).\n',
    'site/docs/SUMMARY.md': [
      '# Table of contents',
      '',
      '* [Welcome](README.md)',
      '',
      '## Guides',
      '',
      '* [Getting started](guides/README.md)',
      '  * [Install \\[beta\\]](guides/install.md)',
      '    * [Deep](guides/deep/page.md)',
      '* [Elsewhere](https://example.com/docs)',
      '',
      '## Reference',
      '',
      '* [API](reference/api.md)',
      '',
    ].join('\n'),
    'site/docs/guides/README.md': '# Getting started\n\nThe guides.\n',
    'site/docs/guides/install.md': INSTALL,
    'site/docs/guides/deep/page.md': '# Deep\n\nDeep down.\n',
    'site/docs/reference/api.md': '---\nhidden: true\n---\n\n# API\n\nThe API.\n',
    'site/docs/.gitbook/assets/logo.png': PNG,
    'site/docs/.gitbook/assets/manual.pdf': Buffer.from('%PDF-1.4 fake'),
    'site/docs/.gitbook/includes/snippet.md': '---\ntitle: Snippet\n---\n\nReusable text.\n',
    'site/docs/.gitbook/vars.yaml': 'product: Thing\n',
  };
}

async function gitJobsDone() {
  const db = t.server.services.db;
  for (let i = 0; i < 600; i++) {
    const pending = await db.selectFrom('jobs').select('id').where('type', 'in', [GIT_IMPORT_JOB, GIT_EXPORT_JOB]).where('status', 'in', ['queued', 'running']).execute();
    if (!pending.length) return;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error('git jobs did not finish');
}

async function info(user: TestUser, spaceId: string) {
  return (await user.api.spaces.getSpaceGitInfo(spaceId)).data;
}

async function importRepo(user: TestUser, spaceId: string, repo: string, extra: Record<string, unknown> = {}) {
  const res = await user.api.spaces.importGitRepository(spaceId, { url: g.urlOf(repo), ref: 'refs/heads/main', repoProjectDirectory: 'site', ...extra });
  assert.equal(res.status, 204);
  await gitJobsDone();
  return info(user, spaceId);
}

async function exportRepo(user: TestUser, spaceId: string, repo: string, commitMessage = 'Update from Folio', extra: Record<string, unknown> = {}) {
  const res = await user.api.spaces.exportToGitRepository(spaceId, { url: g.urlOf(repo), ref: 'refs/heads/main', commitMessage, repoProjectDirectory: 'site', ...extra });
  assert.equal(res.status, 204);
  await gitJobsDone();
  return info(user, spaceId);
}

type PageNode = { id: string; title: string; path?: string; pages?: PageNode[]; hidden?: boolean; linkTitle?: string; description?: string };
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
  return ((await user.api.spaces.getPageById(spaceId, pageId, { format: 'markdown' } as never)).data as unknown as { markdown: string }).markdown;
}

async function editAndMerge(user: TestUser, spaceId: string, changes: unknown[]) {
  const cr = (await user.api.spaces.createChangeRequest(spaceId, { subject: 'Edit' })).data;
  await user.api.spaces.updateChangeRequestContent(spaceId, cr.id, { changes } as never);
  await user.api.spaces.mergeChangeRequest(spaceId, cr.id);
}

async function newSpace(user: TestUser, orgId: string, title = 'Docs') {
  return (await user.api.orgs.createSpace(orgId, { title })).data;
}

describe('git sync', () => {
  test('imports a monorepo project (summary groups, nesting, links, assets, front matter), exports it unchanged, then exports edits file by file', async () => {
    const { admin, org } = await newOrg(t, 'Git Inc');
    const space = await newSpace(admin, org.id);
    g.createRepo('mono');
    const first = g.commit('mono', fixture(), 'Initial docs');

    const state = await importRepo(admin, space.id, 'mono', { repoCommitURL: 'https://git.example.com/mono/commit/', repoTreeURL: 'https://git.example.com/mono/tree/main' });
    assert.equal(state.operation?.state, 'success', state.operation?.error);
    assert.equal(state.operation?.direction, 'import');
    assert.ok(state.operation?.endedAt);
    assert.equal(state.repoName, 'mono');
    assert.equal(state.url, 'https://git.example.com/mono/tree/main');

    const tree = await pages(admin, space.id);
    assert.deepEqual(
      tree.map((p) => p.title),
      ['Welcome', 'Guides', 'Reference'],
    );
    const all = flatten(tree);
    const byTitle = new Map(all.map((p) => [p.title, p]));
    assert.deepEqual(tree[1]!.pages!.map((p) => p.title), ['Getting started', 'Elsewhere']);
    assert.deepEqual(byTitle.get('Getting started')!.pages!.map((p) => p.title), ['Install [beta]']);
    assert.deepEqual(byTitle.get('Install [beta]')!.pages!.map((p) => p.title), ['Deep']);
    assert.equal(byTitle.get('API')!.hidden, true);
    assert.equal(byTitle.get('Welcome')!.description, 'Start here');
    assert.equal(byTitle.get('Install [beta]')!.description, 'How to install the thing');

    // Links become page and file references; the body keeps every block.
    const install = await markdownOf(admin, space.id, byTitle.get('Install [beta]')!.id);
    assert.match(install, new RegExp(`\\]\\(/pages/${byTitle.get('Welcome')!.id}\\)`));
    assert.match(install, new RegExp(`/pages/${byTitle.get('Welcome')!.id}#start`));
    assert.match(install, /\{% hint style="warning" %\}/);
    assert.match(install, /\{% tabs %\}/);
    assert.match(install, /<details>/);
    assert.match(install, /icon: rocket/);
    const files = (await admin.api.spaces.listFiles(space.id)).data.items;
    assert.deepEqual(files.map((f) => f.name).sort(), ['logo.png', 'manual.pdf']);
    const logo = files.find((f) => f.name === 'logo.png')!;
    assert.deepEqual(logo.dimensions, { width: 1, height: 1 });
    assert.match(install, new RegExp(`\\(/files/${logo.id}\\)`));

    // Includes are reusable contents; vars.yaml holds the space variables.
    assert.match(install, /\{% include "\.gitbook\/includes\/snippet\.md" %\}/);
    const revision = (await admin.api.spaces.getCurrentRevision(space.id)).data;
    assert.deepEqual(revision.reusableContents.map((r) => [r.id, r.title]), [['snippet', 'Snippet']]);
    assert.deepEqual(revision.variables, { product: 'Thing' });

    // Revision git metadata.
    assert.equal(revision.git?.oid, first);
    assert.equal(revision.git?.message, 'Initial docs');
    assert.equal(revision.git?.createdByGitBook, false);
    assert.equal(revision.git?.url, `https://git.example.com/mono/commit/${first}`);
    assert.equal(revision.git?.ref, 'refs/heads/main');
    const spaceNow = (await admin.api.spaces.getSpaceById(space.id)).data;
    assert.equal(spaceNow.gitSync?.repoName, 'mono');
    assert.equal(spaceNow.permissions.triggerGitSync, true);

    // Import → export of an untouched repository: no commit at all.
    const before = g.files('mono');
    const exported = await exportRepo(admin, space.id, 'mono');
    assert.equal(exported.operation?.state, 'success', exported.operation?.error);
    assert.equal(g.head('mono'), first);

    // A second import of the same commit changes nothing.
    const revBefore = spaceNow.revision;
    await importRepo(admin, space.id, 'mono');
    assert.equal((await admin.api.spaces.getSpaceById(space.id)).data.revision, revBefore);

    // Edit one page, add one: export writes one commit; untouched files stay byte-identical.
    await editAndMerge(admin, space.id, [
      { operation: 'update_page', page: byTitle.get('Deep')!.id, document: { markdown: '# Deep\n\nDeeper now.\n' } },
      { operation: 'insert_page', title: 'New page', into: byTitle.get('Getting started')!.id, document: { markdown: `# New page\n\nSee [deep](/pages/${byTitle.get('Deep')!.id}).\n\n{% include ".gitbook/includes/snippet.md" %}\n` } },
      { operation: 'update_reusable_content', reusableContent: 'snippet', document: { markdown: 'Reusable text, edited.\n' } },
      { operation: 'update_variables', variables: { version: 2 } },
    ]);
    const done = await exportRepo(admin, space.id, 'mono', 'Docs edited in Folio');
    assert.equal(done.operation?.state, 'success', done.operation?.error);
    const head = g.head('mono')!;
    assert.notEqual(head, first);
    const afterFiles = g.files('mono');
    const changed = [...new Set([...before.keys(), ...afterFiles.keys()])].filter((p) => !before.get(p)?.equals(afterFiles.get(p) ?? Buffer.alloc(0)) || !afterFiles.has(p)).sort();
    assert.deepEqual(changed, ['site/docs/.gitbook/includes/snippet.md', 'site/docs/.gitbook/vars.yaml', 'site/docs/SUMMARY.md', 'site/docs/guides/deep/page.md', 'site/docs/guides/new-page.md']);
    assert.equal(afterFiles.get('site/docs/guides/deep/page.md')!.toString(), '# Deep\n\nDeeper now.\n');
    assert.equal(afterFiles.get('site/docs/guides/new-page.md')!.toString(), '# New page\n\nSee [deep](deep/page.md).\n\n{% include "../.gitbook/includes/snippet.md" %}\n');
    assert.equal(afterFiles.get('site/docs/.gitbook/includes/snippet.md')!.toString(), '---\ntitle: Snippet\n---\n\nReusable text, edited.\n');
    assert.equal(afterFiles.get('site/docs/.gitbook/vars.yaml')!.toString(), 'product: Thing\nversion: 2\n');
    assert.match(afterFiles.get('site/docs/SUMMARY.md')!.toString(), /\n  \* \[Install \\\[beta\\\]\]\(guides\/install\.md\)\n    \* \[Deep\]\(guides\/deep\/page\.md\)\n  \* \[New page\]\(guides\/new-page\.md\)\n/);
    const exportedRevision = (await admin.api.spaces.getCurrentRevision(space.id)).data;
    assert.equal(exportedRevision.git?.oid, head);
    assert.equal(exportedRevision.git?.createdByGitBook, true);
    assert.equal(exportedRevision.git?.message, 'Docs edited in Folio');

    // An export of the unchanged space makes no commit; the commit Folio pushed is not re-imported.
    await exportRepo(admin, space.id, 'mono');
    assert.equal(g.head('mono'), head);
    const rev = (await admin.api.spaces.getSpaceById(space.id)).data.revision;
    await importRepo(admin, space.id, 'mono');
    assert.equal((await admin.api.spaces.getSpaceById(space.id)).data.revision, rev);

    // A change made in git: page ids are kept where paths are unchanged.
    g.commit('mono', { 'site/docs/guides/deep/page.md': '# Deep\n\nChanged in git.\n' }, 'Edit deep in git');
    const ids = new Map(flatten(await pages(admin, space.id)).map((p) => [p.title, p.id]));
    await importRepo(admin, space.id, 'mono');
    const again = new Map(flatten(await pages(admin, space.id)).map((p) => [p.title, p.id]));
    assert.deepEqual(again, ids);
    assert.match(await markdownOf(admin, space.id, ids.get('Deep')!), /Changed in git/);

    // Credentials appear nowhere: not in the state, the jobs table, the logs or the requests.
    const jobs = await t.server.services.db.selectFrom('jobs').select('payload').execute();
    assert.ok(!JSON.stringify(jobs).includes(PASSWORD));
    const row = await t.server.services.db.selectFrom('git_syncs').selectAll().executeTakeFirstOrThrow();
    assert.ok(!JSON.stringify(row).includes(PASSWORD));
    assert.ok(!JSON.stringify(await info(admin, space.id)).includes(PASSWORD));
    assert.ok(!logs.includes(PASSWORD), 'password in logs');
    assert.ok(logs.includes('git import: pages written'), 'progress is logged');
    assert.ok(!g.seen.some((l) => l.includes(PASSWORD)));
  });

  test('a repository without SUMMARY.md follows its folders, and an untouched export adds nothing', async () => {
    const { admin, org } = await newOrg(t, 'Folders Inc');
    const space = await newSpace(admin, org.id);
    g.createRepo('folders');
    const first = g.commit('folders', { 'README.md': '# Home\n', 'setup.md': '# Setup\n', 'guides/README.md': '# Guides\n', 'guides/one.md': '# One\n', 'guides/two.md': '# Two\n' }, 'init');
    const state = await importRepo(admin, space.id, 'folders', { repoProjectDirectory: undefined });
    assert.equal(state.operation?.state, 'success', state.operation?.error);
    const tree = await pages(admin, space.id);
    assert.deepEqual(tree.map((p) => p.title), ['Home', 'Guides', 'Setup']);
    assert.deepEqual(tree[1]!.pages!.map((p) => p.title), ['One', 'Two']);
    await exportRepo(admin, space.id, 'folders', 'noop', { repoProjectDirectory: undefined });
    assert.equal(g.head('folders'), first);
  });

  test('standalone imports make a revision without touching the space', async () => {
    const { admin, org } = await newOrg(t, 'Standalone Inc');
    const space = await newSpace(admin, org.id);
    g.createRepo('alone');
    g.commit('alone', { 'README.md': '# Alone\n' }, 'init');
    const rev = space.revision;
    const state = await importRepo(admin, space.id, 'alone', { repoProjectDirectory: undefined, standalone: true });
    assert.equal(state.operation?.state, 'success', state.operation?.error);
    assert.equal((await admin.api.spaces.getSpaceById(space.id)).data.revision, rev);
    const made = await t.server.services.db.selectFrom('revisions').select(['id', 'git']).where('space_id', '=', space.id).where('id', '!=', rev).execute();
    assert.equal(made.length, 1);
    assert.equal((made[0]!.git as { createdByGitBook: boolean }).createdByGitBook, false);
  });

  test('refuses unsafe URLs, refs and directories with 400, private addresses unless allowed, and wrong credentials as a failed operation', async () => {
    const { admin, org } = await newOrg(t, 'Safe Inc');
    const space = await newSpace(admin, org.id);
    const body = (url: string, extra: Record<string, unknown> = {}) => ({ url, ref: 'refs/heads/main', ...extra });
    for (const url of ['--upload-pack=touch /tmp/x', 'ext::sh -c touch% /tmp/pwned', 'fd::17', 'file:///etc', '/etc/passwd', 'ssh://git@example.com/x.git', 'git@example.com:x.git']) {
      const res = await t.request('POST', `/v1/spaces/${space.id}/git/import`, { token: admin.token, body: body(url) });
      assert.equal(res.status, 400, url);
      assert.equal(res.body.error.code, 400);
    }
    for (const ref of ['main', 'refs/heads/../x', '-x', 'refs/heads/a b']) {
      assert.equal((await t.request('POST', `/v1/spaces/${space.id}/git/import`, { token: admin.token, body: body(g.urlOf('mono'), { ref }) })).status, 400, ref);
    }
    assert.equal((await t.request('POST', `/v1/spaces/${space.id}/git/import`, { token: admin.token, body: body(g.urlOf('mono'), { repoProjectDirectory: '../up' }) })).status, 400);
    assert.equal((await t.request('POST', `/v1/spaces/${space.id}/git/export`, { token: admin.token, body: body(g.urlOf('mono')) })).status, 400, 'commitMessage required');

    const config = t.server.services.config;
    config.fetchAllowPrivate = false;
    try {
      const res = await t.request('POST', `/v1/spaces/${space.id}/git/import`, { token: admin.token, body: body(g.urlOf('mono')) });
      assert.equal(res.status, 400);
      assert.match(res.body.error.message, /private/);
      assert.ok(!res.body.error.message.includes(PASSWORD));
    } finally {
      config.fetchAllowPrivate = true;
    }

    await expectStatus(admin.api.spaces.getSpaceGitInfo(space.id), 404);
    const wrong = g.urlOf('mono').replace(encodeURIComponent(PASSWORD), 'nope');
    assert.equal((await t.request('POST', `/v1/spaces/${space.id}/git/import`, { token: admin.token, body: body(wrong, { repoProjectDirectory: 'site' }) })).status, 204);
    await gitJobsDone();
    const state = await info(admin, space.id);
    assert.equal(state.operation?.state, 'failure');
    assert.match(state.operation!.error!, /credentials/);
    assert.ok(!state.operation!.error!.includes('nope'));

    // A missing branch is a failure a user can act on.
    await t.request('POST', `/v1/spaces/${space.id}/git/import`, { token: admin.token, body: body(g.urlOf('mono'), { ref: 'refs/heads/nope' }) });
    await gitJobsDone();
    assert.match((await info(admin, space.id)).operation!.error!, /refs\/heads\/nope/);

    // Readers cannot trigger a sync; the legacy installation is removed (204 twice).
    const reader = await t.user('Reader');
    await t.server.services.db.insertInto('members').values({ organization_id: org.id, user_id: reader.id, role: 'read', joined_at: new Date(), last_seen_at: null }).execute();
    await expectStatus(reader.api.spaces.importGitRepository(space.id, body(g.urlOf('mono'))), 403);
    assert.equal((await reader.api.spaces.getSpaceById(space.id)).data.permissions.triggerGitSync, false);
    assert.equal((await t.request('DELETE', `/v1/spaces/${space.id}/git/legacy-installation`, { token: admin.token })).status, 204);
    assert.equal((await t.request('DELETE', `/v1/spaces/${space.id}/git/legacy-installation`, { token: admin.token })).status, 204);
    await expectStatus(admin.api.spaces.getSpaceGitInfo(space.id), 404);
    assert.equal((await admin.api.spaces.getSpaceById(space.id)).data.gitSync, undefined);
  });

  test('timestamps keep operations in event order unless forced', async () => {
    const { admin, org } = await newOrg(t, 'Order Inc');
    const space = await newSpace(admin, org.id);
    g.createRepo('order');
    g.commit('order', { 'README.md': '# One\n' }, 'one');
    await importRepo(admin, space.id, 'order', { repoProjectDirectory: undefined, timestamp: '2026-01-02T00:00:00.000Z' });
    g.commit('order', { 'README.md': '# Two\n' }, 'two');
    const stale = await importRepo(admin, space.id, 'order', { repoProjectDirectory: undefined, timestamp: '2026-01-01T00:00:00.000Z' });
    assert.equal(stale.operation?.state, 'failure');
    assert.match(stale.operation!.error!, /older/);
    assert.equal((await pages(admin, space.id))[0]!.title, 'One');
    const forced = await importRepo(admin, space.id, 'order', { repoProjectDirectory: undefined, timestamp: '2026-01-01T00:00:00.000Z', force: true });
    assert.equal(forced.operation?.state, 'success', forced.operation?.error);
    assert.equal((await pages(admin, space.id))[0]!.title, 'Two');
  });

  test('two-way sync: push webhooks import, merges export, both-sides changes merge or become a change request with conflicts', async () => {
    const { admin, org } = await newOrg(t, 'Twoway Inc');
    const space = await newSpace(admin, org.id);
    g.createRepo('two');
    g.commit('two', { 'README.md': '# Home\n\nline one\n\nline two\n', 'other.md': '# Other\n\nother text\n', 'SUMMARY.md': '# Table of contents\n\n* [Home](README.md)\n* [Other](other.md)\n' }, 'init');
    const settings = await t.request('PUT', `/v1/spaces/${space.id}/git/sync`, { token: admin.token, body: { url: g.urlOf('two'), ref: 'refs/heads/main', autoExport: true } });
    assert.equal(settings.status, 200, JSON.stringify(settings.body));
    assert.ok(!JSON.stringify(settings.body).includes(PASSWORD));
    assert.equal(settings.body.hasCredentials, true);
    const secret: string = settings.body.webhookSecret;
    assert.ok(secret);
    assert.equal((await t.request('GET', `/v1/spaces/${space.id}/git/sync`, { token: admin.token })).body.webhookSecret, undefined);

    const hook = async (body: object, headers: (raw: string) => Record<string, string>) => {
      const raw = JSON.stringify(body);
      const res = await t.request('POST', `/v1/git/webhooks/${space.id}`, { raw, headers: { 'content-type': 'application/json', ...headers(raw) } });
      await gitJobsDone();
      return res;
    };
    const github = (raw: string) => ({ 'x-hub-signature-256': `sha256=${createHmac('sha256', secret).update(raw).digest('hex')}` });
    assert.equal((await hook({ ref: 'refs/heads/main' }, () => ({ 'x-hub-signature-256': 'sha256=00' }))).status, 401);
    assert.equal((await hook({ ref: 'refs/heads/main' }, () => ({}))).status, 401);
    const pushed = await hook({ ref: 'refs/heads/main', after: g.head('two') }, github);
    assert.equal(pushed.status, 200);
    assert.equal(pushed.body.result, 'queued');
    assert.deepEqual((await pages(admin, space.id)).map((p) => p.title), ['Home', 'Other']);
    assert.equal((await hook({ ref: 'refs/heads/other' }, (raw) => ({ 'x-gitea-signature': createHmac('sha256', secret).update(raw).digest('hex') }))).body.result, 'ignored');

    // A merge exports by itself.
    const ids = new Map((await pages(admin, space.id)).map((p) => [p.title, p.id]));
    await editAndMerge(admin, space.id, [{ operation: 'update_page', page: ids.get('Other')!, document: { markdown: '# Other\n\nother text, edited in Folio\n' } }]);
    await gitJobsDone();
    assert.equal(g.files('two').get('other.md')!.toString(), '# Other\n\nother text, edited in Folio\n');
    const headAfterMerge = g.head('two');

    // Both sides change different pages: the import merges them, and the merge goes back to git.
    await t.request('PUT', `/v1/spaces/${space.id}/git/sync`, { token: admin.token, body: { url: g.urlOf('two'), ref: 'refs/heads/main', autoExport: false } });
    await editAndMerge(admin, space.id, [{ operation: 'update_page', page: ids.get('Other')!, document: { markdown: '# Other\n\nFolio side\n' } }]);
    await gitJobsDone();
    assert.equal(g.head('two'), headAfterMerge, 'no export without autoExport');
    g.commit('two', { 'README.md': '# Home\n\nline one changed in git\n\nline two\n' }, 'git side');
    assert.equal((await hook({ ref: 'refs/heads/main' }, (raw) => ({ 'x-gitlab-token': secret }))).body.result, 'queued');
    assert.match(await markdownOf(admin, space.id, ids.get('Home')!), /changed in git/);
    assert.match(await markdownOf(admin, space.id, ids.get('Other')!), /Folio side/);

    // Both sides change the same lines: a change request with the conflicts, nothing overwritten.
    await t.request('POST', `/v1/spaces/${space.id}/git/export`, { token: admin.token, body: { url: g.urlOf('two'), ref: 'refs/heads/main', commitMessage: 'sync' } });
    await gitJobsDone();
    assert.equal(g.files('two').get('other.md')!.toString(), '# Other\n\nFolio side\n');
    await editAndMerge(admin, space.id, [{ operation: 'update_page', page: ids.get('Home')!, document: { markdown: '# Home\n\nline one from Folio\n\nline two\n' } }]);
    g.commit('two', { 'README.md': '# Home\n\nline one from git\n\nline two\n' }, 'conflicting edit');
    const crsBefore = (await admin.api.spaces.listChangeRequestsForSpace(space.id)).data.count;
    await hook({ ref: 'refs/heads/main' }, github);
    assert.equal((await info(admin, space.id)).operation?.state, 'success');
    assert.match(await markdownOf(admin, space.id, ids.get('Home')!), /line one from Folio/, 'the space keeps its side');
    const crs = (await admin.api.spaces.listChangeRequestsForSpace(space.id)).data;
    assert.equal(crs.count, (crsBefore ?? 0) + 1);
    const cr = crs.items.find((c: { subject: string }) => c.subject.includes('conflicting edit'))!;
    assert.ok(cr);
    const crPage = ((await admin.api.spaces.getPageInChangeRequestById(space.id, cr.id, ids.get('Home')!, { format: 'markdown' } as never)).data as unknown as { markdown: string }).markdown;
    assert.match(crPage, /<<<<<<< space/);
    assert.match(crPage, />>>>>>> git/);
    assert.match(crPage, /line one from git/);
    assert.match(crPage, /line one from Folio/);
    // An export now refuses to overwrite? No: the commit was imported (as the change request).
    const exp = await exportRepo(admin, space.id, 'two', 'after conflict', { repoProjectDirectory: undefined });
    assert.equal(exp.operation?.state, 'success', exp.operation?.error);
  });

  test('concurrent imports and exports on one space never interleave', async () => {
    const { admin, org } = await newOrg(t, 'Concurrent Inc');
    const space = await newSpace(admin, org.id);
    g.createRepo('conc');
    g.commit('conc', { 'README.md': '# Home\n', 'a.md': '# A\n' }, 'init');
    await importRepo(admin, space.id, 'conc', { repoProjectDirectory: undefined });
    const services = t.server.services;
    // A second worker beside the server's: both take jobs at once.
    const second = new Jobs(services.db, { pollMs: 50 });
    second.register(GIT_IMPORT_JOB, importJob(services));
    second.register(GIT_EXPORT_JOB, exportJob(services));
    await services.jobs.stop();
    try {
      const ids = new Map((await pages(admin, space.id)).map((p) => [p.title, p.id]));
      await editAndMerge(admin, space.id, [{ operation: 'update_page', page: ids.get('A')!, document: { markdown: '# A\n\nfrom Folio\n' } }]);
      for (let i = 0; i < 3; i++) {
        await admin.api.spaces.exportToGitRepository(space.id, { url: g.urlOf('conc'), ref: 'refs/heads/main', commitMessage: `export ${i}` });
        await admin.api.spaces.importGitRepository(space.id, { url: g.urlOf('conc'), ref: 'refs/heads/main' });
      }
      await Promise.all([services.jobs.drain(), second.drain(), second.drain()]);
      const row = await services.db.selectFrom('git_syncs').selectAll().where('space_id', '=', space.id).executeTakeFirstOrThrow();
      assert.equal(row.lock_job, null);
      assert.equal(row.op_state, 'success', row.op_error ?? '');
      assert.equal(row.synced_commit, g.head('conc'));
      assert.equal(g.files('conc').get('a.md')!.toString(), '# A\n\nfrom Folio\n');
      assert.match(await markdownOf(admin, space.id, ids.get('A')!), /from Folio/);
      const failed = await services.db.selectFrom('jobs').select('last_error').where('type', 'in', [GIT_IMPORT_JOB, GIT_EXPORT_JOB]).where('status', '=', 'failed').execute();
      assert.deepEqual(failed, []);
    } finally {
      services.jobs.start();
    }
  });
});
