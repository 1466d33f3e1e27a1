import { sql } from 'kysely';
import { json, type Db } from '../platform/db/database.ts';
import type { SiteRedirectRow } from '../platform/db/schema.ts';
import { newId } from '../platform/ids.ts';
import { paginate, type PageRequest } from '../platform/paging.ts';
import type { RedirectDestinationValue } from './schemas.ts';

/** The SQL of a site's redirects: every function takes the organization id and the site id. */

export interface RedirectValues {
  source: string;
  draft: boolean;
  capture_wildcard: boolean;
  permanent: boolean;
  destination: RedirectDestinationValue;
}

export async function insertRedirect(db: Db, organizationId: string, siteId: string, r: RedirectValues, now = new Date()): Promise<SiteRedirectRow> {
  return db
    .insertInto('site_redirects')
    .values({
      id: newId(),
      organization_id: organizationId,
      site_id: siteId,
      source: r.source,
      draft: r.draft,
      capture_wildcard: r.capture_wildcard,
      permanent: r.permanent,
      destination: json(r.destination),
      created_at: now,
      updated_at: null,
    })
    .returningAll()
    .executeTakeFirstOrThrow();
}

export async function updateRedirect(
  db: Db,
  organizationId: string,
  siteId: string,
  redirectId: string,
  changes: Partial<RedirectValues>,
  now = new Date(),
): Promise<SiteRedirectRow | undefined> {
  return db
    .updateTable('site_redirects')
    .set({
      ...(changes.source !== undefined ? { source: changes.source } : {}),
      ...(changes.draft !== undefined ? { draft: changes.draft } : {}),
      ...(changes.capture_wildcard !== undefined ? { capture_wildcard: changes.capture_wildcard } : {}),
      ...(changes.permanent !== undefined ? { permanent: changes.permanent } : {}),
      ...(changes.destination ? { destination: json(changes.destination) } : {}),
      updated_at: now,
    })
    .where('organization_id', '=', organizationId)
    .where('site_id', '=', siteId)
    .where('id', '=', redirectId)
    .returningAll()
    .executeTakeFirst();
}

export async function deleteRedirect(db: Db, organizationId: string, siteId: string, redirectId: string): Promise<void> {
  await db.deleteFrom('site_redirects').where('organization_id', '=', organizationId).where('site_id', '=', siteId).where('id', '=', redirectId).execute();
}

/** Deletes the draft or live redirect from `source`, returning it (undefined: there was none). */
export async function deleteRedirectFrom(db: Db, organizationId: string, siteId: string, source: string, draft: boolean): Promise<SiteRedirectRow | undefined> {
  return db
    .deleteFrom('site_redirects')
    .where('organization_id', '=', organizationId)
    .where('site_id', '=', siteId)
    .where('draft', '=', draft)
    .where('source', '=', source)
    .returningAll()
    .executeTakeFirst();
}

export interface RedirectFilters {
  search?: string | undefined;
  draft?: boolean | undefined;
  orderBy?: 'createdAt' | 'updatedAt' | 'source' | undefined;
}

/** A page of the live (or draft) redirects of a site, by creation (default), update or source. */
export async function pageRedirects(db: Db, organizationId: string, siteId: string, filters: RedirectFilters, page: PageRequest) {
  let base = db.selectFrom('site_redirects').selectAll().where('organization_id', '=', organizationId).where('site_id', '=', siteId).where('draft', '=', filters.draft ?? false);
  if (filters.search) base = base.where(sql<boolean>`strpos(lower(source), lower(${filters.search})) > 0`);
  const orderBy = filters.orderBy ?? 'createdAt';
  const kind = `redirects:${orderBy}:${filters.draft ?? false}:${filters.search ?? ''}`;
  return orderBy === 'source'
    ? paginate(base, { kind, sortExpr: sql.ref('source'), sortType: 'text', seqExpr: sql.ref('seq'), direction: 'asc' }, page, (r) => r.source)
    : orderBy === 'updatedAt'
      ? paginate(base, { kind, sortExpr: sql`coalesce(updated_at, created_at)`, sortType: 'timestamp', seqExpr: sql.ref('seq'), direction: 'desc' }, page, (r) => (r.updated_at ?? r.created_at) as unknown as string)
      : paginate(base, { kind, sortExpr: sql.ref('created_at'), sortType: 'timestamp', seqExpr: sql.ref('seq'), direction: 'desc' }, page, (r) => r.created_at as unknown as string);
}

/** Creates the redirect from its source (draft or live), or updates the one there, locked meanwhile. */
export async function upsertRedirect(trx: Db, organizationId: string, siteId: string, r: RedirectValues, now: Date): Promise<{ row: SiteRedirectRow; created: boolean }> {
  const existing = await trx
    .selectFrom('site_redirects')
    .select('id')
    .where('organization_id', '=', organizationId)
    .where('site_id', '=', siteId)
    .where('draft', '=', r.draft)
    .where('source', '=', r.source)
    .forUpdate()
    .executeTakeFirst();
  if (existing) {
    const row = await trx
      .updateTable('site_redirects')
      .set({ capture_wildcard: r.capture_wildcard, permanent: r.permanent, destination: json(r.destination), updated_at: now })
      .where('organization_id', '=', organizationId)
      .where('id', '=', existing.id)
      .returningAll()
      .executeTakeFirstOrThrow();
    return { row, created: false };
  }
  return { row: await insertRedirect(trx, organizationId, siteId, r, now), created: true };
}

/**
 * The live redirect that applies to a path: an exact source first, else the longest wildcard
 * source whose prefix the path starts with.
 */
export async function matchingRedirect(db: Db, organizationId: string, siteId: string, path: string): Promise<SiteRedirectRow | undefined> {
  return db
    .selectFrom('site_redirects')
    .selectAll()
    .where('organization_id', '=', organizationId)
    .where('site_id', '=', siteId)
    .where('draft', '=', false)
    .where((eb) => eb.or([eb('source', '=', path), sql<boolean>`(right(source, 1) = '*' AND starts_with(${path}, left(source, -1)))`]))
    .orderBy(sql`source = ${path}`, 'desc')
    .orderBy(sql`length(source)`, 'desc')
    .limit(1)
    .executeTakeFirst();
}
