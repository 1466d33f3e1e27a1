import { Type } from '@sinclair/typebox';
import type { FolioApp } from '../platform/app.ts';
import { errorResponses } from '../platform/schemas.ts';
import type { Ctx } from '../platform/context.ts';
import { ListOf, PageQuery } from '../platform/paging.ts';
import { NotFoundError } from '../platform/errors.ts';
import { OrganizationIdParams } from '../platform/schemas.ts';
import { presentSpaces } from '../spaces/service.ts';
import { findSpace } from '../spaces/store.ts';
import type { IntegrationRow, SiteInstallationRow, SpaceInstallationRow } from '../platform/db/schema.ts';
import { presentEvent, presentEventWithTrace, presentInstallation, presentIntegration, presentSiteInstallation, presentSpaceInstallation } from './presenter.ts';
import { presentSite } from '../sites/presenter.ts';
import { SiteIntegrationScript } from '../sites/schemas.ts';
import { findSite, siteSpaceCounts } from '../sites/store.ts';
import {
  DevBody,
  EventParams,
  EventWithTrace,
  InstallationParams,
  InstallBody,
  Installation,
  InstallOnSpaceBody,
  Integration,
  IntegrationEvent,
  IntegrationListQuery,
  IntegrationNameParams,
  InstallOnSiteBody,
  SiteInstallation,
  SiteInstallationParams,
  PublishBody,
  SpaceInstallation,
  SpaceInstallationParams,
  UpdateInstallationBody,
  UpdateSpaceInstallationBody,
} from './schemas.ts';
import * as catalogue from './catalogue.ts';
import * as development from './development.ts';
import * as installations from './installations.ts';
import * as targets from './target-installations.ts';
import { publicEndpointRoutes } from './public-endpoint.ts';
import { publishedScript } from './site-scripts.ts';

const tags = ['integrations'];
const present = (ctx: Ctx, v: catalogue.Visible) => presentIntegration(ctx.urls, v.row, v.owner, v.membership);

async function presentInstallations(ctx: Ctx, integration: Pick<IntegrationRow, 'name'>, rows: Parameters<typeof presentInstallation>[2][]) {
  const counts = await installations.spaceCounts(ctx.db, rows);
  return rows.map((r) => presentInstallation(ctx.urls, integration, r, counts.get(r.id) ?? 0));
}

/** Space installations with their space as an id, or as the space object (`extended`) when the caller can read it. */
async function presentSpaceInstallations(ctx: Ctx, integration: Pick<IntegrationRow, 'name'>, rows: SpaceInstallationRow[], extended: boolean) {
  const out = [];
  for (const row of rows) {
    let space: string | Awaited<ReturnType<typeof presentSpaces>>[number] = row.space_id;
    if (extended) {
      const found = await findSpace(ctx.db, row.space_id);
      if (found) space = (await presentSpaces(ctx.db, ctx.urls, [{ space: found, role: null }]))[0]!;
    }
    out.push(presentSpaceInstallation(ctx.urls, integration, row, space));
  }
  return out;
}

/** Site installations with their site as an id, or as the site object (`extended`). */
async function presentSiteInstallations(ctx: Ctx, integration: Pick<IntegrationRow, 'name'>, rows: SiteInstallationRow[], extended: boolean, organizationId?: string) {
  const out = [];
  const counts = extended && organizationId ? await siteSpaceCounts(ctx.db, organizationId, rows.map((r) => r.site_id)) : new Map<string, number>();
  for (const row of rows) {
    let site: string | ReturnType<typeof presentSite> = row.site_id;
    if (extended && organizationId) {
      const found = await findSite(ctx.db, organizationId, row.site_id);
      if (found) site = presentSite(ctx.urls, found, undefined, counts.get(found.id) ?? 0);
    }
    out.push(presentSiteInstallation(ctx.urls, integration, row, site));
  }
  return out;
}

const Extended = Type.Object({ extended: Type.Optional(Type.Boolean({ default: false, description: 'Return space objects instead of ids' })) });
const ExternalIdQuery = { externalId: Type.Optional(Type.String({ maxLength: 200 })) };

export async function integrationRoutes(app: FolioApp): Promise<void> {
  app.get(
    '/integrations',
    { schema: { operationId: 'listIntegrations', tags, querystring: Type.Object({ ...PageQuery, ...IntegrationListQuery }), response: { 200: ListOf(Integration), ...errorResponses } } },
    async (req) => {
      const ctx = req.ctx();
      const { page, limit, ...filters } = req.query;
      const result = await catalogue.listIntegrations(ctx, filters, { page, limit });
      return { ...result, items: result.items.map((v) => present(ctx, v)) };
    },
  );

  app.get(
    '/orgs/:organizationId/integrations',
    {
      schema: {
        operationId: 'listOrganizationIntegrations',
        tags,
        params: OrganizationIdParams,
        querystring: Type.Object({ ...PageQuery, ...IntegrationListQuery }),
        response: { 200: ListOf(Integration), ...errorResponses },
      },
    },
    async (req) => {
      const ctx = req.ctx();
      const { page, limit, ...filters } = req.query;
      const result = await catalogue.listOrganizationIntegrations(ctx, req.params.organizationId, filters, { page, limit });
      return { ...result, items: result.items.map((v) => present(ctx, v)) };
    },
  );

  app.get(
    '/orgs/:organizationId/installations',
    {
      schema: {
        operationId: 'listOrganizationInstallations',
        tags,
        params: OrganizationIdParams,
        querystring: Type.Object({ ...PageQuery, search: Type.Optional(Type.String({ maxLength: 200 })) }),
        response: { 200: ListOf(Type.Object({ installation: Installation, integration: Integration })), ...errorResponses },
      },
    },
    async (req) => {
      const ctx = req.ctx();
      const result = await installations.listOrganizationInstallations(ctx, req.params.organizationId, req.query.search, req.query);
      const counts = await installations.spaceCounts(ctx.db, result.items.map((i) => i.installation));
      return {
        ...result,
        items: result.items.map((i) => ({
          installation: presentInstallation(ctx.urls, i.integration.row, i.installation, counts.get(i.installation.id) ?? 0),
          integration: present(ctx, i.integration),
        })),
      };
    },
  );

  app.get(
    '/spaces/:spaceId/integrations',
    {
      schema: {
        operationId: 'listSpaceIntegrations',
        tags,
        params: Type.Object({ spaceId: Type.String({ maxLength: 100 }) }),
        querystring: Type.Object(PageQuery),
        response: { 200: ListOf(Integration), ...errorResponses },
      },
    },
    async (req) => {
      const ctx = req.ctx();
      const result = await targets.listSpaceIntegrations(ctx, req.params.spaceId, req.query);
      return { ...result, items: result.items.map((v) => present(ctx, v)) };
    },
  );

  app.get(
    '/integrations/:integrationName',
    { schema: { operationId: 'getIntegrationByName', tags, params: IntegrationNameParams, response: { 200: Integration, ...errorResponses } } },
    async (req) => {
      const ctx = req.ctx();
      return present(ctx, await catalogue.loadIntegration(ctx, req.params.integrationName));
    },
  );

  app.post(
    '/integrations/:integrationName',
    { schema: { operationId: 'publishIntegration', tags, params: IntegrationNameParams, body: PublishBody, response: { 200: Integration, ...errorResponses } } },
    async (req) => {
      const ctx = req.ctx();
      return present(ctx, await catalogue.publishIntegration(ctx, req.params.integrationName, req.body));
    },
  );

  app.delete(
    '/integrations/:integrationName',
    { schema: { operationId: 'unpublishIntegration', tags, params: IntegrationNameParams, response: { 204: Type.Null(), ...errorResponses } } },
    async (req, reply) => {
      await catalogue.unpublishIntegration(req.ctx(), req.params.integrationName);
      return reply.status(204).send(null);
    },
  );

  app.get(
    '/integrations/:integrationName/installations',
    {
      schema: {
        operationId: 'listIntegrationInstallations',
        tags,
        params: IntegrationNameParams,
        querystring: Type.Object({ ...PageQuery, ...ExternalIdQuery }),
        response: { 200: ListOf(Installation), ...errorResponses },
      },
    },
    async (req) => {
      const ctx = req.ctx();
      const result = await installations.listInstallations(ctx, req.params.integrationName, req.query.externalId, req.query);
      return { ...(result.next ? { next: result.next } : {}), count: result.count, items: await presentInstallations(ctx, result.integration, result.items) };
    },
  );

  app.post(
    '/integrations/:integrationName/installations',
    { schema: { operationId: 'installIntegration', tags, params: IntegrationNameParams, body: InstallBody, response: { 201: Installation, ...errorResponses } } },
    async (req, reply) => {
      const ctx = req.ctx();
      const { integration, installation } = await installations.installIntegration(ctx, req.params.integrationName, req.body.organization);
      const [presented] = await presentInstallations(ctx, integration, [installation]);
      reply.status(201).header('location', presented!.urls.location);
      return presented;
    },
  );

  app.get(
    '/integrations/:integrationName/installations/:installationId',
    { schema: { operationId: 'getIntegrationInstallationById', tags, params: InstallationParams, response: { 200: Installation, ...errorResponses } } },
    async (req) => {
      const ctx = req.ctx();
      const { integration, installation } = await installations.getInstallation(ctx, req.params.integrationName, req.params.installationId);
      return (await presentInstallations(ctx, integration, [installation]))[0];
    },
  );

  app.patch(
    '/integrations/:integrationName/installations/:installationId',
    {
      schema: { operationId: 'updateIntegrationInstallation', tags, params: InstallationParams, body: UpdateInstallationBody, response: { 200: Installation, ...errorResponses } },
    },
    async (req) => {
      const ctx = req.ctx();
      const { integration, installation } = await installations.updateInstallation(ctx, req.params.integrationName, req.params.installationId, req.body);
      return (await presentInstallations(ctx, integration, [installation]))[0];
    },
  );

  app.delete(
    '/integrations/:integrationName/installations/:installationId',
    { schema: { operationId: 'uninstallIntegration', tags, params: InstallationParams, response: { 204: Type.Null(), ...errorResponses } } },
    async (req, reply) => {
      await installations.uninstallIntegration(req.ctx(), req.params.integrationName, req.params.installationId);
      return reply.status(204).send(null);
    },
  );

  app.post(
    '/integrations/:integrationName/installations/:installationId/tokens',
    {
      schema: {
        operationId: 'createIntegrationInstallationToken',
        tags,
        params: InstallationParams,
        response: { 200: Type.Object({ token: Type.String() }), ...errorResponses },
      },
    },
    async (req) => ({ token: await installations.createInstallationToken(req.ctx(), req.params.integrationName, req.params.installationId) }),
  );

  app.get(
    '/integrations/:integrationName/installations/:installationId/spaces',
    {
      schema: {
        operationId: 'listIntegrationInstallationSpaces',
        tags,
        params: InstallationParams,
        querystring: Type.Object({ ...PageQuery, ...ExternalIdQuery, ...Extended.properties }),
        response: { 200: ListOf(SpaceInstallation), ...errorResponses },
      },
    },
    async (req) => {
      const ctx = req.ctx();
      const result = await targets.listTargetInstallations(ctx, 'space', req.params.integrationName, req.params.installationId, req.query.externalId, req.query);
      return { ...('next' in result && result.next ? { next: result.next } : {}), count: result.count, items: await presentSpaceInstallations(ctx, result.integration, result.items, !!req.query.extended) };
    },
  );

  app.post(
    '/integrations/:integrationName/installations/:installationId/spaces',
    {
      schema: {
        operationId: 'installIntegrationOnSpace',
        tags,
        params: InstallationParams,
        querystring: Extended,
        body: InstallOnSpaceBody,
        response: { 201: SpaceInstallation, ...errorResponses },
      },
    },
    async (req, reply) => {
      const ctx = req.ctx();
      const { integration, targetInstallation: spaceInstallation } = await targets.installOnTarget(ctx, 'space', req.params.integrationName, req.params.installationId, req.body.space);
      const [presented] = await presentSpaceInstallations(ctx, integration, [spaceInstallation], !!req.query.extended);
      reply.status(201).header('location', presented!.urls.location);
      return presented;
    },
  );

  app.get(
    '/integrations/:integrationName/installations/:installationId/spaces/:spaceId',
    {
      schema: { operationId: 'getIntegrationSpaceInstallation', tags, params: SpaceInstallationParams, querystring: Extended, response: { 200: SpaceInstallation, ...errorResponses } },
    },
    async (req) => {
      const ctx = req.ctx();
      const { integration, targetInstallation: spaceInstallation } = await targets.getTargetInstallation(ctx, 'space', req.params.integrationName, req.params.installationId, req.params.spaceId);
      return (await presentSpaceInstallations(ctx, integration, [spaceInstallation], !!req.query.extended))[0];
    },
  );

  app.patch(
    '/integrations/:integrationName/installations/:installationId/spaces/:spaceId',
    {
      schema: {
        operationId: 'updateIntegrationSpaceInstallation',
        tags,
        params: SpaceInstallationParams,
        querystring: Extended,
        body: UpdateSpaceInstallationBody,
        response: { 200: SpaceInstallation, ...errorResponses },
      },
    },
    async (req) => {
      const ctx = req.ctx();
      const { integration, targetInstallation: spaceInstallation } = await targets.updateTargetInstallation(ctx, 'space', req.params.integrationName, req.params.installationId, req.params.spaceId, req.body);
      return (await presentSpaceInstallations(ctx, integration, [spaceInstallation], !!req.query.extended))[0];
    },
  );

  app.delete(
    '/integrations/:integrationName/installations/:installationId/spaces/:spaceId',
    { schema: { operationId: 'uninstallIntegrationFromSpace', tags, params: SpaceInstallationParams, response: { 204: Type.Null(), ...errorResponses } } },
    async (req, reply) => {
      await targets.uninstallFromTarget(req.ctx(), 'space', req.params.integrationName, req.params.installationId, req.params.spaceId);
      return reply.status(204).send(null);
    },
  );

  app.get(
    '/integrations/:integrationName/spaces',
    {
      schema: {
        operationId: 'listIntegrationSpaceInstallations',
        tags,
        params: IntegrationNameParams,
        querystring: Type.Object({ ...PageQuery, ...ExternalIdQuery, ...Extended.properties }),
        response: { 200: ListOf(SpaceInstallation), ...errorResponses },
      },
    },
    async (req) => {
      const ctx = req.ctx();
      const result = await targets.listTargetInstallations(ctx, 'space', req.params.integrationName, undefined, req.query.externalId, req.query);
      return { ...('next' in result && result.next ? { next: result.next } : {}), count: result.count, items: await presentSpaceInstallations(ctx, result.integration, result.items, !!req.query.extended) };
    },
  );

  app.put(
    '/integrations/:integrationName/dev',
    { schema: { operationId: 'setIntegrationDevelopmentMode', tags, params: IntegrationNameParams, body: DevBody, response: { 204: Type.Null(), ...errorResponses } } },
    async (req, reply) => {
      await development.setDevelopmentMode(req.ctx(), req.params.integrationName, req.body.tunnelUrl, req.body.all ?? false);
      return reply.status(204).send(null);
    },
  );

  app.delete(
    '/integrations/:integrationName/dev',
    { schema: { operationId: 'disableIntegrationDevelopmentMode', tags, params: IntegrationNameParams, response: { 205: Type.Null(), ...errorResponses } } },
    async (req, reply) => {
      await development.setDevelopmentMode(req.ctx(), req.params.integrationName, null);
      return reply.status(205).send(null);
    },
  );

  app.get(
    '/integrations/:integrationName/events',
    {
      schema: {
        operationId: 'listIntegrationEvents',
        tags,
        params: IntegrationNameParams,
        querystring: Type.Object(PageQuery),
        response: { 200: ListOf(IntegrationEvent), ...errorResponses },
      },
    },
    async (req) => {
      const result = await development.listEvents(req.ctx(), req.params.integrationName, req.query);
      return { ...result, items: result.items.map(presentEvent) };
    },
  );

  app.get(
    '/integrations/:integrationName/events/:eventId',
    { schema: { operationId: 'getIntegrationEvent', tags, params: EventParams, response: { 200: EventWithTrace, ...errorResponses } } },
    async (req) => presentEventWithTrace(await development.getEvent(req.ctx(), req.params.integrationName, req.params.eventId)),
  );

  app.get(
    '/orgs/:organizationId/sites/:siteId/integrations',
    {
      schema: {
        operationId: 'listSiteIntegrations',
        tags,
        params: Type.Object({ organizationId: Type.String({ maxLength: 100 }), siteId: Type.String({ maxLength: 100 }) }),
        querystring: Type.Object(PageQuery),
        response: { 200: ListOf(Integration), ...errorResponses },
      },
    },
    async (req) => {
      const ctx = req.ctx();
      const result = await targets.listSiteIntegrations(ctx, req.params.organizationId, req.params.siteId, req.query);
      return { ...result, items: result.items.map((v) => present(ctx, v)) };
    },
  );

  app.get(
    '/orgs/:organizationId/sites/:siteId/integration-scripts',
    {
      schema: {
        operationId: 'listSiteIntegrationScripts',
        tags,
        params: Type.Object({ organizationId: Type.String({ maxLength: 100 }), siteId: Type.String({ maxLength: 100 }) }),
        response: { 200: Type.Array(SiteIntegrationScript), ...errorResponses },
      },
    },
    async (req) => targets.listSiteIntegrationScripts(req.ctx(), req.params.organizationId, req.params.siteId),
  );

  // The script an installation injects into a site, loaded by visitors' browsers (no token): the
  // integration's answer to a `fetch_published_script` event.
  app.get(
    '/integrations/:integrationName/installations/:installationId/sites/:siteId/script.js',
    { config: { public: true }, schema: { tags, params: SiteInstallationParams, querystring: Type.Object({ v: Type.Optional(Type.String({ maxLength: 100 })) }), security: [] } },
    async (req, reply) => {
      const answer = await publishedScript(app.services, req.params.integrationName, req.params.installationId, req.params.siteId);
      if (!answer) throw new NotFoundError('Site script');
      return reply
        .status(answer.status)
        .type('text/javascript; charset=utf-8')
        .header('x-content-type-options', 'nosniff')
        .header('cross-origin-resource-policy', 'cross-origin')
        // Versioned URLs (`v`): a browser keeps its copy a few minutes; a failure is not kept.
        .header('cache-control', answer.status === 200 ? 'public, max-age=300' : 'no-store')
        .send(answer.body);
    },
  );

  app.get(
    '/integrations/:integrationName/installations/:installationId/sites',
    {
      schema: {
        operationId: 'listIntegrationInstallationSites',
        tags,
        params: InstallationParams,
        querystring: Type.Object({ ...PageQuery, ...ExternalIdQuery, ...Extended.properties }),
        response: { 200: ListOf(SiteInstallation), ...errorResponses },
      },
    },
    async (req) => {
      const ctx = req.ctx();
      const result = await targets.listTargetInstallations(ctx, 'site', req.params.integrationName, req.params.installationId, req.query.externalId, req.query);
      const { installation } = await installations.getInstallation(ctx, req.params.integrationName, req.params.installationId);
      return { ...('next' in result && result.next ? { next: result.next } : {}), count: result.count, items: await presentSiteInstallations(ctx, result.integration, result.items, !!req.query.extended, installation.organization_id) };
    },
  );

  app.post(
    '/integrations/:integrationName/installations/:installationId/sites',
    {
      schema: {
        operationId: 'installIntegrationOnSite',
        tags,
        params: InstallationParams,
        querystring: Extended,
        body: InstallOnSiteBody,
        response: { 201: SiteInstallation, ...errorResponses },
      },
    },
    async (req, reply) => {
      const ctx = req.ctx();
      const { integration, targetInstallation: siteInstallation } = await targets.installOnTarget(ctx, 'site', req.params.integrationName, req.params.installationId, req.body.siteId);
      const { installation } = await installations.getInstallation(ctx, req.params.integrationName, req.params.installationId);
      const [presented] = await presentSiteInstallations(ctx, integration, [siteInstallation], !!req.query.extended, installation.organization_id);
      reply.status(201).header('location', presented!.urls.location);
      return presented;
    },
  );

  app.get(
    '/integrations/:integrationName/installations/:installationId/sites/:siteId',
    {
      schema: { operationId: 'getIntegrationSiteInstallation', tags, params: SiteInstallationParams, querystring: Extended, response: { 200: SiteInstallation, ...errorResponses } },
    },
    async (req) => {
      const ctx = req.ctx();
      const { integration, installation, targetInstallation: siteInstallation } = await targets.getTargetInstallation(ctx, 'site', req.params.integrationName, req.params.installationId, req.params.siteId);
      return (await presentSiteInstallations(ctx, integration, [siteInstallation], !!req.query.extended, installation.organization_id))[0];
    },
  );

  app.patch(
    '/integrations/:integrationName/installations/:installationId/sites/:siteId',
    {
      schema: {
        operationId: 'updateIntegrationSiteInstallation',
        tags,
        params: SiteInstallationParams,
        querystring: Extended,
        body: UpdateSpaceInstallationBody,
        response: { 200: SiteInstallation, ...errorResponses },
      },
    },
    async (req) => {
      const ctx = req.ctx();
      const { integration, installation, targetInstallation: siteInstallation } = await targets.updateTargetInstallation(ctx, 'site', req.params.integrationName, req.params.installationId, req.params.siteId, req.body);
      return (await presentSiteInstallations(ctx, integration, [siteInstallation], !!req.query.extended, installation.organization_id))[0];
    },
  );

  app.delete(
    '/integrations/:integrationName/installations/:installationId/sites/:siteId',
    { schema: { operationId: 'uninstallIntegrationFromSite', tags, params: SiteInstallationParams, response: { 204: Type.Null(), ...errorResponses } } },
    async (req, reply) => {
      await targets.uninstallFromTarget(req.ctx(), 'site', req.params.integrationName, req.params.installationId, req.params.siteId);
      return reply.status(204).send(null);
    },
  );

  app.get(
    '/integrations/:integrationName/sites',
    {
      schema: {
        operationId: 'listIntegrationSiteInstallations',
        tags,
        params: IntegrationNameParams,
        querystring: Type.Object({ ...PageQuery, ...ExternalIdQuery, ...Extended.properties }),
        response: { 200: ListOf(SiteInstallation), ...errorResponses },
      },
    },
    async (req) => {
      const ctx = req.ctx();
      const result = await targets.listTargetInstallations(ctx, 'site', req.params.integrationName, undefined, req.query.externalId, req.query);
      return { ...('next' in result && result.next ? { next: result.next } : {}), count: result.count, items: await presentSiteInstallations(ctx, result.integration, result.items, false) };
    },
  );

  await publicEndpointRoutes(app);
}
