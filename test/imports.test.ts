import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { zipSync, type Zippable } from 'fflate';
import { importRunJob, IMPORT_RUN_JOB } from '../src/imports/jobs.ts';
import { docusaurusProject, readSidebars } from '../src/imports/projects/docusaurus.ts';
import type { NavItem } from '../src/imports/projects/nav.ts';
import { CONVERTERS, websiteImports } from '../src/imports/sources.ts';
import { websiteProject } from '../src/imports/projects/website.ts';
import { buildVirtualRepo } from '../src/imports/virtual-build.ts';
import { newMember, openChangeRequest, orgWithSpace } from './support/factories.ts';
import { findPage, importFiles, markdownOf, pageTitled, pagesOf, shape, upload, zipFixture, type PageNode, type Run } from './support/imports.ts';
import { expectStatus, startTestServer, type TestServer } from './support/server.ts';
import { settleJobs } from './support/wait.ts';

// Import runs through the official client: files uploaded with generateStorageUploadURL, a
// Docusaurus, an MkDocs and a plain Markdown folder recognised from small samples
// (test/fixtures/imports/), cancelled mid-run, and malicious archives refused with nothing written.

let t: TestServer;
before(async () => {
  t = await startTestServer();
});
after(async () => {
  await t?.close();
});

test('a Docusaurus archive: the sidebar becomes the page tree, admonitions, tabs and code titles become blocks, images space files', async () => {
  const { admin, org, space } = await orgWithSpace(t);
  const before = await pagesOf(admin, space.id);
  const key = await upload(admin, org.id, 'site.zip', zipFixture('docusaurus'));
  const run = await importFiles(t, admin, org.id, { space: space.id }, [key]);
  assert.equal(run.status, 'completed', run.reason);
  assert.equal(run.project, 'docusaurus');
  assert.deepEqual(run.progress, { pagesFound: 6, pagesConverted: 6, pagesFailed: 0 });
  assert.ok(run.warnings.some((w) => w.page === 'docs/guides/install.mdx' && /MDX import removed/.test(w.message)), JSON.stringify(run.warnings));
  assert.ok(run.result?.revision);
  assert.equal(run.pages?.length, 8 /* 6 pages, a group and a link */);

  const pages = (await pagesOf(admin, space.id)).slice(before.length);
  assert.deepEqual(shape(pages), ['Introduction', ['Guides', ['Install', 'Code blocks']], ['Reference overview', ['CLI', 'API']], 'Website']);
  assert.equal(pages[1]!.type, 'group');
  assert.equal(pages[3]!.type, 'link');
  assert.equal(pages[0]!.linkTitle, 'Welcome', 'sidebar_label is the link title');
  const intro = await markdownOf(admin, space.id, pages[0]!.id);
  assert.match(intro, /\{% hint style="info" %\}\s*Docusaurus notes become hints\.\s*\{% endhint %\}/);
  assert.match(intro, /\{% hint style="danger" %\}\s*\*\*Careful\*\*/);
  const install = findPage(pages, 'Install');
  assert.match(intro, new RegExp(`\\[installation\\]\\([^)]*${install.slug}[^)]*\\)|pages/${install.id}`), intro);
  const installMd = await markdownOf(admin, space.id, install.id);
  assert.match(installMd, /\{% tabs %\}\s*\{% tab title="npm" %\}\s*```bash\s*npm install sample\s*```\s*\{% endtab %\}\s*\{% tab title="Yarn" %\}/);
  assert.doesNotMatch(installMd, /import Tabs/);
  assert.match(await markdownOf(admin, space.id, findPage(pages, 'Code blocks').id), /\{% code title="app\.js" %\}\s*```js\s*console\.log/);
  const files = (await admin.api.spaces.listFiles(space.id)).data.items;
  assert.deepEqual(files.map((f) => f.name), ['logo.png']);
  // The image is a reference to the space file (the document model says so; Markdown writes it as its asset path).
  const document = JSON.stringify((await admin.api.spaces.getPageById(space.id, pages[0]!.id)).data);
  assert.match(document, new RegExp(`"kind":"file","file":"${files[0]!.id}"`), document);

  const listed = (await admin.api.org.listImportRuns(org.id, { space: space.id })).data;
  assert.deepEqual(listed.items.map((r) => r.id), [run.id]);
  assert.equal((await admin.api.org.listImportRuns(org.id, { status: 'active' })).data.items.length, 0);
});

test('an MkDocs archive into a change request: nav order and sections, !!! hints, ??? expandables, === tabs; the space is untouched until merged', async () => {
  const { admin, org, space } = await orgWithSpace(t);
  const revisionBefore = (await admin.api.spaces.getSpaceById(space.id)).data.revision;
  const cr = await openChangeRequest(admin, space.id);
  const key = await upload(admin, org.id, 'mkdocs.zip', zipFixture('mkdocs'));
  const run = await importFiles(t, admin, org.id, { space: space.id, changeRequest: cr.id }, [key]);
  assert.equal(run.status, 'completed', run.reason);
  assert.equal(run.project, 'mkdocs');
  assert.equal(run.result?.changeRequest, cr.id);
  assert.equal((await admin.api.spaces.getSpaceById(space.id)).data.revision, revisionBefore, 'the space itself is unchanged');

  const { data: head } = await admin.api.spaces.getChangeRequestById(space.id, cr.id);
  assert.equal(head.revision, run.result?.revision);
  const pages = (await admin.api.spaces.listPagesInChangeRequest(space.id, cr.id)).data.pages as unknown as PageNode[];
  assert.deepEqual(shape(pages.filter((p) => ['Sample home', 'User Guide', 'About'].includes(p.title))), ['Sample home', ['User Guide', ['Writing your docs', 'Styling']], ['About', ['License']]]);
  assert.equal(findPage(pages, 'Writing your docs').linkTitle, 'Writing docs');
  const md = async (title: string) =>
    ((await admin.api.spaces.getPageInChangeRequestById(space.id, cr.id, findPage(pages, title).id, { format: 'markdown' } as never)).data as unknown as { markdown: string }).markdown;
  assert.match(await md('Sample home'), /\{% hint style="info" %\}\s*\*\*Read me\*\*\s*MkDocs admonitions become hints\./);
  const writing = await md('Writing your docs');
  assert.match(writing, /<details>\s*<summary>More details<\/summary>\s*A collapsible block\.\s*<\/details>/);
  assert.match(writing, /\{% tabs %\}\s*\{% tab title="Python" %\}\s*```python\s*print\("hi"\)\s*```\s*\{% endtab %\}\s*\{% tab title="Shell" %\}/);
  const styling = await md('Styling');
  assert.match(styling, /\{% hint style="warning" %\}\s*Careful with colours\./);
  assert.match(styling, /\{% code title="theme\.py" %\}\s*```py/);
  assert.match(styling, /\{% code title="plain\.txt" %\}\s*```\s*no language/, 'a titled fence without a language');
});

test('a plain folder under a page, with a Markdown file beside it: folders become groups and pages, README/index the folder page', async () => {
  const { admin, org, space } = await orgWithSpace(t);
  const { data: cr } = await admin.api.spaces.createChangeRequest(space.id, { subject: 'Parent' });
  await admin.api.spaces.updateChangeRequestContent(space.id, cr.id, { changes: [{ operation: 'insert_page', title: 'Imported', document: { markdown: 'Below.' } }] } as never);
  await admin.api.spaces.mergeChangeRequest(space.id, cr.id);
  const parent = findPage(await pagesOf(admin, space.id), 'Imported');

  const top = await upload(admin, org.id, 'handbook.zip', zipFixture('folder'));
  const loose = await upload(admin, org.id, 'notes.md', Buffer.from('# Loose notes\n\n!!! tip\n    A tip.\n'), 'text/markdown');
  const run = await importFiles(t, admin, org.id, { space: space.id, page: parent.id }, [top, loose]);
  assert.equal(run.status, 'completed', run.reason);
  const pages = await pagesOf(admin, space.id);
  const imported = findPage(pages, 'Imported');
  // The archive sits in a folder named after it; a group below a page becomes a page.
  assert.deepEqual(shape(imported.pages ?? []), [['Handbook', [['Advanced', [['Deep dive', ['More depth']], 'Tuning']], ['Basics', ['First steps', 'Second steps']]]], 'Loose notes']);
  assert.equal(findPage(imported.pages ?? [], 'Advanced').type, 'document', 'a folder without a page below the top level is a page');
  assert.ok(pageTitled(imported.pages ?? [], 'Deep dive'), JSON.stringify(shape(imported.pages ?? [])));
  assert.deepEqual(shape(findPage(imported.pages ?? [], 'Basics').pages ?? []), ['First steps', 'Second steps']);
  assert.deepEqual(shape(findPage(imported.pages ?? [], 'Deep dive').pages ?? []), ['More depth']);
  assert.match(await markdownOf(admin, space.id, findPage(pages, 'Loose notes').id), /\{% hint style="success" %\}\s*A tip\./);
  assert.deepEqual((await admin.api.spaces.listFiles(space.id)).data.items.map((f) => f.name), ['diagram.png']);
});

test('a plain folder at the top level: top-level folders without a page are groups, in name order', async () => {
  const { admin, org, space } = await orgWithSpace(t);
  const before = (await pagesOf(admin, space.id)).length;
  const key = await upload(admin, org.id, 'handbook.zip', zipFixture('folder'));
  const run = await importFiles(t, admin, org.id, { space: space.id }, [key]);
  assert.equal(run.status, 'completed', run.reason);
  assert.equal(run.project, 'folder');
  const pages = (await pagesOf(admin, space.id)).slice(before);
  assert.deepEqual(shape(pages), ['Handbook', ['Advanced', [['Deep dive', ['More depth']], 'Tuning']], ['Basics', ['First steps', 'Second steps']]]);
  assert.equal(pages[1]!.type, 'group');
  const first = await markdownOf(admin, space.id, findPage(pages, 'First steps').id);
  const deep = findPage(pages, 'Deep dive');
  assert.ok(first.includes(deep.id) || first.includes(deep.slug!), `the link to the deep page is a page reference: ${first}`);
});

test('a run cancelled mid-run writes nothing; a finished run cannot be cancelled', async () => {
  const { admin, org, space } = await orgWithSpace(t);
  const revisionBefore = (await admin.api.spaces.getSpaceById(space.id)).data.revision;
  const key = await upload(admin, org.id, 'site.zip', zipFixture('docusaurus'));
  let seen: Run | undefined;
  t.server.services.jobs.register(
    IMPORT_RUN_JOB,
    importRunJob(t.server.services, {
      afterConvert: async (id) => {
        seen = (await admin.api.org.getImportRun(org.id, id)).data as Run;
        const { data: cancelled } = await admin.api.org.cancelImportRun(org.id, id);
        assert.equal(cancelled.status, 'cancelled');
      },
    }),
    { maxAttempts: 3 },
  );
  try {
    const run = await importFiles(t, admin, org.id, { space: space.id }, [key]);
    assert.equal(seen?.status, 'in-progress');
    assert.equal(seen?.progress.pagesFound, 6, 'progress is visible while the run is in progress');
    assert.equal(run.status, 'cancelled');
    assert.equal(run.result, undefined);
    assert.equal((await admin.api.spaces.getSpaceById(space.id)).data.revision, revisionBefore);
    assert.deepEqual((await admin.api.spaces.listFiles(space.id)).data.items, []);
    await expectStatus(admin.api.org.cancelImportRun(org.id, run.id), 400, /already cancelled/);
  } finally {
    t.server.services.jobs.register(IMPORT_RUN_JOB, importRunJob(t.server.services), { maxAttempts: 3 });
  }
  // Cancelled while still pending (the worker stopped meanwhile, so the job waits): the job does nothing.
  await t.server.services.jobs.stop();
  const { data: pending } = await admin.api.org.startImportRun(org.id, { source: { type: 'file', files: [key] }, target: { space: space.id } });
  try {
    await admin.api.org.cancelImportRun(org.id, pending.id);
  } finally {
    t.server.services.jobs.start();
  }
  await settleJobs(t);
  assert.equal((await admin.api.org.getImportRun(org.id, pending.id)).data.status, 'cancelled');
  assert.equal((await admin.api.spaces.getSpaceById(space.id)).data.revision, revisionBefore);
  const done = await importFiles(t, admin, org.id, { space: space.id }, [key]);
  assert.equal(done.status, 'completed');
  await expectStatus(admin.api.org.cancelImportRun(org.id, done.id), 400, /already completed/);
});

test('malicious archives are refused with a clear reason and nothing written', async () => {
  const { admin, org, space } = await orgWithSpace(t);
  const revisionBefore = (await admin.api.spaces.getSpaceById(space.id)).data.revision;
  const page = Buffer.from('# Page\n');
  const symlink: Zippable = { 'docs/README.md': page, 'docs/passwd.md': [Buffer.from('/etc/passwd'), { os: 3, attrs: (0o120777 << 16) >>> 0 }] };
  const many: Zippable = {};
  for (let i = 0; i <= 10_000; i++) many[`p${i}.md`] = [Buffer.from('x'), { level: 0 }];
  // A header that lies: the entry says 100 bytes, its data inflates to 2 MiB.
  const liar = Buffer.from(zipSync({ 'README.md': page, 'lie.md': new Uint8Array(2 * 1024 * 1024) }));
  for (let i = liar.indexOf('lie.md'); i >= 0; i = liar.indexOf('lie.md', i + 1)) {
    if (liar.readUInt32LE(i - 30) === 0x04034b50) liar.writeUInt32LE(100, i - 30 + 22); // local header
    if (liar.readUInt32LE(i - 46) === 0x02014b50) liar.writeUInt32LE(100, i - 46 + 24); // central directory
  }
  const cases: [string, Buffer, RegExp][] = [
    ['liar.zip', liar, /lie\.md" cannot be read: too many bytes/],
    ['slip.zip', Buffer.from(zipSync({ 'README.md': page, '../../escape.md': page })), /leading out of it/],
    ['absolute.zip', Buffer.from(zipSync({ 'README.md': page, '/etc/cron.d/x.md': page })), /absolute path/],
    ['symlink.zip', Buffer.from(zipSync(symlink)), /symbolic link/],
    ['bomb.zip', Buffer.from(zipSync({ 'README.md': page, 'zeros.md': new Uint8Array(20 * 1024 * 1024) })), /zip bomb/],
    ['many.zip', Buffer.from(zipSync(many)), /10001 entries, more than the 10000/],
    ['broken.zip', Buffer.concat([Buffer.from('PK\x03\x04'), Buffer.alloc(100)]), /not a zip archive|malformed/],
  ];
  for (const [name, bytes, reason] of cases) {
    const key = await upload(admin, org.id, name, bytes);
    const run = await importFiles(t, admin, org.id, { space: space.id }, [key]);
    assert.equal(run.status, 'failed', name);
    assert.match(run.reason ?? '', reason, name);
    assert.ok(run.reason!.startsWith(`${name}: `), run.reason);
  }
  assert.equal((await admin.api.spaces.getSpaceById(space.id)).data.revision, revisionBefore);
  assert.deepEqual((await admin.api.spaces.listFiles(space.id)).data.items, []);
  assert.equal((await admin.api.org.listImportRuns(org.id, { status: 'failed' })).data.items.length, cases.length);
});

test('permissions and bad input: 404 for what the caller cannot see, 403 for what they cannot do, 400 naming the field', async () => {
  const { admin, org, space } = await orgWithSpace(t);
  const key = await upload(admin, org.id, 'notes.md', Buffer.from('# Notes\n'), 'text/markdown');
  const reader = await newMember(t, org.id, 'read', 'Reader');
  const outsider = await t.user('Outsider');
  const body = { source: { type: 'file' as const, files: [key] }, target: { space: space.id } };
  await expectStatus(reader.api.org.startImportRun(org.id, body), 403, /import content/);
  await expectStatus(outsider.api.org.startImportRun(org.id, body), 404);
  await expectStatus(admin.api.org.startImportRun(org.id, { ...body, source: { type: 'website', url: 'ftp://example.com/docs' } }), 400, /source\.url: only http/);
  await expectStatus(admin.api.org.startImportRun(org.id, { ...body, source: { type: 'file', files: ['uploads/nope/nope/x.md'] } }), 400, /source\.files\[0\]/);
  const doc = await upload(admin, org.id, 'page.doc', Buffer.from('old Word'), 'application/msword');
  await expectStatus(admin.api.org.startImportRun(org.id, { ...body, source: { type: 'file', files: [doc] } }), 400, /page\.doc: this document format is not supported: export it as Markdown, HTML or \.docx/);
  await expectStatus(admin.api.org.startImportRun(org.id, { ...body, target: { space: space.id, page: 'nope' } }), 400, /target\.page/);
  const tooMany = await t.request('POST', `/v1/org/${org.id}/imports`, { token: admin.token, body: { ...body, source: { type: 'file', files: Array(51).fill(key) } } });
  assert.equal(tooMany.status, 400);

  const { data: run } = await admin.api.org.startImportRun(org.id, body);
  assert.equal((await reader.api.org.getImportRun(org.id, run.id)).data.id, run.id, 'a reader of the space sees its runs');
  await expectStatus(reader.api.org.cancelImportRun(org.id, run.id), 403);
  await expectStatus(outsider.api.org.getImportRun(org.id, run.id), 404);
  await expectStatus(admin.api.org.getImportRun(org.id, 'missing'), 404);
  await settleJobs(t);
  const done = (await admin.api.org.getImportRun(org.id, run.id)).data as Run;
  assert.equal(done.status, 'completed', done.reason);
  assert.equal(done.project, 'files');
  assert.equal(done.pages?.[0]?.sourceURL, 'notes.md');
});

test('a run whose job ended without a word is shown as failed', async () => {
  const { admin, org, space } = await orgWithSpace(t);
  const key = await upload(admin, org.id, 'notes.md', Buffer.from('# Notes\n'), 'text/markdown');
  await t.server.services.jobs.stop();
  try {
    const { data: run } = await admin.api.org.startImportRun(org.id, { source: { type: 'file', files: [key] }, target: { space: space.id } });
    // As when the worker died past its last attempt: the job is over, the run still says pending.
    await t.server.services.db.updateTable('jobs').set({ status: 'failed', last_error: 'worker stopped' }).where('type', '=', IMPORT_RUN_JOB).where('status', '=', 'queued').execute();
    const seen = (await admin.api.org.getImportRun(org.id, run.id)).data;
    assert.equal(seen.status, 'failed');
    assert.match(seen.reason ?? '', /without reporting back/);
    const listed = (await admin.api.org.listImportRuns(org.id, { space: space.id })).data.items;
    assert.equal(listed[0]!.status, 'failed');
  } finally {
    t.server.services.jobs.start();
  }
});

test('Docusaurus sidebars are read as data: TypeScript, shorthand categories, autogenerated folders with _category_ files', () => {
  const warnings: string[] = [];
  const sidebars = readSidebars(
    `import type {SidebarsConfig} from '@docusaurus/plugin-content-docs';\nconst sidebars: SidebarsConfig = {\n  main: { 'Get started': ['intro', 'setup'], More: [{ type: 'autogenerated', dirName: 'more' }] },\n} satisfies SidebarsConfig;\nexport default sidebars;\n`,
    (m) => warnings.push(m),
  );
  assert.deepEqual(sidebars, { main: { 'Get started': ['intro', 'setup'], More: [{ type: 'autogenerated', dirName: 'more' }] } });
  // A file that would run code is never run: an expression that is not data is skipped with a warning.
  const evil = readSidebars(`module.exports = { main: [require('child_process').execSync('touch /tmp/pwned') && 'intro', 'b'] };`, (m) => warnings.push(m));
  assert.deepEqual(evil, { main: ['b'] });
  assert.ok(warnings.some((w) => /not plain data/.test(w)));

  const files = new Map<string, Buffer>([
    ['sidebars.ts', Buffer.from(`const sidebars = { main: { 'Get started': ['intro', 'setup'], More: [{ type: 'autogenerated', dirName: 'more' }] } };\nexport default sidebars;`)],
    ['docs/intro.md', Buffer.from('# Intro\n')],
    ['docs/02-setup.md', Buffer.from('---\nsidebar_label: Set up\n---\n# Setup\n')],
    ['docs/more/b.md', Buffer.from('---\nsidebar_position: 1\n---\n# B\n')],
    ['docs/more/a.md', Buffer.from('---\nsidebar_position: 2\n---\n# A\n')],
    ['docs/more/sub/_category_.json', Buffer.from('{"label": "Sub section", "position": 0}')],
    ['docs/more/sub/c.md', Buffer.from('# C\n')],
  ]);
  const project = docusaurusProject(files, '', () => {});
  const titles = (items: NavItem[]): unknown[] =>
    items.map((i) => (i.kind === 'link' ? i.title : [i.kind === 'page' ? (i.title ?? i.path) : i.title, titles(i.children)]));
  assert.deepEqual(titles(project.nav), [
    ['Get started', [['docs/intro.md', []], ['Set up', []]]],
    ['More', [['Sub section', [['docs/more/sub/c.md', []]]], ['docs/more/b.md', []], ['docs/more/a.md', []]]],
  ]);
});

test('Docusaurus site idioms: docs beside website/ (config path), sidebars.json, route links, mdx-code-block, wrapper components, tab blocks, admonitions split around code', async () => {
  const warnings: { page?: string; message: string }[] = [];
  const files = new Map<string, Buffer>([
    ['website/docusaurus.config.js', Buffer.from(`module.exports = { presets: [['classic', { docs: { editUrl: ({docPath}) => \`x/\${docPath}\`, path: '../docs', routeBasePath: 'guide' }, blog: {} }]] };`)],
    ['website/sidebars.json', Buffer.from(JSON.stringify({ docs: { Start: ['intro', 'setup'] } }))],
    ['website/blog/post.md', Buffer.from('# A blog post, not a doc\n')],
    ['docs/Intro.md', Buffer.from('---\nid: intro\ntitle: Intro\n---\n\nSee [setup](setup#steps), [again](/guide/setup) and [by file](Setup.mdx).\n\n:::warning Careful\n\nRun this:\n\n```bash\nnpm test\n```\n\nThen check.\n\n:::\n\n:::tip\nNot closed: runs to the end.\n')],
    [
      'docs/Setup.mdx',
      Buffer.from(
        "---\nid: setup\ntitle: Setup\n---\n\n```mdx-code-block\nimport Tabs from '@theme/Tabs';\nimport TabItem from '@theme/TabItem';\n```\n\n{/* prettier-ignore */}\n" +
          "```mdx-code-block\n<Frame>\n  <Tabs\n    values={[\n      {label: 'Apple', value: 'a'},\n      {label: 'Pear', value: 'p'},\n    ]}>\n    <TabItem value=\"a\">An apple</TabItem>\n    <TabItem value=\"p\">A pear</TabItem>\n  </Tabs>\n</Frame>\n```\n\n" +
          '```js tab title="a.config.js"\nmodule.exports = {};\n```\n\n```ts tab title="a.config.ts"\nexport default {};\n```\n\n## Steps\n',
      ),
    ],
  ]);
  const { recognise } = await import('../src/imports/sources.ts');
  const project = recognise(files, (message) => warnings.push({ message }));
  assert.equal(project.kind, 'docusaurus');
  assert.equal(project.docsDir, 'docs', 'the docs plugin\'s path, beside website/');
  const built = buildVirtualRepo(files, project);
  warnings.push(...built.warnings);
  const read = async (path: string) => {
    const f = (await built.repo.files('virtual', '')).find((x) => x.path === path)!;
    return (await built.repo.blobs([f.oid])).get(f.oid)!.toString();
  };
  assert.equal(await read('SUMMARY.md'), '# Table of contents\n\n\n## Start\n\n* [Intro](Intro.md)\n* [Setup](Setup.md)\n');
  const intro = await read('Intro.md');
  // Links written as routes (relative id, routeBasePath) and as files all lead to the page.
  assert.match(intro, /\[setup\]\(Setup\.md#steps\), \[again\]\(Setup\.md\) and \[by file\]\(Setup\.md\)/);
  // The admonition is split around its code block (a hint holds text only); the unclosed one runs to the end.
  assert.match(intro, /\{% hint style="warning" %\}\s*\*\*Careful\*\*\s*Run this:\s*\{% endhint %\}\s*```bash\s*npm test\s*```\s*\{% hint style="warning" %\}\s*Then check\.\s*\{% endhint %\}/);
  assert.match(intro, /\{% hint style="success" %\}\s*Not closed: runs to the end\.\s*\{% endhint %\}/);
  const setup = await read('Setup.md');
  assert.match(setup, /\{% tabs %\}\s*\{% tab title="Apple" %\}\s*An apple\s*\{% endtab %\}\s*\{% tab title="Pear" %\}\s*A pear\s*\{% endtab %\}\s*\{% endtabs %\}/);
  assert.match(setup, /\{% tabs %\}\s*\{% tab title="JavaScript" %\}\s*\{% code title="a\.config\.js" %\}\s*```js\s*module\.exports = \{\};\s*```\s*\{% endcode %\}\s*\{% endtab %\}\s*\{% tab title="TypeScript" %\}/);
  assert.doesNotMatch(setup, /mdx-code-block|<Frame>|prettier-ignore|import Tabs/);
  assert.ok(warnings.some((w) => /<Frame> has no GitBook equivalent/.test(w.message)), JSON.stringify(warnings));
  assert.ok(warnings.some((w) => /is not closed: it runs to the end/.test(w.message)), JSON.stringify(warnings));
});

test('Material idioms: reference links become page links, definition lists and <div markdown> wrappers give their blocks', async () => {
  const files = new Map<string, Buffer>([
    ['mkdocs.yml', Buffer.from('site_name: S\nnav:\n  - Home: index.md\n  - Setup: setup.md\n')],
    ['docs/index.md', Buffer.from('# Home\n\nRead the [setup guide] and [its options][opts], not `[setup guide]`.\n\n  [setup guide]: setup.md\n  [opts]: setup.md#options\n')],
    ['docs/setup.md', Buffer.from('# Setup\n\n## Options\n\n`color`\n\n:   The color.\n\n    === "Light"\n\n        ``` yaml\n        color: white\n        ```\n\n    === "Dark"\n\n        ``` yaml\n        color: black\n        ```\n\n<div class="result" markdown>\n\n!!! note\n\n    Inside a result.\n\n</div>\n')],
  ]);
  const { recognise } = await import('../src/imports/sources.ts');
  const built = buildVirtualRepo(files, recognise(files, () => {}));
  const read = async (path: string) => {
    const f = (await built.repo.files('virtual', '')).find((x) => x.path === path)!;
    return (await built.repo.blobs([f.oid])).get(f.oid)!.toString();
  };
  const home = await read('README.md');
  assert.match(home, /Read the \[setup guide\]\(setup\.md\) and \[its options\]\(setup\.md#options\), not `\[setup guide\]`\./);
  assert.doesNotMatch(home, /\]: setup\.md/, 'used definitions are gone');
  const setup = await read('setup.md');
  assert.match(setup, /The color\.\s*\{% tabs %\}\s*\{% tab title="Light" %\}\s*```yaml\s*color: white\s*```\s*\{% endtab %\}\s*\{% tab title="Dark" %\}/);
  assert.match(setup, /\{% hint style="info" %\}\s*Inside a result\.\s*\{% endhint %\}/);
  assert.doesNotMatch(setup, /<div|<\/div>/);
});

test('a converter registered for an extension makes those files importable (how HTML and Word plug in)', async () => {
  const { admin, org, space } = await orgWithSpace(t);
  const text = await upload(admin, org.id, 'page.txt', Buffer.from('<h1>From text</h1><p>Body.</p>'), 'text/plain');
  const refused = await importFiles(t, admin, org.id, { space: space.id }, [text]);
  assert.equal(refused.status, 'failed');
  assert.match(refused.reason ?? '', /no Markdown file/);
  CONVERTERS.set('.txt', async (file) => [{ path: file.path.replace(/^.*\//, '').replace(/\.txt$/, '.md'), data: Buffer.from(`# ${/<h1>(.*?)<\/h1>/.exec(file.data.toString())![1]}\n\nConverted.\n`) }]);
  try {
    const run = await importFiles(t, admin, org.id, { space: space.id }, [text]);
    assert.equal(run.status, 'completed', run.reason);
    assert.ok(pageTitled(await pagesOf(admin, space.id), 'From text'));
  } finally {
    CONVERTERS.delete('.txt');
  }
});

test('a crawled website becomes a project: crawl order and nesting, links between pages rewritten to their files', async () => {
  const html = new Map([
    ['https://docs.example.com/docs/', '[Guide](https://docs.example.com/docs/guide/) and [Install](/docs/guide/install#steps)'],
    ['https://docs.example.com/docs/guide/', 'The guide. [Home](../)'],
    ['https://docs.example.com/docs/guide/install', 'Steps. [Elsewhere](https://elsewhere.example.com/)'],
    ['https://docs.example.com/docs/faq', 'Questions.'],
  ]);
  const crawled = [
    { url: 'https://docs.example.com/docs/', path: [], title: 'Home', html: 'home' },
    { url: 'https://docs.example.com/docs/guide/', path: ['guide'], title: 'Guide', html: 'guide' },
    { url: 'https://docs.example.com/docs/guide/install', path: ['guide', 'install'], title: 'Install', html: 'install' },
    { url: 'https://docs.example.com/docs/faq', path: ['faq'], title: 'FAQ', html: 'faq' },
  ];
  const warnings: string[] = [];
  const { tree, project } = websiteProject(crawled, (_html, { baseUrl }) => ({ markdown: html.get(baseUrl!)!, warnings: baseUrl!.endsWith('faq') ? ['a table was simplified'] : [], assets: [] }), (m) => warnings.push(m));
  assert.deepEqual([...tree.keys()], ['README.md', 'guide/README.md', 'guide/install.md', 'faq.md']);
  assert.deepEqual(warnings, ['https://docs.example.com/docs/faq: a table was simplified']);
  const built = buildVirtualRepo(tree, project);
  const read = async (path: string) => {
    const f = (await built.repo.files('virtual', '')).find((x) => x.path === path)!;
    return (await built.repo.blobs([f.oid])).get(f.oid)!.toString();
  };
  assert.equal(await read('SUMMARY.md'), '# Table of contents\n\n* [Home](README.md)\n* [Guide](guide/README.md)\n  * [Install](guide/install.md)\n* [FAQ](faq.md)\n');
  assert.match(await read('README.md'), /\[Guide\]\(guide\/README\.md\) and \[Install\]\(guide\/install\.md#steps\)/);
  assert.match(await read('guide/README.md'), /\[Home\]\(\.\.\/README\.md\)/);
  assert.match(await read('guide/install.md'), /\[Elsewhere\]\(https:\/\/elsewhere\.example\.com\/\)/);
});

test('a website source runs once a crawler and a converter are wired (stand-ins here)', async () => {
  const { admin, org, space } = await orgWithSpace(t);
  const wired = { ...websiteImports };
  websiteImports.crawl = async (url) => ({
    pages: [
      { url, path: [], title: 'Site home', html: '<p>Home</p>' },
      { url: `${url}/guide`, path: ['guide'], title: 'Guide', html: '<p>Guide</p>' },
    ],
    warnings: ['robots.txt disallows /private'],
  });
  websiteImports.toMarkdown = (html) => ({ markdown: html.replace(/<\/?p>/g, ''), warnings: [], assets: [] });
  try {
    const { data: started } = await admin.api.org.startImportRun(org.id, { source: { type: 'website', url: 'https://docs.example.com/docs' }, target: { space: space.id } });
    await settleJobs(t);
    const run = (await admin.api.org.getImportRun(org.id, started.id)).data as Run;
    assert.equal(run.status, 'completed', run.reason);
    assert.equal(run.project, 'website');
    assert.deepEqual(run.warnings, [{ message: 'robots.txt disallows /private' }]);
    assert.deepEqual(run.pages?.map((p) => p.sourceURL).sort(), ['https://docs.example.com/docs', 'https://docs.example.com/docs/guide']);
    const pages = await pagesOf(admin, space.id);
    assert.ok(pageTitled(pages, 'Site home') && pageTitled(pages, 'Guide'));
  } finally {
    Object.assign(websiteImports, wired);
  }
});
