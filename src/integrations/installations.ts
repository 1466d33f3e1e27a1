import type { Ctx } from '../platform/context.ts';
import type { InstallationRow, IntegrationRow } from '../platform/db/schema.ts';
import { ConflictError, ForbiddenError, isUniqueViolation, NotFoundError } from '../platform/errors.ts';
import type { PageRequest } from '../platform/paging.ts';
import { atLeast } from '../platform/policy.ts';
import { emitEvents, type NewEvent } from '../events/outbox.ts';
import { loadIntegration, membershipOf, requireMemberWithRole, resolveOrganization } from './catalogue.ts';
import { checkConfiguration } from './configuration.ts';
import { issueIntegrationToken } from './grants.ts';
import * as store from './store.ts';

/** Installations of integrations in organizations: installing, reading, configuring, uninstalling. */

/** `active` once the configuration fills the integration's schema for that level (account, space or site), else `pending`. */
export function statusFor(integration: IntegrationRow, level: 'account' | store.Target, configuration: Record<string, unknown>): 'active' | 'pending' {
  const schema = (integration.configurations as Record<string, unknown>)[level];
  return checkConfiguration(schema, configuration, 'configuration') ? 'active' : 'pending';
}

/**
 * The event telling an integration that its installation on a space or site was set up (or its
 * configuration or status changed) or deleted. A space's event names the space beside its payload
 * (it is delivered in the space's order); a site's names it in the payload.
 */
export function targetEvent(
  target: store.Target,
  integrationId: string,
  installationId: string,
  targetId: string,
  change: 'setup' | 'deleted',
  details: { status?: string; previous?: Record<string, unknown> },
): NewEvent {
  return target === 'space'
    ? { integrationId, installationId, spaceId: targetId, payload: { type: `space_installation_${change}`, ...details } }
    : { integrationId, installationId, payload: { type: `site_installation_${change}`, siteId: targetId, ...details } };
}

/** Installs an integration on an organization (its admins only). */
export async function installIntegration(ctx: Ctx, name: string, organization: string) {
  const { row } = await loadIntegration(ctx, name);
  const { org, membership } = await resolveOrganization(ctx, organization);
  if (!atLeast(membership.role, 'admin')) throw new ForbiddenError('Only organization admins can install integrations');
  if (row.visibility === 'private' && row.organization_id !== org.id) {
    throw new ForbiddenError('A private integration can only be installed in the organization that publishes it');
  }
  const status = statusFor(row, 'account', {});
  try {
    return await ctx.db.transaction().execute(async (trx) => {
      // The integration must stay while it is installed: an unpublish running now waits, or won.
      const live = await store.lockIntegrationRow(trx, row.id);
      if (!live) throw new NotFoundError('Integration');
      const inst = await store.insertInstallation(trx, org.id, row.id, status);
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
export async function loadInstallation(ctx: Ctx, name: string, installationId: string, mode: 'read' | 'manage') {
  const visible = await loadIntegration(ctx, name);
  const inst = await store.findInstallation(ctx.db, visible.row.id, installationId);
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
  const own = ctx.integration?.integrationId === visible.row.id;
  let reader: store.InstallationReader = { all: true };
  if (own && ctx.integration?.installationId) reader = { installationId: ctx.integration.installationId };
  // Others see the installations of the organizations they administer.
  else if (!own && !atLeast(visible.membership?.role, 'admin')) reader = { adminUserId: ctx.user.id };
  const result = await store.listInstallations(ctx.db, visible.row.id, reader, externalId, page);
  return { ...result, integration: visible.row };
}

export async function updateInstallation(ctx: Ctx, name: string, installationId: string, body: store.InstallationChanges) {
  const { row, inst } = await loadInstallation(ctx, name, installationId, 'manage');
  const configuration = body.configuration ?? (inst.configuration as Record<string, unknown>);
  const status = inst.status === 'paused' ? 'paused' : statusFor(row, 'account', configuration);
  return ctx.db.transaction().execute(async (trx) => {
    const updated = await store.updateInstallation(trx, inst.organization_id, inst.id, body, status);
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
    const spaces = await store.targetInstallationsOf(trx, 'space', inst.id);
    const sites = await store.targetInstallationsOf(trx, 'site', inst.id);
    await emitEvents(trx, ctx.jobs, [
      ...sites.map((s) => targetEvent('site', row.id, inst.id, s.site_id, 'deleted', { previous: { configuration: s.configuration } })),
      ...spaces.map((s) => targetEvent('space', row.id, inst.id, s.space_id, 'deleted', { previous: { configuration: s.configuration } })),
      { integrationId: row.id, installationId: inst.id, payload: { type: 'installation_deleted', previous: { configuration: inst.configuration } } },
    ]);
    await store.deleteInstallation(trx, inst.organization_id, inst.id);
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
  const inst = await store.findInstallation(ctx.db, visible.row.id, installationId);
  if (!inst) throw new NotFoundError('Installation');
  return issueIntegrationToken(ctx.db, visible.row.id, inst.id);
}

/** The installations whose space or site installations a listing covers: one, or (undefined) every one the caller may read. */
export async function installationsInScope(ctx: Ctx, name: string, installationId: string | undefined): Promise<{ integration: IntegrationRow; installationIds: string[] }> {
  if (installationId !== undefined) {
    const { row, inst } = await loadInstallation(ctx, name, installationId, 'read');
    return { integration: row, installationIds: [inst.id] };
  }
  const all = await listInstallations(ctx, name, undefined, { limit: 1000 });
  return { integration: all.integration, installationIds: all.items.map((i) => i.id) };
}

export async function listOrganizationInstallations(ctx: Ctx, organizationId: string, search: string | undefined, page: PageRequest) {
  await requireMemberWithRole(ctx, organizationId, 'list the installations of the organization');
  const result = await store.listOrganizationInstallations(ctx.db, organizationId, search, page);
  const items: { installation: InstallationRow; integration: Awaited<ReturnType<typeof loadIntegration>> }[] = [];
  for (const { integration_name, ...installation } of result.items) {
    const visible = await loadIntegration(ctx, integration_name).catch(() => undefined);
    if (visible) items.push({ installation, integration: visible });
  }
  return { ...result, items };
}

/** How many spaces each installation covers (for their presentation). */
export const spaceCounts = store.installationSpaceCounts;
