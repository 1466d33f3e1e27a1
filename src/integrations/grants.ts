import { randomBytes } from 'node:crypto';
import type { FastifyRequest } from 'fastify';
import { hashToken } from '../platform/auth.ts';
import type { IntegrationGrant } from '../platform/context.ts';
import type { Db } from '../platform/db/database.ts';
import type { Role, RoleOrGuest, SpaceRow, UserRow } from '../platform/db/schema.ts';
import { ForbiddenError } from '../platform/errors.ts';
import * as store from './store.ts';

/** Tokens Folio gives integrations start with this, so authentication knows where to look them up. */
export const INTEGRATION_TOKEN_PREFIX = 'folio_int_';
/** How long an integration or installation token lives (the runtime gets fresh ones per event). */
export const INTEGRATION_TOKEN_TTL_MS = 60 * 60 * 1000;

/**
 * An integration token acts as the integration's own user, restricted to the integration's scopes,
 * and for an installation token to the installation's targets. The integration's user is a member
 * of no organization, so every check that goes by membership refuses it; only the checks below
 * grant anything.
 */
export type { IntegrationGrant };

export async function issueIntegrationToken(db: Db, integrationId: string, installationId: string | null): Promise<string> {
  const token = INTEGRATION_TOKEN_PREFIX + randomBytes(30).toString('base64url');
  const now = new Date();
  await store.insertToken(db, integrationId, installationId, hashToken(token), now, new Date(now.getTime() + INTEGRATION_TOKEN_TTL_MS));
  return token;
}

/** The user and grant of a live integration token, or undefined. */
export async function authenticateIntegrationToken(db: Db, hash: string): Promise<{ user: UserRow; grant: IntegrationGrant } | undefined> {
  const row = await store.findLiveToken(db, hash);
  if (!row) return undefined;
  const { integration_id, integration_name, scopes, installation_id, live_installation, ...user } = row;
  // A token of an uninstalled installation is dead (its row cascades away; this covers a race).
  if (installation_id && !live_installation) return undefined;
  return { user, grant: { integrationId: integration_id, integrationName: integration_name, installationId: installation_id, scopes: scopes as string[] } };
}

/** Reads sent as POST (their input is a body): computing content stores nothing (official scope `space:read`). */
const COMPUTED_READS = new Set(['/v1/spaces/:spaceId/content/computed/document', '/v1/spaces/:spaceId/content/computed/revision']);

/**
 * Routes an integration token may call at all; the services then check the targets. Anything
 * else (tokens, organizations, other integrations) is refused here.
 */
export function assertIntegrationRoute(req: FastifyRequest, grant: IntegrationGrant): void {
  const url = req.routeOptions.url ?? '';
  const params = (req.params ?? {}) as Record<string, string>;
  if (url === '/v1/user' && req.method === 'GET') return;
  if (grant.installationId && url.startsWith('/v1/spaces/:spaceId')) {
    if (req.method === 'GET' || req.method === 'HEAD' || COMPUTED_READS.has(url)) return;
    // Writes need the scope of what they change: the space itself (title, visibility, …) is its
    // metadata, everything under it (pages, change requests, comments) its content.
    const scope = url === '/v1/spaces/:spaceId' ? 'space:metadata:write' : 'space:content:write';
    if (grant.scopes.includes(scope)) return;
    throw new ForbiddenError(`This integration token lacks the ${scope} scope`);
  }
  if (grant.installationId && url.startsWith('/v1/orgs/:organizationId/sites/:siteId')) {
    // Which site is decided by the sites area (the installation must cover it); which calls, here.
    const operation = (req.routeOptions.schema as { operationId?: string } | undefined)?.operationId ?? '';
    const scopes = SITE_OPERATION_SCOPES[operation];
    if (scopes?.some((scope) => grant.scopes.includes(scope))) return;
    if (scopes) throw new ForbiddenError(`This integration token lacks the ${scopes.join(' or ')} scope`);
    throw new ForbiddenError(`An integration token cannot call ${req.method} ${url}: on sites it reads metadata (site:metadata:read) and the adaptive schema (site:adaptive:read, site:adaptive:write)`);
  }
  if (url.startsWith('/v1/integrations/:integrationName') && params.integrationName === grant.integrationName) {
    if (url.includes(':installationId') && grant.installationId && params.installationId !== grant.installationId) {
      throw new ForbiddenError('An installation token can only read its own installation');
    }
    if (req.method === 'GET' || url.endsWith('/tokens')) return;
  }
  throw new ForbiddenError(`An integration token cannot call ${req.method} ${url}: it only reaches the spaces of its installation and its own integration`);
}

/**
 * The site operations an installation token may call, with the scopes that allow each (any one).
 * Share links and publishing auth hold secrets and are left out; every other write is refused.
 */
const SITE_OPERATION_SCOPES: Record<string, string[]> = {
  ...Object.fromEntries(
    [
      'getSiteById',
      'getSiteStructure',
      'listSiteSpaces',
      'listSiteSections',
      'listSiteSectionGroups',
      'getSiteCustomizationById',
      'getSiteSpaceCustomizationById',
      'listSiteRedirects',
      'getSiteRedirectBySource',
      'getPublishedContentSite',
      'listSiteIntegrations',
      'listSiteIntegrationScripts',
    ].map((op) => [op, ['site:metadata:read']]),
  ),
  getSiteAdaptiveSchema: ['site:adaptive:read', 'site:adaptive:write'],
  listSiteAdaptiveTemplateConditions: ['site:adaptive:read', 'site:adaptive:write'],
  updateSiteAdaptiveSchema: ['site:adaptive:write'],
};


/** The role an installation's scopes give on content. */
export function roleFromScopes(scopes: string[]): RoleOrGuest {
  if (scopes.includes('space:content:write') || scopes.includes('space:metadata:write')) return 'edit';
  if (scopes.includes('space:content:read') || scopes.includes('space:metadata:read')) return 'read';
  return null;
}

/**
 * The role an integration grant gives on a space: only an installation token, only while the
 * installation is active, only on a space of the installation's organization that it covers
 * (all spaces, or the selected ones with an active space installation).
 */
export async function grantRoleOnSpace(db: Db, grant: IntegrationGrant, space: SpaceRow): Promise<RoleOrGuest> {
  if (!grant.installationId) return null;
  if (!(await store.installationCovers(db, space, grant.integrationId, grant.installationId))) return null;
  return roleFromScopes(grant.scopes) as Role | null;
}
