import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { SignJWT } from 'jose';
import { chromium, type Browser } from 'playwright-core';
import { newOrg } from './support/factories.ts';
import { CHROMIUM, CHROMIUM_ARGS, expectNoA11yViolations } from './support/app-browser.ts';
import { startTestServer, type TestServer, type TestUser } from './support/server.ts';
import { publishedSite } from './support/site.ts';

/**
 * Reader events from Folio's own published pages: site.js sends page views, searches from the
 * search box and "was this page helpful?" ratings to `<site>/~gitbook/events`, in batches, and
 * `aggregateSiteEvents` shows them by page and by day. In a real browser (Debian's chromium) for
 * the reader's side; over HTTP for the endpoint's limits and refusals.
 */

let t: TestServer;
let browser: Browser;
before(async () => {
  t = await startTestServer({ siteCacheTtlMs: 0 });
  browser = await chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_ARGS });
});
after(async () => {
  await browser?.close();
  await t?.close();
});

const PAGES = [
  { title: 'Welcome', markdown: 'Welcome to the handbook.\n' },
  { title: 'Installing zebra', markdown: 'Install zebra from the **terminal**.\n' },
];

/** The columns of an aggregation as { column: values }. */
async function aggregate(admin: TestUser, orgId: string, siteId: string, body: Record<string, unknown>) {
  const { data } = await admin.api.orgs.aggregateSiteEvents(orgId, siteId, { range: 'last24Hours', ...body } as never);
  return Object.fromEntries(data.columns.map((c) => [c.column, c.values]));
}

test('a reader views a page, searches and rates it; the site insights show each, for that page and that day', { timeout: 120_000 }, async () => {
  const { admin, org } = await newOrg(t);
  const { site, base, space, pageIds } = await publishedSite(t, admin, org.id, PAGES);
  // The site's customization turns the rating control on, as on GitBook.
  await admin.api.orgs.updateSiteCustomizationById(org.id, site.id, { feedback: { enabled: true } } as never);
  const zebra = pageIds[1]!;

  const context = await browser.newContext();
  // Nothing leaves this machine: any other request fails the test.
  const outside: string[] = [];
  await context.route(/^(?!http:\/\/127\.0\.0\.1[:/])/, (route) => (outside.push(route.request().url()), route.abort('blockedbyclient')));
  const page = await context.newPage();
  const problems: string[] = [];
  page.on('console', (m) => m.type() === 'error' && problems.push(m.text()));
  page.on('pageerror', (e) => problems.push(e.message));
  const batches: { events: { type: string }[] }[] = [];
  page.on('request', (r) => r.url().endsWith('/~gitbook/events') && batches.push(JSON.parse(r.postData() ?? '{}')));

  await page.goto(`${t.url}${base}installing-zebra`);
  await page.getByRole('searchbox', { name: 'Search' }).fill('zebra');
  await page.locator('.search-live a').first().waitFor();
  // The control: three labelled buttons in a group named by its question.
  const rating = page.getByRole('group', { name: 'Was this page helpful?' });
  assert.deepEqual(await rating.getByRole('button').allTextContents(), ['Yes', 'Somewhat', 'No']);
  await expectNoA11yViolations(page, 'the rating control', { include: '.feedback' });
  await rating.getByRole('button', { name: 'Yes' }).click();
  await page.getByRole('status').filter({ hasText: 'Thank you for your feedback.' }).waitFor();
  await context.close();

  // The view, the search (counted when the reader left the box) and the rating, in one batch or two
  // (the view goes alone when the reader takes more than three seconds).
  assert.deepEqual(batches.flatMap((b) => b.events.map((e) => e.type)), ['page_view', 'search_type_query', 'page_post_feedback']);
  assert.ok(batches.length <= 2, `${batches.length} batches`);
  assert.deepEqual(problems, []);
  assert.deepEqual(outside, []);

  const byPage = await aggregate(admin, org.id, site.id, {
    select: [{ column: 'page' }, { column: 'eventType' }, { column: 'eventsCount' }, { column: 'visitorsCount' }, { column: 'sessionsCount' }],
    groupBy: [{ column: 'page' }, { column: 'eventType' }],
    order: { by: { column: 'eventType' }, direction: 'asc' },
  });
  assert.deepEqual(byPage.page, Array(3).fill({ page: zebra, space: space.id }));
  assert.deepEqual(byPage.eventType, ['page_post_feedback', 'page_view', 'search_type_query']);
  assert.deepEqual(byPage.eventsCount, [1, 1, 1]);
  assert.deepEqual(byPage.visitorsCount, [1, 1, 1]);
  const searches = await aggregate(admin, org.id, site.id, { select: [{ column: 'eventSearchQuery' }, { column: 'eventsCount' }], groupBy: [{ column: 'eventSearchQuery' }] });
  assert.deepEqual(searches.eventSearchQuery, ['zebra']);
  const ratings = await aggregate(admin, org.id, site.id, { select: [{ column: 'page' }, { column: 'pageFeedbackRating' }], groupBy: [{ column: 'page' }], where: [{ column: 'eventType', values: ['page_post_feedback'] }] });
  assert.deepEqual(ratings.pageFeedbackRating, [{ good: 1, ok: 0, bad: 0 }]);
  const byDay = await aggregate(admin, org.id, site.id, {
    select: [{ column: 'datetime', interval: 'day' }, { column: 'eventsCount' }, { column: 'visitorsCount' }, { column: 'sessionsCount' }],
    groupBy: [{ column: 'datetime', interval: 'day' }],
  });
  assert.deepEqual(byDay.datetime, [`${new Date(t.clock.now()).toISOString().slice(0, 10)}T00:00:00.000Z`]);
  assert.deepEqual([byDay.eventsCount, byDay.visitorsCount, byDay.sessionsCount], [[3], [1], [1]]);
});

/** Posts a batch to a site's events endpoint. */
function post(base: string, body: unknown, headers: Record<string, string> = {}) {
  return fetch(`${t.url}${base}~gitbook/events`, { method: 'POST', headers: { 'content-type': 'text/plain', 'user-agent': 'reader-test', ...headers }, body: typeof body === 'string' ? body : JSON.stringify(body) });
}

test('the events endpoint: bad input is a 4xx, readers the site does not admit are refused, sessions, Do Not Track, limits', { timeout: 120_000 }, async () => {
  const { admin, org } = await newOrg(t);
  const open = await publishedSite(t, admin, org.id, PAGES);
  const url = (path = '') => `${t.url}${open.base}${path}`;
  const zebra = open.pageIds[1]!;
  // Visitors are counted per day: keep this test's half hour within one day.
  const toMidnight = 86_400_000 - (t.clock.now() % 86_400_000);
  if (toMidnight < 45 * 60_000) t.clock.advance(toMidnight + 60_000);

  // Bad input: 400 naming what to fix, 413 past 16 KB.
  const refused = async (body: unknown, pattern: RegExp, status = 400) => {
    const res = await post(open.base, body);
    assert.equal(res.status, status, JSON.stringify(body).slice(0, 80));
    assert.match(((await res.json()) as { error: { message: string } }).error.message, pattern);
  };
  await refused('not json', /JSON/);
  await refused({ events: [] }, /events/);
  await refused({ events: Array(21).fill({ type: 'page_view', url: url() }) }, /events/);
  await refused({ events: [{ type: 'page_scroll', url: url() }] }, /type/);
  await refused({ events: [{ type: 'page_view', url: 'nowhere' }] }, /events\[0\]\.url/);
  await refused({ events: [{ type: 'page_view', url: `${t.url}/elsewhere/installing-zebra` }] }, /not an address of this site/);
  await refused({ events: [{ type: 'search_type_query', url: url() }] }, /query/);
  await refused({ events: [{ type: 'page_post_feedback', url: url(), feedback: { rating: 'great' } }] }, /rating/);
  await refused({ events: [{ type: 'page_view', url: url(), visitorId: 'me' }] }, /visitorId|additional/i);
  await refused({ events: [{ type: 'page_view', url: url(), referrer: 'x'.repeat(17_000) }] }, /large|limit/i, 413);
  // Another site's page cannot post them (the browser says so).
  assert.equal((await post(open.base, { events: [{ type: 'page_view', url: url() }] }, { 'sec-fetch-site': 'cross-site' })).status, 403);

  // A view and a search are recorded for the page; a page that is not there counts nothing.
  assert.equal((await post(open.base, { events: [{ type: 'page_view', url: url('installing-zebra') }, { type: 'search_type_query', url: url('installing-zebra'), query: ' zebra ' }, { type: 'page_view', url: url('no-such-page') }] })).status, 204);
  // Half an hour later the same reader starts a new session; another reader is another visitor.
  t.clock.advance(31 * 60_000);
  assert.equal((await post(open.base, { events: [{ type: 'page_view', url: url('installing-zebra') }] })).status, 204);
  assert.equal((await post(open.base, { events: [{ type: 'page_view', url: url() }] }, { 'user-agent': 'another-reader' })).status, 204);
  // A question asked on the site is the same reader's, in the same session.
  const asked = await fetch(url(`~gitbook/ask?question=${encodeURIComponent('install zebra')}`), { headers: { 'user-agent': 'reader-test' } });
  assert.equal(asked.status, 200);
  assert.match(await asked.text(), /event: done/);
  // Do Not Track, Global Privacy Control: views and searches are not recorded; a rating is, linked to nothing.
  for (const header of [{ dnt: '1' }, { 'sec-gpc': '1' }] as Record<string, string>[]) {
    const res = await post(open.base, { events: [{ type: 'page_view', url: url('installing-zebra') }, { type: 'search_type_query', url: url(), query: 'private' }] }, header);
    assert.equal(res.status, 204);
  }
  // A rating needs the site to ask for it (its customization): until then it counts nothing.
  const rate = { events: [{ type: 'page_post_feedback', url: url('installing-zebra'), feedback: { rating: 'bad' } }] };
  assert.equal((await post(open.base, rate, { dnt: '1' })).status, 204);
  await admin.api.orgs.updateSiteCustomizationById(org.id, open.site.id, { feedback: { enabled: true } } as never);
  assert.equal((await post(open.base, rate, { dnt: '1' })).status, 204);
  // Without JavaScript the rating is a form post: recorded too, then back to the page.
  const form = await fetch(url('_folio/feedback'), { method: 'POST', redirect: 'manual', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: 'page=installing-zebra&rating=good' });
  assert.equal(form.status, 303);

  const byType = await aggregate(admin, org.id, open.site.id, {
    select: [{ column: 'eventType' }, { column: 'eventsCount' }, { column: 'visitorsCount' }, { column: 'sessionsCount' }, { column: 'pageFeedbackRating' }],
    groupBy: [{ column: 'eventType' }],
    order: { by: { column: 'eventType' }, direction: 'asc' },
  });
  assert.deepEqual(byType.eventType, ['ask_question', 'page_post_feedback', 'page_view', 'search_type_query']);
  assert.deepEqual(byType.eventsCount, [1, 2, 3, 1]);
  // Views: one reader in two sessions, another reader in one.
  assert.deepEqual(byType.visitorsCount, [1, 2, 2, 1]);
  assert.deepEqual(byType.sessionsCount, [1, 2, 3, 1]);
  assert.deepEqual(byType.pageFeedbackRating[1], { good: 1, ok: 0, bad: 1 });
  // The question joins the first reader's second session: still two visitors, three sessions.
  const readers = await aggregate(admin, org.id, open.site.id, { select: [{ column: 'visitorsCount' }, { column: 'sessionsCount' }], where: [{ column: 'eventType', values: ['page_view', 'ask_question'] }] });
  assert.deepEqual([readers.visitorsCount, readers.sessionsCount], [[2], [3]]);
  const byPage = await aggregate(admin, org.id, open.site.id, { select: [{ column: 'page' }, { column: 'urlPath' }, { column: 'eventsCount' }], groupBy: [{ column: 'page' }, { column: 'urlPath' }], where: [{ column: 'eventType', values: ['page_view'] }], order: { by: { column: 'eventsCount' }, direction: 'desc' } });
  assert.deepEqual(byPage.page, [{ page: zebra, space: open.space.id }, { page: open.pageIds[0], space: open.space.id }]);
  assert.deepEqual(byPage.urlPath, [`${open.base}installing-zebra`, open.base]);

  // Readers a site does not admit cannot send its events: a share-link site without its link, a
  // visitor-auth site without a valid token.
  const shared = await publishedSite(t, admin, org.id, PAGES, { title: 'Partners', visibility: 'share-link' });
  const view = (base: string) => ({ events: [{ type: 'page_view', url: `${t.url}${base}installing-zebra` }] });
  assert.equal((await post(shared.base, view(shared.base))).status, 404);
  assert.equal((await post(shared.base, view(shared.base), { cookie: `folio_share_${shared.site.id}=not-the-key` })).status, 404);
  const { data: link } = await admin.api.orgs.createSiteShareLink(org.id, shared.site.id, { name: 'partners' });
  const key = new URL(link.urls.published!).searchParams.get('share')!;
  assert.equal((await post(shared.base, view(shared.base), { cookie: `folio_share_${shared.site.id}=${key}` })).status, 204);
  const authed = await publishedSite(t, admin, org.id, PAGES, { title: 'Members', visibility: 'visitor-auth' });
  const forged = await new SignJWT({ plan: 'pro' }).setProtectedHeader({ alg: 'HS256' }).setExpirationTime('1h').sign(new TextEncoder().encode('not the key'));
  assert.equal((await post(authed.base, view(authed.base))).status, 404);
  assert.equal((await post(authed.base, view(authed.base), { cookie: `folio_auth_${authed.site.id}=${forged}` })).status, 404);
  const counts = async (siteId: string) => (await aggregate(admin, org.id, siteId, { select: [{ column: 'eventsCount' }] })).eventsCount;
  assert.deepEqual(await counts(shared.site.id), [1]);
  assert.deepEqual(await counts(authed.site.id), [0]);

  // Sixty batches a minute per reader address and site; then 429.
  let status = 0;
  for (let i = 0; i < 61 && status !== 429; i++) status = (await post(open.base, { events: [{ type: 'page_view', url: url('no-such-page') }] })).status;
  assert.equal(status, 429);
});
