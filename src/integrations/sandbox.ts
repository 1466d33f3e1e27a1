import type { Miniflare as MiniflareType } from 'miniflare';

/**
 * Runs published integration scripts in workerd (Cloudflare's runtime for untrusted Workers
 * code), through miniflare. One workerd process per integration version, kept while used; a
 * dispatch that outlives its time limit disposes of the process (which stops the script however
 * busy it is), so a slow or crashing script never holds anything else up. Everything the script
 * fetches goes through `outbound` (Folio's address checks, the subrequest limit).
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
  mf: MiniflareType;
  ready: Promise<unknown>;
  /** Dispatches run one at a time per runtime (the log capture and subrequest count are per dispatch). */
  queue: Promise<unknown>;
  subrequests: number;
  outbound: Outbound | undefined;
  lastUsed: number;
}

const MAX_RUNTIMES = 4;
const runtimes = new Map<string, Runtime>();

async function runtimeFor(key: string, script: string): Promise<Runtime> {
  const existing = runtimes.get(key);
  if (existing) {
    existing.lastUsed = Date.now();
    return existing;
  }
  // Few processes at once: the least recently used goes first.
  while (runtimes.size >= MAX_RUNTIMES) {
    const oldest = [...runtimes.values()].sort((a, b) => a.lastUsed - b.lastUsed)[0]!;
    await disposeRuntime(oldest);
  }
  const { Miniflare } = await import('miniflare');
  const runtime: Runtime = { key, queue: Promise.resolve(), subrequests: 0, outbound: undefined, lastUsed: Date.now() } as Runtime;
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
    // Console output is captured by the wrapper; the runtime's own output is not the API's.
    handleRuntimeStdio: (stdout: NodeJS.ReadableStream, stderr: NodeJS.ReadableStream) => {
      stdout.resume();
      stderr.resume();
    },
  });
  runtime.ready = runtime.mf.ready;
  runtimes.set(key, runtime);
  try {
    await runtime.ready;
  } catch (err) {
    runtimes.delete(key);
    await runtime.mf.dispose().catch(() => {});
    throw err;
  }
  return runtime;
}

async function disposeRuntime(runtime: Runtime): Promise<void> {
  if (runtimes.get(runtime.key) === runtime) runtimes.delete(runtime.key);
  await runtime.mf.dispose().catch(() => {});
}

export interface SandboxResult {
  status: number;
  headers: Record<string, string>;
  body: string;
  logs: LogLine[];
}

/** Sends one request (the runtime's multipart dispatch) to a script and waits for its answer. */
export async function runInSandbox(
  key: string,
  script: string,
  request: { body: Uint8Array; contentType: string },
  limits: SandboxLimits,
  outbound: Outbound,
): Promise<SandboxResult> {
  const runtime = await runtimeFor(key, script);
  const run = runtime.queue.then(async () => {
    runtime.subrequests = 0;
    runtime.outbound = async (req) => {
      if (runtime.subrequests > limits.subrequests) return new Response(`Too many subrequests (limit ${limits.subrequests})`, { status: 429 });
      return outbound(req);
    };
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`The script did not answer within ${limits.timeoutMs} ms; it was stopped`)), limits.timeoutMs);
    });
    try {
      const response = await Promise.race([
        runtime.mf.dispatchFetch('http://integration/v1', {
          method: 'POST',
          headers: { 'content-type': request.contentType },
          body: request.body,
        }),
        timeout,
      ]);
      const text = await Promise.race([response.text(), timeout]);
      return JSON.parse(text) as SandboxResult;
    } catch (err) {
      // Stopped or crashed: the next dispatch starts a fresh runtime.
      await disposeRuntime(runtime);
      throw err;
    } finally {
      clearTimeout(timer);
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
