import { createHmac, timingSafeEqual } from 'node:crypto';
import { Type } from '@sinclair/typebox';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { FolioApp } from '../platform/app.ts';
import type { Config } from '../platform/config.ts';
import { errorResponses } from '../platform/schemas.ts';
import { authenticateTokenHash, hashToken, revokeApiToken } from '../platform/auth.ts';
import { ListOf, PageQuery } from '../platform/paging.ts';
import { OrganizationIdParams } from '../platform/schemas.ts';
import { createToken } from '../tokens/service.ts';
import { completeLogin, findProvider, nextOfRelayState, SsoLoginError, startLogin } from './login.ts';
import { escapeHtml, errorPage, page } from './pages.ts';
import { presentSamlProvider } from './presenter.ts';
import { CreateSamlProviderBody, SamlProvider, SamlProviderParams, SsoLogin, UpdateSamlProviderBody } from './schemas.ts';
import { createProvider, deleteProvider, getProvider, listLogins, listProviders, updateProvider, type ProviderView } from './service.ts';
import { serviceUrls } from './urls.ts';
import { serviceProviderKey } from './keys.ts';
import { organizationTitle } from './store.ts';
import { requestCookies } from '../platform/cookies.ts';
import { sessionCookie } from '../platform/session.ts';

const tags = ['sso'];

/** The SAML provider operations of the API (/v1/orgs/{organizationId}/saml, /sso). */
export async function ssoRoutes(app: FolioApp): Promise<void> {
  const present = (req: FastifyRequest, v: ProviderView) => presentSamlProvider(req.ctx().urls, v.row, v.team, v.membership);

  app.get(
    '/orgs/:organizationId/saml',
    {
      schema: {
        operationId: 'listSAMLProvidersInOrganizationById',
        tags,
        params: OrganizationIdParams,
        querystring: Type.Object(PageQuery),
        response: { 200: ListOf(SamlProvider), ...errorResponses },
      },
    },
    async (req) => {
      const page = await listProviders(req.ctx(), req.params.organizationId, req.query);
      return { ...page, items: page.items.map((v) => present(req, v)) };
    },
  );

  app.post(
    '/orgs/:organizationId/saml',
    {
      schema: {
        operationId: 'createOrganizationSAMLProvider',
        tags,
        params: OrganizationIdParams,
        body: CreateSamlProviderBody,
        response: { 201: SamlProvider, ...errorResponses },
      },
    },
    async (req, reply) => reply.status(201).send(present(req, await createProvider(req.ctx(), req.params.organizationId, req.body))),
  );

  app.get(
    '/orgs/:organizationId/saml/:samlProviderId',
    { schema: { operationId: 'getOrganizationSAMLProviderById', tags, params: SamlProviderParams, response: { 200: SamlProvider, ...errorResponses } } },
    async (req) => present(req, await getProvider(req.ctx(), req.params.organizationId, req.params.samlProviderId)),
  );

  app.patch(
    '/orgs/:organizationId/saml/:samlProviderId',
    {
      schema: {
        operationId: 'updateOrganizationSAMLProvider',
        tags,
        params: SamlProviderParams,
        body: UpdateSamlProviderBody,
        response: { 200: SamlProvider, ...errorResponses },
      },
    },
    async (req) => present(req, await updateProvider(req.ctx(), req.params.organizationId, req.params.samlProviderId, req.body ?? {})),
  );

  app.delete(
    '/orgs/:organizationId/saml/:samlProviderId',
    { schema: { operationId: 'deleteOrganizationSAMLProvider', tags, params: SamlProviderParams, response: { 204: Type.Null(), ...errorResponses } } },
    async (req, reply) => {
      await deleteProvider(req.ctx(), req.params.organizationId, req.params.samlProviderId);
      return reply.status(204).send(null);
    },
  );

  app.get(
    '/orgs/:organizationId/sso',
    {
      config: { public: true },
      schema: {
        operationId: 'listSSOProviderLoginsInOrganization',
        tags,
        security: [],
        params: OrganizationIdParams,
        response: { 200: Type.Object({ items: Type.Array(SsoLogin) }), 400: errorResponses[400], 429: errorResponses[429] },
      },
    },
    async (req) => ({ items: await listLogins(app.services, req.params.organizationId) }),
  );
}

const SESSION_COOKIE = 'folio_sso_session';

/**
 * The cookies a single sign-on sets (SAML and OIDC alike): one session, two cookies, the app's
 * (Path=/, for the app and /v1) and the one of the /sso/session page (Path=/sso), which makes API
 * tokens from it.
 */
export function signInCookies(config: Pick<Config, 'publicUrl'>, token: string, maxAgeMs: number): string[] {
  const secure = config.publicUrl.startsWith('https:') ? '; Secure' : '';
  return [
    sessionCookie(config, token, maxAgeMs),
    `${SESSION_COOKIE}=${encodeURIComponent(token)}; Path=/sso; HttpOnly; SameSite=Lax; Max-Age=${Math.floor(maxAgeMs / 1000)}${secure}`,
  ];
}
const ProviderIdParams = Type.Object({ providerId: Type.String({ maxLength: 100 }) });
const StartQuery = Type.Object({
  // No length limit here: a next that is no app path (too long included) is ignored, not refused.
  next: Type.Optional(Type.String({ description: 'The app path to open once signed in (/app/...); anything else is ignored' })),
});
export const html = (reply: FastifyReply, status: number, body: string) =>
  reply.status(status).header('content-type', 'text/html; charset=utf-8').header('cache-control', 'no-store').send(body);

function readCookie(req: FastifyRequest, name: string): string | undefined {
  return requestCookies(req.headers.cookie).get(name);
}

/** A field of a posted form (the parser below makes a form an object of strings); undefined otherwise. */
function formField(body: unknown, name: string): unknown {
  return typeof body === 'object' && body !== null ? Reflect.get(body, name) : undefined;
}

/**
 * The browser side of single sign-on, outside /v1 and out of the OpenAPI document because it
 * answers HTML, XML and redirects, not JSON (docs/sso.md documents these URLs):
 *  - GET  /sso/saml/{providerId}/metadata: Folio's SP metadata XML (its URL is also the SP entity id);
 *  - GET  /sso/saml/{providerId}/start[?next=/app/...]: redirects to the identity provider with a
 *    signed AuthnRequest, `next` in the RelayState;
 *  - POST /sso/saml/{providerId}/acs: the assertion consumer service (HTTP-POST binding): opens
 *    the session (app cookie and /sso cookie) and redirects to `next`, by default the organization;
 *  - GET  /sso/session: who the session cookie signs in, with a button that makes an API token;
 *  - POST /sso/token: makes an API token from the session (shown once);
 *  - POST /sso/logout: ends the session.
 */
export async function ssoWebRoutes(app: FolioApp): Promise<void> {
  const services = app.services;
  const secure = services.config.publicUrl.startsWith('https:');
  // Forms post url-encoded bodies; only these routes accept them (content type parsers are per plugin).
  app.addContentTypeParser('application/x-www-form-urlencoded', { parseAs: 'string' }, (_req, body, done) => {
    done(null, Object.fromEntries(new URLSearchParams(typeof body === 'string' ? body : body.toString('utf8'))));
  });
  const web = { config: { public: true } };
  const hidden = { hide: true, tags };

  /** The session of the request's cookie: a live token issued by an organization's SSO. */
  async function session(req: FastifyRequest) {
    const token = readCookie(req, SESSION_COOKIE);
    if (!token) return undefined;
    const auth = await authenticateTokenHash(services.db, hashToken(token), services.tokenCache);
    if (!auth?.ssoOrganizationId) return undefined;
    return { ...auth, organizationId: auth.ssoOrganizationId };
  }
  const csrfOf = (tokenId: string) => createHmac('sha256', services.signingKey).update(`sso-csrf:${tokenId}`).digest('base64url');
  const csrfValid = (tokenId: string, given: unknown) => {
    if (typeof given !== 'string') return false;
    const want = Buffer.from(csrfOf(tokenId));
    const got = Buffer.from(given);
    return want.length === got.length && timingSafeEqual(want, got);
  };
  const refuse = (req: FastifyRequest, reply: FastifyReply, err: unknown, providerId?: string) => {
    if (err instanceof SsoLoginError) {
      req.log.warn({ samlProvider: providerId, reason: err.reason }, 'SAML sign-in refused');
      const start = providerId && err.status !== 404 ? serviceUrls(services.urls, providerId).startURL : undefined;
      return html(reply, err.status, errorPage(err.userMessage, req.id, start));
    }
    req.log.error({ err, samlProvider: providerId }, 'SAML sign-in failed');
    return html(reply, 500, errorPage('Something went wrong on our side while signing you in. Try again in a moment.', req.id));
  };

  app.get('/sso/saml/:providerId/metadata', { ...web, schema: { ...hidden, params: ProviderIdParams } }, async (req, reply) => {
    const { providerId } = req.params;
    const provider = await findProvider(services.db, providerId);
    if (!provider) return reply.status(404).send({ error: { code: 404, message: 'SAML provider not found' } });
    const sp = await serviceProviderKey(services.db);
    const service = serviceUrls(services.urls, provider.id);
    const { SAML } = await import('@node-saml/node-saml');
    const saml = new SAML({ issuer: service.entityID, callbackUrl: service.acsURL, idpCert: sp.certificate, wantAssertionsSigned: false, privateKey: sp.privateKey, publicCert: sp.certificate });
    const xml = saml.generateServiceProviderMetadata(null, sp.certificate);
    return reply.header('content-type', 'application/samlmetadata+xml; charset=utf-8').send(xml);
  });

  app.get('/sso/saml/:providerId/start', { ...web, schema: { ...hidden, params: ProviderIdParams, querystring: StartQuery } }, async (req, reply) => {
    const { providerId } = req.params;
    try {
      const url = await startLogin(services, providerId, req.query.next);
      return reply.header('cache-control', 'no-store').redirect(url, 302);
    } catch (err) {
      return refuse(req, reply, err, providerId);
    }
  });

  app.post('/sso/saml/:providerId/acs', { ...web, schema: { ...hidden, params: ProviderIdParams } }, async (req, reply) => {
    const { providerId } = req.params;
    try {
      if (typeof req.body !== 'object' || !req.headers['content-type']?.startsWith('application/x-www-form-urlencoded')) {
        throw new SsoLoginError('body is not a form', 'Folio expects the identity provider to post the SAML response as a form (HTTP-POST binding).');
      }
      const result = await completeLogin(services, providerId, formField(req.body, 'SAMLResponse'));
      req.log.info({ samlProvider: providerId, organization: result.organizationId, user: result.user.id, created: result.created }, 'SAML sign-in accepted');
      const maxAgeMs = result.session.expiresAt.getTime() - Date.now();
      reply.header('set-cookie', signInCookies(services.config, result.session.token, maxAgeMs));
      // A path on this server, where the cookie was just set (APP_URL may name another host).
      const next = nextOfRelayState(services.signingKey, providerId, result.requestId, formField(req.body, 'RelayState'));
      return reply.header('cache-control', 'no-store').redirect(next ?? `/app/o/${encodeURIComponent(result.organizationId)}`, 303);
    } catch (err) {
      return refuse(req, reply, err, providerId);
    }
  });

  app.get('/sso/session', { ...web, schema: { ...hidden } }, async (req, reply) => {
    const s = await session(req);
    if (!s) return html(reply, 401, page('Not signed in', '<p>No single sign-on session: open your organization\'s login page and sign in through its identity provider.</p>'));
    const title = await organizationTitle(services.db, s.organizationId);
    return html(
      reply,
      200,
      page(
        'Signed in',
        `<p>You are signed in as <strong>${escapeHtml(s.user.display_name)}</strong> (${escapeHtml(s.user.email)}) to <strong>${escapeHtml(title ?? s.organizationId)}</strong>${
          s.tokenExpiresAt ? ` until ${escapeHtml(s.tokenExpiresAt.toISOString())}` : ''
        }.</p>
<p>Organization id: <code data-organization="${escapeHtml(s.organizationId)}">${escapeHtml(s.organizationId)}</code>, user id: <code data-user="${escapeHtml(s.user.id)}">${escapeHtml(s.user.id)}</code></p>
<form method="post" action="/sso/token"><input type="hidden" name="csrf" value="${escapeHtml(csrfOf(s.tokenId))}"><button type="submit">Create an API token</button></form>
<form method="post" action="/sso/logout"><input type="hidden" name="csrf" value="${escapeHtml(csrfOf(s.tokenId))}"><button type="submit">Sign out</button></form>`,
      ),
    );
  });

  app.post('/sso/token', { ...web, schema: { ...hidden } }, async (req, reply) => {
    const s = await session(req);
    if (!s) return html(reply, 401, page('Not signed in', '<p>No single sign-on session: sign in through your organization\'s identity provider first.</p>'));
    if (!csrfValid(s.tokenId, formField(req.body, 'csrf'))) {
      req.log.warn({ user: s.user.id }, 'SSO token request without a valid form token');
      return html(reply, 403, page('Request refused', '<p>This form has expired. Go back to <a href="/sso/session">your session</a> and try again.</p>'));
    }
    const { token, info } = await createToken(
      services.db,
      s.user.id,
      { name: 'SSO API token', expiresAt: new Date(Date.now() + services.config.ssoTokenTtlMs) },
      null,
      s.organizationId,
    );
    return html(
      reply,
      201,
      page(
        'API token created',
        `<p>Your API token, shown only now (it expires ${escapeHtml(info.expires_at!.toISOString())}):</p>
<pre id="token">${escapeHtml(token)}</pre>
<p>Send it as <code>Authorization: Bearer &lt;token&gt;</code>. It reaches this organization although it enforces single sign-on; revoke it with <code>DELETE /v1/user/tokens/${escapeHtml(info.id)}</code>.</p>`,
      ),
    );
  });

  app.post('/sso/logout', { ...web, schema: { ...hidden } }, async (req, reply) => {
    const s = await session(req);
    if (s && csrfValid(s.tokenId, formField(req.body, 'csrf'))) {
      await revokeApiToken(services.db, s.tokenId, { cache: services.tokenCache });
    }
    reply.header('set-cookie', `${SESSION_COOKIE}=; Path=/sso; HttpOnly; SameSite=Lax; Max-Age=0${secure ? '; Secure' : ''}`);
    return html(reply, 200, page('Signed out', '<p>Your single sign-on session has ended.</p>'));
  });
}
