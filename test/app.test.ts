/**
 * The app (/app) in a real browser (test/support/app-browser.ts: one server and one chromium for
 * the file, a context per test): signing in, coming back to a deep link, the session ending under
 * an open screen, the Content-Security-Policy, accessibility (axe) and the size of the first load.
 * Screenshots go to test-artifacts/app/.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { FIRST_LOAD_BUDGET_BYTES, measureAppBundle } from '../bench/app-bundle.ts';
import { createPasswordSetupLink } from '../src/sign-in/service.ts';
import { APP_CSP } from '../src/web-app/routes.ts';
import { CSRF_HEADERS, expectNoA11yViolations, screenshot, useAppBrowser } from './support/app-browser.ts';
import { eventually } from './support/wait.ts';

const app = useAppBrowser();

const SIGN_IN_HEADING = 'Sign in to Folio';
const SESSION_ENDED = 'Your session has ended';

test('signing in with a password through the form lands on the app', async () => {
  const user = await app.userWithPassword();
  const { page } = await app.newPage();
  // The app's root without a session goes to sign-in first.
  await page.goto(app.url('/app/'));
  await page.waitForURL((u) => u.pathname === '/app/sign-in');
  await page.getByRole('heading', { name: SIGN_IN_HEADING }).waitFor();
  await screenshot(page, 'sign-in');
  await app.fillSignIn(page, user);
  await page.waitForURL((u) => u.pathname === '/app/');
  await page.getByRole('heading', { name: SIGN_IN_HEADING }).waitFor({ state: 'detached' });
  const session = await page.evaluate(() => fetch('/app/api/session').then((r) => r.json()));
  assert.equal(session.user.id, user.id);
});

test('a password setup link: says whose account it is, sets the password, signs in; used, it says so at once', async () => {
  const user = await app.t.user('Lena Link');
  const { url } = await createPasswordSetupLink(app.t.server.services, user.id);
  const { page } = await app.newPage();
  await page.goto(url);
  await page.getByRole('heading', { name: 'Choose your password' }).waitFor();
  await page.getByText(`For Lena Link (${user.email})`).waitFor();
  await expectNoA11yViolations(page, 'password setup');
  await screenshot(page, 'password-setup');
  await page.getByLabel('New password').fill('a long enough password');
  await page.getByLabel('Repeat the password').fill('a long enough password');
  await page.getByRole('button', { name: 'Set password' }).click();
  await page.waitForURL((u) => u.pathname === '/app/');
  const session = await page.evaluate(() => fetch('/app/api/session').then((r) => r.json()));
  assert.equal(session.user.id, user.id);

  // The same link again: refused before any password is typed.
  const again = await app.newPage();
  await again.page.goto(url);
  await again.page.getByRole('alert').filter({ hasText: 'invalid, expired or already used' }).waitFor();
  assert.equal(await again.page.getByLabel('New password').count(), 0, 'no form for a dead link');
});

test('a wrong password shows "Email or password is incorrect" and stays on sign-in', async () => {
  const user = await app.userWithPassword();
  const { page } = await app.newPage();
  await page.goto(app.url('/app/sign-in'));
  await app.fillSignIn(page, { ...user, password: 'not the password' });
  const alert = page.getByRole('alert');
  await alert.waitFor();
  assert.equal((await alert.textContent())?.trim(), 'Email or password is incorrect');
  assert.equal(new URL(page.url()).pathname, '/app/sign-in');
  // The form is still there to try again, and the error is announced with it.
  await expectNoA11yViolations(page, 'sign-in with an error');
  await screenshot(page, 'sign-in-wrong-password');
});

test('a deep link without a session goes to sign-in, then back to the link', async () => {
  const user = await app.userWithPassword('Olive Owner');
  const { data: org } = await user.api.orgs.createOrganization({ title: 'Deep Link Inc' });
  const { page } = await app.newPage();
  await page.goto(app.url(`/app/o/${org.id}`));
  await page.waitForURL((u) => u.pathname === '/app/sign-in');
  assert.equal(new URL(page.url()).searchParams.get('next'), `/o/${org.id}`);
  await app.fillSignIn(page, user);
  await page.waitForURL((u) => u.pathname === `/app/o/${org.id}`);
});

test('signing in through the API helper opens the app signed in', async () => {
  const user = await app.userWithPassword();
  const { page } = await app.signedInPage(user, { via: 'api', path: '/app/' });
  await page.waitForURL((u) => u.pathname === '/app/');
  assert.equal(await page.getByRole('heading', { name: SIGN_IN_HEADING }).count(), 0);
});

test('a session revoked under an open screen shows "Your session has ended"; signing in there closes it', async () => {
  const user = await app.userWithPassword();
  const { page } = await app.signedInPage(user, { via: 'api', path: '/app/' });
  assert.equal(await app.endSessions(user), 1);
  // The person comes back to the tab: the app asks whether the session still holds.
  await page.evaluate(() => document.dispatchEvent(new Event('visibilitychange')));
  const dialog = page.getByRole('dialog', { name: SESSION_ENDED });
  await dialog.waitFor();
  // The screen under it stays (what was typed is kept), and the email is filled in already.
  assert.equal(new URL(page.url()).pathname, '/app/');
  assert.equal(await dialog.getByLabel('Email').inputValue(), user.email);
  await expectNoA11yViolations(page, 'session-ended dialog');
  await screenshot(page, 'session-ended');
  await dialog.getByLabel('Password').fill(user.password);
  await dialog.getByRole('button', { name: 'Sign in' }).click();
  await dialog.waitFor({ state: 'detached' });
  assert.equal(new URL(page.url()).pathname, '/app/');
  const session = await page.evaluate(() => fetch('/app/api/session').then((r) => r.status));
  assert.equal(session, 200);
});

test('signing out in another tab shows the dialog in this one', async () => {
  const user = await app.userWithPassword();
  const first = await app.signedInPage(user, { via: 'form', path: '/app/' });
  const second = await app.newTab(first.context);
  await second.page.goto(app.url('/app/'));
  const status = await second.page.evaluate((headers) => fetch('/app/api/sign-out', { method: 'POST', headers }).then((r) => r.status), CSRF_HEADERS);
  assert.equal(status, 204);
  await first.page.evaluate(() => document.dispatchEvent(new Event('visibilitychange')));
  const dialog = first.page.getByRole('dialog', { name: SESSION_ENDED });
  await dialog.waitFor();
  await app.fillSignIn(first.page, user, { within: dialog });
  await dialog.waitFor({ state: 'detached' });
});

test('app pages carry the CSP header, and using the sign-in page violates nothing', async () => {
  for (const path of ['/app', '/app/', '/app/sign-in', '/app/o/anything']) {
    const res = await app.t.request('GET', path);
    assert.equal(res.status, 200, path);
    assert.equal(res.headers.get('content-security-policy'), APP_CSP, path);
    assert.match(String(res.body), /<script type="module"[^>]* src="\/app\/assets\/[^"]+\.js"/, `${path} is the built page`);
  }
  const user = await app.userWithPassword();
  const { page, problems } = await app.newPage();
  const response = await page.goto(app.url('/app/sign-in'));
  assert.equal(response?.headers()['content-security-policy'], APP_CSP);
  await app.fillSignIn(page, { ...user, password: 'wrong password' });
  await page.getByRole('alert').waitFor();
  await app.fillSignIn(page, user);
  await page.waitForURL((u) => u.pathname === '/app/');
  assert.deepEqual(problems.cspViolations, []);
});

test('the problem collector reports a CSP violation (so an empty list means something)', async () => {
  const { page, problems } = await app.newPage();
  await page.goto(app.url('/app/sign-in'));
  await page.evaluate(() => {
    const script = document.createElement('script');
    script.textContent = 'window.inlineRan = true';
    document.body.append(script);
  });
  // The report crosses from the page to the test asynchronously.
  await eventually(() => assert.match(problems.cspViolations.join('\n'), /script-src/), { what: 'the CSP violation reported' });
  assert.equal(await page.evaluate(() => (window as { inlineRan?: boolean }).inlineRan), undefined, 'the inline script did not run');
  problems.allow(/CSP/);
  assert.deepEqual(problems.unexpected(), []);
});

test('axe finds nothing serious or critical on the sign-in page', async () => {
  const { page } = await app.newPage();
  await page.goto(app.url('/app/sign-in'));
  await page.getByRole('heading', { name: SIGN_IN_HEADING }).waitFor();
  await expectNoA11yViolations(page, 'sign-in');
});

test('the first load stays under its budget, and is what the browser fetches for sign-in', async () => {
  const sizes = measureAppBundle();
  assert.ok(
    sizes.firstLoad.gzip < FIRST_LOAD_BUDGET_BYTES,
    `first-load JS is ${sizes.firstLoad.gzip} bytes gzipped (${sizes.firstLoad.brotli} brotli), over the budget of ${FIRST_LOAD_BUDGET_BYTES} (bench/app-bundle.ts lists the files)`,
  );
  // The measure follows index.html and the built files' imports; the browser agrees on what it needs.
  const { page } = await app.newPage();
  const scripts = new Set<string>();
  page.on('response', (r) => {
    if (r.request().resourceType() === 'script') scripts.add(new URL(r.url()).pathname.replace('/app/assets/', ''));
  });
  await page.goto(app.url('/app/sign-in'));
  await page.getByRole('heading', { name: SIGN_IN_HEADING }).waitFor();
  assert.deepEqual([...scripts].sort(), sizes.firstLoad.files);
});
