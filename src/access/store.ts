import { sql, type Expression, type SqlBool } from 'kysely';
import type { Db, Prepared } from '../platform/db/database.ts';
import type { CollectionRow, DefaultLevel, OrganizationRow, Role, RoleOrGuest } from '../platform/db/schema.ts';

/**
 * The SQL of access: memberships, collection ancestries and grants on content (`content_permissions`),
 * read to decide what a caller may do. Every query names the organization, except the lookup of a
 * collection by id that tells which organization it belongs to.
 */

/** A value or a column reference (for correlated subqueries). */
export type SqlValue = string | Expression<string>;

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
export async function enabledMembership(
  db: Db,
  organizationId: string,
  userId: string,
): Promise<{ role: RoleOrGuest; owns_team: unknown } | undefined> {
  return db
    .selectFrom('members')
    .select((eb) => ['members.role', eb.exists(ownsTeam(db)).as('owns_team')])
    .where('members.organization_id', '=', organizationId)
    .where('members.user_id', '=', userId)
    .where('members.disabled', '=', false)
    .executeTakeFirst();
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
