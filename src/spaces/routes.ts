import { Type } from '@sinclair/typebox';
import type { FolioApp } from '../platform/app.ts';
import { errorResponses } from '../platform/schemas.ts';
import { ListOf, PageQuery } from '../platform/paging.ts';
import { OrganizationIdParams } from '../platform/schemas.ts';
import { CreateSpaceBody, MoveBody, Space, SpaceIdParams, TransferSpaceBody, UpdateSpaceBody } from './schemas.ts';
import {
  createSpace,
  deleteSpace,
  duplicateSpace,
  getSpace,
  listOrganizationSpaces,
  moveSpace,
  restoreSpace,
  transferSpace,
  presentSpaces,
  updateSpace,
} from './service.ts';

const tags = ['spaces'];

export async function spaceRoutes(app: FolioApp): Promise<void> {
  app.get(
    '/orgs/:organizationId/spaces',
    {
      schema: {
        operationId: 'listSpacesInOrganizationById',
        tags,
        params: OrganizationIdParams,
        querystring: Type.Object(PageQuery),
        response: { 200: ListOf(Space), ...errorResponses },
      },
    },
    async (req) => {
      const ctx = req.ctx();
      const page = await listOrganizationSpaces(ctx, req.params.organizationId, req.query);
      return { ...page, items: await presentSpaces(ctx.db, ctx.urls, page.items) };
    },
  );

  app.post(
    '/orgs/:organizationId/spaces',
    {
      schema: {
        operationId: 'createSpace',
        tags,
        params: OrganizationIdParams,
        body: CreateSpaceBody,
        response: { 201: Space, ...errorResponses },
      },
    },
    async (req, reply) => {
      const ctx = req.ctx();
      const { space, role } = await createSpace(ctx, req.params.organizationId, req.body ?? {});
      reply.status(201).header('location', ctx.urls.api(`/spaces/${space.id}`));
      return (await presentSpaces(ctx.db, ctx.urls, [{ space, role }]))[0];
    },
  );

  app.get(
    '/spaces/:spaceId',
    {
      schema: {
        operationId: 'getSpaceById',
        tags,
        params: SpaceIdParams,
        querystring: Type.Object({ shareKey: Type.Optional(Type.String({ maxLength: 200, description: 'Key of a share link' })) }),
        response: { 200: Space, ...errorResponses },
      },
    },
    async (req) => {
      const ctx = req.ctx();
      const { space, role } = await getSpace(ctx, req.params.spaceId, req.query.shareKey);
      return (await presentSpaces(ctx.db, ctx.urls, [{ space, role }]))[0];
    },
  );

  app.patch(
    '/spaces/:spaceId',
    {
      schema: { operationId: 'updateSpaceById', tags, params: SpaceIdParams, body: UpdateSpaceBody, response: { 200: Space, ...errorResponses } },
    },
    async (req) => {
      const ctx = req.ctx();
      const { space, role } = await updateSpace(ctx, req.params.spaceId, req.body);
      return (await presentSpaces(ctx.db, ctx.urls, [{ space, role }]))[0];
    },
  );

  app.delete(
    '/spaces/:spaceId',
    { schema: { operationId: 'deleteSpaceById', tags, params: SpaceIdParams, response: { 204: Type.Null(), ...errorResponses } } },
    async (req, reply) => {
      await deleteSpace(req.ctx(), req.params.spaceId);
      return reply.status(204).send(null);
    },
  );

  app.post(
    '/spaces/:spaceId/restore',
    { schema: { operationId: 'restoreSpace', tags, params: SpaceIdParams, response: { 200: Space, ...errorResponses } } },
    async (req) => {
      const ctx = req.ctx();
      const { space, role } = await restoreSpace(ctx, req.params.spaceId);
      return (await presentSpaces(ctx.db, ctx.urls, [{ space, role }]))[0];
    },
  );

  app.post(
    '/spaces/:spaceId/duplicate',
    { schema: { operationId: 'duplicateSpace', tags, params: SpaceIdParams, response: { 201: Space, ...errorResponses } } },
    async (req, reply) => {
      const ctx = req.ctx();
      const { space, role } = await duplicateSpace(ctx, req.params.spaceId);
      reply.status(201).header('location', ctx.urls.api(`/spaces/${space.id}`));
      return (await presentSpaces(ctx.db, ctx.urls, [{ space, role }]))[0];
    },
  );

  app.post(
    '/spaces/:spaceId/move',
    { schema: { operationId: 'moveSpace', tags, params: SpaceIdParams, body: MoveBody, response: { 200: Space, ...errorResponses } } },
    async (req) => {
      const ctx = req.ctx();
      const { space, role } = await moveSpace(ctx, req.params.spaceId, req.body);
      return (await presentSpaces(ctx.db, ctx.urls, [{ space, role }]))[0];
    },
  );

  app.post(
    '/spaces/:spaceId/transfer',
    {
      schema: { operationId: 'transferSpace', tags, params: SpaceIdParams, body: TransferSpaceBody, response: { 200: Space, ...errorResponses } },
    },
    async (req) => {
      const ctx = req.ctx();
      const { space, role } = await transferSpace(ctx, req.params.spaceId, req.body);
      return (await presentSpaces(ctx.db, ctx.urls, [{ space, role }]))[0];
    },
  );
}
