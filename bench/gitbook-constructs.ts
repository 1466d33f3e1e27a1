/**
 * Benchmark (issue 23): how many of GitBook's constructs Folio's markdown reader keeps as the block
 * they stand for, measured on real GitBook repositories. Each page of each repository is read as a
 * git import reads it (links to files of the repository become space files), and every `<pre>` code
 * block, `{% file %}`, Font Awesome icon, HTML table, `<figure>` image, tabs, stepper, cover and
 * layout front matter is counted in the source and looked for in the document (and in the document
 * read back from the markdown Folio writes for it). See test/support/gitbook-constructs.ts.
 *
 * Prints, per construct: occurrences, kept, kept after a round trip, and how many stand where the
 * official schema has no place for them (a table in a step). Goal: ≥ 95% kept of each.
 *
 *   npm run bench:gitbook-constructs                       # the three mirrors of /work/.mirror
 *   npm run bench:gitbook-constructs -- <dir or bare git dir> …
 *   BENCH_MISSED=1                                         # also list the pages with a construct not kept
 */
import { existsSync } from 'node:fs';
import { basename, dirname } from 'node:path';
import { CONSTRUCTS, emptyFigures, formatFigures, loadCorpus, measure } from '../test/support/gitbook-constructs.ts';

const MIRRORS = ['GitbookIO+public-docs', 'BeefreeSDK+beefree-sdk-docs', 'carlospolop+hacktricks'].map((name) => `/work/.mirror/${name}/repo`);

const sources = process.argv.slice(2).length > 0 ? process.argv.slice(2) : MIRRORS.filter((path) => existsSync(path));
if (sources.length === 0) {
  console.error('no repository given and no mirror found under /work/.mirror');
  process.exit(2);
}

const total = emptyFigures();
for (const source of sources) {
  const name = basename(source) === 'repo' ? basename(dirname(source)) : basename(source);
  const started = Date.now();
  const corpus = loadCorpus(source, name);
  const figures = measure(corpus);
  console.log(`${formatFigures(figures, `${name}: ${corpus.pages.length} pages (${((Date.now() - started) / 1000).toFixed(1)} s)`)}\n`);
  for (const c of CONSTRUCTS) {
    const [t, f] = [total[c], figures[c]];
    t.total += f.total;
    t.kept += f.kept;
    t.roundTrip += f.roundTrip;
    t.unrepresentable += f.unrepresentable;
    t.missed.push(...f.missed);
  }
}
console.log(formatFigures(total, `all ${sources.length} repositories`));
if (process.env.BENCH_MISSED) {
  for (const c of CONSTRUCTS) if (total[c].missed.length) console.log(`\n${c} not kept in:\n  ${[...new Set(total[c].missed)].join('\n  ')}`);
}
const short = CONSTRUCTS.filter((c) => total[c].total > 0 && total[c].kept / total[c].total < 0.95);
if (short.length) {
  console.log(`\nbelow 95%: ${short.join(', ')}`);
  process.exitCode = 1;
}
