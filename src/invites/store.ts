import { sql } from 'kysely';
import type { Db } from '../platform/db/database.ts';
import type { InviteLinkRow, RoleOrGuest } from '../platform/db/schema.ts';
import { newId } from '../platform/ids.ts';
import { paginate, type PageRequest } from '../platform/paging.ts';

/** The SQL of invitations: invite links, email invites, and the memberships they make. */

export async function findInviteLink(db: Db, organizationId: string, inviteId: string): Promise<InviteLinkRow | undefined> {
  return db.selectFrom('invite_links').selectAll().where('organization_id', '=', organizationId).where('id', '=', inviteId).executeTakeFirst();
}

/** The organization's invite links, oldest first. */
export async function listInviteLinks(db: Db, organizationId: string, page: PageRequest) {
  const base = db.selectFrom('invite_links').selectAll().where('organization_id', '=', organizationId);
  return paginate(base, { kind: 'invite-links', sortExpr: null, seqExpr: sql.ref('invite_links.seq'), direction: 'asc' }, page);
}

export async function insertInviteLink(db: Db, organizationId: string, role: RoleOrGuest, createdBy: string): Promise<InviteLinkRow> {
  return db
    .insertInto('invite_links')
    .values({ id: newId(), organization_id: organizationId, role, created_by: createdBy, created_at: new Date() })
    .returningAll()
    .executeTakeFirstOrThrow();
}

export async function setInviteLinkRole(db: Db, organizationId: string, inviteId: string, role: RoleOrGuest): Promise<InviteLinkRow | undefined> {
  return db
    .updateTable('invite_links')
    .set({ role })
    .where('organization_id', '=', organizationId)
    .where('id', '=', inviteId)
    .returningAll()
    .executeTakeFirst();
}

export async function deleteInviteLink(db: Db, organizationId: string, inviteId: string): Promise<void> {
  await db.deleteFrom('invite_links').where('organization_id', '=', organizationId).where('id', '=', inviteId).execute();
}

/** An invite link's role, with whether its organization accepts invite links. */
export async function inviteLinkToJoin(
  db: Db,
  organizationId: string,
  inviteId: string,
): Promise<{ role: RoleOrGuest; links_enabled: boolean } | undefined> {
  return db
    .selectFrom('invite_links')
    .innerJoin('organizations', 'organizations.id', 'invite_links.organization_id')
    .select(['invite_links.role', 'organizations.invite_links as links_enabled'])
    .where('invite_links.organization_id', '=', organizationId)
    .where('invite_links.id', '=', inviteId)
    .executeTakeFirst();
}

/** Adds a member unless they already are one; true when they were added. */
export async function insertMemberIfNew(db: Db, organizationId: string, userId: string, role: RoleOrGuest): Promise<boolean> {
  const inserted = await db
    .insertInto('members')
    .values({ organization_id: organizationId, user_id: userId, role, joined_at: new Date(), last_seen_at: null })
    .onConflict((oc) => oc.columns(['organization_id', 'user_id']).doNothing())
    .returning('user_id')
    .executeTakeFirst();
  return !!inserted;
}

/** A member's role and state, read under a row lock. */
export async function lockMember(db: Db, organizationId: string, userId: string): Promise<{ role: RoleOrGuest; disabled: boolean }> {
  return db
    .selectFrom('members')
    .select(['role', 'disabled'])
    .where('organization_id', '=', organizationId)
    .where('user_id', '=', userId)
    .forUpdate()
    .executeTakeFirstOrThrow();
}

export async function setMemberRole(db: Db, organizationId: string, userId: string, role: RoleOrGuest): Promise<void> {
  await db.updateTable('members').set({ role }).where('organization_id', '=', organizationId).where('user_id', '=', userId).execute();
}

/** Ids of the users with these (lower-case) email addresses, matched case-insensitively, by email. */
export async function userIdsByEmail(db: Db, emails: string[]): Promise<Map<string, string>> {
  const existing = await db
    .selectFrom('users')
    .select(['id', sql<string>`lower(email)`.as('email')])
    .where(sql<string>`lower(email)`, 'in', emails)
    .execute();
  return new Map(existing.map((u) => [u.email, u.id]));
}

/** Adds the members that are not members yet; returns the ids of those added. */
export async function insertNewMembers(
  db: Db,
  organizationId: string,
  members: { userId: string; role: RoleOrGuest }[],
  opts: { sso: boolean; now: Date },
): Promise<string[]> {
  if (members.length === 0) return [];
  const inserted = await db
    .insertInto('members')
    .values(
      members.map((m) => ({
        organization_id: organizationId,
        user_id: m.userId,
        role: m.role,
        sso: opts.sso,
        joined_at: opts.now,
        last_seen_at: null,
      })),
    )
    .onConflict((oc) => oc.columns(['organization_id', 'user_id']).doNothing())
    .returning('user_id')
    .execute();
  return inserted.map((r) => r.user_id);
}

/** Records pending email invites; re-inviting an address updates its invite. */
export async function upsertEmailInvites(
  db: Db,
  organizationId: string,
  invites: { email: string; role: RoleOrGuest }[],
  opts: { sso: boolean; invitedBy: string; now: Date },
): Promise<void> {
  if (invites.length === 0) return;
  await db
    .insertInto('email_invites')
    .values(
      invites.map((i) => ({
        organization_id: organizationId,
        email: i.email,
        role: i.role,
        sso: opts.sso,
        invited_by: opts.invitedBy,
        created_at: opts.now,
      })),
    )
    .onConflict((oc) =>
      oc.columns(['organization_id', 'email']).doUpdateSet((eb) => ({
        role: eb.ref('excluded.role'),
        sso: eb.ref('excluded.sso'),
        invited_by: eb.ref('excluded.invited_by'),
      })),
    )
    .execute();
}
