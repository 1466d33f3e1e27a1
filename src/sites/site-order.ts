import { sql, type RawBuilder } from 'kysely';
import type { Db } from '../platform/db/database.ts';

/**
 * The order a reader sees a site's structure in, as one sortable text key per item, so the flat
 * listings (sections, section groups, site spaces) page through the site in that order with a
 * keyset cursor rather than in creation order.
 *
 * An item's key is the fractional positions of its ancestors and itself joined by a space: the
 * positions use only digits and letters, which all sort after a space in the "C" collation, so a
 * group sorts before everything inside it and everything inside it before its next sibling (a
 * depth-first, pre-order walk of the structure). Groups nest at most a few levels, so the
 * recursive walk is short.
 */

/** The recursive query giving every section group of a site its key (`group_order(id, key)`). */
function withGroupOrder(db: Db, siteId: string) {
  return db.withRecursive('group_order(id, key)', (qb) =>
    qb
      .selectFrom('site_section_groups')
      .select(['id', sql<string>`position`.as('key')])
      .where('site_id', '=', siteId)
      .where('parent_id', 'is', null)
      .unionAll((qb2) =>
        qb2
          .selectFrom('site_section_groups as child')
          .innerJoin('group_order as parent', 'parent.id', 'child.parent_id')
          .select(['child.id', sql<string>`parent.key || ' ' || child.position`.as('key')]),
      ),
  );
}

const sectionKey = sql<string>`(coalesce(sg.key || ' ', '') || s.position) COLLATE "C"`;

/** The sections of a site with their key (`site_order`), for paging in the site's order. */
export function sectionsInSiteOrder(db: Db, siteId: string) {
  return {
    query: withGroupOrder(db, siteId)
      .selectFrom('site_sections as s')
      .leftJoin('group_order as sg', 'sg.id', 's.group_id')
      .selectAll('s')
      .select(sectionKey.as('site_order'))
      .where('s.site_id', '=', siteId),
    key: sectionKey,
    seq: sql.ref('s.seq'),
  };
}

const groupKey = sql<string>`g_order.key COLLATE "C"`;

/** The section groups of a site with their key (`site_order`). */
export function groupsInSiteOrder(db: Db, siteId: string) {
  return {
    query: withGroupOrder(db, siteId)
      .selectFrom('site_section_groups as g')
      .innerJoin('group_order as g_order', 'g_order.id', 'g.id')
      .selectAll('g')
      .select(groupKey.as('site_order'))
      .where('g.site_id', '=', siteId),
    key: groupKey,
    seq: sql.ref('g.seq'),
  };
}

// A site space at the root (a site without sections) is ordered by its own position; one in a
// section after its section's key.
const siteSpaceKey: RawBuilder<string> = sql<string>`(CASE WHEN ss.section_id IS NULL THEN ss.position
  ELSE coalesce(sg.key || ' ', '') || s.position || ' ' || ss.position END) COLLATE "C"`;

/** The site spaces of a site with their key (`site_order`). */
export function siteSpacesInSiteOrder(db: Db, siteId: string) {
  return {
    query: withGroupOrder(db, siteId)
      .selectFrom('site_spaces as ss')
      .leftJoin('site_sections as s', 's.id', 'ss.section_id')
      .leftJoin('group_order as sg', 'sg.id', 's.group_id')
      .selectAll('ss')
      .select(siteSpaceKey.as('site_order'))
      .where('ss.site_id', '=', siteId),
    key: siteSpaceKey,
    seq: sql.ref('ss.seq'),
  };
}
