import { buildApp, type FolioApp } from './platform/app.ts';
import type { AppComposition } from './platform/composition.ts';
import type { Services } from './platform/context.ts';
import { askRoutes } from './ask/routes.ts';
import { askSiteRoutes } from './ask/site-routes.ts';
import { changeRequestRoutes } from './change-requests/routes.ts';
import { collectionRoutes } from './collections/routes.ts';
import { commentsRoutes } from './comments/routes.ts';
import { computedContentRoutes } from './computed/routes.ts';
import { contentRoutes } from './content/routes.ts';
import { gitRoutes } from './git/routes.ts';
import { insightRoutes } from './insights/routes.ts';
import { assertIntegrationRoute, authenticateIntegrationToken, INTEGRATION_TOKEN_PREFIX } from './integrations/grants.ts';
import { integrationRoutes } from './integrations/routes.ts';
import { inviteRoutes } from './invites/routes.ts';
import { linkRoutes } from './links/routes.ts';
import { mcpRoutes, siteMcpRoutes } from './mcp/routes.ts';
import { memberRoutes } from './members/routes.ts';
import { openapiRoutes } from './openapi/routes.ts';
import { organizationRoutes } from './orgs/routes.ts';
import { pdfRoutes } from './pdf/routes.ts';
import { permissionRoutes } from './permissions/routes.ts';
import { searchRoutes } from './search/routes.ts';
import { SiteHosts } from './published-site/hosts.ts';
import { publishedSiteRoutes } from './published-site/routes.ts';
import { assertContentTokenRoute } from './sites/content-token.ts';
import { signInRoutes } from './sign-in/routes.ts';
import { webAppRoutes } from './web-app/routes.ts';
import { siteRoutes } from './sites/routes.ts';
import { spaceRoutes } from './spaces/routes.ts';
import { storageRoutes } from './storage/routes.ts';
import { ssoRoutes, ssoWebRoutes } from './sso/routes.ts';
import { oidcRoutes, oidcWebRoutes } from './sso/oidc-routes.ts';
import { teamRoutes } from './teams/routes.ts';
import { templateRoutes } from './templates/routes.ts';
import { tokenRoutes } from './tokens/routes.ts';
import { translationRoutes } from './translations/routes.ts';
import { userRoutes } from './users/routes.ts';

/**
 * Every area's routes, in one list: adding an area means adding its routes here. The order is
 * the order of the API description (/docs).
 */
const API_AREAS: Array<(api: FolioApp) => Promise<void>> = [
  userRoutes,
  tokenRoutes,
  organizationRoutes,
  memberRoutes,
  teamRoutes,
  inviteRoutes,
  collectionRoutes,
  spaceRoutes,
  permissionRoutes,
  contentRoutes,
  computedContentRoutes,
  changeRequestRoutes,
  commentsRoutes,
  searchRoutes,
  linkRoutes,
  templateRoutes,
  pdfRoutes,
  integrationRoutes,
  translationRoutes,
  openapiRoutes,
  ssoRoutes,
  oidcRoutes,
  siteRoutes,
  mcpRoutes,
  insightRoutes,
  askRoutes,
  gitRoutes,
  storageRoutes,
];

/** What `folio serve` serves: the composition the platform's HTTP server is built around. */
export function folioComposition(services: Services): AppComposition {
  return {
    webRoutes: async (app) => {
      await app.register(ssoWebRoutes);
      await app.register(oidcWebRoutes);
      await app.register(signInRoutes);
      await app.register(webAppRoutes);
    },
    apiRoutes: async (api) => {
      for (const area of API_AREAS) await area(api);
    },
    // Published sites, at PUBLIC_URL/<organization>/<basename>/ (outside the API and its tokens),
    // each with its MCP server at <site>/~gitbook/mcp and Ask at <site>/~gitbook/ask (both before
    // the site's catch-all pages).
    lateRoutes: async (app) => {
      await siteMcpRoutes(app, services);
      await askSiteRoutes(app, services);
      await publishedSiteRoutes(app, services);
    },
    tokenKinds: [
      {
        prefix: INTEGRATION_TOKEN_PREFIX,
        invalidMessage: 'Invalid or expired integration token',
        authenticate: async (db, hash) => {
          const found = await authenticateIntegrationToken(db, hash);
          return found && { user: found.user, integration: found.grant };
        },
        assertRoute: (req, found) => assertIntegrationRoute(req, found.integration!),
      },
    ],
    // Content tokens (the apiToken of a resolved published URL) read one space and nothing else.
    assertScopedTokenRoute: assertContentTokenRoute,
    // Requests for a published site's custom hostname are routed to that site.
    hostRewriter: ({ db, config }) => {
      const hosts = new SiteHosts(db);
      return {
        rewrite: (req) => hosts.rewrite(req),
        start: async () => {
          await hosts.refresh();
          hosts.start(config.siteHostsRefreshMs);
        },
        stop: () => hosts.stop(),
      };
    },
  };
}

/** The Folio HTTP server over these services. */
export function buildFolioApp(services: Services, opts: Parameters<typeof buildApp>[1]): Promise<FolioApp> {
  return buildApp(services, opts, folioComposition(services));
}
