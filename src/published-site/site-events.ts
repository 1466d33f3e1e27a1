import { createHash, randomUUID } from 'node:crypto';
import type { Insertable } from 'kysely';
import type { Services } from '../platform/context.ts';
import type { Db } from '../platform/db/database.ts';
import type { Database } from '../platform/db/schema.ts';

/**
 * A site's reader events (`site_events`): who a reader is for counting, and their rows. The
 * published site records what its pages send (reader-events.ts); Ask records questions and
 * serves the aggregation (src/ask/events.ts), on top of this module.
 */

/** Visitor and session ids of reader events are kept as keyed hashes: counted, never shown. */
export function eventId(services: Pick<Services, 'signingKey'>, siteId: string, id: string): string {
  return createHash('sha256').update(services.signingKey).update(`site-event|${siteId}|${id}`).digest('base64url').slice(0, 22);
}

/** The session of a visitor's last event on a site since `since` (a session continues while its events are close). */
export async function recentSessionOf(db: Db, organizationId: string, siteId: string, visitorId: string, since: Date): Promise<string | undefined> {
  const row = await db
    .selectFrom('site_events')
    .select('session_id')
    .where('organization_id', '=', organizationId)
    .where('site_id', '=', siteId)
    .where('visitor_id', '=', visitorId)
    .where('created_at', '>=', since)
    .orderBy('created_at', 'desc')
    .limit(1)
    .executeTakeFirst();
  return row?.session_id;
}

/** Reader events of a site, as received. */
export async function insertEvents(db: Db, rows: Insertable<Database['site_events']>[]): Promise<void> {
  if (rows.length) await db.insertInto('site_events').values(rows).execute();
}

/** A reader's session continues while their events are less than this apart. */
const SESSION_GAP_MS = 30 * 60_000;

/** A reader of a site, as its events store them: keyed hashes, counted and never shown. */
export interface ReaderIdentity {
  visitorId: string;
  sessionId: string;
}

/**
 * Who reads Folio's own pages, for counting, with nothing stored on the reader's device (no
 * cookie, no storage): the visitor is a keyed hash of the site, the reader's address and user
 * agent and the day (UTC), so it holds for a day's reading and links nothing across sites or days;
 * the session is the visitor's last one while their events are less than 30 minutes apart, else a
 * new one. A reader who asks not to be tracked (`DNT: 1`, `Sec-GPC: 1`) gets ids of their own
 * for each request: what they send explicitly (a rating) is counted, and linked to nothing.
 */
export async function readerIdentity(
  services: Pick<Services, 'db' | 'signingKey' | 'now'>,
  site: { id: string; organization_id: string },
  reader: { ip: string; userAgent: string; optOut: boolean },
): Promise<ReaderIdentity> {
  const now = services.now();
  if (reader.optOut) {
    const id = eventId(services, site.id, `opt-out|${randomUUID()}`);
    return { visitorId: id, sessionId: id };
  }
  const day = new Date(now).toISOString().slice(0, 10);
  const visitorId = eventId(services, site.id, `reader|${reader.ip}|${reader.userAgent.slice(0, 512)}|${day}`);
  const current = await recentSessionOf(services.db, site.organization_id, site.id, visitorId, new Date(now - SESSION_GAP_MS));
  return { visitorId, sessionId: current ?? eventId(services, site.id, `session|${visitorId}|${now}`) };
}

/** Whether a request asks not to be tracked: `DNT: 1` or Global Privacy Control (`Sec-GPC: 1`). */
export const optsOut = (headers: Record<string, string | string[] | undefined>) => headers.dnt === '1' || headers['sec-gpc'] === '1';

/** An event of Folio's own pages, its page resolved by the site for its reader. */
export interface ReaderEvent {
  type: 'page_view' | 'search_type_query' | 'page_post_feedback';
  url: URL;
  siteSectionId: string | null;
  siteSpaceId: string | null;
  spaceId: string | null;
  pageId: string | null;
  query?: string | undefined;
  rating?: 'bad' | 'ok' | 'good' | undefined;
}

/** Records what a reader of Folio's own pages did, at the server's time. */
export async function recordReaderEvents(services: Pick<Services, 'db' | 'now'>, site: { id: string; organization_id: string }, who: ReaderIdentity, events: ReaderEvent[]): Promise<void> {
  const at = new Date(services.now());
  await insertEvents(
    services.db,
    events.map((e) => ({
      organization_id: site.organization_id,
      site_id: site.id,
      type: e.type,
      // Neither the query string nor the fragment: only the page's address.
      url: `${e.url.origin}${e.url.pathname}`,
      url_path: e.url.pathname,
      display_context: 'site',
      site_section_id: e.siteSectionId,
      site_space_id: e.siteSpaceId,
      share_key: null,
      space_id: e.spaceId,
      page_id: e.pageId,
      query: e.query ?? null,
      feedback_rating: e.type === 'page_post_feedback' ? (e.rating ?? null) : null,
      ask_rating: null,
      visitor_id: who.visitorId,
      session_id: who.sessionId,
      created_at: at,
    })),
  );
}
