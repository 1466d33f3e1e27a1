import type { Static } from '@sinclair/typebox';
import { memberRole } from '../access/store.ts';
import { imageDimensions } from '../content/files.ts';
import type { Ctx } from '../platform/context.ts';
import { json, type Db } from '../platform/db/database.ts';
import type { IntegrationRow, OrganizationRow } from '../platform/db/schema.ts';
import { BadRequestError, ConflictError, ForbiddenError, isUniqueViolation, NotFoundError } from '../platform/errors.ts';
import { newId } from '../platform/ids.ts';
import type { PageRequest } from '../platform/paging.ts';
import { atLeast, integrationPermissions, type Membership } from '../platform/policy.ts';
import { checkConfigurationSchema } from './configuration.ts';
import type { PublishBody } from './schemas.ts';
import { encryptSecrets } from './secrets.ts';
import * as store from './store.ts';

/**
 * The catalogue of integrations: who may see an integration, publishing and unpublishing it, and
 * listing what the caller (or an organization) may see.
 */

export const MAX_ICON_BYTES = 512 * 1024;
export const MAX_PREVIEW_BYTES = 1024 * 1024;
export const MAX_IMAGE_SIDE = 4096;
export const MAX_SCRIPT_BYTES = 1024 * 1024;

type Publish = Static<typeof PublishBody>;

export async function membershipOf(db: Db, organizationId: string, userId: string): Promise<Membership | undefined> {
  const role = await memberRole(db, organizationId, userId);
  return role === undefined ? undefined : { role, ownsTeam: false };
}

/** An organization by id or subdomain (hostname) that the caller is a member of; 404 otherwise. */
export async function resolveOrganization(ctx: Ctx, idOrHostname: string): Promise<{ org: OrganizationRow; membership: Membership }> {
  const org = await store.findOrganizationByIdOrHostname(ctx.db, idOrHostname);
  const membership = org && !ctx.integration ? await membershipOf(ctx.db, org.id, ctx.user.id) : undefined;
  if (!org || !membership) throw new NotFoundError('Organization');
  return { org, membership };
}

export async function ownerOf(db: Db, row: IntegrationRow): Promise<OrganizationRow> {
  return store.owningOrganization(db, row.organization_id);
}

/** An integration as the caller sees it: with its owner and the caller's membership there. */
export interface Visible {
  row: IntegrationRow;
  owner: OrganizationRow;
  membership: Membership | undefined;
}

/** The caller's membership in the integration's organization, and whether the caller may see it (policy: integrationPermissions). */
async function sightOf(ctx: Ctx, row: IntegrationRow): Promise<{ membership: Membership | undefined; visible: boolean }> {
  const membership = ctx.integration ? undefined : await membershipOf(ctx.db, row.organization_id, ctx.user.id);
  const own = ctx.integration?.integrationId === row.id;
  return { membership, visible: own || integrationPermissions(membership, row.visibility).view };
}

/**
 * Loads an integration the caller may see: public and unlisted ones for everyone, private ones
 * for members of the owning organization with a role (not guests), and the integration's own tokens.
 */
export async function loadIntegration(ctx: Ctx, name: string): Promise<Visible> {
  const row = await store.findIntegrationByName(ctx.db, name);
  if (!row) throw new NotFoundError('Integration');
  const { membership, visible } = await sightOf(ctx, row);
  if (!visible) throw new NotFoundError('Integration');
  return { row, owner: await ownerOf(ctx.db, row), membership };
}

/** The integration, for its owners: admins of the owning organization, or the integration's own token. */
export async function requireOwner(ctx: Ctx, name: string, action: string): Promise<Visible> {
  const visible = await loadIntegration(ctx, name);
  if (ctx.integration?.integrationId === visible.row.id) return visible;
  if (!visible.membership) throw new NotFoundError('Integration');
  if (!atLeast(visible.membership.role, 'admin')) throw new ForbiddenError(`Only admins of the organization that publishes the integration can ${action}`);
  return visible;
}

function decodeImage(base64: string, what: string, maxBytes: number): string {
  const clean = base64.replace(/^data:image\/[a-z+]+;base64,/, '').replace(/\s+/g, '');
  if (!/^[A-Za-z0-9+/]*={0,2}$/.test(clean)) throw new BadRequestError(`${what}: must be a base64 image`);
  const data = Buffer.from(clean, 'base64');
  if (data.byteLength > maxBytes) throw new BadRequestError(`${what}: ${data.byteLength} bytes, at most ${maxBytes} allowed`);
  const size = imageDimensions(data);
  if (!size) throw new BadRequestError(`${what}: must be a PNG, JPEG or GIF image`);
  if (size.width > MAX_IMAGE_SIDE || size.height > MAX_IMAGE_SIDE) throw new BadRequestError(`${what}: ${size.width}x${size.height}, at most ${MAX_IMAGE_SIDE} pixels a side`);
  return data.toString('base64');
}

/** Checks what publishing needs beyond the body schema; returns the columns to write. */
function publishColumns(ctx: Ctx, body: Publish) {
  const columns: Record<string, unknown> = {};
  if (body.runtime !== undefined) columns.runtime = body.runtime;
  if (body.title !== undefined) columns.title = body.title;
  if (body.description !== undefined) columns.description = body.description;
  if (body.summary !== undefined) columns.summary = body.summary;
  if (body.visibility !== undefined) columns.visibility = body.visibility;
  if (body.target !== undefined) columns.target = body.target;
  if (body.scopes !== undefined) columns.scopes = json(body.scopes);
  if (body.categories !== undefined) columns.categories = json(body.categories);
  if (body.blocks !== undefined) {
    const ids = body.blocks.map((b) => b.id);
    if (new Set(ids).size !== ids.length) throw new BadRequestError('blocks: each block needs its own id');
    columns.blocks = json(body.blocks);
  }
  if (body.contentSources !== undefined) {
    const ids = body.contentSources.map((b) => b.id);
    if (new Set(ids).size !== ids.length) throw new BadRequestError('contentSources: each content source needs its own id');
    columns.content_sources = json(body.contentSources);
  }
  if (body.externalLinks !== undefined) columns.external_links = json(body.externalLinks);
  if (body.configurations !== undefined) {
    for (const [level, schema] of Object.entries(body.configurations)) if (schema) checkConfigurationSchema(schema, `configurations.${level}`);
    columns.configurations = json(body.configurations);
  }
  if (body.icon !== undefined) columns.icon = decodeImage(body.icon, 'icon', MAX_ICON_BYTES);
  if (body.previewImages !== undefined) columns.preview_images = json(body.previewImages.map((img, i) => decodeImage(img, `previewImages[${i}]`, MAX_PREVIEW_BYTES)));
  if (body.script !== undefined) {
    if (Buffer.byteLength(body.script) > MAX_SCRIPT_BYTES) throw new BadRequestError(`script: at most ${MAX_SCRIPT_BYTES} bytes`);
    columns.script = body.script;
  }
  if (body.secrets !== undefined) columns.secrets_encrypted = encryptSecrets(ctx.signingKey, body.secrets);
  if (body.contentSecurityPolicy !== undefined) columns.content_security_policy = json(body.contentSecurityPolicy);
  return columns;
}

/**
 * Publishes an integration: creates it (owned by `organization`) or updates it with a new
 * version. Only admins of the owning organization publish.
 */
export async function publishIntegration(ctx: Ctx, name: string, body: Publish): Promise<Visible> {
  const columns = publishColumns(ctx, body);
  const existing = await store.findIntegrationByName(ctx.db, name);
  if (existing) {
    // Someone who cannot see the integration learns only that its name is taken, not whose it is
    // (nor whether it is public or private): a 404 or 403 here would tell them more.
    const sight = await sightOf(ctx, existing);
    if (ctx.integration?.integrationId !== existing.id && !(sight.visible && sight.membership)) throw nameNotAvailable(name);
    const visible = await requireOwner(ctx, name, 'publish a new version of it');
    if (body.organization !== undefined) {
      const { org } = await resolveOrganization(ctx, body.organization);
      if (org.id !== existing.organization_id) throw new BadRequestError('organization: an integration stays with the organization that first published it');
    }
    const row = await store.updateIntegration(ctx.db, existing.organization_id, existing.id, columns);
    return { ...visible, row };
  }
  if (!body.organization) throw new BadRequestError('organization: required when publishing a new integration (id or subdomain of the organization)');
  const { org, membership } = await resolveOrganization(ctx, body.organization);
  if (!atLeast(membership.role, 'admin')) throw new ForbiddenError('Only organization admins can publish integrations');
  if (body.title === undefined) throw new BadRequestError('title: required when publishing a new integration');
  const title = body.title;
  try {
    const row = await ctx.db.transaction().execute((trx) => store.insertIntegration(trx, org.id, { id: newId(), name, title, columns }));
    return { row, owner: org, membership };
  } catch (err) {
    if (isUniqueViolation(err)) throw nameNotAvailable(name);
    throw err;
  }
}

function nameNotAvailable(name: string): ConflictError {
  return new ConflictError(`name not available: an integration named "${name}" already exists; publish under another name`);
}

export async function unpublishIntegration(ctx: Ctx, name: string): Promise<void> {
  const { row } = await requireOwner(ctx, name, 'unpublish it');
  if (ctx.integration) throw new ForbiddenError('An integration token cannot unpublish its integration');
  // Its user stays: it is the author of what the integration wrote (comments, changes).
  await store.deleteIntegration(ctx.db, row.organization_id, row.id);
}

/**
 * Integrations the caller may list: public ones, and those of the caller's organizations as
 * integrationPermissions has it (a guest's organization shows its unlisted ones, not its private
 * ones). For an organization (`availableTo`): what is available to it, every public integration
 * plus those it owns or trusts by having installed them.
 */
export async function listIntegrations(ctx: Ctx, filters: store.CatalogueFilters, page: PageRequest, opts: { availableTo?: string } = {}) {
  const reader: store.CatalogueReader = opts.availableTo ? { organizationId: opts.availableTo } : { userId: ctx.user.id };
  const result = await store.listCatalogue(ctx.db, reader, filters, page);
  const owners = new Map<string, OrganizationRow>();
  const memberships = new Map<string, Membership | undefined>();
  for (const row of result.items) {
    if (!owners.has(row.organization_id)) {
      owners.set(row.organization_id, await ownerOf(ctx.db, row));
      memberships.set(row.organization_id, ctx.integration ? undefined : await membershipOf(ctx.db, row.organization_id, ctx.user.id));
    }
  }
  return { ...result, items: result.items.map((row) => ({ row, owner: owners.get(row.organization_id)!, membership: memberships.get(row.organization_id) })) };
}

export async function listOrganizationIntegrations(ctx: Ctx, organizationId: string, filters: store.CatalogueFilters, page: PageRequest) {
  await requireMemberWithRole(ctx, organizationId, 'list the integrations of the organization');
  return listIntegrations(ctx, filters, page, { availableTo: organizationId });
}

export async function requireMemberWithRole(ctx: Ctx, organizationId: string, action: string): Promise<Membership> {
  const membership = ctx.integration ? undefined : await membershipOf(ctx.db, organizationId, ctx.user.id);
  if (!membership) throw new NotFoundError('Organization');
  if (membership.role === null) throw new ForbiddenError(`Guests cannot ${action}`);
  return membership;
}

