import type { SamlProviderRow } from '../platform/db/schema.ts';
import type { Membership } from '../platform/policy.ts';
import type { Urls } from '../platform/urls.ts';
import { presentTeam } from '../teams/presenter.ts';
import type { TeamView } from '../teams/store.ts';
import { providerStatus, serviceUrls } from './urls.ts';

export function presentSamlProvider(urls: Urls, row: SamlProviderRow, team: TeamView | undefined, caller: Membership) {
  return {
    object: 'saml-provider' as const,
    id: row.id,
    label: row.label,
    // The official schema requires these; until the administrator sets them they read as "nothing".
    ssoURL: row.sso_url ?? 'about:blank',
    entityID: row.entity_id ?? '',
    certificate: row.certificate ?? '',
    ...(team ? { defaultTeam: presentTeam(team, caller) } : {}),
    defaultRole: row.default_role,
    createdAt: row.created_at.toISOString(),
    status: providerStatus(row),
    service: serviceUrls(urls, row.id),
    urls: { location: urls.api(`/orgs/${encodeURIComponent(row.organization_id)}/saml/${encodeURIComponent(row.id)}`) },
  };
}
