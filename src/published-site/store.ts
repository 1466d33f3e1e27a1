import { sql } from 'kysely';
import type { Db } from '../platform/db/database.ts';
import type { SiteRow, SiteSectionRow, SiteSpaceRow, SpaceRow } from '../platform/db/schema.ts';
import type { SiteStructure } from './published.ts';

/**
 * The SQL of the published sites. A visitor's request names no organization id but an address, so
 * these lookups find the organization (by its id or hostname, or the site's hostname) rather than
 * take it; every read after them goes through the site row they return.
 */

const dates = <T extends Record<string, unknown>>(row: T, fields: string[]): T => {
  const out: Record<string, unknown> = { ...row };
  for (const f of fields) if (typeof out[f] === 'string') out[f] = new Date(out[f] as string);
  return out as T;
};

/**
 * A published site with its structure, found by organization (id or hostname) and basename, in
 * one query: a page served from the cache costs this query and nothing else.
 */
export async function publishedSiteAt(db: Db, orgKey: string, basename: string): Promise<{ site: SiteRow; structure: SiteStructure } | undefined> {
  const { rows } = await sql<{ site: SiteRow; sections: SiteSectionRow[]; site_spaces: { row: SiteSpaceRow; space: SpaceRow; root: string }[] }>`
    SELECT to_jsonb(s) AS site,
      (SELECT coalesce(jsonb_agg(to_jsonb(x) ORDER BY x.position, x.id), '[]') FROM site_sections x WHERE x.site_id = s.id) AS sections,
      (SELECT coalesce(jsonb_agg(jsonb_build_object('row', to_jsonb(ss), 'space', to_jsonb(sp), 'root', r.root) ORDER BY ss.position, ss.id), '[]')
         FROM site_spaces ss
         JOIN spaces sp ON sp.id = ss.space_id AND sp.deleted_at IS NULL
         JOIN revisions r ON r.id = sp.revision_id
        WHERE ss.site_id = s.id) AS site_spaces
    FROM sites s JOIN organizations o ON o.id = s.organization_id
    WHERE (o.id = ${orgKey} OR o.hostname = ${orgKey}) AND s.basename = ${basename} AND s.published
    LIMIT 1`.execute(db);
  const found = rows[0];
  if (!found) return undefined;
  return {
    site: dates(found.site, ['created_at', 'updated_at', 'customization_updated_at', 'adaptive_schema_updated_at']),
    structure: {
      sections: found.sections.map((s) => dates(s, ['created_at'])),
      siteSpaces: found.site_spaces.map((s) => ({ ...dates(s.row, ['created_at', 'customization_updated_at']), space: s.space, root: s.root })),
    },
  };
}

/** The custom hostnames of every published site, with the organization and basename they lead to. */
export async function publishedHostnames(db: Db): Promise<{ hostname: string; organization_id: string; basename: string }[]> {
  const rows = await db
    .selectFrom('sites')
    .select(['hostname', 'organization_id', 'basename'])
    .where('hostname', 'is not', null)
    .where('published', '=', true)
    .execute();
  return rows.map((r) => ({ ...r, hostname: r.hostname! }));
}
