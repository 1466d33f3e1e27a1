import { Type } from '@sinclair/typebox';
import { RoleOrGuest, Timestamp, User } from '../platform/schemas.ts';

export const Member = Type.Object({
  object: Type.Literal('member'),
  id: Type.String({ description: 'The user id' }),
  role: RoleOrGuest,
  user: User,
  disabled: Type.Boolean(),
  joinedAt: Timestamp,
  lastSeenAt: Type.Optional(Timestamp),
  sso: Type.Boolean({ description: 'The user can log in with SSO' }),
  spaces: Type.Integer({ description: 'Number of spaces the member can access' }),
  teams: Type.Integer({ description: 'Number of teams the member belongs to' }),
  sites: Type.Integer(),
});

export const MemberParams = Type.Object({
  organizationId: Type.String({ maxLength: 100 }),
  userId: Type.String({ maxLength: 100 }),
});
