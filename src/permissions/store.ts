import { sql, type RawBuilder } from 'kysely';
import type { Db } from '../platform/db/database.ts';
import type { DefaultLevel, Role, RoleOrGuest } from '../platform/db/schema.ts';
import { paginate, type PageRequest } from '../platform/paging.ts';
import { membersOf } from '../members/store.ts';
import { teamsOf } from '../teams/store.ts';

/** The SQL of grants on spaces and collections (`content_permissions`), each in one organization. */

export type TargetType = 'space' | 'collection';

export interface Principal {
  principal_type: 'user' | 'team';
  principal_id: string;
}

/** Which of the teams belong to the organization. */
export async function teamIdsAmong(db: Db, organizationId: string, teamIds: string[]): Promise<Set<string>> {
  const found = await db.selectFrom('teams').select('id').where('organization_id', '=', organizationId).where('id', 'in', teamIds).execute();
  return new Set(found.map((r) => r.id));
}

export async function teamExists(db: Db, organizationId: string, teamId: string): Promise<boolean> {
  const team = await db.selectFrom('teams').select('id').where('organization_id', '=', organizationId).where('id', '=', teamId).executeTakeFirst();
  return !!team;
}

/** Sets the principals' role on the content; role null removes their grants. */
export async function setGrants(
  db: Db,
  organizationId: string,
  target: { type: TargetType; id: string },
  principals: Principal[],
  role: RoleOrGuest,
): Promise<void> {
  for (const p of principals) {
    if (role === null) {
      await deleteGrant(db, organizationId, target, p);
    } else {
      await db
        .insertInto('content_permissions')
        .values({ organization_id: organizationId, target_type: target.type, target_id: target.id, ...p, role, created_at: new Date() })
        .onConflict((oc) => oc.columns(['target_type', 'target_id', 'principal_type', 'principal_id']).doUpdateSet({ role: role as Role }))
        .execute();
    }
  }
}

export async function deleteGrant(db: Db, organizationId: string, target: { type: TargetType; id: string }, principal: Principal): Promise<void> {
  await db
    .deleteFrom('content_permissions')
    .where('organization_id', '=', organizationId)
    .where('target_type', '=', target.type)
    .where('target_id', '=', target.id)
    .where('principal_type', '=', principal.principal_type)
    .where('principal_id', '=', principal.principal_id)
    .execute();
}

/** A page of the members granted a role directly on the content, with that role. */
export async function userGrants(db: Db, organizationId: string, target: { type: TargetType; id: string }, page: PageRequest) {
  const base = membersOf(db, organizationId)
    .innerJoin('content_permissions as cp', (join) =>
      join
        .onRef('cp.principal_id', '=', 'members.user_id')
        .on('cp.principal_type', '=', 'user')
        .on('cp.target_type', '=', target.type)
        .on('cp.target_id', '=', target.id),
    )
    .select('cp.role as permission');
  return paginate(base, { kind: `grants-users:${target.type}`, sortExpr: null, seqExpr: sql.ref('members.seq'), direction: 'asc' }, page);
}

/** A page of the teams granted a role on the content, with that role (team views as `viewerId` sees them). */
export async function teamGrants(db: Db, organizationId: string, viewerId: string, target: { type: TargetType; id: string }, page: PageRequest) {
  const base = teamsOf(db, organizationId, viewerId)
    .innerJoin('content_permissions as cp', (join) =>
      join.onRef('cp.principal_id', '=', 'teams.id').on('cp.principal_type', '=', 'team').on('cp.target_type', '=', target.type).on('cp.target_id', '=', target.id),
    )
    .select('cp.role as permission');
  return paginate(base, { kind: `grants-teams:${target.type}`, sortExpr: null, seqExpr: sql.ref('teams.seq'), direction: 'asc' }, page);
}

/** The parent collection and default level of a space or collection. */
export async function levelOf(db: Db, organizationId: string, target: { type: TargetType; id: string }): Promise<{ parent_id: string | null; default_level: DefaultLevel }> {
  return target.type === 'space'
    ? db.selectFrom('spaces').select(['parent_id', 'default_level']).where('organization_id', '=', organizationId).where('id', '=', target.id).executeTakeFirstOrThrow()
    : db.selectFrom('collections').select(['parent_id', 'default_level']).where('organization_id', '=', organizationId).where('id', '=', target.id).executeTakeFirstOrThrow();
}

/**
 * A page of the enabled members whose rank (an SQL expression on `members`, see memberRankOn) is
 * above 0, or equals `exactRank` when given.
 */
export async function membersRanked(db: Db, organizationId: string, type: TargetType, rank: RawBuilder<number>, exactRank: number | undefined, page: PageRequest) {
  let base = membersOf(db, organizationId).where('members.disabled', '=', false).select(rank.as('rank'));
  base = exactRank !== undefined ? base.where(rank, '=', exactRank) : base.where(rank, '>', 0);
  return paginate(base, { kind: `grants-aggregate:${type}`, sortExpr: null, seqExpr: sql.ref('members.seq'), direction: 'asc' }, page);
}
