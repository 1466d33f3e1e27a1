import type { Db } from '../platform/db/database.ts';
import { DEFAULT_CONFIG, FALLBACK_CONFIG, searchConfigFor } from '../search/language.ts';
import { bul, ces, est, heb, hrv, jpn, kor, lav, msa, pol, slk, slv, tha, ukr, vie, zho } from 'stopword';
import * as store from './store.ts';
import { english, words, type Analyzer } from './text.ts';

/**
 * How the built-in engine reads the words of an organization's conversations: in the language
 * search uses for its spaces (src/search/language.ts), from the organization's default language.
 *
 * - none or English: as always (Porter stems, `stopword`'s English list, support chatter);
 * - a language PostgreSQL stems (french, german, spanish… about 20): the stem and stop words of
 *   that configuration's Snowball dictionary (`french_stem`…), asked of the database once per
 *   word and process, so an issue's terms are the lexemes search indexes ("documents" and
 *   "document" are one term, "les" none);
 * - the others (`simple` in search: Japanese, Chinese, Korean, Thai, Polish, Czech…): words as
 *   segmented, without the stop words of their language in `stopword`.
 *
 * Words come from Intl.Segmenter in every case, so Chinese, Japanese and Thai text is cut into
 * words (ICU's dictionaries), as search cuts it.
 */

const STOP_WORDS_OF: Record<string, string[]> = {
  ja: jpn, zh: zho, 'zh-tw': zho, yue: zho, ko: kor, th: tha, pl: pol, cs: ces, vi: vie, he: heb, uk: ukr, sk: slk,
  bg: bul, hr: hrv, lv: lav, et: est, sl: slv, ms: msa,
};

/** Stems by `dictionary word` (null: a stop word); bounded, cleared when full. */
const lexemes = new Map<string, string | null>();
const CACHE = 100_000;

/** The analyzer for an organization's language, ready for the words of `texts`. */
export async function analyzerFor(db: Db, language: string | null, texts: string[]): Promise<Analyzer> {
  const config = searchConfigFor(language);
  if (config === DEFAULT_CONFIG) return english;
  if (config === FALLBACK_CONFIG) {
    const stop = new Set(STOP_WORDS_OF[language!.toLowerCase()] ?? []);
    return (word) => (stop.has(word) ? null : word);
  }
  const dictionary = `${config}_stem`;
  const unknown = [...new Set(texts.flatMap((t) => words(t)).flatMap((w) => w.split('\'')).filter(Boolean))].filter((w) => !lexemes.has(`${dictionary} ${w}`));
  if (unknown.length) {
    const found = await store.stemsOf(db, dictionary, unknown);
    if (lexemes.size + found.size > CACHE) lexemes.clear();
    for (const [word, stem] of found) lexemes.set(`${dictionary} ${word}`, stem);
  }
  return (word) => {
    const stem = lexemes.get(`${dictionary} ${word}`);
    return stem === undefined ? word : stem;
  };
}
