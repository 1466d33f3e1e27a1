import cors from '@fastify/cors';
import type { FastifyInstance } from 'fastify';

/** Headers a browser client may read from our answers (beyond the CORS-safelisted ones). */
export const EXPOSED_HEADERS = [
  'X-Request-Id',
  'X-RateLimit-Limit',
  'X-RateLimit-Remaining',
  'X-RateLimit-Reset',
  'Retry-After',
  'Content-Disposition',
];

/** How long a browser may reuse a preflight answer, in seconds. */
export const PREFLIGHT_MAX_AGE_S = 600;

/**
 * Cross-origin access for browser clients, when CORS_ORIGINS names origins (`*` for any); with
 * none, nothing is registered: no CORS headers, and OPTIONS is a 404 like any unknown route.
 *
 * Must be registered before authentication and rate limiting: a preflight carries no token, so it
 * is answered (204 with the Access-Control-* headers) in the first onRequest hook and never counted,
 * and the headers set here stay on error answers (401, 429), which a browser can then read.
 * Credentials (cookies) are not allowed: the API authenticates with a bearer token.
 */
export async function registerCors(app: FastifyInstance, origins: string[]): Promise<void> {
  if (origins.length === 0) return;
  await app.register(cors, {
    origin: origins.includes('*') ? '*' : origins,
    methods: ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE'],
    allowedHeaders: ['Authorization', 'Content-Type', 'X-Request-Id'],
    exposedHeaders: EXPOSED_HEADERS,
    maxAge: PREFLIGHT_MAX_AGE_S,
    credentials: false,
    // An OPTIONS without Origin or Access-Control-Request-Method is answered like a preflight
    // rather than with the plugin's plain-text 400, which would not have our error shape.
    strictPreflight: false,
  });
}
