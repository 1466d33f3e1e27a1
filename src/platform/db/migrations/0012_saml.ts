import { sql, type Kysely } from 'kysely';

/**
 * Single sign-on with SAML 2.0: the providers of each organization, the authentication requests
 * Folio sent (a response must answer one of them, once), the assertion ids already accepted (a
 * replayed assertion is refused), the link between a provider's NameID and a Folio user, and the
 * organization an API token was obtained through (SSO enforcement reads it).
 */
export async function up(db: Kysely<any>): Promise<void> {
  await sql`
    CREATE TABLE saml_providers (
      id text PRIMARY KEY,
      seq bigint GENERATED ALWAYS AS IDENTITY UNIQUE,
      organization_id text NOT NULL REFERENCES organizations(id) ON DELETE CASCADE,
      label text NOT NULL,
      entity_id text,
      certificate text,
      sso_url text,
      default_team text REFERENCES teams(id) ON DELETE SET NULL,
      default_role text,
      created_at timestamptz(3) NOT NULL,
      updated_at timestamptz(3) NOT NULL
    );
    CREATE INDEX saml_providers_org ON saml_providers (organization_id, seq);

    CREATE TABLE saml_requests (
      id text PRIMARY KEY,
      provider_id text NOT NULL REFERENCES saml_providers(id) ON DELETE CASCADE,
      created_at timestamptz(3) NOT NULL,
      expires_at timestamptz(3) NOT NULL,
      consumed_at timestamptz(3)
    );
    CREATE INDEX saml_requests_expiry ON saml_requests (expires_at);

    CREATE TABLE saml_assertions (
      provider_id text NOT NULL REFERENCES saml_providers(id) ON DELETE CASCADE,
      assertion_id text NOT NULL,
      expires_at timestamptz(3) NOT NULL,
      PRIMARY KEY (provider_id, assertion_id)
    );
    CREATE INDEX saml_assertions_expiry ON saml_assertions (expires_at);

    CREATE TABLE saml_identities (
      provider_id text NOT NULL REFERENCES saml_providers(id) ON DELETE CASCADE,
      name_id text NOT NULL,
      user_id text NOT NULL REFERENCES users(id) ON DELETE CASCADE,
      created_at timestamptz(3) NOT NULL,
      PRIMARY KEY (provider_id, name_id)
    );

    ALTER TABLE api_tokens ADD COLUMN sso_organization_id text REFERENCES organizations(id) ON DELETE CASCADE;
  `.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`
    ALTER TABLE api_tokens DROP COLUMN sso_organization_id;
    DROP TABLE saml_identities;
    DROP TABLE saml_assertions;
    DROP TABLE saml_requests;
    DROP TABLE saml_providers;
  `.execute(db);
}
