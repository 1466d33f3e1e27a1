import { sql, type Kysely } from 'kysely';

/**
 * Docs sites and their structure: site spaces (a space linked to a site at a path), sections and
 * nested section groups, all ordered by fractional-index keys; share links, redirects, and the
 * per-site settings (customization, adaptive schema, visitor-auth key) kept on the site row.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await sql`
    CREATE TABLE sites (
      id text PRIMARY KEY,
      seq bigint GENERATED ALWAYS AS IDENTITY UNIQUE,
      organization_id text NOT NULL REFERENCES organizations(id) ON DELETE CASCADE,
      type text NOT NULL,
      title text NOT NULL,
      basename text NOT NULL,
      hostname text,
      proxy text,
      visibility text NOT NULL,
      published boolean NOT NULL DEFAULT false,
      adaptive_content boolean NOT NULL DEFAULT false,
      agents_context text NOT NULL DEFAULT 'included',
      adaptive_schema jsonb,
      adaptive_schema_updated_at timestamptz(3),
      customization jsonb NOT NULL DEFAULT '{}',
      customization_updated_at timestamptz(3),
      auth_key text NOT NULL,
      auth_backend text NOT NULL DEFAULT 'custom',
      auth_fallback_url text,
      auth_logout_url text,
      created_by text NOT NULL,
      created_at timestamptz(3) NOT NULL,
      updated_at timestamptz(3) NOT NULL
    );
    CREATE UNIQUE INDEX sites_basename ON sites (organization_id, basename);
    CREATE UNIQUE INDEX sites_hostname ON sites (hostname) WHERE hostname IS NOT NULL;

    CREATE TABLE site_section_groups (
      id text PRIMARY KEY,
      seq bigint GENERATED ALWAYS AS IDENTITY UNIQUE,
      organization_id text NOT NULL,
      site_id text NOT NULL REFERENCES sites(id) ON DELETE CASCADE,
      parent_id text REFERENCES site_section_groups(id) ON DELETE SET NULL,
      title text NOT NULL,
      icon text,
      position text COLLATE "C" NOT NULL,
      created_at timestamptz(3) NOT NULL
    );
    CREATE INDEX site_section_groups_site ON site_section_groups (site_id, parent_id, position);

    CREATE TABLE site_sections (
      id text PRIMARY KEY,
      seq bigint GENERATED ALWAYS AS IDENTITY UNIQUE,
      organization_id text NOT NULL,
      site_id text NOT NULL REFERENCES sites(id) ON DELETE CASCADE,
      group_id text REFERENCES site_section_groups(id) ON DELETE SET NULL,
      title text NOT NULL,
      description text,
      icon text,
      path text NOT NULL,
      condition text,
      is_default boolean NOT NULL DEFAULT false,
      position text COLLATE "C" NOT NULL,
      created_at timestamptz(3) NOT NULL
    );
    CREATE UNIQUE INDEX site_sections_path ON site_sections (site_id, path);
    CREATE INDEX site_sections_site ON site_sections (site_id, group_id, position);

    CREATE TABLE site_spaces (
      id text PRIMARY KEY,
      seq bigint GENERATED ALWAYS AS IDENTITY UNIQUE,
      organization_id text NOT NULL,
      site_id text NOT NULL REFERENCES sites(id) ON DELETE CASCADE,
      space_id text NOT NULL REFERENCES spaces(id) ON DELETE CASCADE,
      section_id text REFERENCES site_sections(id) ON DELETE CASCADE,
      path text NOT NULL,
      condition text,
      hidden boolean NOT NULL DEFAULT false,
      is_default boolean NOT NULL DEFAULT false,
      position text COLLATE "C" NOT NULL,
      customization jsonb,
      customization_updated_at timestamptz(3),
      created_at timestamptz(3) NOT NULL
    );
    CREATE UNIQUE INDEX site_spaces_path ON site_spaces (site_id, coalesce(section_id, ''), path);
    CREATE INDEX site_spaces_container ON site_spaces (site_id, section_id, position);
    CREATE INDEX site_spaces_space ON site_spaces (space_id);

    CREATE TABLE site_share_links (
      id text PRIMARY KEY,
      seq bigint GENERATED ALWAYS AS IDENTITY UNIQUE,
      organization_id text NOT NULL,
      site_id text NOT NULL REFERENCES sites(id) ON DELETE CASCADE,
      name text NOT NULL,
      token text NOT NULL UNIQUE,
      active boolean NOT NULL DEFAULT true,
      created_at timestamptz(3) NOT NULL
    );
    CREATE INDEX site_share_links_site ON site_share_links (site_id);

    CREATE TABLE site_redirects (
      id text PRIMARY KEY,
      seq bigint GENERATED ALWAYS AS IDENTITY UNIQUE,
      organization_id text NOT NULL,
      site_id text NOT NULL REFERENCES sites(id) ON DELETE CASCADE,
      source text COLLATE "C" NOT NULL,
      draft boolean NOT NULL DEFAULT false,
      capture_wildcard boolean NOT NULL DEFAULT false,
      permanent boolean NOT NULL DEFAULT false,
      destination jsonb NOT NULL,
      created_at timestamptz(3) NOT NULL,
      updated_at timestamptz(3)
    );
    CREATE UNIQUE INDEX site_redirects_source ON site_redirects (site_id, draft, source);
  `.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`
    DROP TABLE site_redirects;
    DROP TABLE site_share_links;
    DROP TABLE site_spaces;
    DROP TABLE site_sections;
    DROP TABLE site_section_groups;
    DROP TABLE sites;
  `.execute(db);
}
