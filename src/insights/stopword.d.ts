/** The part of `stopword` (which ships no types) that Folio uses: stop-word lists by ISO 639-3 code. */
declare module 'stopword' {
  export const eng: string[];
  export const bul: string[];
  export const ces: string[];
  export const est: string[];
  export const heb: string[];
  export const hrv: string[];
  export const jpn: string[];
  export const kor: string[];
  export const lav: string[];
  export const msa: string[];
  export const pol: string[];
  export const slk: string[];
  export const slv: string[];
  export const tha: string[];
  export const ukr: string[];
  export const vie: string[];
  export const zho: string[];
}
