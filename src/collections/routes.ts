import { Type } from '@sinclair/typebox';
import type { FolioApp } from '../platform/app.ts';
import { errorResponses } from '../platform/schemas.ts';
import { ListOf, PageQuery } from '../platform/paging.ts';
import { OrganizationIdParams } from '../platform/schemas.ts';
import { Space } from '../spaces/schemas.ts';
import { presentSpaces } from '../spaces/service.ts';
import { presentCollection } from './presenter.ts';
import {
  Collection,
  CollectionIdParams,
  CreateCollectionBody,
  MoveCollectionBody,
  TransferCollectionBody,
  UpdateCollectionBody,
} from './schemas.ts';
import {
  createCollection,
  deleteCollection,
  getCollection,
  listCollections,
  listCollectionSpaces,
  moveCollection,
  transferCollection,
  updateCollection,
} from './service.ts';

const tags = ['collections'];

export async function collectionRoutes(app: FolioApp): Promise<void> {
  app.get(
    '/orgs/:organizationId/collections',
    {
      schema: {
        operationId: 'listCollectionsInOrganizationById',
        tags,
        params: OrganizationIdParams,
        querystring: Type.Object({
          ...PageQuery,
          nested: Type.Optional(Type.Boolean({ default: true, description: 'When false, only top-level collections are listed' })),
        }),
        response: { 200: ListOf(Collection), ...errorResponses },
      },
    },
    async (req) => {
      const ctx = req.ctx();
      const page = await listCollections(ctx, req.params.organizationId, req.query);
      return { ...page, items: page.items.map((i) => presentCollection(ctx.urls, i.collection, i.role)) };
    },
  );

  app.post(
    '/orgs/:organizationId/collections',
    {
      schema: {
        operationId: 'createCollection',
        tags,
        params: OrganizationIdParams,
        body: CreateCollectionBody,
        response: { 201: Collection, ...errorResponses },
      },
    },
    async (req, reply) => {
      const ctx = req.ctx();
      const { collection, role } = await createCollection(ctx, req.params.organizationId, req.body ?? {});
      reply.status(201).header('location', ctx.urls.api(`/collections/${collection.id}`));
      return presentCollection(ctx.urls, collection, role);
    },
  );

  app.get(
    '/collections/:collectionId',
    { schema: { operationId: 'getCollectionById', tags, params: CollectionIdParams, response: { 200: Collection, ...errorResponses } } },
    async (req) => {
      const ctx = req.ctx();
      const { collection, role } = await getCollection(ctx, req.params.collectionId);
      return presentCollection(ctx.urls, collection, role);
    },
  );

  app.patch(
    '/collections/:collectionId',
    {
      schema: {
        operationId: 'updateCollectionById',
        tags,
        params: CollectionIdParams,
        body: UpdateCollectionBody,
        response: { 200: Collection, ...errorResponses },
      },
    },
    async (req) => {
      const ctx = req.ctx();
      const { collection, role } = await updateCollection(ctx, req.params.collectionId, req.body);
      return presentCollection(ctx.urls, collection, role);
    },
  );

  app.delete(
    '/collections/:collectionId',
    { schema: { operationId: 'deleteCollectionById', tags, params: CollectionIdParams, response: { 204: Type.Null(), ...errorResponses } } },
    async (req, reply) => {
      await deleteCollection(req.ctx(), req.params.collectionId);
      return reply.status(204).send(null);
    },
  );

  app.get(
    '/collections/:collectionId/spaces',
    {
      schema: {
        operationId: 'listSpacesInCollectionById',
        tags,
        params: CollectionIdParams,
        querystring: Type.Object(PageQuery),
        response: { 200: ListOf(Space), ...errorResponses },
      },
    },
    async (req) => {
      const ctx = req.ctx();
      const page = await listCollectionSpaces(ctx, req.params.collectionId, req.query);
      return { ...page, items: await presentSpaces(ctx.db, ctx.urls, page.items) };
    },
  );

  app.post(
    '/collections/:collectionId/move',
    {
      schema: {
        operationId: 'moveCollection',
        tags,
        params: CollectionIdParams,
        body: MoveCollectionBody,
        response: { 200: Collection, ...errorResponses },
      },
    },
    async (req) => {
      const ctx = req.ctx();
      const { collection, role } = await moveCollection(ctx, req.params.collectionId, req.body);
      return presentCollection(ctx.urls, collection, role);
    },
  );

  app.post(
    '/collections/:collectionId/transfer',
    {
      schema: {
        operationId: 'transferCollection',
        tags,
        params: CollectionIdParams,
        body: TransferCollectionBody,
        response: { 200: Collection, ...errorResponses },
      },
    },
    async (req) => {
      const ctx = req.ctx();
      const { collection, role } = await transferCollection(ctx, req.params.collectionId, req.body.organization);
      return presentCollection(ctx.urls, collection, role);
    },
  );
}
