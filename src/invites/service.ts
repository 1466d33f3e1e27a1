import type { Ctx } from '../platform/context.ts';
import type { InviteLinkRow, RoleOrGuest } from '../platform/db/schema.ts';
import { BadRequestError, ForbiddenError, HttpError, NotFoundError } from '../platform/errors.ts';
import type { PageRequest } from '../platform/paging.ts';
import { assertAdmin, strongest, type Membership } from '../platform/policy.ts';
import { requireMembership, requireOrganization } from '../access/organizations.ts';
import { normalizeEmail } from '../users/service.ts';
import type { InviteUsersInput, UpdateInviteInput } from './schemas.ts';
import * as store from './store.ts';

/** An invite link with the caller's membership, which decides whether the invite is redundant for them. */
export interface InviteLinkView {
  invite: InviteLinkRow;
  membership: Membership;
}

/**
 * The official create body is one of an organization, space or collection invite. Spaces and
 * collections do not exist yet, so content invites get a clear answer rather than a schema error
 * about a missing `role`. Runs before schema validation.
 */
export function assertOrganizationInviteBody(body: unknown): void {
  if (body !== null && typeof body === 'object' && ('space' in body || 'collection' in body)) {
    throw new BadRequestError(
      'Only organization invites are supported for now: send { role } without "space" or "collection"',
    );
  }
}

async function requireAdmin(ctx: Ctx, organizationId: string, action: string): Promise<Membership> {
  const membership = await requireMembership(ctx, organizationId);
  assertAdmin(membership, action);
  return membership;
}

async function findInvite(ctx: Ctx, organizationId: string, inviteId: string): Promise<InviteLinkRow> {
  const invite = await store.findInviteLink(ctx.db, organizationId, inviteId);
  if (!invite) throw new NotFoundError('Invite');
  return invite;
}

/** The organization's invite links, oldest first. */
export async function listInviteLinks(ctx: Ctx, organizationId: string, page: PageRequest) {
  const membership = await requireAdmin(ctx, organizationId, 'list invite links');
  const result = await store.listInviteLinks(ctx.db, organizationId, page);
  return { ...result, items: result.items.map((invite): InviteLinkView => ({ invite, membership })) };
}

export async function createInviteLink(ctx: Ctx, organizationId: string, role: RoleOrGuest): Promise<InviteLinkView> {
  const membership = await requireAdmin(ctx, organizationId, 'create invite links');
  const invite = await store.insertInviteLink(ctx.db, organizationId, role, ctx.user.id);
  return { invite, membership };
}

export async function getInviteLink(ctx: Ctx, organizationId: string, inviteId: string): Promise<InviteLinkView> {
  const membership = await requireAdmin(ctx, organizationId, 'view invite links');
  return { invite: await findInvite(ctx, organizationId, inviteId), membership };
}

export async function updateInviteLink(
  ctx: Ctx,
  organizationId: string,
  inviteId: string,
  input: UpdateInviteInput,
): Promise<InviteLinkView> {
  const role = input.role !== undefined ? input.role : input.level;
  if (role === undefined) throw new BadRequestError('Invalid body: must have property "role"');
  const membership = await requireAdmin(ctx, organizationId, 'change invite links');
  const invite = await store.setInviteLinkRole(ctx.db, organizationId, inviteId, role);
  if (!invite) throw new NotFoundError('Invite');
  return { invite, membership };
}

/** Deleting is idempotent: an invite that does not exist (any more) is already deleted. */
export async function deleteInviteLink(ctx: Ctx, organizationId: string, inviteId: string): Promise<void> {
  await requireAdmin(ctx, organizationId, 'delete invite links');
  await store.deleteInviteLink(ctx.db, organizationId, inviteId);
}

/**
 * Joins the organization with an invite link; holding the link's id is the permission. A member
 * already there keeps their role when it is stronger and is raised to the invite's role otherwise.
 */
export async function joinWithInvite(ctx: Ctx, organizationId: string, inviteId: string): Promise<void> {
  const row = await store.inviteLinkToJoin(ctx.db, organizationId, inviteId);
  if (!row) throw new NotFoundError('Invite');
  if (!row.links_enabled) {
    throw new ForbiddenError('Invite links are disabled in this organization: ask an admin to enable them or to invite you by email');
  }
  await ctx.db.transaction().execute(async (trx) => {
    if (await store.insertMemberIfNew(trx, organizationId, ctx.user.id, row.role)) return;
    // Already a member: lock the row so two joins at once cannot lower each other's result.
    const current = await store.lockMember(trx, organizationId, ctx.user.id);
    if (current.disabled) {
      // An invite link does not undo an admin's decision to disable a member.
      throw new ForbiddenError('Your membership of this organization is disabled: ask an admin to enable it');
    }
    const role = strongest(current.role, row.role);
    if (role === current.role) return;
    await store.setMemberRole(trx, organizationId, ctx.user.id, role);
  });
}

/** Distinct normalized emails with the role each one is invited with, in the order given. */
function inviteEntries(input: InviteUsersInput, defaultRole: RoleOrGuest): Map<string, RoleOrGuest> {
  const entries = new Map<string, RoleOrGuest>();
  input.emails.forEach((entry, i) => {
    const [raw, role] =
      typeof entry === 'string' ? [entry, defaultRole] : [entry.email, entry.role !== undefined ? entry.role : defaultRole];
    let email: string;
    try {
      email = normalizeEmail(raw);
    } catch (err) {
      if (err instanceof HttpError) throw new BadRequestError(`Invalid body.emails.${i}: ${JSON.stringify(raw)} is not an email address`);
      throw err;
    }
    // The first entry for an address wins; repeating an address is not an error.
    if (!entries.has(email)) entries.set(email, role);
  });
  return entries;
}

/**
 * Invites people by email, in one transaction. Existing users (matched case-insensitively) become
 * members at once; existing members are left as they are. Other addresses get a pending invite
 * (re-inviting updates its role) that becomes a membership when that person's account is created.
 */
export async function inviteUsers(
  ctx: Ctx,
  organizationId: string,
  input: InviteUsersInput,
): Promise<{ users: string[]; invited: number }> {
  const { org, membership } = await requireOrganization(ctx, organizationId);
  assertAdmin(membership, 'invite people');
  const entries = inviteEntries(input, input.role !== undefined ? input.role : org.default_role);
  const sso = input.sso ?? false;
  const now = new Date();
  const emails = [...entries.keys()];

  const added = await ctx.db.transaction().execute(async (trx) => {
    const byEmail = await store.userIdsByEmail(trx, emails);
    const newMembers = emails.filter((email) => byEmail.has(email)).map((email) => ({ userId: byEmail.get(email)!, role: entries.get(email)! }));
    const inserted = await store.insertNewMembers(trx, organizationId, newMembers, { sso, now });
    const pending = emails.filter((email) => !byEmail.has(email)).map((email) => ({ email, role: entries.get(email)! }));
    await store.upsertEmailInvites(trx, organizationId, pending, { sso, invitedBy: ctx.user.id, now });
    const addedIds = new Set(inserted);
    // In the order the emails were given.
    return newMembers.map((m) => m.userId).filter((id) => addedIds.has(id));
  });

  return { users: added, invited: emails.length };
}
