/**
 * An href for wouter that names a path of the app from its root (/app…), wherever the link is:
 * inside a nested route (a space's screens), plain paths are relative to that route.
 */
export const appHref = (path: string) => `~/app${path.startsWith('/') ? path : `/${path}`}`;
