import { sql, type Expression, type SqlBool } from 'kysely';
import type { Ctx } from '../platform/context.ts';
import type { Db } from '../platform/db/database.ts';
import type { TeamMemberRole } from '../platform/db/schema.ts';
import { BadRequestError, NotFoundError } from '../platform/errors.ts';
import { newId } from '../platform/ids.ts';
import { paginate, type PageRequest } from '../platform/paging.ts';
import { assertAdmin, assertCanListPeople, assertCanManageTeamMembers, canManageTeamMembers, type Membership } from '../platform/policy.ts';
import { findMember, membersOf } from '../members/store.ts';
import { requireMembership } from '../access/organizations.ts';
import { removeGrantsOf } from '../access/store.ts';
import type { CreateTeamInput, ListMemberTeamsInput, ListTeamsInput, UpdateTeamMembersInput } from './schemas.ts';
import {
  CONTROL_CHARS,
  findTeam,
  lockTeam,
  ownedBy,
  removeTeamMembers,
  resolveMembers,
  teamsOf,
  titleContains,
  upsertTeamMembers,
  type TeamView,
} from './store.ts';

/** A 400 naming the references that are not members of the organization (the first few, if many). */
function notMembers(field: string, refs: string[]): BadRequestError {
  const shown = refs.slice(0, 10).map((r) => `"${r}"`).join(', ');
  const more = refs.length > 10 ? ` and ${refs.length - 10} more` : '';
  const verb = refs.length === 1 ? 'is not a member' : 'are not members';
  return new BadRequestError(`${field}: ${shown}${more} ${verb} of the organization`);
}

/** The user ids of `refs`; a 400 naming `field` when any of them is not a member of the organization. */
function memberIds(field: string, refs: readonly string[], resolved: Map<string, string | undefined>): string[] {
  const missing = [...new Set(refs.filter((r) => resolved.get(r) === undefined))];
  if (missing.length) throw notMembers(field, missing);
  return refs.map((r) => resolved.get(r)!);
}

/** A title as stored: trimmed, on one line. */
function teamTitle(title: string): string {
  if (CONTROL_CHARS.test(title)) throw new BadRequestError('title: must not contain control characters (line breaks, tabs, NUL)');
  return title.trim();
}

/** Condition for the `title` filter; a filter with control characters cannot match any title. */
function titleFilter(text: string): Expression<SqlBool> {
  return CONTROL_CHARS.test(text) ? sql<SqlBool>`false` : titleContains(text);
}

async function requireTeam(ctx: Ctx, organizationId: string, teamId: string): Promise<TeamView> {
  const team = await findTeam(ctx.db, organizationId, teamId, ctx.user.id);
  if (!team) throw new NotFoundError('Team');
  return team;
}

/** Only the teams the `owner` member can manage: every team for an admin, else the teams they own. */
async function manageableBy(ctx: Ctx, organizationId: string, ownerId: string): Promise<Expression<SqlBool>> {
  const owner = await ctx.db
    .selectFrom('members')
    .select(['role', 'disabled'])
    .where('organization_id', '=', organizationId)
    .where('user_id', '=', ownerId)
    .executeTakeFirst();
  if (!owner) throw notMembers('owner', [ownerId]);
  // A disabled member has no access to the organization, so manages nothing.
  const membership: Membership | undefined = owner.disabled ? undefined : { role: owner.role, ownsTeam: false };
  if (!membership) return sql<SqlBool>`false`;
  return canManageTeamMembers(membership, undefined) ? sql<SqlBool>`true` : ownedBy(ownerId);
}

export async function listTeams(ctx: Ctx, organizationId: string, query: ListTeamsInput) {
  const membership = await requireMembership(ctx, organizationId);
  assertCanListPeople(membership, 'teams');
  const scope = query.owner !== undefined ? await manageableBy(ctx, organizationId, query.owner) : undefined;
  const base = teamsOf(ctx.db, organizationId, ctx.user.id)
    .$if(scope !== undefined, (q) => q.where(scope!))
    .$if(!!query.title, (q) => q.where(titleFilter(query.title!)));
  const page = await paginate(base, { kind: 'teams', sortExpr: null, seqExpr: sql.ref('teams.seq'), direction: 'asc' }, query);
  return { membership, page };
}

export async function createTeam(ctx: Ctx, organizationId: string, input: CreateTeamInput) {
  const membership = await requireMembership(ctx, organizationId);
  assertAdmin(membership, 'create teams');
  const title = teamTitle(input.title);
  const refs = input.members ?? [];
  const team = await ctx.db.transaction().execute(async (trx) => {
    const userIds = memberIds('members', refs, await resolveMembers(trx, organizationId, refs));
    const id = newId();
    await trx
      .insertInto('teams')
      .values({ id, organization_id: organizationId, title, created_at: new Date() })
      .execute();
    await upsertTeamMembers(
      trx,
      organizationId,
      id,
      [...new Set(userIds)].map((userId) => ({ userId, role: 'member' as const })),
    );
    return (await findTeam(trx, organizationId, id, ctx.user.id))!;
  });
  return { team, membership };
}

export async function getTeam(ctx: Ctx, organizationId: string, teamId: string) {
  const membership = await requireMembership(ctx, organizationId);
  assertCanListPeople(membership, 'teams');
  return { team: await requireTeam(ctx, organizationId, teamId), membership };
}

export async function renameTeam(ctx: Ctx, organizationId: string, teamId: string, title: string) {
  const membership = await requireMembership(ctx, organizationId);
  assertAdmin(membership, 'rename teams');
  const updated = await ctx.db
    .updateTable('teams')
    .set({ title: teamTitle(title) })
    .where('organization_id', '=', organizationId)
    .where('id', '=', teamId)
    .returning('id')
    .executeTakeFirst();
  if (!updated) throw new NotFoundError('Team');
  return { team: await requireTeam(ctx, organizationId, teamId), membership };
}

/** Deletes a team and its memberships; deleting a team that does not exist succeeds too. */
export async function deleteTeam(ctx: Ctx, organizationId: string, teamId: string): Promise<void> {
  const membership = await requireMembership(ctx, organizationId);
  assertAdmin(membership, 'delete teams');
  await ctx.db.transaction().execute(async (trx) => {
    // The team's grants on spaces and collections go with it.
    await removeGrantsOf(trx, organizationId, { type: 'team', id: teamId });
    await trx.deleteFrom('teams').where('organization_id', '=', organizationId).where('id', '=', teamId).execute();
  });
}

/**
 * Runs a change of a team's members in one transaction, after checking that the caller may make
 * it (organization admins and owners of the team). The team stays locked until the change ends.
 */
async function changeTeamMembers(ctx: Ctx, organizationId: string, teamId: string, change: (trx: Db) => Promise<void>) {
  const membership = await requireMembership(ctx, organizationId);
  await ctx.db.transaction().execute(async (trx) => {
    const team = await lockTeam(trx, organizationId, teamId, ctx.user.id);
    if (!team) throw new NotFoundError('Team');
    assertCanManageTeamMembers(membership, team.role ?? undefined);
    await change(trx);
  });
}

/** Adds, removes and sets roles of team members, all or nothing. Removal wins over add and roles. */
export async function updateTeamMembers(ctx: Ctx, organizationId: string, teamId: string, input: UpdateTeamMembersInput) {
  const add = input.add ?? [];
  const remove = input.remove ?? [];
  const roles = Object.entries(input.memberships ?? {});
  await changeTeamMembers(ctx, organizationId, teamId, async (trx) => {
    const resolved = await resolveMembers(trx, organizationId, [...add, ...remove, ...roles.map(([ref]) => ref)]);
    const added = memberIds('add', add, resolved);
    const removed = new Set(memberIds('remove', remove, resolved));
    const roleIds = memberIds('memberships', roles.map(([ref]) => ref), resolved);
    const upserts = new Map<string, TeamMemberRole | undefined>(added.map((id) => [id, undefined]));
    roles.forEach(([, { role }], i) => upserts.set(roleIds[i]!, role));
    for (const id of removed) upserts.delete(id);
    await removeTeamMembers(trx, organizationId, teamId, [...removed]);
    await upsertTeamMembers(trx, organizationId, teamId, [...upserts].map(([userId, role]) => ({ userId, role })));
  });
}

/** Adds a member of the organization to the team; with a role, also changes the role of a current member. */
export async function addTeamMember(ctx: Ctx, organizationId: string, teamId: string, userId: string, role: TeamMemberRole | undefined) {
  await changeTeamMembers(ctx, organizationId, teamId, async (trx) => {
    const resolved = await resolveMembers(trx, organizationId, [userId]);
    const id = resolved.get(userId);
    if (!id) throw new NotFoundError(`Member "${userId}" of the organization`);
    await upsertTeamMembers(trx, organizationId, teamId, [{ userId: id, role }]);
  });
}

/** Removes a user from the team; succeeds too when they were not in it. */
export async function removeTeamMember(ctx: Ctx, organizationId: string, teamId: string, userId: string) {
  await changeTeamMembers(ctx, organizationId, teamId, (trx) => removeTeamMembers(trx, organizationId, teamId, [userId]));
}

/** Members of a team, in the order they joined the organization. */
export async function listTeamMembers(ctx: Ctx, organizationId: string, teamId: string, page: PageRequest) {
  const membership = await requireMembership(ctx, organizationId);
  assertCanListPeople(membership, 'teams');
  await requireTeam(ctx, organizationId, teamId);
  const base = membersOf(ctx.db, organizationId)
    .innerJoin('team_members', (join) =>
      join
        .onRef('team_members.organization_id', '=', 'members.organization_id')
        .onRef('team_members.user_id', '=', 'members.user_id'),
    )
    .select('team_members.role as team_role')
    .where('team_members.team_id', '=', teamId);
  const result = await paginate(
    base,
    { kind: 'team-members', sortExpr: null, seqExpr: sql.ref('members.seq'), direction: 'asc' },
    page,
  );
  return { membership, page: result };
}

/** The teams a member of the organization belongs to, with their role in each. */
export async function listMemberTeams(ctx: Ctx, organizationId: string, userId: string, query: ListMemberTeamsInput) {
  const membership = await requireMembership(ctx, organizationId);
  assertCanListPeople(membership, 'teams');
  if (!(await findMember(ctx.db, organizationId, userId))) throw new NotFoundError('Member');
  const base = teamsOf(ctx.db, organizationId, ctx.user.id)
    .innerJoin('team_members as mt', (join) =>
      join
        .onRef('mt.organization_id', '=', 'teams.organization_id')
        .onRef('mt.team_id', '=', 'teams.id')
        .on('mt.user_id', '=', userId),
    )
    .select('mt.role as member_role')
    .$if(!!query.title, (q) => q.where(titleFilter(query.title!)));
  const page = await paginate(
    base,
    { kind: 'member-teams', sortExpr: null, seqExpr: sql.ref('teams.seq'), direction: 'asc' },
    query,
  );
  return { membership, page };
}
