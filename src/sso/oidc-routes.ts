import { Type } from '@sinclair/typebox';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { FolioApp } from '../platform/app.ts';
import { requestCookies } from '../platform/cookies.ts';
import { ListOf, PageQuery } from '../platform/paging.ts';
import { errorResponses, OrganizationIdParams } from '../platform/schemas.ts';
import { SsoLoginError } from './errors.ts';
import { BROWSER_COOKIE, completeOidcLogin, newBrowserId, REQUEST_TTL_MS, startOidcLogin } from './oidc-login.ts';
import { CreateOidcProviderBody, OidcProvider, OidcProviderParams, UpdateOidcProviderBody } from './oidc-schemas.ts';
import {
  createOidcProvider,
  deleteOidcProvider,
  getOidcProvider,
  listOidcProviders,
  oidcServiceUrls,
  presentOidcProvider,
  updateOidcProvider,
  type OidcProviderView,
} from './oidc-service.ts';
import { errorPage } from './pages.ts';
import { html, signInCookies } from './routes.ts';

const tags = ['sso'];

/**
 * The OpenID Connect provider operations of the API (/v1/orgs/{organizationId}/oidc): a Folio
 * extension shaped like the official SAML provider operations.
 */
export async function oidcRoutes(app: FolioApp): Promise<void> {
  const present = (req: FastifyRequest, v: OidcProviderView) => presentOidcProvider(req.ctx().urls, v);

  app.get(
    '/orgs/:organizationId/oidc',
    {
      schema: {
        operationId: 'listOIDCProvidersInOrganizationById',
        tags,
        params: OrganizationIdParams,
        querystring: Type.Object(PageQuery),
        response: { 200: ListOf(OidcProvider), ...errorResponses },
      },
    },
    async (req) => {
      const page = await listOidcProviders(req.ctx(), req.params.organizationId, req.query);
      return { ...page, items: page.items.map((v) => present(req, v)) };
    },
  );

  app.post(
    '/orgs/:organizationId/oidc',
    {
      schema: {
        operationId: 'createOrganizationOIDCProvider',
        tags,
        params: OrganizationIdParams,
        body: CreateOidcProviderBody,
        response: { 201: OidcProvider, ...errorResponses },
      },
    },
    async (req, reply) => reply.status(201).send(present(req, await createOidcProvider(req.ctx(), req.params.organizationId, req.body))),
  );

  app.get(
    '/orgs/:organizationId/oidc/:oidcProviderId',
    { schema: { operationId: 'getOrganizationOIDCProviderById', tags, params: OidcProviderParams, response: { 200: OidcProvider, ...errorResponses } } },
    async (req) => present(req, await getOidcProvider(req.ctx(), req.params.organizationId, req.params.oidcProviderId)),
  );

  app.patch(
    '/orgs/:organizationId/oidc/:oidcProviderId',
    {
      schema: {
        operationId: 'updateOrganizationOIDCProvider',
        tags,
        params: OidcProviderParams,
        body: UpdateOidcProviderBody,
        response: { 200: OidcProvider, ...errorResponses },
      },
    },
    async (req) => present(req, await updateOidcProvider(req.ctx(), req.params.organizationId, req.params.oidcProviderId, req.body ?? {})),
  );

  app.delete(
    '/orgs/:organizationId/oidc/:oidcProviderId',
    { schema: { operationId: 'deleteOrganizationOIDCProvider', tags, params: OidcProviderParams, response: { 204: Type.Null(), ...errorResponses } } },
    async (req, reply) => {
      await deleteOidcProvider(req.ctx(), req.params.organizationId, req.params.oidcProviderId);
      return reply.status(204).send(null);
    },
  );
}

const ProviderIdParams = Type.Object({ providerId: Type.String({ maxLength: 100 }) });
const StartQuery = Type.Object({
  // No length limit here: a next that is no app path (too long included) is ignored, not refused.
  next: Type.Optional(Type.String({ description: 'The app path to open once signed in (/app/...); anything else is ignored' })),
});

/**
 * The browser side of OpenID Connect sign-in, outside /v1 and the OpenAPI document (redirects and
 * HTML; docs/sso.md documents these URLs):
 *  - GET /sso/oidc/{providerId}/start[?next=/app/...]: redirects to the provider's authorization
 *    endpoint, after setting the browser-binding cookie (Path=/sso/oidc, SameSite=Lax);
 *  - GET /sso/oidc/{providerId}/callback: the redirect URI: checks, opens the session (app cookie
 *    and /sso cookie) and redirects to `next`, by default the organization's screen.
 */
export async function oidcWebRoutes(app: FolioApp): Promise<void> {
  const services = app.services;
  const web = { config: { public: true } };
  const hidden = { hide: true, tags };
  const secure = () => (services.config.publicUrl.startsWith('https:') ? '; Secure' : '');

  const refuse = (req: FastifyRequest, reply: FastifyReply, err: unknown, providerId: string) => {
    if (err instanceof SsoLoginError) {
      req.log.warn({ oidcProvider: providerId, reason: err.reason }, 'OIDC sign-in refused');
      const start = err.status !== 404 ? oidcServiceUrls(services.urls, providerId).startURL : undefined;
      return html(reply, err.status, errorPage(err.userMessage, req.id, start));
    }
    req.log.error({ err, oidcProvider: providerId }, 'OIDC sign-in failed');
    return html(reply, 500, errorPage('Something went wrong on our side while signing you in. Try again in a moment.', req.id));
  };

  app.get('/sso/oidc/:providerId/start', { ...web, schema: { ...hidden, params: ProviderIdParams, querystring: StartQuery } }, async (req, reply) => {
    const { providerId } = req.params;
    try {
      const browserId = newBrowserId(requestCookies(req.headers.cookie).get(BROWSER_COOKIE));
      const url = await startOidcLogin(services, providerId, req.query.next, browserId);
      // Lax, not Strict: the provider sends the browser back with a top-level GET from its own
      // site, which Lax cookies accompany.
      reply.header('set-cookie', `${BROWSER_COOKIE}=${browserId}; Path=/sso/oidc; HttpOnly; SameSite=Lax; Max-Age=${REQUEST_TTL_MS / 1000}${secure()}`);
      return reply.header('cache-control', 'no-store').redirect(url, 302);
    } catch (err) {
      return refuse(req, reply, err, providerId);
    }
  });

  app.get('/sso/oidc/:providerId/callback', { ...web, schema: { ...hidden, params: ProviderIdParams } }, async (req, reply) => {
    const { providerId } = req.params;
    try {
      const query = req.url.includes('?') ? req.url.slice(req.url.indexOf('?') + 1) : '';
      const result = await completeOidcLogin(services, providerId, query, requestCookies(req.headers.cookie).get(BROWSER_COOKIE));
      req.log.info({ oidcProvider: providerId, organization: result.organizationId, user: result.user.id, created: result.created }, 'OIDC sign-in accepted');
      reply.header('set-cookie', signInCookies(services.config, result.session.token, result.session.expiresAt.getTime() - Date.now()));
      // A path on this server, where the cookie was just set (APP_URL may name another host).
      return reply.header('cache-control', 'no-store').redirect(result.next ?? `/app/o/${encodeURIComponent(result.organizationId)}`, 303);
    } catch (err) {
      return refuse(req, reply, err, providerId);
    }
  });
}
