import type { OpenAPISpecRow, OpenAPISpecVersionRow } from '../platform/db/schema.ts';
import { openAPISpecPermissions, type Membership } from '../platform/policy.ts';
import type { Urls } from '../platform/urls.ts';
import type { OpenAPISpecResource } from './schemas.ts';

export function specPath(organizationId: string, slug: string): string {
  return `/orgs/${encodeURIComponent(organizationId)}/openapi/${encodeURIComponent(slug)}`;
}

export function presentSpec(urls: Urls, spec: OpenAPISpecRow, membership: Membership | undefined): OpenAPISpecResource {
  return {
    object: 'openapi-spec',
    id: spec.id,
    createdAt: spec.created_at.toISOString(),
    updatedAt: spec.updated_at.toISOString(),
    slug: spec.slug,
    ...(spec.source_url ? { sourceURL: spec.source_url } : {}),
    processingState: spec.processing_state,
    visibility: spec.visibility,
    ...(spec.last_version_id ? { lastVersion: spec.last_version_id } : {}),
    ...(spec.last_processed_at ? { lastProcessedAt: spec.last_processed_at.toISOString() } : {}),
    ...(spec.last_error_code ? { lastProcessErrorCode: spec.last_error_code } : {}),
    lastProcessedErrors: spec.last_errors,
    lastProcessedErrorCount: spec.last_error_count,
    permissions: openAPISpecPermissions(membership, spec.visibility),
    urls: {
      location: urls.api(specPath(spec.organization_id, spec.slug)),
      app: urls.app(`/o/${encodeURIComponent(spec.organization_id)}/openapi/${encodeURIComponent(spec.slug)}`),
    },
  };
}

export function presentVersion(urls: Urls, spec: OpenAPISpecRow, version: OpenAPISpecVersionRow) {
  return {
    object: 'openapi-spec-version' as const,
    id: version.id,
    createdAt: version.created_at.toISOString(),
    url: version.url,
    urls: { location: urls.api(`${specPath(spec.organization_id, spec.slug)}/versions/${encodeURIComponent(version.id)}`) },
  };
}
