import { stemmer } from 'stemmer';
import { eng } from 'stopword';

/**
 * Text processing of the built-in engine: sentences and words by the platform's own Unicode
 * segmentation (Intl.Segmenter, UAX #29; ICU's dictionaries cut Chinese, Japanese and Thai into
 * words), then each word through an `Analyzer`: its stem, or nothing for a stop word. English (an
 * organization without a language, or `en`): Porter stems from `stemmer`, stop words from
 * `stopword` and support chatter; other languages: see analyzer.ts. A text becomes a sparse
 * term-frequency vector of stems (and of pairs of adjacent stems, which tell "api key" from "api
 * rate"), weighted by inverse document frequency when compared.
 */

const sentenceSegmenter = new Intl.Segmenter('en', { granularity: 'sentence' });
const wordSegmenter = new Intl.Segmenter('en', { granularity: 'word' });

/** Words of support conversations that say nothing about the problem itself. */
const CHATTER = [
  'hi', 'hello', 'hey', 'thanks', 'thank', 'thx', 'please', 'pls', 'team', 'support', 'folks', 'guys', 'regards',
  'cheers', 'best', 'dear', 'sir', 'madam', 'help', 'helping', 'helped', 'question', 'quick', 'really', 'just', 'also',
  'still', 'anyone', 'someone', 'something', 'anything', 'everything', 'thing', 'things', 'way', 'lot', 'bit', 'today',
  'yesterday', 'now', 'again', 'since', 'get', 'gets', 'getting', 'got', 'keep', 'keeps', 'kept', 'trying', 'try', 'tried',
  'tries', 'use', 'using', 'used', 'want', 'wanted', 'need', 'needed', 'know', 'let', 'like', 'seem', 'seems', 'appreciate',
  'issue', 'issues', 'problem', 'problems', 'hey', 'there', 'ok', 'okay', 'yes', 'no', 'would', 'could', 'should',
  'can', 'cannot', 'can\'t', 'don\'t', 'doesn\'t', 'didn\'t', 'won\'t', 'isn\'t', 'wasn\'t', 'i\'m', 'i\'ve', 'it\'s',
  'we\'re', 'we\'ve', 'you', 'your', 'one', 'any', 'every', 'time', 'times', 'day', 'days', 'week', 'idea', 'ideas',
];

const STOP = new Set([...eng, ...CHATTER].map((w) => w.toLowerCase()));

export type SparseVector = Record<string, number>;

export function sentences(text: string): string[] {
  const out: string[] = [];
  for (const { segment } of sentenceSegmenter.segment(text)) {
    // Line breaks separate statements in chat messages even without punctuation.
    for (const line of segment.split(/\n+/)) {
      const s = line.trim();
      if (s) out.push(s);
    }
  }
  return out;
}

/** Lower-cased words (letters and digits), in order. */
export function words(text: string): string[] {
  const out: string[] = [];
  for (const { segment, isWordLike } of wordSegmenter.segment(text.toLowerCase())) {
    if (isWordLike) out.push(segment.replace(/’/g, '\''));
  }
  return out;
}

export interface Terms {
  /** Stems (and adjacent pairs) with their counts. */
  counts: Map<string, number>;
  /** The surface word seen for each single stem (the first one), for readable keywords. */
  surface: Map<string, string>;
}

/** A word's stem, or null for a word that says nothing (a stop word). */
export type Analyzer = (word: string) => string | null;

/** English, as the engine always read it: Porter stems, stop words and support chatter dropped. */
export const english: Analyzer = (word) => (STOP.has(word) ? null : stemmer(word));

/**
 * The words an analyzer reads. In English a word keeps its apostrophe ("don't" is a stop word);
 * in other languages it is cut there, as PostgreSQL's parser cuts it for search: French and
 * Italian elisions ("l'exportation", "j'exporte") leave the word itself.
 */
export function wordsFor(text: string, analyze: Analyzer): string[] {
  const all = words(text);
  return analyze === english ? all : all.flatMap((w) => (w.includes('\'') ? w.split('\'').filter(Boolean) : [w]));
}

/** Content terms of a text: stop words and chatter dropped, words stemmed, adjacent pairs added. */
export function terms(text: string, analyze: Analyzer = english): Terms {
  const counts = new Map<string, number>();
  const surface = new Map<string, string>();
  let previous: string | undefined;
  for (const word of wordsFor(text, analyze)) {
    // One letter says nothing, except in scripts where a character is a word (Chinese 库, 错).
    const stem = (word.length < 2 && !/^\p{Script=Han}$/u.test(word)) || (/^\d+$/.test(word) && word.length < 3) ? null : analyze(word);
    if (!stem) {
      previous = undefined;
      continue;
    }
    counts.set(stem, (counts.get(stem) ?? 0) + 1);
    if (!surface.has(stem)) surface.set(stem, word);
    if (previous !== undefined && previous !== stem) {
      const pair = `${previous} ${stem}`;
      counts.set(pair, (counts.get(pair) ?? 0) + 1);
    }
    previous = stem;
  }
  return { counts, surface };
}

/** Sub-linear term frequency, pairs at half weight, as a unit vector (before IDF weighting). */
export function termVector(counts: Map<string, number>): SparseVector {
  const vector: SparseVector = {};
  let norm = 0;
  for (const [term, count] of counts) {
    const weight = (1 + Math.log(count)) * (term.includes(' ') ? 0.5 : 1);
    vector[term] = weight;
    norm += weight * weight;
  }
  norm = Math.sqrt(norm);
  if (norm > 0) for (const term in vector) vector[term]! /= norm;
  return vector;
}

/** Smoothed inverse document frequency. */
export function idf(df: number, documents: number): number {
  return Math.log((1 + documents) / (1 + df)) + 1;
}
