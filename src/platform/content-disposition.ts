/**
 * A `Content-Disposition` header value for a file name (RFC 6266 with RFC 5987 encoding):
 * `inline; filename="ascii fallback"; filename*=UTF-8''percent-encoded`.
 *
 * HTTP header values are bytes, so a name like `☃.txt` cannot be written as it is (Node refuses
 * it) and `café.txt` would reach the browser as Latin-1 mojibake. `filename*` carries the exact
 * name in UTF-8; `filename` is a printable-ASCII approximation for clients that ignore `filename*`.
 * Written here rather than adding a dependency: it is two short functions.
 */
export function contentDisposition(type: 'inline' | 'attachment', name: string): string {
  // Control characters never belong in a name; lone surrogates cannot be encoded as UTF-8.
  const clean = name
    .replace(/[\u0000-\u001f\u007f]/g, '')
    .replace(/[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g, '\uFFFD');
  return `${type}; filename="${asciiFallback(clean)}"; filename*=UTF-8''${encodeRfc5987(clean)}`;
}

/** Printable ASCII: accents dropped (café → cafe), anything else, quotes and backslashes as `_`. */
function asciiFallback(name: string): string {
  const ascii = name
    .normalize('NFKD')
    .replace(/[\u0300-\u036f]/g, '')
    .replace(/[^\x20-\x7e]|["\\%]/g, '_');
  return ascii.trim() === '' ? 'file' : ascii;
}

/** RFC 5987 `value-chars`: UTF-8 bytes, percent-encoded except the `attr-char` set. */
function encodeRfc5987(name: string): string {
  // encodeURIComponent leaves ' ( ) * unencoded, which are not attr-chars.
  return encodeURIComponent(name).replace(/['()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);
}
