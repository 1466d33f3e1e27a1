import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { bundleIntegration, eventsUntil } from './support/integrations.ts';
import { chromium, type Browser } from 'playwright-core';
import { newOrg } from './support/factories.ts';
import { officialSchema } from './support/official-schema.ts';
import { startTestServer, type TestServer } from './support/server.ts';
import { publishedSite } from './support/site.ts';
import { eventually } from './support/wait.ts';

/**
 * Integrations on a published site: an installation with `site:script:inject` has its script (the
 * answer of its own @gitbook/runtime code to `fetch_published_script`) loaded by the site's pages,
 * allowed by their Content-Security-Policy, and held back until the visitor accepts cookies when it
 * uses them; page views and "was this page helpful?" answers reach installations that may read
 * them as `site_view` and `page_feedback` events. In a real browser (Debian's chromium).
 */

const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
const validateEvent = officialSchema('Event');

let t: TestServer;
let browser: Browser;
let script: string;
before(async () => {
  t = await startTestServer({ siteCacheTtlMs: 0, integrationRetryBaseMs: 50 });
  script = await bundleIntegration('site-integration');
  browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox', '--disable-dev-shm-usage'] });
});
after(async () => {
  await browser?.close();
  await t?.close();
});

async function siteWithIntegration(scopes: string[], extra: Record<string, unknown> = {}) {
  const { admin, org } = await newOrg(t);
  const site = await publishedSite(t, admin, org.id, [
    { title: 'Welcome', markdown: 'Welcome to the handbook.\n' },
    { title: 'Setup', markdown: 'Install it.\n' },
  ]);
  const name = `analytics-${Math.random().toString(36).slice(2, 8)}`;
  await admin.api.integrations.publishIntegration(name, {
    title: 'Analytics',
    organization: org.id,
    target: 'site',
    scopes,
    script,
    configurations: { site: { properties: { tracking_id: { type: 'string', title: 'Tracking id' } }, required: ['tracking_id'] } },
    ...extra,
  } as never);
  const { data: inst } = await admin.api.integrations.installIntegration(name, { organization: org.id });
  await admin.api.integrations.installIntegrationOnSite(name, inst.id, { siteId: site.site.id } as never);
  await admin.api.integrations.updateIntegrationSiteInstallation(name, inst.id, site.site.id, { configuration: { tracking_id: 'UA-42' } } as never);
  return { admin, org, site, name, installationId: inst.id };
}

test('an installed script is listed, served from its own answer, allowed by the CSP and loaded by the pages', { timeout: 120_000 }, async () => {
  const { admin, org, site, name, installationId } = await siteWithIntegration(['site:script:inject', 'site:views:read'], {
    contentSecurityPolicy: { 'script-src': "https://cdn.tracker.example 'unsafe-eval'", 'connect-src': 'https://collect.tracker.example', 'frame-ancestors': '*' },
  });
  // listSiteIntegrationScripts, through the official client (its response checked against the official schema).
  const { data: scripts } = await admin.api.orgs.listSiteIntegrationScripts(org.id, site.site.id);
  assert.equal(scripts.length, 1);
  assert.match(scripts[0]!.script, new RegExp(`/v1/integrations/${name}/installations/${installationId}/sites/${site.site.id}/script\\.js\\?v=`));
  assert.equal(scripts[0]!.cookies, false);
  assert.match(scripts[0]!.contentSecurityPolicy ?? '', /script-src https:\/\/cdn\.tracker\.example/);
  // The published content of the site names the same scripts.
  assert.deepEqual((await admin.api.orgs.getPublishedContentSite(org.id, site.site.id)).data.scripts, scripts);

  // The script is what the integration answered, with the site installation's configuration.
  const served = await fetch(scripts[0]!.script);
  assert.equal(served.status, 200);
  assert.match(served.headers.get('content-type') ?? '', /^text\/javascript/);
  assert.equal(await served.text(), `document.documentElement.setAttribute('data-tracked', "UA-42");`);
  // Later visitors get the same answer without running the integration again: one event.
  await fetch(scripts[0]!.script);
  let events = await eventsUntil(admin, name, (items) => items.some((e) => e.payload.type === 'fetch_published_script'));
  const fetches = events.filter((e) => e.payload.type === 'fetch_published_script');
  assert.equal(fetches.length, 1);
  assert.equal(fetches[0]!.status, 'success');
  assert.ok(validateEvent(fetches[0]!.payload), validateEvent.errors());
  assert.equal(fetches[0]!.payload.siteId, site.site.id);
  const { data: detail } = await admin.api.integrations.getIntegrationEvent(name, fetches[0]!.id);
  assert.match(detail.trace!.logs.map((l) => l.message).join('\n'), new RegExp(`script for site ${site.site.id} with UA-42`));

  // The page's policy lets the script (and the hosts the integration named) in; keywords and frame-ancestors are not taken.
  const page = await fetch(`${t.url}${site.base}`);
  const csp = page.headers.get('content-security-policy')!;
  assert.match(csp, new RegExp(`script-src 'self' ${new URL(t.url).origin.replace(/[.]/g, '\\.')} https://cdn\\.tracker\\.example(;|$)`));
  assert.match(csp, /connect-src 'self' https:\/\/collect\.tracker\.example/);
  assert.doesNotMatch(csp, /unsafe-eval/);
  assert.match(csp, /frame-ancestors 'self'(;|$)/);

  // In a browser: the script runs, and the view reaches the integration as a site_view event.
  const context = await browser.newContext();
  await context.route(/^(?!http:\/\/127\.0\.0\.1[:/])/, (route) => route.abort('blockedbyclient'));
  const tab = await context.newPage();
  const problems: string[] = [];
  tab.on('pageerror', (e) => problems.push(e.message));
  tab.on('console', (m) => m.type() === 'error' && problems.push(m.text()));
  await tab.goto(`${t.url}${site.base}setup`);
  await tab.waitForFunction(() => document.documentElement.getAttribute('data-tracked') === 'UA-42');
  events = await eventsUntil(admin, name, (items) => items.some((e) => e.payload.type === 'site_view' && e.status === 'success'));
  const view = events.find((e) => e.payload.type === 'site_view')!;
  assert.ok(validateEvent(view.payload), validateEvent.errors());
  assert.equal(view.payload.pageId, site.pageIds[1]);
  assert.equal(view.payload.siteId, site.site.id);
  assert.equal(view.payload.url, `${t.url}${site.base}setup`);
  const visitor = view.payload.visitor as { anonymousId: string; userAgent: string; ip: string; cookies: Record<string, string> };
  assert.match(visitor.userAgent, /Chrome/);
  assert.ok(visitor.anonymousId.length >= 16);
  assert.deepEqual(problems, []);
  await context.close();

  // Once uninstalled, pages name no script and the address answers 404.
  await admin.api.integrations.uninstallIntegrationFromSite(name, installationId, site.site.id);
  const after = await (await fetch(`${t.url}${site.base}`)).text();
  assert.doesNotMatch(after, /script\.js/);
  assert.equal((await fetch(scripts[0]!.script)).status, 404);
  assert.deepEqual((await admin.api.orgs.listSiteIntegrationScripts(org.id, site.site.id)).data, []);
});

test('a script using cookies waits for consent; feedback reaches the integration, with and without JavaScript', { timeout: 120_000 }, async () => {
  const { admin, site, name } = await siteWithIntegration(['site:script:inject', 'site:script:cookies', 'page:feedback:read']);
  const context = await browser.newContext();
  await context.route(/^(?!http:\/\/127\.0\.0\.1[:/])/, (route) => route.abort('blockedbyclient'));
  const tab = await context.newPage();
  const scriptLoads: string[] = [];
  tab.on('request', (r) => r.url().includes('/script.js') && scriptLoads.push(r.url()));
  await tab.goto(`${t.url}${site.base}`, { waitUntil: 'networkidle' });
  const banner = tab.locator('[data-cookie-banner]');
  await banner.waitFor({ state: 'visible' });
  // Not even requested before the visitor says yes.
  assert.deepEqual(scriptLoads, []);
  assert.equal(await tab.evaluate(() => document.documentElement.getAttribute('data-tracked')), null);
  await banner.getByRole('button', { name: 'Accept' }).click();
  await tab.waitForFunction(() => document.documentElement.getAttribute('data-tracked') === 'UA-42');
  // The choice is remembered: the next page loads it at once, with no banner.
  await tab.goto(`${t.url}${site.base}setup`);
  await tab.waitForFunction(() => document.documentElement.getAttribute('data-tracked') === 'UA-42');
  assert.equal(await banner.isVisible(), false);

  // Feedback with JavaScript: sent in place (a comment first, then the rating's button).
  await tab.getByLabel('Anything to add? (optional)').fill('Missing the Windows steps');
  await tab.getByRole('group', { name: 'Was this page helpful?' }).getByRole('button', { name: 'No' }).click();
  await tab.locator('#feedback-sent').waitFor({ state: 'visible' });
  let events = await eventsUntil(admin, name, (items) => items.some((e) => e.payload.type === 'page_feedback' && e.status === 'success'));
  const feedback = events.find((e) => e.payload.type === 'page_feedback')!;
  assert.ok(validateEvent(feedback.payload), validateEvent.errors());
  assert.deepEqual(feedback.payload.feedback, { rating: 'bad', comment: 'Missing the Windows steps' });
  assert.equal(feedback.payload.pageId, site.pageIds[1]);
  const { data: detail } = await admin.api.integrations.getIntegrationEvent(name, feedback.id);
  assert.match(detail.trace!.logs.map((l) => l.message).join('\n'), /feedback bad on page .*: Missing the Windows steps/);
  await context.close();

  // Without JavaScript: a form post, then back to the page's thank-you note.
  const plain = await browser.newContext({ javaScriptEnabled: false });
  const noJs = await plain.newPage();
  await noJs.goto(`${t.url}${site.base}`);
  await noJs.getByRole('button', { name: 'Yes' }).click();
  await noJs.waitForURL(/#feedback-sent$/);
  assert.equal(await noJs.locator('#feedback-sent').isVisible(), true);
  await plain.close();
  events = await eventsUntil(admin, name, (items) => items.filter((e) => e.payload.type === 'page_feedback').length === 2);
  assert.deepEqual(events.find((e) => e.payload.type === 'page_feedback' && (e.payload.feedback as { rating: string }).rating === 'good')?.payload.pageId, site.pageIds[0]);

  // Bad input is a 400 saying what to fix; a site without a feedback receiver (nor feedback turned on) shows no form.
  const bad = await fetch(`${t.url}${site.base}_folio/feedback`, { method: 'POST', headers: { 'content-type': 'application/json', accept: 'application/json' }, body: JSON.stringify({ page: '', rating: 'great' }) });
  assert.equal(bad.status, 400);
  assert.match(((await bad.json()) as { error: { message: string } }).error.message, /rating/);
  const missing = await fetch(`${t.url}${site.base}_folio/feedback`, { method: 'POST', headers: { 'content-type': 'application/json', accept: 'application/json' }, body: JSON.stringify({ page: 'nowhere', rating: 'ok' }) });
  assert.equal(missing.status, 404);
  const { admin: other, org: otherOrg } = await newOrg(t);
  const plainSite = await publishedSite(t, other, otherOrg.id, [{ title: 'Home', markdown: 'Hi.\n' }]);
  const html = await (await fetch(`${t.url}${plainSite.base}`)).text();
  assert.doesNotMatch(html, /data-feedback|folio-views|cookie-banner/);
  const nobody = await fetch(`${t.url}${plainSite.base}_folio/view`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ url: `${t.url}${plainSite.base}` }) });
  assert.equal(nobody.status, 204);
});

test('an integration block shows what its component renders (ContentKit as safe HTML), its frames allowed by the page policy', { timeout: 120_000 }, async () => {
  const { admin, org } = await newOrg(t);
  const name = `status-${Math.random().toString(36).slice(2, 8)}`;
  await admin.api.integrations.publishIntegration(name, { title: 'Status', organization: org.id, script, blocks: [{ id: 'status', title: 'Status' }] } as never);
  const site = await publishedSite(t, admin, org.id, [
    { title: 'Welcome', markdown: `Our status:\n\n{% @${name}/status env="prod" %}\n\nAnd one not installed:\n\n{% @nobody/thing %}\n` },
  ]);
  const { data: inst } = await admin.api.integrations.installIntegration(name, { organization: org.id });
  await admin.api.integrations.installIntegrationOnSpace(name, inst.id, { space: site.space.id });

  // A page waits a few seconds for its blocks: on a loaded machine the first reader may get the
  // placeholder while the integration's runtime starts, and a later one the rendered block.
  const rendered = /<div class="integration-block">[\s\S]*?<\/iframe>[\s\S]*?<\/div><\/div>/;
  const { html, res } = await eventually(
    async () => {
      const res = await fetch(`${t.url}${site.base}`);
      assert.equal(res.status, 200);
      const text = await res.text();
      return rendered.test(text) && { html: text, res };
    },
    { timeoutMs: 30_000, what: 'the integration block rendered on the page' },
  );
  const block = rendered.exec(html)?.[0] ?? '';
  assert.match(block, /<strong>Status of prod<\/strong>/);
  assert.match(block, /<strong>green<\/strong>, see <a href="https:\/\/status\.example\.com\/?"/);
  assert.match(block, /<pre><code class="language-bash">.*hljs-/s);
  assert.match(block, /<a class="ck-button ck-secondary" href="https:\/\/status\.example\.com\/app"/);
  assert.match(block, /<button type="button" class="ck-button ck-secondary" disabled>Refresh<\/button>/);
  assert.match(block, /<iframe class="ck-webframe" src="https:\/\/embed\.example\.com\/widget" sandbox="allow-scripts allow-popups allow-forms allow-presentation"/);
  assert.match(block, /&lt;script&gt;alert\(1\)&lt;\/script&gt;/);
  assert.doesNotMatch(html, /javascript:/);
  assert.match(html, /<div class="integration" data-integration="nobody">/);
  assert.match(res.headers.get('content-security-policy') ?? '', /frame-src https:\/\/embed\.example\.com(;|$)/);

  // Rendered once for many readers: one ui_render event, validated against the official schema.
  await fetch(`${t.url}${site.base}`);
  const events = await eventsUntil(admin, name, (items) => items.some((e) => e.payload.type === 'ui_render'));
  const renders = events.filter((e) => e.payload.type === 'ui_render');
  assert.equal(renders.length, 1);
  assert.equal(renders[0]!.status, 'success');
  assert.ok(validateEvent(renders[0]!.payload), validateEvent.errors());
  assert.deepEqual(renders[0]!.payload.props, { env: 'prod' });

  // In a browser: nothing refused by the policy, nothing run from the block's text.
  const context = await browser.newContext();
  await context.route(/^(?!http:\/\/127\.0\.0\.1[:/])/, (route) => route.abort('blockedbyclient'));
  const tab = await context.newPage();
  const problems: string[] = [];
  tab.on('console', (m) => m.type() === 'error' && !m.text().includes('ERR_BLOCKED_BY_CLIENT') && problems.push(m.text()));
  tab.on('dialog', async (d) => (problems.push(`dialog: ${d.message()}`), d.dismiss()));
  await tab.goto(`${t.url}${site.base}`);
  assert.equal(await tab.locator('.integration-block strong').first().textContent(), 'Status of prod');
  assert.equal(await tab.locator('.integration-block iframe').count(), 1);
  assert.deepEqual(problems, []);
  await context.close();
});
