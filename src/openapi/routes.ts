import { Type } from '@sinclair/typebox';
import type { FolioApp } from '../platform/app.ts';
import { errorResponses } from '../platform/schemas.ts';
import { ListOf } from '../platform/paging.ts';
import { presentSpec, presentVersion, specPath } from './presenter.ts';
import {
  CreateSpecBody,
  ListQuery,
  OpenAPISpec,
  OpenAPISpecContent,
  OpenAPISpecRawContent,
  OpenAPISpecVersion,
  OrgParams,
  PatchSpecBody,
  PutSpecBody,
  SpecParams,
  VersionParams,
} from './schemas.ts';
import {
  createSpec,
  deleteSpec,
  getSpec,
  getVersion,
  listSpecs,
  listVersions,
  putSpec,
  rawRoot,
  updateSpecVisibility,
  versionContentJson,
} from './service.ts';

const tags = ['openapi'];

export async function openapiRoutes(app: FolioApp): Promise<void> {
  app.get(
    '/orgs/:organizationId/openapi',
    { schema: { operationId: 'listOpenAPISpecs', tags, params: OrgParams, querystring: ListQuery, response: { 200: ListOf(OpenAPISpec), ...errorResponses } } },
    async (req) => {
      const ctx = req.ctx();
      const { membership, page } = await listSpecs(ctx, req.params.organizationId, req.query);
      return { ...page, items: page.items.map((s) => presentSpec(ctx.urls, s, membership)) };
    },
  );

  app.post(
    '/orgs/:organizationId/openapi',
    { schema: { operationId: 'createOpenAPISpec', tags, params: OrgParams, body: CreateSpecBody, response: { 201: OpenAPISpec, 409: errorResponses[400], ...errorResponses } } },
    async (req, reply) => {
      const ctx = req.ctx();
      const { spec, membership } = await createSpec(ctx, req.params.organizationId, req.body);
      reply.status(201).header('location', ctx.urls.api(specPath(spec.organization_id, spec.slug)));
      return presentSpec(ctx.urls, spec, membership);
    },
  );

  app.get(
    '/orgs/:organizationId/openapi/:specSlug',
    { schema: { operationId: 'getOpenAPISpecBySlug', tags, params: SpecParams, response: { 200: OpenAPISpec, ...errorResponses } } },
    async (req) => {
      const ctx = req.ctx();
      const { spec, membership } = await getSpec(ctx, req.params.organizationId, req.params.specSlug);
      return presentSpec(ctx.urls, spec, membership);
    },
  );

  app.put(
    '/orgs/:organizationId/openapi/:specSlug',
    { schema: { operationId: 'createOrUpdateOpenAPISpecBySlug', tags, params: SpecParams, body: PutSpecBody, response: { 200: OpenAPISpec, 201: OpenAPISpec, ...errorResponses } } },
    async (req, reply) => {
      const ctx = req.ctx();
      const slug = req.params.specSlug;
      if (!/^[a-zA-Z0-9]+(?:-[a-zA-Z0-9]+)*$/.test(slug)) {
        return reply.status(400).send({ error: { code: 400, message: 'specSlug: a slug is letters and digits, words joined by single hyphens (1 to 100 characters)' } });
      }
      const { spec, membership, created } = await putSpec(ctx, req.params.organizationId, slug, req.body);
      if (created) reply.status(201).header('location', ctx.urls.api(specPath(spec.organization_id, spec.slug)));
      return presentSpec(ctx.urls, spec, membership);
    },
  );

  app.patch(
    '/orgs/:organizationId/openapi/:specSlug',
    { schema: { operationId: 'updateOpenAPISpecBySlug', tags, params: SpecParams, body: PatchSpecBody, response: { 200: OpenAPISpec, ...errorResponses } } },
    async (req) => {
      const ctx = req.ctx();
      const { spec, membership } = await updateSpecVisibility(ctx, req.params.organizationId, req.params.specSlug, req.body.visibility);
      return presentSpec(ctx.urls, spec, membership);
    },
  );

  app.delete(
    '/orgs/:organizationId/openapi/:specSlug',
    { schema: { operationId: 'deleteOpenAPISpecBySlug', tags, params: SpecParams, response: { 204: Type.Null(), ...errorResponses } } },
    async (req, reply) => {
      await deleteSpec(req.ctx(), req.params.organizationId, req.params.specSlug);
      return reply.status(204).send(null);
    },
  );

  app.get(
    '/orgs/:organizationId/openapi/:specSlug/versions',
    { schema: { operationId: 'listOpenAPISpecVersions', tags, params: SpecParams, querystring: ListQuery, response: { 200: ListOf(OpenAPISpecVersion), ...errorResponses } } },
    async (req) => {
      const ctx = req.ctx();
      const { spec, page } = await listVersions(ctx, req.params.organizationId, req.params.specSlug, req.query);
      return { ...page, items: page.items.map((v) => presentVersion(ctx.urls, spec, v)) };
    },
  );

  app.get(
    '/orgs/:organizationId/openapi/:specSlug/versions/latest',
    { schema: { operationId: 'getLatestOpenAPISpecVersion', tags, params: SpecParams, response: { 200: OpenAPISpecVersion, ...errorResponses } } },
    async (req) => {
      const ctx = req.ctx();
      const { spec, version } = await getVersion(ctx, req.params.organizationId, req.params.specSlug, 'latest');
      return presentVersion(ctx.urls, spec, version);
    },
  );

  app.get(
    '/orgs/:organizationId/openapi/:specSlug/versions/latest/content',
    { schema: { operationId: 'getLatestOpenAPISpecVersionContent', tags, params: SpecParams, response: { 200: OpenAPISpecContent, ...errorResponses } } },
    async (req, reply) => {
      const ctx = req.ctx();
      const { spec, version } = await getVersion(ctx, req.params.organizationId, req.params.specSlug, 'latest');
      return reply.type('application/json; charset=utf-8').send((await versionContentJson(ctx, spec, version)) as never);
    },
  );

  app.get(
    '/orgs/:organizationId/openapi/:specSlug/versions/latest/content/raw',
    { schema: { operationId: 'getLatestOpenAPISpecVersionContentRaw', tags, params: SpecParams, response: { 200: OpenAPISpecRawContent, ...errorResponses } } },
    async (req) => {
      const ctx = req.ctx();
      const { version } = await getVersion(ctx, req.params.organizationId, req.params.specSlug, 'latest');
      return rawRoot(ctx, version);
    },
  );

  app.get(
    '/orgs/:organizationId/openapi/:specSlug/versions/:versionId',
    { schema: { operationId: 'getOpenAPISpecVersionById', tags, params: VersionParams, response: { 200: OpenAPISpecVersion, ...errorResponses } } },
    async (req) => {
      const ctx = req.ctx();
      const { spec, version } = await getVersion(ctx, req.params.organizationId, req.params.specSlug, req.params.versionId);
      return presentVersion(ctx.urls, spec, version);
    },
  );

  app.get(
    '/orgs/:organizationId/openapi/:specSlug/versions/:versionId/content',
    { schema: { operationId: 'getOpenAPISpecVersionContentById', tags, params: VersionParams, response: { 200: OpenAPISpecContent, ...errorResponses } } },
    async (req, reply) => {
      const ctx = req.ctx();
      const { spec, version } = await getVersion(ctx, req.params.organizationId, req.params.specSlug, req.params.versionId);
      return reply.type('application/json; charset=utf-8').send((await versionContentJson(ctx, spec, version)) as never);
    },
  );
}
