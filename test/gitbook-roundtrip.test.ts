/**
 * Corpus check (issue 23): GitBook-format pages come back byte-identical (trailing whitespace aside)
 * after an edit through the document API — page file → document → page file, through the functions
 * git sync uses (src/git/page-file.ts). The sample is test/fixtures/gitbook-pages: real pages of
 * BeefreeSDK/beefree-sdk-docs (Apache-2.0, see NOTICE) and pages written for this test in GitBook's
 * own syntax. `identical.txt` lists the pages known to come back identical: they must stay so.
 * The same check over whole repositories: `npm run bench:gitbook-roundtrip`.
 */
import assert from 'node:assert/strict';
import { readFileSync, readdirSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { comparePageFiles, roundTripRepositoryFile } from './support/gitbook-roundtrip.ts';

const root = fileURLToPath(new URL('./fixtures/gitbook-pages/', import.meta.url));

function pages(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return pages(path);
    return name.endsWith('.md') ? [relative(root, path)] : [];
  });
}

/**
 * The share this sample reaches today (41 of 43). Issue 23 asks for 90%; what still differs on
 * whole repositories is listed in docs/content-format.md (Round trip with GitBook): mostly what the
 * official model has no place for (tables in steps and tabs, images in list items) and a block
 * formula written between `$$` lines.
 */
const MIN_SHARE = 0.9;

const known = new Set(readFileSync(join(root, 'identical.txt'), 'utf8').split('\n').map((l) => l.trim()).filter((l) => l && !l.startsWith('#')));

test('GitBook pages round-trip byte-identical: the share of the sample holds, and every page known to stays so', () => {
  const results = pages(root).sort().map((path) => {
    const text = readFileSync(join(root, path), 'utf8');
    // Pages are named as in their repository (under beefree/ or written/), so includes and
    // SUMMARY.md would be recognised as they are in a repository.
    const written = roundTripRepositoryFile(path.split('/').slice(1).join('/'), text);
    assert.ok(written !== null, `${path} is not a page`);
    return { path, ...comparePageFiles(text, written) };
  });
  const identical = results.filter((r) => r.identical);
  const share = identical.length / results.length;
  const kinds = new Map<string, number>();
  for (const r of results) for (const kind of r.kinds.keys()) kinds.set(kind, (kinds.get(kind) ?? 0) + 1);
  console.log(
    `gitbook round trip: ${identical.length}/${results.length} sample pages byte-identical (${(share * 100).toFixed(1)}%)` +
      (kinds.size ? `; differences: ${[...kinds].map(([k, n]) => `${k} ${n}`).join(', ')}` : ''),
  );
  const regressed = results.filter((r) => known.has(r.path) && !r.identical).map((r) => `${r.path}: ${[...r.kinds.values()][0]}`);
  assert.deepEqual(regressed, [], 'pages listed in identical.txt no longer come back identical');
  assert.ok(share >= MIN_SHARE, `only ${(share * 100).toFixed(1)}% of the sample is byte-identical after a round trip`);
  // The list is kept honest: a page that became identical is added to it.
  const unlisted = identical.filter((r) => !known.has(r.path)).map((r) => r.path);
  assert.deepEqual(unlisted, [], 'pages now identical but missing from identical.txt');
});
