import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { bulkSpaces } from './support/bulk.ts';
import { startTestServer, type TestServer } from './support/server.ts';

let t: TestServer;
before(async () => {
  t = await startTestServer();
});
after(async () => {
  await t?.close();
});

test('10,000 spaces page correctly: every space exactly once, in order, while new ones arrive', async () => {
  const ann = await t.user('Ann');
  const { data: org } = await ann.api.orgs.createOrganization({ title: 'Big' });
  await bulkSpaces(t.server.services.db, org.id, 10_000, ann.id);
  const seen = new Set<string>();
  let order: string[] = [];
  let page: string | undefined;
  let pages = 0;
  let added: string | undefined;
  do {
    const { data } = await ann.api.orgs.listSpacesInOrganizationById(org.id, { limit: 1000, ...(page ? { page } : {}) });
    for (const space of data.items) {
      assert.ok(!seen.has(space.id), `${space.id} listed twice`);
      seen.add(space.id);
      assert.equal(space.permissions.admin, true);
    }
    order = order.concat(data.items.map((s) => s.title));
    page = data.next?.page;
    pages++;
    if (pages === 3) added = (await ann.api.orgs.createSpace(org.id, { title: 'Late arrival' })).data.id;
  } while (page);
  assert.equal(seen.size, 10_001);
  assert.ok(seen.has(added!));
  assert.equal(pages, 11);
  assert.equal(order[0], 'Space 1');
  assert.equal(order[9999], 'Space 10000');
  // The list ends with the space created while paging, after every bulk one.
  assert.equal(order[10000], 'Late arrival');
});
