/**
 * Slugs: the URL-safe names made from titles (pages, site spaces, sections, site basenames).
 * Anchors of headings follow GitBook's own rule instead (src/content/markdown-text.ts).
 */

/**
 * A slug of a title: accents dropped, lowercase ASCII letters and digits, every other run of
 * characters one hyphen, none at either end, at most `max` characters; `fallback` when nothing
 * is left. A hyphen the cut at `max` leaves at the end is dropped too, unless `keepCutHyphen`
 * (page slugs have always kept it, and existing paths must not move).
 */
export function slugFrom(text: string, fallback: string, max = 100, { keepCutHyphen = false } = {}): string {
  const cut = text
    .normalize('NFKD')
    .replace(/[\u0300-\u036f]/g, '')
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-+|-+$/g, '')
    .slice(0, max);
  const slug = keepCutHyphen ? cut : cut.replace(/-+$/g, '');
  return slug || fallback;
}

/** `base`, or `base-2`, `base-3`…: the first not in `taken`, cut to stay within `max` characters. */
export function uniqueAmong(base: string, taken: Set<string>, max = 100): string {
  if (!taken.has(base)) return base;
  for (let n = 2; ; n++) {
    const suffix = `-${n}`;
    const candidate = base.slice(0, max - suffix.length).replace(/-+$/g, '') + suffix;
    if (!taken.has(candidate)) return candidate;
  }
}
