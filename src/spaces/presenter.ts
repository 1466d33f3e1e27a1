import type { MergeRules, RoleOrGuest, SpaceRow } from '../platform/db/schema.ts';
import { spacePermissions } from '../platform/policy.ts';
import type { Urls } from '../platform/urls.ts';
import type { SpaceResource } from './schemas.ts';

/** Counters of a space; change requests and comments fill them as those areas arrive. */
export interface SpaceCounts {
  comments: number;
  changeRequests: number;
  changeRequestsOpen: number;
  changeRequestsDraft: number;
}

export const NO_COUNTS: SpaceCounts = { comments: 0, changeRequests: 0, changeRequestsOpen: 0, changeRequestsDraft: 0 };

export function spaceUrls(urls: Urls, space: SpaceRow): SpaceResource['urls'] {
  const published = urls.app(`/s/${space.id}/published`);
  return {
    location: urls.api(`/spaces/${space.id}`),
    app: urls.spaceApp(space.id),
    ...(space.visibility !== 'private' ? { published } : {}),
    ...(space.visibility === 'public' ? { public: published } : {}),
    ...(space.icon ? { icon: space.icon } : {}),
  };
}

export function presentSpace(urls: Urls, space: SpaceRow, role: RoleOrGuest, counts: SpaceCounts = NO_COUNTS): SpaceResource {
  return {
    object: 'space',
    id: space.id,
    title: space.title,
    emoji: space.emoji ?? '',
    visibility: space.visibility,
    createdAt: space.created_at.toISOString(),
    updatedAt: space.updated_at.toISOString(),
    ...(space.deleted_at ? { deletedAt: space.deleted_at.toISOString() } : {}),
    editMode: space.edit_mode,
    mergeRules: space.merge_rules as MergeRules as SpaceResource['mergeRules'],
    organization: space.organization_id,
    ...(space.parent_id ? { parent: space.parent_id } : {}),
    ...(space.language ? { language: space.language } : {}),
    revision: space.revision_id,
    defaultLevel: space.default_level,
    ...counts,
    urls: spaceUrls(urls, space),
    permissions: spacePermissions(role),
    ...(space.git_sync ? { gitSync: space.git_sync as SpaceResource['gitSync'] } : {}),
  };
}

