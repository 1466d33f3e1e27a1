import assert from 'node:assert/strict';
import type { TestServer, TestUser } from './server.ts';

/** A published site with one space holding `pages` (markdown by title, in order, nested by `parent`). */
export async function publishedSite(
  t: TestServer,
  admin: TestUser,
  organizationId: string,
  pages: { title: string; markdown: string; parent?: string }[],
  site: { title?: string; visibility?: 'public' | 'unlisted' | 'share-link' | 'visitor-auth' } = {},
) {
  const { data: space } = await admin.api.orgs.createSpace(organizationId, { title: 'Handbook' });
  const { data: cr } = await admin.api.spaces.createChangeRequest(space.id, { subject: 'content' });
  const changes = pages.map((p) => ({ operation: 'insert_page', ref: p.title, title: p.title, ...(p.parent ? { into: p.parent } : {}), document: { markdown: p.markdown } }));
  const edit = await t.request('POST', `/v1/spaces/${space.id}/change-requests/${cr.id}/content?compat=false`, { token: admin.token, body: { changes } });
  assert.equal(edit.status, 200, JSON.stringify(edit.body));
  await admin.api.spaces.mergeChangeRequest(space.id, cr.id);
  const { data: created } = await admin.api.orgs.createSite(organizationId, { title: site.title ?? 'Handbook Site', ...(site.visibility ? { visibility: site.visibility } : {}) } as never);
  await admin.api.orgs.addSpaceToSite(organizationId, created.id, { spaceId: space.id });
  await admin.api.orgs.publishSite(organizationId, created.id, {} as never);
  const base = `/${organizationId}/${created.basename}/`;
  return { space, site: created, base, pageIds: edit.body.changes.map((c: { page: { id: string } }) => c.page.id) as string[] };
}
