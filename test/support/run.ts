/**
 * `npm test`: builds the database templates once (test/support/templates.ts), then runs the test
 * files in parallel, slowest first, with the short report of test/support/reporter.ts.
 *
 *   npm test                              every test/*.test.ts
 *   npm test -- test/spaces.test.ts       some files
 *   npm test -- --test-name-pattern=merge test/content.test.ts
 *   TEST_CONCURRENCY=2 npm test           files run at once (default 4: they wait on PGlite and I/O more than on the 2 cores)
 *
 * Exit code 1 when any test fails. Start it with `node --import tsx`: the test files inherit it.
 */
import { mkdir, mkdtemp, readFile, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { run } from 'node:test';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { createReporter } from './reporter.ts';
import { prepareTemplates } from './templates.ts';

const root = fileURLToPath(new URL('../../', import.meta.url));
/** Durations of the last run per engine, to start the slowest files first (a long file started last would set the total alone). */
const timingsPath = join(root, `node_modules/.cache/folio-test-timings-${process.env.TEST_DATABASE_URL ? 'postgres' : 'pglite'}.json`);

async function loadTimings(): Promise<Record<string, number>> {
  try {
    return JSON.parse(await readFile(timingsPath, 'utf8'));
  } catch {
    return {};
  }
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
  await prepareTemplates();
  process.stdout.write(
    `${files.length} test files on ${engine}, ${concurrency} at a time (templates ready in ${((performance.now() - setup) / 1000).toFixed(1)}s)\n\n`,
  );

  // Each test file's process reports the CPU it used (test/support/cpu-usage.mjs): with files
  // running side by side on few cores, CPU time says where the time goes better than wall time.
  const cpuDir = await mkdtemp(join(tmpdir(), 'folio-test-cpu-'));
  process.env.FOLIO_TEST_CPU_DIR = cpuDir;
  process.env.NODE_OPTIONS = [process.env.NODE_OPTIONS, `--import=${pathToFileURL(join(root, 'test/support/cpu-usage.mjs'))}`].filter(Boolean).join(' ');

  let failed = true;
  const stream = run({
    files,
    concurrency,
    timeout: 15 * 60_000,
    ...(namePatterns.length ? { testNamePatterns: namePatterns } : {}),
  });
  stream.on('test:complete', (data: { name: string; file?: string; details: { duration_ms: number } }) => {
    if (data.file && data.name === data.file) timings[key(data.file)] = Math.round(data.details.duration_ms);
  });
  const reporter = createReporter(
    (summary) => {
      failed = summary.failed > 0;
    },
    (file) => cpuOf(cpuDir, file),
  );
  for await (const chunk of reporter(stream)) process.stdout.write(chunk);
  await rm(cpuDir, { recursive: true, force: true });

  await mkdir(join(root, 'node_modules/.cache'), { recursive: true });
  await writeFile(timingsPath, JSON.stringify(timings, null, 1));
  process.exitCode = failed ? 1 : 0;
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
