import type { Urls } from '../platform/urls.ts';
import type { SiteQuestionAnswerRow, SiteQuestionAnswerSourceRow, SiteQuestionRow } from '../platform/db/schema.ts';
import { shortMarkdownToDocument } from '../content/convert.ts';
import type { AnswerState } from './answer.ts';
import type { AnswerFormat } from './service.ts';
import type { StatsCell } from './store.ts';

/** Answers and recorded questions as the official resources (SearchAIAnswer, SiteQuestion*, …). */

/** The official `SearchAIAnswer`: the answer as a document, its follow-ups and one source per page. */
export function presentAnswer(state: AnswerState, format: AnswerFormat | undefined) {
  const bySource = new Map<string, { type: 'page'; page: string; revision: string; space: string; sections: string[]; title: string; passage: string[]; url: string }>();
  for (const p of state.sources) {
    const key = `${p.spaceId}/${p.pageId}`;
    const found = bySource.get(key);
    if (found) {
      if (p.sectionId && !found.sections.includes(p.sectionId)) found.sections.push(p.sectionId);
      found.passage.push(p.text);
    } else {
      bySource.set(key, { type: 'page', page: p.pageId, revision: p.revisionId, space: p.spaceId, sections: p.sectionId ? [p.sectionId] : [], title: p.title, passage: [p.text], url: p.url.split('#')[0]! });
    }
  }
  const answer = !state.markdown ? {} : format === 'markdown' ? { markdown: state.markdown } : { document: shortMarkdownToDocument(state.markdown) };
  return {
    answer,
    followupQuestions: state.followupQuestions,
    sources: [...bySource.values()].map((s) => ({ ...s, passage: s.passage.join('\n\n'), reason: 'Quoted in the answer' })),
  };
}

export function presentStats(cells: StatsCell[]) {
  const zero = <K extends string>(keys: K[]) => Object.fromEntries(keys.map((k) => [k, 0])) as Record<K, number>;
  const stats = {
    total: 0,
    answers: 0,
    feedback: zero(['positive', 'negative', 'unrated']),
    answered: zero(['yes', 'partially', 'no']),
    relevance: zero(['relevant', 'spam', 'off-topic', 'unclear']),
    types: zero(['exploring', 'how-to', 'troubleshooting', 'reference', 'unknown']),
    channelTypes: {} as Record<string, number>,
    channels: {} as Record<string, number>,
    weeklyPulse: new Array<number>(13).fill(0),
  };
  const questions = new Map<string, string>();
  for (const c of cells) {
    questions.set(c.question_id, c.type);
    stats.answers += c.answers;
    stats.feedback[c.rating === 1 ? 'positive' : c.rating === -1 ? 'negative' : 'unrated'] += c.answers;
    if (c.answered in stats.answered) stats.answered[c.answered as 'yes'] += c.answers;
    if (c.relevance in stats.relevance) stats.relevance[c.relevance as 'relevant'] += c.answers;
    stats.channelTypes[c.channel] = (stats.channelTypes[c.channel] ?? 0) + c.answers;
    // Oldest week first, this week last.
    if (c.week >= 0 && c.week < 13) stats.weeklyPulse[12 - c.week]! += c.answers;
  }
  stats.total = questions.size;
  for (const type of questions.values()) if (type in stats.types) stats.types[type as 'unknown'] += 1;
  return stats;
}

const questionUrl = (urls: Urls, q: { organization_id: string; site_id: string; id: string }) =>
  urls.api(`/orgs/${q.organization_id}/sites/${q.site_id}/questions/${q.id}`);
const answerUrl = (urls: Urls, a: { organization_id: string; site_id: string; id: string }) => urls.api(`/orgs/${a.organization_id}/sites/${a.site_id}/answers/${a.id}`);

export function presentQuestion(urls: Urls, q: SiteQuestionRow, cells: StatsCell[]) {
  return {
    object: 'site-question' as const,
    id: q.id,
    question: q.question,
    type: q.type,
    createdAt: new Date(q.created_at).toISOString(),
    askedAt: new Date(q.asked_at).toISOString(),
    stats: presentStats(cells),
    urls: { location: questionUrl(urls, q) },
  };
}

type AnswerRow = SiteQuestionAnswerRow & { question_type: string };

export function presentAnswerRecord(urls: Urls, a: AnswerRow) {
  return {
    object: 'site-question-answer' as const,
    id: a.id,
    question: { id: a.question_id, type: a.question_type },
    topics: [],
    input: { text: a.text, raw: a.raw },
    ...(a.previous_id ? { thread: { id: a.thread_id, previous: a.previous_id } } : {}),
    ...(a.visitor_id && a.session_id ? { session: { visitorId: a.visitor_id, sessionId: a.session_id } } : {}),
    ...(a.rating === 1 || a.rating === -1 ? { feedback: { rating: a.rating } } : {}),
    responseId: a.id,
    language: a.language,
    answered: a.answered,
    helpfulness: a.helpfulness,
    relevance: a.relevance,
    channel: { type: a.channel },
    createdAt: new Date(a.created_at).toISOString(),
    updatedAt: new Date(a.updated_at).toISOString(),
    urls: { location: answerUrl(urls, a) },
  };
}

export function presentAnswerWithResponse(urls: Urls, a: AnswerRow) {
  return {
    ...presentAnswerRecord(urls, a),
    response: { id: a.id, role: 'assistant' as const, steps: [{ content: shortMarkdownToDocument(a.response) }], createdAt: new Date(a.created_at).toISOString() },
  };
}

export function presentAnswerSource(urls: Urls, s: Pick<SiteQuestionAnswerSourceRow, 'page_id' | 'space_id' | 'revision_id' | 'title' | 'weight'> & { passage?: string }, location: string) {
  return {
    object: 'site-question-answer-source' as const,
    id: s.page_id,
    weight: s.weight,
    title: s.title,
    urls: { location },
    type: 'page' as const,
    space: s.space_id,
    revision: s.revision_id,
    page: s.page_id,
    ...(s.passage !== undefined ? { passage: s.passage } : {}),
  };
}

export { answerUrl, questionUrl };
