import type { SamlProviderRow } from '../platform/db/schema.ts';
import type { Urls } from '../platform/urls.ts';

/**
 * The browser endpoints of a provider, outside /v1 (they answer HTML and redirects, not JSON):
 * start, assertion consumer service, and Folio's SP metadata, whose URL is also Folio's entity id
 * for this provider (one per provider, so an identity provider can tell two organizations apart).
 */
export function serviceUrls(urls: Urls, providerId: string) {
  const base = `${urls.api('').replace(/\/v1$/, '')}/sso/saml/${encodeURIComponent(providerId)}`;
  return { acsURL: `${base}/acs`, startURL: `${base}/start`, entityID: `${base}/metadata` };
}

/** Active once everything a login needs is set. */
export function providerStatus(row: Pick<SamlProviderRow, 'entity_id' | 'certificate' | 'sso_url'>): 'active' | 'pending' {
  return row.entity_id && row.certificate && row.sso_url ? 'active' : 'pending';
}
