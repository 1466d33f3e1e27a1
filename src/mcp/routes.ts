import { Type } from '@sinclair/typebox';
import type { FolioApp } from '../platform/app.ts';
import type { Services } from '../platform/context.ts';
import { ListOf, PageQuery } from '../platform/paging.ts';
import { errorResponses, OrganizationIdParams } from '../platform/schemas.ts';
import { SiteIdParams } from '../sites/schemas.ts';
import { SiteAddress } from '../published-site/reader-events.ts';
import { answerOrganizationMcp } from './org-server.ts';
import { CreateSiteMcpServerBody, SiteMcpServer, SiteMcpServerIdParams, UpdateSiteMcpServerBody } from './schemas.ts';
import { createSiteMcpServer, deleteSiteMcpServer, getSiteMcpServer, listSiteMcpServers, updateSiteMcpServer } from './service.ts';
import { answerSiteMcp } from './site-server.ts';

const tags = ['sites'];
const MCP_METHODS = ['GET', 'POST', 'DELETE'] as const;

/** The API's MCP routes: the MCP servers connected to a site (settings) and the organization's MCP server. */
export async function mcpRoutes(app: FolioApp): Promise<void> {
  const base = '/orgs/:organizationId/sites/:siteId/mcp-servers';
  app.get(base, { schema: { operationId: 'listSiteMcpServers', tags, params: SiteIdParams, querystring: Type.Object(PageQuery), response: { 200: ListOf(SiteMcpServer), ...errorResponses } } }, async (req) =>
    listSiteMcpServers(req.ctx(), req.params.organizationId, req.params.siteId, req.query),
  );
  app.post(base, { schema: { operationId: 'createSiteMcpServer', tags, params: SiteIdParams, body: CreateSiteMcpServerBody, response: { 201: SiteMcpServer, ...errorResponses } } }, async (req, reply) => {
    const created = await createSiteMcpServer(req.ctx(), req.params.organizationId, req.params.siteId, req.body);
    return reply.status(201).header('location', created.urls.location).send(created);
  });
  app.get(`${base}/:siteMcpServerId`, { schema: { operationId: 'getSiteMcpServerById', tags, params: SiteMcpServerIdParams, response: { 200: SiteMcpServer, ...errorResponses } } }, async (req) =>
    getSiteMcpServer(req.ctx(), req.params.organizationId, req.params.siteId, req.params.siteMcpServerId),
  );
  app.patch(
    `${base}/:siteMcpServerId`,
    { schema: { operationId: 'updateSiteMcpServerById', tags, params: SiteMcpServerIdParams, body: UpdateSiteMcpServerBody, response: { 200: SiteMcpServer, ...errorResponses } } },
    async (req) => updateSiteMcpServer(req.ctx(), req.params.organizationId, req.params.siteId, req.params.siteMcpServerId, req.body),
  );
  // As the official API: 205 when it was deleted, 204 when there was none.
  app.delete(
    `${base}/:siteMcpServerId`,
    { schema: { operationId: 'deleteSiteMcpServerById', tags, params: SiteMcpServerIdParams, response: { 204: Type.Null(), 205: Type.Null(), ...errorResponses } } },
    async (req, reply) => reply.status((await deleteSiteMcpServer(req.ctx(), req.params.organizationId, req.params.siteId, req.params.siteMcpServerId)) ? 205 : 204).send(null),
  );

  // The organization's MCP server (Streamable HTTP, stateless): JSON-RPC in, not a REST operation,
  // so it stays out of the API description. Authenticated like every /v1 route.
  app.route({
    method: [...MCP_METHODS],
    url: '/orgs/:organizationId/mcp',
    schema: { hide: true, params: OrganizationIdParams },
    handler: async (req, reply) => answerOrganizationMcp(req.ctx(), req.params.organizationId, req, reply),
  });
}

/** The MCP server of every published site, at `<site URL>/~gitbook/mcp`; registered before the site's own pages. */
export async function siteMcpRoutes(app: FolioApp, services: Services): Promise<void> {
  app.route({
    method: [...MCP_METHODS],
    url: '/:orgKey/:basename/~gitbook/mcp',
    config: { public: true },
    schema: { hide: true, params: SiteAddress, querystring: Type.Object({ share: Type.Optional(Type.String({ maxLength: 512 })), jwt_token: Type.Optional(Type.String({ maxLength: 8192 })) }) },
    handler: async (req, reply) => {
      if (req.params.orgKey === 'v1') return reply.callNotFound();
      return answerSiteMcp(services, req, reply, req.params, req.query);
    },
  });
}
