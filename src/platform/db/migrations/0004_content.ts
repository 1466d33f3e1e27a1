import { sql, type Kysely } from 'kysely';

/**
 * Content: revisions point at the root of a content-addressed tree (see src/content/tree.ts);
 * page markdown and file bytes are content-addressed too, so unchanged content is never copied.
 * Change requests are branches: a base revision and a head revision.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await sql`
    CREATE TABLE tree_nodes (
      hash text PRIMARY KEY,
      data jsonb NOT NULL
    );

    CREATE TABLE documents (
      hash text PRIMARY KEY,
      markdown text NOT NULL
    );

    CREATE TABLE blobs (
      hash text PRIMARY KEY,
      data bytea NOT NULL,
      size integer NOT NULL
    );

    ALTER TABLE revisions ADD COLUMN root text NOT NULL DEFAULT '';
    ALTER TABLE revisions ADD COLUMN message text;

    CREATE TABLE change_requests (
      id text PRIMARY KEY,
      seq bigint GENERATED ALWAYS AS IDENTITY UNIQUE,
      space_id text NOT NULL REFERENCES spaces(id) ON DELETE CASCADE,
      organization_id text NOT NULL,
      number integer NOT NULL,
      status text NOT NULL DEFAULT 'open',
      subject text NOT NULL DEFAULT '',
      description jsonb,
      created_by text REFERENCES users(id) ON DELETE SET NULL,
      created_at timestamptz(3) NOT NULL,
      updated_at timestamptz(3) NOT NULL,
      revision_initial text NOT NULL,
      revision text NOT NULL,
      revision_merged_ancestor text,
      revision_merged text,
      merged_by text REFERENCES users(id) ON DELETE SET NULL,
      merged_at timestamptz(3),
      -- Pages whose last update from the space left conflict markers to resolve.
      conflicts jsonb NOT NULL DEFAULT '[]',
      UNIQUE (space_id, number)
    );
    CREATE INDEX change_requests_space ON change_requests (space_id, status, seq);
    CREATE INDEX change_requests_org ON change_requests (organization_id, seq);

    -- Who edited a change request (its contributors).
    CREATE TABLE change_request_contributors (
      change_request_id text NOT NULL REFERENCES change_requests(id) ON DELETE CASCADE,
      user_id text NOT NULL REFERENCES users(id) ON DELETE CASCADE,
      PRIMARY KEY (change_request_id, user_id)
    );

    CREATE TABLE change_request_reviewers (
      change_request_id text NOT NULL REFERENCES change_requests(id) ON DELETE CASCADE,
      user_id text NOT NULL REFERENCES users(id) ON DELETE CASCADE,
      seq bigint GENERATED ALWAYS AS IDENTITY UNIQUE,
      requested_by text,
      created_at timestamptz(3) NOT NULL,
      PRIMARY KEY (change_request_id, user_id)
    );

    CREATE TABLE change_request_reviews (
      id text PRIMARY KEY,
      seq bigint GENERATED ALWAYS AS IDENTITY UNIQUE,
      change_request_id text NOT NULL REFERENCES change_requests(id) ON DELETE CASCADE,
      reviewer_id text NOT NULL REFERENCES users(id) ON DELETE CASCADE,
      status text NOT NULL,
      revision text NOT NULL,
      created_at timestamptz(3) NOT NULL
    );
    CREATE INDEX change_request_reviews_cr ON change_request_reviews (change_request_id, seq);
  `.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`
    DROP TABLE change_request_reviews; DROP TABLE change_request_reviewers; DROP TABLE change_request_contributors;
    DROP TABLE change_requests; ALTER TABLE revisions DROP COLUMN root; ALTER TABLE revisions DROP COLUMN message;
    DROP TABLE blobs; DROP TABLE documents; DROP TABLE tree_nodes;
  `.execute(db);
}
