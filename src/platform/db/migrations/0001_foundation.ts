import { sql, type Kysely } from 'kysely';

/**
 * Foundation: users and tokens, organizations, members, teams, invites, settings and jobs.
 *
 * Every timestamp has millisecond precision (timestamptz(3)) so it round-trips through JavaScript
 * dates and keyset cursors exactly. Every listed table has a `seq` identity used as the stable
 * tie-breaker of keyset paging.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await sql`
    CREATE TABLE users (
      id text PRIMARY KEY,
      seq bigint GENERATED ALWAYS AS IDENTITY UNIQUE,
      email text NOT NULL,
      email_verified boolean NOT NULL DEFAULT true,
      display_name text NOT NULL,
      photo_url text,
      created_at timestamptz(3) NOT NULL
    );
    CREATE UNIQUE INDEX users_email_key ON users (lower(email));

    CREATE TABLE api_tokens (
      id text PRIMARY KEY,
      user_id text NOT NULL REFERENCES users(id) ON DELETE CASCADE,
      token_hash text NOT NULL UNIQUE,
      created_at timestamptz(3) NOT NULL
    );
    CREATE INDEX api_tokens_user ON api_tokens (user_id);

    CREATE TABLE organizations (
      id text PRIMARY KEY,
      seq bigint GENERATED ALWAYS AS IDENTITY UNIQUE,
      title text NOT NULL,
      email_domains jsonb NOT NULL DEFAULT '[]',
      hostname text,
      type text NOT NULL DEFAULT 'business',
      use_case text,
      community_type text,
      default_role text,
      default_content jsonb,
      logo text,
      sso boolean NOT NULL DEFAULT false,
      ai boolean NOT NULL DEFAULT false,
      invite_links boolean NOT NULL DEFAULT true,
      merge_rules jsonb NOT NULL DEFAULT '{"type":"none"}',
      created_at timestamptz(3) NOT NULL
    );
    CREATE UNIQUE INDEX organizations_hostname_key ON organizations (lower(hostname));
    CREATE INDEX organizations_email_domains ON organizations USING gin (email_domains jsonb_path_ops);

    CREATE TABLE members (
      organization_id text NOT NULL REFERENCES organizations(id) ON DELETE CASCADE,
      user_id text NOT NULL REFERENCES users(id) ON DELETE CASCADE,
      seq bigint GENERATED ALWAYS AS IDENTITY UNIQUE,
      role text,
      disabled boolean NOT NULL DEFAULT false,
      sso boolean NOT NULL DEFAULT false,
      joined_at timestamptz(3) NOT NULL,
      last_seen_at timestamptz(3),
      PRIMARY KEY (organization_id, user_id)
    );
    CREATE INDEX members_user ON members (user_id, seq);
    CREATE INDEX members_joined ON members (organization_id, joined_at, seq);
    CREATE INDEX members_seen ON members (organization_id, last_seen_at, seq) WHERE last_seen_at IS NOT NULL;

    CREATE TABLE teams (
      id text PRIMARY KEY,
      seq bigint GENERATED ALWAYS AS IDENTITY UNIQUE,
      organization_id text NOT NULL REFERENCES organizations(id) ON DELETE CASCADE,
      title text NOT NULL,
      created_at timestamptz(3) NOT NULL
    );
    CREATE INDEX teams_org ON teams (organization_id, seq);

    CREATE TABLE team_members (
      team_id text NOT NULL REFERENCES teams(id) ON DELETE CASCADE,
      organization_id text NOT NULL,
      user_id text NOT NULL,
      seq bigint GENERATED ALWAYS AS IDENTITY UNIQUE,
      role text NOT NULL DEFAULT 'member',
      added_at timestamptz(3) NOT NULL,
      PRIMARY KEY (team_id, user_id),
      -- Leaving the organization removes the user from its teams.
      FOREIGN KEY (organization_id, user_id) REFERENCES members(organization_id, user_id) ON DELETE CASCADE
    );
    CREATE INDEX team_members_user ON team_members (organization_id, user_id);

    CREATE TABLE invite_links (
      id text PRIMARY KEY,
      seq bigint GENERATED ALWAYS AS IDENTITY UNIQUE,
      organization_id text NOT NULL REFERENCES organizations(id) ON DELETE CASCADE,
      role text,
      created_by text NOT NULL REFERENCES users(id),
      created_at timestamptz(3) NOT NULL
    );
    CREATE INDEX invite_links_org ON invite_links (organization_id, seq);

    -- Invitations by email of people who have no account yet; applied when the account is created.
    CREATE TABLE email_invites (
      organization_id text NOT NULL REFERENCES organizations(id) ON DELETE CASCADE,
      email text NOT NULL,
      role text,
      sso boolean NOT NULL DEFAULT false,
      invited_by text NOT NULL REFERENCES users(id),
      created_at timestamptz(3) NOT NULL,
      PRIMARY KEY (organization_id, email)
    );
    CREATE INDEX email_invites_email ON email_invites (email);

    CREATE TABLE agent_instructions (
      organization_id text PRIMARY KEY REFERENCES organizations(id) ON DELETE CASCADE,
      instructions jsonb NOT NULL,
      updated_at timestamptz(3) NOT NULL,
      updated_by text NOT NULL
    );

    CREATE TABLE settings (
      key text PRIMARY KEY,
      value text NOT NULL
    );

    CREATE TABLE jobs (
      id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
      type text NOT NULL,
      payload jsonb NOT NULL,
      status text NOT NULL DEFAULT 'queued',
      attempts integer NOT NULL DEFAULT 0,
      max_attempts integer NOT NULL DEFAULT 5,
      run_at timestamptz(3) NOT NULL,
      locked_until timestamptz(3),
      last_error text,
      created_at timestamptz(3) NOT NULL,
      finished_at timestamptz(3)
    );
    CREATE INDEX jobs_due ON jobs (run_at) WHERE status IN ('queued', 'running');
  `.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`
    DROP TABLE jobs; DROP TABLE settings; DROP TABLE agent_instructions; DROP TABLE email_invites;
    DROP TABLE invite_links; DROP TABLE team_members; DROP TABLE teams; DROP TABLE members;
    DROP TABLE organizations; DROP TABLE api_tokens; DROP TABLE users;
  `.execute(db);
}
