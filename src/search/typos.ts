import { hasSpacelessScript } from './segment.ts';

/**
 * Typos: a query word that no title or heading of the searched spaces holds is compared with the
 * words they do hold (the `search_words` vocabulary, found by trigram similarity), and the words
 * a letter or two away stand in for it. Trigram similarity alone misses short words with swapped
 * letters ("brnach" and "branch" share 3 trigrams of 11), so it only gathers candidates, with a
 * low threshold; the edit distance decides.
 */

/** Words of a title or heading that typos may be corrected to: lowercased, 4+ letters, with letters. */
export function vocabularyOf(text: string): Set<string> {
  const words = new Set<string>();
  for (const m of text.toLowerCase().matchAll(/[\p{L}\p{N}]{4,}/gu)) {
    const word = m[0];
    if (word.length <= 40 && /\p{L}/u.test(word) && !hasSpacelessScript(word)) words.add(word);
  }
  return words;
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

/** Edits allowed for a word: one up to 7 letters, two from 8. */
export const allowedEdits = (word: string) => (word.length >= 8 ? 2 : 1);

/** At most this many corrections stand in for one word. */
export const CORRECTIONS_PER_WORD = 3;

/**
 * The corrections of `word` among `candidates` (words of the vocabulary with how many pages hold
 * them): the closest first, then the most common. None when the word itself is in the vocabulary.
 */
export function correctionsOf(word: string, candidates: { word: string; pages: number }[]): string[] {
  if (candidates.some((c) => c.word === word)) return [];
  const k = allowedEdits(word);
  return candidates
    .map((c) => ({ ...c, distance: editDistance(word, c.word, k) }))
    .filter((c) => c.distance <= k)
    .sort((a, b) => a.distance - b.distance || b.pages - a.pages || a.word.localeCompare(b.word))
    .slice(0, CORRECTIONS_PER_WORD)
    .map((c) => c.word);
}
