import { sql, type Selectable } from 'kysely';
import type { Db } from '../platform/db/database.ts';
import type { EmailInvitesTable, RoleOrGuest, UserRow } from '../platform/db/schema.ts';
import { newId } from '../platform/ids.ts';

/**
 * The SQL of users. A user belongs to no organization: a user is read by id or email, or through an
 * organization shared with the caller.
 */

export async function insertUser(db: Db, user: { email: string; name: string; now: Date }): Promise<UserRow> {
  return db
    .insertInto('users')
    .values({ id: newId(), email: user.email, display_name: user.name, photo_url: null, created_at: user.now })
    .returningAll()
    .executeTakeFirstOrThrow();
}

type EmailInviteRow = Selectable<EmailInvitesTable>;

/** Removes the pending email invitations of an address and returns them. */
export async function takeEmailInvites(db: Db, email: string): Promise<EmailInviteRow[]> {
  return db.deleteFrom('email_invites').where('email', '=', email).returningAll().execute();
}

/** Makes the user a member of the organization, unless they already are. */
export async function addMemberOnce(
  db: Db,
  organizationId: string,
  member: { userId: string; role: RoleOrGuest; sso: boolean; joinedAt: Date },
): Promise<void> {
  await db
    .insertInto('members')
    .values({
      organization_id: organizationId,
      user_id: member.userId,
      role: member.role,
      sso: member.sso,
      joined_at: member.joinedAt,
      last_seen_at: null,
    })
    .onConflict((oc) => oc.doNothing())
    .execute();
}

export async function findUserByIdOrEmail(db: Db, idOrEmail: string): Promise<UserRow | undefined> {
  const query = db.selectFrom('users').selectAll();
  return idOrEmail.includes('@')
    ? query.where(sql`lower(email)`, '=', idOrEmail.trim().toLowerCase()).executeTakeFirst()
    : query.where('id', '=', idOrEmail).executeTakeFirst();
}

/** A user who shares an organization with the viewer, undefined otherwise. */
export async function findUserSeenBy(db: Db, viewerId: string, userId: string): Promise<UserRow | undefined> {
  return db
    .selectFrom('users')
    .selectAll('users')
    .where('users.id', '=', userId)
    .where((eb) =>
      eb.exists(
        eb
          .selectFrom('members as theirs')
          .innerJoin('members as mine', 'mine.organization_id', 'theirs.organization_id')
          .select(sql`1`.as('one'))
          .whereRef('theirs.user_id', '=', 'users.id')
          .where('mine.user_id', '=', viewerId),
      ),
    )
    .executeTakeFirst();
}

export async function updateProfile(db: Db, userId: string, changes: { display_name?: string; photo_url?: string | null }): Promise<UserRow> {
  return db.updateTable('users').set(changes).where('id', '=', userId).returningAll().executeTakeFirstOrThrow();
}

/** The users named by a page of records, in one query (ids may repeat or be null). */
export async function usersById(db: Db, ids: (string | null)[]): Promise<Map<string, UserRow>> {
  const wanted = [...new Set(ids.filter((i): i is string => !!i))];
  if (!wanted.length) return new Map();
  const rows = await db.selectFrom('users').selectAll().where('id', 'in', wanted).execute();
  return new Map(rows.map((u) => [u.id, u]));
}
