import { sql, type Kysely } from 'kysely';

/**
 * Support conversations and what is learnt from them: conversations (idempotent by the caller's
 * id within an organization), the issues extracted from them, the clusters grouping similar
 * issues, and the per-organization term statistics (document frequencies) of the built-in engine.
 * A change request may be tied to a cluster.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await sql`
    CREATE TABLE conversations (
      organization_id text NOT NULL REFERENCES organizations(id) ON DELETE CASCADE,
      id text NOT NULL,
      seq bigint GENERATED ALWAYS AS IDENTITY UNIQUE,
      subject text NOT NULL DEFAULT '',
      source text NOT NULL,
      parts jsonb NOT NULL,
      metadata jsonb NOT NULL,
      content_hash text NOT NULL,
      created_at timestamptz(3) NOT NULL,
      ingested_at timestamptz(3) NOT NULL,
      processed_at timestamptz(3),
      impact text,
      PRIMARY KEY (organization_id, id)
    );
    CREATE INDEX conversations_org_seq ON conversations (organization_id, seq);
    CREATE INDEX conversations_org_source ON conversations (organization_id, source, seq);

    CREATE TABLE issues_clusters (
      id text PRIMARY KEY,
      seq bigint GENERATED ALWAYS AS IDENTITY UNIQUE,
      organization_id text NOT NULL REFERENCES organizations(id) ON DELETE CASCADE,
      label text NOT NULL,
      icon text NOT NULL,
      summary jsonb NOT NULL,
      muted boolean NOT NULL DEFAULT false,
      impact text NOT NULL,
      vector_kind text NOT NULL,
      centroid jsonb NOT NULL,
      keywords jsonb NOT NULL DEFAULT '[]',
      issues integer NOT NULL DEFAULT 0,
      created_at timestamptz(3) NOT NULL,
      updated_at timestamptz(3) NOT NULL
    );
    CREATE INDEX issues_clusters_org_updated ON issues_clusters (organization_id, updated_at, seq);
    CREATE INDEX issues_clusters_org_created ON issues_clusters (organization_id, created_at, seq);
    CREATE INDEX issues_clusters_org_issues ON issues_clusters (organization_id, issues, seq);

    CREATE TABLE conversation_issues (
      id text PRIMARY KEY,
      seq bigint GENERATED ALWAYS AS IDENTITY UNIQUE,
      organization_id text NOT NULL,
      conversation_id text NOT NULL,
      cluster_id text REFERENCES issues_clusters(id) ON DELETE SET NULL,
      title text NOT NULL,
      details jsonb NOT NULL,
      impact text NOT NULL,
      source text NOT NULL,
      vector_kind text NOT NULL,
      terms jsonb NOT NULL,
      vector jsonb,
      created_at timestamptz(3) NOT NULL,
      ingested_at timestamptz(3) NOT NULL,
      FOREIGN KEY (organization_id, conversation_id) REFERENCES conversations(organization_id, id) ON DELETE CASCADE
    );
    CREATE INDEX conversation_issues_org_seq ON conversation_issues (organization_id, seq);
    CREATE INDEX conversation_issues_conversation ON conversation_issues (organization_id, conversation_id, seq);
    CREATE INDEX conversation_issues_cluster ON conversation_issues (cluster_id, created_at);

    CREATE TABLE insight_terms (
      organization_id text NOT NULL REFERENCES organizations(id) ON DELETE CASCADE,
      term text NOT NULL,
      word text NOT NULL,
      df integer NOT NULL,
      PRIMARY KEY (organization_id, term)
    );

    CREATE TABLE insight_state (
      organization_id text PRIMARY KEY REFERENCES organizations(id) ON DELETE CASCADE,
      documents integer NOT NULL DEFAULT 0,
      assigned_since_recluster integer NOT NULL DEFAULT 0,
      reclustered_at timestamptz(3)
    );

    ALTER TABLE change_requests ADD COLUMN conversations_issues_cluster text REFERENCES issues_clusters(id) ON DELETE SET NULL;
    CREATE INDEX change_requests_cluster ON change_requests (conversations_issues_cluster) WHERE conversations_issues_cluster IS NOT NULL;
  `.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`
    ALTER TABLE change_requests DROP COLUMN conversations_issues_cluster;
    DROP TABLE insight_state; DROP TABLE insight_terms; DROP TABLE conversation_issues;
    DROP TABLE issues_clusters; DROP TABLE conversations;
  `.execute(db);
}
