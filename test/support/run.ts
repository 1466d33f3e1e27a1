/**
 * `npm test`: builds the database templates once (test/support/templates.ts), the app and the server
 * and test bundles when stale (scripts/build-app.ts, scripts/bundles.mjs), then runs the test
 * files in parallel, slowest first, with the short report of test/support/reporter.ts.
 *
 *   npm test                              every test/*.test.ts
 *   npm test -- test/spaces.test.ts       some files
 *   npm test -- --test-name-pattern=merge test/content.test.ts
 *   TEST_CONCURRENCY=2 npm test           files run at once (default 4: they wait on PGlite and I/O more than on the 2 cores)
 *   TEST_BUNDLE=0 / TEST_BUNDLE_SIZE=N    every file in its own process / N files per shared process (default 8 on PGlite, 5 on PostgreSQL; see group)
 *
 * Exit code 1 when any test fails. Start it with `node --import tsx`; test files run from their
 * sources (no test bundle) inherit it.
 */
import { mkdir, mkdtemp, readFile, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { basename, dirname, join, relative, resolve } from 'node:path';
import { run } from 'node:test';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { buildApp } from '../../scripts/build-app.ts';
import { serverBundle, testBundle } from '../../scripts/bundles.mjs';
import { createReporter } from './reporter.ts';
import { prepareTemplates } from './templates.ts';

const root = fileURLToPath(new URL('../../', import.meta.url));
/** Durations of the last run per engine, to start the slowest files first (a long file started last would set the total alone). */
const timingsPath = join(root, `node_modules/.cache/folio-test-timings-${process.env.TEST_DATABASE_URL ? 'postgres' : 'pglite'}.json`);

/**
 * Durations for a checkout that has run no tests yet (a clean CI clone): those of a whole run on
 * the embedded database, committed and refreshed now and then from the file above. Without them,
 * a first run groups its files blindly and may start its longest process last.
 */
const seedTimingsPath = join(root, 'test/support/durations.json');

async function loadTimings(): Promise<Record<string, number>> {
  for (const path of [timingsPath, seedTimingsPath]) {
    try {
      return JSON.parse(await readFile(path, 'utf8'));
    } catch {
      // none yet: the next source
    }
  }
  return {};
}

async function main(): Promise<void> {
  const args = process.argv.slice(2);
  const namePatterns = args.filter((a) => a.startsWith('--test-name-pattern=')).map((a) => a.slice('--test-name-pattern='.length));
  const unknown = args.find((a) => a.startsWith('-') && !a.startsWith('--test-name-pattern='));
  if (unknown) throw new Error(`unknown option ${unknown} (options: --test-name-pattern=REGEX; anything else is a test file)`);
  let files = args.filter((a) => !a.startsWith('-')).map((f) => resolve(f));
  if (!files.length) {
    const dir = join(root, 'test');
    files = (await readdir(dir)).filter((f) => f.endsWith('.test.ts')).sort().map((f) => join(dir, f));
  }
  const timings = await loadTimings();
  const key = (file: string) => file.slice(root.length);
  // Unknown files first (they may be slow), then by the last duration, longest first.
  files.sort((a, b) => (timings[key(b)] ?? Infinity) - (timings[key(a)] ?? Infinity));

  const concurrency = Number(process.env.TEST_CONCURRENCY) || 4;
  const engine = process.env.TEST_DATABASE_URL ? `PostgreSQL (${new URL(process.env.TEST_DATABASE_URL).host})` : 'the embedded database (PGlite)';
  const setup = performance.now();
  // The app is built here, once, when its sources changed: test files that open /app
  // (test/support/app-browser.ts) then find it current, and parallel files never build it at once.
  // The same for the server bundle that `bin/folio` runs and for the bundle of the test files
  // (scripts/bundles.mjs): the files that start `folio serve` or CLI commands, several at once,
  // then find it built.
  const warn = (m: string) => process.stdout.write(`${m}\n`);
  const [, appBuilt, serverEntry, testsDir] = await Promise.all([prepareTemplates(), buildApp({ quiet: true }), serverBundle({ warn }), testBundle({ warn })]);
  if (!serverEntry) warn('bin/folio runs the sources through tsx (no server bundle)');

  // Test processes run the test files' bundle, which needs no TypeScript loader: loading the ~1,700
  // modules of a test process through tsx's hooks cost seconds of CPU per process. Files outside
  // test/ (not in the bundle), or no bundle, run from their sources through tsx as before.
  const fromBundle = testsDir !== undefined && files.every((f) => dirname(f) === join(root, 'test'));
  const runnable = (file: string) => (fromBundle ? join(testsDir, basename(file).replace(/\.ts$/, '.mjs')) : file);
  if (fromBundle) {
    // node's runner starts each test process with this process's flags (`--import tsx` included):
    // the only place it reads them from. Stack traces go through the bundle's source maps.
    process.execArgv = [...withoutTsx(process.execArgv), '--enable-source-maps'];
  } else if (!testsDir) {
    warn('test files run from their sources through tsx (no test bundle)');
  }

  // A whole run shares processes between small files (see group); files named on the command line
  // run alone. TEST_BUNDLE=0 or 1 says otherwise.
  const explicit = args.some((a) => !a.startsWith('-'));
  const sharing = process.env.TEST_BUNDLE ? process.env.TEST_BUNDLE !== '0' : !explicit;
  const shared = sharing ? await group(files, timings, key, runnable) : new Map<string, string[]>();
  const grouped = new Set([...shared.values()].flat());
  /** The test files of each process, by the module the process runs. */
  const processes = new Map<string, string[]>([...shared, ...files.filter((f) => !grouped.has(f)).map((f): [string, string[]] => [runnable(f), [f]])]);
  const members = (run: string) => processes.get(run) ?? [run];
  const runs = [...processes.keys()].sort((a, b) => sum(members(b), timings, key) - sum(members(a), timings, key));
  process.stdout.write(
    `${files.length} test files in ${runs.length} processes on ${engine}, ${concurrency} at a time (templates${appBuilt ? ' and app' : ''} ready in ${((performance.now() - setup) / 1000).toFixed(1)}s)\n\n`,
  );

  // Each test file's process reports the CPU it used (test/support/cpu-usage.mjs): with files
  // running side by side on few cores, CPU time says where the time goes better than wall time.
  const cpuDir = await mkdtemp(join(tmpdir(), 'folio-test-cpu-'));
  process.env.FOLIO_TEST_CPU_DIR = cpuDir;
  process.env.NODE_OPTIONS = [process.env.NODE_OPTIONS, `--import=${pathToFileURL(join(root, 'test/support/cpu-usage.mjs'))}`].filter(Boolean).join(' ');

  let failed = true;
  const updated = new Set<string>();
  const stream = run({
    files: runs,
    concurrency,
    timeout: 15 * 60_000,
    // A test process ends once its tests and hooks have run, even if a client library left a
    // timer behind (the co-editing provider's reconnection backoff, after its server was killed,
    // kept a process alive until the 15-minute timeout).
    forceExit: true,
    ...(namePatterns.length ? { testNamePatterns: namePatterns } : {}),
  });
  stream.on('test:complete', (data: { name: string; file?: string; details: { duration_ms: number } }) => {
    if (!data.file || data.name !== data.file) return;
    // A bundle's time is shared among its files, for the next run's order and grouping.
    const files = members(data.file);
    for (const file of files) {
      timings[key(file)] = Math.round(data.details.duration_ms / files.length);
      updated.add(key(file));
    }
  });
  const reporter = createReporter(
    (summary) => {
      failed = summary.failed > 0;
    },
    (file) => cpuOf(cpuDir, file),
    (run) => {
      const files = members(run);
      return files.length > 1 ? files.map((f) => basename(f, '.test.ts')).join(' + ') : relative(process.cwd(), files[0]!);
    },
  );
  // Tests report the file they are written in (its source, or its module in the bundle): they are
  // counted under their process.
  const owner = new Map([...processes].flatMap(([run, files]) => files.flatMap((f) => [[f, run] as const, [runnable(f), run] as const])));
  async function* byProcess() {
    for await (const event of stream as AsyncIterable<{ type: string; data: { file?: string; name: string; nesting: number } }>) {
      const file = event.data.file;
      const to = file !== undefined ? owner.get(file) : undefined;
      yield to ? { ...event, data: { ...event.data, file: to } } : event;
    }
  }
  for await (const chunk of reporter(byProcess())) process.stdout.write(chunk);
  await rm(cpuDir, { recursive: true, force: true });

  await mkdir(join(root, 'node_modules/.cache'), { recursive: true });
  // Merged into the file as it is now: runs side by side (other worktrees share node_modules)
  // would otherwise keep only the files of the last run to end.
  const latest = await loadTimings();
  for (const [file, ms] of Object.entries(timings)) if (updated.has(file) || !(file in latest)) latest[file] = ms;
  await writeFile(timingsPath, JSON.stringify(latest, null, 1));
  process.exitCode = failed ? 1 : 0;
}

/**
 * Files that keep a process of their own: they run `folio serve` processes, drive a browser, check
 * CPU limits or send thousands of requests, and would slow or disturb the files beside them.
 */
const ALONE = new Set(['app', 'backup', 'app-flows', 'app-flows-editor', 'cli', 'durability', 'multi-process', 'collab-processes', 'fuzz', 'published-site', 'integrations-runtime', 'hardening-content', 'git-sync', 'git-sync-two-way']);
/**
 * Files per shared process. A process costs ~4-6 s of CPU before its first test (loading the
 * server, its database) and compiles the official schema's validators its files use (an operation's
 * once per process); sharing it among files pays that once. 8 rather than 5: 7 processes instead of
 * 11 for the 56 shared files, still more than TEST_CONCURRENCY to balance.
 */
// On PostgreSQL a process holds a connection pool per file's server: eight files in each of four
// processes at once went past the server's 100 connections, five do not.
const BUNDLE_SIZE = Number(process.env.TEST_BUNDLE_SIZE) || (process.env.TEST_DATABASE_URL ? 5 : 8);

const sum = (files: string[], timings: Record<string, number>, key: (f: string) => string) => files.reduce((t, f) => t + (timings[key(f)] ?? 60_000), 0);

/**
 * Groups the other files, a few per process, balanced by their last durations (longest first, each
 * to the lightest group). A group is a generated module importing its files: node's runner runs
 * it as one file, each file's `before`/`after` hooks around all the tests of the process.
 */
async function group(files: string[], timings: Record<string, number>, key: (f: string) => string, runnable: (file: string) => string): Promise<Map<string, string[]>> {
  const shared = files.filter((f) => !ALONE.has(basename(f, '.test.ts')));
  const count = Math.ceil(shared.length / BUNDLE_SIZE);
  if (count === 0) return new Map();
  const groups = Array.from({ length: count }, () => ({ files: [] as string[], time: 0 }));
  for (const file of [...shared].sort((a, b) => sum([b], timings, key) - sum([a], timings, key))) {
    const lightest = groups.reduce((best, g) => (g.files.length < BUNDLE_SIZE && (best === undefined || g.time < best.time) ? g : best), undefined as (typeof groups)[number] | undefined)!;
    lightest.files.push(file);
    lightest.time += sum([file], timings, key);
  }
  const dir = join(root, 'node_modules/.cache/folio-test-bundles');
  await rm(dir, { recursive: true, force: true });
  await mkdir(dir, { recursive: true });
  const out = new Map<string, string[]>();
  for (const [i, g] of groups.entries()) {
    const path = join(dir, `bundle-${i + 1}.test.mjs`);
    await writeFile(path, `// Generated by test/support/run.ts: these test files share one process.\n${g.files.map((f) => `import ${JSON.stringify(pathToFileURL(runnable(f)).href)};`).join('\n')}\n`);
    out.set(path, g.files);
  }
  return out;
}

/** Node's flags without the TypeScript loader (`--import tsx` or `--import=tsx`). */
function withoutTsx(argv: string[]): string[] {
  const out: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    if (argv[i] === '--import' && argv[i + 1] === 'tsx') i++;
    else if (argv[i] !== '--import=tsx') out.push(argv[i]!);
  }
  return out;
}

/** The CPU time (ms) a test file's process and its waited-for children used, when it said. */
async function cpuOf(dir: string, file: string): Promise<number | undefined> {
  try {
    const { ownMs, childrenMs } = JSON.parse(await readFile(join(dir, encodeURIComponent(file)), 'utf8'));
    return ownMs + childrenMs;
  } catch {
    return undefined;
  }
}

main().catch((err) => {
  console.error(err);
  process.exitCode = 1;
});
