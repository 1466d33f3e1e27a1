import type { Ctx } from '../platform/context.ts';
import { BadRequestError, NotFoundError } from '../platform/errors.ts';
import { limitOf, type PageRequest } from '../platform/paging.ts';
import { requireSite } from '../sites/access.ts';
import { answerUrl, presentAnswerRecord, presentAnswerSource, presentAnswerWithResponse, presentQuestion, presentStats, questionUrl } from './presenter.ts';
import * as store from './store.ts';

/**
 * What readers ask: the questions asked on a site, their answers and sources, and their stats,
 * for members of the site's organization with a role (readers' words are not for guests).
 * Topics are not computed by Folio: a topic filter matches nothing.
 */

async function siteOf(ctx: Ctx, organizationId: string, siteId: string) {
  const { site } = await requireSite(ctx, organizationId, siteId, 'read', "read the site's questions");
  return site;
}

function offsetOf(page: string | undefined): number {
  if (!page) return 0;
  const n = Number.parseInt(Buffer.from(page, 'base64url').toString(), 10);
  if (!Number.isInteger(n) || n < 0) throw new BadRequestError('Invalid "page" cursor: pass the value of "next.page" from the previous response');
  return n;
}

function listOf<T>(items: T[], total: number, offset: number, limit: number) {
  const next = offset + items.length < total ? { page: Buffer.from(String(offset + limit)).toString('base64url') } : undefined;
  return { items, count: total, ...(next ? { next } : {}) };
}

const noTopic = (topic: string[] | string | undefined) => (Array.isArray(topic) ? topic.length > 0 : !!topic);

type Filters = store.AnswerFilters & { topic?: string[] | string | undefined };

export async function listSiteQuestions(
  ctx: Ctx,
  organizationId: string,
  siteId: string,
  q: Filters & PageRequest & { type?: string | undefined; order?: 'asc' | 'desc' | undefined; sort?: store.QuestionSort | undefined },
) {
  const site = await siteOf(ctx, organizationId, siteId);
  const offset = offsetOf(q.page);
  const limit = limitOf(q.limit);
  if (noTopic(q.topic)) return listOf([], 0, offset, limit);
  const filters = { ...q, questionType: q.type };
  const { rows, total } = await store.listQuestions(ctx.db, site.organization_id, site.id, filters, { sort: q.sort ?? 'created', direction: q.order ?? 'desc', offset, limit });
  const cells = await store.statsCells(ctx.db, site.organization_id, site.id, filters, new Date(ctx.now()), rows.map((r) => r.id));
  return listOf(
    rows.map((r) => presentQuestion(ctx.urls, r, cells.filter((c) => c.question_id === r.id))),
    total,
    offset,
    limit,
  );
}

async function questionOf(ctx: Ctx, organizationId: string, siteId: string, questionId: string) {
  const site = await siteOf(ctx, organizationId, siteId);
  const question = await store.findQuestion(ctx.db, site.organization_id, site.id, questionId);
  if (!question) throw new NotFoundError('Site question');
  return { site, question };
}

export async function getSiteQuestion(ctx: Ctx, organizationId: string, siteId: string, questionId: string, f: store.AnswerFilters) {
  const { site, question } = await questionOf(ctx, organizationId, siteId, questionId);
  const cells = await store.statsCells(ctx.db, site.organization_id, site.id, f, new Date(ctx.now()), [question.id]);
  return presentQuestion(ctx.urls, question, cells);
}

export async function listSiteQuestionSources(ctx: Ctx, organizationId: string, siteId: string, questionId: string, q: store.AnswerFilters & PageRequest) {
  const { site, question } = await questionOf(ctx, organizationId, siteId, questionId);
  const offset = offsetOf(q.page);
  const limit = limitOf(q.limit);
  const { rows, total } = await store.questionSources(ctx.db, site.organization_id, site.id, question.id, q, { offset, limit });
  const location = questionUrl(ctx.urls, question);
  return listOf(
    rows.map((r) => presentAnswerSource(ctx.urls, { ...r, weight: r.answers ? Math.round((r.uses / r.answers) * 1000) / 1000 : 0 }, location)),
    total,
    offset,
    limit,
  );
}

export async function getSiteQuestionStats(ctx: Ctx, organizationId: string, siteId: string, f: Filters) {
  const site = await siteOf(ctx, organizationId, siteId);
  if (noTopic(f.topic)) return presentStats([]);
  return presentStats(await store.statsCells(ctx.db, site.organization_id, site.id, f, new Date(ctx.now())));
}

export async function listSiteQuestionAnswers(ctx: Ctx, organizationId: string, siteId: string, q: Filters & PageRequest & { 'question.type'?: string | undefined }) {
  const site = await siteOf(ctx, organizationId, siteId);
  const offset = offsetOf(q.page);
  const limit = limitOf(q.limit);
  if (noTopic(q.topic)) return listOf([], 0, offset, limit);
  const { rows, total } = await store.listAnswers(ctx.db, site.organization_id, site.id, { ...q, questionType: q['question.type'] }, { offset, limit });
  return listOf(
    rows.map((r) => presentAnswerRecord(ctx.urls, r)),
    total,
    offset,
    limit,
  );
}

async function answerOf(ctx: Ctx, organizationId: string, siteId: string, answerId: string) {
  const site = await siteOf(ctx, organizationId, siteId);
  const answer = await store.findAnswer(ctx.db, site.organization_id, site.id, answerId);
  if (!answer) throw new NotFoundError('Site question answer');
  return { site, answer };
}

export async function getSiteQuestionAnswer(ctx: Ctx, organizationId: string, siteId: string, answerId: string) {
  const { answer } = await answerOf(ctx, organizationId, siteId, answerId);
  return presentAnswerWithResponse(ctx.urls, answer);
}

export async function getSiteQuestionAnswerThread(ctx: Ctx, organizationId: string, siteId: string, answerId: string) {
  const { site, answer } = await answerOf(ctx, organizationId, siteId, answerId);
  const thread = await store.threadAnswers(ctx.db, site.organization_id, site.id, answer.thread_id);
  return thread.map((a) => presentAnswerWithResponse(ctx.urls, a));
}

export async function listSiteQuestionAnswerSources(ctx: Ctx, organizationId: string, siteId: string, answerId: string, page: PageRequest) {
  const { site, answer } = await answerOf(ctx, organizationId, siteId, answerId);
  const offset = offsetOf(page.page);
  const limit = limitOf(page.limit);
  const { rows, total } = await store.answerSources(ctx.db, site.organization_id, site.id, answer.id, { offset, limit });
  const location = answerUrl(ctx.urls, answer);
  return listOf(
    rows.map((r) => presentAnswerSource(ctx.urls, r, location)),
    total,
    offset,
    limit,
  );
}
