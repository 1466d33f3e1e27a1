import { Type } from '@sinclair/typebox';
import type { FolioApp } from '../platform/app.ts';
import { errorResponses } from '../platform/schemas.ts';
import { SpaceIdParams } from '../spaces/schemas.ts';
import { GitSyncState } from '../spaces/schemas.ts';
import { ExportToGitRepository, ImportGitRepository, SyncSettings, SyncSettingsBody, WebhookResult } from './schemas.ts';
import { deleteLegacyInstallation, getSyncSettings, gitInfo, putSyncSettings, receiveWebhook, requestSync } from './requests.ts';

const tags = ['space-git'];

export async function gitRoutes(app: FolioApp): Promise<void> {
  app.post(
    '/spaces/:spaceId/git/import',
    { schema: { operationId: 'importGitRepository', tags, params: SpaceIdParams, body: ImportGitRepository, response: { 204: Type.Null(), ...errorResponses } } },
    async (req, reply) => {
      await requestSync(req.ctx(), req.params.spaceId, 'import', req.body);
      return reply.status(204).send(null);
    },
  );

  app.post(
    '/spaces/:spaceId/git/export',
    { schema: { operationId: 'exportToGitRepository', tags, params: SpaceIdParams, body: ExportToGitRepository, response: { 204: Type.Null(), ...errorResponses } } },
    async (req, reply) => {
      await requestSync(req.ctx(), req.params.spaceId, 'export', req.body);
      return reply.status(204).send(null);
    },
  );

  app.get(
    '/spaces/:spaceId/git/info',
    { schema: { operationId: 'getSpaceGitInfo', tags, params: SpaceIdParams, response: { 200: GitSyncState, ...errorResponses } } },
    async (req) => gitInfo(req.ctx(), req.params.spaceId),
  );

  app.delete(
    '/spaces/:spaceId/git/legacy-installation',
    { schema: { operationId: 'deleteGitLegacyInstallation', tags, params: SpaceIdParams, response: { 204: Type.Null(), ...errorResponses } } },
    async (req, reply) => {
      await deleteLegacyInstallation(req.ctx(), req.params.spaceId);
      return reply.status(204).send(null);
    },
  );

  app.get(
    '/spaces/:spaceId/git/sync',
    { schema: { operationId: 'getSpaceGitSyncSettings', tags, params: SpaceIdParams, response: { 200: SyncSettings, ...errorResponses } } },
    async (req) => getSyncSettings(req.ctx(), req.params.spaceId),
  );

  app.put(
    '/spaces/:spaceId/git/sync',
    { schema: { operationId: 'setSpaceGitSyncSettings', tags, params: SpaceIdParams, body: SyncSettingsBody, response: { 200: SyncSettings, ...errorResponses } } },
    async (req) => putSyncSettings(req.ctx(), req.params.spaceId, req.body),
  );

  // Push webhooks are verified against the raw body, so this route reads it as bytes.
  await app.register(async (scope: FolioApp) => {
    scope.removeContentTypeParser('application/json');
    scope.addContentTypeParser('application/json', { parseAs: 'buffer' }, (_req, body, done) => done(null, body));
    scope.post(
      '/git/webhooks/:spaceId',
      {
        config: { public: true },
        schema: { operationId: 'receiveGitPushWebhook', tags, security: [], params: SpaceIdParams, response: { 200: WebhookResult, ...errorResponses } },
      },
      async (req) => {
        const raw = Buffer.isBuffer(req.body) ? req.body : Buffer.alloc(0);
        return { result: await receiveWebhook(scope.services, req.params.spaceId, req.headers, raw) };
      },
    );
  });
}
