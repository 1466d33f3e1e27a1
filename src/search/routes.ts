import { Type } from '@sinclair/typebox';
import type { FolioApp } from '../platform/app.ts';
import { errorResponses } from '../platform/schemas.ts';
import { ListOf, PageQuery } from '../platform/paging.ts';
import { OrganizationIdParams } from '../platform/schemas.ts';
import { searchOrganization, searchSpace } from './service.ts';

const Query = Type.Object({ ...PageQuery, query: Type.String({ minLength: 1, maxLength: 512, description: 'Words to search for' }) });

const Section = Type.Object({
  id: Type.String(),
  title: Type.String(),
  path: Type.String(),
  score: Type.Number(),
  resultType: Type.String(),
  body: Type.String({ description: 'Excerpt of the section around the match' }),
  highlights: Type.Optional(
    Type.Array(Type.Object({ start: Type.Integer({ minimum: 0 }), end: Type.Integer({ minimum: 0 }) }), {
      description: "Folio's addition: where the query matches in `body`, as [start, end) offsets in UTF-16 code units, to highlight",
    }),
  ),
  urls: Type.Object({ app: Type.String() }),
});

const PageResult = Type.Object({
  id: Type.String(),
  title: Type.String(),
  description: Type.String(),
  path: Type.String(),
  score: Type.Number(),
  rank: Type.Integer({ description: 'One-based position in the ranked results' }),
  resultType: Type.String(),
  sections: Type.Array(Section),
  ancestors: Type.Array(Type.Object({ title: Type.String() })),
  urls: Type.Object({ app: Type.String() }),
});

export const SpaceResult = Type.Object({
  type: Type.Literal('space'),
  id: Type.String(),
  title: Type.String(),
  score: Type.Number(),
  pages: Type.Array(PageResult),
});

export async function searchRoutes(app: FolioApp): Promise<void> {
  app.get(
    '/spaces/:spaceId/search',
    {
      schema: {
        operationId: 'searchSpaceContent',
        tags: ['search'],
        params: Type.Object({ spaceId: Type.String({ maxLength: 100 }) }),
        querystring: Query,
        response: { 200: ListOf(PageResult), ...errorResponses },
      },
    },
    async (req) => searchSpace(req.ctx(), req.params.spaceId, req.query.query, req.query),
  );
  app.get(
    '/orgs/:organizationId/search',
    {
      schema: {
        operationId: 'searchOrganizationContent',
        tags: ['search'],
        params: OrganizationIdParams,
        querystring: Query,
        response: { 200: ListOf(SpaceResult), ...errorResponses },
      },
    },
    async (req) => searchOrganization(req.ctx(), req.params.organizationId, req.query.query, req.query),
  );
}
