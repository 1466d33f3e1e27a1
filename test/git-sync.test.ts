import assert from 'node:assert/strict';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { describe, test } from 'node:test';
import { newOrg } from './support/factories.ts';
import { gitSyncHarness, PASSWORD } from './support/git-sync.ts';
import { expectStatus } from './support/server.ts';

const { h, gitJobsDone, info, importRepo, exportRepo, flatten, pages, markdownOf, editAndMerge, newSpace } = gitSyncHarness();

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

\`\`\`markdown
A sample [link](../README.md) stays as written.
\`\`\`

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

function fixture(): Record<string, string | Buffer | { symlink: string }> {
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
      '* [Sneaky](guides/sneaky.md)',
      '',
      '## Reference',
      '',
      '* [API](reference/api.md)',
      '',
    ].join('\n'),
    'site/docs/guides/README.md': '# Getting started\n\nThe guides.\n',
    'site/docs/guides/install.md': INSTALL,
    'site/docs/guides/deep/page.md': '# Deep\n\nDeep down.\n',
    // A symlink out of the docs: never followed (its page is empty).
    'site/docs/guides/sneaky.md': { symlink: '../../../app/index.js' },
    'site/docs/reference/api.md': '---\nhidden: true\n---\n\n# API\n\nThe API.\n',
    'site/docs/.gitbook/assets/logo.png': PNG,
    'site/docs/.gitbook/assets/manual.pdf': Buffer.from('%PDF-1.4 fake'),
    'site/docs/.gitbook/includes/snippet.md': '---\ntitle: Snippet\n---\n\nReusable text.\n',
    'site/docs/.gitbook/vars.yaml': 'product: Thing\n',
  };
}

/** The files of the committed GitBook-format sample repository, path → bytes. */
function gitbookSample(): Record<string, Buffer> {
  const root = new URL('./fixtures/gitbook-repo/', import.meta.url).pathname;
  const out: Record<string, Buffer> = {};
  const walk = (dir: string) => {
    for (const name of readdirSync(dir)) {
      const full = join(dir, name);
      if (statSync(full).isDirectory()) walk(full);
      else out[relative(root, full)] = readFileSync(full);
    }
  };
  walk(root);
  return out;
}

describe('git sync', () => {
  test('imports a monorepo project (summary groups, nesting, links, assets, front matter), exports it unchanged, then exports edits file by file', async () => {
    const { admin, org } = await newOrg(h.t, 'Git Inc');
    const space = await newSpace(admin, org.id);
    h.g.createRepo('mono');
    const first = h.g.commit('mono', fixture(), 'Initial docs');

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
    assert.deepEqual(tree[1]!.pages!.map((p) => p.title), ['Getting started', 'Elsewhere', 'Sneaky']);
    assert.doesNotMatch(await markdownOf(admin, space.id, tree[1]!.pages![2]!.id), /console/);
    assert.deepEqual(byTitle.get('Getting started')!.pages!.map((p) => p.title), ['Install [beta]']);
    assert.deepEqual(byTitle.get('Install [beta]')!.pages!.map((p) => p.title), ['Deep']);
    assert.equal(byTitle.get('API')!.hidden, true);
    assert.equal(byTitle.get('Welcome')!.description, 'Start here');
    assert.equal(byTitle.get('Install [beta]')!.description, 'How to install the thing');

    // Links become page and file references; the body keeps every block.
    const install = await markdownOf(admin, space.id, byTitle.get('Install [beta]')!.id);
    assert.match(install, new RegExp(`\\]\\(/pages/${byTitle.get('Welcome')!.id}\\)`));
    assert.match(install, new RegExp(`/pages/${byTitle.get('Welcome')!.id}#start`));
    assert.match(install, /A sample \[link\]\(\.\.\/README\.md\) stays as written/, 'links in code blocks are text');
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
    const before = h.g.files('mono');
    const exported = await exportRepo(admin, space.id, 'mono');
    assert.equal(exported.operation?.state, 'success', exported.operation?.error);
    assert.equal(h.g.head('mono'), first);

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
    const head = h.g.head('mono')!;
    assert.notEqual(head, first);
    const afterFiles = h.g.files('mono');
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
    assert.equal(h.g.head('mono'), head);
    const rev = (await admin.api.spaces.getSpaceById(space.id)).data.revision;
    await importRepo(admin, space.id, 'mono');
    assert.equal((await admin.api.spaces.getSpaceById(space.id)).data.revision, rev);

    // A change made in git: page ids are kept where paths are unchanged.
    h.g.commit('mono', { 'site/docs/guides/deep/page.md': '# Deep\n\nChanged in git.\n' }, 'Edit deep in git');
    const ids = new Map(flatten(await pages(admin, space.id)).map((p) => [p.title, p.id]));
    await importRepo(admin, space.id, 'mono');
    const again = new Map(flatten(await pages(admin, space.id)).map((p) => [p.title, p.id]));
    assert.deepEqual(again, ids);
    assert.match(await markdownOf(admin, space.id, ids.get('Deep')!), /Changed in git/);

    // Credentials appear nowhere: not in the state, the jobs table, the logs or the requests.
    const jobs = await h.t.server.services.db.selectFrom('jobs').select('payload').execute();
    assert.ok(!JSON.stringify(jobs).includes(PASSWORD));
    const row = await h.t.server.services.db.selectFrom('git_syncs').selectAll().executeTakeFirstOrThrow();
    assert.ok(!JSON.stringify(row).includes(PASSWORD));
    assert.ok(!JSON.stringify(await info(admin, space.id)).includes(PASSWORD));
    assert.ok(!h.logs.includes(PASSWORD), 'password in logs');
    assert.ok(h.logs.includes('git import: pages written'), 'progress is logged');
    assert.ok(!h.g.seen.some((l) => l.includes(PASSWORD)));
  });

  test('a repository without SUMMARY.md follows its folders, and an untouched export adds nothing', async () => {
    const { admin, org } = await newOrg(h.t, 'Folders Inc');
    const space = await newSpace(admin, org.id);
    h.g.createRepo('folders');
    const first = h.g.commit('folders', { 'README.md': '# Home\n', 'setup.md': '# Setup\n', 'guides/README.md': '# Guides\n', 'guides/one.md': '# One\n', 'guides/two.md': '# Two\n' }, 'init');
    const state = await importRepo(admin, space.id, 'folders', { repoProjectDirectory: undefined });
    assert.equal(state.operation?.state, 'success', state.operation?.error);
    const tree = await pages(admin, space.id);
    assert.deepEqual(tree.map((p) => p.title), ['Home', 'Guides', 'Setup']);
    assert.deepEqual(tree[1]!.pages!.map((p) => p.title), ['One', 'Two']);
    await exportRepo(admin, space.id, 'folders', 'noop', { repoProjectDirectory: undefined });
    assert.equal(h.g.head('folders'), first);
  });

  test('.gitbook.yaml redirects are served by the published site and by URL resolution, and outlive an export', async () => {
    const { admin, org } = await newOrg(h.t, 'Moved Inc');
    const space = await newSpace(admin, org.id);
    h.g.createRepo('moved');
    h.g.commit('moved', { '.gitbook.yaml': 'redirects:\n  help/old-setup: ./guides/setup.md\n  /gone/: missing.md\n', 'README.md': '# Home\n', 'guides/README.md': '# Guides\n', 'guides/setup.md': '# Setup\n' }, 'init');
    const state = await importRepo(admin, space.id, 'moved', { repoProjectDirectory: undefined });
    assert.equal(state.operation?.state, 'success', state.operation?.error);
    const { data: site } = await admin.api.orgs.createSite(org.id, { title: 'Moved docs' } as never);
    await admin.api.orgs.addSpaceToSite(org.id, site.id, { spaceId: space.id });
    await admin.api.orgs.publishSite(org.id, site.id, {} as never);
    const base = `/${org.id}/${site.basename}/`;
    const moved = await fetch(`${h.t.url}${base}help/old-setup`, { redirect: 'manual' });
    assert.equal(moved.status, 301);
    assert.equal(moved.headers.get('location'), `${base}guides/setup`);
    // A redirect to a file that is no page, and a path no redirect names: not found.
    assert.equal((await fetch(`${h.t.url}${base}gone`, { redirect: 'manual' })).status, 404);
    assert.equal((await fetch(`${h.t.url}${base}help/other`, { redirect: 'manual' })).status, 404);
    const { data: resolved } = await admin.api.urls.getPublishedContentByUrl({ url: `${h.t.url}${base}help/old-setup` } as never);
    assert.match((resolved as { redirect?: string }).redirect ?? '', /\/guides\/setup$/);
    // An export keeps the repository's .gitbook.yaml, and the next import keeps serving it.
    await editAndMerge(admin, space.id, [{ operation: 'insert_page', title: 'News', document: { markdown: '# News\n' } }]);
    await exportRepo(admin, space.id, 'moved', 'news', { repoProjectDirectory: undefined });
    assert.equal((await fetch(`${h.t.url}${base}help/old-setup`, { redirect: 'manual' })).status, 301);
  });

  test('a repository over GIT_MAX_FILES or GIT_MAX_BYTES fails saying which limit and what to do, and leaves the space as it was', async () => {
    const { admin, org } = await newOrg(h.t, 'Limits Inc');
    const space = await newSpace(admin, org.id);
    h.g.createRepo('big');
    h.g.commit('big', { 'site/README.md': '# Home\n\nSmall.\n', 'site/a.md': '# A\n', 'site/b.md': '# B\n', 'other/huge.md': `# Huge\n\n${'x'.repeat(4000)}\n` }, 'init');
    const config = h.t.server.services.config;
    const limits = { files: config.gitMaxFiles, bytes: config.gitMaxBytes };
    try {
      config.gitMaxFiles = 3;
      const tooMany = await importRepo(admin, space.id, 'big', { repoProjectDirectory: undefined });
      assert.equal(tooMany.operation?.state, 'failure');
      assert.match(tooMany.operation!.error!, /more than 3 files \(GIT_MAX_FILES\): use repoProjectDirectory/);
      config.gitMaxFiles = limits.files;
      config.gitMaxBytes = 1000;
      const tooBig = await importRepo(admin, space.id, 'big', { repoProjectDirectory: undefined });
      assert.equal(tooBig.operation?.state, 'failure');
      assert.match(tooBig.operation!.error!, /more than 1000 bytes \(GIT_MAX_BYTES\)/);
      assert.equal((await admin.api.spaces.getSpaceById(space.id)).data.revision, space.revision, 'nothing imported');
      // The part of the repository under its project directory is within both limits.
      config.gitMaxFiles = 3;
      assert.equal((await importRepo(admin, space.id, 'big')).operation?.state, 'success');
      assert.deepEqual((await pages(admin, space.id)).map((p) => p.title).sort(), ['A', 'B', 'Home']);
    } finally {
      config.gitMaxFiles = limits.files;
      config.gitMaxBytes = limits.bytes;
    }
  });

  test('standalone imports make a revision without touching the space', async () => {
    const { admin, org } = await newOrg(h.t, 'Standalone Inc');
    const space = await newSpace(admin, org.id);
    h.g.createRepo('alone');
    h.g.commit('alone', { 'README.md': '# Alone\n' }, 'init');
    const rev = space.revision;
    const state = await importRepo(admin, space.id, 'alone', { repoProjectDirectory: undefined, standalone: true });
    assert.equal(state.operation?.state, 'success', state.operation?.error);
    assert.equal((await admin.api.spaces.getSpaceById(space.id)).data.revision, rev);
    const made = await h.t.server.services.db.selectFrom('revisions').select(['id', 'git']).where('space_id', '=', space.id).where('id', '!=', rev).execute();
    assert.equal(made.length, 1);
    assert.equal((made[0]!.git as { createdByGitBook: boolean }).createdByGitBook, false);
  });

  test('refuses unsafe URLs, refs and directories with 400, private addresses unless allowed, and wrong credentials as a failed operation', async () => {
    const { admin, org } = await newOrg(h.t, 'Safe Inc');
    const space = await newSpace(admin, org.id);
    const body = (url: string, extra: Record<string, unknown> = {}) => ({ url, ref: 'refs/heads/main', ...extra });
    for (const url of ['--upload-pack=touch /tmp/x', 'ext::sh -c touch% /tmp/pwned', 'fd::17', 'file:///etc', '/etc/passwd', 'ssh://git@example.com/x.git', 'git@example.com:x.git']) {
      const res = await h.t.request('POST', `/v1/spaces/${space.id}/git/import`, { token: admin.token, body: body(url) });
      assert.equal(res.status, 400, url);
      assert.equal(res.body.error.code, 400);
    }
    for (const ref of ['main', 'refs/heads/../x', '-x', 'refs/heads/a b']) {
      assert.equal((await h.t.request('POST', `/v1/spaces/${space.id}/git/import`, { token: admin.token, body: body(h.g.urlOf('mono'), { ref }) })).status, 400, ref);
    }
    assert.equal((await h.t.request('POST', `/v1/spaces/${space.id}/git/import`, { token: admin.token, body: body(h.g.urlOf('mono'), { repoProjectDirectory: '../up' }) })).status, 400);
    assert.equal((await h.t.request('POST', `/v1/spaces/${space.id}/git/export`, { token: admin.token, body: body(h.g.urlOf('mono')) })).status, 400, 'commitMessage required');

    const config = h.t.server.services.config;
    config.fetchAllowPrivate = false;
    try {
      const res = await h.t.request('POST', `/v1/spaces/${space.id}/git/import`, { token: admin.token, body: body(h.g.urlOf('mono')) });
      assert.equal(res.status, 400);
      assert.match(res.body.error.message, /private/);
      assert.ok(!res.body.error.message.includes(PASSWORD));
    } finally {
      config.fetchAllowPrivate = true;
    }

    await expectStatus(admin.api.spaces.getSpaceGitInfo(space.id), 404);
    const wrong = h.g.urlOf('mono').replace(encodeURIComponent(PASSWORD), 'nope');
    assert.equal((await h.t.request('POST', `/v1/spaces/${space.id}/git/import`, { token: admin.token, body: body(wrong, { repoProjectDirectory: 'site' }) })).status, 204);
    await gitJobsDone();
    const state = await info(admin, space.id);
    assert.equal(state.operation?.state, 'failure');
    assert.match(state.operation!.error!, /credentials/);
    assert.ok(!state.operation!.error!.includes('nope'));

    // A missing branch is a failure a user can act on.
    await h.t.request('POST', `/v1/spaces/${space.id}/git/import`, { token: admin.token, body: body(h.g.urlOf('mono'), { ref: 'refs/heads/nope' }) });
    await gitJobsDone();
    assert.match((await info(admin, space.id)).operation!.error!, /refs\/heads\/nope/);

    // Readers cannot trigger a sync; the legacy installation is removed (204 twice).
    const reader = await h.t.user('Reader');
    await h.t.server.services.db.insertInto('members').values({ organization_id: org.id, user_id: reader.id, role: 'read', joined_at: new Date(), last_seen_at: null }).execute();
    await expectStatus(reader.api.spaces.importGitRepository(space.id, body(h.g.urlOf('mono'))), 403);
    assert.equal((await reader.api.spaces.getSpaceById(space.id)).data.permissions.triggerGitSync, false);
    assert.equal((await h.t.request('DELETE', `/v1/spaces/${space.id}/git/legacy-installation`, { token: admin.token })).status, 204);
    assert.equal((await h.t.request('DELETE', `/v1/spaces/${space.id}/git/legacy-installation`, { token: admin.token })).status, 204);
    await expectStatus(admin.api.spaces.getSpaceGitInfo(space.id), 404);
    assert.equal((await admin.api.spaces.getSpaceById(space.id)).data.gitSync, undefined);
  });

  test('a GitBook repository round trip: groups and links are group and link pages, an export to a new branch builds on the synced commit, an export to an empty repository writes every file back as it was', async () => {
    const { admin, org } = await newOrg(h.t, 'Round Trip Inc');
    const space = await newSpace(admin, org.id);
    const sample = gitbookSample();
    h.g.createRepo('sample');
    const main = h.g.commit('sample', sample, 'GitBook docs');
    const noDir = { repoProjectDirectory: undefined };
    assert.equal((await importRepo(admin, space.id, 'sample', noDir)).operation?.state, 'success');

    // SUMMARY.md groups are group pages (with the slug their anchor names), links are link pages.
    const tree = (await admin.api.spaces.listPages(space.id)).data.pages;
    const shape = (pages: typeof tree): unknown[] => pages.map((p) => [p.type, p.title, ...('pages' in p && p.pages?.length ? [shape(p.pages as typeof tree)] : [])]);
    assert.deepEqual(shape(tree), [
      ['document', 'Acme Widgets'],
      ['group', 'Getting Started', [['document', 'Quickstart'], ['document', 'Installation', [['document', 'On Linux'], ['document', 'On macOS']]], ['link', 'Status page']]],
      ['group', 'Guides', [['document', 'Configure widgets'], ['document', 'Troubleshooting'], ['link', 'Linux packages (<= 2.0)'], ['link', 'API reference']]],
      ['document', 'Changelog'],
    ]);
    // A file listed a second time is a link to its page (and the anchor in it).
    const linux = tree[1]!.type === 'group' && tree[1]!.pages[1]!.type === 'document' ? tree[1]!.pages[1]!.pages[0]! : undefined;
    assert.deepEqual(tree[2]!.type === 'group' && tree[2]!.pages[2]!.type === 'link' && tree[2]!.pages[2]!.target, { kind: 'anchor', page: linux?.id, anchor: 'packages' });
    assert.equal(flatten(tree as never).find((p) => p.title === 'Configure widgets')?.linkTitle, 'Configure & tune');
    const group = tree[1]!;
    assert.ok(group.type === 'group');
    assert.equal(group.slug, 'start');
    assert.equal(group.pages[0]!.type === 'document' && group.pages[0]!.path, 'start/quickstart');
    const link = group.pages[2]!;
    assert.ok(link.type === 'link');
    assert.deepEqual(link.target, { kind: 'url', url: 'https://status.example.com' });
    assert.deepEqual(tree[2]!.type === 'group' && tree[2]!.pages[3]!.type === 'link' && tree[2]!.pages[3]!.target, { kind: 'url', url: 'https://api.example.com/api_reference' });

    // A published site shows groups as headings of its navigation and links as links; a group's
    // path shows its first page.
    const { data: site } = await admin.api.orgs.createSite(org.id, { title: 'Acme docs' } as never);
    await admin.api.orgs.addSpaceToSite(org.id, site.id, { spaceId: space.id });
    await admin.api.orgs.publishSite(org.id, site.id, {} as never);
    const siteBase = `${h.t.url}/${org.id}/${site.basename}/`;
    const home = await (await fetch(siteBase)).text();
    assert.match(home, /<span class="group-title">Getting Started<\/span>/);
    assert.match(home, /href="https:\/\/status\.example\.com"/);
    assert.match(home, /href="[^"]*start\/installation\/linux#packages"/);
    const start = await fetch(`${siteBase}start`);
    assert.equal(start.status, 200);
    assert.match(await start.text(), /<h1[^>]*>Quickstart<\/h1>/);

    // Edited in Folio, exported to a new branch (as for a pull request): one commit on top of the
    // synced one, changing only the edited page.
    const quickstart = group.pages[0]!;
    await editAndMerge(admin, space.id, [{ operation: 'update_page', page: quickstart.id, title: 'Quick start' }]);
    const branch = 'refs/heads/folio/update';
    const exported = await exportRepo(admin, space.id, 'sample', 'Rename the quick start', { ...noDir, ref: branch });
    assert.equal(exported.operation?.state, 'success', exported.operation?.error);
    const head = h.g.head('sample', 'folio/update')!;
    assert.equal(h.g.head('sample'), main, 'main is untouched');
    const onBranch = h.g.files('sample', 'folio/update');
    const changed = [...onBranch.keys()].filter((p) => !onBranch.get(p)!.equals(sample[p] ?? Buffer.alloc(0)));
    assert.deepEqual(changed.sort(), ['SUMMARY.md', 'getting-started/quickstart.md']);
    assert.equal(onBranch.size, Object.keys(sample).length);
    assert.match(onBranch.get('getting-started/quickstart.md')!.toString(), /^---\nicon: bolt\n---\n\n# Quick start\n/);
    assert.match(onBranch.get('SUMMARY.md')!.toString(), /## Getting Started <a href="#start" id="start"><\/a>\n\n\* \[Quick start\]\(getting-started\/quickstart\.md\)\n/);
    // An export of the unchanged space makes no commit.
    await exportRepo(admin, space.id, 'sample', 'Again', { ...noDir, ref: branch });
    assert.equal(h.g.head('sample', 'folio/update'), head);

    // Back to the text of main, exported to an empty repository: nothing of the last sync is
    // there, so every file is written from the space, and comes back byte for byte.
    await editAndMerge(admin, space.id, [{ operation: 'update_page', page: quickstart.id, title: 'Quickstart' }]);
    h.g.createRepo('copy');
    const copied = await exportRepo(admin, space.id, 'copy', 'Copy', noDir);
    assert.equal(copied.operation?.state, 'success', copied.operation?.error);
    const copy = h.g.files('copy');
    const differs = Object.keys(sample).filter((p) => !copy.get(p)?.equals(sample[p]!));
    assert.deepEqual(differs, []);
    assert.deepEqual([...copy.keys()].sort(), Object.keys(sample).sort());
    const copyHead = h.g.head('copy');
    await exportRepo(admin, space.id, 'copy', 'Again', noDir);
    assert.equal(h.g.head('copy'), copyHead);
  });
});
