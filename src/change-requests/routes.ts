import { Type } from '@sinclair/typebox';
import { errorResponses, type FolioApp } from '../platform/app.ts';
import type { Ctx } from '../platform/context.ts';
import type { ChangeRequestRow } from '../platform/db/schema.ts';
import { ListOf, PageQuery } from '../platform/paging.ts';
import { asEnum, ErrorResponse, OrganizationIdParams } from '../platform/schemas.ts';
import { presentChangeRequest } from './presenter.ts';
import {
  getReview,
  listRequestedReviewers,
  listReviews,
  presentRequestedReviewer,
  presentReview,
  removeRequestedReviewer,
  requestReviewers,
  submitReview,
} from './reviews.ts';
import {
  ChangeRequest,
  ChangeRequestStatus,
  CreateChangeRequestBody,
  CrParams,
  MergeResult,
  RequestedReviewer,
  Review,
  ReviewStatus,
  UpdateChangeRequestBody,
  UpdateContentBody,
} from './schemas.ts';
import {
  changesOf,
  createChangeRequest,
  editContent,
  listChangeRequests,
  listOrganizationChangeRequests,
  loadChangeRequest,
  mergeChangeRequest,
  updateChangeRequest,
  updateFromSpace,
  usersById,
} from './service.ts';

const tags = ['change-requests'];

/** Presents change requests with their authors and the current revision of their spaces. */
async function present(ctx: Ctx, crs: ChangeRequestRow[]) {
  const users = await usersById(ctx.db, crs.flatMap((c) => [c.created_by, c.merged_by]));
  const spaceIds = [...new Set(crs.map((c) => c.space_id))];
  const spaces = spaceIds.length ? await ctx.db.selectFrom('spaces').select(['id', 'revision_id']).where('id', 'in', spaceIds).execute() : [];
  const revisions = new Map(spaces.map((s) => [s.id, s.revision_id]));
  return crs.map((cr) => presentChangeRequest(ctx.urls, cr, { spaceRevision: revisions.get(cr.space_id) ?? '', users }));
}

const Filters = {
  ...PageQuery,
  creator: Type.Optional(Type.String({ maxLength: 100 })),
  contributor: Type.Optional(Type.String({ maxLength: 100 })),
  requestedReviewer: Type.Optional(Type.String({ maxLength: 100 })),
  conversationsIssuesCluster: Type.Optional(Type.String({ maxLength: 100 })),
  orderBy: Type.Optional(asEnum(Type.Union([Type.Literal('updatedAt'), Type.Literal('createdAt')]), { default: 'updatedAt' })),
};

const ListQuery = Type.Object({ ...Filters, status: Type.Optional(ChangeRequestStatus) });

/** The organization-wide list takes several statuses (`status=open&status=draft`), open by default. */
const OrganizationListQuery = Type.Object({
  ...Filters,
  status: Type.Optional(Type.Array(ChangeRequestStatus, { maxItems: 4, description: 'Statuses to list (default: open)' })),
  space: Type.Optional(Type.String({ maxLength: 100, description: 'Only the change requests of this space' })),
});

export async function changeRequestRoutes(app: FolioApp): Promise<void> {
  const SpaceParams = Type.Object({ spaceId: Type.String({ maxLength: 100 }) });

  app.post(
    '/spaces/:spaceId/change-requests',
    { schema: { operationId: 'createChangeRequest', tags, params: SpaceParams, body: CreateChangeRequestBody, response: { 201: ChangeRequest, ...errorResponses } } },
    async (req, reply) => {
      const ctx = req.ctx();
      const { cr } = await createChangeRequest(ctx, req.params.spaceId, req.body ?? {});
      reply.status(201).header('location', ctx.urls.api(`/spaces/${cr.space_id}/change-requests/${cr.id}`));
      return (await present(ctx, [cr]))[0];
    },
  );

  app.get(
    '/spaces/:spaceId/change-requests',
    { schema: { operationId: 'listChangeRequestsForSpace', tags, params: SpaceParams, querystring: ListQuery, response: { 200: ListOf(ChangeRequest), ...errorResponses } } },
    async (req) => {
      const ctx = req.ctx();
      const { space: _space, ...page } = await listChangeRequests(ctx, req.params.spaceId, req.query);
      return { ...page, items: await present(ctx, page.items) };
    },
  );

  app.get(
    '/orgs/:organizationId/change-requests',
    {
      schema: {
        operationId: 'listChangeRequestsForOrganization',
        tags,
        params: OrganizationIdParams,
        querystring: OrganizationListQuery,
        response: { 200: ListOf(ChangeRequest), ...errorResponses },
      },
    },
    async (req) => {
      const ctx = req.ctx();
      const { status, ...query } = req.query;
      const page = await listOrganizationChangeRequests(ctx, req.params.organizationId, { ...query, statuses: status });
      return { ...page, items: await present(ctx, page.items) };
    },
  );

  app.get(
    '/spaces/:spaceId/change-requests/:changeRequestId',
    { schema: { operationId: 'getChangeRequestById', tags, params: CrParams, response: { 200: ChangeRequest, ...errorResponses } } },
    async (req) => {
      const ctx = req.ctx();
      const { cr } = await loadChangeRequest(ctx, req.params.spaceId, req.params.changeRequestId);
      return (await present(ctx, [cr]))[0];
    },
  );

  app.patch(
    '/spaces/:spaceId/change-requests/:changeRequestId',
    { schema: { operationId: 'updateChangeRequestById', tags, params: CrParams, body: UpdateChangeRequestBody, response: { 200: ChangeRequest, ...errorResponses } } },
    async (req) => {
      const ctx = req.ctx();
      return (await present(ctx, [await updateChangeRequest(ctx, req.params.spaceId, req.params.changeRequestId, req.body)]))[0];
    },
  );

  app.post(
    '/spaces/:spaceId/change-requests/:changeRequestId/content',
    {
      schema: {
        operationId: 'updateChangeRequestContent',
        tags,
        params: CrParams,
        body: UpdateContentBody,
        response: { 200: ChangeRequest, ...errorResponses },
      },
    },
    async (req) => {
      const ctx = req.ctx();
      return (await present(ctx, [await editContent(ctx, req.params.spaceId, req.params.changeRequestId, req.body.changes)]))[0];
    },
  );

  app.post(
    '/spaces/:spaceId/change-requests/:changeRequestId/merge',
    { schema: { operationId: 'mergeChangeRequest', tags, params: CrParams, response: { 200: MergeResult, ...errorResponses, 409: ErrorResponse } } },
    async (req) => mergeChangeRequest(req.ctx(), req.params.spaceId, req.params.changeRequestId),
  );

  app.post(
    '/spaces/:spaceId/change-requests/:changeRequestId/update',
    { schema: { operationId: 'updateChangeRequest', tags, params: CrParams, response: { 200: MergeResult, ...errorResponses } } },
    async (req) => {
      const { revision, result } = await updateFromSpace(req.ctx(), req.params.spaceId, req.params.changeRequestId);
      return { revision, result };
    },
  );

  app.get(
    '/spaces/:spaceId/change-requests/:changeRequestId/changes',
    {
      schema: {
        operationId: 'getChangeRequestChanges',
        tags,
        params: CrParams,
        querystring: Type.Object({ limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 1000 })) }),
        response: {
          200: Type.Object({
            changes: Type.Array(Type.Object({ type: Type.String() }, { additionalProperties: true })),
            more: Type.Optional(Type.Integer()),
            conflicts: Type.Array(Type.Object({ page: Type.String(), title: Type.String(), reason: Type.String() }), {
              description: 'Pages an update left with conflict markers: merging waits until they are edited',
            }),
          }),
          ...errorResponses,
        },
      },
    },
    async (req) => changesOf(req.ctx(), req.params.spaceId, req.params.changeRequestId, req.query.limit),
  );

  // Reviews
  app.get(
    '/spaces/:spaceId/change-requests/:changeRequestId/reviews',
    { schema: { operationId: 'getReviewsByChangeRequestId', tags, params: CrParams, querystring: Type.Object(PageQuery), response: { 200: ListOf(Review), ...errorResponses } } },
    async (req) => {
      const ctx = req.ctx();
      const { cr, users, ...page } = await listReviews(ctx, req.params.spaceId, req.params.changeRequestId, req.query);
      return { ...page, items: page.items.map((r) => presentReview(ctx.urls, r, cr.space_id, cr.revision, users)) };
    },
  );
  app.post(
    '/spaces/:spaceId/change-requests/:changeRequestId/reviews',
    {
      schema: {
        operationId: 'submitChangeRequestReview',
        tags,
        params: CrParams,
        body: Type.Object({ status: ReviewStatus }, { additionalProperties: true }),
        response: { 201: Review, ...errorResponses },
      },
    },
    async (req, reply) => {
      const ctx = req.ctx();
      const { review, cr } = await submitReview(ctx, req.params.spaceId, req.params.changeRequestId, req.body.status);
      reply.status(201);
      return presentReview(ctx.urls, review, cr.space_id, cr.revision, new Map([[ctx.user.id, ctx.user]]));
    },
  );
  app.get(
    '/spaces/:spaceId/change-requests/:changeRequestId/reviews/:reviewId',
    {
      schema: {
        operationId: 'getChangeRequestReviewById',
        tags,
        params: Type.Object({ ...CrParams.properties, reviewId: Type.String({ maxLength: 100 }) }),
        response: { 200: Review, ...errorResponses },
      },
    },
    async (req) => {
      const ctx = req.ctx();
      const { review, cr, users } = await getReview(ctx, req.params.spaceId, req.params.changeRequestId, req.params.reviewId);
      return presentReview(ctx.urls, review, cr.space_id, cr.revision, users);
    },
  );

  // Requested reviewers
  app.get(
    '/spaces/:spaceId/change-requests/:changeRequestId/requested-reviewers',
    {
      schema: {
        operationId: 'getRequestedReviewersByChangeRequestId',
        tags,
        params: CrParams,
        querystring: Type.Object(PageQuery),
        response: { 200: ListOf(RequestedReviewer), ...errorResponses },
      },
    },
    async (req) => {
      const ctx = req.ctx();
      const { cr, users, ...page } = await listRequestedReviewers(ctx, req.params.spaceId, req.params.changeRequestId, req.query);
      return { ...page, items: page.items.map((r) => presentRequestedReviewer(ctx.urls, r, cr.revision, users)) };
    },
  );
  app.post(
    '/spaces/:spaceId/change-requests/:changeRequestId/requested-reviewers',
    {
      schema: {
        operationId: 'requestReviewersForChangeRequest',
        tags,
        params: CrParams,
        body: Type.Object({ users: Type.Array(Type.String({ maxLength: 100 }), { maxItems: 100 }) }, { additionalProperties: true }),
        response: { 200: Type.Object({ users: Type.Array(RequestedReviewer) }), ...errorResponses },
      },
    },
    async (req) => {
      const ctx = req.ctx();
      const { rows, cr, users } = await requestReviewers(ctx, req.params.spaceId, req.params.changeRequestId, req.body.users);
      return { users: rows.map((r) => presentRequestedReviewer(ctx.urls, r, cr.revision, users)) };
    },
  );
  app.delete(
    '/spaces/:spaceId/change-requests/:changeRequestId/requested-reviewers/:userId',
    {
      schema: {
        operationId: 'removeRequestedReviewerFromChangeRequest',
        tags,
        params: Type.Object({ ...CrParams.properties, userId: Type.String({ maxLength: 100 }) }),
        response: { 204: Type.Null(), ...errorResponses },
      },
    },
    async (req, reply) => {
      await removeRequestedReviewer(req.ctx(), req.params.spaceId, req.params.changeRequestId, req.params.userId);
      return reply.status(204).send(null);
    },
  );
}
