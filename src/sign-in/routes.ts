import { Type } from '@sinclair/typebox';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { FolioApp } from '../platform/app.ts';
import { BadRequestError, ForbiddenError } from '../platform/errors.ts';
import { errorResponses, ErrorResponse } from '../platform/schemas.ts';
import { CSRF_HEADER, csrfSafe, sessionCookie } from '../platform/session.ts';
import type { UserRow } from '../platform/db/schema.ts';
import { presentUser } from '../users/presenter.ts';
import { appPathOf, organizationOfAppPath } from '../platform/app-paths.ts';
import { listLogins } from '../sso/service.ts';
import { AppSession, PasswordSetupAccount, PasswordSetupBody, PasswordSetupCheckBody, SignInBody, SignInOptions, SignInOptionsQuery } from './schemas.ts';
import { completePasswordSetup, passwordSetupAccount, signInWithPassword, signOut, type Session } from './service.ts';
import { SignInThrottle, TooManyAttemptsError } from './throttle.ts';

const tags = ['app'];
const publicErrors = { 400: ErrorResponse, 401: ErrorResponse, 403: ErrorResponse, 429: ErrorResponse };

/**
 * Signing in to the app (/app/api): password sign-in, the first password through a setup link,
 * sign-out and the current session. The session is a cookie (HttpOnly, SameSite=Lax, Path=/,
 * Secure behind https) that also authenticates /v1 calls of the app (see platform/app.ts).
 */
export async function signInRoutes(app: FolioApp): Promise<void> {
  const services = app.services;
  const throttle = new SignInThrottle(services.now);

  // Sign-in and password setup need no session, but must not be posted by another site's page
  // either (a forged sign-in would put the victim in the attacker's account).
  const requireCsrf = async (req: FastifyRequest) => {
    if (!csrfSafe(req, services.config)) {
      throw new ForbiddenError(`Send the "${CSRF_HEADER}: 1" header (or post from this server's own pages): refused to protect against cross-site request forgery`);
    }
  };
  const present = (user: UserRow, expiresAt: Date | null, ssoOrganization?: string | null) => ({
    object: 'session' as const,
    user: presentUser(services.urls, user),
    expiresAt: expiresAt?.toISOString() ?? null,
    ...(ssoOrganization ? { ssoOrganization } : {}),
  });
  const opened = (reply: FastifyReply, session: Session) =>
    reply
      .header('set-cookie', sessionCookie(services.config, session.token, session.expiresAt.getTime() - services.now()))
      .header('cache-control', 'no-store')
      .send(present(session.user, session.expiresAt));

  app.post(
    '/app/api/sign-in',
    {
      config: { public: true },
      onRequest: requireCsrf,
      schema: { operationId: 'signInWithPassword', tags, security: [], body: SignInBody, response: { 200: AppSession, ...publicErrors } },
    },
    async (req, reply) => {
      try {
        return opened(reply, await signInWithPassword(services, throttle, { ...req.body, address: req.ip }));
      } catch (err) {
        if (err instanceof TooManyAttemptsError) reply.header('retry-after', String(err.retryAfterSeconds));
        throw err;
      }
    },
  );

  app.post(
    '/app/api/password-setup',
    {
      config: { public: true },
      onRequest: requireCsrf,
      schema: { operationId: 'setUpPassword', tags, security: [], body: PasswordSetupBody, response: { 200: AppSession, ...publicErrors } },
    },
    async (req, reply) => opened(reply, await completePasswordSetup(services, req.body.token, req.body.password)),
  );

  app.post(
    '/app/api/password-setup/check',
    {
      config: { public: true },
      onRequest: requireCsrf,
      schema: { operationId: 'checkPasswordSetupLink', tags, security: [], body: PasswordSetupCheckBody, response: { 200: PasswordSetupAccount, ...publicErrors } },
    },
    async (req) => passwordSetupAccount(services, req.body.token),
  );

  app.post(
    '/app/api/sign-out',
    { schema: { operationId: 'signOut', tags, security: [{ session: [] }], response: { 204: Type.Null(), ...errorResponses } } },
    async (req, reply) => {
      if (!req.viaSession || !req.callerToken) {
        throw new BadRequestError('Sign-out ends a session opened by signing in (its cookie); to revoke an API token, use DELETE /v1/user/tokens/{tokenId}');
      }
      await signOut(services, req.callerToken.id);
      return reply.header('set-cookie', sessionCookie(services.config, null)).status(204).send(null);
    },
  );

  // What the sign-in screen offers besides a password: the identity providers of the organization
  // the person is going to. Public, and no more than GET /v1/orgs/{id}/sso tells anyone: an
  // unknown organization and one without providers look the same.
  app.get(
    '/app/api/sign-in/options',
    {
      config: { public: true },
      schema: {
        operationId: 'getSignInOptions',
        tags,
        security: [],
        querystring: SignInOptionsQuery,
        response: { 200: SignInOptions, 400: ErrorResponse, 429: ErrorResponse },
      },
    },
    async (req, reply) => {
      const next = appPathOf(req.query.next);
      const organization = (next && organizationOfAppPath(next)) || req.query.organization;
      const logins = organization ? await listLogins(services, organization) : [];
      const sso = logins.map((login) => {
        const start = new URL(login.startURL);
        if (next) start.searchParams.set('next', next);
        return { label: login.label, startURL: start.toString() };
      });
      return reply.header('cache-control', 'no-store').send({ sso });
    },
  );

  app.get(
    '/app/api/session',
    { schema: { operationId: 'getAppSession', tags, security: [{ session: [] }, { user: [] }], response: { 200: AppSession, ...errorResponses } } },
    async (req, reply) => {
      const ctx = req.ctx();
      return reply.header('cache-control', 'no-store').send(present(ctx.user, ctx.token?.expiresAt ?? null, ctx.token?.ssoOrganizationId));
    },
  );
}
