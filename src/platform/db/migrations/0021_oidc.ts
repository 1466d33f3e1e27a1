import { sql, type Kysely } from 'kysely';

/**
 * Single sign-on with OpenID Connect, beside SAML: the providers of each organization (issuer,
 * client id, client secret encrypted like git credentials), the sign-ins Folio started (state,
 * nonce and PKCE verifier kept server-side until the callback consumes them, bound to the browser
 * by the hash of a cookie), and the link between a provider's subject (`sub`) and a Folio user.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await sql`
    CREATE TABLE oidc_providers (
      id text PRIMARY KEY,
      seq bigint GENERATED ALWAYS AS IDENTITY UNIQUE,
      organization_id text NOT NULL REFERENCES organizations(id) ON DELETE CASCADE,
      label text NOT NULL,
      issuer text,
      client_id text,
      client_secret_sealed text,
      enabled boolean NOT NULL DEFAULT true,
      default_team text REFERENCES teams(id) ON DELETE SET NULL,
      default_role text,
      created_at timestamptz(3) NOT NULL,
      updated_at timestamptz(3) NOT NULL
    );
    CREATE INDEX oidc_providers_org ON oidc_providers (organization_id, seq);

    CREATE TABLE oidc_requests (
      state text PRIMARY KEY,
      provider_id text NOT NULL REFERENCES oidc_providers(id) ON DELETE CASCADE,
      nonce text NOT NULL,
      code_verifier text NOT NULL,
      browser_hash text NOT NULL,
      next_path text,
      created_at timestamptz(3) NOT NULL,
      expires_at timestamptz(3) NOT NULL,
      consumed_at timestamptz(3)
    );
    CREATE INDEX oidc_requests_expiry ON oidc_requests (expires_at);

    CREATE TABLE oidc_identities (
      provider_id text NOT NULL REFERENCES oidc_providers(id) ON DELETE CASCADE,
      subject text NOT NULL,
      user_id text NOT NULL REFERENCES users(id) ON DELETE CASCADE,
      created_at timestamptz(3) NOT NULL,
      PRIMARY KEY (provider_id, subject)
    );
  `.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`
    DROP TABLE oidc_identities;
    DROP TABLE oidc_requests;
    DROP TABLE oidc_providers;
  `.execute(db);
}
