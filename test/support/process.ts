/**
 * The real `./bin/folio` as a child process, for tests that need what an in-process server cannot
 * give: a `kill -9` in the middle of a request, a restart on the same data, the process's own logs.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { Redis } from 'ioredis';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const BIN = './bin/folio';
/** Upper bound for one CLI command or one server start (a first start creates the embedded database: 20 to 50 s on a loaded 2-core machine). */
export const PROCESS_TIMEOUT_MS = 120_000;

/** Folio's own settings, removed from the inherited environment so a test is not steered by its caller's. */
const FOLIO_ENV = [
  'DATABASE_URL', 'DATA_DIR', 'PORT', 'HOST', 'PUBLIC_URL', 'APP_URL', 'LOG_LEVEL', 'RATE_LIMIT_MAX',
  'RATE_LIMIT_WINDOW_MS', 'BODY_LIMIT', 'JOB_POLL_MS', 'WORKERS', 'AUTH_CACHE_TTL_MS', 'FOLIO_ADMIN_EMAIL',
  'REDIS_URL', 'REDIS_PREFIX', 'SITE_CACHE_TTL_MS', 'SITE_HOSTS_REFRESH_MS', 'PASSWORD_HASH_COST',
  // Set by node's test runner for its own children; the CLI is not a test file.
  'NODE_TEST_CONTEXT',
];

/** The environment of a child: ours without Folio's settings, then `vars`. */
export function folioEnv(vars: Record<string, string>): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env };
  for (const name of FOLIO_ENV) delete env[name];
  // A cheap password hash, as for in-process test servers (test/support/server.ts).
  return { ...env, LOG_LEVEL: 'silent', HOST: '127.0.0.1', PASSWORD_HASH_COST: '10', ...vars };
}

/** Every child started here that has not exited yet, so a failed test can end them (`killAll`). */
const running = new Set<ChildProcess>();

export function killAll(): void {
  for (const child of running) child.kill('SIGKILL');
}

export interface CliResult {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

/** Runs `./bin/folio ...args` to completion; `input` is written to its standard input. */
export function runCli(args: string[], env: NodeJS.ProcessEnv, opts: { input?: string } = {}): Promise<CliResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(BIN, args, { cwd: ROOT, env, stdio: [opts.input === undefined ? 'ignore' : 'pipe', 'pipe', 'pipe'] });
    running.add(child);
    if (opts.input !== undefined) child.stdin!.end(opts.input);
    let stdout = '';
    let stderr = '';
    child.stdout!.setEncoding('utf8').on('data', (d: string) => (stdout += d));
    child.stderr!.setEncoding('utf8').on('data', (d: string) => (stderr += d));
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`folio ${args.join(' ')} did not finish in ${PROCESS_TIMEOUT_MS} ms; stderr:\n${stderr}`));
    }, PROCESS_TIMEOUT_MS);
    child.on('error', (err) => {
      clearTimeout(timer);
      running.delete(child);
      reject(err);
    });
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      running.delete(child);
      resolve({ code, signal, stdout, stderr });
    });
  });
}

export interface Exit {
  code: number | null;
  signal: NodeJS.Signals | null;
}

export interface ServeProcess {
  child: ChildProcess;
  /** Where it listens (read from its start-up line, so PORT=0 works); '' for `worker`, which does not listen. */
  url: string;
  stdout(): string;
  stderr(): string;
  exited: Promise<Exit>;
  /** Sends the signal and waits for the process to end (SIGKILL after PROCESS_TIMEOUT_MS). */
  stop(signal?: NodeJS.Signals): Promise<Exit>;
}

/**
 * Starts `./bin/folio serve` (or `worker`) and waits until it prints that it is ready and, for
 * serve, until it prints where it listens and /readyz answers 200 (the database is open). PORT
 * defaults to 0: the system picks a free port.
 */
export async function serve(env: NodeJS.ProcessEnv, command: 'serve' | 'worker' = 'serve'): Promise<ServeProcess> {
  const child = spawn(BIN, [command], { cwd: ROOT, env: { PORT: '0', ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  running.add(child);
  let stdout = '';
  let stderr = '';
  child.stdout!.setEncoding('utf8').on('data', (d: string) => (stdout += d));
  child.stderr!.setEncoding('utf8').on('data', (d: string) => (stderr += d));
  let done: Exit | undefined;
  const exited = new Promise<Exit>((resolve) => {
    child.on('close', (code, signal) => {
      running.delete(child);
      done = { code, signal };
      resolve(done);
    });
  });
  const deadline = Date.now() + PROCESS_TIMEOUT_MS;
  let url = '';
  try {
    for (;;) {
      if (done) throw new Error(`folio ${command} exited early (${done.code ?? done.signal}); stderr:\n${stderr}`);
      if (Date.now() > deadline) throw new Error(`folio ${command} was not ready in ${PROCESS_TIMEOUT_MS} ms; stderr:\n${stderr}`);
      if (/^Ready in \d+\.\d s/m.test(stderr)) {
        if (command !== 'serve') break;
        url ||= /Folio listening on (http:\/\/\S+) /.exec(stderr)?.[1] ?? '';
        if (url && (await fetch(`${url}/readyz`).then((r) => r.status === 200, () => false))) break;
      }
      await new Promise((r) => setTimeout(r, 50));
    }
  } catch (err) {
    child.kill('SIGKILL');
    throw err;
  }
  return {
    child,
    url,
    stdout: () => stdout,
    stderr: () => stderr,
    exited,
    async stop(signal = 'SIGTERM') {
      if (!done) child.kill(signal);
      const timer = setTimeout(() => child.kill('SIGKILL'), PROCESS_TIMEOUT_MS);
      try {
        return await exited;
      } finally {
        clearTimeout(timer);
      }
    },
  };
}

/** Why Redis at `url` cannot be used, or undefined when it answers (tests that need it skip with this reason). */
export async function redisProblem(url: string): Promise<string | undefined> {
  const redis = new Redis(url, { lazyConnect: true, connectTimeout: 1000, maxRetriesPerRequest: 0, retryStrategy: () => null });
  redis.on('error', () => {});
  try {
    await redis.connect();
    await redis.ping();
    return undefined;
  } catch (err) {
    return `Redis at ${url} does not answer (${err instanceof Error ? err.message : err})`;
  } finally {
    redis.disconnect();
  }
}

/** The skip reason of a test that runs several processes on one database. */
export const NEEDS_POSTGRES = 'needs PostgreSQL (TEST_DATABASE_URL): the embedded database (PGlite) is a single process';
