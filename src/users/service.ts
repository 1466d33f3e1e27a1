import { createApiToken } from '../platform/auth.ts';
import type { Db } from '../platform/db/database.ts';
import type { UserRow } from '../platform/db/schema.ts';
import { BadRequestError, ConflictError, ForbiddenError, NotFoundError, isUniqueViolation } from '../platform/errors.ts';
import { newId } from '../platform/ids.ts';
import type { Ctx } from '../platform/context.ts';
import { sql } from 'kysely';

/** An address with a dotted domain, or at `localhost` (the first administrator's default, admin@localhost). */
const EMAIL = /^[^\s@]+@(?:[^\s@]+\.[^\s@]+|localhost)$/;

export function normalizeEmail(email: string): string {
  const value = email.trim().toLowerCase();
  if (!EMAIL.test(value) || value.length > 320) throw new BadRequestError(`Invalid email address "${email}"`);
  return value;
}

export function emailDomain(email: string): string {
  return email.slice(email.lastIndexOf('@') + 1).toLowerCase();
}

/**
 * Creates a user with an API token. Pending email invitations for that address become
 * memberships in the same transaction, so an invited person is a member from their first request.
 */
export async function createUser(
  db: Db,
  input: { email: string; name: string },
): Promise<{ user: UserRow; token: string }> {
  const email = normalizeEmail(input.email);
  const name = input.name.trim();
  if (name.length < 1 || name.length > 64) throw new BadRequestError('Name must be 1 to 64 characters');
  try {
    return await db.transaction().execute(async (trx) => {
      const now = new Date();
      const user = await trx
        .insertInto('users')
        .values({ id: newId(), email, display_name: name, photo_url: null, created_at: now })
        .returningAll()
        .executeTakeFirstOrThrow();
      const invites = await trx.deleteFrom('email_invites').where('email', '=', email).returningAll().execute();
      for (const invite of invites) {
        await trx
          .insertInto('members')
          .values({
            organization_id: invite.organization_id,
            user_id: user.id,
            role: invite.role,
            sso: invite.sso,
            joined_at: now,
            last_seen_at: null,
          })
          .onConflict((oc) => oc.doNothing())
          .execute();
      }
      const token = await createApiToken(trx, user.id);
      return { user, token };
    });
  } catch (err) {
    if (isUniqueViolation(err)) throw new ConflictError(`A user with email ${email} already exists`);
    throw err;
  }
}

export async function findUserByIdOrEmail(db: Db, idOrEmail: string): Promise<UserRow | undefined> {
  const query = db.selectFrom('users').selectAll();
  return idOrEmail.includes('@')
    ? query.where(sql`lower(email)`, '=', idOrEmail.trim().toLowerCase()).executeTakeFirst()
    : query.where('id', '=', idOrEmail).executeTakeFirst();
}

/**
 * A user is visible to the caller when it is the caller or shares an organization with them;
 * anyone else is reported as not found, so ids cannot be probed.
 */
export async function getVisibleUser(ctx: Ctx, userId: string): Promise<UserRow> {
  if (userId === ctx.user.id) return ctx.user;
  const user = await ctx.db
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
          .where('mine.user_id', '=', ctx.user.id),
      ),
    )
    .executeTakeFirst();
  if (!user) throw new NotFoundError('User');
  return user;
}

export async function updateUser(ctx: Ctx, userId: string, patch: { displayName?: string; photoURL?: string }): Promise<UserRow> {
  if (userId !== ctx.user.id) {
    await getVisibleUser(ctx, userId);
    throw new ForbiddenError('Only the user themselves can change their profile');
  }
  if (patch.displayName === undefined && patch.photoURL === undefined) {
    throw new BadRequestError('Nothing to update: send displayName and/or photoURL');
  }
  const user = await ctx.db
    .updateTable('users')
    .set({
      ...(patch.displayName !== undefined ? { display_name: patch.displayName.trim() } : {}),
      ...(patch.photoURL !== undefined ? { photo_url: patch.photoURL } : {}),
    })
    .where('id', '=', userId)
    .returningAll()
    .executeTakeFirstOrThrow();
  // Drop cached profiles after the change (a request racing it can keep the old one for one TTL at most).
  ctx.tokenCache.clear();
  return user;
}

/** The users named by a page of records, in one query (ids may repeat or be null). */
export async function usersById(db: Db, ids: (string | null)[]): Promise<Map<string, UserRow>> {
  const wanted = [...new Set(ids.filter((i): i is string => !!i))];
  if (!wanted.length) return new Map();
  const rows = await db.selectFrom('users').selectAll().where('id', 'in', wanted).execute();
  return new Map(rows.map((u) => [u.id, u]));
}
