/**
 * Paths of the app (served at /app) that sign-in may send a person back to: the `next` of the
 * sign-in screen and of single sign-on. Only a path of this server's app is accepted, so a link
 * can never turn Folio's sign-in into a redirect to another site (an open redirect).
 */

/** Longest `next` accepted: a page path is at most a few hundred characters. */
const MAX_NEXT_LENGTH = 2048;

// Any base does: it only tells a path (which keeps it) from a URL of another origin (which changes it).
const BASE = 'http://folio.invalid';

/**
 * The app path `next` names, normalized (`/app/x/../y` is `/app/y`), or undefined when it is not
 * one: not a string, too long, with a control character or backslash (browsers read `\` as `/`),
 * of another origin (`//evil.example`, `https://…`), outside /app, or one of the app's JSON or
 * asset routes (/app/api, /app/assets), which are no screen.
 */
export function appPathOf(next: unknown): string | undefined {
  if (typeof next !== 'string' || next.length === 0 || next.length > MAX_NEXT_LENGTH) return undefined;
  // eslint-disable-next-line no-control-regex
  if (!next.startsWith('/') || next.startsWith('//') || /[\\\u0000-\u001f\u007f]/.test(next)) return undefined;
  let url: URL;
  try {
    url = new URL(next, BASE);
  } catch {
    return undefined;
  }
  if (url.origin !== BASE) return undefined;
  const path = url.pathname;
  if (path !== '/app' && !path.startsWith('/app/')) return undefined;
  if (/^\/app\/(api|assets)(\/|$)/.test(path)) return undefined;
  return `${path}${url.search}${url.hash}`;
}

/** The organization an app path is about (`/app/o/<organization>` and below), if it names one. */
export function organizationOfAppPath(path: string): string | undefined {
  const match = /^\/app\/o\/([^/?#]+)/.exec(path);
  if (!match) return undefined;
  try {
    return decodeURIComponent(match[1]!);
  } catch {
    return undefined;
  }
}
