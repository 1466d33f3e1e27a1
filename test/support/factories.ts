import type { RoleOrGuest } from '../../src/platform/db/schema.ts';
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
