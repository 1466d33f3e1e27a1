import type { UserRow } from '../platform/db/schema.ts';
import type { UserResource } from '../platform/schemas.ts';
import type { Urls } from '../platform/urls.ts';

/** The public user object. Email is included: Folio users are the people of the caller's organizations. */
export function presentUser(urls: Urls, row: Pick<UserRow, 'id' | 'email' | 'display_name' | 'photo_url'>): UserResource {
  return {
    object: 'user',
    id: row.id,
    displayName: row.display_name,
    email: row.email,
    ...(row.photo_url ? { photoURL: row.photo_url } : {}),
    urls: { location: urls.user(row.id) },
  };
}
