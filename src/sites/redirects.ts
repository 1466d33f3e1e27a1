import type { Ctx } from '../platform/context.ts';
import type { Db } from '../platform/db/database.ts';
import type { SiteRedirectRow, SiteRow } from '../platform/db/schema.ts';
import { BadRequestError, ConflictError, isUniqueViolation, NotFoundError } from '../platform/errors.ts';
import type { Urls } from '../platform/urls.ts';
import { ContentReader } from '../content/model.ts';
import { readableSite, requireSite } from './access.ts';
import { presentRedirect, siteBaseUrl, siteSpacePath } from './presenter.ts';
import * as store from './store-redirects.ts';
import { firstSiteSpaceOf, findSection, findSiteSpace } from './store-structure.ts';
import { spaceRoot } from './store.ts';
import type {
  BulkRedirectItemInput,
  CreateRedirectInput,
  RedirectDestinationValue,
  RedirectInputDestinationValue,
  UpdateRedirectInput,
} from './schemas.ts';

/**
 * Redirects of a site: a source path (exact, or a prefix ending in `*`) to a section, a site space,
 * a page of a site space, or an external URL. Destinations inside the site are checked when they
 * are written, so a lookup always finds something to point at (or the thing was deleted since).
 */

async function pageOfSpace(db: Db, site: SiteRow, spaceId: string) {
  return new ContentReader(db, await spaceRoot(db, site.organization_id, spaceId));
}

/** Checks a destination against the site and turns a `path` destination into a page destination. */
async function resolveDestination(db: Db, site: SiteRow, dest: RedirectInputDestinationValue, field: string): Promise<RedirectDestinationValue> {
  const siteSpace = async (id: string, f: string) => {
    const row = await findSiteSpace(db, site.organization_id, site.id, id);
    if (!row) throw new BadRequestError(`${field}.${f}: site space ${id} is not part of this site`);
    return row;
  };
  switch (dest.kind) {
    case 'external':
      return dest;
    case 'site-section': {
      const row = await findSection(db, site.organization_id, site.id, dest.siteSectionId);
      if (!row) throw new BadRequestError(`${field}.siteSectionId: section ${dest.siteSectionId} is not part of this site`);
      return dest;
    }
    case 'site-space':
      await siteSpace(dest.siteSpaceId, 'siteSpaceId');
      return dest;
    case 'site-page': {
      const ss = await siteSpace(dest.siteSpaceId, 'siteSpaceId');
      if (!(await (await pageOfSpace(db, site, ss.space_id)).page(dest.pageId))) {
        throw new BadRequestError(`${field}.pageId: page ${dest.pageId} not found in the space of site space ${ss.id}`);
      }
      return dest;
    }
    case 'path': {
      const ss = await firstSiteSpaceOf(db, site.organization_id, site.id, dest.spaceId);
      if (!ss) throw new BadRequestError(`${field}.spaceId: space ${dest.spaceId} is not part of this site`);
      const page = await (await pageOfSpace(db, site, dest.spaceId)).byPath(dest.path.replace(/^\/+|\/+$/g, ''));
      if (!page) throw new BadRequestError(`${field}.path: no page at "${dest.path}" in space ${dest.spaceId}`);
      return { kind: 'site-page', siteSpaceId: ss.id, pageId: page.id };
    }
  }
}

function conflict(source: string, draft: boolean) {
  return new ConflictError(`source: a ${draft ? 'draft' : 'live'} redirect from "${source}" already exists on this site`);
}

export async function createRedirect(ctx: Ctx, organizationId: string, siteId: string, input: CreateRedirectInput) {
  const { site } = await requireSite(ctx, organizationId, siteId, 'create', 'manage the redirects of the site');
  const destination = await resolveDestination(ctx.db, site, input.destination, 'destination');
  try {
    const row = await store.insertRedirect(ctx.db, site.organization_id, site.id, {
      source: input.source,
      draft: input.draft ?? false,
      capture_wildcard: input.captureWildcard ?? false,
      permanent: input.permanent ?? false,
      destination,
    });
    return presentRedirect(row);
  } catch (err) {
    if (isUniqueViolation(err)) throw conflict(input.source, input.draft ?? false);
    throw err;
  }
}

export async function updateRedirect(ctx: Ctx, organizationId: string, siteId: string, redirectId: string, input: UpdateRedirectInput) {
  const { site } = await requireSite(ctx, organizationId, siteId, 'create', 'manage the redirects of the site');
  const destination = input.destination ? await resolveDestination(ctx.db, site, input.destination, 'destination') : undefined;
  try {
    const row = await store.updateRedirect(ctx.db, site.organization_id, site.id, redirectId, {
      source: input.source,
      draft: input.draft,
      capture_wildcard: input.captureWildcard,
      permanent: input.permanent,
      destination,
    });
    if (!row) throw new NotFoundError('Site redirect');
    return presentRedirect(row);
  } catch (err) {
    if (isUniqueViolation(err)) throw conflict(input.source ?? '(its source)', input.draft ?? false);
    throw err;
  }
}

export async function deleteRedirect(ctx: Ctx, organizationId: string, siteId: string, redirectId: string) {
  const { site } = await requireSite(ctx, organizationId, siteId, 'create', 'manage the redirects of the site');
  await store.deleteRedirect(ctx.db, site.organization_id, site.id, redirectId);
}

export async function listRedirects(
  ctx: Ctx,
  organizationId: string,
  siteId: string,
  query: { page?: string | undefined; limit?: number | undefined; search?: string | undefined; draft?: boolean | undefined; orderBy?: 'createdAt' | 'updatedAt' | 'source' | undefined },
) {
  const { site } = await requireSite(ctx, organizationId, siteId, 'read', 'read the redirects of the site');
  const page = await store.pageRedirects(ctx.db, site.organization_id, site.id, query, query);
  return { ...page, items: page.items.map(presentRedirect) };
}

type BulkResult = { status: 'created' | 'updated' | 'deleted' | 'published'; source: string; draft: boolean; id?: string };

/** Creates, updates, deletes and publishes many redirects in one transaction: all or nothing. */
export async function bulkUpsertRedirects(ctx: Ctx, organizationId: string, siteId: string, items: BulkRedirectItemInput[]) {
  const { site } = await requireSite(ctx, organizationId, siteId, 'create', 'manage the redirects of the site');
  const seen = new Set<string>();
  const destinations: (RedirectDestinationValue | null | undefined)[] = [];
  for (const [i, item] of items.entries()) {
    const intent = item.intent ?? 'live';
    const key = `${intent === 'draft'}:${item.source}`;
    if (seen.has(key)) throw new BadRequestError(`redirects[${i}]: "${item.source}" appears twice for the same intent; send each source once`);
    seen.add(key);
    if (intent !== 'publish' && item.destination === undefined) {
      throw new BadRequestError(`redirects[${i}].destination: required (null deletes the redirect) unless intent is "publish"`);
    }
    destinations.push(item.destination ? await resolveDestination(ctx.db, site, item.destination, `redirects[${i}].destination`) : item.destination);
  }
  const now = new Date();
  const results = await ctx.db.transaction().execute(async (trx) => {
    const out: BulkResult[] = [];
    for (const [i, item] of items.entries()) {
      const intent = item.intent ?? 'live';
      if (intent === 'publish') {
        const draft = await store.deleteRedirectFrom(trx, site.organization_id, site.id, item.source, true);
        if (!draft) throw new BadRequestError(`redirects[${i}]: there is no draft redirect from "${item.source}" to publish`);
        const live = await store.upsertRedirect(trx, site.organization_id, site.id, { ...draft, draft: false, destination: draft.destination as RedirectDestinationValue }, now);
        out.push({ status: 'published', source: item.source, draft: false, id: live.row.id });
        continue;
      }
      const draft = intent === 'draft';
      const destination = destinations[i];
      if (destination === null) {
        const gone = await store.deleteRedirectFrom(trx, site.organization_id, site.id, item.source, draft);
        if (gone) out.push({ status: 'deleted', source: item.source, draft });
        continue;
      }
      const { row, created } = await store.upsertRedirect(
        trx,
        site.organization_id,
        site.id,
        { source: item.source, draft, capture_wildcard: item.captureWildcard ?? false, permanent: item.permanent ?? false, destination: destination! },
        now,
      );
      out.push({ status: created ? 'created' : 'updated', source: item.source, draft, id: row.id });
    }
    return out;
  });
  return { results };
}

/**
 * The live redirect that applies to a path: an exact source first, else the longest wildcard
 * source whose prefix the path starts with.
 */
export async function matchRedirect(db: Db, site: SiteRow, path: string): Promise<{ row: SiteRedirectRow; suffix: string } | undefined> {
  const row = await store.matchingRedirect(db, site.organization_id, site.id, path);
  if (!row) return undefined;
  const suffix = row.source === path ? '' : path.slice(row.source.length - 1).replace(/^\//, '');
  return { row, suffix };
}

/** The URL a redirect leads to, or undefined when its destination was removed from the site since. */
export async function redirectTarget(ctx: { db: Db; urls: Urls }, site: SiteRow, row: SiteRedirectRow, suffix: string): Promise<string | undefined> {
  const dest = row.destination as RedirectDestinationValue;
  const tail = row.capture_wildcard && suffix ? suffix : '';
  if (dest.kind === 'external') return tail ? `${dest.url.replace(/\/?$/, '/')}${tail}` : dest.url;
  const base = siteBaseUrl(ctx.urls, site);
  if (dest.kind === 'site-section') {
    const s = await findSection(ctx.db, site.organization_id, site.id, dest.siteSectionId);
    return s ? `${base}${s.is_default ? '' : `${s.path}/`}${tail}` : undefined;
  }
  const ss = await findSiteSpace(ctx.db, site.organization_id, site.id, dest.siteSpaceId);
  if (!ss) return undefined;
  const section = ss.section_id ? await findSection(ctx.db, site.organization_id, site.id, ss.section_id) : undefined;
  let url = base + siteSpacePath(ss, section);
  if (dest.kind === 'site-page') {
    const reader = await pageOfSpace(ctx.db, site, ss.space_id);
    const page = await reader.page(dest.pageId);
    if (!page) return undefined;
    url += await reader.path(page);
  }
  return url + (tail ? (url.endsWith('/') ? '' : '/') + tail : '');
}

export async function redirectBySource(ctx: Ctx, organizationId: string, siteId: string, source: string, shareKey?: string) {
  const { site } = await readableSite(ctx, organizationId, siteId, shareKey);
  const match = await matchRedirect(ctx.db, site, source);
  const target = match && (await redirectTarget(ctx, site, match.row, match.suffix));
  if (!match || !target) throw new NotFoundError('Redirect');
  return { redirect: presentRedirect(match.row), target };
}
