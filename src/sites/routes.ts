import { Type } from '@sinclair/typebox';
import type { FolioApp } from '../platform/app.ts';
import { errorResponses } from '../platform/schemas.ts';
import { ListOf, PageQuery } from '../platform/paging.ts';
import { OrganizationIdParams } from '../platform/schemas.ts';
import { getAdaptiveSchema, putAdaptiveSchema, templateConditions } from './adaptive.ts';
import { Customization, CustomizationInput, CustomizationOverride } from './customization.ts';
import { bulkUpsertRedirects, createRedirect, deleteRedirect, listRedirects, redirectBySource, updateRedirect } from './redirects.ts';
import {
  AdaptiveSchema,
  AddGroupBody,
  AddSectionBody,
  AddSiteSpaceBody,
  BulkRedirectsBody,
  BulkRedirectsResult,
  CreateRedirectBody,
  CreateShareLinkBody,
  CreateSiteBody,
  GroupAddSectionBody,
  GroupSectionParams,
  ListRedirectsQuery,
  ListSiteSpacesQuery,
  ListSitesQuery,
  MoveGroupBody,
  MoveSectionBody,
  MoveSiteSpaceBody,
  PublishingAuth,
  RedirectBySourceQuery,
  RedirectLookup,
  ShareKeyQuery,
  ShareLink,
  ShareLinkIdParams,
  Site,
  SiteIdParams,
  SiteRedirect,
  SiteRedirectIdParams,
  SiteSection,
  SiteSectionGroup,
  SiteSectionGroupIdParams,
  SiteSectionIdParams,
  SiteSpace,
  SiteIntegrationScript,
  SiteSpaceIdParams,
  SiteStructure,
  SortStructureBody,
  TemplateConditions,
  UpdateAdaptiveSchemaBody,
  UpdateGroupBody,
  UpdatePublishingAuthBody,
  UpdateRedirectBody,
  UpdateSectionBody,
  UpdateShareLinkBody,
  UpdateSiteBody,
  UpdateSiteSpaceBody,
} from './schemas.ts';
import {
  createShareLink,
  createSite,
  deleteShareLink,
  deleteSite,
  deleteSiteSpaceCustomization,
  getCustomization,
  getPublishingAuth,
  getSite,
  getSiteSpaceCustomization,
  listShareLinks,
  listSites,
  overrideSiteSpaceCustomization,
  publishedContentSite,
  putCustomization,
  regeneratePublishingAuth,
  setPublished,
  updatePublishingAuth,
  updateShareLink,
  updateSite,
} from './service.ts';
import {
  addGroup,
  addSection,
  addSiteSpace,
  deleteGroup,
  deleteSection,
  deleteSiteSpace,
  getStructure,
  groupAddSection,
  groupRemoveSection,
  listGroups,
  listSections,
  listSiteSpaces,
  moveGroup,
  moveSection,
  moveSiteSpace,
  sortStructure,
  updateGroup,
  updateSection,
  updateSiteSpace,
} from './structure.ts';
import { searchSite, SiteSearchBody, SiteSearchResults } from './search.ts';
import { PublishedLookup, resolvePublishedUrl, ResolveUrlBody, ResolveUrlQuery } from './urls.ts';

const tags = ['sites'];
const ShareKey = Type.Object(ShareKeyQuery);
const StructureItem = Type.Union([SiteSpace, SiteSection, SiteSectionGroup]);

const NoContent = { 204: Type.Null(), ...errorResponses };

export async function siteRoutes(app: FolioApp): Promise<void> {
  const base = '/orgs/:organizationId/sites/:siteId';

  // Sites
  app.get('/orgs/:organizationId/sites', { schema: { operationId: 'listSites', tags, params: OrganizationIdParams, querystring: ListSitesQuery, response: { 200: ListOf(Site), ...errorResponses } } }, async (req) =>
    listSites(req.ctx(), req.params.organizationId, req.query),
  );
  app.post('/orgs/:organizationId/sites', { schema: { operationId: 'createSite', tags, params: OrganizationIdParams, body: CreateSiteBody, response: { 201: Site, ...errorResponses } } }, async (req, reply) => {
    const ctx = req.ctx();
    const site = await createSite(ctx, req.params.organizationId, req.body ?? {});
    reply.status(201).header('location', site.urls.location);
    return site;
  });
  app.get(base, { schema: { operationId: 'getSiteById', tags, params: SiteIdParams, response: { 200: Site, ...errorResponses } } }, async (req) =>
    getSite(req.ctx(), req.params.organizationId, req.params.siteId),
  );
  app.patch(base, { schema: { operationId: 'updateSiteById', tags, params: SiteIdParams, body: UpdateSiteBody, response: { 200: Site, ...errorResponses } } }, async (req) =>
    updateSite(req.ctx(), req.params.organizationId, req.params.siteId, req.body),
  );
  app.delete(base, { schema: { operationId: 'deleteSiteById', tags, params: SiteIdParams, response: NoContent } }, async (req, reply) => {
    await deleteSite(req.ctx(), req.params.organizationId, req.params.siteId);
    return reply.status(204).send(null);
  });
  app.post(`${base}/publish`, { schema: { operationId: 'publishSite', tags, params: SiteIdParams, response: { 200: Site, ...errorResponses } } }, async (req) =>
    setPublished(req.ctx(), req.params.organizationId, req.params.siteId, true),
  );
  app.post(`${base}/unpublish`, { schema: { operationId: 'unpublishSite', tags, params: SiteIdParams, response: { 200: Site, ...errorResponses } } }, async (req) =>
    setPublished(req.ctx(), req.params.organizationId, req.params.siteId, false),
  );
  app.get(
    `${base}/published`,
    {
      schema: {
        operationId: 'getPublishedContentSite',
        tags,
        params: SiteIdParams,
        querystring: ShareKey,
        response: {
          200: Type.Object({
            object: Type.Literal('published-content-site'),
            site: Site,
            structure: SiteStructure,
            customizations: Type.Object({ site: Customization, siteSpaces: Type.Record(Type.String(), Customization) }),
            scripts: Type.Array(SiteIntegrationScript),
          }),
          ...errorResponses,
        },
      },
    },
    async (req) => publishedContentSite(req.ctx(), req.params.organizationId, req.params.siteId, req.query.shareKey),
  );

  // Adaptive schema
  app.get(`${base}/adaptive-schema`, { schema: { operationId: 'getSiteAdaptiveSchema', tags, params: SiteIdParams, response: { 200: AdaptiveSchema, ...errorResponses } } }, async (req) =>
    getAdaptiveSchema(req.ctx(), req.params.organizationId, req.params.siteId),
  );
  app.put(
    `${base}/adaptive-schema`,
    { schema: { operationId: 'updateSiteAdaptiveSchema', tags, params: SiteIdParams, body: UpdateAdaptiveSchemaBody, response: { 200: AdaptiveSchema, ...errorResponses } } },
    async (req) => putAdaptiveSchema(req.ctx(), req.params.organizationId, req.params.siteId, req.body.jsonSchema),
  );
  app.get(
    `${base}/adaptive-schema/template-conditions`,
    { schema: { operationId: 'listSiteAdaptiveTemplateConditions', tags, params: SiteIdParams, response: { 200: TemplateConditions, ...errorResponses } } },
    async (req) => templateConditions(req.ctx(), req.params.organizationId, req.params.siteId),
  );

  // Structure
  app.get(`${base}/structure`, { schema: { operationId: 'getSiteStructure', tags, params: SiteIdParams, querystring: ShareKey, response: { 200: SiteStructure, ...errorResponses } } }, async (req) =>
    getStructure(req.ctx(), req.params.organizationId, req.params.siteId, req.query.shareKey),
  );
  app.patch(
    `${base}/structure/sort`,
    { schema: { operationId: 'sortSiteStructure', tags, params: SiteIdParams, body: SortStructureBody, response: { 200: StructureItem, ...errorResponses } } },
    async (req) => sortStructure(req.ctx(), req.params.organizationId, req.params.siteId, req.body),
  );

  // Site spaces
  app.get(`${base}/site-spaces`, { schema: { operationId: 'listSiteSpaces', tags, params: SiteIdParams, querystring: ListSiteSpacesQuery, response: { 200: ListOf(SiteSpace), ...errorResponses } } }, async (req) =>
    listSiteSpaces(req.ctx(), req.params.organizationId, req.params.siteId, req.query),
  );
  app.post(`${base}/site-spaces`, { schema: { operationId: 'addSpaceToSite', tags, params: SiteIdParams, body: AddSiteSpaceBody, response: { 201: SiteSpace, ...errorResponses } } }, async (req, reply) => {
    reply.status(201);
    return addSiteSpace(req.ctx(), req.params.organizationId, req.params.siteId, req.body);
  });
  app.patch(
    `${base}/site-spaces/:siteSpaceId`,
    { schema: { operationId: 'updateSiteSpaceById', tags, params: SiteSpaceIdParams, body: UpdateSiteSpaceBody, response: { 200: SiteSpace, ...errorResponses } } },
    async (req) => updateSiteSpace(req.ctx(), req.params.organizationId, req.params.siteId, req.params.siteSpaceId, req.body),
  );
  app.delete(`${base}/site-spaces/:siteSpaceId`, { schema: { operationId: 'deleteSiteSpaceById', tags, params: SiteSpaceIdParams, response: NoContent } }, async (req, reply) => {
    await deleteSiteSpace(req.ctx(), req.params.organizationId, req.params.siteId, req.params.siteSpaceId);
    return reply.status(204).send(null);
  });
  app.post(
    `${base}/site-spaces/:siteSpaceId/move`,
    { schema: { operationId: 'moveSiteSpace', tags, params: SiteSpaceIdParams, body: MoveSiteSpaceBody, response: { 200: SiteSpace, ...errorResponses } } },
    async (req) => {
      const p = req.body.position ?? {};
      const ptr = (x?: { siteSpace: string }) => (x ? { type: 'site-space' as const, id: x.siteSpace } : undefined);
      return moveSiteSpace(req.ctx(), req.params.organizationId, req.params.siteId, req.params.siteSpaceId, {
        ...(p.before ? { before: ptr(p.before) } : {}),
        ...(p.after ? { after: ptr(p.after) } : {}),
      });
    },
  );

  // Customization
  app.get(
    `${base}/customization`,
    { schema: { operationId: 'getSiteCustomizationById', tags, params: SiteIdParams, querystring: Type.Object({ unmasked: Type.Optional(Type.Boolean()) }), response: { 200: Customization, ...errorResponses } } },
    async (req) => getCustomization(req.ctx(), req.params.organizationId, req.params.siteId),
  );
  app.put(
    `${base}/customization`,
    { schema: { operationId: 'updateSiteCustomizationById', tags, params: SiteIdParams, body: CustomizationInput, response: { 200: Customization, ...errorResponses } } },
    async (req) => putCustomization(req.ctx(), req.params.organizationId, req.params.siteId, req.body),
  );
  app.get(
    `${base}/site-spaces/:siteSpaceId/customization`,
    {
      schema: {
        operationId: 'getSiteSpaceCustomizationById',
        tags,
        params: SiteSpaceIdParams,
        querystring: Type.Object({ unmasked: Type.Optional(Type.Boolean()) }),
        response: { 200: Customization, ...errorResponses },
      },
    },
    async (req) => getSiteSpaceCustomization(req.ctx(), req.params.organizationId, req.params.siteId, req.params.siteSpaceId),
  );
  app.patch(
    `${base}/site-spaces/:siteSpaceId/customization`,
    { schema: { operationId: 'overrideSiteSpaceCustomizationById', tags, params: SiteSpaceIdParams, body: CustomizationOverride, response: { 200: Customization, ...errorResponses } } },
    async (req) => overrideSiteSpaceCustomization(req.ctx(), req.params.organizationId, req.params.siteId, req.params.siteSpaceId, req.body),
  );
  app.delete(`${base}/site-spaces/:siteSpaceId/customization`, { schema: { operationId: 'deleteSiteSpaceCustomizationById', tags, params: SiteSpaceIdParams, response: NoContent } }, async (req, reply) => {
    await deleteSiteSpaceCustomization(req.ctx(), req.params.organizationId, req.params.siteId, req.params.siteSpaceId);
    return reply.status(204).send(null);
  });

  // Sections
  app.get(
    `${base}/sections`,
    { schema: { operationId: 'listSiteSections', tags, params: SiteIdParams, querystring: Type.Object({ ...PageQuery, ...ShareKeyQuery }), response: { 200: ListOf(SiteSection), ...errorResponses } } },
    async (req) => listSections(req.ctx(), req.params.organizationId, req.params.siteId, req.query),
  );
  app.post(`${base}/sections`, { schema: { operationId: 'addSectionToSite', tags, params: SiteIdParams, body: AddSectionBody, response: { 201: SiteSection, ...errorResponses } } }, async (req, reply) => {
    reply.status(201);
    return addSection(req.ctx(), req.params.organizationId, req.params.siteId, req.body);
  });
  app.patch(
    `${base}/sections/:siteSectionId`,
    { schema: { operationId: 'updateSiteSectionById', tags, params: SiteSectionIdParams, body: UpdateSectionBody, response: { 200: SiteSection, ...errorResponses } } },
    async (req) => updateSection(req.ctx(), req.params.organizationId, req.params.siteId, req.params.siteSectionId, req.body),
  );
  app.delete(`${base}/sections/:siteSectionId`, { schema: { operationId: 'deleteSiteSectionById', tags, params: SiteSectionIdParams, response: NoContent } }, async (req, reply) => {
    await deleteSection(req.ctx(), req.params.organizationId, req.params.siteId, req.params.siteSectionId);
    return reply.status(204).send(null);
  });
  app.post(
    `${base}/sections/:siteSectionId/move`,
    { schema: { operationId: 'moveSiteSection', tags, params: SiteSectionIdParams, body: MoveSectionBody, response: { 200: SiteSection, ...errorResponses } } },
    async (req) => {
      const p = req.body.position ?? {};
      const ptr = (x: { siteSection: string }) => ({ type: 'site-section' as const, id: x.siteSection });
      return moveSection(req.ctx(), req.params.organizationId, req.params.siteId, req.params.siteSectionId, {
        ...(p.before ? { before: ptr(p.before) } : {}),
        ...(p.after ? { after: ptr(p.after) } : {}),
      });
    },
  );

  // Section groups
  app.get(
    `${base}/section-groups`,
    { schema: { operationId: 'listSiteSectionGroups', tags, params: SiteIdParams, querystring: Type.Object(PageQuery), response: { 200: ListOf(SiteSectionGroup), ...errorResponses } } },
    async (req) => listGroups(req.ctx(), req.params.organizationId, req.params.siteId, req.query),
  );
  app.post(
    `${base}/section-groups`,
    { schema: { operationId: 'addSectionGroupToSite', tags, params: SiteIdParams, body: AddGroupBody, response: { 201: SiteSectionGroup, ...errorResponses } } },
    async (req, reply) => {
      reply.status(201);
      return addGroup(req.ctx(), req.params.organizationId, req.params.siteId, req.body);
    },
  );
  app.patch(
    `${base}/section-groups/:siteSectionGroupId`,
    { schema: { operationId: 'updateSiteSectionGroupById', tags, params: SiteSectionGroupIdParams, body: UpdateGroupBody, response: { 200: SiteSectionGroup, ...errorResponses } } },
    async (req) => updateGroup(req.ctx(), req.params.organizationId, req.params.siteId, req.params.siteSectionGroupId, req.body),
  );
  app.delete(`${base}/section-groups/:siteSectionGroupId`, { schema: { operationId: 'deleteSiteSectionGroupById', tags, params: SiteSectionGroupIdParams, response: NoContent } }, async (req, reply) => {
    await deleteGroup(req.ctx(), req.params.organizationId, req.params.siteId, req.params.siteSectionGroupId);
    return reply.status(204).send(null);
  });
  app.post(
    `${base}/section-groups/:siteSectionGroupId/sections`,
    { schema: { operationId: 'addSectionToSiteSectionGroup', tags, params: SiteSectionGroupIdParams, body: GroupAddSectionBody, response: { 200: SiteSectionGroup, ...errorResponses } } },
    async (req) => groupAddSection(req.ctx(), req.params.organizationId, req.params.siteId, req.params.siteSectionGroupId, req.body.sectionId),
  );
  app.delete(
    `${base}/section-groups/:siteSectionGroupId/sections/:siteSectionId`,
    { schema: { operationId: 'removeSectionFromSiteSectionGroup', tags, params: GroupSectionParams, response: NoContent } },
    async (req, reply) => {
      await groupRemoveSection(req.ctx(), req.params.organizationId, req.params.siteId, req.params.siteSectionGroupId, req.params.siteSectionId);
      return reply.status(204).send(null);
    },
  );
  app.post(
    `${base}/section-groups/:siteSectionGroupId/move`,
    { schema: { operationId: 'moveSiteSectionGroup', tags, params: SiteSectionGroupIdParams, body: MoveGroupBody, response: { 200: SiteSectionGroup, ...errorResponses } } },
    async (req) => {
      const p = req.body.position ?? {};
      return moveGroup(req.ctx(), req.params.organizationId, req.params.siteId, req.params.siteSectionGroupId, {
        ...(p.before ? { before: p.before } : {}),
        ...(p.after ? { after: p.after } : {}),
      });
    },
  );

  // Share links
  app.get(
    `${base}/share-links`,
    {
      schema: {
        operationId: 'listSiteShareLinks',
        tags,
        params: SiteIdParams,
        querystring: Type.Object({ ...PageQuery, search: Type.Optional(Type.String({ maxLength: 100, description: 'Only links whose name contains this text' })) }),
        response: { 200: ListOf(ShareLink), ...errorResponses },
      },
    },
    async (req) => listShareLinks(req.ctx(), req.params.organizationId, req.params.siteId, req.query),
  );
  app.post(`${base}/share-links`, { schema: { operationId: 'createSiteShareLink', tags, params: SiteIdParams, body: CreateShareLinkBody, response: { 201: ShareLink, ...errorResponses } } }, async (req, reply) => {
    reply.status(201);
    return createShareLink(req.ctx(), req.params.organizationId, req.params.siteId, req.body.name);
  });
  app.patch(
    `${base}/share-links/:shareLinkId`,
    { schema: { operationId: 'updateSiteShareLinkById', tags, params: ShareLinkIdParams, body: UpdateShareLinkBody, response: { 200: ShareLink, ...errorResponses } } },
    async (req) => updateShareLink(req.ctx(), req.params.organizationId, req.params.siteId, req.params.shareLinkId, req.body),
  );
  app.delete(`${base}/share-links/:shareLinkId`, { schema: { operationId: 'deleteSiteShareLinkById', tags, params: ShareLinkIdParams, response: NoContent } }, async (req, reply) => {
    await deleteShareLink(req.ctx(), req.params.organizationId, req.params.siteId, req.params.shareLinkId);
    return reply.status(204).send(null);
  });

  // Redirects
  app.get(`${base}/redirects`, { schema: { operationId: 'listSiteRedirects', tags, params: SiteIdParams, querystring: ListRedirectsQuery, response: { 200: ListOf(SiteRedirect), ...errorResponses } } }, async (req) =>
    listRedirects(req.ctx(), req.params.organizationId, req.params.siteId, req.query),
  );
  app.post(`${base}/redirects`, { schema: { operationId: 'createSiteRedirect', tags, params: SiteIdParams, body: CreateRedirectBody, response: { 201: SiteRedirect, ...errorResponses } } }, async (req, reply) => {
    reply.status(201);
    return createRedirect(req.ctx(), req.params.organizationId, req.params.siteId, req.body);
  });
  app.put(`${base}/redirects`, { schema: { operationId: 'bulkUpsertSiteRedirects', tags, params: SiteIdParams, body: BulkRedirectsBody, response: { 200: BulkRedirectsResult, ...errorResponses } } }, async (req) =>
    bulkUpsertRedirects(req.ctx(), req.params.organizationId, req.params.siteId, req.body.redirects),
  );
  app.patch(
    `${base}/redirects/:siteRedirectId`,
    { schema: { operationId: 'updateSiteRedirectById', tags, params: SiteRedirectIdParams, body: UpdateRedirectBody, response: { 200: SiteRedirect, ...errorResponses } } },
    async (req) => updateRedirect(req.ctx(), req.params.organizationId, req.params.siteId, req.params.siteRedirectId, req.body),
  );
  app.delete(`${base}/redirects/:siteRedirectId`, { schema: { operationId: 'deleteSiteRedirectById', tags, params: SiteRedirectIdParams, response: NoContent } }, async (req, reply) => {
    await deleteRedirect(req.ctx(), req.params.organizationId, req.params.siteId, req.params.siteRedirectId);
    return reply.status(204).send(null);
  });
  app.get(`${base}/redirect`, { schema: { operationId: 'getSiteRedirectBySource', tags, params: SiteIdParams, querystring: RedirectBySourceQuery, response: { 200: RedirectLookup, ...errorResponses } } }, async (req) =>
    redirectBySource(req.ctx(), req.params.organizationId, req.params.siteId, req.query.source, req.query.shareKey),
  );

  // Publishing auth
  app.get(`${base}/publishing/auth`, { schema: { operationId: 'getSitePublishingAuthById', tags, params: SiteIdParams, response: { 200: PublishingAuth, ...errorResponses } } }, async (req) =>
    getPublishingAuth(req.ctx(), req.params.organizationId, req.params.siteId),
  );
  app.patch(
    `${base}/publishing/auth`,
    { schema: { operationId: 'updateSitePublishingAuthById', tags, params: SiteIdParams, body: UpdatePublishingAuthBody, response: { 200: PublishingAuth, ...errorResponses } } },
    async (req) => updatePublishingAuth(req.ctx(), req.params.organizationId, req.params.siteId, req.body),
  );
  app.post(
    `${base}/publishing/auth/regenerate`,
    { schema: { operationId: 'regenerateSitePublishingAuthById', tags, params: SiteIdParams, response: { 200: PublishingAuth, ...errorResponses } } },
    async (req) => regeneratePublishingAuth(req.ctx(), req.params.organizationId, req.params.siteId),
  );

  // Search
  app.post(
    `${base}/search`,
    { schema: { operationId: 'searchSiteContent', tags, params: SiteIdParams, querystring: Type.Object(PageQuery), body: SiteSearchBody, response: { 200: SiteSearchResults, ...errorResponses } } },
    async (req) => searchSite(req.ctx(), req.params.organizationId, req.params.siteId, req.body, req.query),
  );

  // Published URLs
  app.get(
    '/urls/published',
    { schema: { operationId: 'getPublishedContentByUrl', tags: ['urls'], querystring: ResolveUrlQuery, response: { 200: PublishedLookup, ...errorResponses } } },
    async (req) => resolvePublishedUrl(req.ctx(), { url: req.query.url, jwt: req.query.visitorAuthToken, redirectOnError: req.query.redirectOnError }),
  );
  app.post(
    '/urls/published',
    { schema: { operationId: 'resolvePublishedContentByUrl', tags: ['urls'], body: ResolveUrlBody, response: { 200: PublishedLookup, ...errorResponses } } },
    async (req) => resolvePublishedUrl(req.ctx(), { url: req.body.url, jwt: req.body.visitor?.jwtToken, redirectOnError: req.body.redirectOnError }),
  );
}
