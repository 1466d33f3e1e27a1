import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { addMember, mergeChanges, newSpace } from './support/factories.ts';
import { expectStatus, startTestServer, type TestServer } from './support/server.ts';

let t: TestServer;
before(async () => {
  t = await startTestServer();
});
after(async () => {
  await t?.close();
});

describe('search', () => {
  test('space search: title matches first, sections with excerpts, ancestors; follows merges', async () => {
    const ann = await t.user('Ann');
    const { data: org } = await ann.api.orgs.createOrganization({ title: 'Searchers' });
    const space = await newSpace(ann, org.id, 'Manual');
    await mergeChanges(ann, space.id, [
      { operation: 'insert_page', ref: 'setup', title: 'Setup', document: { markdown: 'How to prepare.\n\n## Databases\n\nInstall PostgreSQL first.\n' } },
      { operation: 'insert_page', into: 'setup', title: 'Kubernetes deployment', document: { markdown: 'Deploy on a cluster.\n' } },
      { operation: 'insert_page', title: 'Operations', document: { markdown: 'Rolling kubernetes upgrades are covered elsewhere.\n' } },
    ]);
    const { data } = await ann.api.spaces.searchSpaceContent(space.id, { query: 'kubernetes' });
    assert.deepEqual(data.items.map((i) => i.title), ['Kubernetes deployment', 'Operations']);
    const top = data.items[0]!;
    assert.equal(top.path, 'setup/kubernetes-deployment');
    assert.deepEqual(top.ancestors, [{ title: 'Setup' }]);
    assert.equal(top.rank, 1);

    const { data: db } = await ann.api.spaces.searchSpaceContent(space.id, { query: 'postgresql' });
    assert.equal(db.items[0]!.title, 'Setup');
    const section = db.items[0]!.sections![0]!;
    assert.equal(section.title, 'Databases');
    assert.match(section.body, /PostgreSQL/);
    assert.match(section.urls.app, /#databases$/);

    // A merge re-indexes the changed page: old words go, new ones come.
    const opsId = data.items[1]!.id;
    await mergeChanges(ann, space.id, [{ operation: 'update_page', page: opsId, document: { markdown: 'Now about monitoring.\n' } }]);
    assert.deepEqual((await ann.api.spaces.searchSpaceContent(space.id, { query: 'kubernetes' })).data.items.map((i) => i.title), ['Kubernetes deployment']);
    assert.deepEqual((await ann.api.spaces.searchSpaceContent(space.id, { query: 'monitoring' })).data.items.map((i) => i.id), [opsId]);

    const long = await t.request('GET', `/v1/spaces/${space.id}/search?query=${'x'.repeat(513)}`, { token: ann.token });
    assert.equal(long.status, 400);
  });

  test('organization search groups per space and never leaks invisible or deleted spaces', async () => {
    const ann = await t.user('Ann');
    const guest = await t.user('Guest');
    const { data: org } = await ann.api.orgs.createOrganization({ title: 'Many spaces' });
    await addMember(t, org.id, guest, null);
    const spaces = [];
    for (const title of ['Alpha', 'Beta', 'Gamma']) {
      const space = await newSpace(ann, org.id, title);
      await mergeChanges(ann, space.id, [{ operation: 'insert_page', title: `${title} zebra guide`, document: { markdown: 'Stripes.\n' } }]);
      spaces.push(space);
    }
    const { data } = await ann.api.orgs.searchOrganizationContent(org.id, { query: 'zebra' });
    assert.deepEqual(data.items.map((s) => s.title).sort(), ['Alpha', 'Beta', 'Gamma']);
    assert.ok(data.items.every((s) => s.pages.length === 1));

    await ann.api.spaces.deleteSpaceById(spaces[1]!.id);
    assert.deepEqual((await ann.api.orgs.searchOrganizationContent(org.id, { query: 'zebra' })).data.items.map((s) => s.title).sort(), ['Alpha', 'Gamma']);

    // A guest sees only what was granted.
    assert.deepEqual((await guest.api.orgs.searchOrganizationContent(org.id, { query: 'zebra' })).data.items, []);
    await ann.api.spaces.inviteToSpace(spaces[2]!.id, { role: 'read' as never, users: [guest.id] });
    assert.deepEqual((await guest.api.orgs.searchOrganizationContent(org.id, { query: 'zebra' })).data.items.map((s) => s.id), [spaces[2]!.id]);

    const outsider = await t.user('Outsider');
    await expectStatus(outsider.api.orgs.searchOrganizationContent(org.id, { query: 'zebra' }), 404);
    await expectStatus(outsider.api.spaces.searchSpaceContent(spaces[0]!.id, { query: 'zebra' }), 404);
  });
});

describe('search at scale', () => {
  test('in a 10,000-page space a title match ranks first', async () => {
    const { bulkPages } = await import('./support/content.ts');
    const ann = await t.user('Ann');
    const { data: org } = await ann.api.orgs.createOrganization({ title: 'Big search' });
    const space = await newSpace(ann, org.id, 'Big');
    await bulkPages(t.server.services.db, { id: space.id, organization_id: org.id }, 100, 99, (n) => ({
      title: n === 5000 ? 'Quasar handbook' : `Page ${n}`,
      markdown: n % 97 === 0 ? `This page mentions quasar once, among other things ${n}.\n` : `Ordinary text ${n}.\n`,
    }));
    const { data } = await ann.api.spaces.searchSpaceContent(space.id, { query: 'quasar', limit: 5 });
    assert.equal(data.items[0]!.title, 'Quasar handbook');
    assert.ok((data.count ?? 0) > 50, `count ${data.count}`);
    assert.equal(data.items.length, 5);
    assert.ok(data.next);
    const { data: second } = await ann.api.spaces.searchSpaceContent(space.id, { query: 'quasar', limit: 5, page: data.next!.page });
    assert.equal(second.items[0]!.rank, 6);
    assert.ok(!second.items.some((i) => data.items.some((j) => j.id === i.id)));
  });
});
