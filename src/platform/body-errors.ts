import type { FastifyRequest } from 'fastify';
import { HttpError } from './errors.ts';

const SEND_JSON = 'send the body as JSON with "Content-Type: application/json"';

/**
 * The message of a body Fastify refused before any route saw it, saying what to change: the
 * content type that is expected and the one that was sent (415), or the limit in bytes and the
 * setting that raises it (413). Undefined for other errors.
 */
export function bodyErrorMessage(err: { code?: unknown }, req: FastifyRequest, bodyLimit: number): string | undefined {
  if (err.code === 'FST_ERR_CTP_INVALID_MEDIA_TYPE') {
    const sent = req.headers['content-type'];
    return sent
      ? `Unsupported Content-Type "${sent.slice(0, 100)}": this API takes JSON; ${SEND_JSON}`
      : `A request body needs a Content-Type: ${SEND_JSON}`;
  }
  if (err.code === 'FST_ERR_CTP_BODY_TOO_LARGE') {
    return `Request body is larger than the limit of ${bodyLimit} bytes; the server's BODY_LIMIT setting raises it`;
  }
  return undefined;
}

/**
 * Parser for text/plain bodies, which no route takes: a 415 that says so, and says when the text
 * looks like JSON (a client that forgot the header: `fetch` sends strings as text/plain). An empty
 * body is no body, as with JSON.
 */
export function refusePlainText(_req: FastifyRequest, body: string | Buffer, done: (err: Error | null, body?: unknown) => void): void {
  const text = (typeof body === 'string' ? body : body.toString('utf8')).trim();
  if (text === '') return done(null, undefined);
  const looksLikeJson = text.startsWith('{') || text.startsWith('[');
  done(
    new HttpError(
      415,
      looksLikeJson
        ? `The body was sent as text/plain but looks like JSON: send Content-Type: application/json`
        : `Unsupported Content-Type "text/plain": this API takes JSON; ${SEND_JSON}`,
    ),
  );
}
