import { sql } from 'kysely';
import { requireCollectionRole } from '../access/collections.ts';
import { assertMembers } from '../access/organizations.ts';
import { findMember, membersOf, type MemberView } from '../members/store.ts';
import { requireMembership } from '../access/organizations.ts';
import type { Ctx } from '../platform/context.ts';
import type { Role, RoleOrGuest } from '../platform/db/schema.ts';
import { BadRequestError, NotFoundError } from '../platform/errors.ts';
import { paginate, type PageRequest } from '../platform/paging.ts';
import { requireSpaceRole } from '../spaces/access.ts';
import { teamsOf, type TeamView } from '../teams/store.ts';
import { memberRankOn, RANKS } from '../access/effective.ts';

/**
 * Grants on spaces and collections: who (a user or a team of the organization) holds which role
 * on a piece of content. Reading the grants needs read access to the content; changing them needs
 * admin on it.
 */

export type TargetType = 'space' | 'collection';

interface Target {
  type: TargetType;
  id: string;
  organizationId: string;
}

async function requireTarget(ctx: Ctx, type: TargetType, id: string, min: Role, action: string): Promise<Target> {
  if (type === 'space') {
    const { space } = await requireSpaceRole(ctx, id, min, action);
    return { type, id, organizationId: space.organization_id };
  }
  const { collection } = await requireCollectionRole(ctx, id, min, action);
  return { type, id, organizationId: collection.organization_id };
}

async function assertTeams(ctx: Ctx, organizationId: string, teamIds: string[]) {
  if (teamIds.length === 0) return;
  const found = await ctx.db.selectFrom('teams').select('id').where('organization_id', '=', organizationId).where('id', 'in', teamIds).execute();
  const known = new Set(found.map((r) => r.id));
  const missing = teamIds.filter((t) => !known.has(t));
  if (missing.length) throw new BadRequestError(`teams: ${missing.join(', ')} is not a team of the organization`);
}

/** Sets (or with role null, removes) the grants of users and teams on the content, all at once. */
export async function grant(
  ctx: Ctx,
  type: TargetType,
  id: string,
  input: { role: RoleOrGuest; users?: string[] | undefined; teams?: string[] | undefined },
): Promise<void> {
  const users = [...new Set(input.users ?? [])];
  const teams = [...new Set(input.teams ?? [])];
  if (users.length === 0 && teams.length === 0) throw new BadRequestError('Send at least one of users or teams');
  const target = await requireTarget(ctx, type, id, 'admin', 'change who has access');
  await assertMembers(ctx.db, target.organizationId, users, 'users');
  await assertTeams(ctx, target.organizationId, teams);
  const principals = [
    ...users.map((u) => ({ principal_type: 'user' as const, principal_id: u })),
    ...teams.map((t) => ({ principal_type: 'team' as const, principal_id: t })),
  ];
  await ctx.db.transaction().execute(async (trx) => {
    for (const p of principals) {
      if (input.role === null) {
        await trx
          .deleteFrom('content_permissions')
          .where('target_type', '=', type)
          .where('target_id', '=', id)
          .where('principal_type', '=', p.principal_type)
          .where('principal_id', '=', p.principal_id)
          .execute();
      } else {
        await trx
          .insertInto('content_permissions')
          .values({ organization_id: target.organizationId, target_type: type, target_id: id, ...p, role: input.role, created_at: new Date() })
          .onConflict((oc) => oc.columns(['target_type', 'target_id', 'principal_type', 'principal_id']).doUpdateSet({ role: input.role as Role }))
          .execute();
      }
    }
  });
}

/** Changes one principal's grant; a principal who is not a member (user) or team of the organization is 404. */
export async function setGrant(ctx: Ctx, type: TargetType, id: string, principal: { type: 'user' | 'team'; id: string }, role: RoleOrGuest) {
  const target = await requireTarget(ctx, type, id, 'admin', 'change who has access');
  if (principal.type === 'user' && !(await findMember(ctx.db, target.organizationId, principal.id))) throw new NotFoundError('Member');
  if (principal.type === 'team') {
    const team = await ctx.db.selectFrom('teams').select('id').where('organization_id', '=', target.organizationId).where('id', '=', principal.id).executeTakeFirst();
    if (!team) throw new NotFoundError('Team');
  }
  await grant(ctx, type, id, principal.type === 'user' ? { role, users: [principal.id] } : { role, teams: [principal.id] });
}

export async function removeGrant(ctx: Ctx, type: TargetType, id: string, principal: { type: 'user' | 'team'; id: string }) {
  await requireTarget(ctx, type, id, 'admin', 'change who has access');
  await ctx.db
    .deleteFrom('content_permissions')
    .where('target_type', '=', type)
    .where('target_id', '=', id)
    .where('principal_type', '=', principal.type)
    .where('principal_id', '=', principal.id)
    .execute();
}

/** Users granted a role directly on the content. */
export async function listUserGrants(ctx: Ctx, type: TargetType, id: string, page: PageRequest) {
  const target = await requireTarget(ctx, type, id, 'read', 'see who has access');
  const base = membersOf(ctx.db, target.organizationId)
    .innerJoin('content_permissions as cp', (join) =>
      join
        .onRef('cp.principal_id', '=', 'members.user_id')
        .on('cp.principal_type', '=', 'user')
        .on('cp.target_type', '=', type)
        .on('cp.target_id', '=', id),
    )
    .select('cp.role as permission');
  return paginate(base, { kind: `grants-users:${type}`, sortExpr: null, seqExpr: sql.ref('members.seq'), direction: 'asc' }, page);
}

/** Teams granted a role on the content. */
export async function listTeamGrants(ctx: Ctx, type: TargetType, id: string, page: PageRequest) {
  const target = await requireTarget(ctx, type, id, 'read', 'see who has access');
  const membership = await requireMembership(ctx, target.organizationId);
  const base = teamsOf(ctx.db, target.organizationId, ctx.user.id)
    .innerJoin('content_permissions as cp', (join) =>
      join.onRef('cp.principal_id', '=', 'teams.id').on('cp.principal_type', '=', 'team').on('cp.target_type', '=', type).on('cp.target_id', '=', id),
    )
    .select('cp.role as permission');
  const result = await paginate(base, { kind: `grants-teams:${type}`, sortExpr: null, seqExpr: sql.ref('teams.seq'), direction: 'asc' }, page);
  return { ...result, membership, items: result.items as (TeamView & { permission: Role })[] };
}

/**
 * Everyone who can open the content and with which effective role: members with a role, and
 * guests reached by a grant. The database ranks a whole page of members with the same rules that
 * enforce access.
 */
export async function listEffective(ctx: Ctx, type: TargetType, id: string, query: PageRequest & { role?: Role | undefined }) {
  const target = await requireTarget(ctx, type, id, 'read', 'see who has access');
  const row =
    type === 'space'
      ? await ctx.db.selectFrom('spaces').select(['parent_id', 'default_level']).where('id', '=', id).executeTakeFirstOrThrow()
      : await ctx.db.selectFrom('collections').select(['parent_id', 'default_level']).where('id', '=', id).executeTakeFirstOrThrow();
  const rank = await memberRankOn(ctx.db, target.organizationId, { type, id, parentId: row.parent_id, defaultLevel: row.default_level });
  let base = membersOf(ctx.db, target.organizationId).where('members.disabled', '=', false).select(rank.as('rank'));
  base = query.role ? base.where(rank, '=', RANKS.indexOf(query.role) + 1) : base.where(rank, '>', 0);
  const page = await paginate(base, { kind: `grants-aggregate:${type}`, sortExpr: null, seqExpr: sql.ref('members.seq'), direction: 'asc' }, query);
  return { ...page, items: page.items.map((m) => ({ permission: RANKS[m.rank - 1]!, member: m as MemberView })) };
}
