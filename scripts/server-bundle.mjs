/**
 * The server as one bundle: `bin/folio` runs build/server/<hash>/folio.mjs, built by esbuild from
 * src/ whenever the sources change, instead of transpiling the ~400 TypeScript modules through
 * tsx at every start. A start of `folio serve` or of a CLI command then costs about half the CPU.
 *
 * The bundle holds Folio's own code only; packages stay in node_modules, loaded by Node as they
 * are. Its directory is named by a hash of what it is built from (the sources, the lock file and
 * this script), so a stale bundle is never run: a change to any source means a new hash, and the
 * first start after it builds (about a second). Builders race safely: each writes a directory of its
 * own and renames it into place; a loser discards its copy.
 *
 * When the bundle cannot be built (esbuild absent in an install without dev dependencies, a
 * read-only directory), `bin/folio` runs the sources through tsx as before. FOLIO_FROM_SOURCES=1
 * asks for that too.
 *
 * Plain JavaScript: bin/folio reads it before any TypeScript loader is registered.
 */
import { createHash, randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { readdir, readFile, rename, rm, stat } from 'node:fs/promises';
import { join, relative } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const root = fileURLToPath(new URL('../', import.meta.url));
const bundlesDir = join(root, 'build', 'server');
const ENTRY = 'folio.mjs';

/** Every file under `dir`, recursively, skipping dot files and the given directory names. */
export async function filesUnder(dir, skip = []) {
  const out = [];
  for (const entry of await readdir(dir, { withFileTypes: true })) {
    if (entry.name.startsWith('.') || skip.includes(entry.name)) continue;
    const path = join(dir, entry.name);
    if (entry.isDirectory()) out.push(...(await filesUnder(path, skip)));
    else out.push(path);
  }
  return out;
}

/** A hash of what the bundle is built from: the sources (names and contents), the lock file, this script. */
async function sourceHash() {
  const hash = createHash('sha256');
  const files = [...(await filesUnder(join(root, 'src'))).sort(), join(root, 'package-lock.json'), fileURLToPath(import.meta.url)];
  const contents = await Promise.all(files.map((file) => readFile(file)));
  files.forEach((file, i) => hash.update(relative(root, file)).update('\0').update(contents[i]).update('\0'));
  return hash.digest('hex').slice(0, 16);
}

/**
 * The URL of a bundle current with the sources, built first when there is none; undefined when
 * one cannot be built (the reason goes to `warn`).
 */
export async function serverBundle({ warn = () => {} } = {}) {
  let hash;
  try {
    hash = await sourceHash();
  } catch (err) {
    warn(`cannot read the sources to bundle them: ${err.message}`);
    return undefined;
  }
  const dir = join(bundlesDir, hash);
  const entry = join(dir, ENTRY);
  if (existsSync(entry)) return pathToFileURL(entry).href;
  let esbuild;
  try {
    esbuild = await import('esbuild');
  } catch {
    return undefined; // an install without dev dependencies: run the sources
  }
  const building = `${dir}.building-${process.pid}-${randomBytes(4).toString('hex')}`;
  try {
    await esbuild.build({
      entryPoints: { folio: join(root, 'src/cli.ts') },
      bundle: true,
      platform: 'node',
      format: 'esm',
      target: 'node20',
      packages: 'external',
      // Commands load their modules when they run (`folio migrate` needs no HTTP server).
      splitting: true,
      outdir: building,
      outExtension: { '.js': '.mjs' },
      chunkNames: 'chunks/[name]-[hash]',
      sourcemap: 'linked',
      sourcesContent: false,
      logLevel: 'silent',
    });
    try {
      await rename(building, dir);
    } catch (err) {
      if (err.code !== 'EEXIST' && err.code !== 'ENOTEMPTY') throw err;
    }
  } catch (err) {
    warn(`cannot build the server bundle (${err.message.split('\n')[0]}); running the sources through tsx`);
    return undefined;
  } finally {
    await rm(building, { recursive: true, force: true }).catch(() => {});
  }
  await pruneOtherBundles(hash);
  return pathToFileURL(entry).href;
}

/** Removes bundles of other sources, once they are an hour old (a process may still be running one). */
async function pruneOtherBundles(keep) {
  const hourAgo = Date.now() - 3_600_000;
  for (const name of await readdir(bundlesDir).catch(() => [])) {
    if (name.startsWith(keep)) continue;
    const path = join(bundlesDir, name);
    const info = await stat(path).catch(() => undefined);
    if (info && info.mtimeMs < hourAgo) await rm(path, { recursive: true, force: true }).catch(() => {});
  }
}
