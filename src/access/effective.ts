import type { RawBuilder } from 'kysely';
import type { Db } from '../platform/db/database.ts';
import type { DefaultLevel, Role, RoleOrGuest, Visibility } from '../platform/db/schema.ts';
import { strongest } from '../platform/policy.ts';
import { assertSsoSatisfied } from '../platform/sso-gate.ts';
import { collectionChainLinks, grantsTo, memberRankSql, memberRole, type ChainLink } from './store.ts';

/**
 * Effective roles on content: the one function that decides how strongly a caller may act on a
 * space or collection. The role is the strongest of
 *  - the caller's organization role (members with a role; guests have none),
 *  - the content's `defaultLevel`, or the first non-inherited level up its parent collections
 *    (applies to members with a role; guests see only what they were granted),
 *  - grants to the caller or one of their teams, on the content or any ancestor collection,
 *  - `read` for anyone when a space is public or unlisted, or shared by link with the right key.
 *
 * It is set-based: a page of N items costs a fixed number of queries (membership, ancestor chains,
 * grants), not N.
 */

export interface Caller {
  userId: string;
  /** The caller's organization role: undefined when not a member, null for guests. */
  orgRole: RoleOrGuest | undefined;
}

interface SpaceLike {
  id: string;
  parent_id: string | null;
  default_level: DefaultLevel;
  visibility: Visibility;
  share_key: string;
}

interface CollectionLike {
  id: string;
  parent_id: string | null;
  default_level: DefaultLevel;
}


export async function orgRoleOf(db: Db, organizationId: string, userId: string): Promise<RoleOrGuest | undefined> {
  const role = await memberRole(db, organizationId, userId);
  if (role !== undefined) assertSsoSatisfied(organizationId);
  return role;
}

/** For each starting collection, itself and its ancestors, nearest first. */
async function collectionChains(db: Db, organizationId: string, startIds: string[]): Promise<Map<string, ChainLink[]>> {
  const chains = new Map<string, ChainLink[]>();
  if (startIds.length === 0) return chains;
  for (const link of await collectionChainLinks(db, organizationId, startIds)) {
    const list = chains.get(link.start_id) ?? [];
    list.push(link);
    chains.set(link.start_id, list);
  }
  return chains;
}

async function grantsOn(
  db: Db,
  organizationId: string,
  userId: string,
  spaceIds: string[],
  collectionIds: string[],
): Promise<Map<string, Role>> {
  const grants = new Map<string, Role>();
  if (spaceIds.length === 0 && collectionIds.length === 0) return grants;
  for (const row of await grantsTo(db, organizationId, userId, spaceIds, collectionIds)) {
    const key = `${row.target_type}:${row.target_id}`;
    grants.set(key, strongest(grants.get(key) ?? null, row.role)!);
  }
  return grants;
}

/** Role from one chain: explicit level of the content, else the nearest explicit ancestor level. */
function defaultLevelFrom(own: DefaultLevel, chain: ChainLink[]): RoleOrGuest {
  if (own !== 'inherit') return own;
  for (const link of chain) if (link.default_level !== 'inherit') return link.default_level;
  return null;
}

function roleFrom(caller: Caller, own: DefaultLevel, chain: ChainLink[], grants: Map<string, Role>, ownKey: string): RoleOrGuest {
  let role: RoleOrGuest = null;
  if (caller.orgRole) {
    role = strongest(caller.orgRole, defaultLevelFrom(own, chain));
  }
  role = strongest(role, grants.get(ownKey) ?? null);
  for (const link of chain) role = strongest(role, grants.get(`collection:${link.id}`) ?? null);
  return role;
}

export async function spaceRoles(
  db: Db,
  organizationId: string,
  caller: Caller,
  spaces: SpaceLike[],
  opts: { shareKey?: string | undefined } = {},
): Promise<Map<string, RoleOrGuest>> {
  const parents = [...new Set(spaces.map((s) => s.parent_id).filter((p): p is string => !!p))];
  const isMember = caller.orgRole !== undefined;
  const chains = isMember ? await collectionChains(db, organizationId, parents) : new Map<string, ChainLink[]>();
  const ancestorIds = [...new Set([...chains.values()].flat().map((l) => l.id))];
  const grants = isMember ? await grantsOn(db, organizationId, caller.userId, spaces.map((s) => s.id), ancestorIds) : new Map();
  const roles = new Map<string, RoleOrGuest>();
  for (const space of spaces) {
    const chain = space.parent_id ? (chains.get(space.parent_id) ?? []) : [];
    let role = isMember ? roleFrom(caller, space.default_level, chain, grants, `space:${space.id}`) : null;
    if (space.visibility === 'public' || space.visibility === 'unlisted') role = strongest(role, 'read');
    if (space.visibility === 'share-link' && opts.shareKey && opts.shareKey === space.share_key) role = strongest(role, 'read');
    roles.set(space.id, role);
  }
  return roles;
}

export async function collectionRoles(
  db: Db,
  organizationId: string,
  caller: Caller,
  collections: CollectionLike[],
): Promise<Map<string, RoleOrGuest>> {
  const roles = new Map<string, RoleOrGuest>();
  if (caller.orgRole === undefined) {
    for (const c of collections) roles.set(c.id, null);
    return roles;
  }
  const chains = await collectionChains(db, organizationId, collections.map((c) => c.id));
  const ancestorIds = [...new Set([...chains.values()].flat().map((l) => l.id))];
  const grants = await grantsOn(db, organizationId, caller.userId, [], ancestorIds);
  for (const c of collections) {
    // The chain starts with the collection itself; its own level is the first link.
    const chain = (chains.get(c.id) ?? []).slice(1);
    roles.set(c.id, roleFrom(caller, c.default_level, chain, grants, `collection:${c.id}`));
  }
  return roles;
}

export const RANKS: readonly Role[] = ['read', 'comment', 'edit', 'review', 'create', 'admin'];

/**
 * For listing who can open a space or collection: an SQL expression, on rows of `members`, of the
 * effective role's rank (0: no access). The same rules as spaceRoles/collectionRoles, evaluated by
 * the database for a whole page of members at once.
 */
export async function memberRankOn(
  db: Db,
  organizationId: string,
  target: { type: 'space' | 'collection'; id: string; parentId: string | null; defaultLevel: DefaultLevel },
): Promise<RawBuilder<number>> {
  const start = target.type === 'space' ? target.parentId : target.id;
  const links = start ? ((await collectionChains(db, organizationId, [start])).get(start) ?? []) : [];
  const ancestors = target.type === 'space' ? links : links.slice(1);
  const level = defaultLevelFrom(target.defaultLevel, ancestors);
  return memberRankSql(organizationId, target, level, ancestors.map((l) => l.id));
}
