import { Type, type Static } from '@sinclair/typebox';
import type { FolioApp } from '../platform/app.ts';
import { errorResponses } from '../platform/schemas.ts';
import { ListOf } from '../platform/paging.ts';
import { presentGlossaryEntry, presentTranslation } from './presenter.ts';
import {
  CreateTranslationBody,
  GlossaryEntry,
  GlossaryEntryParams,
  ListGlossaryQuery,
  ListTranslationsQuery,
  OrgParams,
  Translation,
  TranslationParams,
  UpdateGlossaryBody,
  UpdateTranslationBody,
} from './schemas.ts';
import {
  createTranslation,
  deleteTranslation,
  getGlossaryEntry,
  getTranslation,
  listGlossary,
  listTranslations,
  runTranslation,
  updateGlossary,
  updateTranslation,
} from './service.ts';

const tags = ['translations'];
const glossaryTags = ['translations-glossary'];

export async function translationRoutes(app: FolioApp): Promise<void> {
  app.get(
    '/orgs/:organizationId/translations',
    { schema: { operationId: 'listTranslations', tags, params: OrgParams, querystring: ListTranslationsQuery, response: { 200: ListOf(Translation), ...errorResponses } } },
    async (req) => {
      const ctx = req.ctx();
      const { membership, ...page } = await listTranslations(ctx, req.params.organizationId, req.query);
      return { ...page, items: page.items.map((row) => presentTranslation(ctx.urls, row, membership)) };
    },
  );

  // Typed from the schemas here: the type provider infers no type from TranslationLanguage (Type.Unsafe).
  app.post<{ Params: Static<typeof OrgParams>; Body: Static<typeof CreateTranslationBody> }>(
    '/orgs/:organizationId/translations',
    { schema: { operationId: 'createTranslation', tags, params: OrgParams, body: CreateTranslationBody, response: { 201: Translation, ...errorResponses } } },
    async (req, reply) => {
      const ctx = req.ctx();
      const { membership, row } = await createTranslation(ctx, req.params.organizationId, req.body);
      const resource = presentTranslation(ctx.urls, row, membership);
      reply.status(201).header('location', resource.urls.location);
      return resource;
    },
  );

  app.get(
    '/orgs/:organizationId/translations/:translationId',
    { schema: { operationId: 'getTranslation', tags, params: TranslationParams, response: { 200: Translation, ...errorResponses } } },
    async (req) => {
      const ctx = req.ctx();
      const { membership, row } = await getTranslation(ctx, req.params.organizationId, req.params.translationId);
      return presentTranslation(ctx.urls, row, membership);
    },
  );

  app.put(
    '/orgs/:organizationId/translations/:translationId',
    { schema: { operationId: 'updateTranslation', tags, params: TranslationParams, body: UpdateTranslationBody, response: { 200: Translation, ...errorResponses } } },
    async (req) => {
      const ctx = req.ctx();
      const { membership, row } = await updateTranslation(ctx, req.params.organizationId, req.params.translationId, req.body.instructions);
      return presentTranslation(ctx.urls, row, membership);
    },
  );

  app.delete(
    '/orgs/:organizationId/translations/:translationId',
    { schema: { operationId: 'deleteTranslation', tags, params: TranslationParams, response: { 204: Type.Null(), 205: Type.Null(), ...errorResponses } } },
    async (req, reply) => {
      const deleted = await deleteTranslation(req.ctx(), req.params.organizationId, req.params.translationId);
      return reply.status(deleted ? 205 : 204).send(null);
    },
  );

  app.post(
    '/orgs/:organizationId/translations/:translationId/run',
    { schema: { operationId: 'runTranslation', tags, params: TranslationParams, response: { 204: Type.Null(), ...errorResponses } } },
    async (req, reply) => {
      await runTranslation(req.ctx(), req.params.organizationId, req.params.translationId);
      return reply.status(204).send(null);
    },
  );

  app.get<{ Params: Static<typeof OrgParams>; Querystring: Static<typeof ListGlossaryQuery> }>(
    '/orgs/:organizationId/translations-glossary',
    { schema: { operationId: 'listGlossaryEntries', tags: glossaryTags, params: OrgParams, querystring: ListGlossaryQuery, response: { 200: ListOf(GlossaryEntry), ...errorResponses } } },
    async (req) => {
      const ctx = req.ctx();
      const page = await listGlossary(ctx, req.params.organizationId, req.query);
      return { ...page, items: page.items.map((row) => presentGlossaryEntry(ctx.urls, row)) };
    },
  );

  app.put(
    '/orgs/:organizationId/translations-glossary',
    { schema: { operationId: 'updateGlossaryEntries', tags: glossaryTags, params: OrgParams, body: UpdateGlossaryBody, response: { 204: Type.Null(), ...errorResponses } } },
    async (req, reply) => {
      await updateGlossary(req.ctx(), req.params.organizationId, req.body.operations);
      return reply.status(204).send(null);
    },
  );

  app.get(
    '/orgs/:organizationId/translations-glossary/:glossaryEntryId',
    { schema: { operationId: 'getGlossaryEntry', tags: glossaryTags, params: GlossaryEntryParams, response: { 200: GlossaryEntry, ...errorResponses } } },
    async (req) => {
      const ctx = req.ctx();
      return presentGlossaryEntry(ctx.urls, await getGlossaryEntry(ctx, req.params.organizationId, req.params.glossaryEntryId));
    },
  );
}
