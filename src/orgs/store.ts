import { sql } from 'kysely';
import { json, type Db } from '../platform/db/database.ts';
import type { MergeRules, OrganizationRow, OrganizationUpdate, RoleOrGuest } from '../platform/db/schema.ts';
import { newId } from '../platform/ids.ts';
import { paginate, type PageRequest } from '../platform/paging.ts';

/**
 * The SQL of organizations, their agent instructions and the caller's own memberships. Queries
 * across organizations read only those the user belongs to, or those accepting an email domain.
 */

const EMPTY_DOCUMENT = { object: 'document', data: { schemaVersion: 1 }, nodes: [] };

/** Inserts an organization with its first admin and empty agent instructions. */
export async function insertOrganization(
  db: Db,
  input: { title: string; emailDomains: string[]; adminId: string; now: Date },
): Promise<OrganizationRow> {
  const org = await db
    .insertInto('organizations')
    .values({
      id: newId(),
      title: input.title,
      email_domains: json(input.emailDomains),
      hostname: null,
      use_case: null,
      community_type: null,
      default_role: 'read',
      default_content: null,
      logo: null,
      merge_rules: json<MergeRules>({ type: 'none' }),
      created_at: input.now,
    })
    .returningAll()
    .executeTakeFirstOrThrow();
  await db
    .insertInto('members')
    .values({ organization_id: org.id, user_id: input.adminId, role: 'admin', joined_at: input.now, last_seen_at: input.now })
    .execute();
  await db
    .insertInto('agent_instructions')
    .values({ organization_id: org.id, instructions: json(EMPTY_DOCUMENT), updated_at: input.now, updated_by: input.adminId })
    .execute();
  return org;
}

/** A page of the organizations the user is an enabled member of, in the order they were created. */
export async function listOrganizationsOf(db: Db, userId: string, page: PageRequest) {
  const base = db
    .selectFrom('organizations')
    .innerJoin('members', 'members.organization_id', 'organizations.id')
    .selectAll('organizations')
    .select((eb) => [
      'members.role as member_role',
      eb
        .exists(
          eb
            .selectFrom('team_members')
            .select(sql`1`.as('one'))
            .whereRef('team_members.organization_id', '=', 'organizations.id')
            .where('team_members.user_id', '=', userId)
            .where('team_members.role', '=', 'owner'),
        )
        .as('owns_team'),
    ])
    .where('members.user_id', '=', userId)
    .where('members.disabled', '=', false);
  return paginate(base, { kind: 'orgs', sortExpr: null, seqExpr: sql.ref('organizations.seq'), direction: 'asc' }, page);
}

export async function findOrganization(db: Db, organizationId: string): Promise<OrganizationRow | undefined> {
  return db.selectFrom('organizations').selectAll().where('id', '=', organizationId).executeTakeFirst();
}

/** Applies a change (none: reads the organization as it is) and returns the organization. */
export async function updateOrganizationRow(db: Db, organizationId: string, patch: OrganizationUpdate): Promise<OrganizationRow> {
  return Object.keys(patch).length === 0
    ? db.selectFrom('organizations').selectAll().where('id', '=', organizationId).executeTakeFirstOrThrow()
    : db.updateTable('organizations').set(patch).where('id', '=', organizationId).returningAll().executeTakeFirstOrThrow();
}

/** Whether the user is a member (enabled or not) of the organization. */
export async function isMember(db: Db, organizationId: string, userId: string): Promise<boolean> {
  const row = await db
    .selectFrom('members')
    .select('user_id')
    .where('organization_id', '=', organizationId)
    .where('user_id', '=', userId)
    .executeTakeFirst();
  return !!row;
}

/** Adds a member unless they already are one. */
export async function addMember(db: Db, organizationId: string, userId: string, role: RoleOrGuest): Promise<void> {
  await db
    .insertInto('members')
    .values({ organization_id: organizationId, user_id: userId, role, joined_at: new Date(), last_seen_at: null })
    .onConflict((oc) => oc.doNothing())
    .execute();
}

/**
 * Organizations accepting an email domain (at most 1,000, in creation order), with the user's
 * membership in each; with `membersOnly`, only those the user belongs to.
 */
export async function organizationsAccepting(db: Db, domain: string, userId: string, membersOnly: boolean) {
  return db
    .selectFrom('organizations')
    .leftJoin('members', (join) => join.onRef('members.organization_id', '=', 'organizations.id').on('members.user_id', '=', userId))
    .selectAll('organizations')
    .select('members.role as member_role')
    .select('members.user_id as member_user')
    .where(sql<boolean>`organizations.email_domains @> ${JSON.stringify([domain])}::jsonb`)
    .$if(membersOnly, (q) => q.where('members.user_id', 'is not', null))
    .orderBy('organizations.seq')
    .limit(1000)
    .execute();
}

export async function touchMember(db: Db, organizationId: string, userId: string, now: Date): Promise<void> {
  await db.updateTable('members').set({ last_seen_at: now }).where('organization_id', '=', organizationId).where('user_id', '=', userId).execute();
}

export async function agentInstructions(db: Db, organizationId: string) {
  return db.selectFrom('agent_instructions').selectAll().where('organization_id', '=', organizationId).executeTakeFirstOrThrow();
}

export async function setAgentInstructions(db: Db, organizationId: string, instructions: unknown, updatedBy: string) {
  return db
    .updateTable('agent_instructions')
    .set({ instructions: json(instructions), updated_at: new Date(), updated_by: updatedBy })
    .where('organization_id', '=', organizationId)
    .returningAll()
    .executeTakeFirstOrThrow();
}
