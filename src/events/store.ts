import { sql } from 'kysely';
import type { Db } from '../platform/db/database.ts';
import { json } from '../platform/db/database.ts';

/**
 * The SQL of the integration events outbox: the installations an event reaches (each of one
 * organization), the events, and the delivery leases of installations.
 */

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

/** Whether the installation, of that integration, covers the site. */
export async function installationCoversSite(db: Db, site: { id: string; organization_id: string }, installationId: string, integrationId: string): Promise<boolean> {
  const row = await installationsCoveringSite(db, site).select('inst.id').where('inst.id', '=', installationId).where('inst.integration_id', '=', integrationId).executeTakeFirst();
  return row !== undefined;
}

export interface OutboxEvent {
  id: string;
  integrationId: string;
  installationId: string;
  spaceId: string | null;
  payload: unknown;
}

/** Writes events, due at once. */
export async function insertEvents(db: Db, events: OutboxEvent[], now: Date): Promise<void> {
  await db
    .insertInto('integration_events')
    .values(
      events.map((e) => ({
        id: e.id,
        integration_id: e.integrationId,
        installation_id: e.installationId,
        space_id: e.spaceId,
        payload: json(e.payload),
        next_attempt_at: now,
        created_at: now,
        delivered_at: null,
      })),
    )
    .execute();
}

/** Removes events created before `before` that are no longer pending, and expired integration tokens. */
export async function deleteOldEvents(db: Db, before: Date): Promise<number> {
  const result = await db.deleteFrom('integration_events').where('created_at', '<', before).where('status', '!=', 'pending').executeTakeFirst();
  await db.deleteFrom('integration_tokens').where('expires_at', '<', new Date()).execute();
  return Number(result.numDeletedRows ?? 0);
}

/** Takes the delivery lease of an installation (one deliverer at a time keeps its events in order). */
export async function takeLease(db: Db, installationId: string, ms: number): Promise<boolean> {
  const now = new Date();
  const result = await sql<{ installation_id: string }>`
    INSERT INTO integration_delivery_leases (installation_id, until) VALUES (${installationId}, ${new Date(now.getTime() + ms)})
    ON CONFLICT (installation_id) DO UPDATE SET until = EXCLUDED.until WHERE integration_delivery_leases.until < ${now}
    RETURNING installation_id`.execute(db);
  return result.rows.length === 1;
}

export async function releaseLease(db: Db, installationId: string): Promise<void> {
  await sql`DELETE FROM integration_delivery_leases WHERE installation_id = ${installationId}`.execute(db);
}

export async function renewLease(db: Db, installationId: string, ms: number): Promise<void> {
  await sql`UPDATE integration_delivery_leases SET until = ${new Date(Date.now() + ms)} WHERE installation_id = ${installationId}`.execute(db);
}
