import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { mergeChanges, newSite, newSpace } from './support/factories.ts';
import { startTestServer, type TestServer, type TestUser } from './support/server.ts';
import { settleJobs } from './support/wait.ts';

/**
 * Search in every language (issue 27): words cut out of Chinese and Japanese sentences, French
 * stems, misspelled and half-typed words, quoted phrases, highlighted snippets, and a published
 * site's readers searching only what the site shows them.
 */

let t: TestServer;
before(async () => {
  t = await startTestServer();
});
after(async () => {
  await t?.close();
});

async function spaceWith(user: TestUser, organizationId: string, title: string, language: string | undefined, pages: { title: string; markdown: string }[]) {
  const space = await newSpace(user, organizationId, { title, ...(language ? { language } : {}) } as never);
  await mergeChanges(
    user,
    space.id,
    pages.map((p) => ({ operation: 'insert_page' as const, title: p.title, document: { markdown: p.markdown } })),
  );
  return space;
}

async function titles(user: TestUser, spaceId: string, query: string) {
  return (await user.api.spaces.searchSpaceContent(spaceId, { query })).data.items.map((i) => i.title);
}

/** The highlighted parts of the first section of the first result. */
async function highlighted(user: TestUser, spaceId: string, query: string) {
  const first = (await user.api.spaces.searchSpaceContent(spaceId, { query })).data.items[0];
  const section = first?.sections?.[0] as { body: string; highlights?: { start: number; end: number }[] } | undefined;
  return (section?.highlights ?? []).map((h) => section!.body.slice(h.start, h.end));
}

describe('search in every language', () => {
  test('Japanese and Chinese pages are found by a word from the middle of a sentence', async () => {
    const ann = await t.user('Ann');
    const { data: org } = await ann.api.orgs.createOrganization({ title: 'Languages' });
    const ja = await spaceWith(ann, org.id, 'ドキュメント', 'ja', [
      { title: '検索ガイド', markdown: '東京都に住んでいる開発者は、ドキュメントの検索機能を毎日使っています。\n\n## 設定\n\n管理者が設定を変更します。\n' },
      { title: 'はじめに', markdown: 'ようこそ。\n' },
    ]);
    assert.deepEqual(await titles(ann, ja.id, '開発者'), ['検索ガイド']);
    assert.deepEqual(await titles(ann, ja.id, '検索機能'), ['検索ガイド']);
    assert.deepEqual(await highlighted(ann, ja.id, '開発者'), ['開発者']);
    // The heading's section, with its anchor.
    const { data: setting } = await ann.api.spaces.searchSpaceContent(ja.id, { query: '管理者' });
    assert.equal(setting.items[0]!.sections![0]!.title, '設定');

    const zh = await spaceWith(ann, org.id, '文档', 'zh', [
      { title: '搜索', markdown: '我们的开发团队每天使用文档搜索功能来查找信息。\n' },
      { title: '欢迎', markdown: '欢迎使用。\n' },
    ]);
    assert.deepEqual(await titles(ann, zh.id, '团队'), ['搜索']);
    assert.deepEqual(await titles(ann, zh.id, '查找信息'), ['搜索']);
    assert.deepEqual(await highlighted(ann, zh.id, '团队'), ['团队']);
    assert.deepEqual(await titles(ann, zh.id, '火车'), []);

    // Across the organization, each space is searched in its own language.
    const { data: both } = await ann.api.orgs.searchOrganizationContent(org.id, { query: '开发团队' });
    assert.deepEqual(both.items.map((s) => s.id), [zh.id]);
  });

  test('a French space stems French: "documents" finds "document"; a language change re-indexes in the background', async () => {
    const ann = await t.user('Ann');
    const { data: org } = await ann.api.orgs.createOrganization({ title: 'Français' });
    const fr = await spaceWith(ann, org.id, 'Guide', 'fr', [
      { title: 'Relecture', markdown: 'Chaque document est relu avant sa publication.\n' },
      { title: 'Accueil', markdown: 'Bienvenue.\n' },
      { title: 'Exploitation', markdown: "Débordement d'entier.\n" },
    ]);
    assert.deepEqual(await titles(ann, fr.id, 'documents'), ['Relecture']);
    // An elision while typing: "d'ent" is "d" and the start of "entier".
    assert.deepEqual(await titles(ann, fr.id, "débordement d'ent"), ['Exploitation']);
    assert.deepEqual(await highlighted(ann, fr.id, 'documents'), ['document']);

    // Written in French but indexed as English (no language): "activées" is not "activer" in English.
    const untagged = await spaceWith(ann, org.id, 'Options', undefined, [{ title: 'Réglages', markdown: 'Activer les options avancées.\n' }]);
    assert.deepEqual(await titles(ann, untagged.id, 'activées'), []);
    await ann.api.spaces.updateSpaceById(untagged.id, { language: 'fr' } as never);
    await settleJobs(t);
    assert.deepEqual(await titles(ann, untagged.id, 'activées'), ['Réglages']);
    const db = t.server.services.db;
    const state = await db.selectFrom('search_state').select('ts_config').where('space_id', '=', untagged.id).executeTakeFirstOrThrow();
    assert.equal(state.ts_config, 'french');
    const rows = await db.selectFrom('search_pages').select('ts_config').where('space_id', '=', untagged.id).execute();
    assert.deepEqual(rows.map((r) => String(r.ts_config)), ['french']);
  });

  test("an organization's default language: new spaces take it; spaces without one are searched in it", async () => {
    const ann = await t.user('Ann');
    const { data: org } = await ann.api.orgs.createOrganization({ title: 'Défaut' });
    const before = await spaceWith(ann, org.id, 'Avant', undefined, [{ title: 'Réglages', markdown: 'Activer les options avancées.\n' }]);
    const english = await spaceWith(ann, org.id, 'English', 'en', [{ title: 'Settings', markdown: 'Activées options.\n' }]);
    assert.deepEqual(await titles(ann, before.id, 'activées'), []);
    const { data: updated } = await ann.api.orgs.updateOrganizationById(org.id, { language: 'fr' } as never);
    assert.equal((updated as { language?: string }).language, 'fr');
    await settleJobs(t);
    // The space without a language follows the organization's; one with its own keeps it.
    assert.deepEqual(await titles(ann, before.id, 'activées'), ['Réglages']);
    const rows = await t.server.services.db.selectFrom('search_pages').select('ts_config').where('space_id', 'in', [before.id, english.id]).orderBy('title').execute();
    assert.deepEqual(rows.map((r) => String(r.ts_config)), ['french', 'english']);
    const { data: created } = await ann.api.orgs.createSpace(org.id, { title: 'Après' });
    assert.equal(created.language, 'fr');
    // Guests and non-admins cannot change it; a code outside the list is refused.
    const bad = await t.request('PATCH', `/v1/orgs/${org.id}`, { token: ann.token, body: { language: 'xx' } });
    assert.equal(bad.status, 400);
  });

  test("support conversations are clustered in the organization's language, with related pages found in it", async () => {
    const ann = await t.user('Ann');
    const { data: org } = await ann.api.orgs.createOrganization({ title: 'Assistance' });
    await ann.api.orgs.updateOrganizationById(org.id, { language: 'fr' } as never);
    await spaceWith(ann, org.id, 'Aide', undefined, [
      { title: 'Exporter en PDF', markdown: "L'exportation des documents en PDF.\n" },
      { title: 'Connexion', markdown: 'Se connecter avec le SSO.\n' },
    ]);
    const said = (id: string, body: string) => ({ id, subject: '', parts: [{ type: 'message', role: 'user', body }] });
    const res = await t.request('POST', `/v1/orgs/${org.id}/conversations`, {
      token: ann.token,
      body: [
        said('pdf-1', "L'exportation de mes documents en PDF échoue."),
        said('pdf-2', "L'exportation d'un document en PDF donne une erreur."),
        said('pdf-3', "L'exportation PDF des documents échoue encore."),
        said('sso-1', 'La connexion avec le SSO échoue.'),
        said('sso-2', 'La connexion SSO donne une erreur 403.'),
      ],
    });
    assert.equal(res.status, 204, JSON.stringify(res.body));
    await settleJobs(t);
    const issues = (await t.request('GET', `/v1/orgs/${org.id}/conversations-issues?limit=100`, { token: ann.token })).body.items as { issue: { cluster: string }; conversation: { id: string } }[];
    const clusterOf = new Map(issues.map((i) => [i.conversation.id, i.issue.cluster]));
    assert.equal(clusterOf.size, 5);
    assert.equal(clusterOf.get('pdf-2'), clusterOf.get('pdf-1'));
    assert.equal(clusterOf.get('pdf-3'), clusterOf.get('pdf-1'));
    assert.equal(clusterOf.get('sso-2'), clusterOf.get('sso-1'));
    assert.notEqual(clusterOf.get('sso-1'), clusterOf.get('pdf-1'));
    const cluster = (await t.request('GET', `/v1/orgs/${org.id}/conversations-clusters/${clusterOf.get('pdf-1')}`, { token: ann.token })).body;
    // French stop words are no keywords; the related page is found through French stems.
    const { keywords } = await t.server.services.db.selectFrom('issues_clusters').select('keywords').where('id', '=', clusterOf.get('pdf-1')!).executeTakeFirstOrThrow();
    assert.ok((keywords as string[]).length > 0 && !(keywords as string[]).some((k) => ['de', 'des', 'les', 'mes', 'en', 'un'].includes(k)), JSON.stringify(keywords));
    assert.equal(cluster.pages[0]?.title, 'Exporter en PDF', JSON.stringify(cluster.pages));
  });

  test('misspelled words, prefixes while typing, quoted phrases and exclusions', async () => {
    const ann = await t.user('Ann');
    const { data: org } = await ann.api.orgs.createOrganization({ title: 'Typos' });
    const space = await spaceWith(ann, org.id, 'Manual', 'en', [
      { title: 'Integrations', markdown: 'Connect other tools to your space.\n' },
      { title: 'Authentication', markdown: 'Sign in with a token.\n' },
      { title: 'Setup', markdown: 'Install first.\n\n## Configuring webhooks\n\nSend events to your server.\n' },
      { title: 'Upgrades', markdown: 'A rolling upgrade replaces nodes one by one.\n' },
      { title: 'Scaling', markdown: 'Upgrade the cluster, then start rolling out the new nodes.\n' },
    ]);
    // A typo in a title or a heading still finds the page.
    assert.equal((await titles(ann, space.id, 'integraton'))[0], 'Integrations');
    const { data: hook } = await ann.api.spaces.searchSpaceContent(space.id, { query: 'webhoks' });
    assert.equal(hook.items[0]!.title, 'Setup');
    assert.match(hook.items[0]!.sections![0]!.urls.app, /#configuring-webhooks$/);
    // The last word, still being typed, is a prefix.
    assert.deepEqual(await titles(ann, space.id, 'authen'), ['Authentication']);
    assert.deepEqual(await titles(ann, space.id, 'sign in with a tok'), ['Authentication']);
    // Quotes: the words in this order; a minus leaves pages out.
    assert.deepEqual(await titles(ann, space.id, '"rolling upgrade"'), ['Upgrades']);
    assert.deepEqual((await titles(ann, space.id, 'rolling upgrade')).sort(), ['Scaling', 'Upgrades']);
    assert.deepEqual(await titles(ann, space.id, 'rolling -cluster'), ['Upgrades']);
    // The snippet marks the words found, stemmed forms included.
    assert.deepEqual(await highlighted(ann, space.id, 'upgrades replace'), ['upgrade', 'replaces']);
    assert.deepEqual(await titles(ann, space.id, 'zzzz qqqq'), []);
  });

  test('a site reader finds only what the site publishes to them', async () => {
    const ann = await t.user('Ann');
    const { data: org } = await ann.api.orgs.createOrganization({ title: 'Readers' });
    const published = await spaceWith(ann, org.id, 'Handbook', 'en', [
      { title: 'Zeppelin guide', markdown: 'How to fly a zeppelin.\n\n## Landing\n\nLand the zeppelin slowly.\n' },
      { title: 'Secret zeppelin plans', markdown: '---\nhidden: true\n---\n\nThe zeppelin hangar.\n' },
    ]);
    const beta = await spaceWith(ann, org.id, 'Beta', 'en', [{ title: 'Zeppelin beta', markdown: 'A faster zeppelin.\n' }]);
    await spaceWith(ann, org.id, 'Internal', 'en', [{ title: 'Zeppelin costs', markdown: 'The zeppelin budget.\n' }]);
    const site = await newSite(ann, org.id, { spaces: [published.id] });
    // A variant only for readers with the beta claim: anonymous readers never reach it.
    const { data: ssBeta } = await ann.api.orgs.addSpaceToSite(org.id, site.id, { spaceId: beta.id });
    await ann.api.orgs.updateSiteSpaceById(org.id, site.id, ssBeta.id, { path: 'beta', condition: 'visitor.claims.beta' });
    const base = `/${org.id}/${site.basename}/`;

    const res = await fetch(`${t.url}${base}search.json?q=${encodeURIComponent('zepelin')}`);
    assert.equal(res.status, 200);
    const found = (await res.json()) as { results: { title: string; url: string; body: string; highlights: { start: number; end: number }[] }[] };
    assert.deepEqual(found.results.map((r) => r.title), ['Zeppelin guide']);
    const html = await (await fetch(`${t.url}${base}search?q=zeppelin+landing`)).text();
    assert.match(html, /<a href="[^"]*zeppelin-guide#landing">Zeppelin guide/);
    assert.match(html, /<mark>Land<\/mark> the <mark>zeppelin<\/mark> slowly/);
    assert.doesNotMatch(html, /Secret|beta|costs/i);

    // The members' site search (searchSiteContent) covers the site's spaces, never the others.
    const { data } = await ann.api.orgs.searchSiteContent(org.id, site.id, { query: 'zeppelin', scope: { mode: 'all' } } as never);
    assert.deepEqual(data.items.map((s) => s.id).sort(), [published.id, beta.id].sort());
  });
});
