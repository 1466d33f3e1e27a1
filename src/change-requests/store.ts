import { sql, type SelectQueryBuilder } from 'kysely';
import { json, type Db } from '../platform/db/database.ts';
import type { ChangeRequestRow, ChangeRequestStatus, Database, MergeRules, SpaceRow } from '../platform/db/schema.ts';
import { newId } from '../platform/ids.ts';
import { paginate, type PageRequest } from '../platform/paging.ts';

/**
 * The SQL of change requests, their reviews and requested reviewers. Change requests are found
 * through their organization and space; reviews and reviewers through a change request found so.
 *
 * Locks on spaces and change requests are FOR NO KEY UPDATE, never FOR UPDATE: they serialize the
 * writers of a row as well, but do not block the foreign-key checks (FOR KEY SHARE) of rows that
 * point at it. With FOR UPDATE, a content edit (holding its change request, inserting a revision
 * of the space) and an update or merge (holding the space, waiting for the change request)
 * deadlocked on PostgreSQL.
 */

/** A change request of a space, by id or by its number in the space. */
export async function findChangeRequest(
  db: Db,
  organizationId: string,
  spaceId: string,
  key: { id: string } | { number: number },
): Promise<ChangeRequestRow | undefined> {
  const query = db.selectFrom('change_requests').selectAll().where('organization_id', '=', organizationId).where('space_id', '=', spaceId);
  return 'number' in key ? query.where('number', '=', key.number).executeTakeFirst() : query.where('id', '=', key.id).executeTakeFirst();
}

/** Locks the change request for the rest of the transaction and reads it as it is now. */
export async function lockChangeRequest(trx: Db, organizationId: string, changeRequestId: string): Promise<ChangeRequestRow> {
  return trx
    .selectFrom('change_requests')
    .selectAll()
    .where('organization_id', '=', organizationId)
    .where('id', '=', changeRequestId)
    .forNoKeyUpdate()
    .executeTakeFirstOrThrow();
}

/** Locks the space row for the rest of the transaction (serializes numbering, merges and updates). */
export async function lockSpace(trx: Db, organizationId: string, spaceId: string): Promise<SpaceRow> {
  return trx.selectFrom('spaces').selectAll().where('organization_id', '=', organizationId).where('id', '=', spaceId).forNoKeyUpdate().executeTakeFirstOrThrow();
}

/** The next change-request number of a space; call it with the space locked. */
export async function nextNumber(trx: Db, organizationId: string, spaceId: string): Promise<number> {
  const last = await trx
    .selectFrom('change_requests')
    .select(sql<number>`coalesce(max(number), 0)`.as('n'))
    .where('organization_id', '=', organizationId)
    .where('space_id', '=', spaceId)
    .executeTakeFirstOrThrow();
  return Number(last.n) + 1;
}

export interface NewChangeRequest {
  number: number;
  subject: string;
  createdBy: string;
  /** The head revision. */
  revision: string;
  /** The revision it starts from (`revision_initial`); the head when not given. */
  base?: string | undefined;
  /** The space's revision it was last brought up to date with (`revision_merged_ancestor`). */
  mergedAncestor?: string | null | undefined;
  cluster: string | null;
  /** Pages left with conflict markers. */
  conflicts?: string[] | undefined;
}

export async function insertChangeRequest(trx: Db, space: Pick<SpaceRow, 'id' | 'organization_id'>, input: NewChangeRequest): Promise<ChangeRequestRow> {
  const now = new Date();
  return trx
    .insertInto('change_requests')
    .values({
      id: newId(),
      space_id: space.id,
      organization_id: space.organization_id,
      number: input.number,
      status: 'open',
      subject: input.subject,
      description: null,
      created_by: input.createdBy,
      created_at: now,
      updated_at: now,
      revision_initial: input.base ?? input.revision,
      revision: input.revision,
      revision_merged_ancestor: input.mergedAncestor ?? null,
      revision_merged: null,
      merged_by: null,
      merged_at: null,
      ...(input.cluster ? { conversations_issues_cluster: input.cluster } : {}),
      ...(input.conflicts ? { conflicts: json(input.conflicts) } : {}),
    })
    .returningAll()
    .executeTakeFirstOrThrow();
}

export type ChangeRequestChanges = Partial<
  Pick<
    ChangeRequestRow,
    'subject' | 'status' | 'conversations_issues_cluster' | 'updated_at' | 'revision' | 'revision_merged_ancestor' | 'revision_merged' | 'merged_by' | 'merged_at'
  >
> & { description?: unknown; conflicts?: string[] };

export async function updateChangeRequest(db: Db, organizationId: string, changeRequestId: string, changes: ChangeRequestChanges): Promise<ChangeRequestRow> {
  const { description, conflicts, ...columns } = changes;
  return db
    .updateTable('change_requests')
    .set({
      ...columns,
      ...(description !== undefined ? { description: json(description) } : {}),
      ...(conflicts !== undefined ? { conflicts: json(conflicts) } : {}),
    })
    .where('organization_id', '=', organizationId)
    .where('id', '=', changeRequestId)
    .returningAll()
    .executeTakeFirstOrThrow();
}

/** Removes a change request that was just created (a template that could not apply to it). */
export async function deleteChangeRequest(db: Db, organizationId: string, changeRequestId: string): Promise<void> {
  await db.deleteFrom('change_requests').where('organization_id', '=', organizationId).where('id', '=', changeRequestId).execute();
}

export async function addContributor(trx: Db, changeRequestId: string, userId: string): Promise<void> {
  await trx
    .insertInto('change_request_contributors')
    .values({ change_request_id: changeRequestId, user_id: userId })
    .onConflict((oc) => oc.doNothing())
    .execute();
}

export async function insertRevision(trx: Db, space: Pick<SpaceRow, 'id' | 'organization_id'>, root: string, parents: string[], type: string, userId: string): Promise<string> {
  const id = newId();
  await trx
    .insertInto('revisions')
    .values({ id, space_id: space.id, organization_id: space.organization_id, parents: json(parents), type, root, created_by: userId, created_at: new Date(), message: null })
    .execute();
  return id;
}

/** Points the space at a new revision (a merge). */
export async function setSpaceRevision(trx: Db, organizationId: string, spaceId: string, revisionId: string, at: Date): Promise<void> {
  await trx.updateTable('spaces').set({ revision_id: revisionId, updated_at: at }).where('organization_id', '=', organizationId).where('id', '=', spaceId).execute();
}

export async function organizationMergeRules(db: Db, organizationId: string): Promise<MergeRules> {
  const org = await db.selectFrom('organizations').select('merge_rules').where('id', '=', organizationId).executeTakeFirstOrThrow();
  return org.merge_rules;
}

export interface ChangeRequestFilters {
  creator?: string | undefined;
  contributor?: string | undefined;
  requestedReviewer?: string | undefined;
  conversationsIssuesCluster?: string | undefined;
  orderBy?: 'updatedAt' | 'createdAt' | undefined;
}

function filtered(db: Db, organizationId: string, statuses: ChangeRequestStatus[], filters: ChangeRequestFilters) {
  let base = db
    .selectFrom('change_requests')
    .selectAll('change_requests')
    .where('change_requests.organization_id', '=', organizationId)
    .where('change_requests.status', 'in', statuses);
  if (filters.creator) base = base.where('change_requests.created_by', '=', filters.creator);
  if (filters.conversationsIssuesCluster) base = base.where('change_requests.conversations_issues_cluster', '=', filters.conversationsIssuesCluster);
  if (filters.contributor) {
    const user = filters.contributor;
    base = base.where((eb) =>
      eb.exists(eb.selectFrom('change_request_contributors as c').select('c.user_id').whereRef('c.change_request_id', '=', 'change_requests.id').where('c.user_id', '=', user)),
    );
  }
  if (filters.requestedReviewer) {
    const user = filters.requestedReviewer;
    base = base.where((eb) =>
      eb.exists(eb.selectFrom('change_request_reviewers as r').select('r.user_id').whereRef('r.change_request_id', '=', 'change_requests.id').where('r.user_id', '=', user)),
    );
  }
  return base;
}

function page(base: ReturnType<typeof filtered>, filters: ChangeRequestFilters, request: PageRequest) {
  const field = filters.orderBy === 'createdAt' ? 'created_at' : 'updated_at';
  return paginate(
    base,
    { kind: `crs:${field}`, sortExpr: sql.ref(`change_requests.${field}`), sortType: 'timestamp', seqExpr: sql.ref('change_requests.seq'), direction: 'desc' },
    request,
    (cr: ChangeRequestRow) => cr[field] as unknown as string,
  );
}

/** A page of the change requests of one space with one of the statuses. */
export async function listInSpace(db: Db, organizationId: string, spaceId: string, statuses: ChangeRequestStatus[], filters: ChangeRequestFilters, request: PageRequest) {
  return page(filtered(db, organizationId, statuses, filters).where('change_requests.space_id', '=', spaceId), filters, request);
}

/** A page of the change requests of the organization's spaces that `spaces` (a query of space ids) selects. */
export async function listInSpaces(
  db: Db,
  organizationId: string,
  spaces: SelectQueryBuilder<Database, 'spaces', { id: string }>,
  statuses: ChangeRequestStatus[],
  filters: ChangeRequestFilters & { space?: string | undefined },
  request: PageRequest,
) {
  let base = filtered(db, organizationId, statuses, filters).where('change_requests.space_id', 'in', spaces);
  if (filters.space) base = base.where('change_requests.space_id', '=', filters.space);
  return page(base, filters, request);
}

/** The current revision of each of the spaces. */
export async function spaceRevisions(db: Db, organizationId: string, spaceIds: string[]): Promise<Map<string, string>> {
  if (spaceIds.length === 0) return new Map();
  const spaces = await db.selectFrom('spaces').select(['id', 'revision_id']).where('organization_id', '=', organizationId).where('id', 'in', spaceIds).execute();
  return new Map(spaces.map((s) => [s.id, s.revision_id]));
}

/** The number of open comments in each of the change requests. */
export async function openCommentCounts(db: Db, organizationId: string, changeRequestIds: string[]): Promise<Map<string, number>> {
  if (changeRequestIds.length === 0) return new Map();
  const open = await db
    .selectFrom('comments')
    .select((eb) => ['change_request_id', eb.fn.countAll<number>().as('n')])
    .where('organization_id', '=', organizationId)
    .where('change_request_id', 'in', changeRequestIds)
    .where('status', '=', 'open')
    .groupBy('change_request_id')
    .execute();
  return new Map(open.map((o) => [o.change_request_id!, Number(o.n)]));
}

// Reviews and requested reviewers of a change request found in its organization.

export async function insertReview(db: Db, changeRequest: Pick<ChangeRequestRow, 'id' | 'revision'>, reviewerId: string, status: 'approved' | 'changes-requested') {
  return db
    .insertInto('change_request_reviews')
    .values({ id: newId(), change_request_id: changeRequest.id, reviewer_id: reviewerId, status, revision: changeRequest.revision, created_at: new Date() })
    .returningAll()
    .executeTakeFirstOrThrow();
}

export async function listReviews(db: Db, changeRequestId: string, request: PageRequest) {
  return paginate(
    db.selectFrom('change_request_reviews').selectAll().where('change_request_id', '=', changeRequestId),
    { kind: 'reviews', sortExpr: null, seqExpr: sql.ref('seq'), direction: 'asc' },
    request,
  );
}

export async function findReview(db: Db, changeRequestId: string, reviewId: string) {
  return db.selectFrom('change_request_reviews').selectAll().where('change_request_id', '=', changeRequestId).where('id', '=', reviewId).executeTakeFirst();
}

/** The reviews of the given reviewers, newest first. */
export async function reviewsBy(db: Db, changeRequestId: string, reviewerIds: string[]) {
  return db
    .selectFrom('change_request_reviews')
    .select(['reviewer_id', 'status', 'revision', 'seq'])
    .where('change_request_id', '=', changeRequestId)
    .where('reviewer_id', 'in', reviewerIds)
    .orderBy('seq', 'desc')
    .execute();
}

/** Adds requested reviewers (those already requested stay as they were) and reads them all back. */
export async function addRequestedReviewers(db: Db, changeRequestId: string, userIds: string[], requestedBy: string) {
  const now = new Date();
  await db
    .insertInto('change_request_reviewers')
    .values(userIds.map((user_id) => ({ change_request_id: changeRequestId, user_id, requested_by: requestedBy, created_at: now })))
    .onConflict((oc) => oc.columns(['change_request_id', 'user_id']).doNothing())
    .execute();
  return db.selectFrom('change_request_reviewers').selectAll().where('change_request_id', '=', changeRequestId).where('user_id', 'in', userIds).execute();
}

export async function listRequestedReviewers(db: Db, changeRequestId: string, request: PageRequest) {
  return paginate(
    db.selectFrom('change_request_reviewers').selectAll().where('change_request_id', '=', changeRequestId),
    { kind: 'requested-reviewers', sortExpr: null, seqExpr: sql.ref('seq'), direction: 'asc' },
    request,
  );
}

export async function removeRequestedReviewer(db: Db, changeRequestId: string, userId: string): Promise<void> {
  await db.deleteFrom('change_request_reviewers').where('change_request_id', '=', changeRequestId).where('user_id', '=', userId).execute();
}

/** The head and base revisions of the open change requests of a space. */
export async function openChangeRequestRevisions(db: Db, organizationId: string, spaceId: string) {
  return db
    .selectFrom('change_requests')
    .select(['revision', 'revision_initial', 'revision_merged_ancestor'])
    .where('organization_id', '=', organizationId)
    .where('space_id', '=', spaceId)
    .where('status', '=', 'open')
    .execute();
}

/** The change request whose merge made `revisionId` in a space of the organization, if any. */
export async function mergedInto(db: Db, organizationId: string, spaceId: string, revisionId: string): Promise<ChangeRequestRow | undefined> {
  return db
    .selectFrom('change_requests')
    .selectAll()
    .where('organization_id', '=', organizationId)
    .where('space_id', '=', spaceId)
    .where('revision_merged', '=', revisionId)
    .executeTakeFirst();
}
