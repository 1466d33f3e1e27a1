import { Type, type Static } from '@sinclair/typebox';
import { asEnum, Document, MergeRule, MergeRulesRules, RoleOrGuest, Timestamp } from '../platform/schemas.ts';
import { LANGUAGES } from '../spaces/schemas.ts';

export const OrganizationTitle = Type.String({ minLength: 2, maxLength: 255, pattern: '\\S.*\\S', description: 'Name of the organization' });

export const EmailDomains = Type.Array(
  Type.String({ minLength: 3, maxLength: 253, pattern: '^[A-Za-z0-9]([A-Za-z0-9-]*[A-Za-z0-9])?(\\.[A-Za-z0-9]([A-Za-z0-9-]*[A-Za-z0-9])?)+$' }),
  { maxItems: 50, description: 'Email domains whose verified users may join' },
);

export const Hostname = Type.String({
  minLength: 3,
  maxLength: 32,
  pattern: '^[a-z0-9][a-z0-9-]*[a-z0-9]$',
  description: 'Default hostname for public content (lowercase letters, digits, dashes)',
});

const OrganizationLanguageDoc =
  "Folio's addition: the organization's default content language. New spaces take it; search (and the insights engine) use it for a space that has no language of its own";

export const DefaultContent = Type.Object({ type: Type.Literal('site'), site: Type.String({ maxLength: 100 }) });

/** Organizations either require reviewers (rules) or not (none); `inherit` is accepted as "none". */
export const OrganizationMergeRules = Type.Union([
  MergeRulesRules,
  Type.Object({ type: Type.Literal('none') }),
  Type.Object({ type: Type.Literal('inherit') }),
]);

export const OrganizationPermissions = Type.Object({
  view: Type.Boolean(),
  access: Type.Boolean(),
  admin: Type.Boolean(),
  ownTeam: Type.Boolean(),
  createContent: Type.Boolean(),
  createOpenAPISpec: Type.Boolean(),
  ingestConversations: Type.Boolean(),
  viewBilling: Type.Boolean(),
  listMembers: Type.Boolean(),
  listTeams: Type.Boolean(),
  listIntegrations: Type.Boolean(),
  listInstallations: Type.Boolean(),
  installIntegration: Type.Boolean(),
});

export const Organization = Type.Object({
  object: Type.Literal('organization'),
  id: Type.String(),
  title: Type.String(),
  createdAt: Timestamp,
  emailDomains: Type.Array(Type.String()),
  hostname: Type.Optional(Type.String()),
  type: Type.String({ description: 'business or community' }),
  useCase: Type.Optional(Type.String()),
  communityType: Type.Optional(Type.String()),
  defaultRole: RoleOrGuest,
  defaultContent: Type.Optional(DefaultContent),
  sso: Type.Boolean({ description: 'SSO enforced organization-wide' }),
  ai: Type.Boolean({ description: 'AI features enabled' }),
  inviteLinks: Type.Boolean({ description: 'Invite links enabled' }),
  plan: Type.String(),
  // One object schema (not a union) so responses serialize without trying each branch.
  mergeRules: Type.Unsafe<{ type: 'rules'; rules: { rule: 'require_specific_reviewers'; users: string[] }[] } | { type: 'none' }>(
    Type.Object({ type: asEnum(Type.Union([Type.Literal('rules'), Type.Literal('none')])), rules: Type.Optional(Type.Array(MergeRule)) }),
  ),
  urls: Type.Object({ location: Type.String(), app: Type.String(), logo: Type.Optional(Type.String()) }),
  trial: Type.Object({ status: Type.String(), count: Type.Integer() }),
  permissions: OrganizationPermissions,
  language: Type.Optional(Type.String({ description: OrganizationLanguageDoc })),
});
export type OrganizationResource = Static<typeof Organization>;

export const CreateOrganizationBody = Type.Object({
  title: OrganizationTitle,
  emailDomains: Type.Optional(EmailDomains),
});

export const UpdateOrganizationBody = Type.Object({
  title: Type.Optional(OrganizationTitle),
  emailDomains: Type.Optional(EmailDomains),
  hostname: Type.Optional(Hostname),
  defaultRole: Type.Optional(RoleOrGuest),
  defaultContent: Type.Optional(Type.Union([DefaultContent, Type.Null()])),
  logo: Type.Optional(Type.Union([Type.String({ format: 'uri', maxLength: 2048 }), Type.Null()])),
  sso: Type.Optional(Type.Boolean()),
  ai: Type.Optional(Type.Boolean()),
  inviteLinks: Type.Optional(Type.Boolean()),
  mergeRules: Type.Optional(OrganizationMergeRules),
  language: Type.Optional(Type.Union([asEnum(Type.Union(LANGUAGES.map((l) => Type.Literal(l)))), Type.Null()], { description: `${OrganizationLanguageDoc}. null: none (English for search)` })),
});
export type UpdateOrganizationInput = Static<typeof UpdateOrganizationBody>;

export const AgentInstructions = Type.Object({
  object: Type.Literal('agent-instructions'),
  instructions: Document,
  updatedAt: Timestamp,
  updatedBy: Type.String({ description: 'Id of the member who last updated the instructions' }),
  urls: Type.Object({ location: Type.String() }),
});

export const PingResponse = Type.Object({
  serviceVisitorClaims: Type.String({ description: 'Signed JWT (HS256) of the member claims' }),
  gitbookVisitorClaims: Type.String({ description: 'Same JWT, under the name older clients read' }),
});
