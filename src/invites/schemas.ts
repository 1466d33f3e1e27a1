import { Type, type Static, type TUnion } from '@sinclair/typebox';
import { RoleOrGuest } from '../platform/schemas.ts';

export const InviteParams = Type.Object({
  organizationId: Type.String({ maxLength: 100 }),
  inviteId: Type.String({ maxLength: 100, description: 'The invite link id' }),
});

/** An invite link to the organization (InviteLinkToOrganization in the official API). */
export const InviteLink = Type.Object({
  object: Type.Literal('invite'),
  id: Type.String({ description: 'The invite link id, the secret that lets anyone holding it join' }),
  role: RoleOrGuest,
  redundant: Type.Boolean({ description: 'The caller already holds this role or a stronger one' }),
});
export type InviteLinkResource = Static<typeof InviteLink>;

/**
 * Only organization invites exist for now. Space and collection invites (bodies with `space` or
 * `collection`) are refused with an explicit message before this schema is checked.
 */
export const CreateInviteBody = Type.Object({
  role: RoleOrGuest,
});

/**
 * The official API names the field `role` for organization invites and `level` for content
 * invites; both mean the role here and one of them is required (`role` wins if both are sent).
 * Both are optional in the schema so that a bad value is reported against its own field.
 */
export const UpdateInviteBody = Type.Object({
  role: Type.Optional(RoleOrGuest),
  level: Type.Optional(RoleOrGuest),
});
export type UpdateInviteInput = Static<typeof UpdateInviteBody>;

export const Email = Type.String({ format: 'email', maxLength: 320, description: 'Email address' });

const EmailEntryObject = Type.Object({
  email: Email,
  role: Type.Optional(RoleOrGuest),
});

/**
 * An email, or `{ email, role }`. Written as if/then/else rather than a union so that a bad entry
 * is reported against its own field (`emails.0.email: must match format "email"`) instead of a
 * failed union branch.
 */
export const EmailEntry = {
  description: 'An email address, or { email, role } to give that person a role of their own',
  if: { type: 'string' },
  then: Email,
  else: EmailEntryObject,
  // Typed as the union it validates, so request bodies are typed (as Role in platform/schemas.ts is).
} as unknown as TUnion<[typeof Email, typeof EmailEntryObject]>;

export const InviteUsersBody = Type.Object({
  emails: Type.Array(EmailEntry, { minItems: 1, maxItems: 100, description: 'People to invite (1 to 100)' }),
  /** Role for entries without one; the organization's default role when absent. */
  role: Type.Optional(RoleOrGuest),
  sso: Type.Optional(Type.Boolean({ description: 'Invite as SSO members (default false)' })),
});
export type InviteUsersInput = Static<typeof InviteUsersBody>;

export const InviteUsersResponse = Type.Object({
  users: Type.Array(Type.String(), { description: 'Ids of existing users who became members now' }),
  invited: Type.Integer({ description: 'Number of distinct email addresses processed' }),
});

export const JoinResponse = Type.Object({});
