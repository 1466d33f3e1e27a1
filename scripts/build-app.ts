/**
 * Builds the app (app/ → app/dist) when its sources changed since the last build: `npm start`
 * and `npm test` run it first, so a fresh clone needs no separate build step. The build is
 * skipped when app/dist/.build-stamp holds the hash of every source file and of the lock file.
 *
 *   node --import tsx scripts/build-app.ts           build if stale
 *   node --import tsx scripts/build-app.ts --force   build anyway
 */
import { createHash } from 'node:crypto';
import { readdir, readFile, writeFile } from 'node:fs/promises';
import { promisify } from 'node:util';
import { brotliCompress, constants, gzip } from 'node:zlib';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { filesUnder } from './bundles.mjs';

const root = fileURLToPath(new URL('../', import.meta.url));
const appDir = join(root, 'app');
const stampPath = join(appDir, 'dist', '.build-stamp');

/** A hash of what the build reads: the app's files (names and contents) and the installed versions. */
export async function appSourceHash(): Promise<string> {
  const hash = createHash('sha256');
  for (const file of (await filesUnder(appDir, ['dist', 'node_modules'])).sort()) {
    hash.update(relative(root, file)).update('\0').update(await readFile(file)).update('\0');
  }
  hash.update(await readFile(join(root, 'package-lock.json')));
  return hash.digest('hex');
}

const brotli = promisify(brotliCompress);
const gzipAsync = promisify(gzip);

/** Writes .br and .gz beside each text asset: the server sends them as they are (no compression per request). */
async function precompress(dir: string): Promise<void> {
  for (const entry of await readdir(dir)) {
    if (!/\.(js|css|svg|json|txt)$/.test(entry)) continue;
    const data = await readFile(join(dir, entry));
    await writeFile(join(dir, `${entry}.br`), await brotli(data, { params: { [constants.BROTLI_PARAM_QUALITY]: 11 } }));
    await writeFile(join(dir, `${entry}.gz`), await gzipAsync(data, { level: 9 }));
  }
}

/** Builds the app unless its stamp says the build is current; answers whether it built. */
export async function buildApp({ force = false, quiet = false } = {}): Promise<boolean> {
  const wanted = await appSourceHash();
  const current = await readFile(stampPath, 'utf8').catch(() => '');
  if (!force && current.trim() === wanted) return false;
  const started = performance.now();
  if (!quiet) process.stdout.write('Building the app (app/ → app/dist)…\n');
  const { build } = await import('vite');
  await build({ configFile: join(appDir, 'vite.config.ts'), logLevel: quiet ? 'warn' : 'info' });
  await precompress(join(appDir, 'dist', 'assets'));
  await writeFile(stampPath, `${wanted}\n`);
  if (!quiet) process.stdout.write(`App built in ${((performance.now() - started) / 1000).toFixed(1)}s\n`);
  return true;
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  await buildApp({ force: process.argv.includes('--force') });
}
