import { Type, type Static } from '@sinclair/typebox';
import { PageQuery } from '../platform/paging.ts';
import { asEnum, Timestamp } from '../platform/schemas.ts';
import { Member } from '../members/schemas.ts';

export const TEAM_TITLE_MAX = 64;

/** Surrounding spaces are trimmed; control characters (line breaks, NUL...) are refused by the service. */
export const TeamTitle = Type.String({
  minLength: 1,
  maxLength: TEAM_TITLE_MAX,
  // At least one visible character: a title of spaces would be empty once trimmed.
  pattern: '\\S',
  description: `Title of the team (1 to ${TEAM_TITLE_MAX} characters, on one line)`,
});

export const TeamMemberRole = asEnum(Type.Union([Type.Literal('owner'), Type.Literal('member')]), {
  description: 'owner (manages the team members) or member',
});

/** A user named in a request: their user id, or their email address. */
export const UserRef = Type.String({ minLength: 1, maxLength: 320, description: 'A user id or an email address' });

const MAX_USERS_PER_REQUEST = 1000;

export const TeamPermissions = Type.Object({
  view: Type.Boolean({ description: 'The caller can see the team and list its members' }),
  admin: Type.Boolean({ description: 'The caller can manage the team members' }),
});

export const Team = Type.Object({
  object: Type.Literal('team'),
  id: Type.String(),
  title: Type.String({ description: 'Title of the team' }),
  members: Type.Integer({ description: 'Number of members of the team' }),
  spaces: Type.Integer({ description: 'Number of spaces the team has access to' }),
  createdAt: Timestamp,
  permissions: TeamPermissions,
});
export type TeamResource = Static<typeof Team>;

export const TeamMembership = Type.Object({ role: TeamMemberRole });

export const OrganizationTeamMember = Type.Object({
  organization: Member,
  team: TeamMembership,
  permissions: Type.Object({ view: Type.Boolean({ description: 'The caller can see the team member' }) }),
});

export const MemberTeam = Type.Object({
  team: Team,
  member: TeamMembership,
});

/**
 * An id in a path or a query, as the official document's EntityId. The pattern also keeps
 * characters PostgreSQL refuses in text (NUL) out of queries, where they would fail as a 500.
 */
const EntityId = (description: string) => Type.String({ maxLength: 100, pattern: '^[a-zA-Z0-9_-]+$', description });

export const OrgParams = Type.Object({ organizationId: EntityId('Id of the organization') });

export const TeamParams = Type.Object({
  organizationId: EntityId('Id of the organization'),
  teamId: EntityId('Id of the team'),
});

export const MemberParams = Type.Object({
  organizationId: EntityId('Id of the organization'),
  userId: EntityId('User id of the member'),
});

export const TeamMemberParams = Type.Object({
  organizationId: EntityId('Id of the organization'),
  teamId: EntityId('Id of the team'),
  userId: EntityId('User id of the member'),
});

const TitleFilter = Type.String({ maxLength: TEAM_TITLE_MAX, description: 'Only teams whose title contains this text (case-insensitive)' });

export const ListTeamsQuery = Type.Object({
  ...PageQuery,
  owner: Type.Optional(EntityId('User id of a member: only the teams they can manage')),
  title: Type.Optional(TitleFilter),
});
export type ListTeamsInput = Static<typeof ListTeamsQuery>;

export const ListMemberTeamsQuery = Type.Object({
  ...PageQuery,
  title: Type.Optional(TitleFilter),
});
export type ListMemberTeamsInput = Static<typeof ListMemberTeamsQuery>;

export const CreateTeamBody = Type.Object({
  title: TeamTitle,
  members: Type.Optional(
    Type.Array(UserRef, {
      maxItems: MAX_USERS_PER_REQUEST,
      description: 'Members of the organization to put in the team (user ids or emails), with the team role "member"',
    }),
  ),
});
export type CreateTeamInput = Static<typeof CreateTeamBody>;

export const UpdateTeamBody = Type.Object({ title: TeamTitle });

export const UpdateTeamMembersBody = Type.Object({
  add: Type.Optional(Type.Array(UserRef, { maxItems: MAX_USERS_PER_REQUEST, description: 'Users to add (user ids or emails)' })),
  remove: Type.Optional(
    Type.Array(UserRef, { maxItems: MAX_USERS_PER_REQUEST, description: 'Users to remove (user ids or emails); removal wins over add' }),
  ),
  memberships: Type.Optional(
    Type.Record(Type.String(), TeamMembership, {
      maxProperties: MAX_USERS_PER_REQUEST,
      propertyNames: { maxLength: 320 },
      description: 'Team role per user (user id or email); the user is added when not in the team yet',
    }),
  ),
});
export type UpdateTeamMembersInput = Static<typeof UpdateTeamMembersBody>;

/** The body is optional: no body (or null) adds the user as a "member" or keeps their current role. */
export const AddTeamMemberBody = Type.Union([
  Type.Object({ role: Type.Optional(TeamMemberRole) }),
  Type.Null(),
]);
