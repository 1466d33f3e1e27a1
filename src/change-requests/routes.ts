import { Type } from '@sinclair/typebox';
import type { FolioApp } from '../platform/app.ts';
import { errorResponses } from '../platform/schemas.ts';
import { ListOf, PageQuery } from '../platform/paging.ts';
import { asEnum, ErrorResponse, OrganizationIdParams } from '../platform/schemas.ts';
import { ContentReader } from '../content/model.ts';
import { presentFile } from '../content/presenter.ts';
import { File } from '../content/schemas.ts';
import { readRoutes } from '../content/routes.ts';
import { loadRevision } from '../content/service.ts';
import { openChangeRequest } from './create.ts';
import { presentChangeRequests } from './presenter.ts';
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
import { changesOf } from './changes.ts';
import { editContent } from './edit.ts';
import { mergeChangeRequest, updateFromSpace } from './merge.ts';
import { listChangeRequests, listOrganizationChangeRequests, loadChangeRequest, updateChangeRequest } from './service.ts';

const tags = ['change-requests'];

const PageRef = Type.Object({ object: Type.Literal('page'), id: Type.String(), urls: Type.Object({ location: Type.String() }) });

/** The answer of a content batch with `compat=false`. */
const ContentUpdate = Type.Object({
  changeRequest: ChangeRequest,
  changes: Type.Array(
    Type.Union([
      Type.Object({ object: Type.Literal('created_page'), ref: Type.Optional(Type.String()), page: PageRef }),
      Type.Object({ object: Type.Literal('updated_page'), page: PageRef }),
      Type.Object({ object: Type.Literal('deleted_page'), page: Type.String() }),
    ]),
    { description: 'One entry per affected page, in the order the batch first touched them' },
  ),
  insertedFiles: Type.Array(File, { description: 'Files inserted by the batch, in order' }),
});

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

  // The content reads of a change request's head: the same reads as a space's (src/content/routes.ts).
  readRoutes(app, {
    prefix: '/spaces/:spaceId/change-requests/:changeRequestId/content',
    params: Type.Object({ spaceId: Type.String({ maxLength: 100 }), changeRequestId: Type.String({ maxLength: 100 }) }),
    names: {
      revision: 'getRevisionOfChangeRequestById',
      pages: 'listPagesInChangeRequest',
      page: 'getPageInChangeRequestById',
      path: 'getPageInChangeRequestByPath',
      files: 'listFilesInChangeRequestById',
      file: 'getFileInChangeRequestById',
      reusableContent: 'getReusableContentInChangeRequestById',
      reusableContentDocument: 'getReusableContentDocumentInChangeRequestById',
      pageDocument: 'getPageDocumentInChangeRequestById',
    },
    resolve: async (ctx, p) => {
      const { space, cr } = await loadChangeRequest(ctx, p.spaceId!, p.changeRequestId!);
      return { space, revision: await loadRevision(ctx.db, space.id, cr.revision), changeRequest: cr.number };
    },
  });

  app.post(
    '/spaces/:spaceId/change-requests',
    { schema: { operationId: 'createChangeRequest', tags, params: SpaceParams, body: CreateChangeRequestBody, response: { 201: ChangeRequest, ...errorResponses } } },
    async (req, reply) => {
      const ctx = req.ctx();
      const cr = await openChangeRequest(ctx, req.params.spaceId, req.body ?? {});
      reply.status(201).header('location', ctx.urls.api(`/spaces/${cr.space_id}/change-requests/${cr.id}`));
      return (await presentChangeRequests(ctx, [cr]))[0];
    },
  );

  app.get(
    '/spaces/:spaceId/change-requests',
    { schema: { operationId: 'listChangeRequestsForSpace', tags, params: SpaceParams, querystring: ListQuery, response: { 200: ListOf(ChangeRequest), ...errorResponses } } },
    async (req) => {
      const ctx = req.ctx();
      const { space: _space, ...page } = await listChangeRequests(ctx, req.params.spaceId, req.query);
      return { ...page, items: await presentChangeRequests(ctx, page.items) };
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
      return { ...page, items: await presentChangeRequests(ctx, page.items) };
    },
  );

  app.get(
    '/spaces/:spaceId/change-requests/:changeRequestId',
    { schema: { operationId: 'getChangeRequestById', tags, params: CrParams, response: { 200: ChangeRequest, ...errorResponses } } },
    async (req) => {
      const ctx = req.ctx();
      const { cr } = await loadChangeRequest(ctx, req.params.spaceId, req.params.changeRequestId);
      return (await presentChangeRequests(ctx, [cr]))[0];
    },
  );

  app.patch(
    '/spaces/:spaceId/change-requests/:changeRequestId',
    { schema: { operationId: 'updateChangeRequestById', tags, params: CrParams, body: UpdateChangeRequestBody, response: { 200: ChangeRequest, ...errorResponses } } },
    async (req) => {
      const ctx = req.ctx();
      return (await presentChangeRequests(ctx, [await updateChangeRequest(ctx, req.params.spaceId, req.params.changeRequestId, req.body)]))[0];
    },
  );

  app.post(
    '/spaces/:spaceId/change-requests/:changeRequestId/content',
    {
      schema: {
        operationId: 'updateChangeRequestContent',
        tags,
        params: CrParams,
        querystring: Type.Object({
          compat: Type.Optional(
            asEnum(Type.Union([Type.Literal('true'), Type.Literal('false')]), {
              description: 'true (default): answer the change request; false: also the affected pages and the inserted files',
            }),
          ),
        }),
        body: UpdateContentBody,
        response: { 200: Type.Union([ChangeRequest, ContentUpdate]), ...errorResponses },
      },
    },
    async (req) => {
      const ctx = req.ctx();
      const { cr, outcome, root } = await editContent(ctx, req.params.spaceId, req.params.changeRequestId, req.body.changes);
      const changeRequest = (await presentChangeRequests(ctx, [cr]))[0]!;
      if (req.query.compat !== 'false') return changeRequest;
      const reader = new ContentReader(ctx.db, root);
      const files = await Promise.all(outcome.files.map((id) => reader.file(id)));
      const location = (pageId: string) => ctx.urls.api(`/spaces/${cr.space_id}/change-requests/${cr.id}/content/page/${pageId}`);
      return {
        changeRequest,
        changes: outcome.pages.map((p) =>
          p.kind === 'deleted'
            ? { object: 'deleted_page' as const, page: p.id }
            : {
                object: p.kind === 'created' ? ('created_page' as const) : ('updated_page' as const),
                ...(p.ref ? { ref: p.ref } : {}),
                page: { object: 'page' as const, id: p.id, urls: { location: location(p.id) } },
              },
        ),
        insertedFiles: files.filter((f) => f !== undefined).map((f) => presentFile(ctx.urls, f, { metadata: true })),
      };
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
