import { sql, type Expression, type RawBuilder, type SqlBool } from 'kysely';
import type { Db, Prepared } from '../platform/db/database.ts';
import type { CollectionRow, DefaultLevel, OrganizationRow, Role, RoleOrGuest } from '../platform/db/schema.ts';
import type { Membership } from '../platform/policy.ts';

/**
 * The SQL of access: memberships, collection ancestries and grants on content (`content_permissions`),
 * read to decide what a caller may do, and the removal of the grants of a member who leaves or a
 * team deleted. Every query names the organization, except the lookup of a collection by id that
 * tells which organization it belongs to.
 */

/** A value or a column reference (for correlated subqueries). */
type SqlValue = string | Expression<string>;

/** SQL condition: a content_permissions row (aliased cp) is granted to the user or one of their teams. */
export function grantedTo(userId: SqlValue, organizationId: SqlValue): Expression<SqlBool> {
  return sql<SqlBool>`(
    (cp.principal_type = 'user' AND cp.principal_id = ${userId})
    OR (cp.principal_type = 'team' AND cp.principal_id IN (
      SELECT tm.team_id FROM team_members tm WHERE tm.organization_id = ${organizationId} AND tm.user_id = ${userId}))
  )`;
}

/** A collection by id, in any organization (the caller then checks the organization and the role). */
export async function findCollection(db: Db, collectionId: string): Promise<CollectionRow | undefined> {
  return db.selectFrom('collections').selectAll().where('id', '=', collectionId).executeTakeFirst();
}

/** The role of an enabled member (null: guest), undefined for a non-member; no SSO check (see `orgRoleOf`). */
export async function memberRole(db: Db, organizationId: string, userId: string): Promise<RoleOrGuest | undefined> {
  const row = await db
    .selectFrom('members')
    .select('role')
    .where('organization_id', '=', organizationId)
    .where('user_id', '=', userId)
    .where('disabled', '=', false)
    .executeTakeFirst();
  return row ? row.role : undefined;
}

/** Subquery: the member (row of `members` in the outer query) owns a team of the organization. */
const ownsTeam = (db: Db) =>
  db
    .selectFrom('team_members')
    .select(sql`1`.as('one'))
    .where(sql<boolean>`team_members.organization_id = members.organization_id`)
    .where(sql<boolean>`team_members.user_id = members.user_id`)
    .where('team_members.role', '=', 'owner');

/** An enabled member's role and whether they own a team; undefined for a non-member. */
export async function enabledMembership(db: Db, organizationId: string, userId: string): Promise<Membership | undefined> {
  const row = await db
    .selectFrom('members')
    .select((eb) => ['members.role', eb.exists(ownsTeam(db)).as('owns_team')])
    .where('members.organization_id', '=', organizationId)
    .where('members.user_id', '=', userId)
    .where('members.disabled', '=', false)
    .executeTakeFirst();
  return row && { role: row.role, ownsTeam: !!row.owns_team };
}

/**
 * The organization and an enabled member's role in it, in one query (undefined for non-members). It
 * is a prepared statement because it runs on nearly every request: building and planning it each
 * time cost more than answering it.
 */
export async function organizationWithMembership(
  prepared: Prepared,
  organizationId: string,
  userId: string,
): Promise<(OrganizationRow & { member_role: RoleOrGuest; owns_team: boolean }) | undefined> {
  const rows = await prepared<OrganizationRow & { member_role: RoleOrGuest; owns_team: boolean }>(
    'folio_org_membership',
    `SELECT o.*, m.role AS member_role, EXISTS (
       SELECT 1 FROM team_members tm
       WHERE tm.organization_id = m.organization_id AND tm.user_id = m.user_id AND tm.role = 'owner'
     ) AS owns_team
     FROM organizations o JOIN members m ON m.organization_id = o.id
     WHERE o.id = $1 AND m.user_id = $2 AND NOT m.disabled`,
    [organizationId, userId],
  );
  return rows[0];
}

/** Which of the users are members of the organization. */
export async function memberIdsAmong(db: Db, organizationId: string, userIds: string[]): Promise<Set<string>> {
  const found = await db.selectFrom('members').select('user_id').where('organization_id', '=', organizationId).where('user_id', 'in', userIds).execute();
  return new Set(found.map((r) => r.user_id));
}

export interface ChainLink {
  start_id: string;
  id: string;
  default_level: DefaultLevel;
  depth: number;
}

/** For each starting collection, itself and its ancestors, ordered by start and nearest first. */
export async function collectionChainLinks(db: Db, organizationId: string, startIds: string[]): Promise<ChainLink[]> {
  const rows = await sql<ChainLink>`
    WITH RECURSIVE chain(start_id, id, parent_id, default_level, depth) AS (
      SELECT c.id, c.id, c.parent_id, c.default_level, 0
      FROM collections c WHERE c.organization_id = ${organizationId} AND c.id IN (${sql.join(startIds)})
      UNION ALL
      SELECT chain.start_id, p.id, p.parent_id, p.default_level, chain.depth + 1
      FROM collections p JOIN chain ON p.id = chain.parent_id
      WHERE chain.depth < 100
    )
    SELECT start_id, id, default_level, depth FROM chain ORDER BY start_id, depth`.execute(db);
  return rows.rows;
}

/** Grants to the user or one of their teams on the spaces and collections (at least one id given). */
export async function grantsTo(
  db: Db,
  organizationId: string,
  userId: string,
  spaceIds: string[],
  collectionIds: string[],
): Promise<{ target_type: string; target_id: string; role: Role }[]> {
  const targets: Expression<SqlBool>[] = [];
  if (spaceIds.length) targets.push(sql<SqlBool>`(cp.target_type = 'space' AND cp.target_id IN (${sql.join(spaceIds)}))`);
  if (collectionIds.length) {
    targets.push(sql<SqlBool>`(cp.target_type = 'collection' AND cp.target_id IN (${sql.join(collectionIds)}))`);
  }
  const rows = await sql<{ target_type: string; target_id: string; role: Role }>`
    SELECT cp.target_type, cp.target_id, cp.role FROM content_permissions cp
    WHERE cp.organization_id = ${organizationId} AND (${sql.join(targets, sql` OR `)}) AND ${grantedTo(userId, organizationId)}`.execute(db);
  return rows.rows;
}

/**
 * SQL condition on `spaces` rows (table alias `spaces`) listing the spaces a guest was granted,
 * directly, through a team, or through a collection above the space.
 */
export function guestVisibleSpaces(organizationId: SqlValue, userId: SqlValue): Expression<SqlBool> {
  return sql<SqlBool>`(
    spaces.id IN (SELECT cp.target_id FROM content_permissions cp
      WHERE cp.organization_id = ${organizationId} AND cp.target_type = 'space' AND ${grantedTo(userId, organizationId)})
    OR spaces.parent_id IN (
      WITH RECURSIVE granted(id) AS (
        SELECT cp.target_id FROM content_permissions cp
        WHERE cp.organization_id = ${organizationId} AND cp.target_type = 'collection' AND ${grantedTo(userId, organizationId)}
        UNION
        SELECT c.id FROM collections c JOIN granted g ON c.parent_id = g.id
      )
      SELECT id FROM granted)
  )`;
}

/** Same for `collections` rows (alias `collections`): granted collections and everything below them. */
export function guestVisibleCollections(organizationId: string, userId: string): Expression<SqlBool> {
  return sql<SqlBool>`collections.id IN (
    WITH RECURSIVE granted(id) AS (
      SELECT cp.target_id FROM content_permissions cp
      WHERE cp.organization_id = ${organizationId} AND cp.target_type = 'collection' AND ${grantedTo(userId, organizationId)}
      UNION
      SELECT c.id FROM collections c JOIN granted g ON c.parent_id = g.id
    )
    SELECT id FROM granted)`;
}

/** SQL condition on `spaces` rows: spaces a team was granted, directly or through a collection above them. */
export function teamGrantedSpaces(organizationId: SqlValue, teamId: SqlValue): Expression<SqlBool> {
  const team = sql<SqlBool>`cp.principal_type = 'team' AND cp.principal_id = ${teamId}`;
  return sql<SqlBool>`(
    spaces.id IN (SELECT cp.target_id FROM content_permissions cp
      WHERE cp.organization_id = ${organizationId} AND cp.target_type = 'space' AND ${team})
    OR spaces.parent_id IN (
      WITH RECURSIVE granted(id) AS (
        SELECT cp.target_id FROM content_permissions cp
        WHERE cp.organization_id = ${organizationId} AND cp.target_type = 'collection' AND ${team}
        UNION
        SELECT c.id FROM collections c JOIN granted g ON c.parent_id = g.id
      )
      SELECT id FROM granted)
  )`;
}

const RANKED = sql.raw(`ARRAY['read','comment','edit','review','create','admin']`);

/** SQL rank of a role column or value: 0 for none, 1 (read) to 6 (admin). */
function rankOf(role: Expression<unknown> | string | null) {
  return sql<number>`COALESCE(array_position(${RANKED}, ${role}::text), 0)`;
}

/**
 * For listing who can open a space or collection: an SQL expression, on rows of `members`, of the
 * effective role's rank (0: no access), given the content's default level as inherited and the
 * collections above it.
 */
export function memberRankSql(
  organizationId: string,
  target: { type: 'space' | 'collection'; id: string },
  level: RoleOrGuest,
  collectionIds: string[],
): RawBuilder<number> {
  const onTarget = sql<SqlBool>`((cp.target_type = ${target.type} AND cp.target_id = ${target.id})${
    collectionIds.length ? sql` OR (cp.target_type = 'collection' AND cp.target_id IN (${sql.join(collectionIds)}))` : sql``
  })`;
  return sql<number>`GREATEST(
    CASE WHEN members.role IS NOT NULL THEN GREATEST(${rankOf(sql.ref('members.role'))}, ${rankOf(level)}) ELSE 0 END,
    (SELECT COALESCE(max(${rankOf(sql.ref('cp.role'))}), 0) FROM content_permissions cp
      WHERE cp.organization_id = ${organizationId} AND ${onTarget}
        AND ${grantedTo(sql.ref('members.user_id'), organizationId)})
  )`;
}

/**
 * Removes every grant a user or team holds on the organization's spaces and collections: grants
 * name their principal without a foreign key, so they go when a member leaves or a team is deleted.
 */
export async function removeGrantsOf(db: Db, organizationId: string, principal: { type: 'user' | 'team'; id: string }): Promise<void> {
  await db
    .deleteFrom('content_permissions')
    .where('organization_id', '=', organizationId)
    .where('principal_type', '=', principal.type)
    .where('principal_id', '=', principal.id)
    .execute();
}
