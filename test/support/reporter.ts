import { relative } from 'node:path';
import { inspect } from 'node:util';

/**
 * A short test report for node's test runner: one line per test file (tests, time), every failure
 * in full (the test's name, its error and stack, and what the file printed), and a last line
 * `N passed, N failed[, N skipped]` that CI reads. test/support/run.ts (npm test) feeds it the
 * events of `run()` from node:test (Node 20 cannot load a TypeScript reporter named on the command line).
 */

interface TestEventData {
  name: string;
  nesting: number;
  file?: string;
  skip?: boolean | string;
  todo?: boolean | string;
  message?: string;
  details?: { duration_ms?: number; type?: string; error?: unknown };
}

interface TestEvent {
  type: string;
  data: TestEventData;
}

interface FileState {
  passed: number;
  failed: number;
  skipped: number;
  /** Names of the tests (and suites) started at each nesting level, to name a failure by its path. */
  path: string[];
  failures: string[];
  /** Tests skipped with a reason, as `name: reason`: listed under the file's line. */
  skips: string[];
  /** What the file printed: shown only when the file failed. */
  output: string[];
  /** Set when the file's process has ended. */
  duration?: number;
  /** CPU time of the file's process and its children, when known. */
  cpu?: number | undefined;
  error?: unknown;
}

const OUTPUT_LINES = 200;

function displayName(file: string): string {
  return relative(process.cwd(), file) || file;
}

function seconds(ms: number): string {
  return ms < 60_000 ? `${(ms / 1000).toFixed(1)}s` : `${Math.floor(ms / 60_000)}m ${Math.round((ms % 60_000) / 1000)}s`;
}

/** The error as the test threw it, with runner-internal stack frames dropped. */
function describeError(error: unknown): string {
  const cause = (error as { cause?: unknown })?.cause ?? error;
  const text = typeof cause === 'string' ? cause : inspect(cause, { depth: 6, colors: false, breakLength: 100 });
  return text
    .split('\n')
    .filter((line) => !/^\s+at .*\((node:|node_modules\/)|^\s+at node:|^\s+at (new )?(Safe)?Promise|^\s+at Array\.map/.test(line))
    .join('\n');
}

function indent(text: string, by = '    '): string {
  return text.replace(/\n$/, '').split('\n').map((line) => by + line).join('\n');
}

export interface Summary {
  files: number;
  failedFiles: string[];
  passed: number;
  failed: number;
  skipped: number;
}

/**
 * Consumes the runner's events and yields the report; `onEnd` receives the totals.
 *
 * With several files at once, node reports a file's end (`test:complete` named by the file) when its
 * process exits, but the events of its tests in file order: a file's tests may still be arriving
 * after its end. A file's line is therefore written once a later file's tests are being reported
 * (all earlier files are then fully reported) or at the end of the run.
 */
export function createReporter(
  onEnd?: (summary: Summary) => void,
  cpuOf?: (file: string) => Promise<number | undefined>,
  /** The name a file is reported by, when not its path (a process shared by several files). */
  nameOf?: (file: string) => string | undefined,
) {
  const label = (file: string) => nameOf?.(file) ?? displayName(file);
  return async function* folioReporter(source: AsyncIterable<TestEvent>): AsyncGenerator<string> {
    let cpuTotal = 0;
    const started = performance.now();
    const files = new Map<string, FileState>();
    const order: string[] = [];
    const written = new Set<string>();
    const summary: Summary = { files: 0, failedFiles: [], passed: 0, failed: 0, skipped: 0 };
    const state = (file: string) => {
      let s = files.get(file);
      if (!s) files.set(file, (s = { passed: 0, failed: 0, skipped: 0, path: [], failures: [], skips: [], output: [] }));
      return s;
    };
    const failure = (s: FileState, name: string, error: unknown) => {
      s.failed++;
      s.failures.push(`${name}\n${indent(describeError(error))}`);
    };
    const testName = (s: FileState, data: TestEventData) => [...s.path.slice(0, data.nesting), data.name].join(' › ');

    function* write(file: string): Generator<string> {
      const s = state(file);
      written.add(file);
      const failed = s.failed > 0 || Boolean(s.error);
      if (failed && s.failed === 0) {
        // The file failed outside any test: it did not load, or it exited early (its output tells why).
        const { exitCode, signal } = s.error as { exitCode?: number | null; signal?: string | null };
        s.failed++;
        s.failures.push(`${label(file)} (outside any test)\n    the test process ${signal ? `was killed by ${signal}` : `exited with code ${exitCode}`}`);
      }
      yield fileLine(label(file), s);
      for (const text of s.skips) yield `  ﹣ skipped ${text}\n`;
      if (failed) {
        summary.failedFiles.push(label(file));
        for (const text of s.failures) yield `\n  ✖ ${text}\n`;
        if (s.output.length) yield `\n  output of ${label(file)}:\n${indent(s.output.join(''))}\n`;
        yield '\n';
      }
      summary.files++;
      summary.passed += s.passed;
      summary.failed += s.failed;
      summary.skipped += s.skipped;
    }

    /** Writes the completed files that come before `file` in the run's order. */
    function* writeBefore(file: string | undefined): Generator<string> {
      const index = file === undefined ? order.length : order.indexOf(file);
      for (const earlier of order.slice(0, index)) {
        if (!written.has(earlier) && state(earlier).duration !== undefined) yield* write(earlier);
      }
    }

    const diagnostics: string[] = [];
    for await (const { type, data } of source) {
      const file = data.file;
      // What the runner says beyond the tests, such as an error thrown after a test ended (it fails
      // the file's process with nothing on its stderr), comes without a file: kept for the end.
      // The runner's own totals (`tests 41`, `pass 41`…) are counted here instead.
      if (!file && type === 'test:diagnostic' && data.message && !/^(tests|suites|pass|fail|cancelled|skipped|todo|duration_ms) \S+$/.test(data.message)) {
        diagnostics.push(data.message);
      }
      if (!file) continue;
      const isFile = data.name === file;
      if (type === 'test:enqueue' && isFile && !order.includes(file)) order.push(file);
      if (['test:start', 'test:pass', 'test:fail', 'test:plan', 'test:diagnostic'].includes(type)) yield* writeBefore(file);
      if (written.has(file)) continue;
      const s = state(file);
      switch (type) {
        case 'test:start':
          if (!isFile) {
            s.path.length = data.nesting;
            s.path[data.nesting] = data.name;
          }
          break;
        case 'test:stdout':
        case 'test:stderr':
          s.output.push(data.message ?? '');
          if (s.output.length > OUTPUT_LINES) s.output.shift();
          break;

        case 'test:pass':
        case 'test:fail': {
          const error = data.details?.error as { failureType?: string; exitCode?: unknown } | undefined;
          if (isFile) {
            // The runner's verdict on the file process (it carries the exit code) is taken from its
            // end; anything else named by the file is a top-level hook that failed.
            if (type === 'test:fail' && error && !('exitCode' in error) && error.failureType !== 'subtestsFailed') {
              failure(s, `${label(file)} (outside any test)`, error);
            }
          } else if (data.details?.type === 'suite') {
            // A suite passes or fails through its tests, unless one of its hooks failed.
            if (type === 'test:fail' && error?.failureType !== 'subtestsFailed') failure(s, testName(s, data), error);
          } else if (data.skip !== undefined || data.todo !== undefined) {
            s.skipped++;
            if (typeof data.skip === 'string') s.skips.push(`${testName(s, data)}: ${data.skip}`);
          }
          else if (type === 'test:pass') s.passed++;
          else if (error?.failureType !== 'subtestsFailed') failure(s, testName(s, data), error);
          // (a test failing through its subtests: they are reported themselves)
          break;
        }
        case 'test:complete':
          if (isFile) {
            s.duration = data.details?.duration_ms ?? 0;
            s.error = data.details?.error;
            s.cpu = await cpuOf?.(file);
            cpuTotal += s.cpu ?? 0;
          }
          break;
        default:
          break;
      }
    }
    yield* writeBefore(undefined);
    if (diagnostics.length) yield `\nThe test runner said:\n${diagnostics.map((d) => indent(d)).join('\n')}\n`;

    const total = summary.passed + summary.failed + summary.skipped;
    const cpu = cpuTotal ? ` (CPU ${seconds(cpuTotal)})` : '';
    yield `\n${summary.files} files, ${total} tests in ${seconds(performance.now() - started)}${cpu}\n`;
    if (summary.failedFiles.length) yield `failed: ${summary.failedFiles.join(', ')}\n`;
    yield `${summary.passed} passed, ${summary.failed} failed${summary.skipped ? `, ${summary.skipped} skipped` : ''}\n`;
    onEnd?.(summary);
  };
}

function fileLine(name: string, s: FileState): string {
  const mark = s.failed ? '✖' : '✔';
  const counts = [`${s.passed + s.failed + s.skipped} tests`];
  if (s.failed) counts.push(`${s.failed} failed`);
  if (s.skipped) counts.push(`${s.skipped} skipped`);
  const cpu = s.cpu !== undefined ? `   CPU ${seconds(s.cpu).padStart(7)}` : '';
  return `${mark} ${name.padEnd(40)} ${counts.join(', ').padEnd(28)} ${seconds(s.duration ?? 0).padStart(7)}${cpu}\n`;
}

export default createReporter();
