import { sql } from 'kysely';
import type { Ctx } from '../platform/context.ts';
import type { Db } from '../platform/db/database.ts';
import type { Role, RoleOrGuest } from '../platform/db/schema.ts';
import { spaceRoles } from '../access/effective.ts';
import { visibleSpaces, withRoles } from '../spaces/service.ts';
import { BadRequestError, NotFoundError } from '../platform/errors.ts';
import { paginate, type KeysetSpec, type PageRequest } from '../platform/paging.ts';
import { assertAdmin, assertCanListPeople, type Membership } from '../platform/policy.ts';
import { requireMembership } from '../access/organizations.ts';
import { removeGrantsOf } from '../access/store.ts';
import { findMember, membersOf, type MemberView } from './store.ts';

export type MemberSort = 'joinedAt' | 'lastSeenAt' | 'name';

export interface MemberListQuery extends PageRequest {
  order?: 'asc' | 'desc' | undefined;
  sort?: MemberSort | undefined;
  role?: string | undefined;
  search?: string | undefined;
}

/** Escapes LIKE wildcards so a search for "50%" matches the text "50%". */
export function likeContains(text: string): string {
  return `%${text.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
}

export async function listMembers(ctx: Ctx, organizationId: string, query: MemberListQuery) {
  const membership = await requireMembership(ctx, organizationId);
  assertCanListPeople(membership, 'members');
  const sort = query.sort ?? 'joinedAt';
  const direction = query.order ?? 'desc';
  let base = membersOf(ctx.db, organizationId);
  if (query.role === 'guest') base = base.where('members.role', 'is', null);
  else if (query.role) base = base.where('members.role', '=', query.role as never);
  if (query.search) {
    const pattern = likeContains(query.search.trim());
    base = base.where((eb) =>
      eb.or([eb('users.display_name', 'ilike', pattern), eb('users.email', 'ilike', pattern)]),
    );
  }
  // Sorting by last activity lists only members who have been seen.
  if (sort === 'lastSeenAt') base = base.where('members.last_seen_at', 'is not', null);
  const spec: KeysetSpec = {
    kind: `members:${sort}:${direction}`,
    sortExpr:
      sort === 'name' ? sql`lower(users.display_name)` : sort === 'lastSeenAt' ? sql.ref('members.last_seen_at') : sql.ref('members.joined_at'),
    sortType: sort === 'name' ? 'text' : 'timestamp',
    seqExpr: sql.ref('members.seq'),
    direction,
  };
  return paginate(base, spec, query, (m: MemberView) =>
    sort === 'name' ? m.display_name.toLowerCase() : ((sort === 'lastSeenAt' ? m.last_seen_at : m.joined_at) as unknown as string),
  );
}

/** A member of the organization; members with a role see everyone, guests only themselves. */
export async function getMember(ctx: Ctx, organizationId: string, userId: string): Promise<MemberView> {
  const membership = await requireMembership(ctx, organizationId);
  if (userId !== ctx.user.id) assertCanListPeople(membership, 'members');
  const member = await findMember(ctx.db, organizationId, userId);
  if (!member) throw new NotFoundError('Member');
  return member;
}

/**
 * Refuses a change that would leave the organization without an admin. The admin rows are locked
 * first, so two admins demoting each other concurrently cannot both succeed.
 */
async function assertKeepsAnAdmin(trx: Db, organizationId: string, userId: string, action: string) {
  const admins = await trx
    .selectFrom('members')
    .select('user_id')
    .where('organization_id', '=', organizationId)
    .where('role', '=', 'admin')
    .forUpdate()
    .execute();
  if (admins.length === 1 && admins[0]!.user_id === userId) {
    throw new BadRequestError(`Cannot ${action} the last admin of the organization: make another member admin first`);
  }
}

/** The role of a member, read inside the transaction that changes or removes them. */
function memberRole(trx: Db, organizationId: string, userId: string) {
  return trx.selectFrom('members').select('role').where('organization_id', '=', organizationId).where('user_id', '=', userId).executeTakeFirst();
}

export async function updateMemberRole(ctx: Ctx, organizationId: string, userId: string, role: RoleOrGuest | undefined) {
  const membership = await requireMembership(ctx, organizationId);
  assertAdmin(membership, 'change member roles');
  await ctx.db.transaction().execute(async (trx) => {
    const target = await memberRole(trx, organizationId, userId);
    if (!target) throw new NotFoundError('Member');
    if (role === undefined || role === target.role) return;
    if (target.role === 'admin') await assertKeepsAnAdmin(trx, organizationId, userId, 'demote');
    await trx
      .updateTable('members')
      .set({ role })
      .where('organization_id', '=', organizationId)
      .where('user_id', '=', userId)
      .execute();
  });
  return (await findMember(ctx.db, organizationId, userId))!;
}

/** Admins remove anyone; every member may leave. Removing someone who is not a member is a no-op. */
export async function removeMember(ctx: Ctx, organizationId: string, userId: string): Promise<void> {
  const membership = await requireMembership(ctx, organizationId);
  if (userId !== ctx.user.id) assertAdmin(membership, 'remove other members');
  await ctx.db.transaction().execute(async (trx) => {
    const target = await memberRole(trx, organizationId, userId);
    if (!target) return;
    if (target.role === 'admin') await assertKeepsAnAdmin(trx, organizationId, userId, 'remove');
    await trx.deleteFrom('members').where('organization_id', '=', organizationId).where('user_id', '=', userId).execute();
    // Grants on the organization's content go with the membership.
    await removeGrantsOf(trx, organizationId, { type: 'user', id: userId });
  });
}

export async function setSsoMember(ctx: Ctx, organizationId: string, userId: string): Promise<MemberView> {
  const membership = await requireMembership(ctx, organizationId);
  assertAdmin(membership, 'mark members as SSO members');
  const updated = await ctx.db
    .updateTable('members')
    .set({ sso: true })
    .where('organization_id', '=', organizationId)
    .where('user_id', '=', userId)
    .executeTakeFirst();
  if (Number(updated.numUpdatedRows) === 0) throw new NotFoundError('Member');
  // SSO enforcement now applies to the member's tokens (see sso-gate.ts).
  ctx.tokenCache.clear();
  return (await findMember(ctx.db, organizationId, userId))!;
}

/** The spaces a member can open, with the member's effective role on each. */
export async function listMemberSpaces(ctx: Ctx, organizationId: string, userId: string, page: PageRequest & { order?: 'asc' | 'desc' | undefined }) {
  const membership: Membership = await requireMembership(ctx, organizationId);
  if (userId !== ctx.user.id) assertCanListPeople(membership, 'members');
  const member = await findMember(ctx.db, organizationId, userId);
  if (!member) throw new NotFoundError('Member');
  const direction = page.order ?? 'desc';
  const result = await paginate(
    visibleSpaces(ctx.db, organizationId, userId, member.role),
    { kind: `member-spaces:${direction}`, sortExpr: null, seqExpr: sql.ref('spaces.seq'), direction },
    page,
  );
  const theirs = await spaceRoles(ctx.db, organizationId, { userId, orgRole: member.role }, result.items);
  const mine = await withRoles(ctx, organizationId, membership.role, result.items);
  return {
    ...result,
    items: mine
      .map(({ space, role }) => ({ permission: theirs.get(space.id) ?? null, space, role }))
      .filter((i): i is typeof i & { permission: Role } => i.permission !== null),
  };
}
