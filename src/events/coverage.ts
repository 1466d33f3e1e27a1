import type { IntegrationGrant } from '../platform/context.ts';
import type { Db } from '../platform/db/database.ts';
import type { SiteRow } from '../platform/db/schema.ts';

/**
 * Which installations reach a space or a site: active ones of its organization installed on it
 * (and active there), or installed for all spaces (all sites) with no installation of their own
 * there. Every check of "does this integration act here" starts from these queries, which callers
 * narrow (`where`) and pick from (`select`).
 */
export function installationsCoveringSpace(db: Db, space: { id: string; organization_id: string }) {
  return db
    .selectFrom('integration_installations as inst')
    .leftJoin('integration_space_installations as si', (join) => join.onRef('si.installation_id', '=', 'inst.id').on('si.space_id', '=', space.id))
    .where('inst.organization_id', '=', space.organization_id)
    .where('inst.status', '=', 'active')
    .where((eb) => eb.or([eb('si.status', '=', 'active'), eb.and([eb('si.status', 'is', null), eb('inst.space_selection', '=', 'all')])]));
}

export function installationsCoveringSite(db: Db, site: { id: string; organization_id: string }) {
  return db
    .selectFrom('integration_installations as inst')
    .leftJoin('integration_site_installations as si', (join) => join.onRef('si.installation_id', '=', 'inst.id').on('si.site_id', '=', site.id))
    .where('inst.organization_id', '=', site.organization_id)
    .where('inst.status', '=', 'active')
    .where((eb) => eb.or([eb('si.status', '=', 'active'), eb.and([eb('si.status', 'is', null), eb('inst.site_selection', '=', 'all')])]));
}

/**
 * A stamp that changes whenever what an integration answers for a target may change: its version,
 * and the last update of the integration, its installation and its installation on the target.
 */
export function answerStamp(version: number | string, ...updated: (Date | string | null)[]): string {
  return `${version}.${Math.max(...updated.map((d) => (d ? new Date(d).getTime() : 0))).toString(36)}`;
}

/**
 * Whether an integration grant reaches a site: only an installation token, only while the
 * installation is active, only a site of its organization that it covers (all sites, or the
 * site installed on and active there).
 */
export async function grantCoversSite(db: Db, grant: IntegrationGrant, site: SiteRow): Promise<boolean> {
  if (!grant.installationId) return false;
  const row = await installationsCoveringSite(db, site).select('inst.id').where('inst.id', '=', grant.installationId).where('inst.integration_id', '=', grant.integrationId).executeTakeFirst();
  return row !== undefined;
}
