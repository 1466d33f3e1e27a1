import { buildApp, type FolioApp } from './platform/app.ts';
import type { AppComposition } from './platform/composition.ts';
import type { Services } from './platform/context.ts';
import { askRoutes } from './ask/routes.ts';
import { askSiteRoutes } from './ask/site-routes.ts';
import { RESYNC, SITES_CONTENT, SITES_HOSTS, SITES_TOPIC } from './platform/bus.ts';
import { changeRequestRoutes } from './change-requests/routes.ts';
import { collectionRoutes } from './collections/routes.ts';
import { commentsRoutes } from './comments/routes.ts';
import { computedContentRoutes } from './computed/routes.ts';
import { contentRoutes } from './content/routes.ts';
import { pasteRoutes } from './content/paste-routes.ts';
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
import { importRoutes } from './imports/routes.ts';
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
  importRoutes,
];

/**
 * What a successful write through the API changes in the published sites, by its route:
 * `SITES_HOSTS` when custom hostnames may change too (sites and their installations), `SITES_CONTENT`
 * when only what a site shows may (an organization's hostname or title, a space's settings, its
 * place or its content, a merge, an integration's installation); undefined for the rest (a change
 * request's edits show nowhere until merged). Every process empties its site cache when it hears
 * it (src/platform/bus.ts); a git import, which is a job, says so itself (src/git/jobs.ts).
 */
export function siteInvalidation(route: string | undefined): string | undefined {
  if (!route) return undefined;
  if (route.includes('/sites')) return SITES_HOSTS;
  if (route === '/v1/orgs/:organizationId' || route.includes('/installations')) return SITES_CONTENT;
  if (/^\/v1\/spaces\/:spaceId(\/(restore|move|transfer|content(\/.*)?|change-requests\/:changeRequestId\/merge))?$/.test(route)) return SITES_CONTENT;
  return undefined;
}

/** What `folio serve` serves: the composition the platform's HTTP server is built around. */
export function folioComposition(services: Services): AppComposition {
  return {
    webRoutes: async (app) => {
      await app.register(ssoWebRoutes);
      await app.register(oidcWebRoutes);
      await app.register(signInRoutes);
      await app.register(webAppRoutes);
      await app.register(pasteRoutes);
    },
    apiRoutes: async (api) => {
      // Once the write has committed (its handler has finished), before its answer leaves: this
      // process forgets at once, the others when the message reaches them.
      // (A callback hook: it runs on every answer, reads included, and costs them no promise.)
      api.addHook('onSend', (req, reply, payload, done) => {
        if (req.method !== 'GET' && req.method !== 'HEAD' && reply.statusCode < 400) {
          const what = siteInvalidation(req.routeOptions.url);
          if (what) void services.bus.publish(SITES_TOPIC, what);
        }
        done(null, payload);
      });
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
    hostRewriter: ({ db, config, bus }) => {
      const hosts = new SiteHosts(db);
      bus.subscribe(SITES_TOPIC, (message) => {
        if (message === SITES_HOSTS || message === RESYNC) hosts.refresh().catch(() => {});
      });
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
