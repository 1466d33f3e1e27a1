/**
 * Where a long page can be cut into pieces that parse on their own to exactly the blocks the whole
 * page gives. micromark's cost per character grows with the size of the document it holds (its
 * event list is spliced as it resolves), so a 2 MB page parsed in one piece costs about three times
 * two 1 MB pages; parsed in pieces of a few tens of kilobytes, the cost is linear.
 *
 * A cut is made only before a line that starts a top-level block no construct can continue into:
 * a line at the left margin starting with a heading marker or a letter, after a blank line, with no
 * fence, `$$` formula, GitBook tag block, HTML block or comment open. Anything that refers across
 * the page (link reference definitions, footnotes) disables cutting altogether. The test suite
 * checks that cut and uncut parses are identical on generated and hand-written pages.
 */

/** Pieces of at least `target` characters (the last may be shorter); one piece when no cut is safe. */
export function splitTopLevel(markdown: string, target: number): string[] {
  if (markdown.length <= target) return [markdown];
  // Definitions and footnotes are resolved across the page: keep it whole.
  if (/^[ \t]{0,3}\[[^\]\n]+\]:/m.test(markdown)) return [markdown];
  // Tag names that have an end tag somewhere: only those open a block.
  const closed = new Set([...markdown.matchAll(/\{%-?\s*end([a-z][\w-]*)/g)].map((m) => m[1]!));

  const pieces: string[] = [];
  let pieceStart = 0;
  let fence: { char: string; length: number } | null = null;
  let math = false;
  let liquid = 0;
  let html = 0;
  let comment = false;
  // Blank lines just before this line: one or two separate blocks; three or more hold empty
  // paragraphs (parse-reader), which only a reader seeing both sides counts, so no cut there.
  let blankRun = 0;
  let at = 0;
  while (at < markdown.length) {
    let end = markdown.indexOf('\n', at);
    if (end === -1) end = markdown.length;
    const line = markdown.slice(at, end);

    const open = !fence && !math && liquid <= 0 && html <= 0 && !comment;
    if (open && blankRun >= 1 && blankRun <= 2 && at - pieceStart >= target && /^(?:#{1,6}[ \t]|[A-Za-z])/.test(line)) {
      pieces.push(markdown.slice(pieceStart, at));
      pieceStart = at;
    }

    const trimmed = line.trim();
    blankRun = trimmed === '' ? blankRun + 1 : 0;
    if (fence) {
      const close = /^\s*(`+|~+)\s*$/.exec(line);
      if (close && close[1]![0] === fence.char && close[1]!.length >= fence.length) fence = null;
    } else {
      const fenceOpen = /^[\s>*+\-\d.)]*?(`{3,}|~{3,})/.exec(line);
      if (fenceOpen && !(fenceOpen[1]![0] === '`' && line.slice(fenceOpen.index + fenceOpen[0].length).includes('`'))) {
        fence = { char: fenceOpen[1]![0]!, length: fenceOpen[1]!.length };
      } else {
        if (/(?:^|[\s>*+\-])\$\$\s*$/.test(line) && !/\$\$.+\$\$/.test(trimmed)) math = !math;
        for (const m of line.matchAll(/\{%-?\s*(end)?([a-z][\w-]*)/g)) {
          if (m[1]) liquid--;
          else if (closed.has(m[2]!)) liquid++;
        }
        for (const m of line.matchAll(/<(\/?)(details|table|figure|div|picture|section|pre|script|style|textarea|ul|ol|dl)\b/gi)) {
          html += m[1] ? -1 : 1;
        }
        if (comment) comment = !line.includes('-->');
        else if (line.includes('<!--')) comment = !line.slice(line.lastIndexOf('<!--')).includes('-->');
      }
    }
    at = end + 1;
  }
  pieces.push(markdown.slice(pieceStart));
  return pieces;
}

/** A position path of a piece's parse, as it is in the whole page: its first index moves by `offset`. */
export function shiftPath(path: string, offset: number): string {
  if (offset === 0) return path;
  const dot = path.indexOf('.');
  const first = Number(dot === -1 ? path : path.slice(0, dot)) + offset;
  return dot === -1 ? String(first) : `${first}${path.slice(dot)}`;
}
