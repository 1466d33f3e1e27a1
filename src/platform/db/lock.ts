import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

export class DataDirLockedError extends Error {}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    // EPERM: the process exists but belongs to someone else.
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/**
 * Exclusive hold on an embedded data directory. PGlite is a single-process database: two
 * processes writing the same files would corrupt it, so every process that opens the directory
 * (server or CLI) takes this lock first and refuses with a clear message when a live process has it.
 */
export class DataDirLock {
  private constructor(private readonly path: string) {}

  static acquire(dataDir: string, purpose: string): DataDirLock {
    mkdirSync(dataDir, { recursive: true });
    const path = join(dataDir, 'folio.lock');
    for (let attempt = 0; attempt < 2; attempt++) {
      try {
        writeFileSync(path, JSON.stringify({ pid: process.pid, purpose, since: new Date().toISOString() }), {
          flag: 'wx',
        });
        return new DataDirLock(path);
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
        let holder: { pid?: number; purpose?: string } = {};
        try {
          holder = JSON.parse(readFileSync(path, 'utf8'));
        } catch {
          // An unreadable lock file is one a crashed process left half-written: treat it as stale.
        }
        if (holder.pid && holder.pid !== process.pid && isAlive(holder.pid)) {
          throw new DataDirLockedError(
            `The data directory ${dataDir} is in use by another Folio process (pid ${holder.pid}, ${holder.purpose ?? 'unknown'}). ` +
              'The embedded database allows one process at a time: stop that process first, ' +
              'or run Folio on PostgreSQL (DATABASE_URL) to share the database between processes.',
          );
        }
        rmSync(path, { force: true });
      }
    }
    throw new DataDirLockedError(`Could not lock the data directory ${dataDir}`);
  }

  release(): void {
    rmSync(this.path, { force: true });
  }
}
