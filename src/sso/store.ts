import { sql } from 'kysely';
import type { Db } from '../platform/db/database.ts';
import type { RoleOrGuest, SamlProviderRow, UserRow } from '../platform/db/schema.ts';
import { newId } from '../platform/ids.ts';
import { paginate, type PageRequest } from '../platform/paging.ts';

/**
 * The SQL of single sign-on: providers (each of one organization), the authentication requests
 * and assertions of a provider, and what a sign-in writes (identity, membership, default team).
 * (The service provider's own key pair is an instance setting: platform/settings.ts.)
 */

export type ProviderFields = Partial<Pick<SamlProviderRow, 'label' | 'entity_id' | 'certificate' | 'sso_url' | 'default_team' | 'default_role'>>;

export async function findProvider(db: Db, organizationId: string, providerId: string): Promise<SamlProviderRow | undefined> {
  return db.selectFrom('saml_providers').selectAll().where('organization_id', '=', organizationId).where('id', '=', providerId).executeTakeFirst();
}

/**
 * A provider by id alone, with the organization it belongs to: for the sign-in pages, where the
 * provider's id in the URL is what names the organization.
 */
export async function findProviderById(db: Db, providerId: string): Promise<SamlProviderRow | undefined> {
  return db.selectFrom('saml_providers').selectAll().where('id', '=', providerId).executeTakeFirst();
}

export async function insertProvider(db: Db, organizationId: string, fields: ProviderFields & { label: string; default_role: RoleOrGuest }): Promise<SamlProviderRow> {
  const now = new Date();
  return db
    .insertInto('saml_providers')
    .values({
      id: newId(),
      organization_id: organizationId,
      label: fields.label,
      entity_id: fields.entity_id ?? null,
      certificate: fields.certificate ?? null,
      sso_url: fields.sso_url ?? null,
      default_team: fields.default_team ?? null,
      default_role: fields.default_role,
      created_at: now,
      updated_at: now,
    })
    .returningAll()
    .executeTakeFirstOrThrow();
}

export async function updateProvider(db: Db, organizationId: string, providerId: string, fields: ProviderFields): Promise<SamlProviderRow | undefined> {
  return db
    .updateTable('saml_providers')
    .set({ ...fields, updated_at: new Date() })
    .where('organization_id', '=', organizationId)
    .where('id', '=', providerId)
    .returningAll()
    .executeTakeFirst();
}

/** Deletes a provider; its pending requests and identities go with it (foreign keys cascade). */
export async function deleteProvider(db: Db, organizationId: string, providerId: string): Promise<void> {
  await db.deleteFrom('saml_providers').where('organization_id', '=', organizationId).where('id', '=', providerId).execute();
}

export async function listProviders(db: Db, organizationId: string, page: PageRequest) {
  return paginate(
    db.selectFrom('saml_providers').selectAll().where('organization_id', '=', organizationId),
    { kind: 'saml-providers', sortExpr: null, seqExpr: sql.ref('saml_providers.seq'), direction: 'asc' },
    page,
  );
}

/** Every provider of the organization in the order they were added (at most 1,000: a login page). */
export async function allProviders(db: Db, organizationId: string): Promise<SamlProviderRow[]> {
  return db.selectFrom('saml_providers').selectAll().where('organization_id', '=', organizationId).orderBy('seq').limit(1000).execute();
}

/** Whether the team is a team of the organization (a provider's default team must be). */
export async function teamExists(db: Db, organizationId: string, teamId: string): Promise<boolean> {
  const team = await db.selectFrom('teams').select('id').where('organization_id', '=', organizationId).where('id', '=', teamId).executeTakeFirst();
  return team !== undefined;
}

/** The title of the organization a sign-in session belongs to. */
export async function organizationTitle(db: Db, organizationId: string): Promise<string | undefined> {
  return (await db.selectFrom('organizations').select('title').where('id', '=', organizationId).executeTakeFirst())?.title;
}

// Authentication requests and assertions, each of one provider.

export async function saveRequest(db: Db, providerId: string, requestId: string, createdAt: Date, expiresAt: Date): Promise<void> {
  await db.insertInto('saml_requests').values({ id: requestId, provider_id: providerId, created_at: createdAt, expires_at: expiresAt, consumed_at: null }).execute();
}

/** When a request of the provider that is neither answered nor expired was made. */
export async function pendingRequestCreatedAt(db: Db, providerId: string, requestId: string): Promise<Date | undefined> {
  const row = await db
    .selectFrom('saml_requests')
    .select('created_at')
    .where('id', '=', requestId)
    .where('provider_id', '=', providerId)
    .where('consumed_at', 'is', null)
    .where('expires_at', '>', new Date())
    .executeTakeFirst();
  return row?.created_at;
}

/** Drops requests that expired before `before`, of every provider, so the table stays small. */
export async function dropExpiredRequests(db: Db, before: Date): Promise<void> {
  await db.deleteFrom('saml_requests').where('expires_at', '<', before).execute();
}

/** Marks a pending request answered, atomically; false when it was answered already or expired. */
export async function consumeRequest(trx: Db, providerId: string, requestId: string, now: Date): Promise<boolean> {
  const consumed = await trx
    .updateTable('saml_requests')
    .set({ consumed_at: now })
    .where('id', '=', requestId)
    .where('provider_id', '=', providerId)
    .where('consumed_at', 'is', null)
    .where('expires_at', '>', now)
    .returning('id')
    .executeTakeFirst();
  return consumed !== undefined;
}

/** Records an assertion as seen (a unique violation means a replay), and drops the expired ones. */
export async function recordAssertion(trx: Db, providerId: string, assertionId: string, expiresAt: Date, now: Date): Promise<void> {
  await trx.insertInto('saml_assertions').values({ provider_id: providerId, assertion_id: assertionId, expires_at: expiresAt }).execute();
  await trx.deleteFrom('saml_assertions').where('expires_at', '<', now).execute();
}

// What a sign-in reads and writes.

/** The user the provider's NameID signed in as before, if any. */
export async function linkedUser(trx: Db, providerId: string, nameId: string): Promise<UserRow | undefined> {
  return trx
    .selectFrom('saml_identities')
    .innerJoin('users', 'users.id', 'saml_identities.user_id')
    .selectAll('users')
    .where('saml_identities.provider_id', '=', providerId)
    .where('saml_identities.name_id', '=', nameId)
    .executeTakeFirst();
}

/** The account of an email (lower case), locked for the rest of the transaction. */
export async function lockUserByEmail(trx: Db, email: string): Promise<UserRow | undefined> {
  return trx.selectFrom('users').selectAll().where(sql`lower(email)`, '=', email).forUpdate().executeTakeFirst();
}

/** The organizations a user is a member of. */
export async function organizationsOf(trx: Db, userId: string): Promise<string[]> {
  return (await trx.selectFrom('members').select('organization_id').where('user_id', '=', userId).execute()).map((m) => m.organization_id);
}

export async function insertUser(trx: Db, email: string, displayName: string): Promise<UserRow> {
  return trx
    .insertInto('users')
    .values({ id: newId(), email, display_name: displayName, photo_url: null, created_at: new Date() })
    .returningAll()
    .executeTakeFirstOrThrow();
}

export async function linkIdentity(trx: Db, providerId: string, nameId: string, userId: string, now: Date): Promise<void> {
  await trx
    .insertInto('saml_identities')
    .values({ provider_id: providerId, name_id: nameId, user_id: userId, created_at: now })
    .onConflict((oc) => oc.columns(['provider_id', 'name_id']).doNothing())
    .execute();
}

export async function membershipOf(trx: Db, organizationId: string, userId: string): Promise<{ disabled: boolean } | undefined> {
  return trx.selectFrom('members').select(['disabled']).where('organization_id', '=', organizationId).where('user_id', '=', userId).executeTakeFirst();
}

/** Marks an existing member as signed in through SSO. */
export async function markSsoMember(trx: Db, organizationId: string, userId: string): Promise<void> {
  await trx.updateTable('members').set({ sso: true }).where('organization_id', '=', organizationId).where('user_id', '=', userId).execute();
}

/** Adds a member who arrived through SSO. */
export async function insertSsoMember(trx: Db, organizationId: string, userId: string, role: RoleOrGuest, now: Date): Promise<void> {
  await trx.insertInto('members').values({ organization_id: organizationId, user_id: userId, role, sso: true, joined_at: now, last_seen_at: now }).execute();
}

/** Adds the user to the team (a provider's default team) unless they are in it already. */
export async function joinTeam(trx: Db, organizationId: string, teamId: string, userId: string, now: Date): Promise<void> {
  await trx
    .insertInto('team_members')
    .values({ team_id: teamId, organization_id: organizationId, user_id: userId, role: 'member', added_at: now })
    .onConflict((oc) => oc.columns(['team_id', 'user_id']).doNothing())
    .execute();
}
