import assert from 'node:assert/strict';
import { mkdirSync, readFileSync } from 'node:fs';
import { request } from 'node:http';
import { after, before, test } from 'node:test';
import { SignJWT } from 'jose';
import { chromium, type Browser, type Page } from 'playwright-core';
import { mergeChanges, newOrg } from './support/factories.ts';
import { startTestServer, type TestServer } from './support/server.ts';
import { publishedSite } from './support/site.ts';
import { eventually, settleJobs } from './support/wait.ts';

/**
 * Published sites in a real browser (Debian's chromium driven by playwright-core): navigation,
 * every block rendered, theme, search, share links, visitor auth with adaptive content, and an XSS
 * corpus that must execute nothing. Screenshots go to test-artifacts/.
 */

const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
const ARTIFACTS = new URL('../test-artifacts/', import.meta.url);

let t: TestServer;
let browser: Browser;
before(async () => {
  // Sites are read on every request here, so each change shows at once (SITE_CACHE_TTL_MS=0).
  t = await startTestServer({ siteHostsRefreshMs: 100, siteCacheTtlMs: 0 });
  browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox', '--disable-dev-shm-usage'] });
  mkdirSync(ARTIFACTS, { recursive: true });
});
after(async () => {
  await browser?.close();
  await t?.close();
});

/** A browser page that fails the test on console errors, page errors and dialogs. */
async function open(): Promise<{ page: Page; problems: string[] }> {
  const context = await browser.newContext();
  // Tests never reach the outside world: requests off this machine are refused (and not reported).
  await context.route(/^(?!http:\/\/127\.0\.0\.1[:/])/, (route) => route.abort('blockedbyclient'));
  const page = await context.newPage();
  const problems: string[] = [];
  page.on('console', (m) => m.type() === 'error' && !m.text().includes('ERR_BLOCKED_BY_CLIENT') && problems.push(`console: ${m.text()}`));
  page.on('pageerror', (e) => problems.push(`page error: ${e.message}`));
  page.on('dialog', async (d) => {
    problems.push(`dialog: ${d.message()}`);
    await d.dismiss();
  });
  return { page, problems };
}

const BLOCKS = readFileSync(new URL('./fixtures/content-format/blocks.md', import.meta.url), 'utf8');

test('a reader navigates a public site, sees every block, switches theme and searches', { timeout: 120_000 }, async () => {
  const { admin, org } = await newOrg(t);
  const { base } = await publishedSite(t, admin, org.id, [
    { title: 'Welcome', markdown: 'Welcome to the **handbook**.\n\n## Getting around\n\nUse the sidebar.\n' },
    { title: 'Blocks', markdown: `Every block, rendered.\n\n${BLOCKS}` },
    { title: 'Guides', markdown: 'All guides.\n' },
    { title: 'Setup', parent: 'Guides', markdown: 'Install the **zeppelin** toolkit.\n\n## Configure\n\nEdit the file.\n' },
    { title: 'Secret plans', markdown: '---\nhidden: true\n---\n\nNot in the navigation.\n' },
  ]);
  const { page, problems } = await open();
  await page.goto(`${t.url}${base}`);
  assert.equal(await page.locator('main h1').textContent(), 'Welcome');
  // The tree is open along the page being read only: Setup (under Guides) shows once Guides is open.
  assert.deepEqual(await page.locator('nav.sidebar a').allTextContents(), ['Welcome', 'Blocks', 'Guides']);
  await page.screenshot({ path: new URL('site-home.png', ARTIFACTS).pathname, fullPage: true });

  // Every block of the content-format fixture, as elements (not strings).
  await page.locator('nav.sidebar a', { hasText: 'Blocks' }).click();
  await page.waitForURL(/\/blocks$/);
  const count = (selector: string) => page.locator(`article.page ${selector}`).count();
  const expected: [string, string][] = [
    ['hint', '.hint.hint-success'],
    ['tabs', '.tabs [role=tab]'],
    ['tab panels', '.tabs [role=tabpanel]'],
    ['stepper', 'ol.stepper > li.step'],
    ['expandable', 'details.expandable > summary'],
    ['code, highlighted', 'pre code span[class^="hljs-"]'],
    ['math', '.math .katex'],
    ['inline math', 'p .katex'],
    ['image with caption', 'figure.image figcaption'],
    ['dark image', 'picture source[media="(prefers-color-scheme: dark)"]'],
    ['embed as a link', 'figure.embed a[href^="https://www.youtube.com/"]'],
    ['columns', '.columns > .column'],
    ['updates', 'article.update time'],
    ['cards', '.cards .card'],
    ['task list', 'ul.tasks input[type=checkbox]'],
    ['button', 'a.button'],
    ['emoji', '.emoji'],
    ['annotation', 'sup.annotation a[href^="#note-"]'],
    ['annotation note', 'section.notes li'],
    ['keyboard', 'kbd'],
    ['ordered list', 'ol > li'],
    ['quote', 'blockquote'],
    ['divider', 'hr'],
    ['headings', 'h2, h3, h4'],
    ['OpenAPI blocks', '.openapi'],
    ['integration block', '.integration'],
  ];
  for (const [what, selector] of expected) assert.ok((await count(selector)) > 0, `${what}: nothing matches ${selector}`);
  // Tabs work from the keyboard: the second tab's panel shows, the first hides.
  const tabs = page.locator('article.page .tabs').first();
  await tabs.locator('[role=tab]').first().focus();
  await page.keyboard.press('ArrowRight');
  assert.equal(await tabs.locator('[role=tab]').nth(1).getAttribute('aria-selected'), 'true');
  assert.ok(await tabs.locator('[role=tabpanel]').nth(1).isVisible());
  assert.ok(!(await tabs.locator('[role=tabpanel]').first().isVisible()));
  await page.screenshot({ path: new URL('site-blocks.png', ARTIFACTS).pathname, fullPage: true });

  // A nested page: breadcrumbs, table of contents, previous and next.
  await page.locator('nav.sidebar a', { hasText: 'Guides' }).click();
  await page.waitForURL(/\/guides$/);
  assert.deepEqual(await page.locator('nav.sidebar a').allTextContents(), ['Welcome', 'Blocks', 'Guides', 'Setup']);
  await page.locator('nav.sidebar a', { hasText: 'Setup' }).click();
  await page.waitForURL(/\/guides\/setup$/);
  assert.deepEqual(await page.locator('nav.breadcrumbs a').allTextContents(), ['Guides']);
  assert.deepEqual(await page.locator('aside.toc a').allTextContents(), ['Configure']);
  assert.equal(await page.locator('a[rel=prev]').getAttribute('href'), `${base}guides`);

  // The theme toggle switches to dark and is remembered.
  assert.equal(await page.locator('html').getAttribute('data-theme'), 'light');
  await page.locator('[data-theme-toggle]').click();
  assert.equal(await page.locator('html').getAttribute('data-theme'), 'dark');
  await page.reload();
  assert.equal(await page.locator('html').getAttribute('data-theme'), 'dark');
  await page.screenshot({ path: new URL('site-dark.png', ARTIFACTS).pathname, fullPage: true });

  // Search finds the page by a word of its body: as the reader types (a prefix, then a typo)…
  await page.locator('input[type=search]').fill('zepp');
  await page.locator('.search-live a').first().waitFor();
  assert.deepEqual(await page.locator('.search-live a strong').allTextContents(), ['Setup']);
  assert.equal(await page.locator('.search-live mark').first().textContent(), 'zeppelin');
  await page.locator('input[type=search]').fill('configuer');
  await page.locator('.search-live strong', { hasText: 'Setup › Configure' }).waitFor();
  // …and on the search page.
  await page.locator('input[type=search]').fill('zeppelin');
  await page.locator('form.search button').click();
  await page.waitForURL(/\/search\?q=zeppelin/);
  assert.deepEqual(await page.locator('.search-results a').allTextContents(), ['Setup']);

  // A hidden page is reachable by its URL, but not listed.
  await page.goto(`${t.url}${base}secret-plans`);
  assert.equal(await page.locator('main h1').textContent(), 'Secret plans');
  assert.deepEqual(problems, []);
});

test('OpenAPI blocks show the operation from the organization\'s spec', { timeout: 90_000 }, async () => {
  const { admin, org } = await newOrg(t);
  const spec = {
    openapi: '3.0.3',
    info: { title: 'Pets', version: '1.0.0' },
    paths: {
      '/pets/{id}': {
        get: {
          summary: 'Find a pet',
          description: 'Returns the pet <script>alert(1)</script> with this id.',
          parameters: [{ name: 'id', in: 'path', required: true, schema: { type: 'string' }, description: 'The pet id' }],
          responses: { '200': { description: 'The pet', content: { 'application/json': { schema: { type: 'object', properties: { name: { type: 'string' } } } } } } },
        },
      },
    },
  };
  await admin.api.orgs.createOpenApiSpec(org.id, { slug: 'pets', source: { text: JSON.stringify(spec) } } as never);
  // Processing the spec is a job.
  await settleJobs(t);
  assert.equal((await admin.api.orgs.getOpenApiSpecBySlug(org.id, 'pets')).data.processingState, 'complete');
  const { base } = await publishedSite(t, admin, org.id, [{ title: 'API', markdown: 'The API.\n\n{% openapi-operation spec="pets" path="/pets/{id}" method="get" %}\n{% endopenapi-operation %}\n' }]);
  const { page, problems } = await open();
  await page.goto(`${t.url}${base}`);
  const operation = page.locator('article.page section.openapi-operation');
  assert.equal(await operation.locator('.method').textContent(), 'GET');
  assert.equal(await operation.locator('.openapi-title code').textContent(), '/pets/{id}');
  assert.deepEqual(await operation.locator('table.openapi-parameters tbody td:first-child').allTextContents(), ['id']);
  assert.match((await operation.textContent()) ?? '', /Find a pet[\s\S]*Returns the pet <script>alert\(1\)<\/script> with this id\./);
  assert.equal(await operation.locator('script').count(), 0);
  assert.match(await operation.locator('.openapi-responses').textContent() ?? '', /200 The pet/);
  assert.deepEqual(problems, []);
});

test('files for crawlers and agents, markdown pages, caching and what unlisted sites tell robots', { timeout: 60_000 }, async () => {
  const { admin, org } = await newOrg(t);
  const { base, site, space, pageIds } = await publishedSite(t, admin, org.id, [
    { title: 'Start', markdown: 'Start here, then read [the guide](guide.md).\n' },
    { title: 'Guide', markdown: 'The guide.\n' },
  ]);
  const get = (path: string, headers: Record<string, string> = {}) => fetch(`${t.url}${base}${path}`, { headers, redirect: 'manual' });
  const robots = await (await get('robots.txt')).text();
  assert.match(robots, /Allow: \//);
  const sitemap = await (await get('sitemap.xml')).text();
  assert.match(sitemap, new RegExp(`<loc>${t.url}${base}start</loc>`));
  assert.match(sitemap, new RegExp(`<loc>${t.url}${base}guide</loc>`));
  assert.match(await (await get('llms.txt')).text(), new RegExp(`- \\[Guide\\]\\(${t.url}${base}guide\\.md\\)`));
  assert.match(await (await get('llms-full.txt')).text(), /# Start[\s\S]*# Guide/);
  const md = await get('start.md');
  assert.equal(md.headers.get('content-type'), 'text/markdown; charset=utf-8');
  assert.equal(await md.text(), '# Start\n\nStart here, then read [the guide](guide.md).\n');

  // ETags: a second request is a 304; a merge changes the page and its tag.
  const first = await get('guide');
  const etag = first.headers.get('etag')!;
  assert.equal((await get('guide', { 'if-none-match': etag })).status, 304);
  await mergeChanges(admin, space.id, [{ operation: 'update_page', page: pageIds[1], document: { markdown: 'The new guide.\n' } }], { subject: 'edit' });
  const changed = await get('guide', { 'if-none-match': etag });
  assert.equal(changed.status, 200);
  assert.match(await changed.text(), /The new guide\./);

  // On its own hostname the site is at the root, and its links too.
  await admin.api.orgs.updateSiteById(org.id, site.id, { hostname: 'docs.folio-test.example' } as never);
  const getByHost = () =>
    new Promise<{ status: number; body: string }>((resolve, reject) => {
      const url = new URL(`${t.url}/guide`);
      const req = request({ host: url.hostname, port: url.port, path: url.pathname, headers: { host: 'docs.folio-test.example' } }, (res) => {
        let body = '';
        res.on('data', (c) => (body += c));
        res.on('end', () => resolve({ status: res.statusCode!, body }));
      });
      req.on('error', reject);
      req.end();
    });
  // The server learns new hostnames on its next refresh (SITE_HOSTS_REFRESH_MS, 100 ms here).
  const byHost = await eventually(async () => {
    const res = await getByHost();
    assert.equal(res.status, 200);
    return res;
  }, { what: 'the site to answer on its hostname' });
  assert.equal(byHost.status, 200);
  assert.match(byHost.body, /<h1>Guide<\/h1>/);
  assert.match(byHost.body, /<a href="\/start">Start<\/a>/);

  // Unlisted: pages say noindex, robots.txt disallows.
  await admin.api.orgs.updateSiteById(org.id, site.id, { visibility: 'unlisted' } as never);
  const unlisted = await get('guide');
  assert.equal(unlisted.headers.get('x-robots-tag'), 'noindex');
  assert.match(await unlisted.text(), /<meta name="robots" content="noindex">/);
  assert.match(await (await get('robots.txt')).text(), /Disallow: \//);
  // Unpublished: gone.
  await admin.api.orgs.unpublishSite(org.id, site.id);
  assert.equal((await get('guide')).status, 404);
});

test('share links open a share-link site until revoked; visitor auth shows adaptive content by claims', { timeout: 90_000 }, async () => {
  const { admin, org } = await newOrg(t);
  const shared = await publishedSite(t, admin, org.id, [{ title: 'Internal', markdown: 'Internal notes.\n' }], { title: 'Shared Site', visibility: 'share-link' });
  const { data: link } = await admin.api.orgs.createSiteShareLink(org.id, shared.site.id, { name: 'partners' });
  const { page, problems } = await open();
  const denied = await page.goto(`${t.url}${shared.base}`);
  assert.equal(denied?.status(), 404);
  // The share link's published URL carries its token.
  const shareUrl = new URL(link.urls.published!);
  assert.ok(shareUrl.searchParams.get('share'));
  await page.goto(`${t.url}${shared.base}?share=${shareUrl.searchParams.get('share')}`);
  assert.ok(!page.url().includes('share='), 'the token leaves the address bar');
  assert.equal(await page.locator('main h1').textContent(), 'Internal');
  await page.goto(`${t.url}${shared.base}internal`);
  assert.equal(await page.locator('main h1').textContent(), 'Internal');
  await admin.api.orgs.updateSiteShareLinkById(org.id, shared.site.id, link.id, { active: false });
  assert.equal((await page.goto(`${t.url}${shared.base}internal`))?.status(), 404);

  const authed = await publishedSite(
    t,
    admin,
    org.id,
    [{ title: 'Plans', markdown: 'For everyone.\n\n{% if visitor.claims.plan === "pro" %}\nPro features are on.\n{% endif %}\n' }],
    { title: 'Members Site', visibility: 'visitor-auth' },
  );
  const { data: auth } = await admin.api.orgs.getSitePublishingAuthById(org.id, authed.site.id);
  const key = new TextEncoder().encode((auth as { privateKey: string }).privateKey);
  const token = (claims: Record<string, unknown>, expires = '1h') => new SignJWT(claims).setProtectedHeader({ alg: 'HS256' }).setExpirationTime(expires).sign(key);
  assert.equal((await page.goto(`${t.url}${authed.base}`))?.status(), 401);
  await page.goto(`${t.url}${authed.base}?jwt_token=${await token({ plan: 'pro' })}`);
  assert.match((await page.locator('article.page').textContent()) ?? '', /Pro features are on\./);
  const other = await browser.newContext();
  await other.route(/^(?!http:\/\/127\.0\.0\.1[:/])/, (route) => route.abort('blockedbyclient'));
  const free = await other.newPage();
  await free.goto(`${t.url}${authed.base}?jwt_token=${await token({ plan: 'free' })}`);
  assert.match((await free.locator('article.page').textContent()) ?? '', /For everyone\./);
  assert.doesNotMatch((await free.locator('article.page').textContent()) ?? '', /Pro features/);
  // Forged tokens: unsigned (alg none), another key, expired.
  const none = `${Buffer.from(JSON.stringify({ alg: 'none', typ: 'JWT' })).toString('base64url')}.${Buffer.from(JSON.stringify({ plan: 'pro' })).toString('base64url')}.`;
  const otherKey = await new SignJWT({ plan: 'pro' }).setProtectedHeader({ alg: 'HS256' }).sign(new TextEncoder().encode('not the key'));
  const expired = await token({ plan: 'pro' }, '-1m');
  for (const forged of [none, otherKey, expired]) {
    const res = await fetch(`${t.url}${authed.base}?jwt_token=${forged}`, { redirect: 'manual' });
    assert.equal(res.status, 401, `forged token accepted: ${forged.slice(0, 30)}`);
  }
  await other.close();
  // The 404s and the 401 asked for above are the only failures.
  assert.deepEqual(problems.filter((p) => !/Failed to load resource: the server responded with a status of 40[14]/.test(p)), []);
});

/** At least 200 hostile inputs, from vectors placed in every way page content can carry them. */
function xssCorpus(): string[] {
  const scripts = [
    '<script>alert(1)</script>',
    '<img src=x onerror=alert(1)>',
    '<svg onload=alert(1)>',
    '<iframe src="javascript:alert(1)"></iframe>',
    '<a href="javascript:alert(1)">x</a>',
    '<body onload=alert(1)>',
    '<details open ontoggle=alert(1)>',
    '"><script>alert(1)</script>',
    "'><img src=x onerror=alert(1)>",
    '<math><mtext><script>alert(1)</script></mtext></math>',
  ];
  const urls = ['javascript:alert(1)', 'JaVaScRiPt:alert(1)', 'java\tscript:alert(1)', 'data:text/html,<script>alert(1)</script>', 'vbscript:msgbox(1)', ' javascript:alert(1)', '&#106;avascript:alert(1)', '//evil.example/x.js', '\\\\evil.example', 'javascript://%0aalert(1)'];
  const corpus: string[] = [];
  for (const s of scripts) {
    corpus.push(s, `Text ${s} text`, `**${s}**`, `> ${s}`, `- ${s}`, `{% hint style="info" %}\n${s}\n{% endhint %}`, `| a |\n| - |\n| ${s} |`, `<details><summary>${s}</summary>\n\n${s}\n\n</details>`);
    corpus.push(`{% tabs %}\n{% tab title="${s.replace(/"/g, '&quot;')}" %}\n${s}\n{% endtab %}\n{% endtabs %}`, `<figure><img src="x" alt="${s.replace(/"/g, '')}"><figcaption>${s}</figcaption></figure>`);
  }
  for (const u of urls) {
    corpus.push(`[click](${u})`, `![img](${u})`, `<a href="${u}" class="button primary">b</a>`, `{% embed url="${u}" %}`, `{% content-ref url="${u}" %}\n[x](${u})\n{% endcontent-ref %}`, `{% file src="${u}" %}`, `[x](${u} "mention")`, `<img src="${u}" data-size="line">`, `{% @mermaid/diagram content="${u}" %}`, `<mark style="color:red;background:url(${u})">m</mark>`);
  }
  for (const s of scripts) for (const wrap of ['`', '$$', '<kbd>', '<sup>', '<sub>', '<code class="expression">', '<i class="fa-x">', '[^1]: ']) corpus.push(`${wrap}${s}${wrap.startsWith('<') ? wrap.replace('<', '</').replace(/ .*>/, '>') : wrap}`);
  return corpus;
}

test('an XSS corpus of 200+ payloads in page content executes nothing', { timeout: 120_000 }, async () => {
  const corpus = xssCorpus();
  assert.ok(corpus.length >= 200, `${corpus.length} payloads`);
  const { admin, org } = await newOrg(t);
  // Ten pages of payloads, separated so that one payload cannot swallow the next.
  const pages = Array.from({ length: 10 }, (_, i) => ({ title: `Payloads ${i}`, markdown: corpus.filter((_, j) => j % 10 === i).join('\n\n---\n\n') + '\n' }));
  const { base } = await publishedSite(t, admin, org.id, pages);
  const { page, problems } = await open();
  // Anything that runs would call alert (a dialog) or set this flag.
  await page.addInitScript(() => {
    (window as unknown as { __executed: number }).__executed = 0;
    window.alert = () => ((window as unknown as { __executed: number }).__executed += 1);
  });
  for (let i = 0; i < pages.length; i++) {
    await page.goto(`${t.url}${base}payloads-${i}`);
    assert.equal(await page.locator('main h1').textContent(), `Payloads ${i}`);
    const article = page.locator('article.page');
    assert.equal(await article.locator('script, iframe, object, embed, svg, body, math script').count(), 0, `page ${i}: active elements`);
    const bad = await article.evaluate((root) => {
      const found: string[] = [];
      for (const el of Array.from(root.querySelectorAll('*'))) {
        for (const a of Array.from(el.attributes)) {
          if (/^on/i.test(a.name)) found.push(`${el.tagName} ${a.name}`);
          if (['href', 'src', 'srcset', 'action', 'formaction'].includes(a.name) && /^\s*(javascript|vbscript|data:text)/i.test(a.value.replace(/[\u0000-\u0020]/g, ''))) found.push(`${el.tagName} ${a.name}=${a.value}`);
        }
      }
      return found;
    });
    assert.deepEqual(bad, [], `page ${i}`);
    // Click every link and button in the article: none may run code.
    for (const link of await article.locator('a[href]').all()) {
      const href = (await link.getAttribute('href')) ?? '';
      assert.ok(!/^\s*javascript:/i.test(href), href);
    }
    assert.equal(await page.evaluate(() => (window as unknown as { __executed: number }).__executed), 0, `page ${i}: a payload ran`);
  }
  assert.deepEqual(problems.filter((p) => !p.startsWith('console: Failed to load resource')), []);
});
