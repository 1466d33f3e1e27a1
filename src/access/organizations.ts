import { sql } from 'kysely';
import type { Ctx } from '../platform/context.ts';
import type { Db } from '../platform/db/database.ts';
import type { OrganizationRow } from '../platform/db/schema.ts';
import { BadRequestError, NotFoundError } from '../platform/errors.ts';
import type { Membership } from '../platform/policy.ts';
import { assertSsoSatisfied } from '../platform/sso-gate.ts';

/** Subquery: the member (row of `members` in the outer query) owns a team of the organization. */
const ownsTeam = (db: Db) =>
  db
    .selectFrom('team_members')
    .select(sql`1`.as('one'))
    .where(sql<boolean>`team_members.organization_id = members.organization_id`)
    .where(sql<boolean>`team_members.user_id = members.user_id`)
    .where('team_members.role', '=', 'owner');

/**
 * The caller's membership in an organization. A caller who is not a member gets 404: an
 * organization's existence is not revealed to outsiders.
 */
export async function requireMembership(ctx: Ctx, organizationId: string): Promise<Membership> {
  const row = await ctx.db
    .selectFrom('members')
    .select((eb) => ['members.role', eb.exists(ownsTeam(ctx.db)).as('owns_team')])
    .where('members.organization_id', '=', organizationId)
    .where('members.user_id', '=', ctx.user.id)
    .where('members.disabled', '=', false)
    .executeTakeFirst();
  if (!row) throw new NotFoundError('Organization');
  assertSsoSatisfied(organizationId);
  return { role: row.role, ownsTeam: !!row.owns_team };
}

/**
 * The organization and the caller's membership in it, in one query (404 for non-members). It is a
 * prepared statement because it runs on nearly every request: building and planning it each time
 * cost more than answering it.
 */
export async function requireOrganization(
  ctx: Ctx,
  organizationId: string,
): Promise<{ org: OrganizationRow; membership: Membership }> {
  const rows = await ctx.prepared<OrganizationRow & { member_role: Membership['role']; owns_team: boolean }>(
    'folio_org_membership',
    `SELECT o.*, m.role AS member_role, EXISTS (
       SELECT 1 FROM team_members tm
       WHERE tm.organization_id = m.organization_id AND tm.user_id = m.user_id AND tm.role = 'owner'
     ) AS owns_team
     FROM organizations o JOIN members m ON m.organization_id = o.id
     WHERE o.id = $1 AND m.user_id = $2 AND NOT m.disabled`,
    [organizationId, ctx.user.id],
  );
  const row = rows[0];
  if (!row) throw new NotFoundError('Organization');
  assertSsoSatisfied(organizationId);
  const { member_role, owns_team, ...org } = row;
  return { org, membership: { role: member_role, ownsTeam: !!owns_team } };
}

/**
 * Refuses (400, naming `field`) user ids that are not members of the organization: rules, grants
 * and review requests may only name the organization's own people.
 */
export async function assertMembers(db: Db, organizationId: string, userIds: string[], field: string): Promise<void> {
  const wanted = [...new Set(userIds)];
  if (wanted.length === 0) return;
  const found = await db.selectFrom('members').select('user_id').where('organization_id', '=', organizationId).where('user_id', 'in', wanted).execute();
  const known = new Set(found.map((r) => r.user_id));
  const missing = wanted.filter((u) => !known.has(u));
  if (missing.length) throw new BadRequestError(`${field}: ${missing.join(', ')} is not a member of the organization`);
}
