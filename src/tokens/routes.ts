import { Type } from '@sinclair/typebox';
import type { FolioApp } from '../platform/app.ts';
import { errorResponses } from '../platform/schemas.ts';
import { presentToken } from './presenter.ts';
import { CreatedApiToken, CreateTokenBody, TokenList } from './schemas.ts';
import { createToken, listLiveTokens, revokeOwnToken } from './service.ts';

/**
 * The caller's own API tokens. The official GitBook API has no operations for a user's API tokens,
 * so these are Folio's own: list the live ones, create one (shown once), revoke one.
 */
export async function tokenRoutes(app: FolioApp): Promise<void> {
  const tags = ['users'];

  app.get(
    '/user/tokens',
    { schema: { operationId: 'listApiTokensOfAuthenticatedUser', tags, response: { 200: TokenList, ...errorResponses } } },
    async (req) => {
      const ctx = req.ctx();
      const rows = await listLiveTokens(ctx);
      return { count: rows.length, items: rows.map((row) => presentToken(row, ctx.token?.id)) };
    },
  );

  app.post(
    '/user/tokens',
    {
      schema: {
        operationId: 'createApiTokenForAuthenticatedUser',
        tags,
        body: CreateTokenBody,
        response: { 201: CreatedApiToken, ...errorResponses, 409: errorResponses[400] },
      },
    },
    async (req, reply) => {
      const ctx = req.ctx();
      const body = req.body ?? {};
      const { token, info } = await createToken(
        ctx.db,
        ctx.user.id,
        { name: body.name, expiresAt: body.expiresAt ? new Date(body.expiresAt) : undefined },
        ctx.token?.expiresAt,
        ctx.token?.ssoOrganizationId,
        ctx.now(),
      );
      return reply.status(201).send({ ...presentToken(info, ctx.token?.id), token });
    },
  );

  app.delete(
    '/user/tokens/:tokenId',
    {
      schema: {
        operationId: 'revokeApiTokenOfAuthenticatedUser',
        tags,
        params: Type.Object({ tokenId: Type.String({ maxLength: 100 }) }),
        response: { 204: Type.Null(), ...errorResponses },
      },
    },
    async (req, reply) => {
      await revokeOwnToken(req.ctx(), req.params.tokenId);
      return reply.status(204).send(null);
    },
  );
}
