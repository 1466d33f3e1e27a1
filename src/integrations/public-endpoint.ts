import { Type } from '@sinclair/typebox';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { FolioApp } from '../platform/app.ts';
import { NotFoundError } from '../platform/errors.ts';
import { forwardFetch } from './dispatch.ts';
import { publicEndpoint } from './presenter.ts';
import { InstallationParams, IntegrationNameParams } from './schemas.ts';

/**
 * The public endpoints (`urls.publicEndpoint`) of an integration and of each of its installations:
 * requests without a token, forwarded to the integration's script (or dev tunnel) as `fetch`
 * events, answered with what the script answers. They take every method and every path below
 * the endpoint (`…/public/oauth/callback?code=…`, `…/public/webhooks/github`), as GitBook's own
 * integrations use them for OAuth callbacks and webhooks.
 */

const METHODS = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS'] as const; // HEAD comes with GET.

// The official `FetchRequest.method` lists these four in lower case, which @gitbook/runtime passes
// to `new Request`, where fetch normalizes them to upper case. Other methods go in upper case, as
// fetch leaves them as given: either way a script's handler sees `PATCH`, `GET`, `HEAD`.
const LOWER_CASE_METHODS = new Set(['get', 'post', 'put', 'delete']);
const eventMethod = (method: string) => (LOWER_CASE_METHODS.has(method.toLowerCase()) ? method.toLowerCase() : method.toUpperCase());

// Headers of the script's answer that are passed on. Not `set-cookie`: the endpoint is on Folio's
// origin, whose cookies (visitor sessions, single sign-on) are not the integration's to set.
const ANSWER_HEADERS = ['content-type', 'location', 'cache-control', 'www-authenticate', 'content-language'];
// Request headers the script never sees: the caller's credentials for Folio itself.
const PRIVATE_REQUEST_HEADERS = new Set(['authorization', 'cookie']);

/**
 * The URL the script sees: the endpoint as its environment has it (`urls.publicEndpoint`), then
 * the path below it and the query exactly as the request had them (still percent-encoded), so a
 * router based on the endpoint's pathname (what GitBook's integrations do) finds its routes.
 */
function scriptUrl(endpoint: string, rawUrl: string, level: 'integration' | 'installation'): string {
  const queryAt = rawUrl.indexOf('?');
  const path = queryAt < 0 ? rawUrl : rawUrl.slice(0, queryAt);
  const query = queryAt < 0 ? '' : rawUrl.slice(queryAt);
  const segments = path.split('/');
  // …/integrations/{name}/public/<below> or …/integrations/{name}/installations/{id}/public/<below>
  const publicAt = segments.indexOf('integrations') + (level === 'integration' ? 2 : 4);
  const below = segments.slice(publicAt + 1).join('/');
  return `${endpoint}${below ? `/${below}` : ''}${query}`;
}

export async function publicEndpointRoutes(app: FolioApp): Promise<void> {
  // Its own context: bodies of any type reach the script as they were sent (a webhook's signature
  // covers its exact bytes; Slack posts forms), not parsed as JSON or refused as the API does.
  await app.register(async (plain) => {
    const scope = plain.withTypeProvider<TypeBoxTypeProvider>();
    scope.removeAllContentTypeParsers();
    scope.addContentTypeParser('*', { parseAs: 'buffer' }, (_req, body, done) => done(null, body));

    const forward = async (params: { integrationName: string; installationId?: string }, req: FastifyRequest, reply: FastifyReply, level: 'integration' | 'installation') => {
      const { integrationName, installationId } = params;
      const endpoint = publicEndpoint(app.services.urls, { name: integrationName }, installationId);
      const headers: Record<string, string> = {};
      for (const [k, v] of Object.entries(req.headers)) if (typeof v === 'string' && !PRIVATE_REQUEST_HEADERS.has(k)) headers[k] = v;
      const body = Buffer.isBuffer(req.body) && req.method !== 'GET' && req.method !== 'HEAD' ? req.body.toString('utf8') : undefined;
      const answer = await forwardFetch(app.services, { integrationName, installationId }, {
        url: scriptUrl(endpoint, req.url, level),
        method: eventMethod(req.method),
        headers,
        body,
      });
      if (answer === 'missing') throw new NotFoundError(level === 'integration' ? 'Integration' : 'Installation');
      // Published without a script and not in development mode: the integration has no endpoint
      // to answer (a 404, as for an integration that does not exist), whatever the request.
      if (answer === 'unanswerable') throw new NotFoundError('Public endpoint', `the integration ${integrationName} has no published script nor development tunnel to answer it`);
      const out: Record<string, string> = {
        // What the script answers is its own page on Folio's origin: it runs as an opaque origin,
        // without access to Folio's cookies or storage.
        'content-security-policy': 'sandbox allow-scripts allow-forms allow-popups allow-popups-to-escape-sandbox',
        'x-content-type-options': 'nosniff',
      };
      for (const name of ANSWER_HEADERS) {
        const value = answer.headers[name];
        if (value) out[name] = value;
      }
      return reply.status(answer.status >= 100 && answer.status < 600 ? answer.status : 502).headers(out).send(answer.body);
    };

    const tags = ['integrations'];
    const description = (whose: string) =>
      `Needs no token. Any method, and any path below it (\`…/public/oauth/callback?code=…\`): the request, its path and query and its body as sent, is forwarded to the integration's script (or dev tunnel) as a \`fetch\` event${whose}, and the script's response is the answer. Recorded as an event with its trace.`;
    const routes = [
      { url: '/integrations/:integrationName/public', level: 'integration', params: IntegrationNameParams, summary: 'Public endpoint of an integration', whose: ' without an installation' },
      { url: '/integrations/:integrationName/installations/:installationId/public', level: 'installation', params: InstallationParams, summary: 'Public endpoint of an installation', whose: ' with the installation in its environment' },
    ] as const;
    for (const { url, level, params, summary, whose } of routes) {
      scope.route({
        method: [...METHODS],
        url,
        config: { public: true },
        schema: { tags, params, security: [], summary, description: description(whose) },
        handler: (req, reply) => forward(req.params, req, reply, level),
      });
      scope.route({
        method: [...METHODS],
        url: `${url}/*`,
        config: { public: true },
        schema: { hide: true, params: Type.Composite([params, Type.Object({ '*': Type.String() })]) },
        handler: (req, reply) => forward(req.params, req, reply, level),
      });
    }
  });
}
