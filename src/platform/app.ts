import { randomUUID } from 'node:crypto';
import swagger from '@fastify/swagger';
import swaggerUi from '@fastify/swagger-ui';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import Ajv from 'ajv';
import addFormats from 'ajv-formats';
import Fastify, { type FastifyBaseLogger, type FastifyInstance, type FastifyServerOptions, type RawServerDefault } from 'fastify';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { sql } from 'kysely';
import { bearerToken, userForToken } from './auth.ts';
import type { Ctx, Services } from './context.ts';
import type { UserRow } from './db/schema.ts';
import { HttpError, UnauthorizedError } from './errors.ts';
import { ErrorResponse } from './schemas.ts';
import { registerRateLimit } from './rate-limit.ts';
import { organizationRoutes } from '../orgs/routes.ts';
import { memberRoutes } from '../members/routes.ts';
import { teamRoutes } from '../teams/routes.ts';
import { inviteRoutes } from '../invites/routes.ts';
import { userRoutes } from '../users/routes.ts';
import { spaceRoutes } from '../spaces/routes.ts';
import { collectionRoutes } from '../collections/routes.ts';
import { permissionRoutes } from '../permissions/routes.ts';
import { contentRoutes } from '../content/routes.ts';
import { changeRequestRoutes } from '../change-requests/routes.ts';
import { commentsRoutes } from '../comments/routes.ts';
import { searchRoutes } from '../search/routes.ts';
import { linkRoutes } from '../links/routes.ts';
import { templateRoutes } from '../templates/routes.ts';
import { pdfRoutes } from '../pdf/routes.ts';

export type FolioApp = FastifyInstance<
  RawServerDefault,
  IncomingMessage,
  ServerResponse,
  FastifyBaseLogger,
  TypeBoxTypeProvider
>;

declare module 'fastify' {
  interface FastifyRequest {
    caller: UserRow | undefined;
    /** The request context for services: database, configuration and the authenticated caller. */
    ctx(): Ctx;
  }
  interface FastifyInstance {
    /** Database, configuration and helpers, for routes that serve without a caller (public blobs). */
    services: Services;
  }
  interface FastifyContextConfig {
    /** Route answers without a token (health checks, the API description). */
    public?: boolean;
  }
}

/** Removes credentials from URLs before they are logged (user:password@host, token query params). */
export function redactUrl(url: string): string {
  return url
    .replace(/\/\/[^/@\s]*@/g, '//[redacted]@')
    .replace(/([?&](?:token|access_token|auth|password|secret|key|shareKey)=)[^&#]*/gi, '$1[redacted]');
}

function loggerOptions(level: string, stream?: NodeJS.WritableStream): FastifyServerOptions['logger'] {
  if (level === 'silent') return false;
  return {
    level,
    ...(stream ? { stream } : {}),
    redact: { paths: ['req.headers.authorization', 'req.headers.cookie', 'headers.authorization'], censor: '[redacted]' },
    serializers: {
      req(req) {
        return { method: req.method, url: redactUrl(req.url), remoteAddress: req.ip };
      },
    },
  };
}

/**
 * Validation: request bodies are validated strictly (a number is not a string), while path and
 * query parameters, which arrive as text, are coerced to their declared types.
 */
function validators() {
  const base = { allErrors: false, strict: false, useDefaults: true } as const;
  const body = new Ajv({ ...base, coerceTypes: false, removeAdditional: false });
  const params = new Ajv({ ...base, coerceTypes: 'array', removeAdditional: false });
  addFormats(body);
  addFormats(params);
  return ({ schema, httpPart }: { schema: object; httpPart?: string }) =>
    (httpPart === 'body' ? body : params).compile(schema);
}

export async function buildApp(
  services: Services,
  opts: { logLevel: string; logStream?: NodeJS.WritableStream | undefined },
): Promise<FolioApp> {
  const app = Fastify({
    logger: loggerOptions(opts.logLevel, opts.logStream),
    bodyLimit: services.config.bodyLimit,
    requestIdHeader: 'x-request-id',
    genReqId: () => randomUUID(),
    return503OnClosing: true,
    routerOptions: { ignoreTrailingSlash: true, maxParamLength: 500 },
    // Errors Fastify raises before routing (a malformed URL) get the same error shape as ours.
    frameworkErrors: (error, _req, reply) => {
      const status = typeof error.statusCode === 'number' && error.statusCode < 500 ? error.statusCode : 400;
      (reply as unknown as { status(n: number): { send(b: unknown): void } }).status(status).send({ error: { code: status, message: error.message } });
    },
  }).withTypeProvider<TypeBoxTypeProvider>();

  app.setValidatorCompiler(validators());
  app.setSchemaErrorFormatter((errors, dataVar) => {
    const e = errors[0]!;
    const where = `${dataVar}${e.instancePath ? e.instancePath.replace(/\//g, '.') : ''}`;
    let detail = e.message ?? 'is invalid';
    if (e.keyword === 'required') detail = `must have property "${(e.params as { missingProperty: string }).missingProperty}"`;
    if (e.keyword === 'enum') detail = `must be one of ${(e.params as { allowedValues: unknown[] }).allowedValues.map((v) => JSON.stringify(v)).join(', ')}`;
    return new Error(`Invalid ${where}: ${detail}`);
  });

  // An empty body with a JSON content type is "no body" (clients send it on bodiless POSTs).
  const defaultJson = app.getDefaultJsonParser('error', 'error');
  app.removeContentTypeParser('application/json');
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (req, body, done) => {
    const text = typeof body === 'string' ? body : body.toString('utf8');
    if (text.trim() === '') return done(null, undefined);
    defaultJson(req, text, done);
  });

  app.setErrorHandler((err: any, req, reply) => {
    let status = 500;
    let message = 'Internal server error';
    if (err instanceof HttpError) {
      status = err.statusCode;
      message = err.message;
    } else if (typeof err.code === 'string' && /^22[0-9A-Z]{3}$/.test(err.code) && err.severity) {
      // PostgreSQL data exceptions (a NUL byte in text, a value out of range) come from input.
      status = 400;
      message = `Invalid value in the request: ${err.message}`;
    } else if (err.validation) {
      status = 400;
      message = err.message;
    } else if (typeof err.statusCode === 'number' && err.statusCode >= 400 && err.statusCode < 500) {
      status = err.statusCode;
      message = err.code === 'FST_ERR_CTP_INVALID_JSON_BODY' || err instanceof SyntaxError
        ? `Malformed JSON body: ${err.message}`
        : err.message;
    }
    if (status >= 500) req.log.error({ err }, 'request failed');
    // A refused merge says which pages conflict, so a client can show them.
    const details = Array.isArray(err.conflicts) ? { conflicts: err.conflicts } : {};
    reply.status(status).send({ error: { code: status, message, ...details } });
  });


  // Set as the request arrives (a synchronous hook): every answer, errors included, carries it.
  app.addHook('onRequest', (req, reply, done) => {
    reply.header('x-request-id', req.id);
    done();
  });

  registerRateLimit(app as unknown as FastifyInstance, { max: services.config.rateLimitMax, windowMs: services.config.rateLimitWindowMs });

  app.setNotFoundHandler((req, reply) => {
    reply.status(404).send({ error: { code: 404, message: `No route ${req.method} ${req.url.split('?')[0]}` } });
  });

  await app.register(swagger, {
    openapi: {
      openapi: '3.1.0',
      info: {
        title: 'Folio API',
        version: '1',
        description: 'Self-hostable documentation platform, compatible with the GitBook REST API v1.',
      },
      servers: [{ url: services.config.publicUrl }],
      components: { securitySchemes: { user: { type: 'http', scheme: 'bearer' } } },
      security: [{ user: [] }],
    },
  });
  await app.register(swaggerUi, { routePrefix: '/docs' });
  app.addSchema(ErrorResponse);

  app.decorate('services', services);
  app.decorateRequest('caller', undefined);
  app.decorateRequest('ctx', function (this: { caller: UserRow | undefined }) {
    if (!this.caller) throw new UnauthorizedError();
    return { ...services, user: this.caller };
  });

  app.addHook('onRequest', async (req) => {
    if (req.routeOptions.config?.public || req.url.startsWith('/docs')) return;
    if (!req.routeOptions.url) return; // unknown route: the not-found handler answers
    const token = bearerToken(req.headers.authorization);
    if (!token) throw new UnauthorizedError();
    const user = await userForToken(services.db, token, services.tokenCache);
    if (!user) throw new UnauthorizedError('Invalid or revoked API token');
    req.caller = user;
  });

  app.get('/healthz', { config: { public: true }, schema: { hide: true } }, async () => ({ ok: true }));
  app.get('/readyz', { config: { public: true }, schema: { hide: true } }, async (_req, reply) => {
    try {
      await sql`SELECT 1`.execute(services.db);
      return { ok: true };
    } catch {
      return reply.status(503).send({ error: { code: 503, message: 'Database unreachable' } });
    }
  });
  app.get('/v1/openapi.json', { config: { public: true }, schema: { hide: true } }, async () => app.swagger());

  await app.register(
    async (v1) => {
      const api = v1 as unknown as FolioApp;
      await userRoutes(api);
      await organizationRoutes(api);
      await memberRoutes(api);
      await teamRoutes(api);
      await inviteRoutes(api);
      await collectionRoutes(api);
      await spaceRoutes(api);
      await permissionRoutes(api);
      await contentRoutes(api);
      await changeRequestRoutes(api);
      await commentsRoutes(api);
      await searchRoutes(api);
      await linkRoutes(api);
      await templateRoutes(api);
      await pdfRoutes(api);
    },
    { prefix: '/v1' },
  );

  return app;
}

/** Error responses every authenticated route may answer; documents them in the OpenAPI output. */
export const errorResponses = {
  400: ErrorResponse,
  401: ErrorResponse,
  403: ErrorResponse,
  404: ErrorResponse,
  429: ErrorResponse,
};
