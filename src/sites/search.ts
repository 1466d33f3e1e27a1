import { Type, type Static } from '@sinclair/typebox';
import type { Ctx } from '../platform/context.ts';
import { BadRequestError } from '../platform/errors.ts';
import { ListOf, type PageRequest } from '../platform/paging.ts';
import { asEnum } from '../platform/schemas.ts';
import { searchGroupedBySpace } from '../search/service.ts';
import { SpaceResult } from '../search/routes.ts';
import { readableSite } from './access.ts';
import { siteSpaceScopes } from './store.ts';

/** Search of a site's content: the full-text search of spaces (src/search), over the site's spaces. */

export const SiteSearchBody = Type.Object({
  query: Type.String({ minLength: 1, maxLength: 512, description: 'Words to search for' }),
  scope: Type.Optional(
    Type.Object({
      mode: asEnum(Type.Union([Type.Literal('default'), Type.Literal('specific'), Type.Literal('all')]), {
        description: 'default: the default site space of each section (plus currentSiteSpace); specific: siteSpaceIds; all: every site space',
      }),
      currentSiteSpace: Type.Optional(Type.String({ maxLength: 100 })),
      restrictTo: Type.Optional(asEnum(Type.Union([Type.Literal('currentSiteSpace'), Type.Literal('otherSiteSpaces')]))),
      siteSpaceIds: Type.Optional(Type.Array(Type.String({ maxLength: 100 }), { minItems: 1, maxItems: 1000 })),
    }),
  ),
  mode: Type.Optional(asEnum(Type.Union([Type.Literal('specific'), Type.Literal('current'), Type.Literal('all')]), { description: 'Deprecated: use scope' })),
  siteSpaceIds: Type.Optional(Type.Array(Type.String({ maxLength: 100 }), { minItems: 1, maxItems: 1000, description: 'Deprecated: use scope' })),
  siteSpaceId: Type.Optional(Type.String({ maxLength: 100, description: 'Deprecated: use scope' })),
});
export type SiteSearchInput = Static<typeof SiteSearchBody>;
export const SiteSearchResults = ListOf(SpaceResult);

export async function searchSite(ctx: Ctx, organizationId: string, siteId: string, input: SiteSearchInput, page: PageRequest) {
  const { site } = await readableSite(ctx, organizationId, siteId);
  const rows = await siteSpaceScopes(ctx.db, site.organization_id, site.id);
  const byId = new Map(rows.map((r) => [r.id, r]));
  const known = (id: string, field: string) => {
    const row = byId.get(id);
    if (!row) throw new BadRequestError(`${field}: site space ${id} is not part of this site`);
    return row;
  };
  // The deprecated modes map onto scopes.
  const scope =
    input.scope ??
    (input.mode === 'specific' || (input.siteSpaceIds && !input.mode)
      ? { mode: 'specific' as const, siteSpaceIds: input.siteSpaceIds }
      : input.mode === 'current'
        ? { mode: 'default' as const, currentSiteSpace: input.siteSpaceId }
        : { mode: 'all' as const });
  let chosen: typeof rows;
  if (scope.mode === 'all') chosen = rows;
  else if (scope.mode === 'specific') {
    if (!scope.siteSpaceIds?.length) throw new BadRequestError('scope.siteSpaceIds: list the site spaces to search in');
    chosen = scope.siteSpaceIds.map((id, i) => known(id, `scope.siteSpaceIds[${i}]`));
  } else {
    const current = scope.currentSiteSpace ? known(scope.currentSiteSpace, 'scope.currentSiteSpace') : undefined;
    if (scope.restrictTo && !current) throw new BadRequestError('scope.restrictTo: send currentSiteSpace with it');
    const defaults = rows.filter((r) => r.is_default);
    if (scope.restrictTo === 'currentSiteSpace') chosen = [current!];
    else if (scope.restrictTo === 'otherSiteSpaces') chosen = defaults.filter((r) => r.id !== current!.id);
    else chosen = current && !current.is_default ? [...defaults, current] : defaults;
  }
  const spaceIds = [...new Set(chosen.map((r) => r.space_id))];
  if (spaceIds.length === 0) return { items: [], count: 0 };
  return searchGroupedBySpace(ctx, input.query, spaceIds, page);
}
