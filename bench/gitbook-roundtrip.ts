/**
 * Corpus check: how many pages of real GitBook repositories come back byte-identical (trailing
 * whitespace aside) after what an edit through the document API does to them — page file → title,
 * front matter and body → JSON document → markdown → page file (src/git/page-file.ts, the
 * functions git sync uses). Prints the share per repository and the most common kinds of
 * difference, with an example of each.
 *
 *   npm run bench:gitbook-roundtrip [-- <dir or bare git dir>…]
 *   (default: the mirrors of GitbookIO/public-docs, BeefreeSDK/beefree-sdk-docs and
 *   carlospolop/hacktricks under /work/.mirror, those present)
 *   ROUNDTRIP_DUMP=/tmp/out    writes `<page>.orig` and `<page>.out` of every page that differs
 *
 * Besides every markdown file, it counts the pages GitBook wrote last: files whose latest commit is
 * one GitBook made (subjects `GITBOOK-123: …` or `GitBook: [#123] …`). A file written by hand and
 * never edited in GitBook since is rewritten by GitBook too on its first edit there, so only the
 * files GitBook wrote say whether Folio writes what GitBook writes.
 *
 * Then two edits of every page (a paragraph added at the end, a word added to a line of prose),
 * exported as git sync exports them: the share of pages whose export rewrites no line the edit did
 * not touch, with pages written whole by Folio's writer and with the untouched lines kept as the
 * repository had them (src/git/keep-lines.ts, what git sync does).
 *   ROUNDTRIP_EXAMPLES=3       examples printed per kind of difference
 */
import { execFileSync, spawn } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, readdirSync, statSync, writeFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { comparePageFiles, editedExports, roundTripRepositoryFile } from '../test/support/gitbook-roundtrip.ts';

const DEFAULTS = ['GitbookIO+public-docs', 'BeefreeSDK+beefree-sdk-docs', 'carlospolop+hacktricks'].map((n) => `/work/.mirror/${n}/repo`);
const EXAMPLES = Number(process.env.ROUNDTRIP_EXAMPLES ?? 1);
const DUMP = process.env.ROUNDTRIP_DUMP;

/** A bare git directory (a mirror), as opposed to a working directory. */
const isBareGitDir = (dir: string) => !existsSync(join(dir, '.git')) && existsSync(join(dir, 'HEAD')) && existsSync(join(dir, 'objects'));

/** The markdown files of a repository (a working directory, or a bare git dir at HEAD), path → text. */
async function markdownFiles(dir: string): Promise<Map<string, string>> {
  const out = new Map<string, string>();
  const bare = isBareGitDir(dir);
  if (!bare) {
    const walk = (d: string) => {
      for (const name of readdirSync(d)) {
        if (name === '.git' || name === 'node_modules') continue;
        const p = join(d, name);
        if (statSync(p).isDirectory()) walk(p);
        else if (name.endsWith('.md')) out.set(relative(dir, p), readFileSync(p, 'utf8'));
      }
    };
    walk(dir);
    return out;
  }
  const listing = execFileSync('git', ['-C', dir, 'ls-tree', '-r', '-z', 'HEAD'], { encoding: 'utf8', maxBuffer: 1 << 28 });
  const blobs: { path: string; oid: string }[] = [];
  for (const row of listing.split('\0')) {
    const m = /^\d+ blob ([0-9a-f]+)\t(.+)$/.exec(row);
    if (m && m[2]!.endsWith('.md')) blobs.push({ oid: m[1]!, path: m[2]! });
  }
  // One `git cat-file --batch` for every blob (a process per file would take minutes).
  const child = spawn('git', ['-C', dir, 'cat-file', '--batch'], { stdio: ['pipe', 'pipe', 'inherit'] });
  const chunks: Buffer[] = [];
  child.stdout.on('data', (c: Buffer) => chunks.push(c));
  const done = new Promise((resolve) => child.on('close', resolve));
  child.stdin.end(blobs.map((b) => b.oid).join('\n') + '\n');
  await done;
  const all = Buffer.concat(chunks);
  let at = 0;
  for (const b of blobs) {
    const eol = all.indexOf(10, at);
    const header = all.subarray(at, eol).toString();
    at = eol + 1;
    if (header.endsWith(' missing')) continue; // not fetched (a partial clone)
    const size = Number(header.split(' ')[2]);
    out.set(b.path, all.subarray(at, at + size).toString('utf8'));
    at += size + 1;
  }
  return out;
}

/** Path → subject of the latest commit that touched it (HEAD's history; one `git log` for all). */
function latestSubjects(dir: string): Map<string, string> {
  const out = new Map<string, string>();
  const bare = isBareGitDir(dir);
  if (!bare && !existsSync(join(dir, '.git'))) return out;
  const log = execFileSync('git', ['-C', dir, 'log', '--no-renames', '--format=%x01%s', '--name-only', 'HEAD'], { encoding: 'utf8', maxBuffer: 1 << 30 });
  for (const entry of log.split('\x01')) {
    const [subject = '', ...paths] = entry.split('\n');
    for (const path of paths) if (path && !out.has(path)) out.set(path, subject);
  }
  return out;
}
const writtenByGitBook = (subject: string | undefined) => subject !== undefined && /^(GITBOOK-\d+:|GitBook: \[)/.test(subject);

const dirs = process.argv.slice(2).length > 0 ? process.argv.slice(2) : DEFAULTS.filter((d) => existsSync(d));
if (dirs.length === 0) {
  console.error('no repository given and no mirror found');
  process.exit(2);
}
const kinds = new Map<string, { pages: number; examples: string[] }>();
for (const dir of dirs) {
  const files = await markdownFiles(dir);
  const subjects = latestSubjects(dir);
  let pages = 0;
  let same = 0;
  let byGitBook = 0;
  let sameByGitBook = 0;
  const edits = { append: { pages: 0, whole: 0, kept: 0 }, word: { pages: 0, whole: 0, kept: 0 } };
  for (const [path, text] of files) {
    const out = roundTripRepositoryFile(path, text);
    if (out === null) continue;
    for (const e of editedExports(path, text) ?? []) {
      edits[e.edit].pages++;
      if (e.whole === 0) edits[e.edit].whole++;
      if (e.kept === 0) edits[e.edit].kept++;
    }
    pages++;
    const diff = comparePageFiles(text, out);
    const gitbook = writtenByGitBook(subjects.get(path));
    if (gitbook) byGitBook++;
    if (diff.identical) {
      same++;
      if (gitbook) sameByGitBook++;
      continue;
    }
    for (const [kind, example] of diff.kinds) {
      const entry = kinds.get(kind) ?? { pages: 0, examples: [] };
      entry.pages++;
      if (entry.examples.length < EXAMPLES) entry.examples.push(`${path}: ${example}`);
      kinds.set(kind, entry);
    }
    if (DUMP) {
      const base = join(DUMP, dir.replace(/[^\w.-]+/g, '_'), path);
      mkdirSync(dirname(base), { recursive: true });
      writeFileSync(`${base}.orig`, text);
      writeFileSync(`${base}.out`, out);
    }
  }
  const share = (n: number, of: number) => `${n}/${of} (${((100 * n) / Math.max(1, of)).toFixed(1)}%)`;
  console.log(`${dir}: ${share(same, pages)} markdown files byte-identical after round trip; of the files GitBook wrote last: ${share(sameByGitBook, byGitBook)}`);
  for (const [edit, e] of Object.entries(edits)) {
    const what = edit === 'append' ? 'a paragraph added at the end' : 'a word added to a line of prose';
    console.log(`  ${what}: no other line rewritten in ${share(e.whole, e.pages)} pages written whole, ${share(e.kept, e.pages)} with untouched lines kept`);
  }
}
console.log('\nKinds of difference (pages, all repositories):');
for (const [kind, { pages, examples }] of [...kinds].sort((a, b) => b[1].pages - a[1].pages)) {
  console.log(`  ${String(pages).padStart(5)}  ${kind}`);
  for (const e of examples) console.log(`         e.g. ${e.length > 220 ? `${e.slice(0, 220)}…` : e}`);
}
