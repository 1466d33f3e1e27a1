import { Type } from '@sinclair/typebox';
import type { FolioApp } from '../platform/app.ts';
import { errorResponses } from '../platform/schemas.ts';
import { markdownToDocumentForRead } from './convert.ts';
import { JsonDocument } from './schemas.ts';

/** The most text one paste converts: a long README is well under it. */
const MAX_PASTE_CHARS = 500_000;

/**
 * Markdown pasted into the app's editor as plain text: the blocks it reads as, by the same
 * conversion as every markdown the API takes, so a pasted README becomes what `update_page` with
 * that markdown would store. Nothing is stored; for signed-in people.
 */
export async function pasteRoutes(app: FolioApp): Promise<void> {
  app.post(
    '/app/api/markdown',
    {
      schema: {
        operationId: 'convertPastedMarkdown',
        tags: ['app'],
        security: [{ session: [] }],
        body: Type.Object({ markdown: Type.String({ maxLength: MAX_PASTE_CHARS, description: 'The pasted text' }) }),
        response: { 200: Type.Object({ document: JsonDocument }), ...errorResponses },
      },
    },
    async (req) => ({ document: await markdownToDocumentForRead(req.body.markdown) }),
  );
}
