import { sql } from 'kysely';
import type { Db } from '../platform/db/database.ts';
import type { RoleOrGuest } from '../platform/db/schema.ts';
import { guestVisibleSpaces } from '../access/store.ts';

/** A member joined with their user and the counts the Member resource carries. */
export interface MemberView {
  organization_id: string;
  user_id: string;
  seq: number;
  role: RoleOrGuest;
  disabled: boolean;
  sso: boolean;
  joined_at: Date;
  last_seen_at: Date | null;
  email: string;
  display_name: string;
  photo_url: string | null;
  team_count: number;
  space_count: number;
}

/**
 * Base query for members of one organization (the organization id is required: no query can
 * read members across organizations). Counts are computed, not stored, so they are always true.
 */
export function membersOf(db: Db, organizationId: string) {
  return db
    .selectFrom('members')
    .innerJoin('users', 'users.id', 'members.user_id')
    .select([
      'members.organization_id',
      'members.user_id',
      'members.seq',
      'members.role',
      'members.disabled',
      'members.sso',
      'members.joined_at',
      'members.last_seen_at',
      'users.email',
      'users.display_name',
      'users.photo_url',
    ])
    .select(
      sql<number>`(SELECT count(*)::int FROM team_members tm WHERE tm.organization_id = members.organization_id AND tm.user_id = members.user_id)`.as(
        'team_count',
      ),
    )
    .select(
      // Members with a role can open every space of the organization; guests only granted ones.
      sql<number>`CASE WHEN members.role IS NOT NULL
        THEN (SELECT COALESCE(max(live), 0) FROM space_counts WHERE space_counts.organization_id = ${organizationId})
        ELSE (SELECT count(*)::int FROM spaces WHERE spaces.organization_id = ${organizationId} AND spaces.deleted_at IS NULL
          AND ${guestVisibleSpaces(organizationId, sql.ref('members.user_id'))}) END`.as('space_count'),
    )
    .where('members.organization_id', '=', organizationId);
}

export async function findMember(db: Db, organizationId: string, userId: string): Promise<MemberView | undefined> {
  return membersOf(db, organizationId).where('members.user_id', '=', userId).executeTakeFirst();
}


/** The organization role of each of the users who are members (guests: null); others are absent. */
export async function memberRoles(db: Db, organizationId: string, userIds: string[]): Promise<Map<string, RoleOrGuest>> {
  if (userIds.length === 0) return new Map();
  const rows = await db.selectFrom('members').select(['user_id', 'role']).where('organization_id', '=', organizationId).where('user_id', 'in', userIds).execute();
  return new Map(rows.map((m) => [m.user_id, m.role]));
}
