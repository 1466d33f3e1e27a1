import type { Ctx } from '../platform/context.ts';
import type { OidcProviderRow, RoleOrGuest } from '../platform/db/schema.ts';
import { BadRequestError, NotFoundError } from '../platform/errors.ts';
import type { PageRequest } from '../platform/paging.ts';
import { assertAdmin, type Membership } from '../platform/policy.ts';
import type { Urls } from '../platform/urls.ts';
import { requireMembership } from '../access/organizations.ts';
import { encryptSecret } from '../platform/secrets.ts';
import { presentTeam } from '../teams/presenter.ts';
import { CONTROL_CHARS, findTeam, type TeamView } from '../teams/store.ts';
import * as ssoStore from './store.ts';
import * as store from './oidc-store.ts';

/** OpenID Connect providers of an organization, configured by its admins (like SAML providers). */

export interface OidcProviderInput {
  label?: string | undefined;
  issuer?: string | undefined;
  clientID?: string | undefined;
  clientSecret?: string | null | undefined;
  enabled?: boolean | undefined;
  defaultTeam?: string | undefined;
  defaultRole?: RoleOrGuest | undefined;
}

export interface OidcProviderView {
  row: OidcProviderRow;
  team: TeamView | undefined;
  membership: Membership;
}

/** The browser endpoints of a provider, outside /v1 (redirects and HTML). */
export function oidcServiceUrls(urls: Urls, providerId: string) {
  const base = `${urls.api('').replace(/\/v1$/, '')}/sso/oidc/${encodeURIComponent(providerId)}`;
  return { redirectURI: `${base}/callback`, startURL: `${base}/start` };
}

export function oidcProviderStatus(row: Pick<OidcProviderRow, 'issuer' | 'client_id' | 'enabled'>): 'active' | 'pending' | 'disabled' {
  if (!row.issuer || !row.client_id) return 'pending';
  return row.enabled ? 'active' : 'disabled';
}

const LOOPBACK_HOSTS = new Set(['localhost', '127.0.0.1', '[::1]']);

/**
 * The issuer as Folio will compare it with the `iss` of discovery and of ID tokens (exactly, as
 * OpenID Connect requires; a trailing slash matters). https only, except on a loopback host
 * (a provider on the same machine, as in development and tests).
 */
export function checkIssuer(value: string): string {
  let url: URL;
  try {
    url = new URL(value.trim());
  } catch {
    throw new BadRequestError('issuer: not an absolute URL');
  }
  if (url.protocol !== 'https:' && !(url.protocol === 'http:' && LOOPBACK_HOSTS.has(url.hostname))) {
    throw new BadRequestError('issuer: must be an https URL (http only on a loopback host)');
  }
  if (url.username || url.password) throw new BadRequestError('issuer: must not carry credentials');
  if (url.search || url.hash) throw new BadRequestError('issuer: must have no query or fragment');
  return value.trim();
}

async function adminOf(ctx: Ctx, organizationId: string, action: string): Promise<Membership> {
  const membership = await requireMembership(ctx, organizationId);
  assertAdmin(membership, action);
  return membership;
}

async function validated(ctx: Ctx, organizationId: string, input: OidcProviderInput): Promise<store.OidcProviderFields> {
  const out: store.OidcProviderFields = {};
  if (input.label !== undefined) {
    const label = input.label.trim();
    if (!label || CONTROL_CHARS.test(label)) throw new BadRequestError('label: 1 to 30 visible characters on one line');
    out.label = label;
  }
  if (input.issuer !== undefined) out.issuer = checkIssuer(input.issuer);
  if (input.clientID !== undefined) {
    if (CONTROL_CHARS.test(input.clientID) || !input.clientID.trim()) throw new BadRequestError('clientID: the client id, on one line');
    out.client_id = input.clientID.trim();
  }
  if (input.clientSecret !== undefined) {
    out.client_secret_sealed = input.clientSecret === null ? null : await encryptSecret(ctx.db, ctx.config, input.clientSecret);
  }
  if (input.enabled !== undefined) out.enabled = input.enabled;
  if (input.defaultTeam !== undefined) {
    if (!(await ssoStore.teamExists(ctx.db, organizationId, input.defaultTeam))) {
      throw new BadRequestError(`defaultTeam: ${input.defaultTeam} is not a team of this organization`);
    }
    out.default_team = input.defaultTeam;
  }
  if (input.defaultRole !== undefined) out.default_role = input.defaultRole;
  return out;
}

async function view(ctx: Ctx, row: OidcProviderRow, membership: Membership): Promise<OidcProviderView> {
  const team = row.default_team ? await findTeam(ctx.db, row.organization_id, row.default_team, ctx.user.id) : undefined;
  return { row, team, membership };
}

export function presentOidcProvider(urls: Urls, { row, team, membership }: OidcProviderView) {
  return {
    object: 'oidc-provider' as const,
    id: row.id,
    label: row.label,
    issuer: row.issuer ?? '',
    clientID: row.client_id ?? '',
    clientSecretSet: row.client_secret_sealed !== null,
    enabled: row.enabled,
    ...(team ? { defaultTeam: presentTeam(team, membership) } : {}),
    defaultRole: row.default_role,
    createdAt: row.created_at.toISOString(),
    status: oidcProviderStatus(row),
    service: oidcServiceUrls(urls, row.id),
    urls: { location: urls.api(`/orgs/${encodeURIComponent(row.organization_id)}/oidc/${encodeURIComponent(row.id)}`) },
  };
}

export async function createOidcProvider(ctx: Ctx, organizationId: string, input: OidcProviderInput & { label: string }): Promise<OidcProviderView> {
  const membership = await adminOf(ctx, organizationId, 'configure single sign-on');
  const fields = await validated(ctx, organizationId, input);
  const row = await store.insertProvider(ctx.db, organizationId, {
    ...fields,
    label: fields.label!,
    // As for SAML: members who arrive through SSO read the organization's content unless told otherwise.
    default_role: fields.default_role !== undefined ? fields.default_role : 'read',
  });
  return view(ctx, row, membership);
}

export async function updateOidcProvider(ctx: Ctx, organizationId: string, providerId: string, input: OidcProviderInput): Promise<OidcProviderView> {
  const membership = await adminOf(ctx, organizationId, 'configure single sign-on');
  if (!(await store.findProvider(ctx.db, organizationId, providerId))) throw new NotFoundError('OIDC provider');
  const fields = await validated(ctx, organizationId, input);
  const row = await store.updateProvider(ctx.db, organizationId, providerId, fields);
  if (!row) throw new NotFoundError('OIDC provider');
  return view(ctx, row, membership);
}

export async function getOidcProvider(ctx: Ctx, organizationId: string, providerId: string): Promise<OidcProviderView> {
  const membership = await adminOf(ctx, organizationId, 'see single sign-on settings');
  const row = await store.findProvider(ctx.db, organizationId, providerId);
  if (!row) throw new NotFoundError('OIDC provider');
  return view(ctx, row, membership);
}

export async function listOidcProviders(ctx: Ctx, organizationId: string, page: PageRequest) {
  const membership = await adminOf(ctx, organizationId, 'see single sign-on settings');
  const result = await store.listProviders(ctx.db, organizationId, page);
  const items = [];
  for (const row of result.items as OidcProviderRow[]) items.push(await view(ctx, row, membership));
  return { ...result, items };
}

/** Deletes a provider with its pending sign-ins and identities. Deleting one that is gone is a no-op. */
export async function deleteOidcProvider(ctx: Ctx, organizationId: string, providerId: string): Promise<void> {
  await adminOf(ctx, organizationId, 'configure single sign-on');
  await store.deleteProvider(ctx.db, organizationId, providerId);
}

/** The active OIDC providers of an organization for a login page: label and start URL only. */
export async function listOidcLogins(ctx: Pick<Ctx, 'db' | 'urls'>, organizationId: string) {
  const rows = await store.allProviders(ctx.db, organizationId);
  return rows.filter((r) => oidcProviderStatus(r) === 'active').map((r) => ({ id: r.id, label: r.label, startURL: oidcServiceUrls(ctx.urls, r.id).startURL }));
}
