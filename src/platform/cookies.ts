/**
 * The cookies of a request's `Cookie` header, by name (the first of a repeated name wins, as
 * browsers send the most specific first). A value that is not valid percent-encoding is kept as
 * sent rather than failing the request.
 */
export function requestCookies(header: string | undefined): Map<string, string> {
  const cookies = new Map<string, string>();
  for (const part of (header ?? '').split(';')) {
    const eq = part.indexOf('=');
    const name = eq > 0 ? part.slice(0, eq).trim() : '';
    if (!name || cookies.has(name)) continue;
    const raw = part.slice(eq + 1).trim();
    try {
      cookies.set(name, decodeURIComponent(raw));
    } catch {
      cookies.set(name, raw);
    }
  }
  return cookies;
}
