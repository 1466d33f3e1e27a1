/**
 * Benchmark: how much JavaScript the app makes a browser download, compressed as the server sends
 * it (the .br and .gz files scripts/build-app.ts writes beside each asset).
 *   - first load: what the sign-in screen needs before it shows: the scripts index.html loads, the
 *     files it preloads (modulepreload) and, followed through the built files, their static imports;
 *   - per screen: each lazily loaded screen's chunk and what it imports that the first load does not
 *     already bring.
 * Budget (issue 25): first load under 300 KB compressed. It is checked on gzip, the larger of the
 * two (a browser without brotli gets it); sizes are deterministic, so test/app.test.ts asserts it too.
 *
 *   node --import tsx bench/app-bundle.ts            builds the app when stale, then prints the sizes
 */
import { readFileSync, statSync } from 'node:fs';
import { basename, join } from 'node:path';
import { fileURLToPath } from 'node:url';

export const FIRST_LOAD_BUDGET_BYTES = 300 * 1000;

const DIST = fileURLToPath(new URL('../app/dist/', import.meta.url));

export interface ChunkSet {
  /** Asset file names (under app/dist/assets). */
  files: string[];
  raw: number;
  brotli: number;
  gzip: number;
}

export interface AppBundleSizes {
  firstLoad: ChunkSet;
  /** Stylesheets index.html links, measured apart (the budget is about JavaScript). */
  css: ChunkSet;
  /** Lazily loaded chunks named by their source file (Organization, Space…), beyond the first load. */
  screens: { name: string; chunk: ChunkSet }[];
}

// Minified output of the build: `import{a as b}from"./x.js"`, `import"./x.js"`, `export{a}from"./x.js"`,
// and for lazy chunks `import(`./x.js`)`. Quotes may be ', " or ` (rolldown writes backticks).
const STATIC_IMPORT = /(?:^|[^\w$.])(?:import|export)\s*(?:[\w$*{}\s,]*?\s*from\s*)?["'`](\.\/[^"'`]+\.js)["'`]/g;
const DYNAMIC_IMPORT = /(?:^|[^\w$.])import\(\s*["'`](\.\/[^"'`]+\.js)["'`]\s*\)/g;

function assetName(url: string): string {
  return basename(new URL(url, 'http://x/app/').pathname);
}

function read(file: string): string {
  return readFileSync(join(DIST, 'assets', file), 'utf8');
}

/** The file and every file it imports statically, transitively. */
function staticClosure(entries: string[]): Set<string> {
  const seen = new Set<string>();
  const queue = [...entries];
  while (queue.length) {
    const file = queue.pop()!;
    if (seen.has(file)) continue;
    seen.add(file);
    for (const match of read(file).matchAll(STATIC_IMPORT)) queue.push(basename(match[1]!));
  }
  return seen;
}

function sizes(files: Iterable<string>): ChunkSet {
  const list = [...files].sort();
  const size = (path: string) => statSync(join(DIST, 'assets', path)).size;
  return {
    files: list,
    raw: list.reduce((n, f) => n + size(f), 0),
    brotli: list.reduce((n, f) => n + size(`${f}.br`), 0),
    gzip: list.reduce((n, f) => n + size(`${f}.gz`), 0),
  };
}

/** Sizes of the built app in app/dist (build it first: buildApp of scripts/build-app.ts). */
export function measureAppBundle(): AppBundleSizes {
  const html = readFileSync(join(DIST, 'index.html'), 'utf8');
  const attr = (tag: string, name: string) => new RegExp(`\\b${name}="([^"]+)"`).exec(tag)?.[1];
  const tags = html.match(/<(?:script|link)\b[^>]*>/g) ?? [];
  const scripts = tags.filter((t) => t.startsWith('<script') && attr(t, 'src')).map((t) => assetName(attr(t, 'src')!));
  const preloads = tags.filter((t) => /rel="modulepreload"/.test(t)).map((t) => assetName(attr(t, 'href')!));
  const styles = tags.filter((t) => /rel="stylesheet"/.test(t)).map((t) => assetName(attr(t, 'href')!));
  const first = staticClosure([...scripts, ...preloads]);

  const screens: AppBundleSizes['screens'] = [];
  const lazy = new Set<string>();
  for (const file of first) for (const match of read(file).matchAll(DYNAMIC_IMPORT)) lazy.add(basename(match[1]!));
  for (const file of [...lazy].sort()) {
    const extra = [...staticClosure([file])].filter((f) => !first.has(f));
    // Vite names a chunk after its module and a hash: Organization-If6KJQkF.js.
    screens.push({ name: file.replace(/-[\w-]{8}\.js$/, ''), chunk: sizes(extra) });
  }
  return { firstLoad: sizes(first), css: sizes(styles), screens };
}

const kb = (n: number) => `${(n / 1000).toFixed(1)} KB`;

function line(name: string, set: ChunkSet): string {
  return `${name.padEnd(16)} ${kb(set.brotli).padStart(9)} br ${kb(set.gzip).padStart(9)} gz ${kb(set.raw).padStart(10)} raw  ${set.files.join(', ')}`;
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const { buildApp } = await import('../scripts/build-app.ts');
  await buildApp({ quiet: true });
  const { firstLoad, css, screens } = measureAppBundle();
  process.stdout.write(`${line('first load (JS)', firstLoad)}\n${line('first load (CSS)', css)}\n`);
  for (const { name, chunk } of screens) process.stdout.write(`${line(`  ${name}`, chunk)}\n`);
  const within = firstLoad.gzip < FIRST_LOAD_BUDGET_BYTES;
  process.stdout.write(`\nBudget: first-load JS < ${kb(FIRST_LOAD_BUDGET_BYTES)} compressed (gzip): ${within ? 'within' : 'OVER'} (${kb(firstLoad.gzip)})\n`);
  if (!within) process.exitCode = 1;
}
