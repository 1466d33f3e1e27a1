import { randomUUID } from 'node:crypto';
import { accessSync, constants, readdirSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { projectPath } from '../platform/project-files.ts';

/**
 * The memory and CPU limits of integration script runtimes (src/integrations/sandbox.ts). CPU time
 * is read from /proc/<pid>/stat by the same watchdog (see `cpuTimeMs`). Memory: workerd, as
 * miniflare runs it, has no memory limit of its own, so Folio bounds each runtime's process from
 * outside, twice:
 *
 * - a watchdog reads the process's anonymous resident memory (`RssAnon` in /proc/<pid>/status:
 *   the V8 heap, array buffers, malloc; not the pages of the workerd binary) every
 *   WATCH_INTERVAL_MS while a dispatch runs, and kills the process past the limit, so the
 *   dispatch fails with a message that says why;
 * - a hard bound (RLIMIT_DATA, set by workerd-limited.sh before it becomes workerd) refuses memory
 *   to a script that allocates faster than the watchdog looks, or between dispatches: V8 then
 *   throws or aborts, and Folio reports that as the same limit.
 *
 * Linux only (/proc, RLIMIT_DATA counting mappings); elsewhere scripts run without a memory limit.
 */

export const MEMORY_LIMITS_SUPPORTED = process.platform === 'linux';

/**
 * What a workerd process holds before the script allocates anything: about 14 MB of anonymous
 * memory with a small script, 17 MB once a @gitbook/runtime integration has handled events.
 * Not counted against INTEGRATION_MEMORY_MB, so the limit is the script's own.
 */
export const RUNTIME_ALLOWANCE_MB = 24;

/**
 * Private writable address space workerd takes whatever the script does: V8's 512 MB code range
 * (x86-64), thread stacks and allocator arenas, about 570 MB in all on two cores (V8 starts one
 * worker thread per further core, up to 16, each with an 8 MB stack: 690 MB at most). The hard
 * bound is this plus RUNTIME_ALLOWANCE_MB plus the limit, so it never stops a normal script; a
 * script that reaches it has outrun the watchdog by about 200 MB at most.
 */
const ADDRESS_SPACE_ALLOWANCE_MB = 768;

export const WATCH_INTERVAL_MS = 50;

const WRAPPER = projectPath('src/integrations/workerd-limited.sh');

export const cpuExceeded = (limitMs: number) => new Error(`The script used more than ${limitMs} ms of CPU time; it was stopped`);

/**
 * CPU time (user and system, every thread) a child of this process has used, in ms; undefined
 * once it has exited. /proc reports it in USER_HZ ticks, 100 a second on every Linux ABI, so it
 * moves in 10 ms steps.
 */
export function cpuTimeMs(pid: number): number | undefined {
  // Fields after the parenthesized name: state(3) ppid(4) … utime(14) stime(15).
  const fields = childStat(pid);
  return fields && (Number(fields[11]) + Number(fields[12])) * 10;
}

/**
 * The fields of /proc/<pid>/stat after the parenthesized name (the state first, then the parent
 * pid), when `pid` is a child of this process; undefined once it has exited and been reaped (its
 * pid may then belong to an unrelated process).
 */
function childStat(pid: number): string[] | undefined {
  let stat: string;
  try {
    stat = readFileSync(`/proc/${pid}/stat`, 'latin1');
  } catch {
    return undefined;
  }
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return Number(fields[1]) === process.pid ? fields : undefined;
}

export const memoryExceeded = (limitMb: number) => new Error(`The script used more than ${limitMb} MB of memory; it was stopped`);

/** The workerd binary miniflare would run: the operator's MINIFLARE_WORKERD_PATH, else the `workerd` package's. */
function workerdBinary(): string {
  if (process.env.MINIFLARE_WORKERD_PATH) return process.env.MINIFLARE_WORKERD_PATH;
  // The workerd package miniflare itself depends on (resolved from miniflare, where it is installed).
  const miniflare = createRequire(import.meta.url).resolve('miniflare');
  return (createRequire(miniflare)('workerd') as { default: string }).default;
}

let spawning: Promise<unknown> = Promise.resolve();

/**
 * Runs `start` (which makes miniflare spawn one workerd process and waits until it is ready) with
 * the environment that makes miniflare spawn workerd through workerd-limited.sh, and finds the
 * spawned process. Miniflare reads MINIFLARE_WORKERD_PATH and copies process.env when it spawns,
 * so these variables are set only for the start, and starts run one at a time: two runtimes
 * never see each other's variables. A token in the environment names the new process among this
 * process's children (git, esbuild and other runtimes are children too).
 */
export function startBounded<T>(limitMb: number, start: () => Promise<T>): Promise<{ value: T; pid: number | undefined }> {
  const run = spawning.then(async () => {
    if (!MEMORY_LIMITS_SUPPORTED) return { value: await start(), pid: undefined };
    try {
      accessSync(WRAPPER, constants.X_OK);
    } catch {
      throw new Error(`${WRAPPER} is not executable (chmod +x it): Folio starts integration scripts through it to bound their memory`);
    }
    const token = randomUUID();
    const vars: Record<string, string> = {
      FOLIO_WORKERD: workerdBinary(),
      FOLIO_WORKERD_DATA_KB: String((limitMb + RUNTIME_ALLOWANCE_MB + ADDRESS_SPACE_ALLOWANCE_MB) * 1024),
      FOLIO_SANDBOX: token,
      MINIFLARE_WORKERD_PATH: WRAPPER,
    };
    const saved = Object.fromEntries(Object.keys(vars).map((name) => [name, process.env[name]]));
    Object.assign(process.env, vars);
    try {
      const value = await start();
      return { value, pid: childWithToken(token) };
    } finally {
      for (const [name, value] of Object.entries(saved)) {
        if (value === undefined) delete process.env[name];
        else process.env[name] = value;
      }
    }
  });
  spawning = run.catch(() => {});
  return run;
}

/** The child of this process whose environment holds FOLIO_SANDBOX=<token>. */
function childWithToken(token: string): number | undefined {
  const needle = `\0FOLIO_SANDBOX=${token}\0`;
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      if (!childStat(Number(entry))) continue;
      if (`\0${readFileSync(`/proc/${entry}/environ`, 'latin1')}`.includes(needle)) return Number(entry);
    } catch {
      // gone meanwhile, or not ours to read
    }
  }
  return undefined;
}

/**
 * Anonymous resident memory of a child of this process, in KiB; undefined once it has exited (or
 * its pid went to a process that is not this one's child).
 */
export function anonymousMemoryKb(pid: number): number | undefined {
  let status: string;
  try {
    status = readFileSync(`/proc/${pid}/status`, 'latin1');
  } catch {
    return undefined;
  }
  if (Number(/^PPid:\s+(\d+)/m.exec(status)?.[1]) !== process.pid) return undefined;
  const kb = /^RssAnon:\s+(\d+) kB/m.exec(status)?.[1];
  return kb === undefined ? undefined : Number(kb);
}

/**
 * Kills a child of this process at once. Checked first: a child that has exited and been reaped
 * leaves its pid free for an unrelated process.
 */
export function killChild(pid: number): void {
  try {
    if (childStat(pid)) process.kill(pid, 'SIGKILL');
  } catch {
    // already gone
  }
}

/** Whether a runtime's process is over the limit: `limitMb` for the script, on top of the runtime's own allowance. */
export function overLimit(pid: number, limitMb: number): boolean {
  const kb = anonymousMemoryKb(pid);
  return kb !== undefined && kb > (limitMb + RUNTIME_ALLOWANCE_MB) * 1024;
}

/**
 * What workerd writes when the hard bound refuses memory: tcmalloc's failed mmap/mprotect, V8's
 * fatal out-of-memory. (A script can print these words itself, from its top level, and stop
 * only its own runtime.)
 */
const REFUSED = /Cannot allocate memory|out of memory|allocation failed/i;

/** Calls `refused` once when workerd's output says the hard bound refused it memory. */
export function watchOutput(stream: NodeJS.ReadableStream, refused: () => void): void {
  let tail = '';
  let told = false;
  stream.on('data', (chunk: Buffer | string) => {
    if (told) return;
    // Lines can be split across chunks: keep the end of the previous one.
    const text = tail + (typeof chunk === 'string' ? chunk : chunk.toString('latin1'));
    if (REFUSED.test(text)) {
      told = true;
      refused();
    }
    tail = text.slice(-64);
  });
}
