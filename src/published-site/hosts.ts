import type { IncomingMessage } from 'node:http';
import type { Db } from '../platform/db/database.ts';
import { publishedHostnames } from './store.ts';

/**
 * Custom hostnames of published sites. A request whose Host is a site's `hostname` is routed to
 * that site (its path is rewritten to `/<organization>/<basename>/…` before routing, and marked so
 * that the site's links stay at the host's root). Routing happens before any database access, so
 * the hostnames are kept in memory: re-read when the bus says they may have changed (`SITES_HOSTS`
 * on `SITES_TOPIC`, in every process at once) and every SITE_HOSTS_REFRESH_MS in case a message
 * was lost.
 */
export class SiteHosts {
  private sites = new Map<string, string>();
  private timer: NodeJS.Timeout | undefined;

  constructor(private readonly db: Db) {}

  private reads = 0;

  async refresh(): Promise<void> {
    // Two refreshes at once (a message during a timed one): the one started last wins.
    const read = ++this.reads;
    const rows = await publishedHostnames(this.db);
    if (read !== this.reads) return;
    this.sites = new Map(rows.map((r) => [r.hostname.toLowerCase(), `/${encodeURIComponent(r.organization_id)}/${encodeURIComponent(r.basename)}`]));
  }

  start(intervalMs: number): void {
    this.timer = setInterval(() => this.refresh().catch(() => {}), intervalMs);
    this.timer.unref();
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
  }

  /** The URL to route a request by (its own unless its Host is a site's hostname). */
  rewrite(req: IncomingMessage): string {
    const url = req.url ?? '/';
    if (!this.sites.size) return url;
    const host = (req.headers.host ?? '').replace(/:\d+$/, '').toLowerCase();
    const base = this.sites.get(host);
    // The API and health checks keep their paths on any host.
    if (!base || url.startsWith('/v1/') || url === '/healthz' || url === '/readyz') return url;
    (req as IncomingMessage & { folioSiteHost?: string }).folioSiteHost = base;
    return `${base}${url}`;
  }
}

/** The site base a request was routed to by its hostname ('/<org>/<basename>'), if it was. */
export function siteHostOf(req: IncomingMessage): string | undefined {
  return (req as IncomingMessage & { folioSiteHost?: string }).folioSiteHost;
}
