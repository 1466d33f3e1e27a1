import type { CollectionRow, RoleOrGuest } from '../platform/db/schema.ts';
import { collectionPermissions } from '../platform/policy.ts';
import type { Urls } from '../platform/urls.ts';
import type { CollectionResource } from './schemas.ts';

export function presentCollection(urls: Urls, c: CollectionRow, role: RoleOrGuest): CollectionResource {
  return {
    object: 'collection',
    id: c.id,
    title: c.title,
    ...(c.description ? { description: c.description } : {}),
    organization: c.organization_id,
    ...(c.parent_id ? { parent: c.parent_id } : {}),
    defaultLevel: c.default_level,
    urls: { location: urls.api(`/collections/${c.id}`), app: urls.app(`/c/${c.id}`) },
    permissions: collectionPermissions(role),
  };
}
