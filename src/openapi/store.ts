import type { Db } from '../platform/db/database.ts';

/** SQL of OpenAPI specs; every query is scoped by organization. */

export function specsOf(db: Db, organizationId: string) {
  return db.selectFrom('openapi_specs').selectAll().where('organization_id', '=', organizationId);
}

export function findSpec(db: Db, organizationId: string, slug: string) {
  return specsOf(db, organizationId).where('slug', '=', slug).executeTakeFirst();
}

export function lockSpec(db: Db, organizationId: string, slug: string) {
  return specsOf(db, organizationId).where('slug', '=', slug).forUpdate().executeTakeFirst();
}

export function versionsOf(db: Db, organizationId: string, specId: string) {
  return db.selectFrom('openapi_spec_versions').selectAll().where('organization_id', '=', organizationId).where('spec_id', '=', specId);
}

export function findVersion(db: Db, organizationId: string, specId: string, versionId: string) {
  return versionsOf(db, organizationId, specId).where('id', '=', versionId).executeTakeFirst();
}
