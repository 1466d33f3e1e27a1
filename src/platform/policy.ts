import type { Role, RoleOrGuest, TeamMemberRole } from './db/schema.ts';
import { ForbiddenError } from './errors.ts';

/**
 * The one place that decides who may do what. Services call the `assert*` functions to enforce;
 * presenters call the `*Permissions` functions to advertise. Both read the same rules, so what an
 * API response promises is exactly what the server allows.
 */

export const ROLES: readonly Role[] = ['admin', 'create', 'review', 'edit', 'comment', 'read'];

const RANK: Record<Role, number> = { read: 1, comment: 2, edit: 3, review: 4, create: 5, admin: 6 };

/** True when `role` is at least as strong as `min`. Guests (null) hold no organization role. */
export function atLeast(role: RoleOrGuest | undefined, min: Role): boolean {
  return !!role && RANK[role] >= RANK[min];
}

/** The stronger of two roles (null when both are null). */
export function strongest(a: RoleOrGuest, b: RoleOrGuest): RoleOrGuest {
  if (!a) return b;
  if (!b) return a;
  return RANK[a] >= RANK[b] ? a : b;
}

/** What the caller is in an organization; `undefined` when not a member at all. */
export interface Membership {
  role: RoleOrGuest;
  /** The caller owns at least one team of the organization. */
  ownsTeam: boolean;
}

export function isMember(m: Membership | undefined): m is Membership {
  return m !== undefined;
}

/** Members with a role (not guests) can see the organization's people and teams. */
export function canListPeople(m: Membership | undefined): boolean {
  return !!m && m.role !== null;
}

export function organizationPermissions(m: Membership | undefined) {
  const admin = atLeast(m?.role, 'admin');
  const insider = canListPeople(m);
  return {
    view: !!m,
    access: !!m,
    admin,
    ownTeam: !!m?.ownsTeam,
    createContent: atLeast(m?.role, 'create'),
    createOpenAPISpec: atLeast(m?.role, 'create'),
    ingestConversations: admin,
    viewBilling: admin,
    listMembers: insider,
    listTeams: insider,
    listIntegrations: insider,
    listInstallations: insider,
    installIntegration: admin,
  };
}

export function teamPermissions(m: Membership | undefined, teamRole: TeamMemberRole | undefined) {
  return {
    view: canListPeople(m),
    admin: canManageTeamMembers(m, teamRole),
  };
}

/** Team owners manage their team's membership; only organization admins create, rename or delete teams. */
export function canManageTeamMembers(m: Membership | undefined, teamRole: TeamMemberRole | undefined): boolean {
  return atLeast(m?.role, 'admin') || (!!m && teamRole === 'owner');
}

export function assertCanManageTeamMembers(m: Membership, teamRole: TeamMemberRole | undefined): void {
  if (!canManageTeamMembers(m, teamRole)) {
    throw new ForbiddenError('Only organization admins and owners of the team can change its members');
  }
}

export function assertAdmin(m: Membership, action: string): void {
  if (!atLeast(m.role, 'admin')) {
    throw new ForbiddenError(`Only organization admins can ${action}`);
  }
}

/**
 * Who may upload a file to the organization's storage (generateStorageUploadURL): a font of a
 * site's customization is the admins' business, a file to import needs the create role (an import
 * creates content), a file of the organization the edit role. Guests upload nothing.
 */
export function assertCanUpload(m: Membership, kind: 'customization_font' | 'import_file' | 'organization_file'): void {
  const min: Role = kind === 'customization_font' ? 'admin' : kind === 'import_file' ? 'create' : 'edit';
  if (!atLeast(m.role, min)) throw new ForbiddenError(`You need the ${min} role in the organization to upload a file of kind ${kind}`);
}

export function assertCanListPeople(m: Membership, what: string): void {
  if (!canListPeople(m)) {
    throw new ForbiddenError(`Guests cannot list ${what} of the organization`);
  }
}

/** An invite is redundant for someone who already has its role (or a stronger one) in the organization. */
export function inviteIsRedundant(inviteRole: RoleOrGuest, membership: Membership | undefined): boolean {
  if (!membership) return false;
  return inviteRole === null || atLeast(membership.role, inviteRole);
}

/** What an effective role on a space allows (null: no access). */
export function spacePermissions(role: RoleOrGuest) {
  const admin = atLeast(role, 'admin');
  return {
    view: atLeast(role, 'read'),
    access: atLeast(role, 'read'),
    admin,
    viewInviteLinks: admin,
    edit: atLeast(role, 'edit'),
    triggerGitSync: atLeast(role, 'edit'),
    comment: atLeast(role, 'comment'),
    merge: atLeast(role, 'review'),
    review: atLeast(role, 'review'),
    installIntegration: admin,
  };
}

/** What an effective role on a collection allows (null: no access). */
export function collectionPermissions(role: RoleOrGuest) {
  const admin = atLeast(role, 'admin');
  return {
    view: atLeast(role, 'read'),
    admin,
    viewInviteLinks: admin,
    create: atLeast(role, 'create'),
  };
}

/** Refuses an action on content unless the effective role is at least `min`. */
export function assertContentRole(role: RoleOrGuest, min: Role, action: string): void {
  if (!atLeast(role, min)) {
    throw new ForbiddenError(`You need the ${min} role on this content to ${action}`);
  }
}

/**
 * OpenAPI specs belong to the organization: members with a role see them (guests only public
 * ones), members with the create role or stronger add, change and delete them.
 */
export function openAPISpecPermissions(m: Membership | undefined, visibility: 'private' | 'public') {
  return {
    view: canListPeople(m) || (!!m && visibility === 'public'),
    edit: atLeast(m?.role, 'create'),
  };
}

export function assertCanEditOpenAPISpecs(m: Membership): void {
  if (!atLeast(m.role, 'create')) {
    throw new ForbiddenError('You need the create role in the organization to add, change or delete OpenAPI specs');
  }
}

/**
 * Who sees an integration: public and unlisted ones everyone (unlisted ones by name); a private
 * one only the members of its organization with a role. Guests see what is shared with them, and
 * a private integration is shared with no one outside its organization's members (404 for them).
 */
export function integrationPermissions(m: Membership | undefined, visibility: 'public' | 'unlisted' | 'private') {
  return {
    view: visibility !== 'private' || canListPeople(m),
    admin: atLeast(m?.role, 'admin'),
  };
}

/**
 * What an organization role allows on the organization's docs sites: readers read, members with
 * edit edit content, members with create shape the structure (site spaces, sections, redirects,
 * customization), admins manage settings, visibility, share links, visitor auth and publishing.
 */
export function sitePermissions(orgRole: RoleOrGuest | undefined) {
  const admin = atLeast(orgRole, 'admin');
  return {
    view: atLeast(orgRole, 'read'),
    access: atLeast(orgRole, 'read'),
    edit: atLeast(orgRole, 'edit'),
    create: atLeast(orgRole, 'create'),
    admin,
    installIntegration: admin,
    viewAdaptiveSchema: atLeast(orgRole, 'create'),
    editAdaptiveSchema: admin,
  };
}

export function assertSiteRole(orgRole: RoleOrGuest | undefined, min: Role, action: string): void {
  if (!atLeast(orgRole, min)) {
    throw new ForbiddenError(`You need the ${min} role in the organization to ${action}`);
  }
}

/** Conversations, their issues and clusters hold customers' words: members with a role read them (not guests). */
export function assertCanReadConversations(m: Membership): void {
  if (!canListPeople(m)) throw new ForbiddenError('Guests cannot read the conversations of the organization');
}

/** Ingesting conversations and muting clusters: what `permissions.ingestConversations` of an organization advertises. */
export function assertCanIngestConversations(m: Membership, action: string): void {
  if (!organizationPermissions(m).ingestConversations) throw new ForbiddenError(`Only organization admins can ${action}`);
}
