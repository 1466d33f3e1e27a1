import { parseHTML } from 'linkedom';
import { fetchVetted } from '../content/files.ts';
import { BadRequestError } from '../platform/errors.ts';

/**
 * Crawls a documentation website for an import: the pages under the start URL's path on the same
 * host, in the order the site's navigation lists them.
 *
 * - Every request (robots.txt, sitemaps, pages, and each redirect they take) goes through Folio's
 *   vetted outbound fetch (content/files.ts fetchVetted): addresses the configuration does not
 *   allow (private, loopback, link-local… unless FETCH_ALLOW_PRIVATE / FETCH_ALLOW_CIDRS) are
 *   refused, so neither a link nor a redirect can reach the internal network.
 * - robots.txt is respected: the group for the `Folio` agent, else `*`; Allow/Disallow with the
 *   longest match winning (`*` and `$` patterns as Google reads them).
 * - Order: breadth-first from the start page, each page's links in document order (a docs site's
 *   sidebar lists its pages in its navigation order), then pages only the sitemap names.
 * - Bounds: at most `maxPages` pages and `maxBytes` bytes in all; past `timeoutMs` the crawl stops
 *   and returns what it has, with a warning. `signal` cancels: the promise rejects with its reason.
 */

export interface FetchedResource {
  data: Buffer;
  contentType: string | undefined;
  /** Where the response came from, after redirects. */
  url: URL;
}

/** One GET, bounded by the signal and maxBytes; rejects for a non-2xx answer. */
export type CrawlFetch = (url: string, o: { signal: AbortSignal; maxBytes: number }) => Promise<FetchedResource>;

export interface CrawlOptions {
  maxPages: number;
  maxBytes: number;
  timeoutMs: number;
  signal?: AbortSignal;
  /** The addresses fetches may reach (the server configuration's fetchAllowPrivate/fetchAllowCidrs); public ones only by default. */
  reach?: { fetchAllowPrivate: boolean; fetchAllowCidrs: string[] };
  /** Replaces the vetted fetch (tests); the default is fetchVetted under `reach`. */
  fetch?: CrawlFetch;
  /** Fetches at once (default 4, at most 8); pages keep the order of one fetch at a time. */
  concurrency?: number;
  /** Called with the number of pages fetched so far, after each page. */
  onProgress?: (n: number) => void;
}

export interface CrawledPage {
  url: string;
  /** The URL's path relative to the start path, as slugs (`[]` for the start page itself). */
  path: string[];
  title: string;
  html: string;
}

export interface CrawlResult {
  pages: CrawledPage[];
  warnings: string[];
}

const ROBOTS_MAX_BYTES = 512 * 1024;
const SITEMAP_MAX_BYTES = 5 * 1024 * 1024;
const MAX_SITEMAPS = 10;
/** Link targets that are never pages. */
const NOT_A_PAGE = /\.(png|jpe?g|gif|svg|webp|ico|bmp|pdf|zip|gz|tgz|tar|rar|7z|mp3|mp4|webm|mov|avi|css|js|mjs|json|xml|txt|woff2?|ttf|eot|exe|dmg|apk|csv|xlsx?|docx?|pptx?)$/i;

export class CrawlError extends BadRequestError {}

export function vettedCrawlFetch(reach: { fetchAllowPrivate: boolean; fetchAllowCidrs: string[] }): CrawlFetch {
  return (url, o) =>
    fetchVetted(url, {
      config: reach,
      signal: o.signal,
      maxBytes: o.maxBytes,
      tooLarge: () => new BadRequestError(`${url} is larger than ${o.maxBytes} bytes, the bytes left for this import`),
      privateHint: '; a website import only reaches public addresses',
    });
}

/** The scope of a crawl: same host, under the start URL's folder. */
function scopeOf(start: URL): { origin: string; prefix: string; exact: string } {
  let path = start.pathname;
  // "/docs/intro.html" is a page of the folder "/docs/".
  if (!path.endsWith('/') && /\.[a-z0-9]+$/i.test(path.slice(path.lastIndexOf('/') + 1))) path = path.slice(0, path.lastIndexOf('/') + 1);
  const prefix = path.endsWith('/') ? path : `${path}/`;
  return { origin: start.origin, prefix, exact: prefix.length > 1 ? prefix.slice(0, -1) : prefix };
}

function inScope(url: URL, scope: { origin: string; prefix: string; exact: string }): boolean {
  // http and https of the same host and port are one site (a redirect to https stays in scope).
  const origin = new URL(scope.origin);
  const sameHost = url.hostname === origin.hostname && url.port === origin.port;
  return sameHost && (url.pathname === scope.exact || url.pathname.startsWith(scope.prefix));
}

/**
 * A page's identity (no fragment, no query, no trailing slash or index file): two URLs with the
 * same key are one page. The framework can index the crawled pages by `crawlPageKey(page.url)`
 * and look links up by it (htmlToGitbookMarkdown's rewriteLink) to point them at the imported pages.
 */
export function crawlPageKey(url: string): string | undefined {
  try {
    return pageKey(new URL(url));
  } catch {
    return undefined;
  }
}

function pageKey(url: URL): string {
  const path = url.pathname.replace(/\/index\.html?$/i, '/').replace(/\/+$/, '') || '/';
  return `${url.host}${path}`;
}

function pagePath(url: URL, scope: { prefix: string }): string[] {
  const rel = url.pathname.startsWith(scope.prefix) ? url.pathname.slice(scope.prefix.length) : '';
  const slugs = rel
    .split('/')
    .filter(Boolean)
    .map((s) => {
      try {
        return decodeURIComponent(s);
      } catch {
        return s;
      }
    });
  const last = slugs.at(-1);
  if (last !== undefined) {
    const bare = last.replace(/\.(html?|php|aspx?)$/i, '');
    if (/^index$/i.test(bare)) slugs.pop();
    else slugs[slugs.length - 1] = bare;
  }
  return slugs;
}

// --- robots.txt -----------------------------------------------------------------------------

interface RobotsRule {
  allow: boolean;
  pattern: string;
}

export interface Robots {
  allowed(path: string): boolean;
  sitemaps: string[];
}

/** Parses robots.txt for the agent `agent` (the group naming it, else `*`). */
export function parseRobots(text: string, agent = 'folio'): Robots {
  const groups: { agents: string[]; rules: RobotsRule[] }[] = [];
  const sitemaps: string[] = [];
  let current: { agents: string[]; rules: RobotsRule[] } | undefined;
  let lastWasAgent = false;
  for (const raw of text.split(/\r?\n|\r/)) {
    const line = raw.replace(/#.*$/, '').trim();
    const m = /^([A-Za-z-]+)\s*:\s*(.*)$/.exec(line);
    if (!m) continue;
    const key = m[1]!.toLowerCase();
    const value = m[2]!.trim();
    if (key === 'user-agent') {
      if (!current || !lastWasAgent) {
        current = { agents: [], rules: [] };
        groups.push(current);
      }
      current.agents.push(value.toLowerCase());
      lastWasAgent = true;
      continue;
    }
    lastWasAgent = false;
    if (key === 'sitemap') sitemaps.push(value);
    else if ((key === 'allow' || key === 'disallow') && current) {
      // An empty Disallow allows everything: it adds no rule.
      if (value !== '') current.rules.push({ allow: key === 'allow', pattern: value });
    }
  }
  const mine = groups.filter((g) => g.agents.some((a) => a !== '*' && agent.toLowerCase().includes(a)));
  const rules = (mine.length > 0 ? mine : groups.filter((g) => g.agents.includes('*'))).flatMap((g) => g.rules);
  const matchers = rules.map((r) => ({ ...r, re: robotsPattern(r.pattern), length: r.pattern.length }));
  return {
    sitemaps,
    allowed(path: string) {
      let best: { allow: boolean; length: number } | undefined;
      for (const r of matchers) {
        if (!r.re.test(path)) continue;
        // The longest pattern wins; on a tie, Allow.
        if (!best || r.length > best.length || (r.length === best.length && r.allow)) best = r;
      }
      return best?.allow ?? true;
    },
  };
}

function robotsPattern(pattern: string): RegExp {
  const anchored = pattern.endsWith('$');
  const body = (anchored ? pattern.slice(0, -1) : pattern)
    .split('*')
    .map((part) => part.replace(/[.+?^${}()|[\]\\]/g, '\\$&'))
    .join('.*');
  return new RegExp(`^${body}${anchored ? '$' : ''}`);
}

// --- the crawl ------------------------------------------------------------------------------

function decodeEntities(text: string): string {
  return text
    .replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>')
    .replace(/&quot;/g, '"')
    .replace(/&apos;/g, "'")
    .replace(/&amp;/g, '&');
}

function isHtml(contentType: string | undefined, data: Buffer): boolean {
  if (contentType) return /^(text\/html|application\/xhtml\+xml)$/i.test(contentType);
  return /^\s*(<!doctype html|<html)/i.test(data.subarray(0, 512).toString('utf8'));
}

/** The page's title (its first `<h1>`, else `<title>` without the site's name) and its links in document order. */
function readPage(html: string, base: URL): { title: string; links: URL[] } {
  const { document } = parseHTML(html);
  const baseHref = document.querySelector('base[href]')?.getAttribute('href');
  let linkBase = base;
  if (baseHref) {
    try {
      linkBase = new URL(baseHref, base);
    } catch {
      // An invalid <base> is ignored.
    }
  }
  const links: URL[] = [];
  for (const a of Array.from(document.querySelectorAll('a[href]'))) {
    const rel = (a.getAttribute('rel') ?? '').toLowerCase();
    if (rel.includes('nofollow')) continue;
    try {
      const url = new URL(a.getAttribute('href')!.trim(), linkBase);
      if (url.protocol === 'http:' || url.protocol === 'https:') links.push(url);
    } catch {
      // Not a URL.
    }
  }
  const h1 = document.querySelector('main h1, article h1, h1');
  const docTitle = (document.querySelector('title')?.textContent ?? '').replace(/\s+/g, ' ').trim();
  const title = (h1?.textContent ?? '').replace(/\s+/g, ' ').trim() || docTitle.split(/\s+[|–—·]\s+|\s+-\s+/)[0]!.trim() || base.pathname;
  return { title, links };
}

export async function crawlWebsite(startUrl: string, opts: CrawlOptions): Promise<CrawlResult> {
  let start: URL;
  try {
    start = new URL(startUrl);
  } catch {
    throw new CrawlError(`"${startUrl}" is not a valid URL`);
  }
  if (start.protocol !== 'http:' && start.protocol !== 'https:') throw new CrawlError('only http(s) websites can be imported');
  start.hash = '';
  const fetch = opts.fetch ?? vettedCrawlFetch(opts.reach ?? { fetchAllowPrivate: false, fetchAllowCidrs: [] });
  const scope = scopeOf(start);
  const warnings: string[] = [];
  const warn = (m: string) => {
    if (!warnings.includes(m)) warnings.push(m);
  };

  // The crawl's own controller: aborted by the caller's signal (cancel) or the deadline (timeout).
  const controller = new AbortController();
  let timedOut = false;
  const timer = setTimeout(() => {
    timedOut = true;
    controller.abort(new Error('the time allowed for the crawl ran out'));
  }, Math.max(1, Math.min(opts.timeoutMs, 2 ** 31 - 1)));
  const onCancel = () => controller.abort(opts.signal!.reason);
  if (opts.signal?.aborted) throw opts.signal.reason;
  opts.signal?.addEventListener('abort', onCancel, { once: true });

  let bytesLeft = opts.maxBytes;
  const pages: CrawledPage[] = [];
  const get = async (url: string, max: number): Promise<FetchedResource> => {
    const res = await fetch(url, { signal: controller.signal, maxBytes: Math.max(0, Math.min(max, bytesLeft)) });
    bytesLeft -= res.data.byteLength;
    return res;
  };
  const stopped = () => controller.signal.aborted;

  try {
    // robots.txt of the host.
    let robots = parseRobots('');
    try {
      const res = await get(new URL('/robots.txt', start).href, ROBOTS_MAX_BYTES);
      robots = parseRobots(res.data.toString('utf8'));
    } catch (err) {
      if (stopped()) throw err;
      // No robots.txt (or none readable): everything may be crawled.
    }
    if (!robots.allowed(start.pathname)) throw new CrawlError(`${start.href} may not be crawled: the site's robots.txt disallows it`);

    const seen = new Set<string>([pageKey(start)]);
    const queue: URL[] = [start];
    let skippedByRobots = 0;
    let outOfScope = 0;
    const consider = (url: URL): void => {
      url.hash = '';
      url.search = '';
      if (!inScope(url, scope) || NOT_A_PAGE.test(url.pathname)) {
        if (url.host !== start.host || !NOT_A_PAGE.test(url.pathname)) outOfScope++;
        return;
      }
      const key = pageKey(url);
      if (seen.has(key)) return;
      seen.add(key);
      if (!robots.allowed(url.pathname)) {
        skippedByRobots++;
        return;
      }
      queue.push(url);
    };

    // Sitemap URLs come after the pages the navigation leads to.
    let sitemapLoaded = false;
    const loadSitemaps = async () => {
      sitemapLoaded = true;
      const sources = [...robots.sitemaps, new URL('/sitemap.xml', start).href];
      if (scope.prefix !== '/') sources.push(new URL(`${scope.prefix}sitemap.xml`, start).href);
      const done = new Set<string>();
      let count = 0;
      while (sources.length > 0 && count < MAX_SITEMAPS && !stopped()) {
        const src = sources.shift()!;
        if (done.has(src)) continue;
        done.add(src);
        let sitemapUrl: URL;
        try {
          sitemapUrl = new URL(src);
        } catch {
          continue;
        }
        if (sitemapUrl.host !== start.host) continue;
        count++;
        let text: string;
        try {
          text = (await get(sitemapUrl.href, SITEMAP_MAX_BYTES)).data.toString('utf8');
        } catch (err) {
          if (stopped()) throw err;
          continue;
        }
        const locs = Array.from(text.matchAll(/<loc>\s*([^<]+?)\s*<\/loc>/gi), (m) => decodeEntities(m[1]!));
        if (/<sitemapindex[\s>]/i.test(text)) sources.push(...locs);
        else
          for (const loc of locs) {
            try {
              consider(new URL(loc));
            } catch {
              // Not a URL.
            }
          }
      }
    };

    // Up to `concurrency` fetches at once, their pages taken in the order they were queued: the
    // order (and so the page tree) is the same as one fetch at a time would give.
    const concurrency = Math.max(1, Math.min(opts.concurrency ?? 4, 8));
    const inflight: { url: URL; outcome: Promise<{ res?: FetchedResource; err?: unknown }> }[] = [];
    const bytesWarning = () => warn(`the pages reached ${opts.maxBytes} bytes, the most an import may read: the crawl stopped after ${pages.length} pages`);
    while (!stopped()) {
      while (inflight.length < concurrency && queue.length > 0 && pages.length + inflight.length < opts.maxPages && bytesLeft > 0) {
        const url = queue.shift()!;
        inflight.push({ url, outcome: get(url.href, bytesLeft).then((res) => ({ res }), (err: unknown) => ({ err })) });
      }
      if (inflight.length === 0) {
        if (queue.length > 0) {
          if (pages.length >= opts.maxPages) warn(`the site has more pages than the ${opts.maxPages} an import may take: the crawl stopped after ${opts.maxPages}`);
          else bytesWarning();
          break;
        }
        if (sitemapLoaded) break;
        await loadSitemaps();
        continue;
      }
      const { url, outcome } = inflight.shift()!;
      const { res, err } = await outcome;
      if (stopped()) break;
      if (!res) {
        const message = (err as Error).message;
        if (/larger than/.test(message)) {
          bytesWarning();
          break;
        }
        if (pages.length === 0 && url === start) throw new CrawlError(`the website could not be read: ${message}`);
        warn(`${url.href} was skipped: ${message}`);
        continue;
      }
      if (bytesLeft < 0) {
        bytesWarning();
        break;
      }
      // A redirect may lead anywhere the vetted fetch allows: only pages still in scope are kept.
      const final = new URL(res.url.href);
      final.hash = '';
      if (!inScope(final, scope)) {
        warn(`${url.href} was skipped: it redirects to ${final.href}, outside ${scope.origin}${scope.prefix}`);
        continue;
      }
      if (final.href !== url.href) {
        const key = pageKey(final);
        if (key !== pageKey(url) && seen.has(key) && pages.some((p) => pageKey(new URL(p.url)) === key)) continue;
        seen.add(key);
      }
      if (!isHtml(res.contentType, res.data)) {
        warn(`${url.href} was skipped: it is not an HTML page (${res.contentType ?? 'unknown type'})`);
        continue;
      }
      const html = res.data.toString('utf8');
      const { title, links } = readPage(html, final);
      pages.push({ url: final.href, path: pagePath(final, scope), title, html });
      opts.onProgress?.(pages.length);
      for (const link of links) consider(link);
    }
    if (opts.signal?.aborted) throw opts.signal.reason;
    if (timedOut) warn(`the crawl stopped after ${opts.timeoutMs} ms, the time an import may take, with ${pages.length} pages`);
    if (skippedByRobots > 0) warn(`${skippedByRobots} page${skippedByRobots > 1 ? 's were' : ' was'} not crawled: the site's robots.txt disallows ${skippedByRobots > 1 ? 'them' : 'it'}`);
    void outOfScope;
    // Two URLs of one page (with and without a trailing slash) would make two pages with one path.
    const byPath = new Map<string, CrawledPage>();
    for (const page of pages) {
      const key = page.path.join('/');
      if (byPath.has(key)) warn(`${page.url} was left out: ${byPath.get(key)!.url} has the same path`);
      else byPath.set(key, page);
    }
    return { pages: [...byPath.values()], warnings };
  } catch (err) {
    if (opts.signal?.aborted) throw opts.signal.reason;
    if (timedOut && !(err instanceof CrawlError)) {
      warn(`the crawl stopped after ${opts.timeoutMs} ms, the time an import may take, with ${pages.length} pages`);
      return { pages, warnings };
    }
    throw err;
  } finally {
    clearTimeout(timer);
    opts.signal?.removeEventListener('abort', onCancel);
    // Fetches still under way when the crawl stopped are cut.
    if (!controller.signal.aborted) controller.abort(new Error('the crawl is over'));
  }
}
