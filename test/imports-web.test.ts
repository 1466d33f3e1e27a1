import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { zipSync } from 'fflate';
import { orgWithSpace } from './support/factories.ts';
import { findPage, IMPORT_FIXTURES, importFiles, markdownOf, pagesOf, runOf, shape, upload, zipFixture } from './support/imports.ts';
import { expectStatus, startTestServer, type TestServer, type TestUser } from './support/server.ts';
import { eventually, settleJobs } from './support/wait.ts';

// HTML files, Notion and Confluence exports, Word documents and websites imported through the
// official client, with the converters of src/imports/html.ts, docx.ts, html-export.ts and
// website.ts wired into the import runs (src/imports/converters.ts). The website is a node:http
// server on 127.0.0.1, the only private address the test server may reach.

let t: TestServer;
before(async () => {
  t = await startTestServer({ fetchAllowCidrs: ['127.0.0.1/32'], importWebsiteMaxPages: 20, importWebsiteTimeoutMs: 20_000 });
});
after(async () => {
  await t?.close();
});

const PNG = readFileSync(join(IMPORT_FIXTURES, 'notion/Handbook 8a3f2c1e9b7d4e6fa1c2d3e4f5a6b7c8/team.png'));

async function fileNames(user: TestUser, spaceId: string): Promise<string[]> {
  return (await user.api.spaces.listFiles(spaceId)).data.items.map((f) => f.name).sort();
}

test('an HTML file: one page, its title from the first heading, callouts as hints, details as expandables, images beside it stored as files', async () => {
  const { admin, org, space } = await orgWithSpace(t);
  const html = `<!doctype html><html><head><title>Ignored</title><script>alert(1)</script></head><body>
    <h1>Release plan</h1><p>Ship <strong>soon</strong>. See <a href="https://example.com/more">more</a>.</p>
    <div class="admonition warning"><p class="admonition-title">Warning</p><p>Freeze on Friday.</p></div>
    <details><summary>Why?</summary><p>Because weekends.</p></details>
    <p><img src="chart.png" alt="Chart"></p></body></html>`;
  const keys = [await upload(admin, org.id, 'plan.html', Buffer.from(html), 'text/html'), await upload(admin, org.id, 'chart.png', PNG, 'image/png')];
  const run = await importFiles(t, admin, org.id, { space: space.id }, keys);
  assert.equal(run.status, 'completed', run.reason);
  assert.equal(run.project, 'files');
  assert.deepEqual(run.progress, { pagesFound: 1, pagesConverted: 1, pagesFailed: 0 });
  const page = findPage(await pagesOf(admin, space.id), 'Release plan');
  assert.equal(run.pages?.find((p) => p.id === page.id)?.sourceURL, 'plan.html');
  const md = await markdownOf(admin, space.id, page.id);
  assert.match(md, /Ship \*\*soon\*\*\. See \[more\]\(https:\/\/example\.com\/more\)/);
  assert.match(md, /\{% hint style="warning" %\}[\s\S]*Freeze on Friday\.[\s\S]*\{% endhint %\}/);
  assert.match(md, /<details>\s*<summary>Why\?<\/summary>[\s\S]*Because weekends\.[\s\S]*<\/details>/);
  assert.doesNotMatch(md, /alert\(1\)/);
  assert.deepEqual(await fileNames(admin, space.id), ['chart.png']);
  assert.doesNotMatch(md, /\]\(chart\.png\)|src="chart\.png"/, 'the image points at the space file');
});

test('HTML files among Markdown files: each converted where it is, links between them pointed at the pages', async () => {
  const { admin, org, space } = await orgWithSpace(t);
  const enc = (x: string) => new TextEncoder().encode(x);
  const zip = Buffer.from(
    zipSync({
      'docs/README.md': enc('# Docs\n\nSee [the legacy page](legacy/old-page.html).\n'),
      'docs/legacy/old-page.html': enc('<h1>Old page</h1><p>Go to <a href="other%20page.html#part">the other</a>.</p>'),
      'docs/legacy/other page.html': enc('<html><head><title>Other</title></head><body><p>Other body.</p></body></html>'),
    }),
  );
  const run = await importFiles(t, admin, org.id, { space: space.id }, [await upload(admin, org.id, 'docs.zip', zip, 'application/zip')]);
  assert.equal(run.status, 'completed', run.reason);
  assert.equal(run.project, 'folder');
  const pages = await pagesOf(admin, space.id);
  const old = findPage(pages, 'Old page');
  const other = findPage(pages, 'Other');
  assert.match(await markdownOf(admin, space.id, findPage(pages, 'Docs').id), new RegExp(`\\[the legacy page\\]\\([^)]*(${old.slug}|${old.id})`));
  assert.match(await markdownOf(admin, space.id, old.id), new RegExp(`\\[the other\\]\\([^)]*(${other.slug}|${other.id})[^)]*#part\\)`));
});

test('a Notion export zip: the page hierarchy in the parent page\'s order, callouts → hints, toggles → expandables, images as files, links to pages', async () => {
  const { admin, org, space } = await orgWithSpace(t);
  const run = await importFiles(t, admin, org.id, { space: space.id }, [await upload(admin, org.id, 'notion-export.zip', zipFixture('notion'), 'application/zip')]);
  assert.equal(run.status, 'completed', run.reason);
  assert.equal(run.project, 'notion');
  assert.deepEqual(run.progress, { pagesFound: 3, pagesConverted: 3, pagesFailed: 0 });
  const pages = await pagesOf(admin, space.id);
  assert.deepEqual(shape(pages).slice(-1), [['Handbook', ['Onboarding', 'Benefits']]]);
  const handbook = findPage(pages, 'Handbook');
  const onboarding = findPage(pages, 'Onboarding');
  assert.equal(run.pages?.find((p) => p.id === onboarding.id)?.sourceURL, 'Handbook 8a3f2c1e9b7d4e6fa1c2d3e4f5a6b7c8/Onboarding 1b2c3d4e5f60718293a4b5c6d7e8f901.html');
  const md = await markdownOf(admin, space.id, handbook.id);
  assert.match(md, /\{% hint style="info" %\}[\s\S]*Read \*\*Onboarding\*\* first\.[\s\S]*\{% endhint %\}/);
  assert.match(md, /<details( open)?>\s*<summary>Who maintains this\?<\/summary>[\s\S]*The people team\./);
  assert.match(md, new RegExp(`\\[Onboarding\\]\\([^)]*(${onboarding.slug}|${onboarding.id})[^)]*\\)`), 'the link to Onboarding points at its page');
  assert.doesNotMatch(md, /Onboarding%20|\.html/);
  assert.deepEqual(await fileNames(admin, space.id), ['team.png']);
  const onboardingMd = await markdownOf(admin, space.id, onboarding.id);
  assert.match(onboardingMd, /\{% hint style="danger" %\}[\s\S]*Never share your password\./);
  assert.match(onboardingMd, /```(shell|Shell)\s*git clone/);
  assert.match(onboardingMd, /Slack/);
});

test('a Confluence export zip: the space\'s page tree, information macros → hints, attachments as files', async () => {
  const { admin, org, space } = await orgWithSpace(t);
  const run = await importFiles(t, admin, org.id, { space: space.id }, [await upload(admin, org.id, 'confluence.zip', zipFixture('confluence'), 'application/zip')]);
  assert.equal(run.status, 'completed', run.reason);
  assert.equal(run.project, 'confluence');
  assert.deepEqual(run.progress, { pagesFound: 4, pagesConverted: 4, pagesFailed: 0 });
  const pages = await pagesOf(admin, space.id);
  assert.deepEqual(shape(pages).slice(-1), [['Home', [['Getting Started', ['Installation']], 'FAQ']]]);
  const home = await markdownOf(admin, space.id, findPage(pages, 'Home').id);
  assert.match(home, /\{% hint style="info" %\}[\s\S]*maintained by the docs team\./);
  assert.doesNotMatch(home, /Document generated by Confluence|Attachments:/);
  assert.match(await markdownOf(admin, space.id, findPage(pages, 'Getting Started').id), /\{% hint style="danger" %\}[\s\S]*Back up first\./);
  assert.match(await markdownOf(admin, space.id, findPage(pages, 'Installation').id), /apt-get install folio[\s\S]*\| OS \| Supported \|/);
  assert.deepEqual(await fileNames(admin, space.id), ['65539.png']);
});

/** A small Word document built from its OOXML parts: a Heading 1, bold text, a table and an image. */
function docx(heading: string | undefined): Buffer {
  const W = 'xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main" xmlns:r="http://schemas.openxmlformats.org/officeDocument/2006/relationships"';
  const drawing = `<w:drawing><wp:inline xmlns:wp="http://schemas.openxmlformats.org/drawingml/2006/wordprocessingDrawing"><wp:extent cx="9525" cy="9525"/><wp:docPr id="1" name="Picture 1" descr="Logo"/><a:graphic xmlns:a="http://schemas.openxmlformats.org/drawingml/2006/main"><a:graphicData uri="http://schemas.openxmlformats.org/drawingml/2006/picture"><pic:pic xmlns:pic="http://schemas.openxmlformats.org/drawingml/2006/picture"><pic:nvPicPr><pic:cNvPr id="0" name="logo.png" descr="Logo"/><pic:cNvPicPr/></pic:nvPicPr><pic:blipFill><a:blip r:embed="rIdImg"/></pic:blipFill><pic:spPr/></pic:pic></a:graphicData></a:graphic></wp:inline></w:drawing>`;
  const body = `${heading ? `<w:p><w:pPr><w:pStyle w:val="Heading1"/></w:pPr><w:r><w:t>${heading}</w:t></w:r></w:p>` : ''}
<w:p><w:r><w:t xml:space="preserve">Quarterly </w:t></w:r><w:r><w:rPr><w:b/></w:rPr><w:t>numbers</w:t></w:r><w:r><w:t>.</w:t></w:r></w:p>
<w:p><w:r>${drawing}</w:r></w:p>
<w:tbl><w:tr><w:tc><w:p><w:r><w:t>Quarter</w:t></w:r></w:p></w:tc><w:tc><w:p><w:r><w:t>Sales</w:t></w:r></w:p></w:tc></w:tr><w:tr><w:tc><w:p><w:r><w:t>Q1</w:t></w:r></w:p></w:tc><w:tc><w:p><w:r><w:t>10</w:t></w:r></w:p></w:tc></w:tr></w:tbl>`;
  const enc = (s: string) => new TextEncoder().encode(s);
  return Buffer.from(
    zipSync({
      '[Content_Types].xml': enc(`<?xml version="1.0" encoding="UTF-8"?><Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types"><Default Extension="rels" ContentType="application/vnd.openxmlformats-package.relationships+xml"/><Default Extension="xml" ContentType="application/xml"/><Default Extension="png" ContentType="image/png"/><Override PartName="/word/document.xml" ContentType="application/vnd.openxmlformats-officedocument.wordprocessingml.document.main+xml"/><Override PartName="/word/styles.xml" ContentType="application/vnd.openxmlformats-officedocument.wordprocessingml.styles+xml"/></Types>`),
      '_rels/.rels': enc(`<?xml version="1.0" encoding="UTF-8"?><Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships"><Relationship Id="rId1" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/officeDocument" Target="word/document.xml"/></Relationships>`),
      'word/_rels/document.xml.rels': enc(`<?xml version="1.0" encoding="UTF-8"?><Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships"><Relationship Id="rIdStyles" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/styles" Target="styles.xml"/><Relationship Id="rIdImg" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/image" Target="media/image1.png"/></Relationships>`),
      'word/document.xml': enc(`<?xml version="1.0" encoding="UTF-8" standalone="yes"?><w:document ${W}><w:body>${body}</w:body></w:document>`),
      'word/styles.xml': enc(`<?xml version="1.0" encoding="UTF-8" standalone="yes"?><w:styles ${W}><w:style w:type="paragraph" w:styleId="Heading1"><w:name w:val="heading 1"/></w:style></w:styles>`),
      'word/media/image1.png': PNG,
    }),
  );
}

test('Word documents: one page each, titled by the first heading or else the file name, images stored as files; a damaged one fails the run with its name', async () => {
  const { admin, org, space } = await orgWithSpace(t);
  const type = 'application/vnd.openxmlformats-officedocument.wordprocessingml.document';
  const keys = [await upload(admin, org.id, 'report.docx', docx('Sales report'), type), await upload(admin, org.id, 'q2-summary.docx', docx(undefined), type)];
  const run = await importFiles(t, admin, org.id, { space: space.id }, keys);
  assert.equal(run.status, 'completed', run.reason);
  assert.deepEqual(run.progress, { pagesFound: 2, pagesConverted: 2, pagesFailed: 0 });
  const pages = await pagesOf(admin, space.id);
  const report = await markdownOf(admin, space.id, findPage(pages, 'Sales report').id);
  assert.match(report, /Quarterly \*\*numbers\*\*\./);
  assert.match(report, /\| Quarter \| Sales \|/);
  assert.match(report, /!\[Logo\]\(\.gitbook\/assets\/image-1-[0-9a-f]{8}(-2)?\.png\)/);
  assert.ok(findPage(pages, 'Q2 summary'), 'titled by the file name');
  const files = await fileNames(admin, space.id);
  assert.equal(files.length, 2, files.join());
  assert.ok(files.every((n) => /^image-1-[0-9a-f]{8}(-2)?\.png$/.test(n)), files.join());

  const before = (await admin.api.spaces.getSpaceById(space.id)).data.revision;
  const broken = await importFiles(t, admin, org.id, { space: space.id }, [await upload(admin, org.id, 'broken.docx', Buffer.from('not a zip'), type)]);
  assert.equal(broken.status, 'failed');
  assert.match(broken.reason ?? '', /^broken\.docx: .*not a zip archive/);
  assert.equal((await admin.api.spaces.getSpaceById(space.id)).data.revision, before);
});

/** A small documentation site on 127.0.0.1; `hold` paths answer only when released. */
async function startSite(hold: Set<string> = new Set()) {
  const requests: string[] = [];
  const closed: string[] = [];
  const waiting: (() => void)[] = [];
  let base = '';
  const page = (title: string, body: string) =>
    `<!doctype html><html><head><title>${title} | Site</title></head><body><nav><a href="/docs/">Home</a> <a href="/docs/guide">Guide</a> <a href="/docs/moved">Moved</a> <a href="/docs/held">Held</a></nav><main><h1>${title}</h1>${body}</main><footer>© Site</footer></body></html>`;
  const pages: Record<string, string> = {
    '/docs/': page('Welcome', '<p>Start with the <a href="/docs/guide#setup">guide</a>.</p><p><img src="/docs/logo.png" alt="Logo"></p><p><img src="/docs/leak.png" alt="Leak"></p>'),
    '/docs/guide': page('Guide', '<h2 id="setup">Setup</h2><p>Back <a href="./">home</a>.</p><div class="admonition tip"><p class="admonition-title">Tip</p><p>Read twice.</p></div>'),
    '/docs/held': page('Held', '<p>Slow page.</p>'),
  };
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const path = (req.url ?? '/').split('?')[0]!;
    requests.push(path);
    req.on('close', () => closed.push(path));
    if (hold.has(path)) {
      waiting.push(() => {
        if (!res.destroyed) res.writeHead(200, { 'content-type': 'text/html' }).end(pages[path] ?? page('Late', ''));
      });
      return;
    }
    if (path === '/robots.txt') return res.writeHead(404).end();
    if (path === '/docs/moved' || path === '/docs/leak.png') {
      // Redirects to private addresses the server may not reach: refused by the vetted fetch.
      return res.writeHead(302, { location: path === '/docs/moved' ? 'http://169.254.169.254/latest/meta-data/' : 'http://10.0.0.1/secret.png' }).end();
    }
    if (path === '/docs/logo.png') return res.writeHead(200, { 'content-type': 'image/png' }).end(PNG);
    const html = pages[path];
    if (!html) return res.writeHead(404).end('not found');
    res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end(html);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    base,
    requests,
    closed,
    release: () => waiting.splice(0).forEach((w) => w()),
    close: () => {
      server.closeAllConnections();
      server.close();
    },
  };
}

test('a website: pages crawled under the URL, main content converted, images downloaded as files, links between pages rewritten; a redirect to a private address refused', async () => {
  const site = await startSite();
  try {
    const { admin, org, space } = await orgWithSpace(t);
    const { data: started } = await admin.api.org.startImportRun(org.id, { source: { type: 'website', url: `${site.base}/docs/` }, target: { space: space.id } });
    await settleJobs(t);
    const run = await runOf(admin, org.id, started.id);
    assert.equal(run.status, 'completed', run.reason);
    assert.equal(run.project, 'website');
    const messages = run.warnings.map((w) => w.message);
    assert.ok(messages.some((m) => m.startsWith(`${site.base}/docs/moved was skipped`) && /169\.254\.169\.254|private|public/.test(m)), messages.join('\n'));
    assert.ok(messages.some((m) => m.startsWith(`the image ${site.base}/docs/leak.png was not stored`)), messages.join('\n'));
    assert.ok(!site.requests.includes('/latest/meta-data/'));

    const pages = await pagesOf(admin, space.id);
    const welcome = findPage(pages, 'Welcome');
    const guide = findPage(pages, 'Guide');
    assert.equal(run.pages?.find((p) => p.id === guide.id)?.sourceURL, `${site.base}/docs/guide`);
    assert.deepEqual(run.pages?.map((p) => p.sourceURL).sort(), [`${site.base}/docs/`, `${site.base}/docs/guide`, `${site.base}/docs/held`], 'nothing for the refused page');
    const md = await markdownOf(admin, space.id, welcome.id);
    assert.doesNotMatch(md, /© Site|\[Moved\]/, 'only the main content');
    assert.match(md, new RegExp(`\\[guide\\]\\([^)]*(${guide.slug}|${guide.id})[^)]*#setup\\)`), 'the link to the guide points at its page, anchor kept');
    assert.doesNotMatch(md, new RegExp(`${site.base.replace(/[.]/g, '\\.')}/docs/(guide|logo\\.png)`), 'links and images point into the space');
    assert.ok(md.includes(`${site.base}/docs/leak.png`), 'the refused image stays a link to the site');
    assert.match(await markdownOf(admin, space.id, guide.id), /\{% hint style="success" %\}[\s\S]*Read twice\./);
    assert.deepEqual(await fileNames(admin, space.id), ['logo.png']);

    // A start URL redirecting to a private address: the run fails saying why, nothing written.
    const revision = (await admin.api.spaces.getSpaceById(space.id)).data.revision;
    const { data: refused } = await admin.api.org.startImportRun(org.id, { source: { type: 'website', url: `${site.base}/docs/moved` }, target: { space: space.id } });
    await settleJobs(t);
    const failed = await runOf(admin, org.id, refused.id);
    assert.equal(failed.status, 'failed');
    assert.match(failed.reason ?? '', /could not be read: .*169\.254\.169\.254/);
    assert.equal((await admin.api.spaces.getSpaceById(space.id)).data.revision, revision);
  } finally {
    site.close();
  }
});

test('a website run cancelled mid-crawl stops fetching at once and writes nothing', async () => {
  const site = await startSite(new Set(['/docs/held']));
  try {
    const { admin, org, space } = await orgWithSpace(t);
    const revisionBefore = (await admin.api.spaces.getSpaceById(space.id)).data.revision;
    const { data: started } = await admin.api.org.startImportRun(org.id, { source: { type: 'website', url: `${site.base}/docs/` }, target: { space: space.id } });
    const settling = settleJobs(t);
    await eventually(() => site.requests.includes('/docs/held'), { what: 'the crawl reached the held page' });
    const progress = await eventually(async () => {
      const r = await runOf(admin, org.id, started.id);
      return r.status === 'in-progress' && r.progress.pagesFound >= 1 && r;
    }, { what: 'progress recorded while crawling' });
    assert.ok(progress.progress.pagesFound >= 1);
    const { data: cancelled } = await admin.api.org.cancelImportRun(org.id, started.id);
    assert.equal(cancelled.status, 'cancelled');
    const cancelledAt = Date.now();
    await settling;
    await eventually(() => site.closed.includes('/docs/held'), { what: 'the held request was abandoned' });
    // At once: well before the crawl's own time limit (20 s here) would have ended it.
    assert.ok(Date.now() - cancelledAt < 5000, `the crawl stopped ${Date.now() - cancelledAt} ms after the cancel`);
    site.release();
    const run = await runOf(admin, org.id, started.id);
    assert.equal(run.status, 'cancelled');
    assert.equal((await admin.api.spaces.getSpaceById(space.id)).data.revision, revisionBefore);
    assert.deepEqual(await fileNames(admin, space.id), []);
    await expectStatus(admin.api.org.cancelImportRun(org.id, started.id), 400, /already cancelled/);
  } finally {
    site.release();
    site.close();
  }
});
