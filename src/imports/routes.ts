import type { FolioApp } from '../platform/app.ts';
import { ListOf } from '../platform/paging.ts';
import { errorResponses } from '../platform/schemas.ts';
import { presentImportRun } from './presenter.ts';
import { ContentImportRun, ImportRunParams, ListImportRunsQuery, OrgParams, StartImportBody } from './schemas.ts';
import { cancelImportRun, getImportRun, listImportRuns, startImportRun } from './service.ts';

const tags = ['imports'];

export async function importRoutes(app: FolioApp): Promise<void> {
  app.get(
    '/org/:organizationId/imports',
    { schema: { operationId: 'listImportRuns', tags, params: OrgParams, querystring: ListImportRunsQuery, response: { 200: ListOf(ContentImportRun), ...errorResponses } } },
    async (req) => {
      const ctx = req.ctx();
      const { abandoned, ...page } = await listImportRuns(ctx, req.params.organizationId, req.query);
      return { ...page, items: page.items.map((row) => presentImportRun(ctx.urls, row, abandoned.has(row.id))) };
    },
  );

  app.post(
    '/org/:organizationId/imports',
    { schema: { operationId: 'startImportRun', tags, params: OrgParams, body: StartImportBody, response: { 201: ContentImportRun, ...errorResponses } } },
    async (req, reply) => {
      const ctx = req.ctx();
      const resource = presentImportRun(ctx.urls, await startImportRun(ctx, req.params.organizationId, req.body));
      reply.status(201).header('location', resource.urls.location);
      return resource;
    },
  );

  app.get(
    '/org/:organizationId/imports/:importRunId',
    { schema: { operationId: 'getImportRun', tags, params: ImportRunParams, response: { 200: ContentImportRun, ...errorResponses } } },
    async (req) => {
      const ctx = req.ctx();
      const { row, abandoned } = await getImportRun(ctx, req.params.organizationId, req.params.importRunId);
      return presentImportRun(ctx.urls, row, abandoned);
    },
  );

  app.post(
    '/org/:organizationId/imports/:importRunId/cancel',
    { schema: { operationId: 'cancelImportRun', tags, params: ImportRunParams, response: { 200: ContentImportRun, ...errorResponses } } },
    async (req) => {
      const ctx = req.ctx();
      return presentImportRun(ctx.urls, await cancelImportRun(ctx, req.params.organizationId, req.params.importRunId));
    },
  );
}
