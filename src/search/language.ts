/**
 * Which PostgreSQL text search configuration indexes a space's pages and parses its queries,
 * from the space's language (the official TranslationLanguage codes). A configuration stems words
 * and drops stop words of its language ("documents" and "document" give the same lexeme in
 * French). Languages PostgreSQL has no configuration for (Chinese, Japanese, Korean, Thai, Polish,
 * Czech, …) use `simple`: words lowercased, no stemming; Chinese, Japanese and Thai text is cut
 * into words before it reaches PostgreSQL (segment.ts), so `simple` sees real words there too.
 */
const CONFIG_OF_LANGUAGE: Record<string, string> = {
  en: 'english',
  fr: 'french',
  de: 'german',
  es: 'spanish',
  it: 'italian',
  pt: 'portuguese',
  'pt-br': 'portuguese',
  nl: 'dutch',
  ru: 'russian',
  sv: 'swedish',
  no: 'norwegian',
  da: 'danish',
  fi: 'finnish',
  el: 'greek',
  hu: 'hungarian',
  ro: 'romanian',
  tr: 'turkish',
  id: 'indonesian',
  lt: 'lithuanian',
  ar: 'arabic',
  hi: 'hindi',
};

/** A space without a language is indexed as English, as every space was before languages. */
export const DEFAULT_CONFIG = 'english';
export const FALLBACK_CONFIG = 'simple';

/**
 * The configuration for a language code (null: the space has none). Every configuration named
 * above ships with PostgreSQL 15 and later and with PGlite (Estonian, added in PostgreSQL 16, is
 * left out so that both engines index alike).
 */
export function searchConfigFor(language: string | null | undefined): string {
  if (language == null) return DEFAULT_CONFIG;
  return CONFIG_OF_LANGUAGE[language.toLowerCase()] ?? FALLBACK_CONFIG;
}
