import { sql, type Kysely } from 'kysely';

/**
 * What readers ask (Ask on a site): each distinct question of a site (`site_questions`, by its
 * normalized text), every time it was asked with the answer given (`site_question_answers`, in
 * threads per visitor session), and the passages each answer was built from
 * (`site_question_answer_sources`). Reader events of the published sites (`site_events`: page
 * views, searches, feedback, questions) for `trackEventsInSiteById` and `aggregateSiteEvents`.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await sql`
    CREATE TABLE site_questions (
      id text PRIMARY KEY,
      seq bigint GENERATED ALWAYS AS IDENTITY UNIQUE,
      organization_id text NOT NULL REFERENCES organizations(id) ON DELETE CASCADE,
      site_id text NOT NULL REFERENCES sites(id) ON DELETE CASCADE,
      question text NOT NULL,
      normalized text NOT NULL,
      type text NOT NULL,
      created_at timestamptz(3) NOT NULL,
      asked_at timestamptz(3) NOT NULL,
      UNIQUE (site_id, normalized)
    );
    CREATE INDEX site_questions_site ON site_questions (organization_id, site_id, seq);

    CREATE TABLE site_question_answers (
      id text PRIMARY KEY,
      seq bigint GENERATED ALWAYS AS IDENTITY UNIQUE,
      organization_id text NOT NULL REFERENCES organizations(id) ON DELETE CASCADE,
      site_id text NOT NULL REFERENCES sites(id) ON DELETE CASCADE,
      question_id text NOT NULL REFERENCES site_questions(id) ON DELETE CASCADE,
      raw text NOT NULL,
      text text NOT NULL,
      thread_id text NOT NULL,
      previous_id text,
      visitor_id text,
      session_id text,
      response text NOT NULL,
      language text NOT NULL,
      answered text NOT NULL,
      helpfulness text NOT NULL,
      relevance text NOT NULL,
      channel text NOT NULL,
      rating smallint,
      created_at timestamptz(3) NOT NULL,
      updated_at timestamptz(3) NOT NULL
    );
    CREATE INDEX site_question_answers_site ON site_question_answers (organization_id, site_id, seq);
    CREATE INDEX site_question_answers_question ON site_question_answers (question_id, seq);
    CREATE INDEX site_question_answers_thread ON site_question_answers (thread_id, seq);
    CREATE INDEX site_question_answers_session ON site_question_answers (site_id, session_id, seq);

    CREATE TABLE site_question_answer_sources (
      answer_id text NOT NULL REFERENCES site_question_answers(id) ON DELETE CASCADE,
      position integer NOT NULL,
      organization_id text NOT NULL REFERENCES organizations(id) ON DELETE CASCADE,
      site_id text NOT NULL REFERENCES sites(id) ON DELETE CASCADE,
      question_id text NOT NULL REFERENCES site_questions(id) ON DELETE CASCADE,
      space_id text NOT NULL,
      revision_id text NOT NULL,
      page_id text NOT NULL,
      title text NOT NULL,
      passage text NOT NULL,
      weight double precision NOT NULL,
      PRIMARY KEY (answer_id, position)
    );
    CREATE INDEX site_question_answer_sources_question ON site_question_answer_sources (question_id);

    CREATE TABLE site_events (
      seq bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
      organization_id text NOT NULL REFERENCES organizations(id) ON DELETE CASCADE,
      site_id text NOT NULL REFERENCES sites(id) ON DELETE CASCADE,
      type text NOT NULL,
      url text NOT NULL,
      url_path text NOT NULL,
      display_context text NOT NULL,
      site_section_id text,
      site_space_id text,
      share_key text,
      space_id text,
      page_id text,
      query text,
      feedback_rating text,
      ask_rating smallint,
      visitor_id text NOT NULL,
      session_id text NOT NULL,
      created_at timestamptz(3) NOT NULL
    );
    CREATE INDEX site_events_site ON site_events (organization_id, site_id, created_at);
  `.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`
    DROP TABLE site_events;
    DROP TABLE site_question_answer_sources;
    DROP TABLE site_question_answers;
    DROP TABLE site_questions;
  `.execute(db);
}
