import { Type } from '@sinclair/typebox';
import type { FolioApp } from '../platform/app.ts';
import { asEnum, errorResponses } from '../platform/schemas.ts';
import { File, JsonDocument, ReusableContent } from '../content/schemas.ts';
import { computedDocument, computedRevision } from './service.ts';

/**
 * A computed content source, as the official `ComputedContentSourceDocument` /
 * `ComputedContentSourceRevision`. Only its outline is checked here; what `props` and
 * `dependencies` must hold depends on `type`, and src/computed/sources.ts checks it with
 * messages naming the field.
 */
export const ComputedSource = (what: string) =>
  Type.Object(
    {
      type: Type.String({
        maxLength: 300,
        description: '`builtin:openapi` (a spec of the organization), `builtin:translation` (the result of a translation of the organization) or `integration:<name>:<sourceId>` (an integration installed on the space)',
      }),
      props: Type.Optional(
        Type.Object({}, {
          additionalProperties: true,
          description:
            what === 'document'
              ? 'builtin:openapi: `{doc: "operation", page: <path>, method}`, `{doc: "operations" | "tag", page: <tag>}`, `{doc: "info", page}` or `{doc: "models"}`; builtin:translation: `{space: <source space ID>, document: <document ID in it>}`; an integration: its own'
              : 'builtin:openapi: `{models: boolean, downloadLink?: boolean, grouping?: "by-tag" | "by-operation"}`; builtin:translation: `{}`; an integration: its own',
        }),
      ),
      dependencies: Type.Optional(
        Type.Object({}, { additionalProperties: true, description: 'builtin:openapi: `{spec: {ref: {kind: "openapi", spec: <slug>}}}`; builtin:translation: `{translation: {ref: {kind: "translation", translation: <ID>}}}`; an integration: named `{ref}` of spaces, specs or translations' }),
      ),
    },
    { additionalProperties: false },
  );

/** The answer of `getComputedRevision`: official `RevisionPage`s with their documents inline, and files. */
export const ComputedRevision = Type.Object({
  pages: Type.Array(Type.Object({ id: Type.String(), title: Type.String(), type: Type.String() }, { additionalProperties: true })),
  files: Type.Array(File),
  reusableContents: Type.Array(ReusableContent),
});

export async function computedContentRoutes(app: FolioApp): Promise<void> {
  const spaceParams = Type.Object({ spaceId: Type.String({ maxLength: 100 }) });
  // Computed content (src/computed/service.ts): a source in, a document or pages out, nothing stored.
  const ComputeBody = (what: string) =>
    Type.Object({
      source: ComputedSource(what),
      seed: Type.String({ maxLength: 1000, description: 'Seed of the ids: the same seed and source give the same page ids and block keys' }),
    });
  app.post(
    '/spaces/:spaceId/content/computed/document',
    {
      schema: {
        operationId: 'getComputedDocument',
        tags: ['content'],
        params: spaceParams,
        querystring: Type.Object({ schema: Type.Optional(asEnum(Type.Union([Type.Literal('current'), Type.Literal('next')]), { description: 'Version of the document schema; Folio has one, served for both' })) }),
        body: ComputeBody('document'),
        response: { 200: JsonDocument, ...errorResponses },
      },
    },
    async (req) => computedDocument(req.ctx(), req.params.spaceId, req.body),
  );
  app.post(
    '/spaces/:spaceId/content/computed/revision',
    {
      schema: {
        operationId: 'getComputedRevision',
        tags: ['content'],
        params: spaceParams,
        body: ComputeBody('revision'),
        response: { 200: ComputedRevision, ...errorResponses },
      },
    },
    async (req) => computedRevision(req.ctx(), req.params.spaceId, req.body),
  );
}
