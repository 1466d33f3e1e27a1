import { sql, type Expression, type SqlBool } from 'kysely';
import type { Db } from '../platform/db/database.ts';
import type { TeamMemberRole } from '../platform/db/schema.ts';
import { teamGrantedSpaces } from '../access/store.ts';

/** C0 control characters and DEL: never part of a title, an id or an email. */
export const CONTROL_CHARS = /[\u0000-\u001f\u007f]/;

/** A team with the counts the Team resource carries and the caller's role in it. */
export interface TeamView {
  id: string;
  seq: number;
  organization_id: string;
  title: string;
  created_at: Date;
  member_count: number;
  space_count: number;
  /** The caller's role in the team; null when the caller is not in it. */
  caller_role: TeamMemberRole | null;
}

/**
 * Base query for teams of one organization (the organization id is required: no query can read
 * teams across organizations). Counts are computed, not stored, so they are always true.
 */
export function teamsOf(db: Db, organizationId: string, callerId: string) {
  return db
    .selectFrom('teams')
    .select(['teams.id', 'teams.seq', 'teams.organization_id', 'teams.title', 'teams.created_at'])
    .select([
      sql<number>`(SELECT count(*)::int FROM team_members tm WHERE tm.organization_id = teams.organization_id AND tm.team_id = teams.id)`.as(
        'member_count',
      ),
      sql<number>`(SELECT count(*)::int FROM spaces WHERE spaces.organization_id = ${organizationId} AND spaces.deleted_at IS NULL
        AND ${teamGrantedSpaces(organizationId, sql.ref('teams.id'))})`.as('space_count'),
      sql<TeamMemberRole | null>`(SELECT tm.role FROM team_members tm WHERE tm.organization_id = teams.organization_id AND tm.team_id = teams.id AND tm.user_id = ${callerId})`.as(
        'caller_role',
      ),
    ])
    .where('teams.organization_id', '=', organizationId);
}

export async function findTeam(db: Db, organizationId: string, teamId: string, callerId: string): Promise<TeamView | undefined> {
  return teamsOf(db, organizationId, callerId).where('teams.id', '=', teamId).executeTakeFirst();
}

/** Condition on `teams`: the user is an owner of the team. */
export function ownedBy(userId: string): Expression<SqlBool> {
  return sql<SqlBool>`EXISTS (SELECT 1 FROM team_members tm WHERE tm.organization_id = teams.organization_id AND tm.team_id = teams.id AND tm.user_id = ${userId} AND tm.role = 'owner')`;
}

/** Condition on `teams`: the title contains `text`, ignoring case; `%`, `_` and `\` match themselves. */
export function titleContains(text: string): Expression<SqlBool> {
  const pattern = `%${text.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
  return sql<SqlBool>`teams.title ILIKE ${pattern} ESCAPE '\\'`;
}

/**
 * Locks the team for the rest of the transaction and returns the given user's role in it:
 * `undefined` when the team is not in the organization, null when the user is not in the team.
 * The lock serializes changes of one team's members (two requests upserting the same users in
 * different orders would otherwise deadlock) and keeps the team from being deleted meanwhile.
 */
export async function lockTeam(
  trx: Db,
  organizationId: string,
  teamId: string,
  userId: string,
): Promise<{ role: TeamMemberRole | null } | undefined> {
  const team = await trx
    .selectFrom('teams')
    .select('id')
    .where('organization_id', '=', organizationId)
    .where('id', '=', teamId)
    .forNoKeyUpdate()
    .executeTakeFirst();
  if (!team) return undefined;
  const membership = await trx
    .selectFrom('team_members')
    .select('role')
    .where('organization_id', '=', organizationId)
    .where('team_id', '=', teamId)
    .where('user_id', '=', userId)
    .executeTakeFirst();
  return { role: membership?.role ?? null };
}

/**
 * Resolves user ids and emails (case-insensitive) to members of the organization. The member rows
 * are locked until the transaction ends, so nobody can leave the organization between this check
 * and the team changes that rely on it. Returns each reference with its user id, or without one
 * when it names no member of the organization.
 */
export async function resolveMembers(trx: Db, organizationId: string, refs: readonly string[]): Promise<Map<string, string | undefined>> {
  // A reference with control characters names nobody (and PostgreSQL refuses NUL in text).
  const usable = refs.filter((r) => !CONTROL_CHARS.test(r));
  const ids = [...new Set(usable.filter((r) => !r.includes('@')))];
  const emails = [...new Set(usable.filter((r) => r.includes('@')).map((r) => r.trim().toLowerCase()))];
  const result = new Map<string, string | undefined>(refs.map((r) => [r, undefined]));
  if (ids.length === 0 && emails.length === 0) return result;
  const rows = await trx
    .selectFrom('members')
    .innerJoin('users', 'users.id', 'members.user_id')
    .select(['members.user_id', 'users.email'])
    .where('members.organization_id', '=', organizationId)
    .where((eb) =>
      eb.or([
        ...(ids.length ? [eb('members.user_id', 'in', ids)] : []),
        ...(emails.length ? [eb(sql<string>`lower(users.email)`, 'in', emails)] : []),
      ]),
    )
    .forKeyShare('members')
    .execute();
  const byId = new Map(rows.map((r) => [r.user_id, r.user_id]));
  const byEmail = new Map(rows.map((r) => [r.email.toLowerCase(), r.user_id]));
  for (const ref of usable) {
    result.set(ref, ref.includes('@') ? byEmail.get(ref.trim().toLowerCase()) : byId.get(ref));
  }
  return result;
}

/** Adds users to a team. With a role, a user already in the team takes that role; without, keeps theirs. */
export async function upsertTeamMembers(
  trx: Db,
  organizationId: string,
  teamId: string,
  entries: { userId: string; role: TeamMemberRole | undefined }[],
): Promise<void> {
  const now = new Date();
  const row = (e: { userId: string; role: TeamMemberRole | undefined }) => ({
    team_id: teamId,
    organization_id: organizationId,
    user_id: e.userId,
    role: e.role ?? 'member',
    added_at: now,
  });
  const withRole = entries.filter((e) => e.role !== undefined);
  const withoutRole = entries.filter((e) => e.role === undefined);
  if (withRole.length) {
    await trx
      .insertInto('team_members')
      .values(withRole.map(row))
      .onConflict((oc) => oc.columns(['team_id', 'user_id']).doUpdateSet((eb) => ({ role: eb.ref('excluded.role') })))
      .execute();
  }
  if (withoutRole.length) {
    await trx
      .insertInto('team_members')
      .values(withoutRole.map(row))
      .onConflict((oc) => oc.columns(['team_id', 'user_id']).doNothing())
      .execute();
  }
}

export async function removeTeamMembers(trx: Db, organizationId: string, teamId: string, userIds: string[]): Promise<void> {
  if (userIds.length === 0) return;
  await trx
    .deleteFrom('team_members')
    .where('organization_id', '=', organizationId)
    .where('team_id', '=', teamId)
    .where('user_id', 'in', userIds)
    .execute();
}
