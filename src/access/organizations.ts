import type { Ctx } from '../platform/context.ts';
import type { Db } from '../platform/db/database.ts';
import type { OrganizationRow } from '../platform/db/schema.ts';
import { BadRequestError, NotFoundError } from '../platform/errors.ts';
import type { Membership } from '../platform/policy.ts';
import { assertSsoSatisfied } from '../platform/sso-gate.ts';
import { enabledMembership, memberIdsAmong, organizationWithMembership } from './store.ts';

/**
 * The caller's membership in an organization. A caller who is not a member gets 404: an
 * organization's existence is not revealed to outsiders.
 */
export async function requireMembership(ctx: Ctx, organizationId: string): Promise<Membership> {
  const membership = await enabledMembership(ctx.db, organizationId, ctx.user.id);
  if (!membership) throw new NotFoundError('Organization');
  assertSsoSatisfied(organizationId);
  return membership;
}

/**
 * The organization and the caller's membership in it, in one query (404 for non-members): it runs on
 * nearly every request, so it is a prepared statement.
 */
export async function requireOrganization(
  ctx: Ctx,
  organizationId: string,
): Promise<{ org: OrganizationRow; membership: Membership }> {
  const row = await organizationWithMembership(ctx.prepared, organizationId, ctx.user.id);
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
  const known = await memberIdsAmong(db, organizationId, wanted);
  const missing = wanted.filter((u) => !known.has(u));
  if (missing.length) throw new BadRequestError(`${field}: ${missing.join(', ')} is not a member of the organization`);
}
