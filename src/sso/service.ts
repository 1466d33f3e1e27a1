import type { Ctx } from '../platform/context.ts';
import type { RoleOrGuest, SamlProviderRow } from '../platform/db/schema.ts';
import { BadRequestError, NotFoundError } from '../platform/errors.ts';
import type { PageRequest } from '../platform/paging.ts';
import { assertAdmin, type Membership } from '../platform/policy.ts';
import { requireMembership } from '../access/organizations.ts';
import { findTeam, type TeamView } from '../teams/store.ts';
import { CONTROL_CHARS } from '../teams/store.ts';
import { normalizeCertificate } from './certificate.ts';
import { serviceUrls, providerStatus } from './urls.ts';
import * as store from './store.ts';
import { listOidcLogins } from './oidc-service.ts';

export interface ProviderInput {
  label?: string | undefined;
  entityID?: string | undefined;
  certificate?: string | undefined;
  ssoURL?: string | undefined;
  defaultTeam?: string | undefined;
  defaultRole?: RoleOrGuest | undefined;
}

export interface ProviderView {
  row: SamlProviderRow;
  team: TeamView | undefined;
  membership: Membership;
}

async function adminOf(ctx: Ctx, organizationId: string, action: string): Promise<Membership> {
  const membership = await requireMembership(ctx, organizationId);
  assertAdmin(membership, action);
  return membership;
}

function checkSsoUrl(value: string): string {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw new BadRequestError('ssoURL: not an absolute URL');
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') throw new BadRequestError('ssoURL: must be an http or https URL');
  if (url.username || url.password) throw new BadRequestError('ssoURL: must not carry credentials');
  return url.toString();
}

/** Checks and normalizes the fields given; the default team must be a team of the same organization. */
async function validated(ctx: Ctx, organizationId: string, input: ProviderInput) {
  const out: Partial<Pick<SamlProviderRow, 'label' | 'entity_id' | 'certificate' | 'sso_url' | 'default_team' | 'default_role'>> = {};
  if (input.label !== undefined) {
    const label = input.label.trim();
    if (!label || CONTROL_CHARS.test(label)) throw new BadRequestError('label: 1 to 30 visible characters on one line');
    out.label = label;
  }
  if (input.entityID !== undefined) {
    const entityId = input.entityID.trim();
    if (!entityId || CONTROL_CHARS.test(entityId)) throw new BadRequestError('entityID: must be the identity provider\'s entity id, on one line');
    out.entity_id = entityId;
  }
  if (input.certificate !== undefined) out.certificate = normalizeCertificate(input.certificate);
  if (input.ssoURL !== undefined) out.sso_url = checkSsoUrl(input.ssoURL);
  if (input.defaultTeam !== undefined) {
    if (!(await store.teamExists(ctx.db, organizationId, input.defaultTeam))) {
      throw new BadRequestError(`defaultTeam: ${input.defaultTeam} is not a team of this organization`);
    }
    out.default_team = input.defaultTeam;
  }
  if (input.defaultRole !== undefined) out.default_role = input.defaultRole;
  return out;
}

async function view(ctx: Ctx, row: SamlProviderRow, membership: Membership): Promise<ProviderView> {
  const team = row.default_team ? await findTeam(ctx.db, row.organization_id, row.default_team, ctx.user.id) : undefined;
  return { row, team, membership };
}

export async function createProvider(ctx: Ctx, organizationId: string, input: ProviderInput & { label: string }): Promise<ProviderView> {
  const membership = await adminOf(ctx, organizationId, 'configure single sign-on');
  const fields = await validated(ctx, organizationId, input);
  const row = await store.insertProvider(ctx.db, organizationId, {
    ...fields,
    label: fields.label!,
    // Members who arrive through SSO read the organization's content unless told otherwise.
    default_role: fields.default_role !== undefined ? fields.default_role : 'read',
  });
  return view(ctx, row, membership);
}

export async function updateProvider(ctx: Ctx, organizationId: string, providerId: string, input: ProviderInput): Promise<ProviderView> {
  const membership = await adminOf(ctx, organizationId, 'configure single sign-on');
  if (!(await store.findProvider(ctx.db, organizationId, providerId))) throw new NotFoundError('SAML provider');
  const fields = await validated(ctx, organizationId, input);
  const row = await store.updateProvider(ctx.db, organizationId, providerId, fields);
  if (!row) throw new NotFoundError('SAML provider');
  return view(ctx, row, membership);
}

export async function getProvider(ctx: Ctx, organizationId: string, providerId: string): Promise<ProviderView> {
  const membership = await adminOf(ctx, organizationId, 'see single sign-on settings');
  const row = await store.findProvider(ctx.db, organizationId, providerId);
  if (!row) throw new NotFoundError('SAML provider');
  return view(ctx, row, membership);
}

export async function listProviders(ctx: Ctx, organizationId: string, page: PageRequest) {
  const membership = await adminOf(ctx, organizationId, 'see single sign-on settings');
  const result = await store.listProviders(ctx.db, organizationId, page);
  const items = [];
  for (const row of result.items as SamlProviderRow[]) items.push(await view(ctx, row, membership));
  return { ...result, items };
}

/** Deletes a provider with its pending requests and identities. Deleting one that is gone is a no-op. */
export async function deleteProvider(ctx: Ctx, organizationId: string, providerId: string): Promise<void> {
  await adminOf(ctx, organizationId, 'configure single sign-on');
  await store.deleteProvider(ctx.db, organizationId, providerId);
}

/**
 * The active providers (SAML, then OpenID Connect) of an organization for a login page: label and start URL only. Anyone may
 * ask (a login page is shown before signing in); an unknown organization has none.
 */
export async function listLogins(ctx: Pick<Ctx, 'db' | 'urls'>, organizationId: string) {
  const rows = await store.allProviders(ctx.db, organizationId);
  const saml = rows.filter((r) => providerStatus(r) === 'active').map((r) => ({ id: r.id, label: r.label, startURL: serviceUrls(ctx.urls, r.id).startURL }));
  // OpenID Connect providers (enabled and complete) follow the SAML ones.
  return [...saml, ...(await listOidcLogins(ctx, organizationId))];
}
