import type { Static } from '@sinclair/typebox';
import { presentOrganization } from '../orgs/presenter.ts';
import type { InstallationRow, IntegrationEventRow, IntegrationRow, OrganizationRow, SiteInstallationRow, SpaceInstallationRow } from '../platform/db/schema.ts';
import { integrationPermissions, type Membership } from '../platform/policy.ts';
import type { Urls } from '../platform/urls.ts';
import type { EventWithTrace, Installation, Integration, IntegrationEvent, SiteInstallation, SpaceInstallation } from './schemas.ts';

/** The media type of a base64 image, from its first bytes. */
function imageType(base64: string): string {
  const head = Buffer.from(base64.slice(0, 16), 'base64');
  if (head[0] === 0x89 && head[1] === 0x50) return 'image/png';
  if (head[0] === 0xff && head[1] === 0xd8) return 'image/jpeg';
  return 'image/gif';
}

export const dataUri = (base64: string) => `data:${imageType(base64)};base64,${base64}`;

export function publicEndpoint(urls: Urls, integration: Pick<IntegrationRow, 'name'>, installationId?: string): string {
  const base = urls.api(`/integrations/${encodeURIComponent(integration.name)}`);
  return installationId ? `${base}/installations/${encodeURIComponent(installationId)}/public` : `${base}/public`;
}

export function presentIntegration(urls: Urls, row: IntegrationRow, owner: OrganizationRow, membership: Membership | undefined): Static<typeof Integration> {
  const location = urls.api(`/integrations/${encodeURIComponent(row.name)}`);
  return {
    object: 'integration',
    name: row.name,
    version: row.version,
    title: row.title,
    ...(row.description ? { description: row.description } : {}),
    ...(row.summary ? { summary: row.summary } : {}),
    previewImages: (row.preview_images as string[]).map(dataUri),
    target: row.target,
    verified: false,
    visibility: row.visibility,
    scopes: row.scopes as Static<typeof Integration>['scopes'],
    categories: row.categories as Static<typeof Integration>['categories'],
    blocks: row.blocks as Static<typeof Integration>['blocks'],
    contentSources: row.content_sources as Static<typeof Integration>['contentSources'],
    configurations: row.configurations as Static<typeof Integration>['configurations'],
    externalLinks: row.external_links as Static<typeof Integration>['externalLinks'],
    owner: presentOrganization(urls, owner, membership),
    urls: {
      location,
      ...(row.icon ? { icon: dataUri(row.icon) } : {}),
      app: urls.app(`/integrations/${encodeURIComponent(row.name)}`),
      assets: `${location}/assets`,
      publicEndpoint: publicEndpoint(urls, row),
      publicContentEndpoint: publicEndpoint(urls, row),
    },
    permissions: { admin: integrationPermissions(membership, row.visibility).admin },
    ...(row.content_security_policy !== null ? { contentSecurityPolicy: row.content_security_policy as string } : {}),
  };
}

export function presentInstallation(urls: Urls, integration: Pick<IntegrationRow, 'name'>, row: InstallationRow, spaces: number): Static<typeof Installation> {
  const endpoint = publicEndpoint(urls, integration, row.id);
  return {
    id: row.id,
    status: row.status,
    space_selection: row.space_selection,
    site_selection: row.site_selection,
    spaces,
    configuration: row.configuration as Record<string, unknown>,
    createdAt: row.created_at.toISOString(),
    updatedAt: row.updated_at.toISOString(),
    urls: {
      location: urls.api(`/integrations/${encodeURIComponent(integration.name)}/installations/${encodeURIComponent(row.id)}`),
      app: urls.app(`/o/${encodeURIComponent(row.organization_id)}/integrations/${encodeURIComponent(integration.name)}`),
      publicEndpoint: endpoint,
      publicContentEndpoint: endpoint,
    },
    externalIds: row.external_ids as string[],
    target: { organization: row.organization_id },
  };
}

/** What space and site installations share: the installation, its state there, and its addresses. */
function targetInstallation(urls: Urls, integration: Pick<IntegrationRow, 'name'>, row: SpaceInstallationRow | SiteInstallationRow, path: string) {
  const endpoint = publicEndpoint(urls, integration, row.installation_id);
  return {
    integration: integration.name,
    installation: row.installation_id,
    status: row.status,
    configuration: row.configuration as Record<string, unknown>,
    externalIds: row.external_ids as string[],
    urls: {
      location: urls.api(`/integrations/${encodeURIComponent(integration.name)}/installations/${encodeURIComponent(row.installation_id)}/${path}`),
      publicEndpoint: endpoint,
      publicContentEndpoint: endpoint,
    },
  };
}

export function presentSpaceInstallation(urls: Urls, integration: Pick<IntegrationRow, 'name'>, row: SpaceInstallationRow, space: Static<typeof SpaceInstallation>['space']): Static<typeof SpaceInstallation> {
  return { ...targetInstallation(urls, integration, row, `spaces/${encodeURIComponent(row.space_id)}`), space };
}

export function presentEvent(row: IntegrationEventRow): Static<typeof IntegrationEvent> {
  return {
    id: row.id,
    integrationId: row.integration_id,
    ...(row.installation_id ? { installationId: row.installation_id } : {}),
    createdAt: row.created_at.toISOString(),
    payload: row.payload as Static<typeof IntegrationEvent>['payload'],
    status: row.status === 'success' ? 'success' : 'failed',
  };
}

export function presentEventWithTrace(row: IntegrationEventRow): Static<typeof EventWithTrace> {
  return { event: presentEvent(row), trace: { logs: row.logs as Static<typeof EventWithTrace>['trace']['logs'] } };
}

export function presentSiteInstallation(urls: Urls, integration: Pick<IntegrationRow, 'name'>, row: SiteInstallationRow, site: Static<typeof SiteInstallation>['site']): Static<typeof SiteInstallation> {
  return { ...targetInstallation(urls, integration, row, `sites/${encodeURIComponent(row.site_id)}`), site };
}
