import { createApiToken } from '../platform/auth.ts';
import type { Db } from '../platform/db/database.ts';
import type { UserRow } from '../platform/db/schema.ts';
import { BadRequestError, ConflictError, ForbiddenError, NotFoundError, isUniqueViolation } from '../platform/errors.ts';
import type { Ctx } from '../platform/context.ts';
import { addMemberOnce, findUserSeenBy, insertUser, takeEmailInvites, updateProfile } from './store.ts';

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
      const user = await insertUser(trx, { email, name, now });
      for (const invite of await takeEmailInvites(trx, email)) {
        await addMemberOnce(trx, invite.organization_id, { userId: user.id, role: invite.role, sso: invite.sso, joinedAt: now });
      }
      const token = await createApiToken(trx, user.id);
      return { user, token };
    });
  } catch (err) {
    if (isUniqueViolation(err)) throw new ConflictError(`A user with email ${email} already exists`);
    throw err;
  }
}

/**
 * A user is visible to the caller when it is the caller or shares an organization with them;
 * anyone else is reported as not found, so ids cannot be probed.
 */
export async function getVisibleUser(ctx: Ctx, userId: string): Promise<UserRow> {
  if (userId === ctx.user.id) return ctx.user;
  const user = await findUserSeenBy(ctx.db, ctx.user.id, userId);
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
  const user = await updateProfile(ctx.db, userId, {
    ...(patch.displayName !== undefined ? { display_name: patch.displayName.trim() } : {}),
    ...(patch.photoURL !== undefined ? { photo_url: patch.photoURL } : {}),
  });
  // Drop cached profiles after the change (a request racing it can keep the old one for one TTL at most).
  ctx.tokenCache.clear();
  return user;
}

