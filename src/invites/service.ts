import { sql } from 'kysely';
import type { Ctx } from '../platform/context.ts';
import type { InviteLinkRow, RoleOrGuest } from '../platform/db/schema.ts';
import { BadRequestError, ForbiddenError, HttpError, NotFoundError } from '../platform/errors.ts';
import { newId } from '../platform/ids.ts';
import { paginate, type PageRequest } from '../platform/paging.ts';
import { assertAdmin, strongest, type Membership } from '../platform/policy.ts';
import { requireMembership, requireOrganization } from '../access/organizations.ts';
import { normalizeEmail } from '../users/service.ts';
import type { InviteUsersInput, UpdateInviteInput } from './schemas.ts';

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
  const invite = await ctx.db
    .selectFrom('invite_links')
    .selectAll()
    .where('organization_id', '=', organizationId)
    .where('id', '=', inviteId)
    .executeTakeFirst();
  if (!invite) throw new NotFoundError('Invite');
  return invite;
}

/** The organization's invite links, oldest first. */
export async function listInviteLinks(ctx: Ctx, organizationId: string, page: PageRequest) {
  const membership = await requireAdmin(ctx, organizationId, 'list invite links');
  const base = ctx.db.selectFrom('invite_links').selectAll().where('organization_id', '=', organizationId);
  const result = await paginate(
    base,
    { kind: 'invite-links', sortExpr: null, seqExpr: sql.ref('invite_links.seq'), direction: 'asc' },
    page,
  );
  return { ...result, items: result.items.map((invite): InviteLinkView => ({ invite, membership })) };
}

export async function createInviteLink(ctx: Ctx, organizationId: string, role: RoleOrGuest): Promise<InviteLinkView> {
  const membership = await requireAdmin(ctx, organizationId, 'create invite links');
  const invite = await ctx.db
    .insertInto('invite_links')
    .values({ id: newId(), organization_id: organizationId, role, created_by: ctx.user.id, created_at: new Date() })
    .returningAll()
    .executeTakeFirstOrThrow();
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
  const invite = await ctx.db
    .updateTable('invite_links')
    .set({ role })
    .where('organization_id', '=', organizationId)
    .where('id', '=', inviteId)
    .returningAll()
    .executeTakeFirst();
  if (!invite) throw new NotFoundError('Invite');
  return { invite, membership };
}

/** Deleting is idempotent: an invite that does not exist (any more) is already deleted. */
export async function deleteInviteLink(ctx: Ctx, organizationId: string, inviteId: string): Promise<void> {
  await requireAdmin(ctx, organizationId, 'delete invite links');
  await ctx.db
    .deleteFrom('invite_links')
    .where('organization_id', '=', organizationId)
    .where('id', '=', inviteId)
    .execute();
}

/**
 * Joins the organization with an invite link; holding the link's id is the permission. A member
 * already there keeps their role when it is stronger and is raised to the invite's role otherwise.
 */
export async function joinWithInvite(ctx: Ctx, organizationId: string, inviteId: string): Promise<void> {
  const row = await ctx.db
    .selectFrom('invite_links')
    .innerJoin('organizations', 'organizations.id', 'invite_links.organization_id')
    .select(['invite_links.role', 'organizations.invite_links as links_enabled'])
    .where('invite_links.organization_id', '=', organizationId)
    .where('invite_links.id', '=', inviteId)
    .executeTakeFirst();
  if (!row) throw new NotFoundError('Invite');
  if (!row.links_enabled) {
    throw new ForbiddenError('Invite links are disabled in this organization: ask an admin to enable them or to invite you by email');
  }
  await ctx.db.transaction().execute(async (trx) => {
    const inserted = await trx
      .insertInto('members')
      .values({ organization_id: organizationId, user_id: ctx.user.id, role: row.role, joined_at: new Date(), last_seen_at: null })
      .onConflict((oc) => oc.columns(['organization_id', 'user_id']).doNothing())
      .returning('user_id')
      .executeTakeFirst();
    if (inserted) return;
    // Already a member: lock the row so two joins at once cannot lower each other's result.
    const current = await trx
      .selectFrom('members')
      .select(['role', 'disabled'])
      .where('organization_id', '=', organizationId)
      .where('user_id', '=', ctx.user.id)
      .forUpdate()
      .executeTakeFirstOrThrow();
    if (current.disabled) {
      // An invite link does not undo an admin's decision to disable a member.
      throw new ForbiddenError('Your membership of this organization is disabled: ask an admin to enable it');
    }
    const role = strongest(current.role, row.role);
    if (role === current.role) return;
    await trx
      .updateTable('members')
      .set({ role })
      .where('organization_id', '=', organizationId)
      .where('user_id', '=', ctx.user.id)
      .execute();
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
    const existing = await trx
      .selectFrom('users')
      .select(['id', sql<string>`lower(email)`.as('email')])
      .where(sql<string>`lower(email)`, 'in', emails)
      .execute();
    const byEmail = new Map(existing.map((u) => [u.email, u.id]));

    const newMembers = emails
      .filter((email) => byEmail.has(email))
      .map((email) => ({
        organization_id: organizationId,
        user_id: byEmail.get(email)!,
        role: entries.get(email)!,
        sso,
        joined_at: now,
        last_seen_at: null,
      }));
    const inserted = newMembers.length
      ? await trx
          .insertInto('members')
          .values(newMembers)
          .onConflict((oc) => oc.columns(['organization_id', 'user_id']).doNothing())
          .returning('user_id')
          .execute()
      : [];

    const pending = emails
      .filter((email) => !byEmail.has(email))
      .map((email) => ({
        organization_id: organizationId,
        email,
        role: entries.get(email)!,
        sso,
        invited_by: ctx.user.id,
        created_at: now,
      }));
    if (pending.length) {
      await trx
        .insertInto('email_invites')
        .values(pending)
        .onConflict((oc) =>
          oc.columns(['organization_id', 'email']).doUpdateSet((eb) => ({
            role: eb.ref('excluded.role'),
            sso: eb.ref('excluded.sso'),
            invited_by: eb.ref('excluded.invited_by'),
          })),
        )
        .execute();
    }
    const addedIds = new Set(inserted.map((r) => r.user_id));
    // In the order the emails were given.
    return newMembers.map((m) => m.user_id).filter((id) => addedIds.has(id));
  });

  return { users: added, invited: emails.length };
}
