import type { Static } from '@sinclair/typebox';
import { memberRole } from '../access/effective.ts';
import { sql } from 'kysely';
import { imageDimensions } from '../content/files.ts';
import type { Ctx } from '../platform/context.ts';
import { json, type Db } from '../platform/db/database.ts';
import type { InstallationRow, IntegrationRow, OrganizationRow, SiteInstallationRow, SpaceInstallationRow } from '../platform/db/schema.ts';
import { requireSite } from '../sites/access.ts';
import { findSite } from '../sites/store.ts';
import { BadRequestError, ConflictError, ForbiddenError, isUniqueViolation, NotFoundError } from '../platform/errors.ts';
import { newId } from '../platform/ids.ts';
import { paginate, type PageRequest } from '../platform/paging.ts';
import { atLeast, integrationPermissions, type Membership } from '../platform/policy.ts';
import { loadSpace, requireSpaceRole } from '../spaces/access.ts';
import { checkConfiguration, checkConfigurationSchema } from './configuration.ts';
import { issueIntegrationToken } from './grants.ts';
import { emitEvents } from '../events/outbox.ts';
import { siteIntegrations, siteScripts } from './site-scripts.ts';
import type { IntegrationListQuery, PublishBody } from './schemas.ts';
import { encryptSecrets } from './secrets.ts';

export const MAX_ICON_BYTES = 512 * 1024;
export const MAX_PREVIEW_BYTES = 1024 * 1024;
export const MAX_IMAGE_SIDE = 4096;
export const MAX_SCRIPT_BYTES = 1024 * 1024;

type Publish = Static<typeof PublishBody>;
type ListFilters = { [K in keyof typeof IntegrationListQuery]?: Static<(typeof IntegrationListQuery)[K]> };

async function membershipOf(db: Db, organizationId: string, userId: string): Promise<Membership | undefined> {
  const role = await memberRole(db, organizationId, userId);
  return role === undefined ? undefined : { role, ownsTeam: false };
}

/** An organization by id or subdomain (hostname) that the caller is a member of; 404 otherwise. */
async function resolveOrganization(ctx: Ctx, idOrHostname: string): Promise<{ org: OrganizationRow; membership: Membership }> {
  const org = await ctx.db
    .selectFrom('organizations')
    .selectAll()
    .where((eb) => eb.or([eb('id', '=', idOrHostname), eb('hostname', '=', idOrHostname)]))
    .orderBy(sql`id = ${idOrHostname}`, 'desc')
    .executeTakeFirst();
  const membership = org && !ctx.integration ? await membershipOf(ctx.db, org.id, ctx.user.id) : undefined;
  if (!org || !membership) throw new NotFoundError('Organization');
  return { org, membership };
}

async function ownerOf(db: Db, row: IntegrationRow): Promise<OrganizationRow> {
  return db.selectFrom('organizations').selectAll().where('id', '=', row.organization_id).executeTakeFirstOrThrow();
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
  const row = await ctx.db.selectFrom('integrations').selectAll().where('name', '=', name).executeTakeFirst();
  if (!row) throw new NotFoundError('Integration');
  const { membership, visible } = await sightOf(ctx, row);
  if (!visible) throw new NotFoundError('Integration');
  return { row, owner: await ownerOf(ctx.db, row), membership };
}

/** The integration, for its owners: admins of the owning organization, or the integration's own token. */
async function requireOwner(ctx: Ctx, name: string, action: string): Promise<Visible> {
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
  const existing = await ctx.db.selectFrom('integrations').selectAll().where('name', '=', name).executeTakeFirst();
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
    const row = await ctx.db
      .updateTable('integrations')
      .set({ ...columns, version: sql`version + 1`, updated_at: new Date() } as never)
      .where('id', '=', existing.id)
      .returningAll()
      .executeTakeFirstOrThrow();
    return { ...visible, row };
  }
  if (!body.organization) throw new BadRequestError('organization: required when publishing a new integration (id or subdomain of the organization)');
  const { org, membership } = await resolveOrganization(ctx, body.organization);
  if (!atLeast(membership.role, 'admin')) throw new ForbiddenError('Only organization admins can publish integrations');
  if (body.title === undefined) throw new BadRequestError('title: required when publishing a new integration');
  const now = new Date();
  const id = newId();
  try {
    const row = await ctx.db.transaction().execute(async (trx) => {
      const botId = newId();
      await trx
        .insertInto('users')
        .values({ id: botId, email: `integration-${id.toLowerCase()}@integrations.folio.invalid`, display_name: body.title!, photo_url: null, created_at: now })
        .execute();
      return trx
        .insertInto('integrations')
        .values({ id, name, organization_id: org.id, bot_user_id: botId, title: body.title!, created_at: now, updated_at: now, icon: null, script: null, secrets_encrypted: null, content_security_policy: null, dev_tunnel_url: null, ...columns } as never)
        .returningAll()
        .executeTakeFirstOrThrow();
    });
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
  await ctx.db.deleteFrom('integrations').where('id', '=', row.id).execute();
}

/**
 * Integrations the caller may list: public ones, and those of the caller's organizations as
 * integrationPermissions has it (a guest's organization shows its unlisted ones, not its private
 * ones). For an organization (`availableTo`): what is available to it, every public integration
 * plus those it owns or trusts by having installed them.
 */
export async function listIntegrations(ctx: Ctx, filters: ListFilters, page: PageRequest, opts: { availableTo?: string } = {}) {
  let base = ctx.db.selectFrom('integrations').selectAll();
  if (opts.availableTo) {
    const organizationId = opts.availableTo;
    base = base.where((eb) =>
      eb.or([
        eb('visibility', '=', 'public'),
        eb('organization_id', '=', organizationId),
        eb('id', 'in', ctx.db.selectFrom('integration_installations').select('integration_id').where('organization_id', '=', organizationId)),
      ]),
    );
  } else {
    const memberships = ctx.db.selectFrom('members').select('organization_id').where('user_id', '=', ctx.user.id).where('disabled', '=', false);
    base = base.where((eb) =>
      eb.or([
        eb('visibility', '=', 'public'),
        eb('organization_id', 'in', memberships.where('role', 'is not', null)),
        eb.and([eb('visibility', '=', 'unlisted'), eb('organization_id', 'in', memberships)]),
      ]),
    );
  }
  if (filters.search) {
    const like = `%${filters.search.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
    base = base.where((eb) => eb.or([eb('name', 'ilike', like), eb('title', 'ilike', like), eb('description', 'ilike', like)]));
  }
  if (filters.category) base = base.where(sql<boolean>`categories ? ${filters.category}`);
  if (filters.scope) base = base.where(sql<boolean>`scopes ? ${filters.scope}`);
  if (filters.target) base = base.where((eb) => eb.or([eb('target', '=', filters.target!), eb('target', '=', 'all')]));
  if (filters.blocks !== undefined) base = base.where(sql<boolean>`(jsonb_array_length(blocks) > 0) = ${filters.blocks}`);
  if (filters.contentSources !== undefined) base = base.where(sql<boolean>`(jsonb_array_length(content_sources) > 0) = ${filters.contentSources}`);
  if (filters.blockDomain) {
    // A block unfurls URLs of a domain when one of its urlUnfurl entries names that host.
    const domain = filters.blockDomain.toLowerCase();
    base = base.where(sql<boolean>`EXISTS (SELECT 1 FROM jsonb_array_elements(blocks) b, jsonb_array_elements_text(coalesce(b->'urlUnfurl', '[]'::jsonb)) u
      WHERE lower(u) = ${domain} OR lower(u) LIKE ${`%://${domain}%`} OR lower(u) LIKE ${`%.${domain}%`})`);
  }
  if (filters.owner) {
    base = base.where('organization_id', 'in', ctx.db.selectFrom('organizations').select('id').where((eb) => eb.or([eb('id', '=', filters.owner!), eb('hostname', '=', filters.owner!)])));
  }
  const result = await paginate(base, { kind: 'integrations:name', sortExpr: sql.ref('name'), sortType: 'text', seqExpr: sql.ref('seq'), direction: 'asc' }, page, (r) => r.name);
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

export async function listOrganizationIntegrations(ctx: Ctx, organizationId: string, filters: ListFilters, page: PageRequest) {
  await requireMemberWithRole(ctx, organizationId, 'list the integrations of the organization');
  return listIntegrations(ctx, filters, page, { availableTo: organizationId });
}

async function requireMemberWithRole(ctx: Ctx, organizationId: string, action: string): Promise<Membership> {
  const membership = ctx.integration ? undefined : await membershipOf(ctx.db, organizationId, ctx.user.id);
  if (!membership) throw new NotFoundError('Organization');
  if (membership.role === null) throw new ForbiddenError(`Guests cannot ${action}`);
  return membership;
}

// ---------------------------------------------------------------- installations

export async function spaceCounts(db: Db, installations: InstallationRow[]): Promise<Map<string, number>> {
  const counts = new Map<string, number>();
  const selected = installations.filter((i) => i.space_selection === 'selected').map((i) => i.id);
  if (selected.length) {
    const rows = await db
      .selectFrom('integration_space_installations')
      .select(['installation_id', sql<number>`count(*)::int`.as('n')])
      .where('installation_id', 'in', selected)
      .groupBy('installation_id')
      .execute();
    for (const r of rows) counts.set(r.installation_id, Number(r.n));
  }
  const all = installations.filter((i) => i.space_selection === 'all');
  for (const inst of all) {
    const row = await db
      .selectFrom('spaces')
      .select(sql<number>`count(*)::int`.as('n'))
      .where('organization_id', '=', inst.organization_id)
      .where('deleted_at', 'is', null)
      .executeTakeFirstOrThrow();
    counts.set(inst.id, Number(row.n));
  }
  return counts;
}

/** Status from the configuration: active once every required account property is set. */
/** `active` once the configuration fills the integration's schema for that level (account, space or site), else `pending`. */
function statusFor(integration: IntegrationRow, level: 'account' | 'space' | 'site', configuration: Record<string, unknown>): 'active' | 'pending' {
  const schema = (integration.configurations as Record<string, unknown>)[level];
  return checkConfiguration(schema, configuration, 'configuration') ? 'active' : 'pending';
}

/** Installs an integration on an organization (its admins only). */
export async function installIntegration(ctx: Ctx, name: string, organization: string) {
  const { row } = await loadIntegration(ctx, name);
  const { org, membership } = await resolveOrganization(ctx, organization);
  if (!atLeast(membership.role, 'admin')) throw new ForbiddenError('Only organization admins can install integrations');
  if (row.visibility === 'private' && row.organization_id !== org.id) {
    throw new ForbiddenError('A private integration can only be installed in the organization that publishes it');
  }
  const now = new Date();
  const status = statusFor(row, 'account', {});
  try {
    return await ctx.db.transaction().execute(async (trx) => {
      // The integration must stay while it is installed: an unpublish running now waits, or won.
      const live = await trx.selectFrom('integrations').select('id').where('id', '=', row.id).forKeyShare().executeTakeFirst();
      if (!live) throw new NotFoundError('Integration');
      const inst = await trx
        .insertInto('integration_installations')
        .values({ id: newId(), integration_id: row.id, organization_id: org.id, status, created_at: now, updated_at: now })
        .returningAll()
        .executeTakeFirstOrThrow();
      await emitEvents(trx, ctx.jobs, [{ integrationId: row.id, installationId: inst.id, payload: { type: 'installation_setup', status } }]);
      return { integration: row, installation: inst };
    });
  } catch (err) {
    if (isUniqueViolation(err)) throw new ConflictError('The integration is already installed in this organization');
    throw err;
  }
}

/**
 * An installation the caller may act on: admins of its organization (all actions), members of
 * the owning organization's admins (read), the integration's own tokens (read).
 */
async function loadInstallation(ctx: Ctx, name: string, installationId: string, mode: 'read' | 'manage') {
  const visible = await loadIntegration(ctx, name);
  const inst = await ctx.db
    .selectFrom('integration_installations')
    .selectAll()
    .where('id', '=', installationId)
    .where('integration_id', '=', visible.row.id)
    .executeTakeFirst();
  if (!inst) throw new NotFoundError('Installation');
  if (ctx.integration) {
    if (ctx.integration.integrationId !== visible.row.id) throw new NotFoundError('Installation');
    if (ctx.integration.installationId && ctx.integration.installationId !== inst.id) throw new NotFoundError('Installation');
    if (mode === 'manage') throw new ForbiddenError('An integration token cannot change installations');
    return { ...visible, inst };
  }
  const membership = await membershipOf(ctx.db, inst.organization_id, ctx.user.id);
  const ownerAdmin = atLeast(visible.membership?.role, 'admin');
  if (!membership && !ownerAdmin) throw new NotFoundError('Installation');
  if (!atLeast(membership?.role, 'admin') && (mode === 'manage' || !ownerAdmin)) {
    if (mode === 'read' && membership && membership.role !== null) return { ...visible, inst };
    throw new ForbiddenError('Only admins of the organization can manage its installation of the integration');
  }
  return { ...visible, inst };
}

export async function getInstallation(ctx: Ctx, name: string, installationId: string) {
  const { row, inst } = await loadInstallation(ctx, name, installationId, 'read');
  return { integration: row, installation: inst };
}

export async function listInstallations(ctx: Ctx, name: string, externalId: string | undefined, page: PageRequest) {
  const visible = await loadIntegration(ctx, name);
  let base = ctx.db.selectFrom('integration_installations').selectAll().where('integration_id', '=', visible.row.id);
  const own = ctx.integration?.integrationId === visible.row.id;
  if (own && ctx.integration?.installationId) base = base.where('id', '=', ctx.integration.installationId);
  else if (!own && !atLeast(visible.membership?.role, 'admin')) {
    // Others see the installations of the organizations they administer.
    base = base.where('organization_id', 'in', ctx.db.selectFrom('members').select('organization_id').where('user_id', '=', ctx.user.id).where('role', '=', 'admin').where('disabled', '=', false));
  }
  if (externalId !== undefined) base = base.where(sql<boolean>`external_ids ? ${externalId}`);
  const result = await paginate(base, { kind: 'installations:seq', sortExpr: null, seqExpr: sql.ref('seq'), direction: 'asc' }, page);
  return { ...result, integration: visible.row };
}

export async function updateInstallation(
  ctx: Ctx,
  name: string,
  installationId: string,
  body: { externalIds?: string[] | undefined; configuration?: Record<string, unknown> | undefined; space_selection?: 'all' | 'selected' | undefined; site_selection?: 'all' | 'selected' | undefined },
) {
  const { row, inst } = await loadInstallation(ctx, name, installationId, 'manage');
  const configuration = body.configuration ?? (inst.configuration as Record<string, unknown>);
  const status = inst.status === 'paused' ? 'paused' : statusFor(row, 'account', configuration);
  return ctx.db.transaction().execute(async (trx) => {
    const updated = await trx
      .updateTable('integration_installations')
      .set({
        ...(body.externalIds !== undefined ? { external_ids: json(body.externalIds) } : {}),
        ...(body.configuration !== undefined ? { configuration: json(body.configuration) } : {}),
        ...(body.space_selection !== undefined ? { space_selection: body.space_selection } : {}),
        ...(body.site_selection !== undefined ? { site_selection: body.site_selection } : {}),
        status,
        updated_at: new Date(),
      })
      .where('id', '=', inst.id)
      .returningAll()
      .executeTakeFirstOrThrow();
    if (body.configuration !== undefined || status !== inst.status || body.space_selection !== undefined) {
      await emitEvents(trx, ctx.jobs, [
        { integrationId: row.id, installationId: inst.id, payload: { type: 'installation_setup', status, previous: { status: inst.status, configuration: inst.configuration } } },
      ]);
    }
    return { integration: row, installation: updated };
  });
}

/** Uninstalls: the installation, its space installations and tokens go; the integration is told. */
export async function uninstallIntegration(ctx: Ctx, name: string, installationId: string): Promise<void> {
  const { row, inst } = await loadInstallation(ctx, name, installationId, 'manage');
  await ctx.db.transaction().execute(async (trx) => {
    const spaces = await trx.selectFrom('integration_space_installations').selectAll().where('installation_id', '=', inst.id).execute();
    const sites = await trx.selectFrom('integration_site_installations').selectAll().where('installation_id', '=', inst.id).execute();
    await emitEvents(trx, ctx.jobs, [
      ...sites.map((s) => ({ integrationId: row.id, installationId: inst.id, payload: { type: 'site_installation_deleted', siteId: s.site_id, previous: { configuration: s.configuration } } })),
      ...spaces.map((s) => ({ integrationId: row.id, installationId: inst.id, spaceId: s.space_id, payload: { type: 'space_installation_deleted', previous: { configuration: s.configuration } } })),
      { integrationId: row.id, installationId: inst.id, payload: { type: 'installation_deleted', previous: { configuration: inst.configuration } } },
    ]);
    await trx.deleteFrom('integration_installations').where('id', '=', inst.id).execute();
  });
}

export async function createInstallationToken(ctx: Ctx, name: string, installationId: string): Promise<string> {
  const visible = await loadIntegration(ctx, name);
  const own = ctx.integration?.integrationId === visible.row.id;
  if (!own && !atLeast(visible.membership?.role, 'admin')) {
    if (!visible.membership) throw new NotFoundError('Integration');
    throw new ForbiddenError('Only the integration and admins of its organization can create installation tokens');
  }
  if (own && ctx.integration?.installationId && ctx.integration.installationId !== installationId) throw new NotFoundError('Installation');
  const inst = await ctx.db
    .selectFrom('integration_installations')
    .select('id')
    .where('id', '=', installationId)
    .where('integration_id', '=', visible.row.id)
    .executeTakeFirst();
  if (!inst) throw new NotFoundError('Installation');
  return issueIntegrationToken(ctx.db, visible.row.id, inst.id);
}

/** The installations whose space or site installations a listing covers: one, or (undefined) every one the caller may read. */
async function installationsInScope(ctx: Ctx, name: string, installationId: string | undefined): Promise<{ integration: IntegrationRow; installationIds: string[] }> {
  if (installationId !== undefined) {
    const { row, inst } = await loadInstallation(ctx, name, installationId, 'read');
    return { integration: row, installationIds: [inst.id] };
  }
  const all = await listInstallations(ctx, name, undefined, { limit: 1000 });
  return { integration: all.integration, installationIds: all.items.map((i) => i.id) };
}

// ---------------------------------------------------------------- space installations

export async function installOnSpace(ctx: Ctx, name: string, installationId: string, spaceId: string) {
  const { row, inst } = await loadInstallation(ctx, name, installationId, 'manage');
  if (row.target === 'site' || row.target === 'organization') throw new BadRequestError(`This integration installs on ${row.target}s, not on spaces`);
  const { space } = await requireSpaceRole(ctx, spaceId, 'admin', 'install integrations on the space');
  if (space.organization_id !== inst.organization_id) throw new BadRequestError('space: must be a space of the organization the integration is installed in');
  const now = new Date();
  const status = statusFor(row, 'space', {});
  try {
    return await ctx.db.transaction().execute(async (trx) => {
      const si = await trx
        .insertInto('integration_space_installations')
        .values({ installation_id: inst.id, space_id: space.id, status, created_at: now, updated_at: now })
        .returningAll()
        .executeTakeFirstOrThrow();
      await emitEvents(trx, ctx.jobs, [{ integrationId: row.id, installationId: inst.id, spaceId: space.id, payload: { type: 'space_installation_setup', status } }]);
      return { integration: row, spaceInstallation: si, space };
    });
  } catch (err) {
    if (isUniqueViolation(err)) throw new ConflictError('The integration is already installed on this space');
    throw err;
  }
}

async function loadSpaceInstallation(ctx: Ctx, name: string, installationId: string, spaceId: string, mode: 'read' | 'manage') {
  const { row, inst } = await loadInstallation(ctx, name, installationId, mode);
  const si = await ctx.db
    .selectFrom('integration_space_installations')
    .selectAll()
    .where('installation_id', '=', inst.id)
    .where('space_id', '=', spaceId)
    .executeTakeFirst();
  if (!si) throw new NotFoundError('Space installation');
  return { integration: row, installation: inst, spaceInstallation: si };
}

export async function getSpaceInstallation(ctx: Ctx, name: string, installationId: string, spaceId: string) {
  return loadSpaceInstallation(ctx, name, installationId, spaceId, 'read');
}

export async function updateSpaceInstallation(
  ctx: Ctx,
  name: string,
  installationId: string,
  spaceId: string,
  body: { externalIds?: string[] | undefined; configuration?: Record<string, unknown> | undefined },
) {
  const found = await loadSpaceInstallation(ctx, name, installationId, spaceId, 'manage');
  const { integration, spaceInstallation: si } = found;
  const configuration = body.configuration ?? (si.configuration as Record<string, unknown>);
  const status = si.status === 'paused' ? 'paused' : statusFor(integration, 'space', configuration);
  return ctx.db.transaction().execute(async (trx) => {
    const updated = await trx
      .updateTable('integration_space_installations')
      .set({
        ...(body.externalIds !== undefined ? { external_ids: json(body.externalIds) } : {}),
        ...(body.configuration !== undefined ? { configuration: json(body.configuration) } : {}),
        status,
        updated_at: new Date(),
      })
      .where('installation_id', '=', si.installation_id)
      .where('space_id', '=', si.space_id)
      .returningAll()
      .executeTakeFirstOrThrow();
    if (body.configuration !== undefined || status !== si.status) {
      await emitEvents(trx, ctx.jobs, [
        {
          integrationId: integration.id,
          installationId: si.installation_id,
          spaceId: si.space_id,
          payload: { type: 'space_installation_setup', status, previous: { status: si.status, configuration: si.configuration } },
        },
      ]);
    }
    return { ...found, spaceInstallation: updated };
  });
}

export async function uninstallFromSpace(ctx: Ctx, name: string, installationId: string, spaceId: string): Promise<void> {
  const { integration, spaceInstallation: si } = await loadSpaceInstallation(ctx, name, installationId, spaceId, 'manage');
  await ctx.db.transaction().execute(async (trx) => {
    await trx.deleteFrom('integration_space_installations').where('installation_id', '=', si.installation_id).where('space_id', '=', si.space_id).execute();
    await emitEvents(trx, ctx.jobs, [
      { integrationId: integration.id, installationId: si.installation_id, spaceId: si.space_id, payload: { type: 'space_installation_deleted', previous: { configuration: si.configuration } } },
    ]);
  });
}

/** Space installations, of one installation or (installationId undefined) of every installation the caller may read. */
export async function listSpaceInstallations(ctx: Ctx, name: string, installationId: string | undefined, externalId: string | undefined, page: PageRequest) {
  const { integration, installationIds } = await installationsInScope(ctx, name, installationId);
  if (installationIds.length === 0) return { items: [] as SpaceInstallationRow[], count: 0, integration };
  let base = ctx.db.selectFrom('integration_space_installations').selectAll().where('installation_id', 'in', installationIds);
  if (externalId !== undefined) base = base.where(sql<boolean>`external_ids ? ${externalId}`);
  const result = await paginate(base, { kind: 'space-installations:seq', sortExpr: null, seqExpr: sql.ref('seq'), direction: 'asc' }, page);
  return { ...result, integration };
}

/** Integrations installed on a space (through a space installation or an "all spaces" installation). */
export async function listSpaceIntegrations(ctx: Ctx, spaceId: string, page: PageRequest) {
  const { space } = await loadSpace(ctx, spaceId);
  const base = ctx.db
    .selectFrom('integrations')
    .selectAll()
    .where('id', 'in', (eb) =>
      eb
        .selectFrom('integration_installations as inst')
        .leftJoin('integration_space_installations as si', (join) => join.onRef('si.installation_id', '=', 'inst.id').on('si.space_id', '=', space.id))
        .select('inst.integration_id')
        .where('inst.organization_id', '=', space.organization_id)
        .where((w) => w.or([w('si.space_id', 'is not', null), w('inst.space_selection', '=', 'all')])),
    );
  const result = await paginate(base, { kind: 'space-integrations:name', sortExpr: sql.ref('name'), sortType: 'text', seqExpr: sql.ref('seq'), direction: 'asc' }, page, (r) => r.name);
  const items: Visible[] = [];
  for (const row of result.items) items.push({ row, owner: await ownerOf(ctx.db, row), membership: ctx.integration ? undefined : await membershipOf(ctx.db, row.organization_id, ctx.user.id) });
  return { ...result, items };
}

export async function listOrganizationInstallations(ctx: Ctx, organizationId: string, search: string | undefined, page: PageRequest) {
  await requireMemberWithRole(ctx, organizationId, 'list the installations of the organization');
  let base = ctx.db
    .selectFrom('integration_installations as inst')
    .innerJoin('integrations as i', 'i.id', 'inst.integration_id')
    .selectAll('inst')
    .select('i.name as integration_name')
    .where('inst.organization_id', '=', organizationId);
  if (search) {
    const like = `%${search.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
    base = base.where((eb) => eb.or([eb('i.name', 'ilike', like), eb('i.title', 'ilike', like)]));
  }
  const result = await paginate(base, { kind: 'org-installations:seq', sortExpr: null, seqExpr: sql.ref('inst.seq'), direction: 'asc' }, page);
  const items = [];
  for (const inst of result.items) {
    const visible = await loadIntegration(ctx, inst.integration_name).catch(() => undefined);
    if (visible) items.push({ installation: inst as InstallationRow, integration: visible });
  }
  return { ...result, items };
}

// ---------------------------------------------------------------- development mode and events

export async function setDevelopmentMode(ctx: Ctx, name: string, tunnelUrl: string | null, all = false): Promise<void> {
  const { row } = await requireOwner(ctx, name, 'develop it');
  if (ctx.integration) throw new ForbiddenError('An integration token cannot change development mode');
  if (tunnelUrl !== null) {
    let url: URL;
    try {
      url = new URL(tunnelUrl);
    } catch {
      throw new BadRequestError('tunnelUrl: must be an absolute http(s) URL');
    }
    if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new BadRequestError('tunnelUrl: must be an absolute http(s) URL');
  }
  await ctx.db.updateTable('integrations').set({ dev_tunnel_url: tunnelUrl, dev_all: all, updated_at: new Date() }).where('id', '=', row.id).execute();
}

export async function listEvents(ctx: Ctx, name: string, page: PageRequest) {
  const { row } = await requireOwner(ctx, name, 'read its events');
  let base = ctx.db.selectFrom('integration_events').selectAll().where('integration_id', '=', row.id).where('status', '!=', 'pending');
  if (ctx.integration?.installationId) base = base.where('installation_id', '=', ctx.integration.installationId);
  return paginate(base, { kind: 'integration-events:seq', sortExpr: null, seqExpr: sql.ref('seq'), direction: 'desc' }, page);
}

export async function getEvent(ctx: Ctx, name: string, eventId: string) {
  const { row } = await requireOwner(ctx, name, 'read its events');
  const event = await ctx.db
    .selectFrom('integration_events')
    .selectAll()
    .where('integration_id', '=', row.id)
    .where('id', '=', eventId)
    .where('status', '!=', 'pending')
    .executeTakeFirst();
  if (!event || (ctx.integration?.installationId && event.installation_id !== ctx.integration.installationId)) throw new NotFoundError('Event');
  return event;
}

// ---------------------------------------------------------------- site installations

export async function installOnSite(ctx: Ctx, name: string, installationId: string, siteId: string) {
  const { row, inst } = await loadInstallation(ctx, name, installationId, 'manage');
  if (row.target === 'space' || row.target === 'organization') throw new BadRequestError(`This integration installs on ${row.target}s, not on sites`);
  const site = await findSite(ctx.db, inst.organization_id, siteId);
  if (!site) throw new NotFoundError('Site');
  const now = new Date();
  const status = statusFor(row, 'site', {});
  try {
    return await ctx.db.transaction().execute(async (trx) => {
      const si = await trx
        .insertInto('integration_site_installations')
        .values({ installation_id: inst.id, site_id: site.id, status, created_at: now, updated_at: now })
        .returningAll()
        .executeTakeFirstOrThrow();
      await emitEvents(trx, ctx.jobs, [{ integrationId: row.id, installationId: inst.id, payload: { type: 'site_installation_setup', siteId: site.id, status } }]);
      return { integration: row, siteInstallation: si };
    });
  } catch (err) {
    if (isUniqueViolation(err)) throw new ConflictError('The integration is already installed on this site');
    throw err;
  }
}

async function loadSiteInstallation(ctx: Ctx, name: string, installationId: string, siteId: string, mode: 'read' | 'manage') {
  const { row, inst } = await loadInstallation(ctx, name, installationId, mode);
  const si = await ctx.db
    .selectFrom('integration_site_installations')
    .selectAll()
    .where('installation_id', '=', inst.id)
    .where('site_id', '=', siteId)
    .executeTakeFirst();
  if (!si) throw new NotFoundError('Site installation');
  return { integration: row, installation: inst, siteInstallation: si };
}

export async function getSiteInstallation(ctx: Ctx, name: string, installationId: string, siteId: string) {
  return loadSiteInstallation(ctx, name, installationId, siteId, 'read');
}

export async function updateSiteInstallation(
  ctx: Ctx,
  name: string,
  installationId: string,
  siteId: string,
  body: { externalIds?: string[] | undefined; configuration?: Record<string, unknown> | undefined },
) {
  const found = await loadSiteInstallation(ctx, name, installationId, siteId, 'manage');
  const { integration, siteInstallation: si } = found;
  const configuration = body.configuration ?? (si.configuration as Record<string, unknown>);
  const status = si.status === 'paused' ? 'paused' : statusFor(integration, 'site', configuration);
  return ctx.db.transaction().execute(async (trx) => {
    const updated = await trx
      .updateTable('integration_site_installations')
      .set({
        ...(body.externalIds !== undefined ? { external_ids: json(body.externalIds) } : {}),
        ...(body.configuration !== undefined ? { configuration: json(body.configuration) } : {}),
        status,
        updated_at: new Date(),
      })
      .where('installation_id', '=', si.installation_id)
      .where('site_id', '=', si.site_id)
      .returningAll()
      .executeTakeFirstOrThrow();
    if (body.configuration !== undefined || status !== si.status) {
      await emitEvents(trx, ctx.jobs, [
        {
          integrationId: integration.id,
          installationId: si.installation_id,
          payload: { type: 'site_installation_setup', siteId: si.site_id, status, previous: { status: si.status, configuration: si.configuration } },
        },
      ]);
    }
    return { ...found, siteInstallation: updated };
  });
}

export async function uninstallFromSite(ctx: Ctx, name: string, installationId: string, siteId: string): Promise<void> {
  const { integration, siteInstallation: si } = await loadSiteInstallation(ctx, name, installationId, siteId, 'manage');
  await ctx.db.transaction().execute(async (trx) => {
    await trx.deleteFrom('integration_site_installations').where('installation_id', '=', si.installation_id).where('site_id', '=', si.site_id).execute();
    await emitEvents(trx, ctx.jobs, [
      { integrationId: integration.id, installationId: si.installation_id, payload: { type: 'site_installation_deleted', siteId: si.site_id, previous: { configuration: si.configuration } } },
    ]);
  });
}

export async function listSiteInstallations(ctx: Ctx, name: string, installationId: string | undefined, externalId: string | undefined, page: PageRequest) {
  const { integration, installationIds } = await installationsInScope(ctx, name, installationId);
  if (installationIds.length === 0) return { items: [] as SiteInstallationRow[], count: 0, integration };
  let base = ctx.db.selectFrom('integration_site_installations').selectAll().where('installation_id', 'in', installationIds);
  if (externalId !== undefined) base = base.where(sql<boolean>`external_ids ? ${externalId}`);
  const result = await paginate(base, { kind: 'site-installations:seq', sortExpr: null, seqExpr: sql.ref('seq'), direction: 'asc' }, page);
  return { ...result, integration };
}

/** Integrations installed on a site (through a site installation or an "all sites" installation). */
export async function listSiteIntegrations(ctx: Ctx, organizationId: string, siteId: string, page: PageRequest) {
  const { site } = await requireSite(ctx, organizationId, siteId, 'read', 'list the integrations of the site');
  const base = ctx.db
    .selectFrom('integrations')
    .selectAll()
    .where('id', 'in', (eb) =>
      eb
        .selectFrom('integration_installations as inst')
        .leftJoin('integration_site_installations as si', (join) => join.onRef('si.installation_id', '=', 'inst.id').on('si.site_id', '=', site.id))
        .select('inst.integration_id')
        .where('inst.organization_id', '=', site.organization_id)
        .where((w) => w.or([w('si.site_id', 'is not', null), w('inst.site_selection', '=', 'all')])),
    );
  const result = await paginate(base, { kind: 'site-integrations:name', sortExpr: sql.ref('name'), sortType: 'text', seqExpr: sql.ref('seq'), direction: 'asc' }, page, (r) => r.name);
  const items: Visible[] = [];
  for (const row of result.items) items.push({ row, owner: await ownerOf(ctx.db, row), membership: await membershipOf(ctx.db, row.organization_id, ctx.user.id) });
  return { ...result, items };
}

/** The scripts installed integrations inject into a site's published pages. */
export async function listSiteIntegrationScripts(ctx: Ctx, organizationId: string, siteId: string) {
  const { site } = await requireSite(ctx, organizationId, siteId, 'read', 'list the integration scripts of the site');
  return siteScripts(ctx.urls, site.id, await siteIntegrations(ctx.db, site));
}
