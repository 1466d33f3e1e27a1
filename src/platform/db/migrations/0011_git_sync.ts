import { sql, type Kysely } from 'kysely';

/**
 * Git synchronisation: the git metadata of revisions (commit oid, message, whether Folio made it),
 * the public `gitSync` object of a space, and one row per synchronised space with its settings
 * (credentials and webhook secret encrypted), the latest operation and what was last synced (the
 * revision and commit both sides agreed on, and where each page and file lives in the repository).
 */
export async function up(db: Kysely<any>): Promise<void> {
  await sql`ALTER TABLE revisions ADD COLUMN git jsonb`.execute(db);
  await sql`ALTER TABLE spaces ADD COLUMN git_sync jsonb`.execute(db);
  await sql`
    CREATE TABLE git_syncs (
      space_id text PRIMARY KEY REFERENCES spaces(id) ON DELETE CASCADE,
      organization_id text NOT NULL,
      url text,
      ref text,
      project_directory text NOT NULL DEFAULT '',
      credentials text,
      webhook_secret text,
      auto_export boolean NOT NULL DEFAULT false,
      repo_tree_url text,
      repo_commit_url text,
      provider text,
      configured_by text,
      last_event_at timestamptz(3),
      synced_revision text,
      synced_commit text,
      manifest jsonb,
      op_state text,
      op_direction text,
      op_started_at timestamptz(3),
      op_ended_at timestamptz(3),
      op_error text,
      lock_job bigint,
      lock_until timestamptz(3),
      updated_at timestamptz(3) NOT NULL
    );
  `.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`DROP TABLE git_syncs`.execute(db);
  await sql`ALTER TABLE spaces DROP COLUMN git_sync`.execute(db);
  await sql`ALTER TABLE revisions DROP COLUMN git`.execute(db);
}
