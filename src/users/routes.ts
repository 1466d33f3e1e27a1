import { Type } from '@sinclair/typebox';
import type { FolioApp } from '../platform/app.ts';
import { errorResponses } from '../platform/schemas.ts';
import { User } from '../platform/schemas.ts';
import { presentUser } from './presenter.ts';
import { getVisibleUser, updateUser } from './service.ts';

const UserIdParams = Type.Object({ userId: Type.String({ maxLength: 100 }) });

export async function userRoutes(app: FolioApp): Promise<void> {
  app.get(
    '/user',
    { schema: { operationId: 'getAuthenticatedUser', tags: ['users'], response: { 200: User, ...errorResponses } } },
    async (req) => {
      const ctx = req.ctx();
      return presentUser(ctx.urls, ctx.user);
    },
  );

  app.get(
    '/users/:userId',
    {
      schema: {
        operationId: 'getUserById',
        tags: ['users'],
        params: UserIdParams,
        response: { 200: User, ...errorResponses },
      },
    },
    async (req) => {
      const ctx = req.ctx();
      return presentUser(ctx.urls, await getVisibleUser(ctx, req.params.userId));
    },
  );

  app.patch(
    '/users/:userId',
    {
      schema: {
        operationId: 'updateUserById',
        tags: ['users'],
        params: UserIdParams,
        body: Type.Object({
          displayName: Type.Optional(Type.String({ minLength: 1, maxLength: 64, pattern: '\\S' })),
          photoURL: Type.Optional(Type.String({ format: 'uri', maxLength: 2048 })),
        }),
        response: { 200: User, ...errorResponses },
      },
    },
    async (req) => {
      const ctx = req.ctx();
      return presentUser(ctx.urls, await updateUser(ctx, req.params.userId, req.body));
    },
  );
}
