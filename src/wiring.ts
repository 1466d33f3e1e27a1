import { changeRequestExtensions, changeRequestHooks } from './change-requests/hooks.ts';
import { mergedFromOf } from './change-requests/merged-from.ts';
import { exportAfterMerge } from './git/auto-export.ts';
import { applyTemplate } from './templates/service.ts';
import { contentExtensions } from './content/extensions.ts';
import { grantRoleOnSpace } from './integrations/grants.ts';
import { mayHoldOpenAPIBlocks, resolveOpenAPIBlocks } from './openapi/blocks.ts';
import { followOrganizationLanguage, reindexSpace, SEARCH_LANGUAGE_JOB, searchIndexHooks } from './search/indexer.ts';
import { queueEmbedding } from './ask/vectors.ts';
import { organizationHooks } from './orgs/hooks.ts';
import { siteIntegrations, siteScripts } from './integrations/site-scripts.ts';
import { siteGrantHolds } from './sites/content-token.ts';
import { siteExtensions } from './sites/hooks.ts';
import { removeSpaceFromSites } from './sites/store-structure.ts';
import { resolveSpaceGrantsWith, spaceHooks } from './spaces/hooks.ts';

let wired = false;

/**
 * Connects the areas built on others to the extension points of those below them (hooks and
 * resolvers), so that lower areas never import higher ones. Called once per process before it
 * serves or works (src/server.ts); calling it again does nothing.
 */
export function wireAreas(): void {
  if (wired) return;
  wired = true;

  // Spaces: a deleted space leaves the sites that published it; a copy gets its search index, and a
  // new language re-indexes it in the background;
  // integrations and site grants reach spaces.
  spaceHooks.on('deleted', (trx, { spaceId }) => removeSpaceFromSites(trx, spaceId));
  spaceHooks.on('copied', (trx, { spaceId, root, jobs }) => reindexSpace(trx, spaceId, root, jobs));
  spaceHooks.on('languageChanged', async (trx, { spaceId, jobs }) => {
    await jobs.enqueue(SEARCH_LANGUAGE_JOB, { spaceId }, { db: trx });
  });
  // Search: Ask's section vectors follow the index (a background job for the pages written, when an
  // embedding model is configured).
  searchIndexHooks.on('written', (trx, { spaceId, pages, jobs }) => queueEmbedding(trx, jobs, spaceId, pages));
  resolveSpaceGrantsWith({ integrationRole: grantRoleOnSpace, siteGrantHolds });
  // Organizations: a new default language re-indexes the spaces that have none of their own.
  organizationHooks.on('languageChanged', (trx, { organizationId, jobs }) => followOrganizationLanguage(trx, jobs, organizationId));

  // Content: OpenAPI blocks are filled on computed reads; a merge revision names its change request.
  contentExtensions.computedBlocks.push({ mayHold: mayHoldOpenAPIBlocks, resolve: resolveOpenAPIBlocks });
  contentExtensions.mergedFrom = mergedFromOf;

  // Sites: the published content lists the scripts integrations inject into the site's pages.
  siteExtensions.publishedScripts = async (ctx, site) => siteScripts(ctx.urls, site.id, await siteIntegrations(ctx.db, site));

  // Change requests: a merge is sent to the space's repository when git sync exports by itself;
  // a new change request can start from a template.
  changeRequestHooks.on('merged', (db, { organizationId, spaceId, message, jobs }) =>
    exportAfterMerge({ db, jobs }, { id: spaceId, organization_id: organizationId }, message),
  );
  changeRequestExtensions.applyTemplate = applyTemplate;
}
