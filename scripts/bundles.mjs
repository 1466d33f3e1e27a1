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
 * A bundle holds Folio's code and most of its packages (see UNBUNDLED for those left in
 * node_modules). Its directory is named by a hash of what it is built from (the sources, the lock
 * file and this script), so a stale bundle is never run: a change to any source means a new hash,
 * and the first use after it builds (about 3 s). Builders race safely: each writes a directory of
 * its own and renames it into place; a loser discards its copy.
 *
 * Plain JavaScript: bin/folio reads it before any TypeScript loader is registered.
 */
import { createHash, randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { readdir, readFile, rename, rm, stat } from 'node:fs/promises';
import { dirname, join, relative, sep } from 'node:path';
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

/** Digests of the files under a directory of the project (names and contents), read once per process: `npm test` hashes src/ for both bundles. */
const digests = new Map();

function digestOf(dir) {
  let digest = digests.get(dir);
  if (!digest) {
    digest = (async () => {
      const hash = createHash('sha256');
      const files = (await filesUnder(join(root, dir))).sort();
      const contents = await Promise.all(files.map((file) => readFile(file)));
      files.forEach((file, i) => hash.update(relative(root, file)).update('\0').update(contents[i]).update('\0'));
      return hash.digest('hex');
    })();
    digests.set(dir, digest);
    digest.catch(() => digests.delete(dir));
  }
  return digest;
}

/**
 * A hash of what a bundle is built from: the files under `dirs`, the lock file, this script, and
 * where the project is (a bundle names its sources' files by their absolute paths, see
 * whereModulesLive: a moved checkout builds its own).
 */
async function sourceHash(dirs) {
  const hash = createHash('sha256').update(root).update('\0');
  for (const digest of await Promise.all(dirs.map(digestOf))) hash.update(digest);
  for (const file of [join(root, 'package-lock.json'), fileURLToPath(import.meta.url)]) hash.update(await readFile(file)).update('\0');
  return hash.digest('hex').slice(0, 16);
}

/** What esbuild is told for every bundle: Node's ESM, source maps, chunks shared between entries. */
const COMMON = {
  bundle: true,
  platform: 'node',
  format: 'esm',
  target: 'node20',
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
 * Packages a bundle leaves in node_modules: those that find files of their own at run time
 * (PGlite's WebAssembly and data, pdf.js's worker, Miniflare's runtime, piscina's and vite's
 * workers), that load what they need by computed paths (playwright-core, esbuild, tsx, vite,
 * TypeScript), that are servers the tests start beside Folio, or that hold native bindings.
 * Every other package is bundled: a process that resolved, read and compiled the ~1,000 files of
 * its packages one by one spent about a second of CPU on it, at every start.
 */
const UNBUNDLED = [
  '@electric-sql/pglite', '@electric-sql/pglite/*', 'pdfjs-dist', 'pdfjs-dist/*', 'miniflare', 'piscina',
  'playwright-core', 'playwright-core/*', 'esbuild', 'tsx', 'tsx/*', 'vite', '@vitejs/plugin-react', 'typescript',
  's3rver', 'oidc-provider', '@gitbook/cli', 'autocannon', '@fastify/swagger-ui', 'katex',
  // Optional native add-ons that packages try to require.
  'pg-native', 'bufferutil', 'utf-8-validate', 'fsevents',
];

/**
 * Bundled code keeps what it knows of where it lives: a module of Folio or of a package gets the
 * `import.meta.url` of its source file, and a CommonJS module of a package its `__dirname` and
 * `__filename` (which ESM does not have), so files beside a module (fixtures, a package's data)
 * are found as before.
 */
const whereModulesLive = {
  name: 'where-modules-live',
  setup(build) {
    build.onLoad({ filter: /\.(m?ts|[cm]?js)$/ }, async ({ path }) => {
      const text = await readFile(path, 'utf8');
      const inPackage = path.includes(`${sep}node_modules${sep}`);
      let contents = text;
      if (text.includes('import.meta.url')) contents = contents.replaceAll('import.meta.url', JSON.stringify(pathToFileURL(path).href));
      if (inPackage && /\b__(dirname|filename)\b/.test(text) && !/import\.meta|\b(var|let|const)\s+__(dirname|filename)\b/.test(text)) {
        contents = `var __dirname = ${JSON.stringify(dirname(path))}, __filename = ${JSON.stringify(path)};\n${contents}`;
      }
      if (contents === text) return undefined; // esbuild reads it itself
      return { contents, loader: /\.m?ts$/.test(path) ? 'ts' : 'js' };
    });
  },
};

/**
 * A package that Folio imports with `import()` stays in node_modules: it is loaded when first
 * needed, not at a start, and esbuild would give a CommonJS package imported that way (node-saml)
 * its `default` export only, where Node gives its named exports too.
 */
const lazyPackagesStayOut = {
  name: 'lazy-packages-stay-out',
  setup(build) {
    build.onResolve({ filter: /^[^./]/ }, (args) => (args.kind === 'dynamic-import' ? { path: args.path, external: true } : undefined));
  },
};

/** Options of a bundle that holds its packages (all but UNBUNDLED and those imported lazily). */
const WITH_PACKAGES = {
  external: UNBUNDLED,
  // Node's own `require` in every chunk, resolving from the project as the sources do: bundled
  // CommonJS code requires Node's built-in modules and the packages left in node_modules with it.
  banner: { js: `import { createRequire as __folioCreateRequire } from 'node:module'; const require = __folioCreateRequire(${JSON.stringify(pathToFileURL(join(root, 'package.json')).href)});` },
  plugins: [lazyPackagesStayOut, whereModulesLive],
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
    warn(`cannot build the ${kind} bundle (${err.message.split('\n').slice(0, 3).join(' ')})`);
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
  const dir = await bundleOnce('server', ['src'], () => ({ ...WITH_PACKAGES, entryPoints: { folio: join(root, 'src/cli.ts') } }), (m) => warn(`${m}; running the sources through tsx`));
  return dir && pathToFileURL(join(dir, 'folio.mjs')).href;
}

/**
 * A bundle of every test file (test/X.test.ts becomes X.test.mjs in the returned directory) with
 * the sources and packages it imports (see WITH_PACKAGES); undefined when it cannot be built.
 */
export async function testBundle({ warn = () => {} } = {}) {
  const options = async () => {
    const tests = (await readdir(join(root, 'test'))).filter((name) => name.endsWith('.test.ts'));
    return {
      ...WITH_PACKAGES,
      entryPoints: tests.map((name) => ({ in: join(root, 'test', name), out: name.replace(/\.ts$/, '') })),
    };
  };
  return bundleOnce('tests', ['src', 'test'], options, warn);
}

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
