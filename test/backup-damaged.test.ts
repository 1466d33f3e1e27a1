import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { gzipSync } from 'node:zlib';
import { loadConfig } from '../src/platform/config.ts';
import { BackupError, readBackupHeader, restoreBackup } from '../src/platform/db/backup.ts';
import { migrationNames, openDatabase, type DatabaseHandle } from '../src/platform/db/database.ts';
import { freshDatabaseConfig } from './support/server.ts';

// Altered backup files are refused as damage (a BackupError naming what is wrong), never met as a
// TypeError deep in the restore.
let fresh: Awaited<ReturnType<typeof freshDatabaseConfig>>;
let handle: DatabaseHandle;
let dir: string;
before(async () => {
  fresh = await freshDatabaseConfig();
  handle = await openDatabase({ ...loadConfig({}), ...fresh.config }, 'test');
  dir = mkdtempSync(join(tmpdir(), 'folio-backup-damaged-'));
});
after(async () => {
  await handle?.close();
  await fresh?.cleanup();
  rmSync(dir, { recursive: true, force: true });
});

function backupFile(name: string, lines: unknown[]): string {
  const file = join(dir, name);
  writeFileSync(file, gzipSync(lines.map((l) => (typeof l === 'string' ? l : JSON.stringify(l))).join('\n') + '\n'));
  return file;
}

const header = (migrations: unknown = [migrationNames()[0]]) => ({ format: 'folio-backup', version: 1, createdAt: new Date().toISOString(), folio: 'test', engine: 'pglite', migrations });

test('a header whose migrations are not a list of names is refused as damaged', async () => {
  for (const migrations of [null, 'all', [1, 2]]) {
    const file = backupFile('header.backup.gz', [header(migrations)]);
    await assert.rejects(readBackupHeader(file), (err: unknown) => err instanceof BackupError && /does not list its migrations/.test(err.message));
  }
});

test('a line that is JSON but not an object, or a section missing its list, is refused as damaged', async () => {
  const cases: [unknown[], RegExp][] = [
    [[header(), 'null'], /line 2 starts no section/],
    [[header(), '[1]'], /line 2 starts no section/],
    [[header(), { section: 'sequences', items: 5 }], /lists no sequences/],
    [[header(), { section: 'table', name: 'users', columns: 'id' }], /lists no columns/],
  ];
  for (const [lines, why] of cases) {
    const file = backupFile('lines.backup.gz', lines);
    await assert.rejects(restoreBackup(handle.db, file), (err: unknown) => err instanceof BackupError && why.test(err.message));
  }
});
