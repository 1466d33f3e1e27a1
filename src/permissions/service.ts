import { requireCollectionRole } from '../access/collections.ts';
import { assertMembers } from '../access/organizations.ts';
import { findMember, type MemberView } from '../members/store.ts';
import { requireMembership } from '../access/organizations.ts';
import type { Ctx } from '../platform/context.ts';
import type { Role, RoleOrGuest } from '../platform/db/schema.ts';
import { BadRequestError, NotFoundError } from '../platform/errors.ts';
import type { PageRequest } from '../platform/paging.ts';
import { requireSpaceRole } from '../spaces/access.ts';
import type { TeamView } from '../teams/store.ts';
import { memberRankOn, RANKS } from '../access/effective.ts';
import * as store from './store.ts';
import type { TargetType } from './store.ts';

/**
 * Grants on spaces and collections: who (a user or a team of the organization) holds which role
 * on a piece of content. Reading the grants needs read access to the content; changing them needs
 * admin on it.
 */

export type { TargetType };

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
  const known = await store.teamIdsAmong(ctx.db, organizationId, teamIds);
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
  await ctx.db.transaction().execute((trx) => store.setGrants(trx, target.organizationId, target, principals, input.role));
}

/** Changes one principal's grant; a principal who is not a member (user) or team of the organization is 404. */
export async function setGrant(ctx: Ctx, type: TargetType, id: string, principal: { type: 'user' | 'team'; id: string }, role: RoleOrGuest) {
  const target = await requireTarget(ctx, type, id, 'admin', 'change who has access');
  if (principal.type === 'user' && !(await findMember(ctx.db, target.organizationId, principal.id))) throw new NotFoundError('Member');
  if (principal.type === 'team' && !(await store.teamExists(ctx.db, target.organizationId, principal.id))) throw new NotFoundError('Team');
  await grant(ctx, type, id, principal.type === 'user' ? { role, users: [principal.id] } : { role, teams: [principal.id] });
}

export async function removeGrant(ctx: Ctx, type: TargetType, id: string, principal: { type: 'user' | 'team'; id: string }) {
  const target = await requireTarget(ctx, type, id, 'admin', 'change who has access');
  await store.deleteGrant(ctx.db, target.organizationId, target, { principal_type: principal.type, principal_id: principal.id });
}

/** Users granted a role directly on the content. */
export async function listUserGrants(ctx: Ctx, type: TargetType, id: string, page: PageRequest) {
  const target = await requireTarget(ctx, type, id, 'read', 'see who has access');
  return store.userGrants(ctx.db, target.organizationId, target, page);
}

/** Teams granted a role on the content. */
export async function listTeamGrants(ctx: Ctx, type: TargetType, id: string, page: PageRequest) {
  const target = await requireTarget(ctx, type, id, 'read', 'see who has access');
  const membership = await requireMembership(ctx, target.organizationId);
  const result = await store.teamGrants(ctx.db, target.organizationId, ctx.user.id, target, page);
  return { ...result, membership, items: result.items as (TeamView & { permission: Role })[] };
}

/**
 * Everyone who can open the content and with which effective role: members with a role, and
 * guests reached by a grant. The database ranks a whole page of members with the same rules that
 * enforce access.
 */
export async function listEffective(ctx: Ctx, type: TargetType, id: string, query: PageRequest & { role?: Role | undefined }) {
  const target = await requireTarget(ctx, type, id, 'read', 'see who has access');
  const row = await store.levelOf(ctx.db, target.organizationId, target);
  const rank = await memberRankOn(ctx.db, target.organizationId, { type, id, parentId: row.parent_id, defaultLevel: row.default_level });
  const page = await store.membersRanked(ctx.db, target.organizationId, type, rank, query.role ? RANKS.indexOf(query.role) + 1 : undefined, query);
  return { ...page, items: page.items.map((m) => ({ permission: RANKS[m.rank - 1]!, member: m as MemberView })) };
}
