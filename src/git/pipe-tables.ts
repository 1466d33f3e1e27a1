/**
 * Pipe tables whose cells changed length after the markdown was written (links rewritten from
 * `/pages/<id>` to repository paths on export): padded again, as GitBook lays them out — every
 * cell `| ` + text + spaces to the column's width + ` |`, the delimiter row as many dashes.
 *
 * `before` and `after` are the same markdown, line for line, before and after the rewrite.
 * A column is as wide as its longest cell was plus what that cell and the others grew or shrank;
 * spaces a cell's text ended with (padding wider than any cell) stay with the longest cell, as
 * the reader gives them to it (parse-html-table.ts, `cellEdges`).
 */
export function realignPipeTables(before: string, after: string): string {
  const old = before.split('\n');
  const now = after.split('\n');
  if (old.length !== now.length) return after;
  let changed = false;
  for (let i = 0; i + 1 < old.length; i++) {
    if (!old[i]!.startsWith('|') || !isDelimiterRow(old[i + 1]!)) continue;
    let end = i + 2;
    while (end < old.length && old[end]!.startsWith('|')) end++;
    const range = [i, end] as const;
    i = end - 1;
    if (old.slice(...range).every((line, k) => line === now[range[0] + k])) continue;
    const laidOut = realign(old.slice(...range), now.slice(...range));
    if (!laidOut) continue;
    now.splice(range[0], laidOut.length, ...laidOut);
    changed = true;
  }
  return changed ? now.join('\n') : after;
}

const isDelimiterRow = (line: string) => /^\|(?: :?-+:? \|)+\s*$/.test(line);

/** A row's cells, without the outer pipes; null when the row is not `| … |`. */
function cells(line: string): string[] | null {
  const m = /^\|(.*)\|$/.exec(line.trimEnd());
  return m ? m[1]!.split(/(?<!\\)\|/) : null;
}

function realign(oldRows: string[], newRows: string[]): string[] | null {
  const before = oldRows.map(cells);
  const after = newRows.map(cells);
  const count = before[0]?.length ?? 0;
  if ([...before, ...after].some((row) => row === null || row.length !== count)) return null;
  const delimiter = before[1]!;
  const widths = delimiter.map((c) => c.length - 2);
  // Only tables laid out the way the writer does: each cell as wide as its column.
  if (!before.every((row) => row!.every((c, j) => c.length === widths[j]! + 2 && c.startsWith(' ') && c.endsWith(' ')))) return null;
  const text = (c: string) => c.slice(1).trimEnd();
  const next = widths.map((w, j) => {
    const rows = before.map((row, k) => ({ was: text(row![j]!), is: text(after[k]![j]!) })).filter((_, k) => k !== 1);
    const longest = Math.max(...rows.map((r) => r.was.length));
    const slack = w - longest;
    const holder = rows.map((r) => r.was.length).lastIndexOf(longest);
    return Math.max(...rows.map((r, k) => r.is.length + (k === holder ? slack : 0)));
  });
  const dashes = (c: string, width: number) => {
    const left = c.trim().startsWith(':') ? ':' : '';
    const right = c.trim().endsWith(':') ? ':' : '';
    return `${left}${'-'.repeat(Math.max(1, width - left.length - right.length))}${right}`;
  };
  return after.map((row, k) =>
    k === 1 ? `|${delimiter.map((c, j) => ` ${dashes(c, next[j]!)} `).join('|')}|` : `|${row!.map((c, j) => ` ${text(c).padEnd(next[j]!)} `).join('|')}|`,
  );
}
