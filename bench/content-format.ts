/**
 * Benchmark: converting a page between GitBook markdown and the JSON document must cost in
 * proportion to its size (issue 8: importers that re-scan the page per block are quadratic). Pages
 * of about 300 KB and 600 KB are built from the content-format fixtures (every block type, repeated
 * with distinct text), converted both ways alternately, and the median times compared.
 *
 * Prints the median time and throughput (MB/s) of each direction and size, and the ratio
 * 600 KB / 300 KB of each direction (goal: at most 2.3, i.e. linear growth plus noise).
 *
 *   node --import tsx bench/content-format.ts
 *   BENCH_ROUNDS=9                                             # timed rounds per size and direction
 */
import { readFileSync } from 'node:fs';
import { documentToMarkdown, markdownToDocument } from '../src/content/markdown/markdown.ts';

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 7);
const SIZES = [300_000, 600_000];

const base = readFileSync(new URL('../test/fixtures/content-format/blocks.md', import.meta.url), 'utf8')
  // Footnotes are numbered per page: keep one per copy.
  .replace(/\[\^1\]/g, '[^N]');

function page(bytes: number): string {
  const parts: string[] = [];
  let size = 0;
  for (let n = 0; size < bytes; n++) {
    const copy = base.replace(/\[\^N\]/g, `[^${n}]`).replace(/Field guide/g, `Field guide ${n}`);
    parts.push(copy);
    size += Buffer.byteLength(copy) + 2;
  }
  return parts.join('\n\n');
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)]!;
}

function time(fn: () => void): number {
  const start = process.hrtime.bigint();
  fn();
  return Number(process.hrtime.bigint() - start) / 1e6;
}

const pages = SIZES.map((size) => {
  const markdown = page(size);
  const doc = markdownToDocument(markdown);
  return { size, markdown, doc, bytes: Buffer.byteLength(markdown), read: [] as number[], write: [] as number[] };
});

// Warm-up: one conversion each way per size.
for (const p of pages) documentToMarkdown(markdownToDocument(p.markdown));

for (let round = 0; round < ROUNDS; round++) {
  for (const p of round % 2 === 0 ? pages : [...pages].reverse()) {
    p.read.push(time(() => markdownToDocument(p.markdown)));
    p.write.push(time(() => documentToMarkdown(p.doc)));
  }
}

const mbps = (bytes: number, ms: number) => (bytes / 1e6 / (ms / 1000)).toFixed(2);
for (const p of pages) {
  const [read, write] = [median(p.read), median(p.write)];
  console.log(
    `${(p.bytes / 1000).toFixed(0)} KB (${p.doc.nodes.length} blocks): markdown → document ${read.toFixed(1)} ms (${mbps(p.bytes, read)} MB/s), ` +
      `document → markdown ${write.toFixed(1)} ms (${mbps(p.bytes, write)} MB/s)`,
  );
}
const [small, large] = pages as [(typeof pages)[0], (typeof pages)[0]];
const ratio = (a: number[], b: number[]) => median(b) / median(a);
const readRatio = ratio(small.read, large.read);
const writeRatio = ratio(small.write, large.write);
console.log(`ratio ${(large.bytes / 1000).toFixed(0)} KB / ${(small.bytes / 1000).toFixed(0)} KB: markdown → document ${readRatio.toFixed(2)}, document → markdown ${writeRatio.toFixed(2)} (goal ≤ 2.3)`);
if (readRatio > 2.3 || writeRatio > 2.3) process.exitCode = 1;
