import type { ChangeRequest } from '@gitbook/api';
import type { Role, RoleOrGuest } from '../../src/platform/db/schema.ts';
import type { TestServer, TestUser } from './server.ts';

/** Puts an existing user into an organization with a role (as an accepted invite would). */
export async function addMember(t: TestServer, organizationId: string, user: TestUser, role: RoleOrGuest, opts: { lastSeenAt?: Date } = {}) {
  await t.server.services.db
    .insertInto('members')
    .values({ organization_id: organizationId, user_id: user.id, role, joined_at: new Date(), last_seen_at: opts.lastSeenAt ?? null })
    .execute();
}

export const ALL_ROLES = ['admin', 'create', 'review', 'edit', 'comment', 'read', null] as const;
export type Persona = (typeof ALL_ROLES)[number] | 'outsider';
export const PERSONAS: Persona[] = [...ALL_ROLES, 'outsider'];

export function personaName(p: Persona): string {
  return p === null ? 'guest' : p;
}

/** An organization with an owner (admin) and one user per persona: every role, a guest and an outsider. */
export async function orgWithPersonas(t: TestServer) {
  const owner = await t.user('Owner');
  const { data: org } = await owner.api.orgs.createOrganization({ title: 'Personas Inc' });
  const people = new Map<Persona, TestUser>();
  for (const persona of PERSONAS) {
    const user = await t.user(`${personaName(persona)} person`);
    if (persona !== 'outsider') await addMember(t, org.id, user, persona);
    people.set(persona, user);
  }
  return { owner, org, people };
}

/** HTTP status of a call through the official client (200-level on success). */
export async function statusOf(promise: Promise<{ status: number }>): Promise<number> {
  try {
    return (await promise).status;
  } catch (err) {
    const status = (err as { response?: Response }).response?.status;
    if (status === undefined) throw err;
    return status;
  }
}

/** An independent copy of the role order, so tests check the server's policy rather than reuse it. */
const RANK: Record<Role, number> = { read: 1, comment: 2, edit: 3, review: 4, create: 5, admin: 6 };
export const atLeast = (role: RoleOrGuest, min: Role) => !!role && RANK[role] >= RANK[min];

/** A fresh organization administered by a new user. */
export async function newOrg(t: TestServer, title = 'Test Inc') {
  const admin = await t.user('Ann Admin');
  const { data: org } = await admin.api.orgs.createOrganization({ title });
  return { admin, org };
}

/** A new user who is a member of the organization with `role` (null: guest). */
export async function newMember(t: TestServer, organizationId: string, role: RoleOrGuest, name = 'Member'): Promise<TestUser> {
  const user = await t.user(name);
  await addMember(t, organizationId, user, role);
  return user;
}

/** Grants a role on a space or collection to a user or a team, straight into the database. */
export async function grantDirect(
  t: TestServer,
  organizationId: string,
  target: { space: string } | { collection: string },
  principal: { user: string } | { team: string },
  role: Role,
) {
  await t.server.services.db
    .insertInto('content_permissions')
    .values({
      organization_id: organizationId,
      target_type: 'space' in target ? 'space' : 'collection',
      target_id: 'space' in target ? target.space : target.collection,
      principal_type: 'user' in principal ? 'user' : 'team',
      principal_id: 'user' in principal ? principal.user : principal.team,
      role,
      created_at: new Date(),
    })
    .execute();
}

// ---------------------------------------------------------------------------------------------
// Content: spaces, collections, change requests and edits, sites, integrations. All go through
// the official client (responses checked against the official schema) except `editPages`, whose
// `compat=false` answer (the affected pages' ids) is a Folio extension the client does not know.

type Api = TestUser['api'];
/** Who acts: a test user, or anything holding an official client (`{ api }`, e.g. for a server in a child process). */
export type Caller = Pick<TestUser, 'api'>;
/** One change of a content batch (updateChangeRequestContent) as the official client types it. */
export type Change = Parameters<Api['spaces']['updateChangeRequestContent']>[2]['changes'][number];
/** A change as tests write it: the official shape, or Folio's additions (`ref`, `into`, `insert_files`…). */
export type ChangeInput = Change | Record<string, unknown>;
type CreateSpaceBody = Parameters<Api['orgs']['createSpace']>[1];
type CreateCollectionBody = Parameters<Api['orgs']['createCollection']>[1];

/**
 * A space created by `user` in the organization: a title, or the whole createSpace body (default
 * title "Handbook"); `parent`, a collection to create it in.
 */
export async function newSpace(user: Caller, organizationId: string, opts: string | CreateSpaceBody = {}, parent?: string) {
  const body = typeof opts === 'string' ? { title: opts } : { title: 'Handbook', ...opts };
  return (await user.api.orgs.createSpace(organizationId, { ...body, ...(parent ? { parent } : {}) })).data;
}

/**
 * A collection created by `user` in the organization: a title, or the whole createCollection body
 * (default title "Collection"); `parent`, a collection to nest it in.
 */
export async function newCollection(user: Caller, organizationId: string, opts: string | CreateCollectionBody = {}, parent?: string) {
  const body = typeof opts === 'string' ? { title: opts } : { title: 'Collection', ...opts };
  return (await user.api.orgs.createCollection(organizationId, { ...body, ...(parent ? { parent } : {}) })).data;
}

/** The most common start: a new user (`user`, default "Ann") administering a new organization with one space. */
export async function orgWithSpace(t: TestServer, opts: { user?: string; org?: string; space?: string | CreateSpaceBody } = {}) {
  const admin = await t.user(opts.user ?? 'Ann');
  const { data: org } = await admin.api.orgs.createOrganization({ title: opts.org ?? 'Docs' });
  const space = await newSpace(admin, org.id, opts.space);
  return { admin, org, space };
}

/** An open change request on the space. */
export async function openChangeRequest(user: Caller, spaceId: string, subject = 'Edits') {
  return (await user.api.spaces.createChangeRequest(spaceId, { subject })).data;
}

/** Applies a batch of changes to an open change request through the official client; the change request's answer. */
export async function editChangeRequest(user: Caller, spaceId: string, changeRequestId: string, changes: ChangeInput[]): Promise<ChangeRequest> {
  // Without compat=false the answer is the change request (the client types both answers).
  return (await user.api.spaces.updateChangeRequestContent(spaceId, changeRequestId, { changes: changes as Change[] })).data as ChangeRequest;
}

/** The `compat=false` answer of a content batch: the change request, one entry per affected page, the inserted files. */
export interface PagesEdit {
  changeRequest: { id: string; revision: string; [key: string]: unknown };
  /** `created_page` and `updated_page` entries carry the page (`{ object: 'page', id, urls }`); `deleted_page` ones its id. */
  changes: { object: 'created_page' | 'updated_page' | 'deleted_page'; ref?: string; page: any }[];
  insertedFiles: { id: string; name: string; [key: string]: unknown }[];
  /** Ids of the pages the batch created or updated, in the order of `changes`. */
  pageIds: string[];
}

/**
 * Applies a batch of changes with `compat=false`, which also answers the affected pages and the
 * inserted files (so a test learns the ids of the pages it created); asserts a 200.
 */
export async function editPages(t: TestServer, user: TestUser, spaceId: string, changeRequestId: string, changes: ChangeInput[]): Promise<PagesEdit> {
  const res = await t.request('POST', `/v1/spaces/${spaceId}/change-requests/${changeRequestId}/content?compat=false`, { token: user.token, body: { changes } });
  if (res.status !== 200) throw new Error(`editing the content of change request ${changeRequestId} answered ${res.status}: ${JSON.stringify(res.body)}`);
  const body = res.body as Omit<PagesEdit, 'pageIds'>;
  return { ...body, pageIds: body.changes.flatMap((c) => (c.object === 'deleted_page' ? [] : [c.page.id as string])) };
}

/** An open change request holding `changes` (not merged). */
export async function changeRequestWith(user: Caller, spaceId: string, changes: ChangeInput[], opts: { subject?: string } = {}) {
  const cr = await openChangeRequest(user, spaceId, opts.subject ?? 'Edits');
  return editChangeRequest(user, spaceId, cr.id, changes);
}

/** Applies `changes` through a change request of their own and merges it; returns the merged revision's id. */
export async function mergeChanges(user: Caller, spaceId: string, changes: ChangeInput[], opts: { subject?: string } = {}): Promise<string> {
  const cr = await openChangeRequest(user, spaceId, opts.subject ?? 'Publish');
  await editChangeRequest(user, spaceId, cr.id, changes);
  return (await user.api.spaces.mergeChangeRequest(spaceId, cr.id)).data.revision;
}

/**
 * Like `mergeChanges`, answering what `editPages` answers (the ids of the pages created or
 * updated, the inserted files) and the merged revision.
 */
export async function mergePages(t: TestServer, user: TestUser, spaceId: string, changes: ChangeInput[], opts: { subject?: string } = {}) {
  const cr = await openChangeRequest(user, spaceId, opts.subject ?? 'Publish');
  const edit = await editPages(t, user, spaceId, cr.id, changes);
  const { data: merged } = await user.api.spaces.mergeChangeRequest(spaceId, cr.id);
  return { ...edit, revision: merged.revision };
}

/** A page written in markdown, for `pagesChanges`: nested under another page of the batch by its title (`parent`). */
export interface MarkdownPage {
  title: string;
  markdown: string;
  parent?: string;
  description?: string;
}

/** `insert_page` changes for pages written in markdown, in order; each is its own `ref` (its title), so later pages may nest under earlier ones. */
export function pagesChanges(pages: MarkdownPage[]): ChangeInput[] {
  return pages.map((p) => ({
    operation: 'insert_page',
    ref: p.title,
    title: p.title,
    ...(p.parent ? { into: p.parent } : {}),
    ...(p.description ? { description: p.description } : {}),
    document: { markdown: p.markdown },
  }));
}

type Visibility = 'public' | 'unlisted' | 'share-link' | 'visitor-auth';

/** A site of the organization with these spaces; published unless `publish: false`. */
export async function newSite(user: Caller, organizationId: string, opts: { title?: string; visibility?: Visibility; spaces?: string[]; publish?: boolean } = {}) {
  const { data: site } = await user.api.orgs.createSite(organizationId, { title: opts.title ?? 'Handbook Site', ...(opts.visibility ? { visibility: opts.visibility } : {}) } as never);
  for (const spaceId of opts.spaces ?? []) await user.api.orgs.addSpaceToSite(organizationId, site.id, { spaceId });
  if (opts.publish !== false) await user.api.orgs.publishSite(organizationId, site.id, {} as never);
  return site;
}

let integrationCount = 0;

/**
 * An integration published by `user` for the organization (a unique name unless given): `body`
 * is the rest of publishIntegration's body (script, scopes, contentSources…).
 */
export async function newIntegration(user: Caller, organizationId: string, body: Record<string, unknown> = {}, name?: string) {
  const chosen = name ?? `integration-${++integrationCount}-${Date.now().toString(36)}`;
  const { data } = await user.api.integrations.publishIntegration(chosen, { title: 'Test integration', organization: organizationId, ...body } as never);
  return { name: chosen, integration: data };
}

/**
 * An integration published and installed in the organization, and on some spaces (`spaces`) or on
 * all of them (`spaces: 'all'`). `tunnelUrl` puts it in development mode, its events going to that URL.
 */
export async function installedIntegration(
  user: Caller,
  organizationId: string,
  opts: { name?: string; body?: Record<string, unknown>; spaces?: string[] | 'all'; tunnelUrl?: string } = {},
) {
  const { name, integration } = await newIntegration(user, organizationId, opts.body, opts.name);
  if (opts.tunnelUrl) await user.api.integrations.setIntegrationDevelopmentMode(name, { tunnelUrl: opts.tunnelUrl });
  const { data: installation } = await user.api.integrations.installIntegration(name, { organization: organizationId });
  if (opts.spaces === 'all') await user.api.integrations.updateIntegrationInstallation(name, installation.id, { space_selection: 'all' } as never);
  else for (const space of opts.spaces ?? []) await user.api.integrations.installIntegrationOnSpace(name, installation.id, { space });
  return { name, integration, installation };
}
