import { Type } from '@sinclair/typebox';
import { Timestamp } from '../platform/schemas.ts';

/** An API token as listings show it: never the token itself, which is shown once at creation. */
export const ApiToken = Type.Object({
  object: Type.Literal('api-token'),
  id: Type.String(),
  name: Type.Optional(Type.String({ description: 'Label chosen at creation' })),
  createdAt: Timestamp,
  expiresAt: Type.Optional(Type.String({ format: 'date-time', description: 'When the token stops working; absent: never' })),
  revokedAt: Type.Optional(Type.String({ format: 'date-time', description: 'When the token was revoked' })),
  current: Type.Optional(Type.Boolean({ description: 'The token this request was made with' })),
});

export const CreatedApiToken = Type.Object({
  ...ApiToken.properties,
  token: Type.String({ description: 'The secret token. Shown only in this response: store it now.' }),
});

export const CreateTokenBody = Type.Object({
  name: Type.Optional(Type.String({ minLength: 1, maxLength: 100, description: 'A label to tell tokens apart' })),
  expiresAt: Type.Optional(Type.String({ format: 'date-time', description: 'When the token stops working (default: never, or when the calling token expires)' })),
});

export const TokenList = Type.Object({
  count: Type.Integer(),
  items: Type.Array(ApiToken),
});
