import { sql, type RawBuilder, type SelectQueryBuilder } from 'kysely';
import type { Database, SiteQuestionAnswerRow, SiteQuestionRow } from '../platform/db/schema.ts';
import type { Db } from '../platform/db/database.ts';

/**
 * The SQL of Ask: the questions asked on sites with their answers and sources, and the revision
 * each quoted space was at. Every query about a site's questions takes the organization id.
 */

/**
 * The current revision of spaces. No organization id: the spaces are those of hits of a search
 * the caller was allowed (retrieve.ts), which already chose the spaces.
 */
export async function spaceRevisions(db: Db, spaceIds: string[]): Promise<Map<string, string>> {
  if (!spaceIds.length) return new Map();
  const rows = await db.selectFrom('spaces').select(['id', 'revision_id']).where('id', 'in', spaceIds).execute();
  return new Map(rows.map((r) => [r.id, r.revision_id]));
}

export interface RecordedSource {
  space_id: string;
  revision_id: string;
  page_id: string;
  title: string;
  passage: string;
  weight: number;
}

/** The last answer of a visitor session on a site (the thread a new question continues). */
export async function lastAnswerOfSession(db: Db, organizationId: string, siteId: string, sessionId: string) {
  return db
    .selectFrom('site_question_answers')
    .select(['id', 'thread_id', 'created_at'])
    .where('organization_id', '=', organizationId)
    .where('site_id', '=', siteId)
    .where('session_id', '=', sessionId)
    .orderBy('seq', 'desc')
    .limit(1)
    .executeTakeFirst();
}

/** Records a question (one row per distinct question of the site), its answer and sources. */
export async function recordAnswer(
  db: Db,
  question: Pick<SiteQuestionRow, 'id' | 'organization_id' | 'site_id' | 'question' | 'normalized' | 'type'>,
  answer: Omit<SiteQuestionAnswerRow, 'seq' | 'question_id' | 'updated_at' | 'rating'>,
  sources: RecordedSource[],
): Promise<string> {
  return db.transaction().execute(async (trx) => {
    const at = answer.created_at;
    const q = await trx
      .insertInto('site_questions')
      .values({ ...question, created_at: at, asked_at: at })
      .onConflict((oc) => oc.columns(['site_id', 'normalized']).doUpdateSet({ asked_at: at }))
      .returning('id')
      .executeTakeFirstOrThrow();
    await trx.insertInto('site_question_answers').values({ ...answer, question_id: q.id, updated_at: at, rating: null }).execute();
    if (sources.length) {
      await trx
        .insertInto('site_question_answer_sources')
        .values(sources.map((s, position) => ({ ...s, position, answer_id: answer.id, organization_id: answer.organization_id, site_id: answer.site_id, question_id: q.id })))
        .execute();
    }
    return q.id;
  });
}

/** Records a reader's rating of an answer (an `ask_rate_response` event). */
export async function rateAnswer(db: Db, organizationId: string, siteId: string, answerId: string, rating: 1 | -1, at: Date): Promise<void> {
  await db
    .updateTable('site_question_answers')
    .set({ rating, updated_at: at })
    .where('organization_id', '=', organizationId)
    .where('site_id', '=', siteId)
    .where('id', '=', answerId)
    .execute();
}

export interface AnswerFilters {
  from?: string | undefined;
  to?: string | undefined;
  relevance?: string[] | undefined;
  channelType?: string[] | undefined;
  answered?: string[] | undefined;
  language?: string | undefined;
  helpfulness?: string | undefined;
  questionType?: string | undefined;
  question?: string | undefined;
  thread?: string | undefined;
}

type AnswersQuery = SelectQueryBuilder<Database & { a: Database['site_question_answers']; q: Database['site_questions'] }, 'a' | 'q', object>;

/** A site's answers (joined with their question as `q`) under the filters. */
function answersOf(db: Db, organizationId: string, siteId: string, f: AnswerFilters): AnswersQuery {
  let qb = db
    .selectFrom('site_question_answers as a')
    .innerJoin('site_questions as q', 'q.id', 'a.question_id')
    .where('a.organization_id', '=', organizationId)
    .where('a.site_id', '=', siteId) as unknown as AnswersQuery;
  if (f.from) qb = qb.where('a.created_at', '>=', new Date(f.from));
  if (f.to) qb = qb.where('a.created_at', '<=', new Date(f.to));
  if (f.relevance?.length) qb = qb.where('a.relevance', 'in', f.relevance as never);
  if (f.channelType?.length) qb = qb.where('a.channel', 'in', f.channelType);
  if (f.answered?.length) qb = qb.where('a.answered', 'in', f.answered as never);
  if (f.language) qb = qb.where('a.language', '=', f.language);
  if (f.helpfulness) qb = qb.where('a.helpfulness', '=', f.helpfulness as never);
  if (f.questionType) qb = qb.where('q.type', '=', f.questionType as never);
  if (f.question) qb = qb.where('a.question_id', '=', f.question);
  if (f.thread) qb = qb.where('a.thread_id', '=', f.thread);
  return qb;
}

export interface StatsCell {
  question_id: string;
  type: string;
  answered: string;
  relevance: string;
  channel: string;
  rating: number | null;
  week: number;
  answers: number;
}

/**
 * Counts of answers by question, type, resolution, relevance, channel, rating and week (0 = this
 * week, up to 12 weeks back; -1 older): what every `SiteQuestionStats` is summed from.
 */
export async function statsCells(db: Db, organizationId: string, siteId: string, f: AnswerFilters, now: Date, questionIds?: string[]): Promise<StatsCell[]> {
  if (questionIds && questionIds.length === 0) return [];
  let qb = answersOf(db, organizationId, siteId, f);
  if (questionIds) qb = qb.where('a.question_id', 'in', questionIds);
  const week = sql<number>`CASE WHEN a.created_at > ${now}::timestamptz - interval '13 weeks' THEN floor(extract(epoch FROM (${now}::timestamptz - a.created_at)) / 604800)::int ELSE -1 END`;
  const rows = await qb
    .select([
      'a.question_id as question_id',
      'q.type as type',
      'a.answered as answered',
      'a.relevance as relevance',
      'a.channel as channel',
      'a.rating as rating',
      week.as('week'),
      sql<number>`count(*)::int`.as('answers'),
    ])
    .groupBy(['a.question_id', 'q.type', 'a.answered', 'a.relevance', 'a.channel', 'a.rating', sql`7`])
    .execute();
  return rows as unknown as StatsCell[];
}

export type QuestionSort = 'created' | 'askedAt' | 'stats.answered' | 'stats.feedback' | 'stats.answers';

/** A page (by offset) of the site's questions with answers under the filters, sorted, with the total. */
export async function listQuestions(
  db: Db,
  organizationId: string,
  siteId: string,
  f: AnswerFilters,
  opts: { sort: QuestionSort; direction: 'asc' | 'desc'; offset: number; limit: number },
): Promise<{ rows: SiteQuestionRow[]; total: number }> {
  const grouped = answersOf(db, organizationId, siteId, f)
    .select([
      'a.question_id as question_id',
      sql<number>`count(*)::int`.as('answers'),
      sql<number>`avg(CASE WHEN a.answered = 'yes' THEN 1 WHEN a.answered = 'partially' THEN 0.5 ELSE 0 END)`.as('answered_rate'),
      sql<number>`coalesce(avg(a.rating), 0)`.as('feedback_rate'),
    ])
    .groupBy('a.question_id');
  const sortColumn = { created: sql`q.seq`, askedAt: sql`q.asked_at`, 'stats.answered': sql`g.answered_rate`, 'stats.feedback': sql`g.feedback_rate`, 'stats.answers': sql`g.answers` }[opts.sort];
  const direction = opts.direction === 'asc' ? sql`ASC` : sql`DESC`;
  const { rows } = await sql<SiteQuestionRow & { total: number }>`
    SELECT q.*, count(*) OVER ()::int AS total
    FROM (${grouped}) g JOIN site_questions q ON q.id = g.question_id
    ORDER BY ${sortColumn} ${direction}, q.seq ${direction}
    LIMIT ${opts.limit} OFFSET ${opts.offset}`.execute(db);
  return { rows, total: rows[0]?.total ?? 0 };
}

export async function findQuestion(db: Db, organizationId: string, siteId: string, questionId: string) {
  return db.selectFrom('site_questions').selectAll().where('organization_id', '=', organizationId).where('site_id', '=', siteId).where('id', '=', questionId).executeTakeFirst();
}

/** A page of the site's answers under the filters, newest first, with the total. */
export async function listAnswers(db: Db, organizationId: string, siteId: string, f: AnswerFilters, opts: { offset: number; limit: number; oldestFirst?: boolean }) {
  const rows = await answersOf(db, organizationId, siteId, f)
    .selectAll('a')
    .select(['q.type as question_type', sql<number>`count(*) OVER ()::int`.as('total')])
    .orderBy('a.seq', opts.oldestFirst ? 'asc' : 'desc')
    .limit(opts.limit)
    .offset(opts.offset)
    .execute();
  return { rows: rows as unknown as (SiteQuestionAnswerRow & { question_type: SiteQuestionRow['type']; total: number })[], total: (rows[0] as { total?: number } | undefined)?.total ?? 0 };
}

export async function findAnswer(db: Db, organizationId: string, siteId: string, answerId: string) {
  const row = await db
    .selectFrom('site_question_answers as a')
    .innerJoin('site_questions as q', 'q.id', 'a.question_id')
    .selectAll('a')
    .select('q.type as question_type')
    .where('a.organization_id', '=', organizationId)
    .where('a.site_id', '=', siteId)
    .where('a.id', '=', answerId)
    .executeTakeFirst();
  return row as (SiteQuestionAnswerRow & { question_type: SiteQuestionRow['type'] }) | undefined;
}

/** The sources of one answer, in the order the answer used them. */
export async function answerSources(db: Db, organizationId: string, siteId: string, answerId: string, opts: { offset: number; limit: number }) {
  const rows = await db
    .selectFrom('site_question_answer_sources')
    .selectAll()
    .select(sql<number>`count(*) OVER ()::int`.as('total'))
    .where('organization_id', '=', organizationId)
    .where('site_id', '=', siteId)
    .where('answer_id', '=', answerId)
    .orderBy('position')
    .limit(opts.limit)
    .offset(opts.offset)
    .execute();
  return { rows, total: rows[0]?.total ?? 0 };
}

/** The pages the answers of a question were built from (answers under the filters), most used first. */
export async function questionSources(db: Db, organizationId: string, siteId: string, questionId: string, f: AnswerFilters, opts: { offset: number; limit: number }) {
  const answers = answersOf(db, organizationId, siteId, { ...f, question: questionId }).select('a.id');
  const { rows } = await sql<{ space_id: string; page_id: string; revision_id: string; title: string; uses: number; answers: number; total: number }>`
    SELECT s.space_id, s.page_id, max(s.revision_id) AS revision_id, max(s.title) AS title, count(DISTINCT s.answer_id)::int AS uses,
           (SELECT count(*)::int FROM (${answers}) x) AS answers, count(*) OVER ()::int AS total
    FROM site_question_answer_sources s
    WHERE s.organization_id = ${organizationId} AND s.site_id = ${siteId} AND s.question_id = ${questionId}
      AND s.answer_id IN (${answers})
    GROUP BY s.space_id, s.page_id
    ORDER BY uses DESC, s.page_id
    LIMIT ${opts.limit} OFFSET ${opts.offset}`.execute(db);
  return { rows, total: rows[0]?.total ?? 0 };
}

/** The answers of a thread, oldest first. */
export async function threadAnswers(db: Db, organizationId: string, siteId: string, threadId: string) {
  return (await listAnswers(db, organizationId, siteId, { thread: threadId }, { offset: 0, limit: 1000, oldestFirst: true })).rows;
}

/**
 * The site's most asked questions that were answered (recommended to its readers): only those at
 * least `minVisitors` different visitors asked, so one reader's words are never shown to others.
 */
export async function popularQuestions(db: Db, organizationId: string, siteId: string, limit: number, minVisitors = 3): Promise<{ id: string; question: string }[]> {
  const rows = await db
    .selectFrom('site_question_answers as a')
    .innerJoin('site_questions as q', 'q.id', 'a.question_id')
    .select(['q.id as id', 'q.question as question', sql<number>`count(*)::int`.as('n')])
    .where('a.organization_id', '=', organizationId)
    .where('a.site_id', '=', siteId)
    .where('a.answered', '=', 'yes')
    .where('a.relevance', '=', 'relevant')
    .groupBy(['q.id', 'q.question'])
    .having(sql<number>`count(DISTINCT a.visitor_id)`, '>=', minVisitors)
    .orderBy('n', 'desc')
    .orderBy('q.question')
    .limit(limit)
    .execute();
  return rows.map((r) => ({ id: r.id, question: r.question }));
}

/** The pages (space and page ids) the answers to these questions were built from, by question. */
export async function sourcePagesOf(db: Db, organizationId: string, siteId: string, questionIds: string[]): Promise<Map<string, string[]>> {
  const out = new Map<string, string[]>();
  if (!questionIds.length) return out;
  const rows = await db
    .selectFrom('site_question_answer_sources')
    .select(['question_id', 'space_id', 'page_id'])
    .distinct()
    .where('organization_id', '=', organizationId)
    .where('site_id', '=', siteId)
    .where('question_id', 'in', questionIds)
    .execute();
  for (const r of rows) out.set(r.question_id, [...(out.get(r.question_id) ?? []), `${r.space_id}/${r.page_id}`]);
  return out;
}

/**
 * An aggregation over `site_events` built by events.ts from its allow-list of column expressions
 * (every value is a parameter); its WHERE starts with the organization and site ids.
 */
export async function aggregateEvents(db: Db, query: RawBuilder<unknown>): Promise<Record<string, unknown>[]> {
  const { rows } = await (query as RawBuilder<Record<string, unknown>>).execute(db);
  return rows;
}
