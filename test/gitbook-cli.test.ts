import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { copyFileSync, mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { after, before, test } from 'node:test';
import { startTestServer, type TestServer } from './support/server.ts';

/**
 * The official `@gitbook/cli` against Folio, unmodified: `gitbook auth --endpoint`, `gitbook publish`
 * of an integration written with `@gitbook/runtime`, then installed on a space; a merge makes the
 * script post a comment back with its installation token, and `gitbook tail` prints its events.
 */

const require = createRequire(import.meta.url);
const CLI = join(require.resolve('@gitbook/cli/package.json'), '..', 'cli.js');
const ROOT = fileURLToPath(new URL('../', import.meta.url));

let t: TestServer;
let dir: string;
before(async () => {
  t = await startTestServer({ integrationRetryBaseMs: 50, integrationTimeoutMs: 8000 });
  dir = mkdtempSync(join(tmpdir(), 'folio-gitbook-cli-'));
});
after(async () => {
  await t?.close();
  rmSync(dir, { recursive: true, force: true });
});

/** Runs the CLI with its configuration kept in the test's own home directory. */
function gitbook(args: string[], opts: { cwd: string; timeoutMs?: number }): Promise<{ code: number | null; out: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [CLI, ...args], {
      cwd: opts.cwd,
      env: { PATH: process.env.PATH, HOME: join(dir, 'home'), XDG_CONFIG_HOME: join(dir, 'home', '.config'), NO_COLOR: '1', CI: 'true' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    child.stdout.on('data', (d) => (out += d));
    child.stderr.on('data', (d) => (out += d));
    const timer = setTimeout(() => child.kill('SIGTERM'), opts.timeoutMs ?? 60_000);
    child.on('error', reject);
    child.on('exit', (code) => {
      clearTimeout(timer);
      resolve({ code, out });
    });
  });
}

test('gitbook auth, publish and tail work against Folio; the published script runs and calls back', { timeout: 180_000 }, async () => {
  const ann = await t.user('Ann');
  const { data: org } = await ann.api.orgs.createOrganization({ title: 'CLI Publishers' });
  const { data: space } = await ann.api.orgs.createSpace(org.id, { title: 'Docs' });
  const name = `cli-${Date.now().toString(36)}`;

  // An integration project as its author writes it: a manifest and a script using @gitbook/runtime.
  const project = join(dir, 'project');
  mkdirSync(join(project, 'src'), { recursive: true });
  copyFileSync(fileURLToPath(new URL('./fixtures/integration/index.ts', import.meta.url)), join(project, 'src/index.ts'));
  symlinkSync(join(ROOT, 'node_modules'), join(project, 'node_modules'));
  writeFileSync(
    join(project, 'gitbook-manifest.yaml'),
    [`name: ${name}`, 'title: Runner', `organization: ${org.id}`, 'visibility: private', 'description: Published by the official CLI', 'script: ./src/index.ts', 'scopes:', '  - space:content:write', 'secrets:', '  GREETING: Hello', ''].join('\n'),
  );

  const auth = await gitbook(['auth', '--endpoint', t.url, '--token', ann.token], { cwd: project });
  assert.equal(auth.code, 0, auth.out);
  assert.match(auth.out, /authenticated as Ann/);
  const published = await gitbook(['publish', '.'], { cwd: project, timeoutMs: 120_000 });
  assert.equal(published.code, 0, published.out);
  assert.match(published.out, new RegExp(`Integration "${name}" published`));

  const { data: integration } = await ann.api.integrations.getIntegrationByName(name);
  assert.equal(integration.version, 1);
  assert.deepEqual(integration.scopes, ['space:content:write']);
  assert.equal(integration.owner.id, org.id);

  const { data: installation } = await ann.api.integrations.installIntegration(name, { organization: org.id });
  await ann.api.integrations.installIntegrationOnSpace(name, installation.id, { space: space.id });
  const { data: cr } = await ann.api.spaces.createChangeRequest(space.id, { subject: 'First page' });
  await t.request('POST', `/v1/spaces/${space.id}/change-requests/${cr.id}/content`, { token: ann.token, body: { changes: [{ operation: 'insert_page', title: 'First', document: { markdown: 'First.\n' } }] } });
  const { data: merged } = await ann.api.spaces.mergeChangeRequest(space.id, cr.id);

  // The script, published by the CLI, posts its comment with its installation token.
  const until = Date.now() + 60_000;
  let posted: unknown;
  while (!posted && Date.now() < until) {
    const { data: comments } = await ann.api.spaces.listCommentsInSpace(space.id);
    posted = comments.items.find((c) => JSON.stringify(c.body).includes(`Hello: merged revision ${merged.revision}`));
    if (!posted) await new Promise((r) => setTimeout(r, 200));
  }
  assert.ok(posted, 'the CLI-published script posted its comment (with the secret from the manifest)');

  // `gitbook tail` reads the integration's events through Folio's events endpoints.
  const tail = await gitbook(['tail'], { cwd: project, timeoutMs: 8_000 });
  assert.match(tail.out, /Fetching events/);
  assert.doesNotMatch(tail.out, /Error|error:/);
});
