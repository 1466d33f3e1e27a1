import { sql, type Kysely } from 'kysely';

/**
 * Collections, spaces, their revisions, and access grants.
 *
 * Siblings (spaces and collections under one parent) share one ordering: `position` is a
 * fractional-index key, so moving an item writes that item only, never its siblings.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await sql`
    CREATE TABLE collections (
      id text PRIMARY KEY,
      seq bigint GENERATED ALWAYS AS IDENTITY UNIQUE,
      organization_id text NOT NULL REFERENCES organizations(id) ON DELETE CASCADE,
      parent_id text REFERENCES collections(id) ON DELETE CASCADE,
      title text NOT NULL,
      description text,
      default_level text DEFAULT 'inherit',
      position text NOT NULL COLLATE "C",
      created_at timestamptz(3) NOT NULL,
      updated_at timestamptz(3) NOT NULL
    );
    CREATE INDEX collections_org ON collections (organization_id, seq);
    CREATE INDEX collections_parent ON collections (organization_id, parent_id, position);

    CREATE TABLE spaces (
      id text PRIMARY KEY,
      seq bigint GENERATED ALWAYS AS IDENTITY UNIQUE,
      organization_id text NOT NULL REFERENCES organizations(id) ON DELETE CASCADE,
      parent_id text REFERENCES collections(id) ON DELETE SET NULL,
      title text NOT NULL,
      emoji text,
      icon text,
      visibility text NOT NULL DEFAULT 'private',
      edit_mode text NOT NULL DEFAULT 'live',
      language text,
      default_level text DEFAULT 'inherit',
      merge_rules jsonb NOT NULL DEFAULT '{"type":"inherit"}',
      revision_id text NOT NULL,
      share_key text NOT NULL,
      position text NOT NULL COLLATE "C",
      created_by text REFERENCES users(id) ON DELETE SET NULL,
      created_at timestamptz(3) NOT NULL,
      updated_at timestamptz(3) NOT NULL,
      deleted_at timestamptz(3)
    );
    CREATE INDEX spaces_org ON spaces (organization_id, seq) WHERE deleted_at IS NULL;
    CREATE INDEX spaces_parent ON spaces (organization_id, parent_id, position) WHERE deleted_at IS NULL;
    CREATE INDEX spaces_deleted ON spaces (deleted_at) WHERE deleted_at IS NOT NULL;

    -- Immutable snapshots of a space's content. The content model fills in what a revision holds.
    CREATE TABLE revisions (
      id text PRIMARY KEY,
      space_id text NOT NULL REFERENCES spaces(id) ON DELETE CASCADE DEFERRABLE INITIALLY DEFERRED,
      organization_id text NOT NULL,
      parents jsonb NOT NULL DEFAULT '[]',
      type text NOT NULL DEFAULT 'edits',
      created_by text,
      created_at timestamptz(3) NOT NULL
    );
    CREATE INDEX revisions_space ON revisions (space_id, created_at);

    -- Grants of a role on a space or collection to a user or a team of the same organization.
    CREATE TABLE content_permissions (
      organization_id text NOT NULL REFERENCES organizations(id) ON DELETE CASCADE,
      target_type text NOT NULL CHECK (target_type IN ('space', 'collection')),
      target_id text NOT NULL,
      principal_type text NOT NULL CHECK (principal_type IN ('user', 'team')),
      principal_id text NOT NULL,
      seq bigint GENERATED ALWAYS AS IDENTITY UNIQUE,
      role text NOT NULL,
      created_at timestamptz(3) NOT NULL,
      PRIMARY KEY (target_type, target_id, principal_type, principal_id)
    );
    CREATE INDEX content_permissions_principal ON content_permissions (organization_id, principal_type, principal_id);
  `.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`DROP TABLE content_permissions; DROP TABLE revisions; DROP TABLE spaces; DROP TABLE collections;`.execute(db);
}
