import type { FastifyReply } from 'fastify';
import type { Blobs } from './blob-store.ts';
import { NotFoundError } from './errors.ts';

/**
 * Answers a download of stored bytes whose access the caller has checked: a 302 to a presigned
 * URL of the bucket (FILE_DOWNLOADS=redirect, short-lived, carrying the type and disposition), or
 * the bytes streamed through Folio with `headers` (caching, sandbox, nosniff).
 */
export async function sendBlob(
  reply: FastifyReply,
  blobs: Blobs,
  hash: string,
  o: { contentType: string; disposition: string; headers?: Record<string, string>; what?: string },
): Promise<FastifyReply> {
  const download = await blobs.download(hash, { contentType: o.contentType, disposition: o.disposition });
  if (!download) throw new NotFoundError(o.what ?? 'File');
  // A redirect names a URL that expires: it is never cached longer than that URL works.
  if ('redirect' in download) return reply.header('cache-control', 'private, max-age=60').redirect(download.redirect, 302);
  return reply
    .headers({ ...o.headers, 'content-type': o.contentType, 'content-disposition': o.disposition, 'content-length': String(download.size) })
    .send(download.stream);
}
