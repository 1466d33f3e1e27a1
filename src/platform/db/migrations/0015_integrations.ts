import { sql, type Kysely } from 'kysely';

/**
 * Integrations: the registry (published by an organization, one row per name, `version` bumped on
 * every publish), installations on organizations and their spaces, installation tokens (hashes
 * only), and the event outbox: events are written in the transaction of the change that caused
 * them and delivered in order per installation by the job workers.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await sql`
    CREATE TABLE integrations (
      id text PRIMARY KEY,
      seq bigint GENERATED ALWAYS AS IDENTITY UNIQUE,
      name text NOT NULL UNIQUE,
      organization_id text NOT NULL REFERENCES organizations(id) ON DELETE CASCADE,
      bot_user_id text NOT NULL REFERENCES users(id),
      version integer NOT NULL DEFAULT 1,
      runtime text NOT NULL DEFAULT 'v1',
      title text NOT NULL,
      description text NOT NULL DEFAULT '',
      summary text NOT NULL DEFAULT '',
      visibility text NOT NULL DEFAULT 'private',
      target text NOT NULL DEFAULT 'all',
      scopes jsonb NOT NULL DEFAULT '[]',
      categories jsonb NOT NULL DEFAULT '[]',
      blocks jsonb NOT NULL DEFAULT '[]',
      content_sources jsonb NOT NULL DEFAULT '[]',
      configurations jsonb NOT NULL DEFAULT '{}',
      external_links jsonb NOT NULL DEFAULT '[]',
      icon text,
      preview_images jsonb NOT NULL DEFAULT '[]',
      script text,
      secrets_encrypted text,
      content_security_policy jsonb,
      dev_tunnel_url text,
      dev_all boolean NOT NULL DEFAULT false,
      created_at timestamptz(3) NOT NULL,
      updated_at timestamptz(3) NOT NULL
    );
    CREATE INDEX integrations_org ON integrations(organization_id);
    CREATE TABLE integration_installations (
      id text PRIMARY KEY,
      seq bigint GENERATED ALWAYS AS IDENTITY UNIQUE,
      integration_id text NOT NULL REFERENCES integrations(id) ON DELETE CASCADE,
      organization_id text NOT NULL REFERENCES organizations(id) ON DELETE CASCADE,
      status text NOT NULL,
      space_selection text NOT NULL DEFAULT 'selected',
      site_selection text NOT NULL DEFAULT 'selected',
      configuration jsonb NOT NULL DEFAULT '{}',
      external_ids jsonb NOT NULL DEFAULT '[]',
      created_at timestamptz(3) NOT NULL,
      updated_at timestamptz(3) NOT NULL,
      UNIQUE (integration_id, organization_id)
    );
    CREATE INDEX integration_installations_org ON integration_installations(organization_id);
    CREATE TABLE integration_space_installations (
      installation_id text NOT NULL REFERENCES integration_installations(id) ON DELETE CASCADE,
      space_id text NOT NULL REFERENCES spaces(id) ON DELETE CASCADE,
      seq bigint GENERATED ALWAYS AS IDENTITY UNIQUE,
      status text NOT NULL,
      configuration jsonb NOT NULL DEFAULT '{}',
      external_ids jsonb NOT NULL DEFAULT '[]',
      created_at timestamptz(3) NOT NULL,
      updated_at timestamptz(3) NOT NULL,
      PRIMARY KEY (installation_id, space_id)
    );
    CREATE INDEX integration_space_installations_space ON integration_space_installations(space_id);
    CREATE TABLE integration_site_installations (
      installation_id text NOT NULL REFERENCES integration_installations(id) ON DELETE CASCADE,
      site_id text NOT NULL REFERENCES sites(id) ON DELETE CASCADE,
      seq bigint GENERATED ALWAYS AS IDENTITY UNIQUE,
      status text NOT NULL,
      configuration jsonb NOT NULL DEFAULT '{}',
      external_ids jsonb NOT NULL DEFAULT '[]',
      created_at timestamptz(3) NOT NULL,
      updated_at timestamptz(3) NOT NULL,
      PRIMARY KEY (installation_id, site_id)
    );
    CREATE INDEX integration_site_installations_site ON integration_site_installations(site_id);
    CREATE TABLE integration_tokens (
      token_hash text PRIMARY KEY,
      integration_id text NOT NULL REFERENCES integrations(id) ON DELETE CASCADE,
      installation_id text REFERENCES integration_installations(id) ON DELETE CASCADE,
      created_at timestamptz(3) NOT NULL,
      expires_at timestamptz(3) NOT NULL
    );
    CREATE INDEX integration_tokens_expiry ON integration_tokens(expires_at);
    CREATE TABLE integration_events (
      id text PRIMARY KEY,
      seq bigint GENERATED ALWAYS AS IDENTITY UNIQUE,
      integration_id text NOT NULL REFERENCES integrations(id) ON DELETE CASCADE,
      -- No foreign key: installation_deleted is delivered after the installation is gone.
      installation_id text,
      space_id text,
      payload jsonb NOT NULL,
      status text NOT NULL DEFAULT 'pending',
      attempts integer NOT NULL DEFAULT 0,
      next_attempt_at timestamptz(3) NOT NULL,
      logs jsonb NOT NULL DEFAULT '[]',
      created_at timestamptz(3) NOT NULL,
      delivered_at timestamptz(3)
    );
    CREATE INDEX integration_events_pending ON integration_events(installation_id, seq) WHERE status = 'pending';
    CREATE INDEX integration_events_list ON integration_events(integration_id, seq);
    CREATE INDEX integration_events_created ON integration_events(created_at);
    CREATE TABLE integration_delivery_leases (
      installation_id text PRIMARY KEY,
      until timestamptz(3) NOT NULL
    );
  `.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`DROP TABLE integration_delivery_leases, integration_events, integration_tokens, integration_site_installations, integration_space_installations, integration_installations, integrations;`.execute(db);
}
