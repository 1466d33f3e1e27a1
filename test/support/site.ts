import { mergePages, newSite, newSpace, pagesChanges, type MarkdownPage } from './factories.ts';
import type { TestServer, TestUser } from './server.ts';

/** A published site with one space holding `pages` (markdown by title, in order, nested by `parent`). */
export async function publishedSite(
  t: TestServer,
  admin: TestUser,
  organizationId: string,
  pages: MarkdownPage[],
  site: { title?: string; visibility?: 'public' | 'unlisted' | 'share-link' | 'visitor-auth' } = {},
) {
  const space = await newSpace(admin, organizationId, 'Handbook');
  const { pageIds } = await mergePages(t, admin, space.id, pagesChanges(pages), { subject: 'content' });
  const created = await newSite(admin, organizationId, { ...site, spaces: [space.id] });
  const base = `/${organizationId}/${created.basename}/`;
  return { space, site: created, base, pageIds };
}
