import { Type, type Static } from '@sinclair/typebox';
import { sql, type RawBuilder } from 'kysely';
import type { Ctx } from '../platform/context.ts';
import { BadRequestError } from '../platform/errors.ts';
import { asEnum, Timestamp } from '../platform/schemas.ts';
import { readableSite, requireSite } from '../sites/access.ts';
import { eventId, insertEvents } from '../published-site/site-events.ts';
import * as store from './store.ts';

/**
 * Reader events of a site (`trackEventsInSiteById`) and their aggregation (`aggregateSiteEvents`):
 * page views, searches, page feedback, questions and ratings of answers, counted by page, by day
 * or by any of the columns below. Anyone who may read the site may send its events (a renderer
 * does, for its readers); its members read the aggregates. A rating of an answer
 * (`ask_rate_response`) is also kept on the answer, in the site's question stats.
 */

export const EVENT_TYPES = [
  'page_view', 'page_markdown_request', 'search_open', 'search_type_query', 'search_open_result', 'page_post_feedback', 'page_post_feedback_comment',
  'agent_feedback', 'ask_question', 'ask_view', 'ask_rate_response', 'link_click', 'api_client_open', 'api_client_request', 'ad_click', 'ad_display',
  'trademark_click', 'llms_request', 'mcp_request', 'rss_request',
] as const;

const NullableId = Type.Optional(Type.Union([Type.String({ maxLength: 100 }), Type.Null()]));

export const SiteEvent = Type.Object(
  {
    type: asEnum(Type.Union(EVENT_TYPES.map((t) => Type.Literal(t)))),
    session: Type.Object({ visitorId: Type.String({ maxLength: 200 }), sessionId: Type.String({ maxLength: 200 }) }, { additionalProperties: true }),
    location: Type.Object(
      {
        url: Type.String({ format: 'uri', maxLength: 2048 }),
        displayContext: Type.Optional(asEnum(Type.Union([Type.Literal('site'), Type.Literal('server'), Type.Literal('embed'), Type.Literal('mcp')]))),
        siteSection: NullableId,
        siteSpace: NullableId,
        siteShareKey: NullableId,
        space: NullableId,
        revision: NullableId,
        page: NullableId,
      },
      { additionalProperties: true },
    ),
    timestamp: Type.Optional(Timestamp),
    query: Type.Optional(Type.String({ maxLength: 512 })),
    feedback: Type.Optional(Type.Object({ rating: asEnum(Type.Union([Type.Literal('bad'), Type.Literal('ok'), Type.Literal('good')])) }, { additionalProperties: true })),
    rating: Type.Optional(Type.Integer({ minimum: -1, maximum: 1 })),
    responseId: Type.Optional(Type.String({ maxLength: 100 })),
  },
  { additionalProperties: true },
);
export const TrackEventsBody = Type.Object({ events: Type.Array(SiteEvent, { maxItems: 100 }) });

/** How far from now an event's own timestamp may be (the official rule: five minutes). */
const SKEW_MS = 5 * 60_000;

export async function trackSiteEvents(ctx: Ctx, organizationId: string, siteId: string, body: Static<typeof TrackEventsBody>, shareKey?: string) {
  const { site } = await readableSite(ctx, organizationId, siteId, shareKey);
  const now = ctx.now();
  const rows = body.events.map((e, i) => {
    const at = e.timestamp ? Date.parse(e.timestamp) : now;
    if (Math.abs(at - now) > SKEW_MS) throw new BadRequestError(`events[${i}].timestamp: must be within 5 minutes of the current time`);
    const url = new URL(e.location.url);
    return {
      organization_id: site.organization_id,
      site_id: site.id,
      type: e.type,
      url: url.href,
      url_path: url.pathname,
      display_context: e.location.displayContext ?? 'site',
      site_section_id: e.location.siteSection ?? null,
      site_space_id: e.location.siteSpace ?? null,
      share_key: e.location.siteShareKey ?? null,
      space_id: e.location.space ?? null,
      page_id: e.location.page ?? null,
      query: e.query ?? null,
      feedback_rating: e.type === 'page_post_feedback' ? (e.feedback?.rating ?? null) : null,
      ask_rating: e.type === 'ask_rate_response' && (e.rating === 1 || e.rating === -1) ? e.rating : null,
      // Visitor and session ids are kept as keyed hashes: counted, never shown.
      visitor_id: eventId(ctx, site.id, e.session.visitorId),
      session_id: eventId(ctx, site.id, e.session.sessionId),
      created_at: new Date(at),
    };
  });
  await insertEvents(ctx.db, rows);
  for (const e of body.events) {
    if (e.type === 'ask_rate_response' && e.responseId && (e.rating === 1 || e.rating === -1)) {
      await store.rateAnswer(ctx.db, site.organization_id, site.id, e.responseId, e.rating, new Date(now));
    }
  }
}

// Aggregation ------------------------------------------------------------------------------------

const DIMENSIONS = {
  datetime: null, // by its interval, below
  dayOfWeek: sql`extract(isodow FROM e.created_at AT TIME ZONE 'UTC')::int`,
  hourOfDay: sql`extract(hour FROM e.created_at AT TIME ZONE 'UTC')::int`,
  url: sql`e.url`,
  urlPath: sql`e.url_path`,
  eventType: sql`e.type`,
  siteSection: sql`e.site_section_id`,
  siteSpace: sql`e.site_space_id`,
  siteShareKey: sql`e.share_key`,
  displayContext: sql`e.display_context`,
  page: sql`CASE WHEN e.space_id IS NULL THEN NULL ELSE jsonb_build_object('page', e.page_id, 'space', e.space_id) END`,
  eventSearchQuery: sql`e.query`,
  eventPageFeedbackRating: sql`e.feedback_rating`,
  eventAskResponseRating: sql`e.ask_rating::int`,
} as const;

const METRICS = {
  eventsCount: sql`count(*)::int`,
  sessionsCount: sql`count(DISTINCT e.session_id)::int`,
  visitorsCount: sql`count(DISTINCT e.visitor_id)::int`,
  pageFeedbackRating: sql`jsonb_build_object('ok', count(*) FILTER (WHERE e.feedback_rating = 'ok'), 'good', count(*) FILTER (WHERE e.feedback_rating = 'good'), 'bad', count(*) FILTER (WHERE e.feedback_rating = 'bad'))`,
  askResponseRating: sql`jsonb_build_object('positive', count(*) FILTER (WHERE e.ask_rating = 1), 'negative', count(*) FILTER (WHERE e.ask_rating = -1))`,
} as const;

type Dimension = keyof typeof DIMENSIONS;
type Metric = keyof typeof METRICS;
const SUPPORTED = [...Object.keys(DIMENSIONS), ...Object.keys(METRICS)];

const Column = Type.Object(
  { column: Type.String({ maxLength: 50 }), interval: Type.Optional(asEnum(Type.Union([Type.Literal('hour'), Type.Literal('day'), Type.Literal('week'), Type.Literal('month')]))) },
  { additionalProperties: true },
);
export const AggregateBody = Type.Object({
  select: Type.Optional(Type.Array(Column, { maxItems: 20 })),
  where: Type.Optional(
    Type.Array(
      Type.Object(
        {
          column: Type.String({ maxLength: 50 }),
          values: Type.Array(Type.Unknown(), { maxItems: 1000 }),
          operator: Type.Optional(
            asEnum(Type.Union(['in', 'notIn', 'greaterThan', 'greaterThanOrEqual', 'lessThan', 'lessThanOrEqual'].map((o) => Type.Literal(o)))),
          ),
        },
        { additionalProperties: true },
      ),
      { maxItems: 20 },
    ),
  ),
  groupBy: Type.Optional(Type.Array(Column, { maxItems: 10 })),
  order: Type.Optional(Type.Object({ by: Column, direction: asEnum(Type.Union([Type.Literal('asc'), Type.Literal('desc')])) })),
  range: Type.Union([
    asEnum(Type.Union(['lastYear', 'last3Months', 'last30Days', 'last7Days', 'last24Hours'].map((r) => Type.Literal(r)))),
    Type.Object({ from: Timestamp, to: Timestamp }),
  ]),
  limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 1000 })),
});
export const AggregateResult = Type.Object({ columns: Type.Array(Type.Object({ column: Type.String(), values: Type.Array(Type.Unknown()) }, { additionalProperties: true })) });

const PRESETS: Record<string, number> = { lastYear: 365, last3Months: 91, last30Days: 30, last7Days: 7, last24Hours: 1 };

function known(column: string, field: string): column is Dimension | Metric {
  if (!SUPPORTED.includes(column)) throw new BadRequestError(`${field}: Folio does not aggregate "${column}"; it aggregates ${SUPPORTED.join(', ')}`);
  return true;
}

const isMetric = (c: string): c is Metric => c in METRICS;

function expressionOf(col: { column: string; interval?: string | undefined }): RawBuilder<unknown> {
  if (col.column === 'datetime') return sql`date_trunc(${sql.lit(col.interval ?? 'day')}, e.created_at AT TIME ZONE 'UTC') AT TIME ZONE 'UTC'`;
  return isMetric(col.column) ? METRICS[col.column] : DIMENSIONS[col.column as Exclude<Dimension, 'datetime'>]!;
}

/** Columns only some events have: grouped by, they keep those events. */
const ONLY_WITH = new Set(['eventSearchQuery', 'eventPageFeedbackRating', 'eventAskResponseRating']);

/** Columns the comparison operators apply to (besides datetime). */
const COMPARABLE = new Set(['dayOfWeek', 'hourOfDay', 'eventAskResponseRating', 'eventsCount', 'sessionsCount', 'visitorsCount']);

const OPERATORS = { greaterThan: sql`>`, greaterThanOrEqual: sql`>=`, lessThan: sql`<`, lessThanOrEqual: sql`<=` } as const;

export async function aggregateSiteEvents(ctx: Ctx, organizationId: string, siteId: string, body: Static<typeof AggregateBody>) {
  const { site } = await requireSite(ctx, organizationId, siteId, 'read', "read the site's reader events");
  const now = ctx.now();
  const [from, to] =
    typeof body.range === 'string' ? [new Date(now - PRESETS[body.range]! * 86_400_000), new Date(now)] : [new Date(body.range.from), new Date(body.range.to)];
  if (!(from <= to)) throw new BadRequestError('range: from must not be after to');
  const groupBy = body.groupBy ?? [];
  const select = body.select ?? [...groupBy, { column: 'eventsCount' }];
  select.forEach((c, i) => known(c.column, `select[${i}].column`));
  groupBy.forEach((c, i) => {
    known(c.column, `groupBy[${i}].column`);
    if (isMetric(c.column)) throw new BadRequestError(`groupBy[${i}].column: ${c.column} is a count, not something to group by`);
  });
  const dims = new Map<string, { column: string; interval?: string | undefined }>();
  for (const c of [...groupBy, ...select.filter((s) => !isMetric(s.column))]) dims.set(`${c.column}|${c.interval ?? ''}`, c);
  const hasMetric = select.some((c) => isMetric(c.column));
  if (!hasMetric && dims.size === 0) throw new BadRequestError('select: name at least one column');

  const where: RawBuilder<unknown>[] = [sql`e.organization_id = ${site.organization_id}`, sql`e.site_id = ${site.id}`, sql`e.created_at >= ${from}`, sql`e.created_at <= ${to}`];
  const having: RawBuilder<unknown>[] = [];
  // Grouping by what only some events have (a query, a rating) counts those events.
  for (const c of dims.values()) if (ONLY_WITH.has(c.column)) where.push(sql`${expressionOf(c)} IS NOT NULL`);
  (body.where ?? []).forEach((f, i) => {
    known(f.column, `where[${i}].column`);
    const expr = expressionOf({ column: f.column });
    const op = f.operator ?? 'in';
    let cond: RawBuilder<unknown>;
    if (op === 'in' || op === 'notIn') {
      if (f.column === 'page') {
        const pages = f.values.filter((v): v is { page: string; space: string } => !!v && typeof v === 'object');
        cond = pages.length ? sql`(${sql.join(pages.map((p) => sql`(e.space_id = ${String(p.space)} AND e.page_id IS NOT DISTINCT FROM ${p.page ?? null})`), sql` OR `)})` : sql`false`;
      } else {
        const values = f.values.map((v) => (v === null ? null : String(v)));
        cond = values.length ? sql`${expr}::text IN (${sql.join(values)})` : sql`false`;
      }
      if (op === 'notIn') cond = sql`NOT coalesce(${cond}, false)`;
    } else {
      const value = f.values[0];
      const operator = OPERATORS[op as keyof typeof OPERATORS];
      if (f.column === 'datetime') {
        const at = new Date(String(value));
        if (Number.isNaN(at.getTime())) throw new BadRequestError(`where[${i}].values: give the date-time to compare with`);
        cond = sql`e.created_at ${operator} ${at}`;
      } else {
        if (!COMPARABLE.has(f.column)) throw new BadRequestError(`where[${i}].operator: ${op} compares numbers and dates; ${f.column} takes in or notIn`);
        if (typeof value !== 'number' || !Number.isFinite(value)) throw new BadRequestError(`where[${i}].values: give the number to compare with`);
        cond = sql`${expr} ${operator} ${value}`;
      }
    }
    (isMetric(f.column) ? having : where).push(cond);
  });

  const selected = select.map((c, i) => sql`${expressionOf(c)} AS ${sql.ref(`c${i}`)}`);
  const groups = [...dims.values()].map((c) => expressionOf(c));
  const orderIndex = body.order ? select.findIndex((c) => c.column === body.order!.by.column) : -1;
  if (body.order && orderIndex < 0) throw new BadRequestError('order.by: order by a selected column');
  const order = orderIndex >= 0 ? sql`ORDER BY ${sql.ref(`c${orderIndex}`)} ${body.order!.direction === 'asc' ? sql`ASC` : sql`DESC`} NULLS LAST` : groups.length ? sql`ORDER BY 1` : sql``;
  const rows = await store.aggregateEvents(
    ctx.db,
    sql`SELECT ${sql.join(selected)} FROM site_events e WHERE ${sql.join(where, sql` AND `)}
      ${groups.length ? sql`GROUP BY ${sql.join(groups)}` : sql``}
      ${having.length ? sql`HAVING ${sql.join(having, sql` AND `)}` : sql``}
      ${order} LIMIT ${body.limit ?? 1000}`,
  );
  return {
    columns: select.map((c, i) => ({
      column: c.column,
      ...(c.interval ? { interval: c.interval } : {}),
      values: rows.map((r) => {
        const v = r[`c${i}`];
        if (c.column === 'datetime') return new Date(v as string).toISOString();
        return v;
      }),
    })),
  };
}

// Folio's own published pages ------------------------------------------------------------------
