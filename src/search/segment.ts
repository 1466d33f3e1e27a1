/**
 * Words for search in every script. PostgreSQL's parser splits text at spaces and punctuation, so
 * Chinese, Japanese, Thai, Lao, Khmer and Burmese — written without spaces between words — reach
 * it as one "word" per sentence, and a word from the middle of a sentence is never found. Runs of
 * those scripts are cut into words here, with `Intl.Segmenter` (ICU's dictionaries), and the
 * words joined by spaces, both before indexing and before querying, so both sides agree.
 *
 * Segmentation looks at the script, not at the space's language: a Japanese quotation in an
 * English page is found as well, and a space's language can change without re-segmenting.
 */

/** Scripts written without spaces between words ('ー' and '々' sit inside Japanese words). */
const SPACELESS_RUN = /[\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}\p{Script=Thai}\p{Script=Lao}\p{Script=Khmer}\p{Script=Myanmar}ー々〆ヶ]+/gu;
const HAS_SPACELESS = /[\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}\p{Script=Thai}\p{Script=Lao}\p{Script=Khmer}\p{Script=Myanmar}]/u;

// ICU picks its dictionary by script, not by locale: one segmenter serves every language.
const wordSegmenter = new Intl.Segmenter(undefined, { granularity: 'word' });

export function hasSpacelessScript(text: string): boolean {
  return HAS_SPACELESS.test(text);
}

function wordsOfRun(run: string): string[] {
  const words: string[] = [];
  for (const { segment, isWordLike } of wordSegmenter.segment(run)) if (isWordLike) words.push(segment);
  return words;
}

/** The text as PostgreSQL should index it: runs of spaceless scripts cut into space-separated words. */
export function indexText(text: string): string {
  if (!hasSpacelessScript(text)) return text;
  return text.replace(SPACELESS_RUN, (run) => ` ${wordsOfRun(run).join(' ')} `);
}

export interface QueryWord {
  text: string;
  /** Typed last, with no space after it: the start of a word ("authen" finds "authentication"). */
  prefix: boolean;
  /** Long enough, and in a script with letters, to be matched by trigram similarity when misspelled. */
  fuzzy: boolean;
}

export interface ParsedQuery {
  /** Every word must match (exactly, as a prefix, or — in titles and headings — approximately). */
  words: QueryWord[];
  /** Quoted phrases, each already segmented: their words must follow each other. */
  phrases: string[];
  /** Words after a minus: pages with them are left out. */
  excluded: string[];
  /** What highlighting looks for: every searched word and phrase word, lowercased. */
  highlight: string[];
}

/** At most this many words of a query are searched: the cost of a query stays bounded. */
export const MAX_QUERY_WORDS = 12;

const LETTERS = /^[\p{L}\p{N}]+$/u;

/**
 * Parses a search box's text: `"exact phrase"`, `-excluded`, and words. The last word is a prefix
 * when nothing follows it (the reader is still typing it).
 */
export function parseQuery(query: string): ParsedQuery {
  const words: QueryWord[] = [];
  const phrases: string[] = [];
  const excluded: string[] = [];
  const highlight: string[] = [];
  const pattern = /(-?)"([^"]*)"?|(\S+)/g;
  let match: RegExpExecArray | null;
  let lastEnd = 0;
  let lastWordToken = false;
  while ((match = pattern.exec(query))) {
    lastEnd = match.index + match[0].length;
    if (match[2] !== undefined) {
      lastWordToken = false;
      const phraseWords = splitWords(match[2]);
      if (!phraseWords.length) continue;
      if (match[1]) excluded.push(phraseWords.join(' '));
      else {
        phrases.push(phraseWords.join(' '));
        highlight.push(...phraseWords);
      }
      continue;
    }
    const token = match[3]!;
    if (token.startsWith('-') && token.length > 1) {
      lastWordToken = false;
      excluded.push(...splitWords(token.slice(1)));
      continue;
    }
    const found = splitWords(token);
    lastWordToken = found.length > 0;
    for (const text of found) {
      const spaceless = hasSpacelessScript(text);
      words.push({ text, prefix: false, fuzzy: !spaceless && text.length >= 4 && LETTERS.test(text) && !/^\p{N}+$/u.test(text) });
      highlight.push(text);
    }
  }
  // Still typing the last word: it is a prefix, unless it is in a spaceless script (a whole word
  // from the segmenter) or too short to narrow anything down.
  const last = words[words.length - 1];
  if (last && lastWordToken && lastEnd === query.length && !hasSpacelessScript(last.text) && last.text.length >= 2 && LETTERS.test(last.text)) last.prefix = true;
  return { words: words.slice(0, MAX_QUERY_WORDS), phrases: phrases.slice(0, 4), excluded: excluded.slice(0, 4), highlight };
}

/** The words of a piece of query text, lowercased; spaceless runs cut by the segmenter. */
function splitWords(text: string): string[] {
  const words: string[] = [];
  for (const { segment, isWordLike } of wordSegmenter.segment(text.toLowerCase())) {
    if (!isWordLike) continue;
    // An apostrophe inside a word cuts it, as PostgreSQL's parser cuts the indexed text: French
    // and Italian elisions ("d'einher", "l'explo") leave the word itself, so it can be a prefix
    // while typed (deleting the apostrophe made "deinher", which matches nothing).
    for (const part of segment.split(/['\u2019]/)) {
      // Backslashes and quotes would be syntax to to_tsquery; they never make a word.
      const word = part.replace(/[\\"]/g, '');
      if (word) words.push(word);
    }
  }
  return words;
}
