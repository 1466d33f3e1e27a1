import type { Ctx } from '../platform/context.ts';
import { BadRequestError, ConflictError, isUniqueViolation, NotFoundError } from '../platform/errors.ts';
import type { PageRequest } from '../platform/paging.ts';
import { requireSite } from '../sites/access.ts';
import { findSite } from '../sites/store.ts';
import { loadSpace, requireSpaceRole } from '../spaces/access.ts';
import { emitEvents } from '../events/outbox.ts';
import { membershipOf, ownerOf, type Visible } from './catalogue.ts';
import { installationsInScope, loadInstallation, statusFor, targetEvent } from './installations.ts';
import { siteIntegrations, siteScripts } from './site-scripts.ts';
import * as store from './store.ts';
import type { InstallationRow, IntegrationRow } from '../platform/db/schema.ts';

/**
 * Installations on one space or one site of the installing organization (the target): one set of
 * rules for both, told apart by `target`.
 */

type Target = store.Target;

const noun = (target: Target) => (target === 'space' ? 'Space' : 'Site');

/** The id of the space or site to install on, once the caller may install there and it belongs to the installation's organization. */
async function installableTarget(ctx: Ctx, target: Target, inst: InstallationRow, targetId: string): Promise<string> {
  if (target === 'space') {
    const { space } = await requireSpaceRole(ctx, targetId, 'admin', 'install integrations on the space');
    if (space.organization_id !== inst.organization_id) throw new BadRequestError('space: must be a space of the organization the integration is installed in');
    return space.id;
  }
  const site = await findSite(ctx.db, inst.organization_id, targetId);
  if (!site) throw new NotFoundError('Site');
  return site.id;
}

export async function installOnTarget<T extends Target>(ctx: Ctx, target: T, name: string, installationId: string, targetId: string) {
  const { row, inst } = await loadInstallation(ctx, name, installationId, 'manage');
  if (row.target !== target && row.target !== 'all') throw new BadRequestError(`This integration installs on ${row.target}s, not on ${target}s`);
  const id = await installableTarget(ctx, target, inst, targetId);
  const status = statusFor(row, target, {});
  try {
    return await ctx.db.transaction().execute(async (trx) => {
      const installed = await store.insertTargetInstallation(trx, target, inst.id, id, status);
      await emitEvents(trx, ctx.jobs, [targetEvent(target, row.id, inst.id, id, 'setup', { status })]);
      return { integration: row, targetInstallation: installed };
    });
  } catch (err) {
    if (isUniqueViolation(err)) throw new ConflictError(`The integration is already installed on this ${target}`);
    throw err;
  }
}

async function loadTargetInstallation<T extends Target>(ctx: Ctx, target: T, name: string, installationId: string, targetId: string, mode: 'read' | 'manage') {
  const { row, inst } = await loadInstallation(ctx, name, installationId, mode);
  const installed = await store.findTargetInstallation(ctx.db, target, inst.id, targetId);
  if (!installed) throw new NotFoundError(`${noun(target)} installation`);
  return { integration: row, installation: inst, targetInstallation: installed };
}

export async function getTargetInstallation<T extends Target>(ctx: Ctx, target: T, name: string, installationId: string, targetId: string) {
  return loadTargetInstallation(ctx, target, name, installationId, targetId, 'read');
}

export async function updateTargetInstallation<T extends Target>(
  ctx: Ctx,
  target: T,
  name: string,
  installationId: string,
  targetId: string,
  body: { externalIds?: string[] | undefined; configuration?: Record<string, unknown> | undefined },
) {
  const found = await loadTargetInstallation(ctx, target, name, installationId, targetId, 'manage');
  const { integration, targetInstallation: before } = found;
  const configuration = body.configuration ?? (before.configuration as Record<string, unknown>);
  const status = before.status === 'paused' ? 'paused' : statusFor(integration, target, configuration);
  return ctx.db.transaction().execute(async (trx) => {
    const updated = await store.updateTargetInstallation(trx, target, before.installation_id, targetId, body, status);
    if (body.configuration !== undefined || status !== before.status) {
      await emitEvents(trx, ctx.jobs, [
        targetEvent(target, integration.id, before.installation_id, targetId, 'setup', { status, previous: { status: before.status, configuration: before.configuration } }),
      ]);
    }
    return { ...found, targetInstallation: updated };
  });
}

export async function uninstallFromTarget(ctx: Ctx, target: Target, name: string, installationId: string, targetId: string): Promise<void> {
  const { integration, targetInstallation: installed } = await loadTargetInstallation(ctx, target, name, installationId, targetId, 'manage');
  await ctx.db.transaction().execute(async (trx) => {
    await store.deleteTargetInstallation(trx, target, installed.installation_id, targetId);
    await emitEvents(trx, ctx.jobs, [targetEvent(target, integration.id, installed.installation_id, targetId, 'deleted', { previous: { configuration: installed.configuration } })]);
  });
}

/** Space (or site) installations, of one installation or (installationId undefined) of every installation the caller may read. */
export async function listTargetInstallations<T extends Target>(
  ctx: Ctx,
  target: T,
  name: string,
  installationId: string | undefined,
  externalId: string | undefined,
  page: PageRequest,
): Promise<{ items: store.TargetInstallationRows[T][]; count: number; next?: { page: string }; integration: IntegrationRow }> {
  const { integration, installationIds } = await installationsInScope(ctx, name, installationId);
  if (installationIds.length === 0) return { items: [], count: 0, integration };
  const result = await store.listTargetInstallations(ctx.db, target, installationIds, externalId, page);
  return { ...result, integration };
}

/** Integrations installed on a space (through a space installation or an "all spaces" installation). */
export async function listSpaceIntegrations(ctx: Ctx, spaceId: string, page: PageRequest) {
  const { space } = await loadSpace(ctx, spaceId);
  const result = await store.integrationsInstalledOn(ctx.db, space.organization_id, 'space', space.id, page);
  const items: Visible[] = [];
  for (const row of result.items) items.push({ row, owner: await ownerOf(ctx.db, row), membership: ctx.integration ? undefined : await membershipOf(ctx.db, row.organization_id, ctx.user.id) });
  return { ...result, items };
}

/** Integrations installed on a site (through a site installation or an "all sites" installation). */
export async function listSiteIntegrations(ctx: Ctx, organizationId: string, siteId: string, page: PageRequest) {
  const { site } = await requireSite(ctx, organizationId, siteId, 'read', 'list the integrations of the site');
  const result = await store.integrationsInstalledOn(ctx.db, site.organization_id, 'site', site.id, page);
  const items: Visible[] = [];
  for (const row of result.items) items.push({ row, owner: await ownerOf(ctx.db, row), membership: await membershipOf(ctx.db, row.organization_id, ctx.user.id) });
  return { ...result, items };
}

/** The scripts installed integrations inject into a site's published pages. */
export async function listSiteIntegrationScripts(ctx: Ctx, organizationId: string, siteId: string) {
  const { site } = await requireSite(ctx, organizationId, siteId, 'read', 'list the integration scripts of the site');
  return siteScripts(ctx.urls, site.id, await siteIntegrations(ctx.db, site));
}
