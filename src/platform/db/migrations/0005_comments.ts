import { sql, type Kysely } from 'kysely';

/** Comments on spaces and change requests, their replies, and emoji reactions on both. */
export async function up(db: Kysely<any>): Promise<void> {
  await sql`
    CREATE TABLE comments (
      id text PRIMARY KEY,
      seq bigint GENERATED ALWAYS AS IDENTITY UNIQUE,
      organization_id text NOT NULL,
      space_id text NOT NULL REFERENCES spaces(id) ON DELETE CASCADE,
      change_request_id text REFERENCES change_requests(id) ON DELETE CASCADE,
      revision_id text NOT NULL,
      page_id text,
      node_id text,
      table_cell jsonb,
      body text NOT NULL,
      posted_by text REFERENCES users(id) ON DELETE SET NULL,
      posted_at timestamptz(3) NOT NULL,
      edited_at timestamptz(3),
      status text NOT NULL DEFAULT 'open',
      resolved_at timestamptz(3),
      resolved_by text REFERENCES users(id) ON DELETE SET NULL
    );
    -- Space comments are those outside change requests.
    CREATE INDEX comments_space ON comments (space_id, seq) WHERE change_request_id IS NULL;
    CREATE INDEX comments_cr ON comments (change_request_id, seq) WHERE change_request_id IS NOT NULL;

    CREATE TABLE comment_replies (
      id text PRIMARY KEY,
      seq bigint GENERATED ALWAYS AS IDENTITY UNIQUE,
      comment_id text NOT NULL REFERENCES comments(id) ON DELETE CASCADE,
      body text NOT NULL,
      posted_by text REFERENCES users(id) ON DELETE SET NULL,
      posted_at timestamptz(3) NOT NULL,
      edited_at timestamptz(3)
    );
    CREATE INDEX comment_replies_comment ON comment_replies (comment_id, seq);

    CREATE TABLE comment_reactions (
      target_id text NOT NULL,
      emoji text NOT NULL,
      user_id text NOT NULL REFERENCES users(id) ON DELETE CASCADE,
      reacted_at timestamptz(3) NOT NULL,
      PRIMARY KEY (target_id, emoji, user_id)
    );
  `.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`DROP TABLE comment_reactions; DROP TABLE comment_replies; DROP TABLE comments;`.execute(db);
}
