import { execFileSync, spawn } from 'node:child_process';
import { lstatSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, readlinkSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join, relative } from 'node:path';

/**
 * A real git server on 127.0.0.1 for tests: `git http-backend` run as a CGI program behind a small
 * HTTP server that requires basic auth. Repositories are bare repositories under a temporary root.
 */
export interface GitServer {
  /** The directory holding the bare repositories (`<name>.git`), for repositories made by other means. */
  root: string;
  /** http://user:password@127.0.0.1:port/<name>.git */
  urlOf(name: string, auth?: boolean): string;
  createRepo(name: string): void;
  /** Commits `files` (path → text or bytes, `{ symlink }`, null deletes) on `branch` from a scratch clone; returns the commit id. */
  commit(name: string, files: Record<string, string | Buffer | { symlink: string } | null>, message: string, branch?: string): string;
  /** Every file of the branch head, path → bytes. */
  files(name: string, branch?: string): Map<string, Buffer>;
  head(name: string, branch?: string): string | undefined;
  /** Requests whose Authorization failed, and request lines seen (to check credentials never travel in URLs). */
  seen: string[];
  close(): Promise<void>;
}

const env = { ...process.env, GIT_CONFIG_NOSYSTEM: '1', GIT_CONFIG_GLOBAL: '/dev/null', GIT_AUTHOR_NAME: 'Test', GIT_AUTHOR_EMAIL: 't@example.com', GIT_COMMITTER_NAME: 'Test', GIT_COMMITTER_EMAIL: 't@example.com' };
const git = (cwd: string, ...args: string[]) => execFileSync('git', args, { cwd, env, stdio: ['ignore', 'pipe', 'pipe'] }).toString();

export async function startGitServer(user = 'tester', password = 's3cret-pass'): Promise<GitServer> {
  const root = mkdtempSync(join(tmpdir(), 'folio-git-server-'));
  const seen: string[] = [];
  const expected = `Basic ${Buffer.from(`${user}:${password}`).toString('base64')}`;
  const server: Server = createServer((req, res) => {
    seen.push(`${req.method} ${req.url}`);
    if (req.headers.authorization !== expected) {
      res.writeHead(401, { 'WWW-Authenticate': 'Basic realm="git"' }).end('auth required');
      return;
    }
    const url = new URL(req.url!, 'http://localhost');
    const cgi = spawn('git', ['http-backend'], {
      env: {
        ...env,
        GIT_PROJECT_ROOT: root,
        GIT_HTTP_EXPORT_ALL: '1',
        PATH_INFO: decodeURIComponent(url.pathname),
        QUERY_STRING: url.search.slice(1),
        REQUEST_METHOD: req.method!,
        CONTENT_TYPE: req.headers['content-type'] ?? '',
        ...(req.headers['content-length'] ? { CONTENT_LENGTH: req.headers['content-length'] } : {}),
        ...(req.headers['content-encoding'] ? { HTTP_CONTENT_ENCODING: req.headers['content-encoding'] } : {}),
        ...(req.headers['git-protocol'] ? { GIT_PROTOCOL: String(req.headers['git-protocol']) } : {}),
        REMOTE_USER: user,
        REMOTE_ADDR: '127.0.0.1',
      },
    });
    req.pipe(cgi.stdin);
    let head = Buffer.alloc(0);
    let headersDone = false;
    cgi.stdout.on('data', (chunk: Buffer) => {
      if (headersDone) {
        res.write(chunk);
        return;
      }
      head = Buffer.concat([head, chunk]);
      const end = head.indexOf('\r\n\r\n');
      if (end < 0) return;
      headersDone = true;
      let status = 200;
      const headers: Record<string, string> = {};
      for (const line of head.subarray(0, end).toString().split('\r\n')) {
        const colon = line.indexOf(':');
        const name = line.slice(0, colon).trim();
        const value = line.slice(colon + 1).trim();
        if (name.toLowerCase() === 'status') status = Number(value.split(' ')[0]);
        else headers[name] = value;
      }
      res.writeHead(status, headers);
      res.write(head.subarray(end + 4));
    });
    cgi.stdout.on('end', () => res.end());
    cgi.stderr.resume();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;

  const scratch = (name: string, branch: string) => {
    const dir = mkdtempSync(join(tmpdir(), 'folio-git-work-'));
    git(dir, 'init', '-q', '-b', branch);
    const has = git(join(root, `${name}.git`), 'for-each-ref', `refs/heads/${branch}`).trim();
    if (has) {
      git(dir, 'fetch', '-q', join(root, `${name}.git`), `refs/heads/${branch}`);
      git(dir, 'reset', '-q', '--hard', 'FETCH_HEAD');
    }
    return dir;
  };

  return {
    root,
    seen,
    urlOf: (name, auth = true) => `http://${auth ? `${user}:${encodeURIComponent(password)}@` : ''}127.0.0.1:${port}/${name}.git`,
    createRepo(name) {
      const dir = join(root, `${name}.git`);
      mkdirSync(dir);
      git(dir, 'init', '-q', '--bare', '-b', 'main');
      git(dir, 'config', 'http.receivepack', 'true');
    },
    commit(name, files, message, branch = 'main') {
      const dir = scratch(name, branch);
      try {
        for (const [path, content] of Object.entries(files)) {
          const full = join(dir, path);
          if (content === null) rmSync(full, { force: true });
          else {
            mkdirSync(dirname(full), { recursive: true });
            if (typeof content === 'object' && !Buffer.isBuffer(content)) symlinkSync(content.symlink, full);
            else writeFileSync(full, content);
          }
        }
        git(dir, 'add', '-A');
        git(dir, 'commit', '-q', '--allow-empty', '-m', message);
        git(dir, 'push', '-q', join(root, `${name}.git`), `HEAD:refs/heads/${branch}`);
        return git(dir, 'rev-parse', 'HEAD').trim();
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    },
    files(name, branch = 'main') {
      const dir = scratch(name, branch);
      try {
        const out = new Map<string, Buffer>();
        const walk = (d: string) => {
          for (const entry of readdirSync(d)) {
            if (entry === '.git') continue;
            const full = join(d, entry);
            const stat = lstatSync(full);
            if (stat.isSymbolicLink()) out.set(relative(dir, full), Buffer.from(`symlink:${readlinkSync(full)}`));
            else if (stat.isDirectory()) walk(full);
            else out.set(relative(dir, full), readFileSync(full));
          }
        };
        walk(dir);
        return out;
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    },
    head(name, branch = 'main') {
      const line = git(join(root, `${name}.git`), 'for-each-ref', '--format=%(objectname)', `refs/heads/${branch}`).trim();
      return line || undefined;
    },
    async close() {
      await new Promise<void>((resolve) => server.close(() => resolve()));
      rmSync(root, { recursive: true, force: true });
    },
  };
}
