import { Type } from '@sinclair/typebox';
import { errorResponses, type FolioApp } from '../platform/app.ts';
import { applyTemplate } from './service.ts';
import { TEMPLATES } from './templates.ts';

const tags = ['space-content'];

/** A content reference by name; the template places file references (`{kind: 'file', file, space}`). */
const ContentRef = Type.Object(
  {
    /** Kind of the reference: only `file` can be placed by a template. */
    kind: Type.String({ maxLength: 50 }),
    /** Id of the file, in the space's content. */
    file: Type.Optional(Type.String({ maxLength: 100 })),
    /** Space of the file: this space when omitted. */
    space: Type.Optional(Type.String({ maxLength: 100 })),
  },
  { additionalProperties: true },
);

const ApplyTemplateBody = Type.Object({
  /** The template to apply. */
  id: Type.String({ maxLength: 100, description: `The template to apply: ${TEMPLATES.map((t) => t.id).join(', ')}` }),
  /** Parameters of the template. */
  params: Type.Optional(
    Type.Object({
      contentRefs: Type.Optional(Type.Record(Type.String({ maxLength: 100 }), ContentRef, { maxProperties: 20, description: 'Files placed where the template references them, by name' })),
    }),
  ),
  /** Apply into this change request (id or number) instead of the space's content. */
  changeRequestId: Type.Optional(Type.String({ maxLength: 100, description: "The change request to apply the template to; the space's content when omitted" })),
});

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
