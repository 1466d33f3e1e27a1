import { Type } from '@sinclair/typebox';
import type { FolioApp } from '../platform/app.ts';
import { errorResponses } from '../platform/schemas.ts';
import { applyTemplate } from './service.ts';
import { ApplyTemplateBody } from '../content/template-schemas.ts';

const tags = ['space-content'];

export async function templateRoutes(app: FolioApp): Promise<void> {
  app.post(
    '/spaces/:spaceId/content/template',
    {
      schema: {
        operationId: 'applyTemplateToSpace',
        tags,
        params: Type.Object({ spaceId: Type.String({ maxLength: 100 }) }),
        body: ApplyTemplateBody,
        response: { 201: Type.Null({ description: 'Template applied' }), ...errorResponses },
      },
    },
    async (req, reply) => {
      await applyTemplate(req.ctx(), req.params.spaceId, req.body);
      // No body at all (not `null`): the official answer is an empty 201.
      return reply.status(201).send(undefined as never);
    },
  );
}
