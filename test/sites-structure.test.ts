import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { generateNKeysBetween } from 'fractional-indexing';
import { sql } from 'kysely';
import { bulkSpaces } from './support/bulk.ts';
import * as factories from './support/factories.ts';
import { expectStatus, startTestServer, type TestServer, type TestUser } from './support/server.ts';

let t: TestServer;
before(async () => {
  t = await startTestServer();
});
after(async () => {
  await t?.close();
});

async function siteWithSections(titles: string[]) {
  const { admin, org } = await factories.newOrg(t, 'Structure Inc');
  const site = (await admin.api.orgs.createSite(org.id, { title: 'Docs' })).data;
  const sections = [];
  for (const title of titles) {
    const space = (await admin.api.orgs.createSpace(org.id, { title })).data;
    sections.push((await admin.api.orgs.addSectionToSite(org.id, site.id, { spaceId: space.id, title })).data);
  }
  return { admin, org, site, sections };
}

function raw(user: TestUser, method: string, path: string, body?: unknown) {
  return t.request(method, `/v1${path}`, { token: user.token, ...(body !== undefined ? { body } : {}) });
}

/** Titles of the structure as nested arrays: a group is [title, children]. */
async function outline(user: TestUser, orgId: string, siteId: string) {
  const { data } = await user.api.orgs.getSiteStructure(orgId, siteId);
  assert.equal(data.type, 'sections');
  const walk = (items: any[]): unknown[] => items.map((i) => (i.object === 'site-section-group' ? [i.title, walk(i.children)] : i.title));
  return walk(data.structure);
}

test('section groups nest, take sections, release them on delete; spec-only group operations over HTTP', async () => {
  const { admin, org, site, sections } = await siteWithSections(['Alpha', 'Beta', 'Gamma']);
  const [a, b, c] = sections.map((s) => s.id);
  const base = `/orgs/${org.id}/sites/${site.id}`;
  const { data: outer } = await admin.api.orgs.addSectionGroupToSite(org.id, site.id, { title: 'Outer', sections: [a!], icon: 'gear' });
  assert.equal(outer.object, 'site-section-group');
  assert.deepEqual(outer.children.map((x) => x.id), [a]);
  assert.equal(outer.icon, 'gear');
  const { data: inner } = await admin.api.orgs.addSectionGroupToSite(org.id, site.id, { title: 'Inner', parent: outer.id });
  assert.equal(inner.sectionGroup, outer.id);
  assert.deepEqual(await outline(admin, org.id, site.id), ['Beta', 'Gamma', ['Outer', ['Alpha', ['Inner', []]]]]);

  // POST …/section-groups/{id}/sections (not in the official document): the spec's SiteSectionGroup.
  const put = await raw(admin, 'POST', `${base}/section-groups/${inner.id}/sections`, { sectionId: b });
  assert.equal(put.status, 200);
  assert.equal(put.body.object, 'site-section-group');
  assert.deepEqual(put.body.children.map((x: { id: string }) => x.id), [b]);
  assert.equal(put.body.children[0].sectionGroup, inner.id);
  assert.deepEqual(await outline(admin, org.id, site.id), ['Gamma', ['Outer', ['Alpha', ['Inner', ['Beta']]]]]);
  const missing = await raw(admin, 'POST', `${base}/section-groups/${inner.id}/sections`, { sectionId: 'nope' });
  assert.equal(missing.status, 400);
  assert.match(missing.body.error.message, /sectionId: section nope is not part of this site/);

  // DELETE …/section-groups/{id}/sections/{sectionId}: the section goes right after the group.
  const out = await raw(admin, 'DELETE', `${base}/section-groups/${inner.id}/sections/${b}`);
  assert.equal(out.status, 204);
  assert.deepEqual(await outline(admin, org.id, site.id), ['Gamma', ['Outer', ['Alpha', ['Inner', []], 'Beta']]]);

  // PATCH: title, icon, parent (a cycle is a 400).
  const { data: renamed } = await admin.api.orgs.updateSiteSectionGroupById(org.id, site.id, inner.id, { title: 'Inside', icon: null });
  assert.equal(renamed.title, 'Inside');
  const cycle = await raw(admin, 'PATCH', `${base}/section-groups/${outer.id}`, { parentSectionGroupId: inner.id });
  assert.equal(cycle.status, 400);
  assert.match(cycle.body.error.message, /inside itself/);
  const self = await raw(admin, 'PATCH', `${base}/section-groups/${outer.id}`, { parentSectionGroupId: outer.id });
  assert.equal(self.status, 400);

  const { data: groups } = await admin.api.orgs.listSiteSectionGroups(org.id, site.id);
  assert.equal(groups.count, 2);

  // Deleting a group releases its children to its parent.
  await admin.api.orgs.deleteSiteSectionGroupById(org.id, site.id, outer.id);
  assert.deepEqual(await outline(admin, org.id, site.id), ['Gamma', 'Alpha', ['Inside', []], 'Beta']);
  assert.equal((await admin.api.orgs.listSiteSections(org.id, site.id)).data.count, 3);
  void c;
});

test('sortSiteStructure and the deprecated moves reorder; foreign ids and cycles are 400s', async () => {
  const { admin, org, site, sections } = await siteWithSections(['One', 'Two', 'Three']);
  const [one, two, three] = sections.map((s) => s.id) as [string, string, string];
  const { data: moved } = await admin.api.orgs.sortSiteStructure(org.id, site.id, {
    item: { type: 'site-section', id: three },
    position: { before: { type: 'site-section', id: one } },
  });
  assert.equal((moved as { id: string }).id, three);
  assert.deepEqual(await outline(admin, org.id, site.id), ['Three', 'One', 'Two']);
  await admin.api.orgs.moveSiteSection(org.id, site.id, one, { position: { after: { type: 'site-section', siteSection: two } } });
  assert.deepEqual(await outline(admin, org.id, site.id), ['Three', 'Two', 'One']);

  // A section placed next to a section inside a group joins that group.
  const { data: group } = await admin.api.orgs.addSectionGroupToSite(org.id, site.id, { title: 'G', sections: [two] });
  await admin.api.orgs.sortSiteStructure(org.id, site.id, { item: { type: 'site-section', id: one }, position: { after: { type: 'site-section', id: two } } });
  assert.deepEqual(await outline(admin, org.id, site.id), ['Three', ['G', ['Two', 'One']]]);
  await admin.api.orgs.moveSiteSectionGroup(org.id, site.id, group.id, { position: { before: { type: 'site-section', id: three } } });
  assert.deepEqual(await outline(admin, org.id, site.id), [['G', ['Two', 'One']], 'Three']);

  // Site spaces are ordered inside their section.
  const extra = (await admin.api.orgs.createSpace(org.id, { title: 'Extra' })).data;
  const { data: ss } = await admin.api.orgs.addSpaceToSite(org.id, site.id, { spaceId: extra.id, sectionId: one });
  const first = sections[0]!.siteSpaces[0]!.id;
  await admin.api.orgs.moveSiteSpace(org.id, site.id, ss.id, { position: { before: { type: 'site-space', siteSpace: first } } });
  const { data: sec } = await admin.api.orgs.listSiteSections(org.id, site.id);
  assert.deepEqual(sec.items.find((s) => s.id === one)!.siteSpaces.map((s) => s.id), [ss.id, first]);

  // Bad moves.
  const other = await siteWithSections(['Elsewhere']);
  const bad = async (body: unknown, message: RegExp) => {
    const res = await raw(admin, 'PATCH', `/orgs/${org.id}/sites/${site.id}/structure/sort`, body);
    assert.equal(res.status, 400, JSON.stringify(res.body));
    assert.match(res.body.error.message, message);
  };
  await bad({ item: { type: 'site-section', id: one }, position: { before: { type: 'site-section', id: other.sections[0]!.id } } }, /position\.before: section .* is not part of this site/);
  await bad({ item: { type: 'site-section', id: other.sections[0]!.id }, position: {} }, /item: section .* is not part of this site/);
  await bad({ item: { type: 'site-section-group', id: group.id }, position: { after: { type: 'site-section', id: two } } }, /inside itself/);
  await bad({ item: { type: 'site-space', id: ss.id }, position: { after: { type: 'site-section', id: two } } }, /only be placed next to a site space/);
  await bad({ item: { type: 'site-section', id: one }, position: { after: { type: 'site-section', id: one } } }, /relative to itself/);
  await bad({ item: { type: 'site-section', id: three }, position: { after: { type: 'site-section-group', id: group.id }, before: { type: 'site-section', id: three } } }, /relative to itself/);
  await bad({ item: { type: 'site-section', id: one }, position: { after: { type: 'site-section', id: two }, before: { type: 'site-section', id: two } } }, /adjacent/);
  await bad({ item: { type: 'site-external-link', id: 'x' }, position: {} }, /external links/);
  await bad({ item: { type: 'site-space', id: ss.id }, position: { after: { type: 'site-space', id: sections[1]!.siteSpaces[0]!.id } } }, /another section/);
});

test('concurrent moves leave a consistent order with distinct keys', async () => {
  const titles = Array.from({ length: 12 }, (_, i) => `S${String(i).padStart(2, '0')}`);
  const { admin, org, site, sections } = await siteWithSections(titles);
  const ids = sections.map((s) => s.id);
  // Every section moved before the first one at once: each move sees the order the previous left.
  const results = await Promise.all(
    ids.slice(1).map((id, i) =>
      admin.api.orgs.sortSiteStructure(org.id, site.id, { item: { type: 'site-section', id }, position: { before: { type: 'site-section', id: ids[i % 2 === 0 ? 0 : 1]! } } }).then(
        (r) => r.status,
        (err) => (err as { response?: Response }).response?.status,
      ),
    ),
  );
  // Moves whose anchor moved are still valid: the anchor stays a sibling.
  assert.ok(results.every((s) => s === 200), JSON.stringify(results));
  const rows = await t.server.services.db.selectFrom('site_sections').select(['id', 'position']).where('site_id', '=', site.id).execute();
  assert.equal(new Set(rows.map((r) => r.position)).size, rows.length, 'positions are distinct');
  const order = (await outline(admin, org.id, site.id)) as string[];
  assert.deepEqual([...order].sort(), [...titles].sort(), 'every section once');
  // S00 ends after every section moved before it; the structure order is the key order.
  const byKey = [...rows].sort((a, b) => (a.position < b.position ? -1 : 1)).map((r) => sections.find((s) => s.id === r.id)!.title);
  assert.deepEqual(order, byKey);
});

test('a site with 1,000 site spaces in 50 sections lists every page correctly', async () => {
  const { admin, org } = await factories.newOrg(t, 'Scale Inc');
  const db = t.server.services.db;
  const site = (await admin.api.orgs.createSite(org.id, { title: 'Big' })).data;
  await bulkSpaces(db, org.id, 1000, admin.id);
  const sectionKeys = generateNKeysBetween(null, null, 50);
  const spaceKeys = generateNKeysBetween(null, null, 20);
  await db.transaction().execute(async (trx) => {
    await sql`
      INSERT INTO site_sections (id, organization_id, site_id, title, path, is_default, position, created_at)
      SELECT 'sec' || n, ${org.id}, ${site.id}, 'Section ' || n, 'section-' || n, n = 1, (${sql.val(sectionKeys)}::text[])[n], now()
      FROM generate_series(1, 50) AS n`.execute(trx);
    await sql`
      WITH s AS (SELECT id, row_number() OVER (ORDER BY seq) - 1 AS i FROM spaces WHERE organization_id = ${org.id})
      INSERT INTO site_spaces (id, organization_id, site_id, space_id, section_id, path, is_default, position, created_at)
      SELECT 'ss' || i, ${org.id}, ${site.id}, id, 'sec' || (i / 20 + 1), 'space-' || i, i % 20 = 0, (${sql.val(spaceKeys)}::text[])[i % 20 + 1], now()
      FROM s`.execute(trx);
  });
  const seen = new Set<string>();
  let page: string | undefined;
  let pages = 0;
  do {
    const { data } = await admin.api.orgs.listSiteSpaces(org.id, site.id, { limit: 300, ...(page ? { page } : {}) });
    assert.equal(data.count, 1000);
    for (const item of data.items) {
      assert.ok(!seen.has(item.id), `site space ${item.id} listed twice`);
      seen.add(item.id);
      assert.ok(item.section);
    }
    page = data.next?.page;
    pages++;
  } while (page);
  assert.equal(seen.size, 1000);
  assert.equal(pages, 4);
  const { data: defaults } = await admin.api.orgs.listSiteSpaces(org.id, site.id, { default: true, limit: 1000 });
  assert.equal(defaults.count, 50);
  const sectionsSeen: string[] = [];
  let sectionPage: string | undefined;
  do {
    const { data } = await admin.api.orgs.listSiteSections(org.id, site.id, { limit: 20, ...(sectionPage ? { page: sectionPage } : {}) });
    assert.equal(data.count, 50);
    for (const s of data.items) {
      assert.equal(s.siteSpaces.length, 20);
      sectionsSeen.push(s.id);
    }
    sectionPage = data.next?.page;
  } while (sectionPage);
  assert.equal(new Set(sectionsSeen).size, 50);
  const { data: structure } = await admin.api.orgs.getSiteStructure(org.id, site.id);
  assert.equal(structure.structure.length, 50);
  assert.equal((await admin.api.orgs.getSiteById(org.id, site.id)).data.siteSpaces, 1000);
  await expectStatus(admin.api.orgs.listSiteSpaces(org.id, site.id, { page: 'garbage' }), 400);
});

/** Every item of a list, read a page of `limit` at a time through the official client. */
async function allPages<T>(read: (page: string | undefined) => Promise<{ data: { items: T[]; next?: { page: string } } }>): Promise<T[]> {
  const items: T[] = [];
  let page: string | undefined;
  do {
    const { data } = await read(page);
    items.push(...data.items);
    page = data.next?.page;
  } while (page);
  return items;
}

test('section, group and site-space listings follow the site order that moves set, page after page', async () => {
  const { admin, org, site, sections } = await siteWithSections(['Aa', 'Bb', 'Cc', 'Dd', 'Ee']);
  const [a, b, c, d, e] = sections.map((s) => s.id) as [string, string, string, string, string];
  // D first, then a group holding C and an inner group with A, then B, then E.
  await admin.api.orgs.moveSiteSection(org.id, site.id, d, { position: { before: { type: 'site-section', siteSection: a } } });
  const { data: outer } = await admin.api.orgs.addSectionGroupToSite(org.id, site.id, { title: 'Outer', sections: [c] });
  const { data: inner } = await admin.api.orgs.addSectionGroupToSite(org.id, site.id, { title: 'Inner', parent: outer.id, sections: [a] });
  await admin.api.orgs.sortSiteStructure(org.id, site.id, { item: { type: 'site-section-group', id: outer.id }, position: { after: { type: 'site-section', id: d } } });
  await admin.api.orgs.sortSiteStructure(org.id, site.id, { item: { type: 'site-section', id: e }, position: { after: { type: 'site-section', id: b } } });
  assert.deepEqual(await outline(admin, org.id, site.id), ['Dd', ['Outer', ['Cc', ['Inner', ['Aa']]]], 'Bb', 'Ee']);

  const byTitle = new Map(sections.map((s) => [s.id, s.title]));
  for (const limit of [1, 2, 50]) {
    const listed = await allPages((page) => admin.api.orgs.listSiteSections(org.id, site.id, { limit, ...(page ? { page } : {}) }));
    assert.deepEqual(listed.map((s) => byTitle.get(s.id)), ['Dd', 'Cc', 'Aa', 'Bb', 'Ee'], `sections, ${limit} a page`);
    const groups = await allPages((page) => admin.api.orgs.listSiteSectionGroups(org.id, site.id, { limit, ...(page ? { page } : {}) }));
    assert.deepEqual(groups.map((g) => g.title), ['Outer', 'Inner'], `groups, ${limit} a page`);
  }
  // A group moved after a section created later lists after it.
  await admin.api.orgs.moveSiteSectionGroup(org.id, site.id, outer.id, { position: { after: { type: 'site-section', id: e } } });
  const { data: moved } = await admin.api.orgs.listSiteSections(org.id, site.id);
  assert.deepEqual(moved.items.map((s) => byTitle.get(s.id)), ['Dd', 'Bb', 'Ee', 'Cc', 'Aa']);
  const { data: groupsMoved } = await admin.api.orgs.listSiteSectionGroups(org.id, site.id);
  assert.deepEqual(groupsMoved.items.map((g) => g.id), [outer.id, inner.id]);

  // Site spaces: in the order of their sections, then their own order inside each section.
  const extra = (await admin.api.orgs.createSpace(org.id, { title: 'Extra' })).data;
  const { data: added } = await admin.api.orgs.addSpaceToSite(org.id, site.id, { spaceId: extra.id, sectionId: d });
  const first = sections[3]!.siteSpaces[0]!.id;
  await admin.api.orgs.moveSiteSpace(org.id, site.id, added.id, { position: { before: { type: 'site-space', siteSpace: first } } });
  const sectionOf = new Map(sections.map((s) => [s.siteSpaces[0]!.id, s.title]));
  sectionOf.set(added.id, 'Dd+');
  for (const limit of [1, 3, 50]) {
    const listed = await allPages((page) => admin.api.orgs.listSiteSpaces(org.id, site.id, { limit, ...(page ? { page } : {}) }));
    assert.deepEqual(listed.map((s) => sectionOf.get(s.id)), ['Dd+', 'Dd', 'Bb', 'Ee', 'Cc', 'Aa'], `site spaces, ${limit} a page`);
  }
  // Deleting the default section makes the first remaining one in the site's order the default.
  const defaultSection = (await admin.api.orgs.listSiteSections(org.id, site.id)).data.items.find((s) => s.default)!;
  assert.equal(defaultSection.id, a, 'the first section created is the default');
  await admin.api.orgs.deleteSiteSectionById(org.id, site.id, a);
  const after = (await admin.api.orgs.listSiteSections(org.id, site.id)).data.items;
  assert.deepEqual(after.filter((s) => s.default).map((s) => byTitle.get(s.id)), ['Dd']);
});
