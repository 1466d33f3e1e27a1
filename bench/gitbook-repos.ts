/**
 * Acceptance run of git sync on real GitBook repositories (issue 23). Each repository (the three
 * mirrors by default, or the bare git directories given as arguments) is served by a real
 * `git http-backend` on 127.0.0.1; each of its docs projects (the repository itself, or each folder
 * with a SUMMARY.md, as GitbookIO/public-docs has) is imported into a fresh space, then:
 *
 *   tree:      pages, groups and links of the space (listPages) against what SUMMARY.md lists;
 *   branch:    export to a new branch (as GitBook does for a pull request): it must succeed, start
 *              from the imported commit, and leave the markdown files and SUMMARY.md as they were;
 *   rewritten: export to an empty repository, where nothing of the import can be reused: every
 *              page and SUMMARY.md is written from the space; share byte-identical to the
 *              original (goal ≥ 90%), exactly and with trailing whitespace aside;
 *   again:     a second export of the unchanged space, to the branch and to the copy: must make no
 *              commit.
 *
 * Blobs a mirror lacks, and (unless BENCH_KEEP_ASSETS=1) files over 64 KB other than markdown, are
 * served as small placeholders: the run is about paths and text, not the bytes of screenshots.
 *
 *   npm run bench:gitbook-repos
 *   npm run bench:gitbook-repos -- /path/to/repo.git [...]
 *   BENCH_VERBOSE=1 (lists the files that differ, with their first differing line)
 */
import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join, posix } from 'node:path';
import { loadConfig } from '../src/platform/config.ts';
import { startServer } from '../src/server.ts';
import { createUser } from '../src/users/service.ts';
import { startGitServer } from '../test/support/git-server.ts';
import { apiCaller, freshDatabaseConfig } from './support.ts';

const MIRRORS = ['/work/.mirror/GitbookIO+public-docs/repo', '/work/.mirror/BeefreeSDK+beefree-sdk-docs/repo', '/work/.mirror/carlospolop+hacktricks/repo'];
const KEEP_ASSETS = process.env.BENCH_KEEP_ASSETS === '1';
const VERBOSE = process.env.BENCH_VERBOSE === '1';
const BIG = 64 * 1024;

const env = { ...process.env, GIT_CONFIG_NOSYSTEM: '1', GIT_CONFIG_GLOBAL: '/dev/null', GIT_AUTHOR_NAME: 'Bench', GIT_AUTHOR_EMAIL: 'bench@example.com', GIT_COMMITTER_NAME: 'Bench', GIT_COMMITTER_EMAIL: 'bench@example.com' };
const git = (cwd: string, args: string[], input?: string, extraEnv: Record<string, string> = {}) =>
  execFileSync('git', args, { cwd, env: { ...env, ...extraEnv }, input, maxBuffer: 1024 * 1024 * 1024 });

interface Entry {
  mode: string;
  oid: string;
  size: number;
  path: string;
}

function listTree(repo: string, rev: string): Entry[] {
  const out = git(repo, ['ls-tree', '-r', '-l', '-z', '--full-tree', rev]).toString('utf8');
  return out
    .split('\0')
    .filter(Boolean)
    .flatMap((record) => {
      const tab = record.indexOf('\t');
      const [mode, type, oid, size] = record.slice(0, tab).split(/\s+/);
      return type === 'blob' ? [{ mode: mode!, oid: oid!, size: Number(size), path: record.slice(tab + 1) }] : [];
    });
}

/** Blob contents by path, for the given entries (one cat-file --batch). */
function readBlobs(repo: string, entries: Entry[]): Map<string, Buffer> {
  const out = new Map<string, Buffer>();
  if (!entries.length) return out;
  const data = git(repo, ['cat-file', '--batch'], `${entries.map((e) => e.oid).join('\n')}\n`);
  let at = 0;
  for (const e of entries) {
    const eol = data.indexOf(0x0a, at);
    const [, type, size] = data.subarray(at, eol).toString().split(' ');
    if (type === 'missing') throw new Error(`missing blob ${e.oid}`);
    out.set(e.path, data.subarray(eol + 1, eol + 1 + Number(size)));
    at = eol + 1 + Number(size) + 1;
  }
  return out;
}

/**
 * A bare repository `<root>/<name>.git` whose main branch holds the source's HEAD tree in one
 * commit, reading the source's objects through alternates; lacking and large blobs replaced.
 */
function servable(source: string, root: string, name: string): { replaced: number } {
  const dir = join(root, `${name}.git`);
  git(root, ['init', '-q', '--bare', '-b', 'main', dir]);
  git(dir, ['config', 'http.receivepack', 'true']);
  git(dir, ['config', 'uploadpack.allowAnySHA1InWant', 'true']);
  writeFileSync(join(dir, 'objects/info/alternates'), `${join(source, 'objects')}\n`);
  const entries = listTree(source, 'HEAD');
  const check = git(source, ['cat-file', '--batch-check'], `${entries.map((e) => e.oid).join('\n')}\n`).toString().split('\n');
  const missing = new Set(check.filter((l) => l.endsWith(' missing')).map((l) => l.split(' ')[0]!));
  const swap = entries.filter((e) => (e.mode === '100644' || e.mode === '100755') && (missing.has(e.oid) || (!KEEP_ASSETS && e.size > BIG && !/\.(md|ya?ml)$/i.test(e.path))));
  const placeholder = git(dir, ['hash-object', '-w', '--stdin'], 'placeholder for a file left out of the benchmark\n').toString().trim();
  const index = join(mkdtempSync(join(tmpdir(), 'bench-index-')), 'index');
  const withIndex = { GIT_INDEX_FILE: index };
  git(dir, ['read-tree', git(source, ['rev-parse', 'HEAD^{tree}']).toString().trim()], undefined, withIndex);
  if (swap.length) git(dir, ['update-index', '-z', '--index-info'], swap.map((e) => `${e.mode} ${placeholder}\t${e.path}\0`).join(''), withIndex);
  const tree = git(dir, ['write-tree'], undefined, withIndex).toString().trim();
  const commit = git(dir, ['commit-tree', tree, '-m', `Snapshot of ${source}`]).toString().trim();
  git(dir, ['update-ref', 'refs/heads/main', commit]);
  rmSync(posix.dirname(index), { recursive: true, force: true });
  return { replaced: swap.length };
}

/** Docs projects of a repository: '' when SUMMARY.md is at its docs root, else each folder that has one. */
function projectsOf(repo: string): string[] {
  const files = listTree(repo, 'main').map((e) => e.path);
  const config = files.includes('.gitbook.yaml') ? readBlobs(repo, listTree(repo, 'main').filter((e) => e.path === '.gitbook.yaml')).get('.gitbook.yaml')!.toString() : '';
  const root = /^root:\s*\.?\/?([^\s#]*)/m.exec(config)?.[1]?.replace(/\/$/, '') ?? '';
  if (files.includes(root ? `${root}/SUMMARY.md` : 'SUMMARY.md')) return [''];
  return files.filter((p) => /^[^/]+\/SUMMARY\.md$/.test(p)).map((p) => p.split('/')[0]!);
}

/** What SUMMARY.md lists, counted without Folio's parser: groups, links, page files (computed pages are not counted). */
function summaryCounts(text: string): { pages: number; groups: number; links: number } {
  let groups = 0;
  let links = 0;
  const paths = new Set<string>();
  let fence = false;
  for (const line of text.split('\n')) {
    if (/^\s*(?:[*+-]\s+)?(```|~~~)/.test(line)) fence = !fence;
    if (fence) continue;
    if (/^#{2,6}\s/.test(line)) groups++;
    const item = /^\s*[*+-]\s+\[.*\]\((<[^>]*>|[^)\s]+)/.exec(line);
    if (!item) continue;
    const target = item[1]!.replace(/^<|>$/g, '');
    const path = target.replace(/#.*$/, '');
    // An external target, or a file listed again (GitBook's link to a page or an anchor in it).
    if (/^[a-z][a-z0-9+.-]*:/i.test(target) || paths.has(path)) links++;
    else paths.add(path);
  }
  return { pages: paths.size, groups, links };
}

const trimmed = (b: Buffer) => b.toString('utf8').replace(/[ \t]+$/gm, '').replace(/\s+$/, '');

function firstDifference(a: Buffer, b: Buffer | undefined): string {
  if (!b) return 'absent';
  const x = a.toString('utf8').split('\n');
  const y = b.toString('utf8').split('\n');
  for (let i = 0; i < Math.max(x.length, y.length); i++) {
    if (x[i] !== y[i]) return `line ${i + 1}: ${JSON.stringify((x[i] ?? '∅').slice(0, 90))} → ${JSON.stringify((y[i] ?? '∅').slice(0, 90))}`;
  }
  return 'same lines';
}

const pct = (n: number, d: number) => (d ? `${((100 * n) / d).toFixed(1)}%` : '–');

async function main() {
  const sources = process.argv.slice(2).length ? process.argv.slice(2) : MIRRORS.filter((m) => existsSync(m));
  const db = await freshDatabaseConfig(process.env.BENCH_DATABASE_URL);
  const server = await startServer(
    {
      ...loadConfig({}),
      port: 0,
      logLevel: process.env.BENCH_LOG_LEVEL ?? 'silent',
      rateLimitMax: 1e9,
      jobPollMs: 20,
      fetchAllowPrivate: true,
      gitMaxFiles: 1_000_000,
      gitMaxBytes: 4 * 1024 * 1024 * 1024,
      gitTimeoutMs: 30 * 60_000,
      ...db.config,
    },
    { purpose: 'bench' },
  );
  const gitServer = await startGitServer('bench', 'bench-pass');
  const totals = { md: 0, branchSame: 0, rewrittenSame: 0, rewrittenTrim: 0 };
  try {
    const store = server.services.db;
    const { token } = await createUser(store, { email: `bench.${Date.now()}@example.com`, name: 'Bench' });
    const call = apiCaller(server.url, token);
    // Import and export jobs run in this process: run the queue until it is idle.
    const jobsDone = () => server.services.jobs.settle({ timeoutMs: 30 * 60_000 });
    const sync = async (spaceId: string, direction: 'import' | 'export', body: Record<string, unknown>) => {
      await call('POST', `/v1/spaces/${spaceId}/git/${direction}`, body);
      await jobsDone();
      const info = await call('GET', `/v1/spaces/${spaceId}/git/info`);
      if (info.operation?.state !== 'success') throw new Error(`${direction} failed: ${info.operation?.error}`);
    };
    const org = await call('POST', '/v1/orgs', { title: 'GitBook repositories' });

    for (const [n, source] of sources.entries()) {
      const label = source.includes('/.mirror/') ? basename(posix.dirname(source)).replace('+', '/') : source;
      const name = `repo${n}`;
      const started = performance.now();
      const { replaced } = servable(source, gitServer.root, name);
      const repoDir = join(gitServer.root, `${name}.git`);
      console.log(`\n${label}  (${replaced} blobs served as placeholders)`);
      const main = listTree(repoDir, 'main');
      for (const project of projectsOf(repoDir)) {
        const t0 = performance.now();
        const inProject = (p: string) => !project || p.startsWith(`${project}/`);
        const space = await call('POST', `/v1/orgs/${org.id}/spaces`, { title: `${label} ${project}` });
        const base = { url: gitServer.urlOf(name), repoProjectDirectory: project || undefined };
        await sync(space.id, 'import', { ...base, ref: 'refs/heads/main' });
        const tImport = performance.now() - t0;

        // The tree against SUMMARY.md.
        const summaryPath = project ? `${project}/SUMMARY.md` : 'SUMMARY.md';
        const originals = readBlobs(repoDir, main.filter((e) => inProject(e.path) && /\.md$/i.test(e.path)));
        const listed = summaryCounts(originals.get(summaryPath)!.toString('utf8'));
        const { pages } = await call('GET', `/v1/spaces/${space.id}/content/pages`);
        const count = { document: 0, group: 0, link: 0 } as Record<string, number>;
        const walk = (list: any[]) => list.forEach((p) => ((count[p.type] = (count[p.type] ?? 0) + 1), walk(p.pages ?? [])));
        walk(pages);

        // The markdown files Folio manages: the pages SUMMARY.md lists, and SUMMARY.md.
        const summaryDir = posix.dirname(summaryPath) === '.' ? '' : posix.dirname(summaryPath);
        const managed = new Set<string>([summaryPath]);
        for (const line of originals.get(summaryPath)!.toString('utf8').split('\n')) {
          const item = /^\s*[*+-]\s+\[.*\]\((<[^>]*>|[^)\s]+)/.exec(line);
          const target = item?.[1]!.replace(/^<|>$/g, '').replace(/#.*$/, '');
          if (!target || /^[a-z][a-z0-9+.-]*:/i.test(target)) continue;
          let path = posix.normalize(posix.join(summaryDir, target));
          try {
            path = decodeURI(path);
          } catch {
            // as written
          }
          if (originals.has(path)) managed.add(path);
        }

        // Export to a new branch.
        const branch = `folio/update-${project || 'docs'}`;
        await sync(space.id, 'export', { ...base, ref: `refs/heads/${branch}`, commitMessage: 'Export to a new branch' });
        const branchHead = git(repoDir, ['rev-parse', `refs/heads/${branch}`]).toString().trim();
        const branchFiles = readBlobs(repoDir, listTree(repoDir, branch).filter((e) => managed.has(e.path)));
        const branchSame = [...managed].filter((p) => branchFiles.get(p)?.equals(originals.get(p)!)).length;
        await sync(space.id, 'export', { ...base, ref: `refs/heads/${branch}`, commitMessage: 'Again' });
        const branchAgain = git(repoDir, ['rev-parse', `refs/heads/${branch}`]).toString().trim() !== branchHead;

        // Export to an empty repository: every file written from the space.
        const copyName = `${name}-copy-${project || 'docs'}`;
        gitServer.createRepo(copyName);
        const copyDir = join(gitServer.root, `${copyName}.git`);
        const copyBase = { url: gitServer.urlOf(copyName), repoProjectDirectory: project || undefined };
        await sync(space.id, 'export', { ...copyBase, ref: 'refs/heads/main', commitMessage: 'Copy' });
        const copyHead = git(copyDir, ['rev-parse', 'refs/heads/main']).toString().trim();
        const copyFiles = readBlobs(copyDir, listTree(copyDir, 'main').filter((e) => managed.has(e.path)));
        const same = [...managed].filter((p) => copyFiles.get(p)?.equals(originals.get(p)!));
        const sameTrim = [...managed].filter((p) => copyFiles.has(p) && trimmed(copyFiles.get(p)!) === trimmed(originals.get(p)!));
        await sync(space.id, 'export', { ...copyBase, ref: 'refs/heads/main', commitMessage: 'Again' });
        const copyAgain = git(copyDir, ['rev-parse', 'refs/heads/main']).toString().trim() !== copyHead;
        const summarySame = copyFiles.get(summaryPath)?.equals(originals.get(summaryPath)!) ?? false;

        totals.md += managed.size;
        totals.branchSame += branchSame;
        totals.rewrittenSame += same.length;
        totals.rewrittenTrim += sameTrim.length;
        const unlisted = [...originals.keys()].filter((p) => !managed.has(p) && !p.includes('/.gitbook/') && !p.startsWith('.gitbook/')).length;
        console.log(
          [
            `  ${project || '.'}: import ${(tImport / 1000).toFixed(1)} s`,
            `    tree:      documents ${count.document} / SUMMARY.md pages ${listed.pages}, groups ${count.group} / ${listed.groups}, links ${count.link} / ${listed.links}`,
            `    branch:    ${branch} from ${branchHead === git(repoDir, ['rev-parse', 'refs/heads/main']).toString().trim() ? 'the imported commit (nothing changed)' : 'a new commit'}; markdown + SUMMARY.md identical ${branchSame}/${managed.size} (${pct(branchSame, managed.size)})`,
            `    rewritten: markdown + SUMMARY.md identical ${same.length}/${managed.size} (${pct(same.length, managed.size)}), trailing whitespace aside ${sameTrim.length} (${pct(sameTrim.length, managed.size)}); SUMMARY.md ${summarySame ? 'identical' : 'differs'}`,
            `    again:     second export committed: branch ${branchAgain ? 'YES' : 'no'}, copy ${copyAgain ? 'YES' : 'no'}`,
            ...(unlisted ? [`    (${unlisted} other .md files are not in SUMMARY.md: not pages, left out)`] : []),
          ].join('\n'),
        );
        if (VERBOSE) for (const p of [...managed].filter((p) => !sameTrim.includes(p)).slice(0, 40)) console.log(`      ${p}: ${firstDifference(originals.get(p)!, copyFiles.get(p))}`);
      }
      console.log(`  (${((performance.now() - started) / 1000).toFixed(1)} s)`);
    }
    console.log(
      `\nAll: markdown + SUMMARY.md files ${totals.md}; after an export to a new branch ${pct(totals.branchSame, totals.md)} identical; written anew ${pct(totals.rewrittenSame, totals.md)} identical, ${pct(totals.rewrittenTrim, totals.md)} trailing whitespace aside (goal ≥ 90%)`,
    );
  } finally {
    await gitServer.close();
    await server.close();
    await db.cleanup();
  }
}

await main();
