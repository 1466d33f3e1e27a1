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

export type UserLike = Pick<UserRow, 'id' | 'email' | 'display_name' | 'photo_url'>;

/** Who a record names when their account has since been deleted: the resource keeps a valid user. */
const DELETED: UserLike = { id: 'deleted-user', email: '', display_name: 'Deleted user', photo_url: null };

/** Presents the user `id` from a batch loaded with usersById, or the deleted-user stand-in. */
export function presentUserById(urls: Urls, users: Map<string, UserLike>, id: string | null) {
  return presentUser(urls, (id && users.get(id)) || DELETED);
}
