import { hasSpacelessScript } from './segment.ts';

/**
 * Where a query matches a piece of text, for choosing a page's matching sections and highlighting
 * their snippets. Matching follows what PostgreSQL matched: the lexemes of the parsed query
 * (stems: "integr" marks "integrations"), the words as typed (a prefix marks the words it starts),
 * and words within a small edit distance of a misspelled query word.
 */

export type Range = { start: number; end: number };

export interface Matcher {
  /** Lowercased stems and words that mark the words they start. */
  starts: string[];
  /** Words of spaceless scripts: marked wherever they occur. */
  anywhere: string[];
  /** Words that may be misspelled: mark words one or two edits away. */
  fuzzy: string[];
}

/** The lexemes of a tsquery's text form (`'integr' & 'guid':*`). */
export function lexemesOf(queryText: string): string[] {
  const out: string[] = [];
  for (const m of queryText.matchAll(/'((?:[^']|'')*)'/g)) out.push(m[1]!.replace(/''/g, "'"));
  return out;
}

export function matcherFor(queryText: string, words: string[], fuzzy: string[]): Matcher {
  const terms = [...new Set([...lexemesOf(queryText), ...words].map((t) => t.toLowerCase()).filter((t) => t.length > 0))];
  return {
    starts: terms.filter((t) => !hasSpacelessScript(t) && t.length >= 2),
    anywhere: terms.filter((t) => hasSpacelessScript(t)),
    fuzzy: fuzzy.map((w) => w.toLowerCase()),
  };
}

/** Edit distance (insertions, deletions, substitutions, adjacent swaps), or `max + 1` once past `max`. */
export function editDistance(a: string, b: string, max: number): number {
  if (Math.abs(a.length - b.length) > max) return max + 1;
  let prev2: number[] = [];
  let prev = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const row = [i];
    let best = i;
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      let d = Math.min(prev[j]! + 1, row[j - 1]! + 1, prev[j - 1]! + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) d = Math.min(d, prev2[j - 2]! + 1);
      row.push(d);
      best = Math.min(best, d);
    }
    if (best > max) return max + 1;
    prev2 = prev;
    prev = row;
  }
  return prev[b.length]!;
}

const allowedEdits = (word: string) => (word.length >= 8 ? 2 : 1);

/** Whether a word starts with something a few edits from `typed` ("integrations" for "integraton"). */
function closeStart(word: string, typed: string): boolean {
  const k = allowedEdits(typed);
  for (let length = typed.length - 1; length <= typed.length + 1; length++) {
    if (length <= word.length && length >= 3 && editDistance(word.slice(0, length), typed, k) <= k) return true;
  }
  return false;
}

/** The ranges of `text` the query matches, in order, not overlapping. */
export function findMatches(text: string, matcher: Matcher): Range[] {
  const ranges: Range[] = [];
  const lower = text.toLowerCase();
  // toLowerCase keeps offsets for the scripts indexed here, except a few (İ): then match on the text itself.
  const source = lower.length === text.length ? lower : text;
  if (matcher.starts.length || matcher.fuzzy.length) {
    for (const m of source.matchAll(/[\p{L}\p{N}]+/gu)) {
      const word = m[0].toLowerCase();
      const hit =
        matcher.starts.some((t) => word.startsWith(t)) ||
        matcher.fuzzy.some((f) => word.length >= 4 && closeStart(word, f));
      if (hit) ranges.push({ start: m.index, end: m.index + m[0].length });
    }
  }
  for (const term of matcher.anywhere) {
    for (let at = source.indexOf(term); at >= 0; at = source.indexOf(term, at + term.length)) ranges.push({ start: at, end: at + term.length });
  }
  ranges.sort((a, b) => a.start - b.start || b.end - a.end);
  const merged: Range[] = [];
  for (const r of ranges) {
    const last = merged[merged.length - 1];
    if (last && r.start <= last.end) last.end = Math.max(last.end, r.end);
    else merged.push({ ...r });
  }
  return merged;
}

/** Characters of a snippet, and how many of them come before its first match. */
const SNIPPET = 200;
const LEAD = 60;

/**
 * The part of a text around its first match (or its start), with the matches inside it as
 * offsets into the snippet returned.
 */
export function snippet(text: string, matches: Range[]): { body: string; highlights: Range[] } {
  const first = matches[0];
  let start = first ? Math.max(0, first.start - LEAD) : 0;
  // Start at a word's beginning when one is near.
  if (start > 0) {
    const space = text.lastIndexOf(' ', start);
    if (space >= 0 && start - space < 20) start = space + 1;
  }
  const end = Math.min(text.length, start + SNIPPET);
  const prefix = start > 0 ? '…' : '';
  const body = `${prefix}${text.slice(start, end)}${end < text.length ? '…' : ''}`;
  const highlights = matches
    .filter((m) => m.start >= start && m.end <= end)
    .map((m) => ({ start: m.start - start + prefix.length, end: m.end - start + prefix.length }));
  return { body, highlights };
}
