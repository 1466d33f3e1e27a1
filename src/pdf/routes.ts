import { Type } from '@sinclair/typebox';
import { CrParams } from '../change-requests/schemas.ts';
import type { FolioApp } from '../platform/app.ts';
import { sendBlob } from '../platform/downloads.ts';
import { errorResponses } from '../platform/schemas.ts';
import { changeRequestPdf, PDF_LINK_TTL_SECONDS, pdfForToken, PdfNotReadyError, spacePdf } from './service.ts';

/** What to print: everything, a page and the pages below it, or only a page. */
const PdfQuery = Type.Object({
  /** Print only the page named by `page`. */
  only: Type.Optional(Type.Boolean({ description: 'Generate a PDF only for the provided page' })),
  /** Print this page (and the pages below it unless `only`). */
  page: Type.Optional(Type.String({ maxLength: 100, description: 'ID of a specific page to generate a PDF for' })),
});

const PdfLink = {
  200: Type.Object({
    /** Where the PDF can be downloaded without a token, for an hour (a big one once its background job printed it). */
    url: Type.String({ description: `Temporary URL of the PDF; it works for ${PDF_LINK_TTL_SECONDS / 3600}h. While a big PDF is still being printed it answers 503 with Retry-After` }),
  }),
  ...errorResponses,
  /** Chromium, which prints PDFs, is missing or did not start; or printing took too long. */
  503: errorResponses[400],
};

export async function pdfRoutes(app: FolioApp): Promise<void> {
  app.get(
    '/spaces/:spaceId/change-requests/:changeRequestId/pdf',
    { schema: { operationId: 'getChangeRequestPDF', tags: ['change-requests'], params: CrParams, querystring: PdfQuery, response: PdfLink } },
    async (req) => changeRequestPdf(req.ctx(), req.params.spaceId, req.params.changeRequestId, req.query),
  );
  app.get(
    '/spaces/:spaceId/pdf',
    { schema: { operationId: 'getSpacePDF', tags: ['spaces'], params: Type.Object({ spaceId: Type.String({ maxLength: 100 }) }), querystring: PdfQuery, response: PdfLink } },
    async (req) => spacePdf(req.ctx(), req.params.spaceId, req.query),
  );

  // The link handed out above: the signed token is the only credential. It travels as the `token`
  // query parameter, which request logs redact; the file name in the path is for browsers. A PDF
  // still being printed is waited for a little, then 503 with Retry-After.
  app.get(
    '/pdf/:name',
    {
      config: { public: true },
      schema: {
        hide: true,
        params: Type.Object({ name: Type.String({ maxLength: 200 }) }),
        querystring: Type.Object({ token: Type.Optional(Type.String({ maxLength: 2000 })) }),
      },
    },
    async (req, reply) => {
      let found: { blob: string; name: string };
      try {
        found = await pdfForToken(req.server.services, req.query.token ?? '');
      } catch (err) {
        if (err instanceof PdfNotReadyError) reply.header('retry-after', String(err.retryAfterSeconds));
        throw err;
      }
      const { blob, name } = found;
      return sendBlob(reply, req.server.services.blobs, blob, {
        contentType: 'application/pdf',
        disposition: `inline; filename="${name.replace(/["\\\r\n]/g, '')}"`,
        headers: { 'cache-control': 'private, max-age=3600', 'x-content-type-options': 'nosniff' },
        what: 'PDF',
      });
    },
  );
}
