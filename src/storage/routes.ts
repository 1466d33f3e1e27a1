import { Readable } from 'node:stream';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FolioApp } from '../platform/app.ts';
import { errorResponses } from '../platform/schemas.ts';
import { GenerateUploadBody, OrgParams, StorageUploadURL, UploadParams, UploadQuery } from './schemas.ts';
import { generateUploadURL, receiveUpload } from './service.ts';

export async function storageRoutes(app: FolioApp): Promise<void> {
  app.post(
    '/orgs/:organizationId/storage/upload',
    {
      schema: {
        operationId: 'generateStorageUploadURL',
        tags: ['storage'],
        params: OrgParams,
        body: GenerateUploadBody,
        response: { 201: StorageUploadURL, ...errorResponses },
      },
    },
    async (req, reply) => {
      const answer = await generateUploadURL(req.ctx(), req.params.organizationId, req.body);
      reply.status(201);
      return answer;
    },
  );

  // The upload URL of the embedded store. Its own context: the body is the file's bytes, of any
  // type, streamed to the store rather than parsed (and bounded by the size the upload announced).
  await app.register(async (plain) => {
    const scope = plain.withTypeProvider<TypeBoxTypeProvider>();
    scope.removeAllContentTypeParsers();
    scope.addContentTypeParser('*', (_req, payload, done) => done(null, payload));
    scope.put(
      '/storage/uploads/:organizationId/:uploadId/:name',
      {
        config: { public: true },
        schema: { hide: true, params: UploadParams, querystring: UploadQuery },
      },
      async (req, reply) => {
        // An empty body never reaches the parser: it is an empty stream, refused unless the size is 0.
        await receiveUpload(app.services, req.params, req.query, (req.body as Readable | undefined) ?? Readable.from([]));
        return reply.status(200).send();
      },
    );
  });
}
