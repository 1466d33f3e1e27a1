import type { Ctx } from '../platform/context.ts';
import type { SiteRow } from '../platform/db/schema.ts';
import type { Static } from '@sinclair/typebox';
import type { SiteIntegrationScript } from './schemas.ts';

/**
 * What areas built on sites add to them, set at start (src/wiring.ts) so that sites never import
 * them: the scripts integrations inject into a site's published pages. Until wired, none.
 */
export const siteExtensions: {
  publishedScripts(ctx: Ctx, site: SiteRow): Promise<Static<typeof SiteIntegrationScript>[]>;
} = {
  publishedScripts: async () => [],
};
