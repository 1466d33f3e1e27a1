import { Type, type TSchema } from '@sinclair/typebox';
import { sql, type Expression, type SelectQueryBuilder, type SqlBool } from 'kysely';
import { BadRequestError } from './errors.ts';

export const DEFAULT_LIMIT = 50;
export const MAX_LIMIT = 1000;

/** Query parameters every list accepts. */
export const PageQuery = {
  page: Type.Optional(Type.String({ description: 'Cursor from `next.page` of the previous page.', maxLength: 512 })),
  limit: Type.Optional(
    Type.Integer({ minimum: 1, maximum: MAX_LIMIT, description: `Items per page (1 to ${MAX_LIMIT}, default ${DEFAULT_LIMIT}).` }),
  ),
};

/** The list envelope `{ next?: { page }, count, items }`. */
export function ListOf<T extends TSchema>(item: T, extra: Record<string, TSchema> = {}) {
  return Type.Object({
    next: Type.Optional(Type.Object({ page: Type.String() })),
    count: Type.Integer({ description: 'Total number of items matching the request.' }),
    items: Type.Array(item),
    ...extra,
  });
}

export type SortValue = string | number | null;

/**
 * A keyset cursor: the sort value and the tie-breaking `seq` of the last item of a page, plus a
 * fingerprint of the list's sort so a cursor cannot be replayed against a different ordering.
 * Opaque to clients (base64url JSON). Stable under inserts: new rows never shift a page boundary.
 */
export interface Cursor {
  v: SortValue;
  s: number;
  k: string;
}

export function encodeCursor(cursor: Cursor): string {
  return Buffer.from(JSON.stringify(cursor)).toString('base64url');
}

const INVALID_CURSOR = 'Invalid "page" cursor: pass the value of "next.page" from the previous response';

export function decodeCursor(page: string | undefined, kind: string): Cursor | undefined {
  if (page === undefined || page === '') return undefined;
  try {
    const parsed = JSON.parse(Buffer.from(page, 'base64url').toString('utf8'));
    if (
      parsed &&
      Number.isSafeInteger(parsed.s) &&
      parsed.k === kind &&
      (parsed.v === null || typeof parsed.v === 'string' || typeof parsed.v === 'number')
    ) {
      return parsed as Cursor;
    }
  } catch {
    // fall through
  }
  throw new BadRequestError(INVALID_CURSOR);
}

export interface KeysetSpec {
  /** Identifies the ordering, e.g. "members:joinedAt:desc". */
  kind: string;
  /** SQL expression sorted on (after the tie-breaker-free part); null for "seq only". */
  sortExpr: Expression<any> | null;
  /** How to turn the sort value of a row into cursor form and back into a SQL parameter. */
  sortType?: 'timestamp' | 'text' | 'number';
  seqExpr: Expression<any>;
  direction: 'asc' | 'desc';
}

/** The WHERE condition that starts a page after the cursor. */
export function afterCursor(spec: KeysetSpec, cursor: Cursor): Expression<SqlBool> {
  const cmp = sql.raw(spec.direction === 'asc' ? '>' : '<');
  if (!spec.sortExpr) return sql<SqlBool>`${spec.seqExpr} ${cmp} ${cursor.s}`;
  const value = spec.sortType === 'timestamp' && cursor.v !== null ? new Date(cursor.v as string) : cursor.v;
  // A tampered cursor's value must still be a date here: an invalid one cannot be sent to SQL.
  if (value instanceof Date && Number.isNaN(value.getTime())) throw new BadRequestError(INVALID_CURSOR);
  return sql<SqlBool>`(${spec.sortExpr}, ${spec.seqExpr}) ${cmp} (${value}, ${cursor.s})`;
}


export interface Page<T> {
  items: T[];
  next?: { page: string };
}

/**
 * Cuts a page out of `limit + 1` fetched rows: the extra row only tells whether a next page exists.
 */
export function toPage<R extends { seq: number }>(
  rows: R[],
  limit: number,
  spec: Pick<KeysetSpec, 'kind' | 'sortType'>,
  sortValue: (row: R) => SortValue = () => null,
): Page<R> {
  if (rows.length <= limit) return { items: rows };
  const items = rows.slice(0, limit);
  const last = items[items.length - 1]!;
  let v = sortValue(last);
  if (v !== null && spec.sortType === 'timestamp') v = new Date(v as unknown as Date).toISOString();
  return { items, next: { page: encodeCursor({ v, s: last.seq, k: spec.kind }) } };
}

export function limitOf(limit: number | undefined): number {
  return limit ?? DEFAULT_LIMIT;
}

export interface PageRequest {
  page?: string | undefined;
  limit?: number | undefined;
}

/**
 * Runs one page of a list: the total count of `base`, then up to `limit` rows after the cursor in
 * keyset order. Cost depends on the page size, not on the page's position in the list.
 */
export async function paginate<R extends { seq: number }>(
  base: SelectQueryBuilder<any, any, R>,
  spec: KeysetSpec,
  request: PageRequest,
  sortValue: (row: R) => SortValue = () => null,
  /** A cheaper way to know the total (a maintained counter) than counting `base`. */
  total?: () => Promise<number>,
): Promise<Page<R> & { count: number }> {
  const limit = limitOf(request.limit);
  const cursor = decodeCursor(request.page, spec.kind);
  const countQuery = base.clearSelect().clearOrderBy().select(sql<number>`count(*)::int`.as('count'));
  let pageQuery = cursor ? base.where(afterCursor(spec, cursor)) : base;
  if (spec.sortExpr) pageQuery = pageQuery.orderBy(spec.sortExpr, spec.direction);
  pageQuery = pageQuery.orderBy(spec.seqExpr, spec.direction).limit(limit + 1);
  const counted = total ? total() : countQuery.executeTakeFirst().then((row) => Number((row as { count?: number } | undefined)?.count ?? 0));
  const [count, rows] = await Promise.all([counted, pageQuery.execute()]);
  return { ...toPage(rows as R[], limit, spec, sortValue), count };
}
