import type { Config } from '../platform/config.ts';
import { GitError, GitTimeoutError, vetRemote, Workspace, type Remote } from './git.ts';

/** A file of a commit's tree (regular files only: symlinks and submodules are ignored). */
export interface TreeFile {
  path: string;
  oid: string;
  size: number;
  executable: boolean;
}

export type GitConfig = Pick<Config, 'fetchAllowPrivate' | 'fetchAllowCidrs' | 'gitMaxFiles' | 'gitMaxBytes' | 'gitTimeoutMs'>;

/**
 * What the importer reads of a repository: the files of a commit and their bytes. A fetched
 * repository is one; an in-memory one (src/imports/virtual-repo.ts) is another.
 */
export interface RepoReader {
  files(commit: string, dir: string): Promise<TreeFile[]>;
  blobs(oids: string[]): Promise<Map<string, Buffer>>;
}

/** A scratch repository holding one fetched ref of a remote. */
export class FetchedRepo implements RepoReader {
  private constructor(
    readonly ws: Workspace,
    readonly remote: Remote,
    private readonly pinned: { host: string; port: number; address: string },
    private readonly config: GitConfig,
  ) {}

  static async open(remote: Remote, config: GitConfig): Promise<FetchedRepo> {
    const pinned = await vetRemote(remote, config);
    return new FetchedRepo(await Workspace.create(), remote, pinned, config);
  }

  private net() {
    return { remote: { remote: this.remote, pinned: this.pinned }, timeoutMs: this.config.gitTimeoutMs };
  }

  /**
   * Fetches `ref` as refs/folio/fetched; its commit id, or undefined when the remote has no such
   * ref (an empty repository or a new branch, for exports).
   */
  async fetch(ref: string, opts: { depth?: number; allowMissing?: boolean } = {}): Promise<string | undefined> {
    const args = ['fetch', '--quiet', '--no-tags', '--no-write-fetch-head', ...(opts.depth ? [`--depth=${opts.depth}`] : []), '--', this.remote.url, `+${ref}:refs/folio/fetched`];
    try {
      await this.ws.git(args, this.net());
    } catch (err) {
      if (!(err instanceof GitError) || !/does not exist in the repository/.test(err.message)) throw err;
      if (opts.allowMissing) return undefined;
      throw new GitError(`The repository has no ref ${ref}: check the branch name`);
    }
    return (await this.ws.git(['rev-parse', '--verify', 'refs/folio/fetched^{commit}'])).toString().trim();
  }

  /**
   * Fetches one commit by id as refs/folio/base (depth 1); its id, or undefined when the remote
   * does not give it (another repository, or a commit no branch holds any more).
   */
  async fetchCommit(commit: string): Promise<string | undefined> {
    if (!/^[0-9a-f]{40}$/.test(commit)) return undefined;
    try {
      await this.ws.git(['fetch', '--quiet', '--no-tags', '--no-write-fetch-head', '--depth=1', '--', this.remote.url, `+${commit}:refs/folio/base`], this.net());
      return (await this.ws.git(['rev-parse', '--verify', 'refs/folio/base^{commit}'])).toString().trim();
    } catch (err) {
      if (err instanceof GitError && !(err instanceof GitTimeoutError)) return undefined;
      throw err;
    }
  }

  /** Which of these objects the scratch repository does not hold (one `cat-file --batch-check`). */
  async missing(oids: string[]): Promise<Set<string>> {
    const unique = [...new Set(oids)];
    if (!unique.length) return new Set();
    const out = (await this.ws.git(['cat-file', '--batch-check'], { input: `${unique.join('\n')}\n` })).toString();
    return new Set(out.split('\n').flatMap((line) => (/ missing$/.test(line) ? [line.split(' ')[0]!] : [])));
  }

  async commitMessage(commit: string): Promise<string> {
    return (await this.ws.git(['log', '-1', '--format=%B', commit])).toString().replace(/\n+$/, '');
  }

  async treeOf(commit: string): Promise<string> {
    return (await this.ws.git(['rev-parse', `${commit}^{tree}`])).toString().trim();
  }

  /** Regular files of a commit under `dir`, checked against the size and count limits. */
  async files(commit: string, dir: string): Promise<TreeFile[]> {
    const out = await this.ws.git(['ls-tree', '-r', '-l', '-z', '--full-tree', commit, ...(dir ? ['--', `${dir}/`] : [])]);
    const files: TreeFile[] = [];
    let total = 0;
    for (const record of out.toString('utf8').split('\0')) {
      if (!record) continue;
      const tab = record.indexOf('\t');
      const [mode, type, oid, size] = record.slice(0, tab).split(/\s+/);
      const path = record.slice(tab + 1);
      // Symlinks (120000) and submodules (160000) are never followed; odd paths are ignored.
      if (type !== 'blob' || (mode !== '100644' && mode !== '100755')) continue;
      if (path.startsWith('/') || path.split('/').some((p) => p === '..' || p === '.' || p === '')) continue;
      files.push({ path, oid: oid!, size: Number(size), executable: mode === '100755' });
      total += Number(size);
      if (files.length > this.config.gitMaxFiles) {
        throw new GitError(`The repository holds more than ${this.config.gitMaxFiles} files${dir ? ` under ${dir}` : ''} (GIT_MAX_FILES): use repoProjectDirectory for a smaller part`);
      }
      if (total > this.config.gitMaxBytes) {
        throw new GitError(`The repository's files add up to more than ${this.config.gitMaxBytes} bytes${dir ? ` under ${dir}` : ''} (GIT_MAX_BYTES): use repoProjectDirectory, or move large files out`);
      }
    }
    return files;
  }

  /** Contents of blobs by oid, read in one `cat-file --batch`. */
  async blobs(oids: string[]): Promise<Map<string, Buffer>> {
    const unique = [...new Set(oids)];
    const out = new Map<string, Buffer>();
    if (!unique.length) return out;
    const data = await this.ws.git(['cat-file', '--batch'], { input: `${unique.join('\n')}\n`, maxOutput: this.config.gitMaxBytes + unique.length * 128 });
    let at = 0;
    while (at < data.length) {
      const eol = data.indexOf(0x0a, at);
      const header = data.subarray(at, eol).toString();
      const [oid, type, size] = header.split(' ');
      if (type === 'missing' || !size) throw new GitError(`git object ${oid} is missing from the fetched repository`);
      const start = eol + 1;
      const end = start + Number(size);
      out.set(oid!, data.subarray(start, end));
      at = end + 1;
    }
    return out;
  }

  /**
   * Writes a commit with git fast-import: `parent`'s tree with the given deletions and files
   * (reused blobs by oid, new ones inline). Returns the commit and its tree.
   */
  async commit(opts: {
    parent: string | undefined;
    message: string;
    deletes: string[];
    files: { path: string; oid?: string; data?: Buffer }[];
    when: Date;
  }): Promise<{ commit: string; tree: string }> {
    const chunks: Buffer[] = [];
    const text = (s: string) => chunks.push(Buffer.from(s, 'utf8'));
    const msg = Buffer.from(opts.message, 'utf8');
    text(`commit refs/folio/export\ncommitter Folio <git-sync@folio.invalid> ${Math.floor(opts.when.getTime() / 1000)} +0000\ndata ${msg.length}\n`);
    chunks.push(msg);
    text('\n');
    if (opts.parent) text(`from ${opts.parent}\n`);
    const quote = (p: string) => (/[\n"\\]|^ | $|^"/.test(p) ? JSON.stringify(p) : p);
    for (const path of opts.deletes) text(`D ${quote(path)}\n`);
    for (const f of opts.files) {
      if (f.oid) text(`M 100644 ${f.oid} ${quote(f.path)}\n`);
      else {
        text(`M 100644 inline ${quote(f.path)}\ndata ${f.data!.length}\n`);
        chunks.push(f.data!);
        text('\n');
      }
    }
    text('done\n');
    await this.ws.git(['fast-import', '--quiet', '--done', '--force'], { input: Buffer.concat(chunks), timeoutMs: this.config.gitTimeoutMs });
    const commit = (await this.ws.git(['rev-parse', 'refs/folio/export'])).toString().trim();
    return { commit, tree: await this.treeOf(commit) };
  }

  /** Pushes a commit to `ref` (fast-forward only unless `force`). */
  async push(commit: string, ref: string, force: boolean): Promise<void> {
    await this.ws.git(['push', '--quiet', '--no-verify', '--', this.remote.url, `${force ? '+' : ''}${commit}:${ref}`], this.net());
  }

  async dispose(): Promise<void> {
    await this.ws.dispose();
  }
}
