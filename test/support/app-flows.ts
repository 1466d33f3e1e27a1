/** Set-ups shared by the app's flow tests (test/app-flows*.test.ts): content made through the API, as it would be before a person opens the app. */
import { mergePages, newSpace } from './factories.ts';
import type { TestServer, TestUser } from './server.ts';

/** A document written in markdown, as `document` of an insert_page or update_page change. */
export const md = (markdown: string) => ({ markdown });

/**
 * A space in a new organization owned by `owner`, with pages (markdown by title, in order) merged
 * into its main content; answers the organization, the space and the pages' ids.
 */
export async function spaceWithPages(t: TestServer, owner: TestUser, pages: { title: string; markdown: string }[], names: { org?: string; space?: string } = {}) {
  const { data: org } = await owner.api.orgs.createOrganization({ title: names.org ?? 'Review Inc' });
  const space = await newSpace(owner, org.id, names.space ?? 'Handbook');
  const { pageIds } = await mergePages(t, owner, space.id, pages.map((p) => ({ operation: 'insert_page', title: p.title, document: md(p.markdown) })), { subject: 'Seed' });
  return { org, space, pageIds };
}
