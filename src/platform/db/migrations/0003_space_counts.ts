import { sql, type Kysely } from 'kysely';

/**
 * Live-space counts per organization, kept by a trigger so every path that creates, deletes,
 * restores, transfers or purges spaces keeps them true (including bulk SQL). They make the `count`
 * of space lists and members' `spaces` cost the same for 10 or 100,000 spaces.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await sql`
    CREATE TABLE space_counts (
      organization_id text PRIMARY KEY REFERENCES organizations(id) ON DELETE CASCADE,
      live integer NOT NULL DEFAULT 0
    );

    CREATE FUNCTION folio_count_spaces() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      IF TG_OP IN ('UPDATE', 'DELETE') AND OLD.deleted_at IS NULL THEN
        UPDATE space_counts SET live = live - 1 WHERE organization_id = OLD.organization_id;
      END IF;
      IF TG_OP IN ('INSERT', 'UPDATE') AND NEW.deleted_at IS NULL THEN
        INSERT INTO space_counts (organization_id, live) VALUES (NEW.organization_id, 1)
        ON CONFLICT (organization_id) DO UPDATE SET live = space_counts.live + 1;
      END IF;
      RETURN NULL;
    END $$;

    CREATE TRIGGER spaces_count AFTER INSERT OR DELETE OR UPDATE OF organization_id, deleted_at ON spaces
      FOR EACH ROW EXECUTE FUNCTION folio_count_spaces();

    INSERT INTO space_counts (organization_id, live)
      SELECT organization_id, count(*) FROM spaces WHERE deleted_at IS NULL GROUP BY organization_id;
  `.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`DROP TRIGGER spaces_count ON spaces; DROP FUNCTION folio_count_spaces(); DROP TABLE space_counts;`.execute(db);
}
