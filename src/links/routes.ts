import type { FolioApp } from '../platform/app.ts';
import { errorResponses } from '../platform/schemas.ts';
import { BacklinkListing, BacklinkQuery, FileParams, LinkListing, LinkQuery, PageParams, SpaceParams } from './schemas.ts';
import { listFileBacklinks, listPageLinks, listSpaceLinks } from './service.ts';

export async function linkRoutes(app: FolioApp): Promise<void> {
  const tags = ['content'];
  app.get(
    '/spaces/:spaceId/links',
    { schema: { operationId: 'listSpaceLinks', tags, params: SpaceParams, querystring: LinkQuery, response: { 200: LinkListing, ...errorResponses } } },
    async (req) => listSpaceLinks(req.ctx(), req.params.spaceId, req.query),
  );
  app.get(
    '/spaces/:spaceId/content/page/:pageId/links',
    { schema: { operationId: 'listPageLinks', tags, params: PageParams, querystring: LinkQuery, response: { 200: LinkListing, ...errorResponses } } },
    async (req) => listPageLinks(req.ctx(), req.params.spaceId, req.params.pageId, req.query),
  );
  app.get(
    '/spaces/:spaceId/content/files/:fileId/backlinks',
    {
      schema: { operationId: 'listFileBacklinks', tags, params: FileParams, querystring: BacklinkQuery, response: { 200: BacklinkListing, ...errorResponses } },
    },
    async (req) => listFileBacklinks(req.ctx(), req.params.spaceId, req.params.fileId, req.query),
  );
}
