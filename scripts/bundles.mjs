/**
 * Folio's TypeScript, bundled by esbuild, so that a process loads a few modules instead of
 * transpiling hundreds through tsx:
 *
 * - the server (`serverBundle`): `bin/folio` runs build/server/<hash>/folio.mjs, built from src/
 *   whenever the sources change. A start of `folio serve` or of a CLI command costs about half
 *   the CPU. When it cannot be built (esbuild absent in an install without dev dependencies, a
 *   read-only directory), `bin/folio` runs the sources through tsx; FOLIO_FROM_SOURCES=1 asks for
 *   that too.
 * - the tests (`testBundle`): `npm test` runs each test file from build/tests/<hash>/, built from
 *   test/ and src/, and its processes need no TypeScript loader (test/support/run.ts).
 *
 * A bundle holds Folio's own code only; packages stay in node_modules, loaded by Node as they are.
 * Its directory is named by a hash of what it is built from (the sources, the lock file and this
 * script), so a stale bundle is never run: a change to any source means a new hash, and the first
 * use after it builds (about a second). Builders race safely: each writes a directory of its own
 * and renames it into place; a loser discards its copy.
 *
 * Plain JavaScript: bin/folio reads it before any TypeScript loader is registered.
 */
import { createHash, randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { readdir, readFile, rename, rm, stat } from 'node:fs/promises';
import { join, relative } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const root = fileURLToPath(new URL('../', import.meta.url));

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

/** A hash of what a bundle is built from: the files under `dirs` (names and contents), the lock file, this script. */
async function sourceHash(dirs) {
  const hash = createHash('sha256');
  const sources = (await Promise.all(dirs.map((dir) => filesUnder(join(root, dir))))).flat().sort();
  const files = [...sources, join(root, 'package-lock.json'), fileURLToPath(import.meta.url)];
  const contents = await Promise.all(files.map((file) => readFile(file)));
  files.forEach((file, i) => hash.update(relative(root, file)).update('\0').update(contents[i]).update('\0'));
  return hash.digest('hex').slice(0, 16);
}

/** What esbuild is told for every bundle: Node's ESM, packages left to node_modules, source maps. */
const COMMON = {
  bundle: true,
  platform: 'node',
  format: 'esm',
  target: 'node20',
  packages: 'external',
  // Modules a process may not need are loaded when it needs them (`folio migrate` needs no HTTP
  // server), and test files share the modules they have in common.
  splitting: true,
  outExtension: { '.js': '.mjs' },
  chunkNames: 'chunks/[name]-[hash]',
  sourcemap: 'linked',
  sourcesContent: false,
  logLevel: 'silent',
};

/**
 * The directory of the bundle `kind` (build/<kind>/<hash>) current with the files under `dirs`,
 * built first when there is none; undefined when it cannot be built (the reason goes to `warn`).
 */
async function bundleOnce(kind, dirs, options, warn) {
  let hash;
  try {
    hash = await sourceHash(dirs);
  } catch (err) {
    warn(`cannot read the sources to bundle them: ${err.message}`);
    return undefined;
  }
  const kindDir = join(root, 'build', kind);
  const dir = join(kindDir, hash);
  if (existsSync(dir)) return dir;
  let esbuild;
  try {
    esbuild = await import('esbuild');
  } catch {
    return undefined; // an install without dev dependencies: run the sources
  }
  const building = `${dir}.building-${process.pid}-${randomBytes(4).toString('hex')}`;
  try {
    await esbuild.build({ ...COMMON, ...(await options()), outdir: building });
    try {
      await rename(building, dir);
    } catch (err) {
      if (err.code !== 'EEXIST' && err.code !== 'ENOTEMPTY') throw err;
    }
  } catch (err) {
    warn(`cannot build the ${kind} bundle (${err.message.split('\n')[0]})`);
    return undefined;
  } finally {
    await rm(building, { recursive: true, force: true }).catch(() => {});
  }
  await pruneOtherBundles(kindDir, hash);
  return dir;
}

/**
 * The URL of the server bundle's entry (src/cli.ts), current with the sources; undefined when it
 * cannot be built: bin/folio then runs the sources through tsx.
 */
export async function serverBundle({ warn = () => {} } = {}) {
  const dir = await bundleOnce('server', ['src'], () => ({ entryPoints: { folio: join(root, 'src/cli.ts') } }), (m) => warn(`${m}; running the sources through tsx`));
  return dir && pathToFileURL(join(dir, 'folio.mjs')).href;
}

/**
 * A bundle of every test file (test/X.test.ts becomes X.test.mjs in the returned directory) with
 * the sources it imports; undefined when it cannot be built.
 *
 * Test files and the sources read files beside themselves through `import.meta.url` (fixtures,
 * `createRequire`), which in a bundle would name the bundle: each module's `import.meta.url` is
 * replaced by the URL of its source file.
 */
export async function testBundle({ warn = () => {} } = {}) {
  const options = async () => {
    const tests = (await readdir(join(root, 'test'))).filter((name) => name.endsWith('.test.ts'));
    return {
      entryPoints: tests.map((name) => ({ in: join(root, 'test', name), out: name.replace(/\.ts$/, '') })),
      plugins: [sourceImportMetaUrl],
    };
  };
  return bundleOnce('tests', ['src', 'test'], options, warn);
}

/** An esbuild plugin giving each of Folio's modules (packages are not bundled) the `import.meta.url` of its source file. */
const sourceImportMetaUrl = {
  name: 'source-import-meta-url',
  setup(build) {
    build.onLoad({ filter: /\.(m?ts|mjs)$/ }, async ({ path }) => {
      const text = await readFile(path, 'utf8');
      return { contents: text.replaceAll('import.meta.url', JSON.stringify(pathToFileURL(path).href)), loader: path.endsWith('.mjs') ? 'js' : 'ts' };
    });
  },
};

/** Removes bundles of other sources, once they are an hour old (a process may still be running one). */
async function pruneOtherBundles(kindDir, keep) {
  const hourAgo = Date.now() - 3_600_000;
  for (const name of await readdir(kindDir).catch(() => [])) {
    if (name.startsWith(keep)) continue;
    const path = join(kindDir, name);
    const info = await stat(path).catch(() => undefined);
    if (info && info.mtimeMs < hourAgo) await rm(path, { recursive: true, force: true }).catch(() => {});
  }
}
