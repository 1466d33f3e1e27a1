/**
 * `folio backup` and `folio restore` as an operator runs them: a real `folio serve` holds the
 * database and keeps taking merges while `folio backup` runs beside it; the backup is restored
 * into an empty target (a new DATA_DIR, or a new PostgreSQL database when TEST_DATABASE_URL is set)
 * and a second `folio serve` on it answers every space, revision, change request, comment, file and
 * token as the first did.
 */
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readdirSync, rmSync, statSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { GitBookAPI } from '@gitbook/api';
import pg from 'pg';
import { editChangeRequest, mergeChanges, newSpace, openChangeRequest, type Caller, type Change } from './support/factories.ts';
import { validatingFetch } from './support/official-schema.ts';
import { folioEnv, killAll, PROCESS_TIMEOUT_MS, runCli, serve, type ServeProcess } from './support/process.ts';
import { freshDatabaseConfig } from './support/server.ts';

const TEST_DATABASE_URL = process.env.TEST_DATABASE_URL;
const api = (url: string, token: string): Caller => ({ api: new GitBookAPI({ authToken: token, endpoint: url, serviceBinding: { fetch: validatingFetch } as never }) });
const c = (change: Record<string, unknown>) => change as unknown as Change;
const page = (title: string, markdown: string) => c({ operation: 'insert_page', title, document: { markdown } });

const work = mkdtempSync(join(tmpdir(), 'folio-backup-test-'));
const cleanups: (() => Promise<unknown>)[] = [];
let source: ServeProcess;
let sourceEnv: NodeJS.ProcessEnv;

after(async () => {
  killAll();
  for (const cleanup of cleanups.reverse()) await cleanup().catch(() => {});
  rmSync(work, { recursive: true, force: true });
});

/** A TCP port that was free a moment ago: PUBLIC_URL (and so every urls.* and download link) names it. */
async function freePort(): Promise<string> {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.on('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const address = srv.address();
      srv.close(() => resolve(String(typeof address === 'object' && address ? address.port : 0)));
    });
  });
}

/** A new, empty PostgreSQL database on the test server, dropped after the file. */
async function emptyPostgresDatabase(): Promise<string> {
  const name = `folio_restore_${randomBytes(6).toString('hex')}`;
  const admin = new pg.Client({ connectionString: TEST_DATABASE_URL });
  await admin.connect();
  await admin.query(`CREATE DATABASE ${name}`);
  await admin.end();
  cleanups.push(async () => {
    const c = new pg.Client({ connectionString: TEST_DATABASE_URL });
    await c.connect();
    await c.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
    await c.end();
  });
  const url = new URL(TEST_DATABASE_URL!);
  url.pathname = `/${name}`;
  return url.toString();
}

before(async () => {
  // The source starts from the migrated template (no first-start database creation to wait for).
  const db = await freshDatabaseConfig(TEST_DATABASE_URL, { migrated: true });
  cleanups.push(db.cleanup);
  const where: Record<string, string> = db.config.databaseUrl ? { DATABASE_URL: db.config.databaseUrl, DATA_DIR: join(work, 'unused') } : { DATA_DIR: db.config.dataDir! };
  sourceEnv = folioEnv({ ...where, PORT: await freePort() });
  source = await serve(sourceEnv);
  cleanups.push(() => source.stop('SIGKILL'));
});

test('a backup taken while the server takes merges restores into an empty target where everything works as before', { timeout: 4 * PROCESS_TIMEOUT_MS }, async () => {
  const first = /shown only now:\n\n {2}(folio_\S+)\n/.exec(source.stderr())?.[1];
  assert.ok(first, source.stderr());
  const admin = api(source.url, first);
  const { data: org } = await admin.api.orgs.createOrganization({ title: 'Backed up' });
  // A second API token, made by the CLI as an operator would.
  const made = await runCli(['tokens', 'create', '--user', 'admin@localhost', '--name', 'ci'], sourceEnv);
  assert.equal(made.code, 0, made.stderr);
  const second = JSON.parse(made.stdout).token as string;

  const guide = await newSpace(admin, org.id, 'Guide');
  const notes = await newSpace(admin, org.id, 'Notes');
  const bytes = Buffer.from([0, 1, 2, 250, 255, 10, 13]);
  const guideRevisions = [
    await mergeChanges(admin, guide.id, [page('Intro', 'Hello **world**.\n'), page('Setup', 'Run `folio serve`.\n')]),
    await mergeChanges(admin, guide.id, [c({ operation: 'insert_files', files: [{ name: 'data.bin', contentType: 'application/octet-stream', base64: bytes.toString('base64') }] })]),
  ];
  const cr = await openChangeRequest(admin, guide.id, 'Draft: FAQ');
  await editChangeRequest(admin, guide.id, cr.id, [page('FAQ', 'Questions and answers.\n')]);
  const { data: comment } = await admin.api.spaces.postCommentInSpace(guide.id, { body: { markdown: 'Looks good' } as never });

  // Merges keep landing on Notes while the backup runs.
  const notesRevisions = new Map<string, number>();
  const note = async (i: number) => notesRevisions.set(await mergeChanges(admin, notes.id, [page(`Note ${i}`, `Note number ${i}.\n`)]), i);
  await note(1);
  let stop = false;
  const writer = (async () => {
    for (let i = 2; !stop; i++) await note(i);
  })();
  const out = join(work, 'folio.backup.gz');
  const backup = await runCli(['backup', '--out', out], sourceEnv);
  stop = true;
  await writer;
  assert.equal(backup.code, 0, backup.stderr);
  const summary = JSON.parse(backup.stdout).backup;
  assert.equal(summary.out, out);
  assert.ok(summary.tables > 40 && summary.rows > 20, backup.stdout);
  assert.equal(statSync(out).mode & 0o777, 0o600, 'the backup holds secrets: owner only');
  assert.deepEqual(readdirSync(work).filter((f) => f.includes('partial')), [], 'no temporary file left');

  // Restore refuses a target that is not empty, saying why.
  const refused = await runCli(['restore', out], sourceEnv);
  assert.equal(refused.code, 1);
  assert.match(refused.stderr, /not empty.*restore goes into an empty/);
  assert.doesNotMatch(refused.stderr, /\n\s+at /);

  const target = TEST_DATABASE_URL
    ? folioEnv({ DATABASE_URL: await emptyPostgresDatabase(), DATA_DIR: join(work, 'unused2'), PORT: await freePort() })
    : folioEnv({ DATA_DIR: join(work, 'restored'), PORT: await freePort() });
  const restored = await runCli(['restore', out], target);
  assert.equal(restored.code, 0, restored.stderr);
  assert.equal(JSON.parse(restored.stdout).restored.rows, summary.rows);
  if (!TEST_DATABASE_URL) assert.deepEqual(readdirSync(work).filter((f) => f.includes('restoring')), [], 'the directory was built aside and renamed');

  const copy = await serve(target);
  cleanups.push(() => copy.stop('SIGKILL'));
  const was = (s: string) => s.replaceAll(source.url, copy.url);
  const before = admin;
  const after_ = api(copy.url, first);
  // Both tokens still authenticate, as the same user.
  const { data: me } = await after_.api.user.getAuthenticatedUser();
  assert.equal((await api(copy.url, second).api.user.getAuthenticatedUser()).data.id, me.id);
  assert.equal((await before.api.user.getAuthenticatedUser()).data.id, me.id);

  // Every revision of Guide, its pages' markdown, the file's bytes, the change request, the comment.
  for (const revision of guideRevisions) {
    const [a, b] = await Promise.all([before.api.spaces.getRevisionById(guide.id, revision), after_.api.spaces.getRevisionById(guide.id, revision)]);
    assert.equal(JSON.stringify(b.data), was(JSON.stringify(a.data)), `revision ${revision}`);
  }
  const { data: pages } = await after_.api.spaces.listPages(guide.id);
  for (const p of pages.pages) {
    const md = (user: Caller) => user.api.spaces.getPageInRevisionById(guide.id, guideRevisions[1]!, p.id, { format: 'markdown' } as never).then((r) => (r.data as { markdown?: string }).markdown);
    assert.equal(await md(after_), await md(before));
  }
  const { data: files } = await after_.api.spaces.listFiles(guide.id);
  assert.equal(files.items.length, 1);
  assert.deepEqual(Buffer.from(await (await fetch(files.items[0]!.downloadURL)).arrayBuffer()), bytes);
  const { data: oldFile } = await before.api.spaces.getFileById(guide.id, files.items[0]!.id);
  // The signed download link of the source works on the copy: the signing secrets came along.
  assert.equal((await fetch(was(oldFile.downloadURL))).status, 200);
  const { data: draft } = await after_.api.spaces.getChangeRequestById(guide.id, cr.id);
  assert.equal(JSON.stringify(draft), was(JSON.stringify((await before.api.spaces.getChangeRequestById(guide.id, cr.id)).data)));
  assert.equal((await after_.api.spaces.getCommentInSpace(guide.id, comment.id)).data.id, comment.id);

  // Notes is one of the states it had while the backup ran, whole: its revision's pages are those merged up to it.
  const { data: notesNow } = await after_.api.spaces.getSpaceById(notes.id);
  const n = notesRevisions.get(notesNow.revision!);
  assert.ok(n !== undefined, `the copy's Notes revision ${notesNow.revision} is one the source merged`);
  assert.equal((await after_.api.spaces.listPages(notes.id)).data.pages.length, n);

  // The copy takes new work: identities and sequences continue past the restored rows.
  await mergeChanges(after_, notes.id, [page('After restore', 'Still writing.\n')]);
  await after_.api.spaces.postCommentInSpace(guide.id, { body: { markdown: 'Restored' } as never });
  const { data: another } = await after_.api.orgs.createSpace(org.id, { title: 'New after restore' });
  assert.equal(another.title, 'New after restore');
});
