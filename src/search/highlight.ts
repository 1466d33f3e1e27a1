import { hasSpacelessScript } from './segment.ts';

/**
 * Where a query matches a piece of text, for choosing a page's matching sections and highlighting
 * their snippets. Matching follows what PostgreSQL matched: the lexemes of the parsed query
 * (stems: "integr" marks "integrations"; a misspelled word's corrections are among them) and
 * the words as typed (a prefix marks the words it starts).
 */

export type Range = { start: number; end: number };

export interface Matcher {
  /** Lowercased stems and words that mark the words they start. */
  starts: string[];
  /** Words of spaceless scripts: marked wherever they occur. */
  anywhere: string[];
}

/** The lexemes of a tsquery's text form (`'integr' & 'guid':*`). */
export function lexemesOf(queryText: string): string[] {
  const out: string[] = [];
  for (const m of queryText.matchAll(/'((?:[^']|'')*)'/g)) out.push(m[1]!.replace(/''/g, "'"));
  return out;
}

export function matcherFor(queryText: string, words: string[]): Matcher {
  const terms = [...new Set([...lexemesOf(queryText), ...words].map((t) => t.toLowerCase()).filter((t) => t.length > 0))];
  return {
    starts: terms.filter((t) => !hasSpacelessScript(t) && t.length >= 2),
    anywhere: terms.filter((t) => hasSpacelessScript(t)),
  };
}

/** The ranges of `text` the query matches, in order, not overlapping. */
export function findMatches(text: string, matcher: Matcher): Range[] {
  const ranges: Range[] = [];
  const lower = text.toLowerCase();
  // toLowerCase keeps offsets for the scripts indexed here, except a few (İ): then match on the text itself.
  const source = lower.length === text.length ? lower : text;
  // A word starting with a term holds it: texts without any (most sections of a long page) are
  // passed over without cutting them into words.
  if (matcher.starts.length && matcher.starts.some((t) => lower.includes(t))) {
    for (const m of source.matchAll(/[\p{L}\p{N}]+/gu)) {
      const word = m[0].toLowerCase();
      if (matcher.starts.some((t) => word.startsWith(t))) ranges.push({ start: m.index, end: m.index + m[0].length });
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
