import type { Static } from '@sinclair/typebox';
import { sql } from 'kysely';
import { json, type Db } from '../platform/db/database.ts';
import type { InstallationRow, IntegrationRow, OrganizationRow, SiteInstallationRow, SpaceInstallationRow } from '../platform/db/schema.ts';
import { newId } from '../platform/ids.ts';
import { paginate, type Page, type PageRequest } from '../platform/paging.ts';
import { installationsCoveringSite, installationsCoveringSpace } from '../events/store.ts';
import type { IntegrationListQuery } from './schemas.ts';

/**
 * The SQL of integrations. The catalogue is shared by every organization: an integration is found
 * by its name, and what a caller may see of it is the policy's to decide (catalogue.ts). Everything
 * an organization owns is reached through its organization id: its installations, its spaces and
 * sites. An installation's space and site installations, and an integration's events, are reached
 * through an installation (or integration) found first.
 */

// ---------------------------------------------------------------- organizations

/** An organization by id or subdomain (hostname); the id wins when both match. */
export async function findOrganizationByIdOrHostname(db: Db, idOrHostname: string): Promise<OrganizationRow | undefined> {
  return db
    .selectFrom('organizations')
    .selectAll()
    .where((eb) => eb.or([eb('id', '=', idOrHostname), eb('hostname', '=', idOrHostname)]))
    .orderBy(sql`id = ${idOrHostname}`, 'desc')
    .executeTakeFirst();
}

/** The organization that publishes an integration (it always exists: deleting it deletes its integrations). */
export async function owningOrganization(db: Db, organizationId: string): Promise<OrganizationRow> {
  return db.selectFrom('organizations').selectAll().where('id', '=', organizationId).executeTakeFirstOrThrow();
}

// ---------------------------------------------------------------- the catalogue

export async function findIntegrationByName(db: Db, name: string): Promise<IntegrationRow | undefined> {
  return db.selectFrom('integrations').selectAll().where('name', '=', name).executeTakeFirst();
}

/** Columns of the integrations table a publication writes, already checked and encoded. */
export type PublishedColumns = Record<string, unknown>;

/** A new version of an integration of `organizationId`. */
export async function updateIntegration(db: Db, organizationId: string, integrationId: string, columns: PublishedColumns): Promise<IntegrationRow> {
  return db
    .updateTable('integrations')
    .set({ ...columns, version: sql`version + 1`, updated_at: new Date() } as never)
    .where('organization_id', '=', organizationId)
    .where('id', '=', integrationId)
    .returningAll()
    .executeTakeFirstOrThrow();
}

/** A new integration of `organizationId` and its bot user (the author of what it writes). Run it in a transaction. */
export async function insertIntegration(db: Db, organizationId: string, integration: { id: string; name: string; title: string; columns: PublishedColumns }): Promise<IntegrationRow> {
  const now = new Date();
  const botId = newId();
  await db
    .insertInto('users')
    .values({ id: botId, email: `integration-${integration.id.toLowerCase()}@integrations.folio.invalid`, display_name: integration.title, photo_url: null, created_at: now })
    .execute();
  return db
    .insertInto('integrations')
    .values({
      id: integration.id,
      name: integration.name,
      organization_id: organizationId,
      bot_user_id: botId,
      title: integration.title,
      created_at: now,
      updated_at: now,
      icon: null,
      script: null,
      secrets_encrypted: null,
      content_security_policy: null,
      dev_tunnel_url: null,
      ...integration.columns,
    } as never)
    .returningAll()
    .executeTakeFirstOrThrow();
}

export async function deleteIntegration(db: Db, organizationId: string, integrationId: string): Promise<void> {
  await db.deleteFrom('integrations').where('organization_id', '=', organizationId).where('id', '=', integrationId).execute();
}

export async function setDevelopmentTunnel(db: Db, organizationId: string, integrationId: string, tunnelUrl: string | null, all: boolean): Promise<void> {
  await db
    .updateTable('integrations')
    .set({ dev_tunnel_url: tunnelUrl, dev_all: all, updated_at: new Date() })
    .where('organization_id', '=', organizationId)
    .where('id', '=', integrationId)
    .execute();
}

/** The filters of a catalogue listing (`IntegrationListQuery`). */
export type CatalogueFilters = { [K in keyof typeof IntegrationListQuery]?: Static<(typeof IntegrationListQuery)[K]> };

/**
 * Who a catalogue listing is for: an organization (every public integration plus those it owns
 * or has installed), or a user (public ones, those of organizations where the user has a role,
 * and the unlisted ones of organizations the user is a guest of).
 */
export type CatalogueReader = { organizationId: string } | { userId: string };

const escapeLike = (text: string) => text.replace(/[\\%_]/g, (c) => `\\${c}`);

export async function listCatalogue(db: Db, reader: CatalogueReader, filters: CatalogueFilters, page: PageRequest) {
  let base = db.selectFrom('integrations').selectAll();
  if ('organizationId' in reader) {
    const organizationId = reader.organizationId;
    base = base.where((eb) =>
      eb.or([
        eb('visibility', '=', 'public'),
        eb('organization_id', '=', organizationId),
        eb('id', 'in', db.selectFrom('integration_installations').select('integration_id').where('organization_id', '=', organizationId)),
      ]),
    );
  } else {
    const memberships = db.selectFrom('members').select('organization_id').where('user_id', '=', reader.userId).where('disabled', '=', false);
    base = base.where((eb) =>
      eb.or([
        eb('visibility', '=', 'public'),
        eb('organization_id', 'in', memberships.where('role', 'is not', null)),
        eb.and([eb('visibility', '=', 'unlisted'), eb('organization_id', 'in', memberships)]),
      ]),
    );
  }
  if (filters.search) {
    const like = `%${escapeLike(filters.search)}%`;
    base = base.where((eb) => eb.or([eb('name', 'ilike', like), eb('title', 'ilike', like), eb('description', 'ilike', like)]));
  }
  if (filters.category) base = base.where(sql<boolean>`categories ? ${filters.category}`);
  if (filters.scope) base = base.where(sql<boolean>`scopes ? ${filters.scope}`);
  const target = filters.target;
  if (target) base = base.where((eb) => eb.or([eb('target', '=', target), eb('target', '=', 'all')]));
  if (filters.blocks !== undefined) base = base.where(sql<boolean>`(jsonb_array_length(blocks) > 0) = ${filters.blocks}`);
  if (filters.contentSources !== undefined) base = base.where(sql<boolean>`(jsonb_array_length(content_sources) > 0) = ${filters.contentSources}`);
  if (filters.blockDomain) {
    // A block unfurls URLs of a domain when one of its urlUnfurl entries names that host.
    const domain = filters.blockDomain.toLowerCase();
    base = base.where(sql<boolean>`EXISTS (SELECT 1 FROM jsonb_array_elements(blocks) b, jsonb_array_elements_text(coalesce(b->'urlUnfurl', '[]'::jsonb)) u
      WHERE lower(u) = ${domain} OR lower(u) LIKE ${`%://${domain}%`} OR lower(u) LIKE ${`%.${domain}%`})`);
  }
  const owner = filters.owner;
  if (owner) {
    base = base.where('organization_id', 'in', db.selectFrom('organizations').select('id').where((eb) => eb.or([eb('id', '=', owner), eb('hostname', '=', owner)])));
  }
  return paginate(base, { kind: 'integrations:name', sortExpr: sql.ref('name'), sortType: 'text', seqExpr: sql.ref('seq'), direction: 'asc' }, page, (r) => r.name);
}

// ---------------------------------------------------------------- installations

/** Locks the integration against deletion until the transaction ends; undefined when it is gone. */
export async function lockIntegrationRow(db: Db, integrationId: string): Promise<{ id: string } | undefined> {
  return db.selectFrom('integrations').select('id').where('id', '=', integrationId).forKeyShare().executeTakeFirst();
}

export async function insertInstallation(db: Db, organizationId: string, integrationId: string, status: InstallationRow['status']): Promise<InstallationRow> {
  const now = new Date();
  return db
    .insertInto('integration_installations')
    .values({ id: newId(), integration_id: integrationId, organization_id: organizationId, status, created_at: now, updated_at: now })
    .returningAll()
    .executeTakeFirstOrThrow();
}

/** An installation of an integration (in whichever organization installed it). */
export async function findInstallation(db: Db, integrationId: string, installationId: string): Promise<InstallationRow | undefined> {
  return db.selectFrom('integration_installations').selectAll().where('id', '=', installationId).where('integration_id', '=', integrationId).executeTakeFirst();
}

/** Which installations of an integration a listing shows: all, one, or those of the organizations a user administers. */
export type InstallationReader = { all: true } | { installationId: string } | { adminUserId: string };

export async function listInstallations(db: Db, integrationId: string, reader: InstallationReader, externalId: string | undefined, page: PageRequest) {
  let base = db.selectFrom('integration_installations').selectAll().where('integration_id', '=', integrationId);
  if ('installationId' in reader) base = base.where('id', '=', reader.installationId);
  else if ('adminUserId' in reader) {
    base = base.where('organization_id', 'in', db.selectFrom('members').select('organization_id').where('user_id', '=', reader.adminUserId).where('role', '=', 'admin').where('disabled', '=', false));
  }
  if (externalId !== undefined) base = base.where(sql<boolean>`external_ids ? ${externalId}`);
  return paginate(base, { kind: 'installations:seq', sortExpr: null, seqExpr: sql.ref('seq'), direction: 'asc' }, page);
}

/** The installations of an organization, with their integration's name, optionally matching a search of names and titles. */
export async function listOrganizationInstallations(db: Db, organizationId: string, search: string | undefined, page: PageRequest) {
  let base = db
    .selectFrom('integration_installations as inst')
    .innerJoin('integrations as i', 'i.id', 'inst.integration_id')
    .selectAll('inst')
    .select('i.name as integration_name')
    .where('inst.organization_id', '=', organizationId);
  if (search) {
    const like = `%${escapeLike(search)}%`;
    base = base.where((eb) => eb.or([eb('i.name', 'ilike', like), eb('i.title', 'ilike', like)]));
  }
  return paginate(base, { kind: 'org-installations:seq', sortExpr: null, seqExpr: sql.ref('inst.seq'), direction: 'asc' }, page);
}

export interface InstallationChanges {
  externalIds?: string[] | undefined;
  configuration?: Record<string, unknown> | undefined;
  space_selection?: 'all' | 'selected' | undefined;
  site_selection?: 'all' | 'selected' | undefined;
}

export async function updateInstallation(db: Db, organizationId: string, installationId: string, changes: InstallationChanges, status: InstallationRow['status']): Promise<InstallationRow> {
  return db
    .updateTable('integration_installations')
    .set({
      ...(changes.externalIds !== undefined ? { external_ids: json(changes.externalIds) } : {}),
      ...(changes.configuration !== undefined ? { configuration: json(changes.configuration) } : {}),
      ...(changes.space_selection !== undefined ? { space_selection: changes.space_selection } : {}),
      ...(changes.site_selection !== undefined ? { site_selection: changes.site_selection } : {}),
      status,
      updated_at: new Date(),
    })
    .where('organization_id', '=', organizationId)
    .where('id', '=', installationId)
    .returningAll()
    .executeTakeFirstOrThrow();
}

/** Deletes an installation; its space and site installations and its tokens go with it (foreign keys). */
export async function deleteInstallation(db: Db, organizationId: string, installationId: string): Promise<void> {
  await db.deleteFrom('integration_installations').where('organization_id', '=', organizationId).where('id', '=', installationId).execute();
}

/** How many spaces each installation covers: its space installations, or every live space of its organization ("all"). */
export async function installationSpaceCounts(db: Db, installations: InstallationRow[]): Promise<Map<string, number>> {
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

// ---------------------------------------------------------------- space and site installations

/**
 * What an installation is installed on, beyond its organization: spaces or sites. The two tables
 * have the same columns but the target's id, so each query below serves both.
 */
export type Target = 'space' | 'site';

/** The row of a space or site installation. */
export interface TargetInstallationRows {
  space: SpaceInstallationRow;
  site: SiteInstallationRow;
}

const TARGET_TABLE = { space: 'integration_space_installations', site: 'integration_site_installations' } as const;
const TARGET_COLUMN = { space: 'space_id', site: 'site_id' } as const;
const TARGET_SELECTION = { space: 'space_selection', site: 'site_selection' } as const;

export async function insertTargetInstallation<T extends Target>(
  db: Db,
  target: T,
  installationId: string,
  targetId: string,
  status: InstallationRow['status'],
): Promise<TargetInstallationRows[T]>;
export async function insertTargetInstallation(db: Db, target: Target, installationId: string, targetId: string, status: InstallationRow['status']) {
  const now = new Date();
  const row = { installation_id: installationId, status, created_at: now, updated_at: now };
  return target === 'space'
    ? db.insertInto('integration_space_installations').values({ ...row, space_id: targetId }).returningAll().executeTakeFirstOrThrow()
    : db.insertInto('integration_site_installations').values({ ...row, site_id: targetId }).returningAll().executeTakeFirstOrThrow();
}

export async function findTargetInstallation<T extends Target>(db: Db, target: T, installationId: string, targetId: string): Promise<TargetInstallationRows[T] | undefined> {
  const t: Target = target;
  return db.selectFrom(TARGET_TABLE[t]).selectAll().where('installation_id', '=', installationId).where(TARGET_COLUMN[t], '=', targetId).executeTakeFirst();
}

/** Every space or site installation of an installation. */
export async function targetInstallationsOf<T extends Target>(db: Db, target: T, installationId: string): Promise<TargetInstallationRows[T][]> {
  const t: Target = target;
  return db.selectFrom(TARGET_TABLE[t]).selectAll().where('installation_id', '=', installationId).execute();
}

export async function updateTargetInstallation<T extends Target>(
  db: Db,
  target: T,
  installationId: string,
  targetId: string,
  changes: Pick<InstallationChanges, 'externalIds' | 'configuration'>,
  status: InstallationRow['status'],
): Promise<TargetInstallationRows[T]> {
  const t: Target = target;
  return db
    .updateTable(TARGET_TABLE[t])
    .set({
      ...(changes.externalIds !== undefined ? { external_ids: json(changes.externalIds) } : {}),
      ...(changes.configuration !== undefined ? { configuration: json(changes.configuration) } : {}),
      status,
      updated_at: new Date(),
    })
    .where('installation_id', '=', installationId)
    .where(TARGET_COLUMN[t], '=', targetId)
    .returningAll()
    .executeTakeFirstOrThrow();
}

export async function deleteTargetInstallation(db: Db, target: Target, installationId: string, targetId: string): Promise<void> {
  await db.deleteFrom(TARGET_TABLE[target]).where('installation_id', '=', installationId).where(TARGET_COLUMN[target], '=', targetId).execute();
}

/** Space or site installations of some installations, optionally those naming an external id. */
export async function listTargetInstallations<T extends Target>(
  db: Db,
  target: T,
  installationIds: string[],
  externalId: string | undefined,
  page: PageRequest,
): Promise<Page<TargetInstallationRows[T]> & { count: number }> {
  const t: Target = target;
  let base = db.selectFrom(TARGET_TABLE[t]).selectAll().where('installation_id', 'in', installationIds);
  if (externalId !== undefined) base = base.where(sql<boolean>`external_ids ? ${externalId}`);
  return paginate(base, { kind: `${target}-installations:seq`, sortExpr: null, seqExpr: sql.ref('seq'), direction: 'asc' }, page);
}

/** Integrations installed on a space or site of `organizationId`: through its own installation, or an installation covering all of them. */
export async function integrationsInstalledOn(db: Db, organizationId: string, target: Target, targetId: string, page: PageRequest) {
  const targetColumn = sql.ref<string | null>(`si.${TARGET_COLUMN[target]}`);
  const base = db
    .selectFrom('integrations')
    .selectAll()
    .where('id', 'in', (eb) =>
      eb
        .selectFrom('integration_installations as inst')
        .leftJoin(sql<{ installation_id: string }>`${sql.table(TARGET_TABLE[target])}`.as('si'), (join) => join.onRef('si.installation_id', '=', 'inst.id').on(targetColumn, '=', targetId))
        .select('inst.integration_id')
        .where('inst.organization_id', '=', organizationId)
        .where((w) => w.or([w(targetColumn, 'is not', null), w(sql.ref(`inst.${TARGET_SELECTION[target]}`), '=', 'all')])),
    );
  return paginate(base, { kind: `${target}-integrations:name`, sortExpr: sql.ref('name'), sortType: 'text', seqExpr: sql.ref('seq'), direction: 'asc' }, page, (r) => r.name);
}

// ---------------------------------------------------------------- events

/** The delivered (or failed) events of an integration, newest first; of one installation when given. */
export async function listEvents(db: Db, integrationId: string, installationId: string | undefined, page: PageRequest) {
  let base = db.selectFrom('integration_events').selectAll().where('integration_id', '=', integrationId).where('status', '!=', 'pending');
  if (installationId) base = base.where('installation_id', '=', installationId);
  return paginate(base, { kind: 'integration-events:seq', sortExpr: null, seqExpr: sql.ref('seq'), direction: 'desc' }, page);
}

export async function findEvent(db: Db, integrationId: string, eventId: string) {
  return db.selectFrom('integration_events').selectAll().where('integration_id', '=', integrationId).where('id', '=', eventId).where('status', '!=', 'pending').executeTakeFirst();
}

// ---------------------------------------------------------------- delivery (dispatch.ts)

/** An integration by id, for an event's delivery (its job names the installation, not an organization). */
export async function findIntegrationById(db: Db, integrationId: string): Promise<IntegrationRow | undefined> {
  return db.selectFrom('integrations').selectAll().where('id', '=', integrationId).executeTakeFirst();
}

/** An installation by id, for an event's delivery. */
export async function findInstallationById(db: Db, installationId: string): Promise<InstallationRow | undefined> {
  return db.selectFrom('integration_installations').selectAll().where('id', '=', installationId).executeTakeFirst();
}

/** The integration of a name and, with an installation id, that installation of it (public endpoints). */
/**
 * The integration (and installation) a public endpoint request goes to; `answerable` says whether
 * the integration has anything to answer it: a published script or a development tunnel.
 */
export async function findEndpointTarget(
  db: Db,
  integrationName: string,
  installationId: string | undefined,
): Promise<{ integrationId: string; installationId?: string; answerable: boolean } | undefined> {
  const answerable = sql<boolean>`(i.script is not null or i.dev_tunnel_url is not null)`.as('answerable');
  if (installationId === undefined) {
    const row = await db.selectFrom('integrations as i').select(['i.id', answerable]).where('i.name', '=', integrationName).executeTakeFirst();
    return row && { integrationId: row.id, answerable: Boolean(row.answerable) };
  }
  const row = await db
    .selectFrom('integration_installations as inst')
    .innerJoin('integrations as i', 'i.id', 'inst.integration_id')
    .select(['inst.id', 'inst.integration_id', answerable])
    .where('inst.id', '=', installationId)
    .where('i.name', '=', integrationName)
    .executeTakeFirst();
  return row && { integrationId: row.integration_id, installationId: row.id, answerable: Boolean(row.answerable) };
}

/** The oldest event of an installation still to deliver. */
export async function nextPendingEvent(db: Db, installationId: string) {
  return db.selectFrom('integration_events').selectAll().where('installation_id', '=', installationId).where('status', '=', 'pending').orderBy('seq').limit(1).executeTakeFirst();
}

/** Records a delivery attempt: the event's outcome (`success`, `failed`), or its next attempt. */
export async function recordAttempt(
  db: Db,
  eventId: string,
  attempt: { attempts: number; logs: unknown } & ({ status: 'success' | 'failed'; deliveredAt: Date } | { nextAttemptAt: Date }),
): Promise<void> {
  const changes =
    'status' in attempt
      ? { status: attempt.status, attempts: attempt.attempts, logs: json(attempt.logs), delivered_at: attempt.deliveredAt }
      : { attempts: attempt.attempts, logs: json(attempt.logs), next_attempt_at: attempt.nextAttemptAt };
  await db.updateTable('integration_events').set(changes).where('id', '=', eventId).execute();
}

/** Records an event delivered at once (outside the outbox), with its outcome. */
export async function insertDeliveredEvent(
  db: Db,
  event: { id: string; integration_id: string; installation_id: string | null; space_id: string | null; payload: unknown },
  outcome: { ok: boolean; logs: unknown },
  at: Date,
): Promise<void> {
  await db
    .insertInto('integration_events')
    .values({
      id: event.id,
      integration_id: event.integration_id,
      installation_id: event.installation_id,
      space_id: event.space_id,
      payload: json(event.payload),
      status: outcome.ok ? 'success' : 'failed',
      attempts: 1,
      logs: json(outcome.logs),
      next_attempt_at: at,
      created_at: at,
      delivered_at: new Date(),
    })
    .execute();
}

/** Installations with events still to deliver. */
export async function installationsWithPendingEvents(db: Db): Promise<string[]> {
  const rows = await db.selectFrom('integration_events').select('installation_id').distinct().where('status', '=', 'pending').execute();
  return rows.flatMap((r) => (r.installation_id ? [r.installation_id] : []));
}

/** Whether a job of a type is queued or running. */
export async function jobWaiting(db: Db, type: string): Promise<boolean> {
  return !!(await db.selectFrom('jobs').select('id').where('type', '=', type).where('status', 'in', ['queued', 'running']).executeTakeFirst());
}

// ---------------------------------------------------------------- tokens, content sources, blocks, site scripts

/** Stores a token (its hash) of an integration, or of one of its installations. */
export async function insertToken(db: Db, integrationId: string, installationId: string | null, tokenHash: string, now: Date, expiresAt: Date): Promise<void> {
  await db.insertInto('integration_tokens').values({ token_hash: tokenHash, integration_id: integrationId, installation_id: installationId, created_at: now, expires_at: expiresAt }).execute();
}

/** A live token by its hash, with the integration's user and what it grants. */
export async function findLiveToken(db: Db, tokenHash: string) {
  return db
    .selectFrom('integration_tokens as t')
    .innerJoin('integrations as i', 'i.id', 't.integration_id')
    .innerJoin('users as u', 'u.id', 'i.bot_user_id')
    .leftJoin('integration_installations as inst', 'inst.id', 't.installation_id')
    .selectAll('u')
    .select(['i.id as integration_id', 'i.name as integration_name', 'i.scopes as scopes', 't.installation_id as installation_id', 'inst.id as live_installation'])
    .where('t.token_hash', '=', tokenHash)
    .where('t.expires_at', '>', new Date())
    .executeTakeFirst();
}

/** The content sources an integration declares. */
export async function findContentSources(db: Db, name: string) {
  return db.selectFrom('integrations').select(['id', 'name', 'content_sources']).where('name', '=', name).executeTakeFirst();
}

/** A published site by id. */
export async function findPublishedSite(db: Db, siteId: string) {
  return db.selectFrom('sites').select(['id', 'organization_id']).where('id', '=', siteId).where('published', '=', true).executeTakeFirst();
}

// ---------------------------------------------------------------- installations covering a space (events/coverage.ts)

type SpaceKey = { id: string; organization_id: string };

/** The first active installation of an integration that covers a space. */
export async function coveringInstallation(db: Db, space: SpaceKey, integrationId: string) {
  return installationsCoveringSpace(db, space).select(['inst.id']).where('inst.integration_id', '=', integrationId).orderBy('inst.seq').executeTakeFirst();
}

/** Whether an installation of an integration is active and covers a space. */
export async function installationCovers(db: Db, space: SpaceKey, integrationId: string, installationId: string): Promise<boolean> {
  return !!(await installationsCoveringSpace(db, space).select('inst.id').where('inst.id', '=', installationId).where('inst.integration_id', '=', integrationId).executeTakeFirst());
}

/** The integration of a name with its blocks, and its first active installation covering a space, with what their answers' freshness depends on. */
export async function coveringWithBlocks(db: Db, space: SpaceKey, name: string) {
  return installationsCoveringSpace(db, space)
    .innerJoin('integrations as i', 'i.id', 'inst.integration_id')
    .select(['i.id', 'i.blocks', 'i.version', 'i.updated_at', 'inst.id as installation_id', 'inst.updated_at as installation_updated', 'si.updated_at as space_updated'])
    .where('i.name', '=', name)
    .orderBy('inst.seq')
    .executeTakeFirst();
}

/** The active installations covering a site (installed on it, or on all sites) of integrations that install on sites; one of them with `installationId`. */
export async function siteIntegrationRows(db: Db, site: SpaceKey, installationId?: string) {
  let query = installationsCoveringSite(db, site)
    .innerJoin('integrations as i', 'i.id', 'inst.integration_id')
    .select([
      'inst.id as installation_id',
      'i.id as integration_id',
      'i.name',
      'i.version',
      'i.scopes',
      'i.content_security_policy',
      sql<boolean>`(i.script IS NOT NULL OR i.dev_tunnel_url IS NOT NULL)`.as('runnable'),
      'i.updated_at as integration_updated',
      'inst.updated_at as installation_updated',
      'si.updated_at as site_installation_updated',
    ])
    .where('i.target', 'in', ['all', 'site'])
    .orderBy('inst.seq');
  if (installationId !== undefined) query = query.where('inst.id', '=', installationId);
  return query.execute();
}
