import { spawn } from 'node:child_process';
import { lookup } from 'node:dns/promises';
import { mkdtemp, rm } from 'node:fs/promises';
import { isIP } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fetchMayReach } from '../content/files.ts';
import type { Config } from '../platform/config.ts';
import { BadRequestError } from '../platform/errors.ts';

/**
 * The system `git`, run safely on repositories Folio does not trust:
 * - no configuration but ours: system and global files are ignored (GIT_CONFIG_NOSYSTEM,
 *   GIT_CONFIG_GLOBAL=/dev/null, HOME in a temporary directory); hooks point at an empty path;
 *   only the http and https transports are allowed (`protocol.allow=never`), so `ext::`, `fd::`,
 *   `file://` and local paths are refused by git itself as well as by `parseRemote`;
 * - repositories are fetched into bare repositories and read with `ls-tree`/`cat-file`: no work
 *   tree is ever checked out, so no filter, attribute, symlink or path outside the repository can
 *   act on the disk;
 * - credentials never reach argv or logs: they go to git as an `http.extraHeader` set through the
 *   GIT_CONFIG_COUNT/KEY/VALUE environment of that one child process;
 * - the host is resolved once, checked with the address rules of `insert_files` (fetchMayReach:
 *   FETCH_ALLOW_PRIVATE, FETCH_ALLOW_CIDRS), and pinned for git with `http.curloptResolve`, so git
 *   connects to the vetted address and never to a second DNS answer; redirects are not followed.
 */

/** A remote as git sync uses it: the URL without credentials, and the credentials apart. */
export interface Remote {
  /** http(s) URL without user information (safe to log and store). */
  url: string;
  username?: string;
  password?: string;
}

export class GitError extends Error {}

/** A git command that ran past GIT_TIMEOUT_MS (the operation's state is `timeout`). */
export class GitTimeoutError extends GitError {}

/** Parses a repository URL, refusing what is not plain http(s) (options, transports, local paths). */
export function parseRemote(raw: string, field = 'url'): Remote {
  const text = raw.trim();
  if (text.startsWith('-')) throw new BadRequestError(`${field}: a repository URL cannot start with "-"`);
  if (/^(ext|fd|file)::?/i.test(text) || /^[a-z][a-z0-9+.-]*::/i.test(text)) {
    throw new BadRequestError(`${field}: git transports such as ext::, fd:: and file:// are not allowed; use an http(s) URL`);
  }
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    throw new BadRequestError(`${field}: "${redactRemote(text)}" is not a URL; use https://host/owner/repo.git`);
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') {
    throw new BadRequestError(`${field}: only http and https repository URLs are allowed (got ${url.protocol.replace(':', '')})`);
  }
  if (!url.hostname) throw new BadRequestError(`${field}: the URL has no host`);
  const username = url.username ? decodeURIComponent(url.username) : undefined;
  const password = url.password ? decodeURIComponent(url.password) : undefined;
  url.username = '';
  url.password = '';
  url.hash = '';
  return { url: url.toString(), ...(username !== undefined ? { username } : {}), ...(password !== undefined ? { password } : {}) };
}

/** A URL as it may be shown: user information removed. */
export function redactRemote(text: string): string {
  return text.replace(/\/\/[^/@\s]*@/g, '//');
}

/** Refs git sync reads and writes: branches, tags and pull-request heads. */
export function checkRef(ref: string, field = 'ref'): string {
  if (!/^refs\/(heads|tags|pull|merge-requests)\/[A-Za-z0-9._\/-]+$/.test(ref) || ref.includes('..') || ref.includes('//') || ref.endsWith('/') || ref.endsWith('.lock')) {
    throw new BadRequestError(`${field}: "${ref}" is not a ref such as refs/heads/main (branches, tags or refs/pull/N/head)`);
  }
  return ref;
}

/** Resolves the host of a remote and checks every address against the outbound rules. */
export async function vetRemote(remote: Remote, config: Pick<Config, 'fetchAllowPrivate' | 'fetchAllowCidrs'>): Promise<{ host: string; port: number; address: string }> {
  const url = new URL(remote.url);
  const host = url.hostname.replace(/^\[|\]$/g, '');
  const port = Number(url.port || (url.protocol === 'https:' ? 443 : 80));
  let addresses: string[];
  if (isIP(host)) addresses = [host];
  else {
    try {
      addresses = (await lookup(host, { all: true })).map((a) => a.address);
    } catch {
      throw new GitError(`The repository host ${host} could not be resolved: check the repository URL`);
    }
  }
  const allowed = addresses.filter((a) => fetchMayReach(a, config));
  if (!allowed.length || allowed.length !== addresses.length) {
    throw new GitError(`The repository host ${host} resolves to a private or reserved address, which git sync may not reach (FETCH_ALLOW_PRIVATE, FETCH_ALLOW_CIDRS)`);
  }
  return { host, port, address: allowed[0]! };
}

/** Same as vetRemote, answering 400 (for checks made while a request is answered). */
export async function vetRemoteForRequest(remote: Remote, config: Pick<Config, 'fetchAllowPrivate' | 'fetchAllowCidrs'>, field = 'url') {
  try {
    return await vetRemote(remote, config);
  } catch (err) {
    if (err instanceof GitError) throw new BadRequestError(`${field}: ${err.message}`);
    throw err;
  }
}

export interface GitRunOptions {
  cwd: string;
  input?: string | Buffer | undefined;
  /** Set for commands that talk to the remote. */
  remote?: { remote: Remote; pinned: { host: string; port: number; address: string } } | undefined;
  timeoutMs?: number | undefined;
  /** Largest stdout kept, in bytes. */
  maxOutput?: number | undefined;
}

/** A scratch directory with a bare repository; removed by `dispose`. */
export class Workspace {
  private constructor(readonly dir: string) {}

  static async create(): Promise<Workspace> {
    const dir = await mkdtemp(join(tmpdir(), 'folio-git-'));
    const ws = new Workspace(dir);
    await ws.git(['init', '--bare', '--quiet', 'repo.git'], { cwd: dir });
    return ws;
  }

  get repo(): string {
    return join(this.dir, 'repo.git');
  }

  async dispose(): Promise<void> {
    await rm(this.dir, { recursive: true, force: true });
  }

  git(args: string[], opts: Partial<GitRunOptions> = {}): Promise<Buffer> {
    return runGit(args, { cwd: opts.cwd ?? this.repo, ...opts }, this.dir);
  }
}

const SAFE_CONFIG: [string, string][] = [
  ['core.hooksPath', '/dev/null'],
  ['core.fsmonitor', 'false'],
  ['core.symlinks', 'false'],
  ['protocol.allow', 'never'],
  ['protocol.http.allow', 'always'],
  ['protocol.https.allow', 'always'],
  ['http.followRedirects', 'false'],
  ['credential.helper', ''],
  ['gc.auto', '0'],
  ['maintenance.auto', 'false'],
  ['fetch.recurseSubmodules', 'false'],
  ['init.defaultBranch', 'main'],
];

function runGit(args: string[], opts: GitRunOptions, home: string): Promise<Buffer> {
  const config: [string, string][] = [...SAFE_CONFIG];
  if (opts.remote) {
    const { remote, pinned } = opts.remote;
    const address = pinned.address.includes(':') ? `[${pinned.address}]` : pinned.address;
    config.push(['http.curloptResolve', `${pinned.host}:${pinned.port}:${address}`]);
    if (remote.username !== undefined || remote.password !== undefined) {
      const basic = Buffer.from(`${remote.username ?? ''}:${remote.password ?? ''}`).toString('base64');
      config.push(['http.extraHeader', `Authorization: Basic ${basic}`]);
    }
  }
  const env: NodeJS.ProcessEnv = {
    PATH: process.env.PATH ?? '/usr/bin:/bin',
    HOME: home,
    LANG: 'C',
    LC_ALL: 'C',
    GIT_CONFIG_NOSYSTEM: '1',
    GIT_CONFIG_GLOBAL: '/dev/null',
    GIT_ATTR_NOSYSTEM: '1',
    GIT_TERMINAL_PROMPT: '0',
    GIT_ASKPASS: '/bin/false',
    SSH_ASKPASS: '/bin/false',
    GIT_NO_REPLACE_OBJECTS: '1',
    GIT_PROTOCOL_FROM_USER: '0',
    GIT_CONFIG_COUNT: String(config.length),
  };
  config.forEach(([k, v], i) => {
    env[`GIT_CONFIG_KEY_${i}`] = k;
    env[`GIT_CONFIG_VALUE_${i}`] = v;
  });
  const maxOutput = opts.maxOutput ?? 512 * 1024 * 1024;
  return new Promise((resolve, reject) => {
    const child = spawn('git', args, { cwd: opts.cwd, env, stdio: ['pipe', 'pipe', 'pipe'] });
    const out: Buffer[] = [];
    let size = 0;
    let err = '';
    let failed: Error | undefined;
    const timer = setTimeout(() => {
      failed = new GitTimeoutError(`git ${args[0]} took longer than ${Math.round((opts.timeoutMs ?? 120_000) / 1000)} s and was stopped (GIT_TIMEOUT_MS)`);
      child.kill('SIGKILL');
    }, opts.timeoutMs ?? 120_000);
    child.stdout.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > maxOutput) {
        failed ??= new GitError(`git ${args[0]} produced more than ${maxOutput} bytes`);
        child.kill('SIGKILL');
        return;
      }
      out.push(chunk);
    });
    child.stderr.on('data', (chunk: Buffer) => {
      if (err.length < 8192) err += chunk.toString();
    });
    child.on('error', (e) => {
      clearTimeout(timer);
      reject(new GitError(`git could not be started (${e.message}): install git on the server`));
    });
    child.on('close', (code) => {
      clearTimeout(timer);
      if (failed) return reject(failed);
      if (code !== 0) return reject(new GitError(gitMessage(args[0]!, err)));
      resolve(Buffer.concat(out));
    });
    child.stdin.on('error', () => {}); // git may exit before reading all of its input
    child.stdin.end(opts.input ?? '');
  });
}

/** A short, credential-free sentence from git's stderr. */
function gitMessage(command: string, stderr: string): string {
  const text = redactRemote(stderr)
    .replace(/Authorization: \S+ \S+/gi, 'Authorization: [redacted]')
    .split('\n')
    .map((l) => l.trim())
    .filter((l) => l && !l.startsWith('hint:'))
    .join(' ')
    .slice(0, 400);
  if (/Authentication failed|could not read (Username|Password)|terminal prompts disabled|\b401\b|\b403\b/.test(text)) return `The repository refused the credentials (git ${command}): check the username and password or token`;
  if (/couldn't find remote ref|not our ref/i.test(text)) return `The ref does not exist in the repository (git ${command}): check the branch name`;
  if (/non-fast-forward|fetch first|rejected/i.test(text)) return `The branch moved on the remote since it was read (git ${command}): import first, then export again`;
  return `git ${command} failed: ${text || 'no message'}`;
}
