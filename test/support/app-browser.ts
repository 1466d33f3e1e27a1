/**
 * The app (/app) in a real browser: one test server and one headless chromium per test file, a
 * fresh browser context (cookies, storage) per page, and checks every app test wants:
 *
 *   const app = useAppBrowser();          // at the top of the file: registers before/after hooks
 *   test('…', async () => {
 *     const user = await app.userWithPassword();
 *     const { page } = await app.signedInPage(user);
 *     await page.goto(app.url('/app/o/…'));
 *     await expectNoA11yViolations(page, 'organization');
 *     await screenshot(page, 'organization');
 *   });
 *
 * Every page opened with the harness collects problems: console errors, uncaught exceptions,
 * Content-Security-Policy violations, 5xx answers and browser dialogs. After each test they fail
 * that test (with the list) unless the test said it expects them (`problems.allow(/…/)`), and the
 * test's contexts are closed. A 4xx is not a problem by itself (the app asks /app/api/session and
 * gets 401 before anyone signs in); a test that cares asserts on what the screen shows.
 *
 * The pages keep the app's CSP: axe is evaluated through the DevTools protocol (page.evaluate),
 * which the policy does not govern, so no context needs `bypassCSP` and every test also checks
 * that the app itself stays within its policy.
 */
import { mkdirSync } from 'node:fs';
import { after, afterEach, before } from 'node:test';
import axe from 'axe-core';
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core';
import { buildApp } from '../../scripts/build-app.ts';
import type { Config } from '../../src/platform/config.ts';
import { setPassword } from '../../src/sign-in/service.ts';
import { startTestServer, type TestServer, type TestUser } from './server.ts';
import { CHROMIUM_ARGS } from '../../src/pdf/browser.ts';

export const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
/** Where `screenshot` writes (test-artifacts/ is ignored by git). */
export const APP_ARTIFACTS = new URL('../../test-artifacts/app/', import.meta.url);
export const DEFAULT_PASSWORD = 'correct horse battery staple';
/** The CSRF header the server asks of cookie-authenticated writes (docs/app.md). */
export const CSRF_HEADERS = { 'x-folio-csrf': '1' };

/** What the chromium of these tests needs to start fast and quietly in a container: the flags Folio prints PDFs with. */
export { CHROMIUM_ARGS };

export interface AppUser extends TestUser {
  password: string;
}

/** What went wrong on a page while a test used it. */
export interface Problems {
  readonly list: string[];
  /** Expects problems matching `pattern`: they are not reported. */
  allow(pattern: RegExp): void;
  /** The problems not allowed; the harness fails the test on them after it ends. */
  unexpected(): string[];
  /** The Content-Security-Policy violations seen (also among `list`). */
  readonly cspViolations: string[];
}

export interface AppPage {
  page: Page;
  context: BrowserContext;
  problems: Problems;
}

export interface AppHarness {
  /** The test server (its `user()`, `request()`, `clock`, `server.services`…). Valid once `before` ran. */
  readonly t: TestServer;
  readonly browser: Browser;
  /** The server's address plus `path`: `app.url('/app/sign-in')`. */
  url(path?: string): string;
  /** A new user with a password set (as `folio users set-password` does). */
  userWithPassword(name?: string, password?: string): Promise<AppUser>;
  /** A fresh context (no cookies) and a page in it, watched for problems. */
  newPage(): Promise<AppPage>;
  /** Another page in the same context (same cookies: a second tab), watched too. */
  newTab(context: BrowserContext): Promise<AppPage>;
  /**
   * A fresh context signed in as `user` (a password is set first when the user has none), its page
   * at `path` (default `/app/`). `via: 'form'` (default) types into the sign-in form, as a person
   * does; `via: 'api'` posts /app/api/sign-in from the context, whose cookie jar keeps the session.
   */
  signedInPage(user: TestUser | AppUser, opts?: { via?: 'form' | 'api'; path?: string }): Promise<AppPage>;
  /** Fills and submits a sign-in form on `page` (the sign-in screen, or the session-ended dialog when `within` is it). */
  fillSignIn(page: Page, user: AppUser, opts?: { within?: ReturnType<Page['locator']> }): Promise<void>;
  /** Ends every app session of `user` on the server (revoked like any token), as signing out elsewhere does. */
  endSessions(user: TestUser): Promise<number>;
}

/**
 * Registers the file's hooks: builds the app when stale (the runner already did, so this is a
 * hash check), starts one test server and one chromium before the tests, closes them after, and
 * after each test closes its contexts and fails it on the problems its pages met.
 */
export function useAppBrowser(opts: { server?: Partial<Config> } = {}): AppHarness {
  let t: TestServer | undefined;
  let browser: Browser | undefined;
  const open: AppPage[] = [];
  const passwords = new Map<string, string>();

  before(async () => {
    // The server reads app/dist/index.html when it starts: build first.
    await buildApp({ quiet: true });
    [t, browser] = await Promise.all([
      startTestServer(opts.server),
      chromium.launch({ executablePath: CHROMIUM, headless: true, args: CHROMIUM_ARGS }),
    ]);
  });
  after(async () => {
    await browser?.close();
    await t?.close();
  });
  afterEach(async () => {
    const pages = open.splice(0);
    const found = pages.flatMap(({ page, problems }) => problems.unexpected().map((p) => `${page.url()}: ${p}`));
    await Promise.all([...new Set(pages.map((p) => p.context))].map((c) => c.close().catch(() => undefined)));
    if (found.length) throw new Error(`problems in the browser:\n  - ${found.join('\n  - ')}`);
  });

  const server = () => {
    if (!t) throw new Error('the app harness is used before its `before` hook ran (call useAppBrowser() at the top of the file)');
    return t;
  };

  async function watch(context: BrowserContext, page: Page): Promise<AppPage> {
    const problems = collectProblems(page);
    const appPage = { page, context, problems };
    open.push(appPage);
    return appPage;
  }

  const harness: AppHarness = {
    get t() {
      return server();
    },
    get browser() {
      if (!browser) throw new Error('the browser is not started yet');
      return browser;
    },
    url: (path = '') => `${server().url}${path}`,

    async userWithPassword(name = 'Pat Browser', password = DEFAULT_PASSWORD) {
      const user = await server().user(name);
      await setPassword(server().server.services.db, user.email, password);
      passwords.set(user.id, password);
      return { ...user, password };
    },

    async newPage() {
      const context = await harness.browser.newContext();
      await prepareContext(context, server().url);
      return watch(context, await context.newPage());
    },

    async newTab(context) {
      return watch(context, await context.newPage());
    },

    async signedInPage(user, { via = 'form', path = '/app/' } = {}) {
      const withPassword = await ensurePassword(user);
      const appPage = await harness.newPage();
      const { page, context } = appPage;
      if (via === 'api') {
        const res = await context.request.post(harness.url('/app/api/sign-in'), {
          headers: CSRF_HEADERS,
          data: { email: withPassword.email, password: withPassword.password },
        });
        if (res.status() !== 200) throw new Error(`sign-in through the API answered ${res.status()}: ${await res.text()}`);
        await page.goto(harness.url(path));
      } else {
        await page.goto(harness.url(`/app/sign-in?next=${encodeURIComponent(path.replace(/^\/app/, '') || '/')}`));
        await harness.fillSignIn(page, withPassword);
        await page.waitForURL((u) => !u.pathname.startsWith('/app/sign-in'));
      }
      await waitForScreen(page);
      if (new URL(page.url()).pathname.startsWith('/app/sign-in')) throw new Error(`signing in as ${user.email} did not hold: the app is on ${page.url()}`);
      return appPage;
    },

    async fillSignIn(page, user, { within } = {}) {
      const scope = within ?? page.locator('main');
      await scope.getByLabel('Email').fill(user.email);
      await scope.getByLabel('Password').fill(user.password);
      await scope.getByRole('button', { name: 'Sign in' }).click();
    },

    async endSessions(user) {
      const t = server();
      const tokens = await t.request('GET', '/v1/user/tokens', { token: user.token });
      if (tokens.status !== 200) throw new Error(`listing tokens answered ${tokens.status}`);
      const sessions = (tokens.body.items as { id: string; name?: string }[]).filter((i) => i.name === 'App session');
      for (const s of sessions) {
        const res = await t.request('DELETE', `/v1/user/tokens/${s.id}`, { token: user.token });
        if (res.status !== 204) throw new Error(`revoking session ${s.id} answered ${res.status}`);
      }
      return sessions.length;
    },
  };

  async function ensurePassword(user: TestUser | AppUser): Promise<AppUser> {
    if ('password' in user) return user;
    let password = passwords.get(user.id);
    if (!password) {
      password = DEFAULT_PASSWORD;
      await setPassword(server().server.services.db, user.email, password);
      passwords.set(user.id, password);
    }
    return { ...user, password };
  }

  return harness;
}

/**
 * Tests never reach the outside world: requests off the test server are refused. CSP violations
 * are reported from the page to the test through a binding (the DevTools protocol, not a script
 * the policy would judge).
 */
async function prepareContext(context: BrowserContext, serverUrl: string): Promise<void> {
  const origin = new URL(serverUrl).origin;
  await context.route((url) => url.origin !== origin && url.protocol.startsWith('http'), (route) => route.abort('blockedbyclient'));
  await context.exposeBinding('__folioReportCsp', ({ page }, text: string) => {
    reporters.get(page)?.(text);
  });
  await context.addInitScript(() => {
    document.addEventListener('securitypolicyviolation', (e) => {
      const where = e.sourceFile ? ` at ${e.sourceFile}:${e.lineNumber}:${e.columnNumber}` : '';
      const report = (window as unknown as { __folioReportCsp?: (text: string) => void }).__folioReportCsp;
      report?.(`${e.effectiveDirective} blocked ${e.blockedURI || '(inline)'}${where}${e.sample ? ` (${e.sample})` : ''}`);
    });
  });
}

/** Where each page's CSP reports go (the binding is per context, the problems per page). */
const reporters = new WeakMap<Page, (text: string) => void>();

function collectProblems(page: Page): Problems {
  const list: string[] = [];
  const cspViolations: string[] = [];
  const allowed: RegExp[] = [];
  reporters.set(page, (text) => {
    cspViolations.push(text);
    list.push(`CSP violation: ${text}`);
  });
  page.on('console', (message) => {
    const text = message.text();
    if (/^Refused to |Content Security Policy/.test(text)) {
      // Chromium's words for a CSP violation ("Refused to load…", "Executing inline script violates
      // the following Content Security Policy directive…"); the event says it too, with the source.
      list.push(`CSP (console): ${text}`);
      return;
    }
    if (message.type() !== 'error') return;
    // The network says these for every 4xx answer; 5xx are caught below from the responses.
    if (/^Failed to load resource: the server responded with a status of \d{3}/.test(text)) return;
    if (text.includes('ERR_BLOCKED_BY_CLIENT')) return;
    list.push(`console error: ${text}`);
  });
  page.on('pageerror', (error) => list.push(`uncaught: ${error.message}`));
  page.on('response', (response) => {
    if (response.status() >= 500) list.push(`HTTP ${response.status()} from ${response.request().method()} ${response.url()}`);
  });
  page.on('dialog', async (dialog) => {
    list.push(`browser dialog (${dialog.type()}): ${dialog.message()}`);
    await dialog.dismiss();
  });
  return {
    list,
    cspViolations,
    allow: (pattern) => void allowed.push(pattern),
    unexpected: () => list.filter((p) => !allowed.some((a) => a.test(p))),
  };
}

type AxeResults = { violations: { id: string; impact?: string | null; help: string; helpUrl: string; nodes: { target: unknown[]; failureSummary?: string }[] }[] };

/**
 * Runs axe-core on the page as it is now and fails when it finds serious or critical violations,
 * listing each rule with the elements it flagged. `label` names the screen in the message.
 * Minor and moderate findings are returned, not failed on.
 */
export async function expectNoA11yViolations(page: Page, label: string, opts: { include?: string } = {}): Promise<AxeResults['violations']> {
  const loaded = await page.evaluate(() => typeof (window as unknown as { axe?: unknown }).axe === 'object');
  // Evaluated through the DevTools protocol: the page's CSP (script-src 'self') does not apply.
  if (!loaded) await page.evaluate(axe.source);
  const results = await page.evaluate(async (include) => {
    const { axe } = window as unknown as { axe: { run(context: unknown, options: unknown): Promise<AxeResults> } };
    const r = await axe.run(include ?? document, { resultTypes: ['violations'] });
    return { violations: r.violations.map((v) => ({ id: v.id, impact: v.impact, help: v.help, helpUrl: v.helpUrl, nodes: v.nodes.map((n) => ({ target: n.target, failureSummary: n.failureSummary })) })) };
  }, opts.include);
  const serious = results.violations.filter((v) => v.impact === 'serious' || v.impact === 'critical');
  if (serious.length) {
    const lines = serious.map(
      (v) =>
        `[${v.impact}] ${v.id}: ${v.help} (${v.helpUrl})\n${v.nodes
          .slice(0, 5)
          .map((n) => `      ${n.target.join(' ')}${n.failureSummary ? ` — ${brief(n.failureSummary)}` : ''}`)
          .join('\n')}${v.nodes.length > 5 ? `\n      …and ${v.nodes.length - 5} more` : ''}`,
    );
    throw new Error(`accessibility (axe) on ${label}: ${serious.length} serious or critical\n  - ${lines.join('\n  - ')}`);
  }
  return results.violations;
}

/** axe's advice on one line, cut short: the rule's page has the rest. */
function brief(text: string): string {
  const line = text.replace(/\s+/g, ' ').trim();
  return line.length > 200 ? `${line.slice(0, 199)}…` : line;
}

/** A full-page PNG at test-artifacts/app/<name>.png; answers its path. */
export async function screenshot(page: Page, name: string): Promise<string> {
  mkdirSync(APP_ARTIFACTS, { recursive: true });
  const path = new URL(`${name.replace(/[^\w.-]+/g, '-')}.png`, APP_ARTIFACTS).pathname;
  await page.screenshot({ path, fullPage: true });
  return path;
}

/**
 * Waits until the app shows a screen: its session check answered and the screen's code loaded
 * (no "Loading…" left). Until then the app has not decided where it is, nor listens for much.
 */
export async function waitForScreen(page: Page): Promise<void> {
  await page.waitForFunction(() => document.querySelector('main') !== null && document.querySelector('p.loading') === null);
}

/** The `folio_session` cookie of a context, when it has one. */
export async function sessionCookie(context: BrowserContext): Promise<string | undefined> {
  return (await context.cookies()).find((c) => c.name === 'folio_session')?.value;
}
