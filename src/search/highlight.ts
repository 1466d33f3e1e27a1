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

const WORD_CHAR = /[\p{L}\p{N}]/u;
const WORD_REST = /[\p{L}\p{N}]*/uy;
const WORD_ONLY = /^[\p{L}\p{N}]+$/u;

/** Whether a word (letters and digits) starts at `at`: the code point before it is none of those. */
function startsWord(text: string, at: number): boolean {
  if (at === 0) return true;
  const before = at >= 2 && /[\uDC00-\uDFFF]/.test(text[at - 1]!) ? text.slice(at - 2, at) : text[at - 1]!;
  return !WORD_CHAR.test(before);
}

/**
 * The ranges of `text` the query matches, in order, not overlapping: each word (a run of letters
 * and digits) starting with a term, and each occurrence of a spaceless-script term. Words are
 * found from the terms' occurrences (indexOf), not by cutting the whole text into words: a long
 * page's sections cost little when the query's terms are rare in them.
 */
export function findMatches(text: string, matcher: Matcher): Range[] {
  const ranges: Range[] = [];
  const lower = text.toLowerCase();
  const { starts } = matcher;
  if (starts.length && lower.length === text.length) {
    // Only a term of letters and digits can start a word of letters and digits.
    for (const term of starts.filter((t) => WORD_ONLY.test(t))) {
      for (let at = lower.indexOf(term); at >= 0; at = lower.indexOf(term, at + 1)) {
        if (!startsWord(lower, at)) continue;
        WORD_REST.lastIndex = at + term.length;
        const rest = WORD_REST.exec(lower)![0];
        ranges.push({ start: at, end: at + term.length + rest.length });
      }
    }
  } else if (starts.length) {
    // toLowerCase changed the length (a few letters such as İ): offsets follow the text itself.
    for (const m of text.matchAll(/[\p{L}\p{N}]+/gu)) {
      const word = m[0].toLowerCase();
      if (starts.some((t) => word.startsWith(t))) ranges.push({ start: m.index, end: m.index + m[0].length });
    }
  }
  const source = lower.length === text.length ? lower : text;
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
