/** The part of `stopword` (which ships no types) that Folio uses: the English stop-word list. */
declare module 'stopword' {
  export const eng: string[];
}
