import { randomUUID } from 'node:crypto';
import swagger from '@fastify/swagger';
import swaggerUi from '@fastify/swagger-ui';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { SerializerSelector } from '@fastify/fast-json-stringify-compiler';
import Ajv, { type ValidateFunction } from 'ajv';
import addFormats from 'ajv-formats';
import Fastify, { type FastifyBaseLogger, type FastifyInstance, type FastifyRequest, type FastifyServerOptions, type RawServerDefault } from 'fastify';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { sql } from 'kysely';
import { authenticates, authenticateTokenHash, bearerToken, hashToken, type Authenticated } from './auth.ts';
import type { Caller, Ctx, IntegrationGrant, Services } from './context.ts';
import type { UserRow } from './db/schema.ts';
import { ForbiddenError, HttpError, UnauthorizedError } from './errors.ts';
import { CSRF_MESSAGE, csrfSafe, SESSION_COOKIE, sessionCookieOf } from './session.ts';
import { ErrorResponse } from './schemas.ts';
import { registerRateLimit } from './rate-limit.ts';
import { bodyErrorMessage, refusePlainText } from './body-errors.ts';
import { registerCors } from './cors.ts';
import { registerMetrics } from './metrics.ts';
import { applyOperationDocs } from './operation-docs.ts';
import type { AppComposition } from './composition.ts';
import { homeRoutes } from './home.ts';
import { runWithSsoGate } from './sso-gate.ts';

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
    /** The token the caller authenticated with. */
    callerToken: Caller['token'];
    /** The integration grant of an integration token. */
    callerIntegration: IntegrationGrant | undefined;
    /** Organizations enforcing SSO that the caller's token may not reach. */
    ssoBlocked: string[] | undefined;
    /** The caller was authenticated by the app's session cookie rather than a bearer token. */
    viaSession: boolean;
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
    .replace(/([?&](?:token|access_token|auth|password|secret|key|shareKey|api_key|apikey|t)=)[^&#]*/gi, '$1[redacted]');
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
 * Deepest nesting of arrays and objects a JSON body may have. Rich-text documents nest two levels
 * per block (`{nodes: [...]}`), so this allows documents about 60 blocks deep: far more than any
 * editor produces, and small enough that no recursive walk of a parsed body can overflow.
 */
export const MAX_JSON_DEPTH = 128;

/**
 * The deepest nesting of `text` as JSON, or -1 as soon as it passes `limit`. One linear pass that
 * skips string contents (with their escapes), run before JSON.parse so a body nested 500,000
 * levels deep is refused without building it. Malformed text is left for JSON.parse to report.
 */
export function jsonDepthExceeds(text: string, limit: number): boolean {
  let depth = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === 0x22 /* " */) {
      for (i++; i < text.length; i++) {
        const d = text.charCodeAt(i);
        if (d === 0x5c /* \ */) i++;
        else if (d === 0x22) break;
      }
    } else if (c === 0x7b /* { */ || c === 0x5b /* [ */) {
      if (++depth > limit) return true;
    } else if (c === 0x7d /* } */ || c === 0x5d /* ] */) {
      depth--;
    }
  }
  return false;
}

/**
 * A copy of a body schema in which every object that lists its properties and says nothing about
 * others refuses them (`additionalProperties: false`): unknown fields are an error naming the
 * field, never silently kept. Objects that mean to accept more say `additionalProperties: true`.
 * Objects combined with `allOf`/`anyOf`/`oneOf`/`if` at the same level are left open, since their
 * other properties are declared in the combined schemas (which are made strict themselves).
 */
export function strictBodySchema(schema: unknown): unknown {
  if (Array.isArray(schema)) return schema.map(strictBodySchema);
  if (schema === null || typeof schema !== 'object') return schema;
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(schema)) {
    // `properties`, `patternProperties`, `$defs` map names to schemas; `const`, `enum`, `default`
    // and `examples` are values, not schemas.
    if (key === 'const' || key === 'enum' || key === 'default' || key === 'examples') out[key] = value;
    else if ((key === 'properties' || key === 'patternProperties' || key === '$defs' || key === 'definitions') && value && typeof value === 'object')
      out[key] = Object.fromEntries(Object.entries(value).map(([k, v]) => [k, strictBodySchema(v)]));
    else out[key] = strictBodySchema(value);
  }
  const combined = 'allOf' in out || 'anyOf' in out || 'oneOf' in out || 'if' in out;
  if (out.type === 'object' && out.properties && !('additionalProperties' in out) && !('patternProperties' in out) && !combined) {
    out.additionalProperties = false;
  }
  return out;
}

function newValidatorCompilers() {
  const base = { allErrors: false, strict: false, useDefaults: true } as const;
  const body = new Ajv({ ...base, coerceTypes: false, removeAdditional: false });
  const params = new Ajv({ ...base, coerceTypes: 'array', removeAdditional: false });
  addFormats(body);
  addFormats(params);
  return { body, params };
}

/**
 * Validators by what they check, shared by every server of the process: a compiled validator
 * depends on its schema alone (some routes build their query schemas per server, hence the
 * schema's text as the key). A process holds one server in production; a test process holds one
 * per test file, and compiled the same validators for each.
 */
let validatorCompilers: ReturnType<typeof newValidatorCompilers> | undefined;
const compiledValidators = new Map<string, ValidateFunction>();

/** The value `cache` holds under `key`, built the first time it is asked for. */
function builtOnce<T>(cache: Map<string, T>, key: string, build: () => T): T {
  let value = cache.get(key);
  if (value === undefined) cache.set(key, (value = build()));
  return value;
}

/**
 * Validation: request bodies are validated strictly (a number is not a string, an unknown field
 * is an error), while path and query parameters, which arrive as text, are coerced to their
 * declared types.
 */
function validators(lazy: boolean) {
  const compile = ({ schema, httpPart }: { schema: object; httpPart?: string }) => {
    const kind = httpPart === 'body' ? 'body' : 'params';
    return builtOnce(compiledValidators, `${kind} ${JSON.stringify(schema)}`, () => {
      const ajv = (validatorCompilers ??= newValidatorCompilers());
      return kind === 'body' ? ajv.body.compile(strictBodySchema(schema) as object) : ajv.params.compile(schema);
    });
  };
  if (!lazy) return compile;
  return (route: { schema: object; httpPart?: string }) => {
    let compiled: ValidateFunction | undefined;
    // Fastify reads `errors` off the function it was given, as off an Ajv validator.
    const validate = (data: unknown) => {
      compiled ??= compile(route);
      const valid = compiled(data);
      validate.errors = compiled.errors;
      return valid;
    };
    validate.errors = undefined as ValidateFunction['errors'];
    return validate;
  };
}

type SerializerFactory = ReturnType<typeof SerializerSelector>;

/**
 * Fastify's own response serializers (fast-json-stringify), compiled on a route's first response
 * when `lazy`: compiling every route's serializers is the other large part of a start's CPU.
 */
function serializers(lazy: boolean): SerializerFactory {
  const eager = SerializerSelector();
  return (externalSchemas, options) => {
    const build = eager(externalSchemas, options);
    // Shared by the servers of the process, as validators are: a serializer depends on its
    // schema, the shared schemas and the options alone.
    const context = JSON.stringify([externalSchemas ?? null, options ?? null]);
    const compile = (route: Parameters<typeof build>[0]) => builtOnce(compiledSerializers, `${context} ${JSON.stringify(route.schema)}`, () => build(route));
    if (!lazy) return compile;
    return (route) => {
      let compiled: ((data: unknown) => string) | undefined;
      return (data: unknown) => (compiled ??= compile(route))(data);
    };
  };
}

const compiledSerializers = new Map<string, (data: unknown) => string>();

/** Logs a failing shared rate-limit store at most once a minute (it fails for every request while Redis is down). */
function storeErrorLog(log: FastifyBaseLogger): (err: unknown) => void {
  let last = 0;
  return (err) => {
    if (Date.now() - last < 60_000) return;
    last = Date.now();
    log.warn({ err }, 'rate limits: the shared store (Redis) failed; counting in this process until it answers');
  };
}

/**
 * The HTTP server: validation, errors, rate limits, authentication and the API description, with
 * the areas' routes and token kinds plugged in by `composition` (src/routes.ts). The platform
 * knows no area: what the server serves is decided at the top.
 */
export async function buildApp(
  services: Services,
  opts: {
    logLevel: string;
    logStream?: NodeJS.WritableStream | undefined;
    /**
     * Compile every route's validators and serializers while the server starts, instead of on each
     * route's first request. Off by default: compiling the ~300 routes' schemas is most of a start's
     * CPU (about 2.5 s), for routes a process may never serve, and a first request pays only for its
     * own route's. test/platform.test.ts starts a server with it on, so that a schema that does not
     * compile fails the tests rather than a request.
     */
    compileSchemasAtStart?: boolean | undefined;
  },
  composition: AppComposition,
): Promise<FolioApp> {
  const hosts = composition.hostRewriter?.(services);
  const app = Fastify({
    logger: loggerOptions(opts.logLevel, opts.logStream),
    // Requests for a published site's custom hostname are routed to that site.
    ...(hosts ? { rewriteUrl: (req: IncomingMessage) => hosts.rewrite(req) } : {}),
    bodyLimit: services.config.bodyLimit,
    requestIdHeader: 'x-request-id',
    genReqId: () => randomUUID(),
    return503OnClosing: true,
    // A plugin's start may be slow on a loaded machine (the default, 10 s, failed a start of
    // the API docs plugin there); a minute still catches one that never finishes.
    pluginTimeout: 60_000,
    // Slow clients are cut off: headers and the whole request each have a deadline, idle
    // connections and idle kept-alive connections are closed. Node checks the deadlines every
    // `connectionsCheckingInterval`, so that follows the shortest of them.
    connectionTimeout: services.config.httpIdleTimeoutMs,
    keepAliveTimeout: services.config.httpKeepAliveTimeoutMs,
    requestTimeout: services.config.httpRequestTimeoutMs,
    http: {
      headersTimeout: services.config.httpHeadersTimeoutMs,
      requestTimeout: services.config.httpRequestTimeoutMs,
      connectionsCheckingInterval: Math.max(50, Math.min(30_000, Math.floor(services.config.httpHeadersTimeoutMs / 4))),
    },
    routerOptions: { ignoreTrailingSlash: true, maxParamLength: 500 },
    schemaController: { compilersFactory: { buildSerializer: serializers(!opts.compileSchemasAtStart) } },
    // Errors Fastify raises before routing (a malformed URL) get the same error shape as ours.
    frameworkErrors: (error, req, reply) => {
      const status = typeof error.statusCode === 'number' && error.statusCode < 500 ? error.statusCode : 400;
      const r = reply as unknown as { header(k: string, v: string): void; status(n: number): { send(b: unknown): void } };
      r.header('x-request-id', req.id);
      r.status(status).send({ error: { code: status, message: error.message } });
    },
  }).withTypeProvider<TypeBoxTypeProvider>();

  app.setValidatorCompiler(validators(!opts.compileSchemasAtStart));
  app.setSchemaErrorFormatter((errors, dataVar) => {
    const e = errors[0]!;
    const where = `${dataVar}${e.instancePath ? e.instancePath.replace(/\//g, '.') : ''}`;
    let detail = e.message ?? 'is invalid';
    if (e.keyword === 'required') detail = `must have property "${(e.params as { missingProperty: string }).missingProperty}"`;
    if (e.keyword === 'additionalProperties') detail = `unknown field "${(e.params as { additionalProperty: string }).additionalProperty}"`;
    if (e.keyword === 'enum') detail = `must be one of ${(e.params as { allowedValues: unknown[] }).allowedValues.map((v) => JSON.stringify(v)).join(', ')}`;
    return new Error(`Invalid ${where}: ${detail}`);
  });

  // An empty body with a JSON content type is "no body" (clients send it on bodiless POSTs).
  const defaultJson = app.getDefaultJsonParser('error', 'error');
  app.removeContentTypeParser('application/json');
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (req, body, done) => {
    const text = typeof body === 'string' ? body : body.toString('utf8');
    if (text.trim() === '') return done(null, undefined);
    if (jsonDepthExceeds(text, MAX_JSON_DEPTH)) {
      return done(new HttpError(400, `JSON body nests deeper than ${MAX_JSON_DEPTH} levels of arrays and objects`), undefined);
    }
    defaultJson(req, text, done);
  });
  // No route takes plain text: a JSON body sent as text/plain is told which header to send.
  app.removeContentTypeParser('text/plain');
  app.addContentTypeParser('text/plain', { parseAs: 'string' }, refusePlainText);

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
    } else if (err.code === '23503' && err.severity) {
      // A foreign key refused a write: something the request refers to was deleted while it ran
      // (a concurrent delete). The client can retry and get the current answer.
      status = 409;
      message = 'Something this request refers to was removed while it ran; send it again';
      req.log.warn({ err }, 'foreign key violation (concurrent delete)');
    } else if (err.validation) {
      status = 400;
      message = err.message;
    } else if (typeof err.statusCode === 'number' && err.statusCode >= 400 && err.statusCode < 500) {
      status = err.statusCode;
      message = err.code === 'FST_ERR_CTP_INVALID_JSON_BODY' || err instanceof SyntaxError
        ? `Malformed JSON body: ${err.message}`
        : bodyErrorMessage(err, req, services.config.bodyLimit) ?? err.message;
    }
    if (status >= 500) req.log.error({ err }, 'request failed');
    if (typeof err.code === 'string' && (err.code === 'ERR_INVALID_CHAR' || err.code.startsWith('ERR_HTTP_INVALID_HEADER'))) {
      // A header Node refused to write (an invalid character in a value): drop what the handler
      // set, keep the request id, so the error itself can be sent in our shape.
      for (const name of Object.keys(reply.getHeaders())) if (name !== 'x-request-id' && !name.startsWith('x-ratelimit')) reply.removeHeader(name);
    }
    // A refused merge says which pages conflict, so a client can show them.
    const details = Array.isArray(err.conflicts) ? { conflicts: err.conflicts } : {};
    reply.status(status).send({ error: { code: status, message, ...details } });
  });


  // Set as the request arrives (a synchronous hook): every answer, errors included, carries it.
  app.addHook('onRequest', (req, reply, done) => {
    reply.header('x-request-id', req.id);
    done();
  });

  // Before rate limits and authentication: preflights are answered first and never counted.
  await registerCors(app as unknown as FastifyInstance, services.config.corsOrigins);

  const limiter = registerRateLimit(app as unknown as FastifyInstance, {
    max: services.config.rateLimitMax,
    windowMs: services.config.rateLimitWindowMs,
    maxKeys: services.config.rateLimitMaxKeys,
    now: services.now,
    store: services.rateLimitStore,
    onStoreError: storeErrorLog(app.log),
  });

  app.setNotFoundHandler((req, reply) => {
    reply.status(404).send({ error: { code: 404, message: `No route ${req.method} ${req.url.split('?')[0]}` } });
  });

  // Summary and description of each operation in /docs, from one table keyed by operationId.
  app.addHook('onRoute', applyOperationDocs);
  await app.register(swagger, {
    openapi: {
      openapi: '3.1.0',
      info: {
        title: 'Folio API',
        version: '1',
        description: 'Self-hostable documentation platform, compatible with the GitBook REST API v1.',
      },
      servers: [{ url: services.config.publicUrl }],
      components: {
        securitySchemes: {
          user: { type: 'http', scheme: 'bearer' },
          // The app's session (POST /app/api/sign-in); its writes also need the x-folio-csrf header.
          session: { type: 'apiKey', in: 'cookie', name: SESSION_COOKIE },
        },
      },
      security: [{ user: [] }],
    },
  });
  await app.register(swaggerUi, { routePrefix: '/docs' });
  app.addSchema(ErrorResponse);

  app.decorate('services', services);
  app.decorateRequest('caller', undefined);
  app.decorateRequest('callerToken', undefined);
  app.decorateRequest('callerIntegration', undefined);
  app.decorateRequest('ssoBlocked', undefined);
  app.decorateRequest('viaSession', false);
  app.decorateRequest('ctx', function (this: { caller: UserRow | undefined; callerToken: Caller['token']; callerIntegration: IntegrationGrant | undefined }) {
    if (!this.caller) throw new UnauthorizedError();
    return { ...services, user: this.caller, ...(this.callerToken ? { token: this.callerToken } : {}), ...(this.callerIntegration ? { integration: this.callerIntegration } : {}) };
  });

  /** The caller a Folio API token (bearer or session cookie) authenticates. */
  const accept = (req: FastifyRequest, auth: Authenticated) => {
    req.caller = auth.user;
    req.callerToken = { id: auth.tokenId, expiresAt: auth.tokenExpiresAt, ssoOrganizationId: auth.ssoOrganizationId,
      scopeSpaceId: auth.scopeSpaceId,
      scopeSite: auth.scopeSite,
    };
    req.ssoBlocked = auth.ssoBlocked;
  };

  app.addHook('onRequest', async (req, reply) => {
    if (!authenticates(req)) return; // public, the docs, or unknown (the not-found handler answers)
    const token = bearerToken(req.headers.authorization);
    if (!token) {
      // The app's session cookie (src/sign-in/), when no bearer token is sent: its writes must be
      // CSRF-safe. It is counted against the address by the rate limiter, as unauthenticated calls.
      const session = sessionCookieOf(req);
      if (!session) throw new UnauthorizedError();
      if (!csrfSafe(req, services.config)) throw new ForbiddenError(CSRF_MESSAGE);
      const auth = await authenticateTokenHash(services.db, hashToken(session), services.tokenCache);
      if (!auth || auth.scopeSpaceId) throw new UnauthorizedError('Your session has ended or is not valid: sign in again');
      accept(req, auth);
      req.viaSession = true;
      return;
    }
    const kind = composition.tokenKinds.find((k) => token.startsWith(k.prefix));
    if (kind) {
      // Tokens of another kind (integrations): their own table, scopes and targets.
      const found = await kind.authenticate(services.db, req.tokenHash ?? hashToken(token));
      const refused = await (found ? limiter.tokenAccepted(req, reply) : limiter.tokenRefused(req, reply));
      if (refused) throw refused;
      if (!found) throw new UnauthorizedError(kind.invalidMessage);
      kind.assertRoute?.(req, found);
      req.caller = found.user;
      req.callerIntegration = found.integration;
      return;
    }
    // The rate limiter has hashed the token already (routes it skips are public).
    const auth = await authenticateTokenHash(services.db, req.tokenHash ?? hashToken(token), services.tokenCache);
    // A token not yet known valid is counted now: against itself if valid, else against the address.
    const limited = await (auth ? limiter.tokenAccepted(req, reply) : limiter.tokenRefused(req, reply));
    if (limited) throw limited;
    if (!auth) throw new UnauthorizedError('Invalid, expired or revoked API token');
    // Content tokens (the apiToken of a resolved published URL) read one space and nothing else.
    if (auth.scopeSpaceId) composition.assertScopedTokenRoute(req, auth.scopeSpaceId);
    accept(req, auth);
  });
  // Organizations enforcing single sign-on that this token may not reach (see sso-gate.ts).
  app.addHook('preHandler', (req, _reply, done) => {
    if (req.ssoBlocked?.length) runWithSsoGate(req.ssoBlocked, done);
    else done();
  });

  // Health checks are never rate limited: a flood from the load balancer's address must not make
  // the instance look dead.
  registerMetrics(app as unknown as FastifyInstance, services);
  const health = { tags: ['health'], security: [] };
  app.get('/healthz', { config: { public: true, rateLimit: false }, schema: { operationId: 'checkHealth', ...health } }, async () => ({ ok: true }));
  app.get('/readyz', { config: { public: true, rateLimit: false }, schema: { operationId: 'checkReadiness', ...health } }, async (_req, reply) => {
    try {
      await sql`SELECT 1`.execute(services.db);
      return { ok: true };
    } catch {
      return reply.status(503).send({ error: { code: 503, message: 'Database unreachable' } });
    }
  });
  app.get('/v1/openapi.json', { config: { public: true }, schema: { hide: true } }, async () => app.swagger());
  await homeRoutes(app as unknown as FastifyInstance, services.config.publicUrl);
  await composition.webRoutes(app);

  await app.register(async (v1) => composition.apiRoutes(v1 as unknown as FolioApp), { prefix: '/v1' });
  await composition.lateRoutes(app);
  if (hosts) {
    app.addHook('onReady', async () => hosts.start());
    app.addHook('onClose', async () => hosts.stop());
  }

  return app;
}
