import type { Miniflare as MiniflareType } from 'miniflare';
import { cpuExceeded, cpuTimeMs, killChild, memoryExceeded, overLimit, startBounded, WATCH_INTERVAL_MS, watchOutput } from './sandbox-limits.ts';

/**
 * Runs published integration scripts in workerd (Cloudflare's runtime for untrusted Workers
 * code), through miniflare. One workerd process per integration version, kept while used; a
 * dispatch that outlives its time limit, or a script past its memory limit (sandbox-limits.ts),
 * kills the process (which stops the script however busy it is), so a slow, greedy or crashing
 * script never holds anything else up. Everything the script fetches goes through `outbound`
 * (Folio's address checks, the subrequest limit).
 */

export interface LogLine {
  level: 'debug' | 'info' | 'warn' | 'error';
  message: string;
  timestamp: string;
}

export interface SandboxLimits {
  /** Wall-clock time one dispatch may take (CPU included); past it the runtime is killed. */
  timeoutMs: number;
  /** Most fetches one dispatch may make. */
  subrequests: number;
  /** Memory the script may use, in MB; past it the runtime is killed (sandbox-limits.ts). */
  memoryMb: number;
  /** CPU time one dispatch may use, in ms (waiting on fetches is free); past it the runtime is killed. */
  cpuMs: number;
}

export type Outbound = (request: Request) => Promise<Response>;

/**
 * The worker Folio runs: it imports the integration's module, records its console output for the
 * event trace, and answers with the integration's response and the lines it logged.
 */
const WRAPPER = `
import integration from './integration.mjs';
const LEVELS = { log: 'info', info: 'info', debug: 'debug', warn: 'warn', error: 'error' };
function text(args) {
  return args.map((a) => typeof a === 'string' ? a : a instanceof Error ? (a.stack || a.message) : (() => { try { return JSON.stringify(a); } catch { return String(a); } })()).join(' ');
}
export default {
  async fetch(request, env, ctx) {
    const logs = [];
    for (const [name, level] of Object.entries(LEVELS)) {
      console[name] = (...args) => { logs.push({ level, message: text(args).slice(0, 4000), timestamp: new Date().toISOString() }); };
    }
    const handler = integration && (integration.fetch || (integration.default && integration.default.fetch));
    let status = 500, body = '', headers = {};
    try {
      if (!handler) throw new Error('The script exports no fetch handler (export default { fetch })');
      const response = await handler.call(integration, request, env, ctx);
      status = response.status;
      body = await response.text();
      headers = Object.fromEntries(response.headers);
    } catch (err) {
      logs.push({ level: 'error', message: String(err && err.stack || err), timestamp: new Date().toISOString() });
      body = 'Integration script failed';
    }
    return new Response(JSON.stringify({ status, headers, body: body.slice(0, 1000000), logs: logs.slice(0, 1000) }), { headers: { 'content-type': 'application/json' } });
  },
};
`;

interface Runtime {
  key: string;
  mf: MiniflareType | undefined;
  /** The workerd process (undefined where memory is not watched: not Linux). */
  pid: number | undefined;
  /** The memory limit the process was started with (its hard bound). */
  memoryMb: number;
  ready: Promise<unknown>;
  /** Resolves when workerd's output ends: the process has exited. */
  exited: Promise<void>;
  /** Dispatches run one at a time per runtime (the log capture and subrequest count are per dispatch). */
  queue: Promise<unknown>;
  subrequests: number;
  outbound: Outbound | undefined;
  /** Fails the dispatch in progress (set while one runs). */
  abort: ((err: Error) => void) | undefined;
  /** Why the runtime was stopped; a stopped runtime takes no more dispatches. */
  stopped: Error | undefined;
  disposed: Promise<void> | undefined;
  lastUsed: number;
}

const MAX_RUNTIMES = 4;
const runtimes = new Map<string, Runtime>();

/** Runtimes being started, by key: concurrent first dispatches share one start (not one process each). */
const starting = new Map<string, Promise<Runtime>>();

async function runtimeFor(key: string, script: string, memoryMb: number): Promise<Runtime> {
  const existing = runtimes.get(key);
  if (existing) {
    existing.lastUsed = Date.now();
    return existing;
  }
  let start = starting.get(key);
  if (!start) {
    start = startRuntime(key, script, memoryMb).finally(() => starting.delete(key));
    starting.set(key, start);
  }
  return start;
}

async function startRuntime(key: string, script: string, memoryMb: number): Promise<Runtime> {
  // Few processes at once: the least recently used goes first.
  while (runtimes.size >= MAX_RUNTIMES) {
    const oldest = [...runtimes.values()].sort((a, b) => a.lastUsed - b.lastUsed)[0]!;
    await disposeRuntime(oldest);
  }
  const { Miniflare } = await import('miniflare');
  let exited!: () => void;
  const runtime: Runtime = {
    key,
    mf: undefined,
    pid: undefined,
    memoryMb,
    ready: Promise.resolve(),
    exited: new Promise<void>((resolve) => (exited = resolve)),
    queue: Promise.resolve(),
    subrequests: 0,
    outbound: undefined,
    abort: undefined,
    stopped: undefined,
    disposed: undefined,
    lastUsed: Date.now(),
  };
  runtime.ready = startBounded(memoryMb, () => {
    runtime.mf = new Miniflare({
      modules: [
        { type: 'ESModule', path: 'worker.mjs', contents: WRAPPER },
        { type: 'ESModule', path: 'integration.mjs', contents: script },
      ],
      compatibilityDate: '2024-09-23',
      compatibilityFlags: ['nodejs_compat'],
      // The script's MODE global (@gitbook/runtime reads it).
      bindings: { MODE: 'production' },
      outboundService: async (request: Request) => {
        runtime.subrequests++;
        if (!runtime.outbound) return new Response('No dispatch in progress', { status: 503 });
        return runtime.outbound(request);
      },
      // Console output is captured by the wrapper; the runtime's own output is not the API's,
      // but it says when the hard memory bound refused the script memory.
      handleRuntimeStdio: (stdout: NodeJS.ReadableStream, stderr: NodeJS.ReadableStream) => {
        stdout.resume();
        watchOutput(stderr, () => stopRuntime(runtime, memoryExceeded(runtime.memoryMb)));
        stderr.on('close', exited);
        stderr.on('end', exited);
        stderr.resume();
      },
    });
    return runtime.mf.ready;
  }).then(({ pid }) => {
    runtime.pid = pid;
  });
  runtimes.set(key, runtime);
  try {
    await runtime.ready;
    // Stopped while it started (its top level took too much memory).
    if (runtime.stopped) throw runtime.stopped;
  } catch (err) {
    const reason = runtime.stopped ?? err;
    await disposeRuntime(runtime);
    throw reason;
  }
  return runtime;
}

/**
 * Stops a runtime at once (SIGKILL to workerd): the dispatch in progress fails with `reason`,
 * and the next dispatch starts a fresh runtime.
 */
function stopRuntime(runtime: Runtime, reason: Error): void {
  if (runtime.stopped) return;
  runtime.stopped = reason;
  if (runtimes.get(runtime.key) === runtime) runtimes.delete(runtime.key);
  if (runtime.pid !== undefined) killChild(runtime.pid);
  runtime.abort?.(reason);
  void disposeRuntime(runtime);
}

/** Disposes of a runtime's miniflare (and process) once, however many paths ask for it. */
function disposeRuntime(runtime: Runtime): Promise<void> {
  if (runtimes.get(runtime.key) === runtime) runtimes.delete(runtime.key);
  runtime.stopped ??= new Error('The runtime was stopped');
  runtime.disposed ??= (async () => {
    await runtime.ready.catch(() => {});
    await runtime.mf?.dispose().catch(() => {});
  })();
  return runtime.disposed;
}

export interface SandboxResult {
  status: number;
  headers: Record<string, string>;
  body: string;
  logs: LogLine[];
}

/** Sends one request (the runtime's multipart dispatch) to a script and waits for its answer. */
export function runInSandbox(
  key: string,
  script: string,
  request: { body: Uint8Array; contentType: string },
  limits: SandboxLimits,
  outbound: Outbound,
): Promise<SandboxResult> {
  return dispatch(key, script, request, limits, outbound, false);
}

async function dispatch(
  key: string,
  script: string,
  request: { body: Uint8Array; contentType: string },
  limits: SandboxLimits,
  outbound: Outbound,
  again: boolean,
): Promise<SandboxResult> {
  const runtime = await runtimeFor(key, script, limits.memoryMb);
  const run = runtime.queue.then(async (): Promise<SandboxResult> => {
    await runtime.ready.catch(() => {});
    if (runtime.stopped) {
      // Stopped while this dispatch waited its turn: it goes to a fresh runtime, once (a runtime
      // that keeps being stopped before it is used is this dispatch's failure).
      if (again) throw runtime.stopped;
      return dispatch(key, script, request, limits, outbound, true);
    }
    runtime.subrequests = 0;
    runtime.outbound = async (req) => {
      if (runtime.subrequests > limits.subrequests) return new Response(`Too many subrequests (limit ${limits.subrequests})`, { status: 429 });
      return outbound(req);
    };
    let timer: NodeJS.Timeout | undefined;
    let watch: NodeJS.Timeout | undefined;
    // Fails when the time runs out or the runtime is stopped (memory), whichever comes first.
    const stop = new Promise<never>((_, reject) => {
      runtime.abort = reject;
      timer = setTimeout(() => stopRuntime(runtime, new Error(`The script did not answer within ${limits.timeoutMs} ms; it was stopped`)), limits.timeoutMs);
    });
    const pid = runtime.pid;
    if (pid !== undefined) {
      // The process runs this dispatch only (one at a time per runtime), so the CPU time it uses
      // from now on is the script's (and the runtime's work for it: parsing, garbage collection).
      const cpuAtStart = cpuTimeMs(pid) ?? 0;
      watch = setInterval(() => {
        if (overLimit(pid, limits.memoryMb)) stopRuntime(runtime, memoryExceeded(limits.memoryMb));
        else if ((cpuTimeMs(pid) ?? 0) - cpuAtStart > limits.cpuMs) stopRuntime(runtime, cpuExceeded(limits.cpuMs));
      }, WATCH_INTERVAL_MS);
    }
    try {
      const response = await Promise.race([
        runtime.mf!.dispatchFetch('http://integration/v1', {
          method: 'POST',
          headers: { 'content-type': request.contentType },
          body: request.body,
        }),
        stop,
      ]);
      const text = await Promise.race([response.text(), stop]);
      return JSON.parse(text) as SandboxResult;
    } catch (err) {
      // workerd may have died of the hard memory bound, its last words (read by watchOutput)
      // still on their way: wait for its output to end (briefly) to say so.
      if (!runtime.stopped) await Promise.race([runtime.exited, new Promise((r) => setTimeout(r, 1000).unref())]);
      // Stopped or crashed: the next dispatch starts a fresh runtime.
      const reason = runtime.stopped ?? err;
      await disposeRuntime(runtime);
      throw reason;
    } finally {
      clearTimeout(timer);
      clearInterval(watch);
      runtime.abort = undefined;
      runtime.outbound = undefined;
    }
  });
  runtime.queue = run.catch(() => {});
  return run;
}

/** Stops every runtime (server shutdown). */
export async function closeSandboxes(): Promise<void> {
  await Promise.all([...runtimes.values()].map(disposeRuntime));
}
