import type { SiteGrant } from '../platform/auth.ts';
import type { IntegrationGrant } from '../platform/context.ts';
import type { Db } from '../platform/db/database.ts';
import type { RoleOrGuest, SpaceRow } from '../platform/db/schema.ts';
import { Hooks } from '../platform/hooks.ts';
import type { Jobs } from '../platform/jobs.ts';

/** What happens to spaces that areas built on them react to (registered in src/wiring.ts). */
export const spaceHooks = new Hooks<{
  /** A space was deleted (soft): it leaves everything that showed it. */
  deleted: { spaceId: string };
  /** A space was created as a copy of another's content (`root`: its revision's page tree). */
  copied: { spaceId: string; root: string; jobs: Jobs };
  /** A space's language changed (its text is indexed for search in its language). */
  languageChanged: { spaceId: string; jobs: Jobs };
}>();

/**
 * How callers that are not members reach a space: an integration reaches the spaces its
 * installation covers, and a content token resolved through a site reads what that site publishes.
 * Both are decided by the areas that issue those grants; until they are wired, neither reaches
 * anything (access is refused by default).
 */
export interface SpaceGrantResolvers {
  integrationRole(db: Db, grant: IntegrationGrant, space: SpaceRow): Promise<RoleOrGuest>;
  siteGrantHolds(db: Db, grant: SiteGrant, spaceId: string): Promise<boolean>;
}

const refuse: SpaceGrantResolvers = {
  integrationRole: async () => null,
  siteGrantHolds: async () => false,
};
let resolvers: SpaceGrantResolvers = refuse;

export function resolveSpaceGrantsWith(given: SpaceGrantResolvers): void {
  resolvers = given;
}

export function spaceGrantResolvers(): SpaceGrantResolvers {
  return resolvers;
}
