import { sql } from 'kysely';
import type { Db } from '../platform/db/database.ts';
import type { OidcProviderRow, OidcRequestRow, RoleOrGuest, UserRow } from '../platform/db/schema.ts';
import { newId } from '../platform/ids.ts';
import { paginate, type PageRequest } from '../platform/paging.ts';

/**
 * The SQL of OpenID Connect sign-in: providers (each of one organization), the sign-ins started
 * (state, nonce, PKCE verifier) and the link between a provider's subject and a Folio user. What a
 * sign-in writes beyond that (user, membership, session) is shared with SAML (store.ts).
 */

export type OidcProviderFields = Partial<
  Pick<OidcProviderRow, 'label' | 'issuer' | 'client_id' | 'client_secret_sealed' | 'enabled' | 'default_team' | 'default_role'>
>;

export async function findProvider(db: Db, organizationId: string, providerId: string): Promise<OidcProviderRow | undefined> {
  return db.selectFrom('oidc_providers').selectAll().where('organization_id', '=', organizationId).where('id', '=', providerId).executeTakeFirst();
}

/** A provider by id alone: on the sign-in pages the provider's id in the URL names the organization. */
export async function findProviderById(db: Db, providerId: string): Promise<OidcProviderRow | undefined> {
  return db.selectFrom('oidc_providers').selectAll().where('id', '=', providerId).executeTakeFirst();
}

export async function insertProvider(db: Db, organizationId: string, fields: OidcProviderFields & { label: string; default_role: RoleOrGuest }): Promise<OidcProviderRow> {
  const now = new Date();
  return db
    .insertInto('oidc_providers')
    .values({
      id: newId(),
      organization_id: organizationId,
      label: fields.label,
      issuer: fields.issuer ?? null,
      client_id: fields.client_id ?? null,
      client_secret_sealed: fields.client_secret_sealed ?? null,
      enabled: fields.enabled ?? true,
      default_team: fields.default_team ?? null,
      default_role: fields.default_role,
      created_at: now,
      updated_at: now,
    })
    .returningAll()
    .executeTakeFirstOrThrow();
}

export async function updateProvider(db: Db, organizationId: string, providerId: string, fields: OidcProviderFields): Promise<OidcProviderRow | undefined> {
  return db
    .updateTable('oidc_providers')
    .set({ ...fields, updated_at: new Date() })
    .where('organization_id', '=', organizationId)
    .where('id', '=', providerId)
    .returningAll()
    .executeTakeFirst();
}

/** Deletes a provider; its pending sign-ins and identities go with it (foreign keys cascade). */
export async function deleteProvider(db: Db, organizationId: string, providerId: string): Promise<void> {
  await db.deleteFrom('oidc_providers').where('organization_id', '=', organizationId).where('id', '=', providerId).execute();
}

export async function listProviders(db: Db, organizationId: string, page: PageRequest) {
  return paginate(
    db.selectFrom('oidc_providers').selectAll().where('organization_id', '=', organizationId),
    { kind: 'oidc-providers', sortExpr: null, seqExpr: sql.ref('oidc_providers.seq'), direction: 'asc' },
    page,
  );
}

/** Every provider of the organization in the order they were added (at most 1,000: a login page). */
export async function allProviders(db: Db, organizationId: string): Promise<OidcProviderRow[]> {
  return db.selectFrom('oidc_providers').selectAll().where('organization_id', '=', organizationId).orderBy('seq').limit(1000).execute();
}

// Sign-ins started, each of one provider.

export async function saveRequest(db: Db, row: Omit<OidcRequestRow, 'consumed_at'>): Promise<void> {
  await db.insertInto('oidc_requests').values({ ...row, consumed_at: null }).execute();
}

/** Drops sign-ins that expired before `before`, of every provider, so the table stays small. */
export async function dropExpiredRequests(db: Db, before: Date): Promise<void> {
  await db.deleteFrom('oidc_requests').where('expires_at', '<', before).execute();
}

/**
 * Marks the pending sign-in of `state` used, atomically, and returns it; undefined when there is
 * none for this provider, it was used already or it expired. A state is good for one callback.
 */
export async function consumeRequest(db: Db, providerId: string, state: string, now: Date): Promise<OidcRequestRow | undefined> {
  return db
    .updateTable('oidc_requests')
    .set({ consumed_at: now })
    .where('state', '=', state)
    .where('provider_id', '=', providerId)
    .where('consumed_at', 'is', null)
    .where('expires_at', '>', now)
    .returningAll()
    .executeTakeFirst();
}

// Identities.

/** The user the provider's subject signed in as before, if any. */
export async function linkedUser(trx: Db, providerId: string, subject: string): Promise<UserRow | undefined> {
  return trx
    .selectFrom('oidc_identities')
    .innerJoin('users', 'users.id', 'oidc_identities.user_id')
    .selectAll('users')
    .where('oidc_identities.provider_id', '=', providerId)
    .where('oidc_identities.subject', '=', subject)
    .executeTakeFirst();
}

export async function linkIdentity(trx: Db, providerId: string, subject: string, userId: string, now: Date): Promise<void> {
  await trx
    .insertInto('oidc_identities')
    .values({ provider_id: providerId, subject, user_id: userId, created_at: now })
    .onConflict((oc) => oc.columns(['provider_id', 'subject']).doNothing())
    .execute();
}
