import type { IntegrationGrant } from '../platform/context.ts';
import type { Db } from '../platform/db/database.ts';
import type { SiteRow } from '../platform/db/schema.ts';
import { installationCoversSite } from './store.ts';

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
  return installationCoversSite(db, site, grant.installationId, grant.integrationId);
}
