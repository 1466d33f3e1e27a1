import type { Role, RoleOrGuest } from '../../src/platform/db/schema.ts';
import type { TestServer, TestUser } from './server.ts';

/** Puts an existing user into an organization with a role (as an accepted invite would). */
export async function addMember(t: TestServer, organizationId: string, user: TestUser, role: RoleOrGuest, opts: { lastSeenAt?: Date } = {}) {
  await t.server.services.db
    .insertInto('members')
    .values({ organization_id: organizationId, user_id: user.id, role, joined_at: new Date(), last_seen_at: opts.lastSeenAt ?? null })
    .execute();
}

export const ALL_ROLES = ['admin', 'create', 'review', 'edit', 'comment', 'read', null] as const;
export type Persona = (typeof ALL_ROLES)[number] | 'outsider';
export const PERSONAS: Persona[] = [...ALL_ROLES, 'outsider'];

export function personaName(p: Persona): string {
  return p === null ? 'guest' : p;
}

/** An organization with an owner (admin) and one user per persona: every role, a guest and an outsider. */
export async function orgWithPersonas(t: TestServer) {
  const owner = await t.user('Owner');
  const { data: org } = await owner.api.orgs.createOrganization({ title: 'Personas Inc' });
  const people = new Map<Persona, TestUser>();
  for (const persona of PERSONAS) {
    const user = await t.user(`${personaName(persona)} person`);
    if (persona !== 'outsider') await addMember(t, org.id, user, persona);
    people.set(persona, user);
  }
  return { owner, org, people };
}

/** HTTP status of a call through the official client (200-level on success). */
export async function statusOf(promise: Promise<{ status: number }>): Promise<number> {
  try {
    return (await promise).status;
  } catch (err) {
    const status = (err as { response?: Response }).response?.status;
    if (status === undefined) throw err;
    return status;
  }
}

/** An independent copy of the role order, so tests check the server's policy rather than reuse it. */
const RANK: Record<Role, number> = { read: 1, comment: 2, edit: 3, review: 4, create: 5, admin: 6 };
export const atLeast = (role: RoleOrGuest, min: Role) => !!role && RANK[role] >= RANK[min];

/** A fresh organization administered by a new user. */
export async function newOrg(t: TestServer, title = 'Test Inc') {
  const admin = await t.user('Ann Admin');
  const { data: org } = await admin.api.orgs.createOrganization({ title });
  return { admin, org };
}

/** A new user who is a member of the organization with `role` (null: guest). */
export async function newMember(t: TestServer, organizationId: string, role: RoleOrGuest, name = 'Member'): Promise<TestUser> {
  const user = await t.user(name);
  await addMember(t, organizationId, user, role);
  return user;
}

/** Grants a role on a space or collection to a user or a team, straight into the database. */
export async function grantDirect(
  t: TestServer,
  organizationId: string,
  target: { space: string } | { collection: string },
  principal: { user: string } | { team: string },
  role: Role,
) {
  await t.server.services.db
    .insertInto('content_permissions')
    .values({
      organization_id: organizationId,
      target_type: 'space' in target ? 'space' : 'collection',
      target_id: 'space' in target ? target.space : target.collection,
      principal_type: 'user' in principal ? 'user' : 'team',
      principal_id: 'user' in principal ? principal.user : principal.team,
      role,
      created_at: new Date(),
    })
    .execute();
}
