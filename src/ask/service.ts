import { createHash } from 'node:crypto';
import type { Ctx, Services } from '../platform/context.ts';
import { BadRequestError, HttpError, NotFoundError } from '../platform/errors.ts';
import { newId } from '../platform/ids.ts';
import { orgRoleOf } from '../access/effective.ts';
import { visibleSpaces } from '../spaces/service.ts';
import { pageTitlesOf } from '../search/store.ts';
import { readableSite } from '../sites/access.ts';
import { findSite } from '../sites/store.ts';
import { publishedSiteAt } from '../published-site/store.ts';
import type { SiteStructure } from '../published-site/published.ts';
import { everyPage } from '../published-site/reader.ts';
import type { ReaderSite } from '../published-site/reader-search.ts';
import { visitorWith, type Visitor } from '../published-site/visitor.ts';
import type { SiteRow } from '../platform/db/schema.ts';
import { answerStates, questionAbout, type AnswerState } from './answer.ts';
import { memberPassages, visitorPassages, type Passage } from './retrieve.ts';
import * as store from './store.ts';
import { eventId, insertEvents } from '../published-site/site-events.ts';

/**
 * Ask: questions answered from the documentation the caller may read. For a member of an
 * organization, the spaces its search shows them; for a site (the API's `streamAskInSite`, or a
 * reader of the published site), what the site shows that visitor. Questions asked on a site are
 * recorded with their answers and sources (what readers ask, served by questions.ts).
 */

export type AnswerFormat = 'document' | 'markdown';

/** The official `SiteSearchScope`. */
export interface SiteScope {
  mode: 'default' | 'specific' | 'all';
  currentSiteSpace?: string | undefined;
  restrictTo?: 'currentSiteSpace' | 'otherSiteSpaces' | undefined;
  siteSpaceIds?: string[] | undefined;
}

export interface SiteQuestionInput {
  question: string;
  context?: { siteSpaceId?: string | undefined; goal?: string | undefined } | undefined;
  scope: SiteScope;
  session?: { visitorId: string; sessionId: string } | undefined;
}

/** An answer stream: the states of the answer as it is written, the last one complete. */
export type AnswerStream = AsyncGenerator<AnswerState>;

function cleanQuestion(question: string): string {
  const q = question.replace(/\s+/g, ' ').trim();
  if (!q) throw new BadRequestError('query: ask a question (it is empty)');
  return q;
}

async function memberSpaces(ctx: Ctx, organizationId: string) {
  const orgRole = await orgRoleOf(ctx.db, organizationId, ctx.user.id);
  if (orgRole === undefined) throw new NotFoundError('Organization');
  // The caller's readable live spaces, as the organization's search has them.
  return visibleSpaces(ctx.db, organizationId, ctx.user.id, orgRole).clearSelect().select('spaces.id');
}

/** A member's question over the organization's spaces they may read. */
export async function askInOrganization(ctx: Ctx, organizationId: string, query: string, signal?: AbortSignal): Promise<AnswerStream> {
  const question = cleanQuestion(query);
  const spaces = await memberSpaces(ctx, organizationId);
  const passages = await memberPassages(ctx.db, ctx.urls, spaces, question, { config: ctx.config, onError: (err) => ctx.jobs.logger?.warn({ err }, 'ask: the question could not be embedded; search alone answers') });
  return answerStates(ctx.config, question, passages, signal ? { signal } : {});
}

/** Questions a member might ask: about the pages of the spaces they may read. */
export async function recommendedInOrganization(ctx: Ctx, organizationId: string): Promise<string[]> {
  const spaces = await memberSpaces(ctx, organizationId);
  return questionsFromTitles(await pageTitlesOf(ctx.db, spaces, 40));
}

function questionsFromTitles(titles: string[], already: string[] = [], max = 5): string[] {
  const out = [...already];
  const seen = new Set(out.map((q) => q.toLowerCase()));
  for (const title of titles) {
    if (out.length >= max) break;
    const q = questionAbout(title);
    if (!seen.has(q.toLowerCase())) (seen.add(q.toLowerCase()), out.push(q));
  }
  return out.slice(0, max);
}

// Sites -------------------------------------------------------------------------------------------

/** What a site shows: its structure (published sites only) and who reads it. */
export interface SiteReading {
  reader: ReaderSite;
  visitor: Visitor;
  /** Where the question came from: a reader of the published site, or the API. */
  channel: 'site' | 'api';
}

const API_VISITOR: Visitor = { claims: {}, segment: 'anonymous' };

/** What an API caller says about the visitor they ask for (Folio's additions to the official operations). */
export interface VisitorCredentials {
  /** A share link's key (`?shareKey=`), for a share-link site. */
  shareKey?: string | undefined;
  /** A visitor JWT signed with the site's key (`visitor.jwtToken` or `?visitorAuthToken=`), for a visitor-auth site. */
  jwt?: string | undefined;
}

/**
 * A site as the API caller reads it, and the visitor it answers as: what the published site would
 * show that visitor (published-site/visitor.ts decides, as for the site's pages and its MCP server).
 * - A member (or an installation covering the site) reads it as a visitor without claims, or, on a
 *   visitor-auth site, as the visitor whose JWT they send (a token that is not valid is a 401).
 * - Anyone else reads a published public or unlisted site as a visitor without claims, a
 *   share-link site with an active share link's key, a visitor-auth site with a valid JWT (its
 *   claims decide adaptive content); without what the site asks, the site is not there (404).
 * The JWT is only read on a visitor-auth site, as on the site's pages.
 */
async function siteForCaller(ctx: Ctx, organizationId: string, siteId: string, credentials: VisitorCredentials): Promise<SiteReading> {
  let site: SiteRow;
  let visitor = API_VISITOR;
  try {
    ({ site } = await readableSite(ctx, organizationId, siteId, credentials.shareKey));
    if (site.visibility === 'visitor-auth' && credentials.jwt) {
      const claimed = await visitorWith(ctx.db, site, { jwt: credentials.jwt });
      if (!claimed) throw new HttpError(401, "visitor.jwtToken: the visitor token is not valid for this site (a JWT signed with HS256 and the site's key, not expired)");
      visitor = claimed;
    }
  } catch (err) {
    // A visitor of a visitor-auth site is admitted by their token alone.
    if (!(err instanceof NotFoundError) || !credentials.jwt) throw err;
    const found = await findSite(ctx.db, organizationId, siteId);
    const claimed = found?.published && found.visibility === 'visitor-auth' ? await visitorWith(ctx.db, found, { jwt: credentials.jwt }) : undefined;
    if (!found || !claimed) throw err;
    site = found;
    visitor = claimed;
  }
  const published = await publishedSiteAt(ctx.db, site.organization_id, site.basename);
  if (!published) throw new BadRequestError('The site is not published: Ask answers from what a site publishes');
  return {
    reader: { db: ctx.db, blobs: ctx.blobs, urls: ctx.urls, site: published.site, structure: published.structure, base: `/${site.organization_id}/${site.basename}/` },
    visitor,
    channel: 'api',
  };
}

/** The site spaces a scope keeps (the official `SiteSearchScope`), refusing ids the site does not have. */
function scopeFilter(structure: SiteStructure, scope: SiteScope): (siteSpaceId: string) => boolean {
  const rows = structure.siteSpaces;
  const known = (id: string, field: string) => {
    const row = rows.find((r) => r.id === id);
    if (!row) throw new BadRequestError(`${field}: site space ${id} is not part of this site`);
    return row;
  };
  if (scope.mode === 'all') return () => true;
  if (scope.mode === 'specific') {
    if (!scope.siteSpaceIds?.length) throw new BadRequestError('scope.siteSpaceIds: list the site spaces to answer from');
    const ids = new Set(scope.siteSpaceIds.map((id, i) => known(id, `scope.siteSpaceIds[${i}]`).id));
    return (id) => ids.has(id);
  }
  const current = scope.currentSiteSpace ? known(scope.currentSiteSpace, 'scope.currentSiteSpace') : undefined;
  if (scope.restrictTo && !current) throw new BadRequestError('scope.restrictTo: send currentSiteSpace with it');
  const defaults = new Set(rows.filter((r) => r.is_default).map((r) => r.id));
  if (scope.restrictTo === 'currentSiteSpace') return (id) => id === current!.id;
  if (scope.restrictTo === 'otherSiteSpaces') return (id) => defaults.has(id) && id !== current!.id;
  return (id) => defaults.has(id) || id === current?.id;
}

const TYPES: [RegExp, 'troubleshooting' | 'how-to' | 'reference' | 'exploring'][] = [
  [/\b(error|errors|fail|fails|failed|failing|broken|not working|doesn'?t work|does not work|can'?t|cannot|unable|issue|problem|wrong|crash)/i, 'troubleshooting'],
  [/^(how|can i|could i|is it possible|what'?s the best way|steps)/i, 'how-to'],
  [/^(what|which|where|when|who|list|define|is there|are there|does|do)\b/i, 'reference'],
  [/^(why|tell me|explain|overview|compare|should)/i, 'exploring'],
];

/** A question's type, by its words (Folio's own rule: no model involved). */
export function questionType(question: string) {
  for (const [pattern, type] of TYPES) if (pattern.test(question)) return type;
  return 'unknown' as const;
}

export const normalizeQuestion = (question: string) =>
  question
    .toLowerCase()
    .replace(/\s+/g, ' ')
    .replace(/[\s?.!]+$/, '')
    .trim();

/** A visitor id for a reader who sent no session: a keyed hash, not linkable across sites. */
function anonymousVisitor(services: Services, site: SiteRow, who: string): string {
  return createHash('sha256').update(services.signingKey).update(`ask|${site.id}|${who}`).digest('base64url').slice(0, 22);
}

/**
 * A question on a site, answered from what the site shows the visitor, recorded when the answer is
 * complete (with its sources), then streamed: the caller receives the same states.
 */
export async function* askOnSite(
  services: Services,
  reading: SiteReading,
  input: SiteQuestionInput,
  /** `reader`: a reader of Folio's own pages, as their events know them (used when the body names no session). */
  opts: { signal?: AbortSignal; who?: string; reader?: { visitorId: string; sessionId: string } | undefined } = {},
): AnswerStream {
  const question = cleanQuestion(input.question);
  const only = scopeFilter(reading.reader.structure, input.scope);
  const passages = await visitorPassages(reading.reader, reading.visitor, question, only, { config: services.config, onError: (err) => services.jobs.logger?.warn({ err }, 'ask: the question could not be embedded; search alone answers') });
  let last: AnswerState | undefined;
  for await (const state of answerStates(services.config, question, passages, { goal: input.context?.goal, ...(opts.signal ? { signal: opts.signal } : {}) })) {
    last = state;
    yield state;
  }
  if (last) await record(services, reading, input, question, last, opts.who ?? '', input.session ? undefined : opts.reader);
}

async function record(services: Services, reading: SiteReading, input: SiteQuestionInput, question: string, answer: AnswerState, who: string, reader?: { visitorId: string; sessionId: string }) {
  const site = reading.reader.site;
  const now = new Date(services.now());
  // A reader of Folio's own pages is the one their page views and searches know (ids already hashed).
  const session = input.session ?? reader;
  const previous = session ? await store.lastAnswerOfSession(services.db, site.organization_id, site.id, session.sessionId) : undefined;
  const id = newId();
  const normalized = normalizeQuestion(question);
  await store.recordAnswer(
    services.db,
    { id: newId(), organization_id: site.organization_id, site_id: site.id, question, normalized, type: questionType(question) },
    {
      id,
      organization_id: site.organization_id,
      site_id: site.id,
      raw: input.question,
      text: question,
      thread_id: previous?.thread_id ?? id,
      previous_id: previous?.id ?? null,
      visitor_id: session?.visitorId ?? anonymousVisitor(services, site, who),
      session_id: session?.sessionId ?? null,
      response: answer.markdown,
      language: reading.reader.structure.siteSpaces[0]?.space.language ?? 'en',
      answered: answer.answered,
      helpfulness: answer.answered === 'yes' ? 'high' : answer.answered === 'partially' ? 'medium' : 'low',
      relevance: normalized.length < 3 ? 'unclear' : 'relevant',
      channel: reading.channel,
      created_at: now,
    },
    sourcesToRecord(answer.sources),
  );
  // A question is also a reader event of the site (aggregateSiteEvents counts it).
  const url = services.urls.site(reading.reader.base);
  await insertEvents(services.db, [
    {
      organization_id: site.organization_id,
      site_id: site.id,
      type: 'ask_question',
      url,
      url_path: new URL(url).pathname,
      display_context: reading.channel === 'site' ? 'site' : 'server',
      site_section_id: null,
      site_space_id: input.context?.siteSpaceId ?? null,
      share_key: null,
      space_id: null,
      page_id: null,
      query: question,
      feedback_rating: null,
      ask_rating: null,
      visitor_id: reader?.visitorId ?? eventId(services, site.id, session?.visitorId ?? `anonymous|${who}`),
      session_id: reader?.sessionId ?? eventId(services, site.id, session?.sessionId ?? `anonymous|${who}`),
      created_at: now,
    },
  ]);
}


/** One source per page, weighted by its rank (the first counts most), with the passages quoted. */
function sourcesToRecord(passages: Passage[]): store.RecordedSource[] {
  const byPage = new Map<string, { p: Passage; passages: string[]; rank: number }>();
  passages.forEach((p, rank) => {
    const found = byPage.get(p.pageId);
    if (found) found.passages.push(p.text);
    else byPage.set(p.pageId, { p, passages: [p.text], rank });
  });
  const weights = [...byPage.values()].map((s) => 1 / (s.rank + 1));
  const sum = weights.reduce((a, b) => a + b, 0) || 1;
  return [...byPage.values()].map((s, i) => ({
    space_id: s.p.spaceId,
    revision_id: s.p.revisionId,
    page_id: s.p.pageId,
    title: s.p.title,
    passage: s.passages.join('\n\n'),
    weight: Math.round((weights[i]! / sum) * 1000) / 1000,
  }));
}

/** The API's `streamAskInSite`: answered from what the site shows the visitor the caller names (siteForCaller). */
export async function askInSite(ctx: Ctx, organizationId: string, siteId: string, input: SiteQuestionInput, credentials: VisitorCredentials, signal?: AbortSignal): Promise<AnswerStream> {
  const reading = await siteForCaller(ctx, organizationId, siteId, credentials);
  // Checked before the stream starts, so a bad scope is a 400, not an error event.
  scopeFilter(reading.reader.structure, input.scope);
  cleanQuestion(input.question);
  return askOnSite(ctx, reading, input, { ...(signal ? { signal } : {}), who: ctx.user.id });
}

/** Questions a site's readers might ask: its most asked answered questions, then its pages' titles. */
export async function recommendedOnSite(services: Services, reading: SiteReading, siteSpaceId?: string): Promise<string[]> {
  const { site, structure, base } = reading.reader;
  const asked = await store.popularQuestions(services.db, site.organization_id, site.id, 15);
  // One site space when named, else the default ones (a reader's first view of the site).
  const only = scopeFilter(structure, siteSpaceId ? { mode: 'specific', siteSpaceIds: [siteSpaceId] } : { mode: 'default' });
  const pages = await everyPage(services, site, base, structure, reading.visitor, only);
  // A question others asked is recommended only when every page its answers quoted is one this
  // reader may read: its words say nothing of content under conditions they do not meet.
  const readable = new Set(pages.map(({ page, spaceId }) => `${spaceId}/${page.id}`));
  const sources = await store.sourcePagesOf(services.db, site.organization_id, site.id, asked.map((q) => q.id));
  const popular = asked.filter((q) => (sources.get(q.id) ?? []).every((p) => readable.has(p))).slice(0, 5).map((q) => q.question);
  const titles = pages.filter(({ page }) => page.entry.type === 'document' && !page.hidden).map(({ page }) => page.title);
  return questionsFromTitles(titles.slice(0, 40), popular);
}

export async function recommendedInSite(ctx: Ctx, organizationId: string, siteId: string, siteSpaceId: string | undefined, credentials: VisitorCredentials) {
  const reading = await siteForCaller(ctx, organizationId, siteId, credentials);
  return recommendedOnSite(ctx, reading, siteSpaceId);
}
