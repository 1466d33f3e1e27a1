import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { after, before, describe, test } from 'node:test';
import type { Translation } from '@gitbook/api';
import { sql } from 'kysely';
import { markdownToDocument } from '../src/content/markdown/markdown.ts';
import { expectStatus, startTestServer, type TestServer, type TestUser } from './support/server.ts';
import { mergeChanges, newCollection, newMember, newOrg, newSpace } from './support/factories.ts';
import { fakeEngine, type FakeEngine } from './support/translation-engine.ts';
import { settleJobs } from './support/wait.ts';

// Translation runs against two fake engines on 127.0.0.1 (test/support/translation-engine.ts): a
// LibreTranslate-compatible one and an OpenAI-compatible one, both upper-casing what they get and
// recording it.

let t: TestServer;
let libre: FakeEngine;
let openai: FakeEngine;
before(async () => {
  [libre, openai] = await Promise.all([fakeEngine('libretranslate'), fakeEngine('openai')]);
  t = await startTestServer({ fetchAllowPrivate: true, translationEngine: 'libretranslate', translationEngineUrl: libre.url, translationRetryBaseMs: 20 });
});
after(async () => {
  await t?.close();
  libre?.server.close();
  openai?.server.close();
});

function useEngine(engine: 'libretranslate' | 'openai' | undefined) {
  const config = t.server.services.config;
  config.translationEngine = engine;
  config.translationEngineUrl = engine === 'openai' ? openai.url : engine ? libre.url : undefined;
  config.translationModel = engine === 'openai' ? 'fake-model' : undefined;
}

const BLOCKS = readFileSync(new URL('./fixtures/content-format/blocks.md', import.meta.url), 'utf8').replace(/^# .*\n+/, '');

/** An organization with a source space of three pages (one with every block type, one linking to another). */
async function setup() {
  const { admin, org } = await newOrg(t, 'Translations Inc');
  const collection = await newCollection(admin, org.id, 'Docs');
  const space = await newSpace(admin, org.id, { title: 'Handbook', parent: collection.id });
  await mergeChanges(admin, space.id, [
    { operation: 'insert_page', title: 'Field guide', description: 'Every kind of block', document: { markdown: BLOCKS } },
    { operation: 'insert_page', title: 'Getting started', document: { markdown: 'Install Folio with GitBook today.\n\n## First steps\n\nRead the guide.\n' } },
  ]);
  const pages = (await admin.api.spaces.listPages(space.id)).data.pages;
  const guide = pages.find((p) => p.title === 'Field guide')!;
  const start = pages.find((p) => p.title === 'Getting started')!;
  await mergeChanges(admin, space.id, [
    { operation: 'insert_page', title: 'Links', into: start.id, document: { markdown: `See [the guide](/pages/${guide.id}) and [first steps](/pages/${start.id}#first-steps).\n` } },
  ]);
  return { admin, org, collection, space, guide, start };
}

/** Runs the job queue until idle (runs are jobs), then answers the translation, which has made `runs` runs by then. */
async function waitForRun(user: TestUser, organizationId: string, id: string, runs: number): Promise<Translation> {
  await settleJobs(t);
  const { data } = await user.api.orgs.getTranslation(organizationId, id);
  const over = (data.status !== 'running' && data.status !== 'pending') || !!(data as { error?: unknown }).error;
  assert.ok(data.stats.runs >= runs && over, `translation run ${runs} finished: ${JSON.stringify(data)}`);
  return data;
}

async function pageMarkdown(user: TestUser, spaceId: string, pageId: string) {
  const { data } = await user.api.spaces.getPageById(spaceId, pageId, { format: 'markdown' } as never);
  return (data as { markdown: string }).markdown;
}

/** A document with its text lower-cased and node keys and heading anchors left out: what must not change. */
function shape(markdown: string): unknown {
  const strip = (value: unknown): unknown => {
    if (Array.isArray(value)) return value.map(strip);
    if (!value || typeof value !== 'object') return value;
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value)) {
      if (k === 'key') continue;
      if (k === 'text' && typeof v === 'string') out[k] = v.toLowerCase();
      else out[k] = strip(v);
    }
    const node = value as { type?: string; data?: Record<string, unknown> };
    if (/^heading-/.test(node.type ?? '') && out.data) delete (out.data as Record<string, unknown>).id;
    for (const field of ['title', 'label', 'alt', 'description']) if (typeof out[field] === 'string') out[field] = (out[field] as string).toLowerCase();
    return out;
  };
  return strip(markdownToDocument(markdown));
}

describe('translations', () => {
  test('create, read, list, update, delete; validation', async () => {
    const { admin, org, space } = await setup();
    const { data: created } = await admin.api.orgs.createTranslation(org.id, { language: 'fr' as never, source: { space: space.id, language: 'en' as never } });
    assert.equal(created.object, 'translation');
    assert.equal(created.status, 'pending');
    assert.equal(created.result, undefined);
    assert.deepEqual(created.stats, { runs: 0, totalWords: 0, totalPages: 0, totalDuration: 0, latestRunDuration: 0, latestPages: 0, latestWords: 0 });
    assert.deepEqual(created.permissions, { view: true, edit: true });
    const { data: listed } = await admin.api.orgs.listTranslations(org.id);
    assert.deepEqual(listed.items.map((i) => i.id), [created.id]);
    const instructions = { object: 'document', data: {}, nodes: [{ object: 'block', type: 'paragraph', nodes: [{ object: 'text', leaves: [{ object: 'leaf', text: 'Use a formal tone.', marks: [] }] }] }] };
    const { data: updated } = await admin.api.orgs.updateTranslation(org.id, created.id, { instructions: instructions as never });
    assert.match(JSON.stringify(updated.instructions), /Use a formal tone\./);

    // A reader sees translations but cannot change them; an outsider does not see the organization.
    const reader = await newMember(t, org.id, 'read');
    const { data: seen } = await reader.api.orgs.getTranslation(org.id, created.id);
    assert.deepEqual(seen.permissions, { view: true, edit: false });
    await expectStatus(reader.api.orgs.runTranslation(org.id, created.id), 403);
    const outsider = await t.user('Out');
    await expectStatus(outsider.api.orgs.getTranslation(org.id, created.id), 404);

    // Bad input: unknown language, same language as the source, a source the caller cannot read.
    const post = (body: unknown) => t.request('POST', `/v1/orgs/${org.id}/translations`, { token: admin.token, body });
    let res = await post({ language: 'xx', source: { space: space.id, language: 'en' } });
    assert.equal(res.status, 400);
    assert.match(res.body.error.message, /language/);
    res = await post({ language: 'en', source: { space: space.id, language: 'en' } });
    assert.equal(res.status, 400);
    assert.match(res.body.error.message, /must differ from the source language/);
    const other = await newOrg(t, 'Elsewhere');
    const hidden = await newSpace(other.admin, other.org.id, 'Secret');
    res = await post({ language: 'de', source: { space: hidden.id, language: 'en' } });
    assert.equal(res.status, 400);
    assert.match(res.body.error.message, /source\.space/);
    await expectStatus(admin.api.orgs.getTranslation(org.id, 'nope'), 404);
    await expectStatus(admin.api.orgs.runTranslation(org.id, 'nope'), 404);

    // Delete: 205, then 204 once gone.
    let del = await t.request('DELETE', `/v1/orgs/${org.id}/translations/${created.id}`, { token: admin.token });
    assert.equal(del.status, 205);
    del = await t.request('DELETE', `/v1/orgs/${org.id}/translations/${created.id}`, { token: admin.token });
    assert.equal(del.status, 204);
    await expectStatus(admin.api.orgs.getTranslation(org.id, created.id), 404);
  });

  test('a run translates text only, keeps structure, code, URLs and expressions, maps page ids; a re-run sends only changed segments', async () => {
    useEngine('libretranslate');
    const { admin, org, collection, space, guide, start } = await setup();
    await admin.api.orgs.updateGlossaryEntries(org.id, {
      operations: [
        { type: 'insert', translations: { en: 'Folio', fr: 'Folio-FR' } },
        { type: 'insert', translations: { en: 'GitBook' } },
      ] as never,
    });
    const { data: translation } = await admin.api.orgs.createTranslation(org.id, { language: 'fr' as never, source: { space: space.id, language: 'en' as never } });
    const sentBefore = libre.texts.length;
    await admin.api.orgs.runTranslation(org.id, translation.id);
    const done = await waitForRun(admin, org.id, translation.id, 1);
    assert.equal(done.status, 'completed', JSON.stringify(done));
    assert.ok(done.result, 'the first run made the target space');
    const firstTexts = libre.texts.slice(sentBefore);
    assert.ok(firstTexts.length > 20);
    assert.equal(done.stats.runs, 1);
    assert.equal(done.stats.latestPages, 3);
    assert.equal(done.stats.totalPages, 3);
    assert.ok(done.stats.latestWords > 40);

    // The target: in the source's collection, titled with the language, its language set, one merged change request.
    const { data: target } = await admin.api.spaces.getSpaceById(done.result!.space);
    assert.equal(target.parent, collection.id);
    assert.equal(target.title, 'Français');
    assert.equal(target.language, 'fr');
    assert.equal(target.revision, done.result!.revision);
    const { data: crs } = await admin.api.spaces.listChangeRequestsForSpace(target.id, { status: "merged" } as never);
    assert.equal(crs.items.length, 1);

    // Same tree, new ids, translated titles and descriptions.
    const pages = (await admin.api.spaces.listPages(target.id)).data.pages as { id: string; title: string; description?: string; slug: string; pages: { id: string; title: string }[] }[];
    assert.deepEqual(pages.map((p) => p.title), ['FIELD GUIDE', 'GETTING STARTED']);
    assert.equal(pages[0]!.description, 'EVERY KIND OF BLOCK');
    assert.equal(pages[0]!.slug, 'field-guide');
    assert.deepEqual(pages[1]!.pages.map((p) => p.title), ['LINKS']);
    const [tGuide, tStart] = pages;
    assert.notEqual(tGuide!.id, guide.id);

    // Every block comes through with the same structure and data; only text changed (upper-cased).
    const source = await pageMarkdown(admin, space.id, guide.id);
    const translated = await pageMarkdown(admin, target.id, tGuide!.id);
    assert.deepEqual(shape(translated), shape(source));
    for (const kept of ['console.log("{% not a tag %}");', '`{% raw %}`', 'space.vars.version', 'https://example.com/start?a=1', 'Summarise this page in 3 bullets.', '{% hint style="success" icon="rocket" %}', 'graph TD; A-->B', '\\frac{a}{b}', 'visitor.claims.plan === "pro"', '/files/f_123']) {
      assert.ok(translated.includes(kept), `kept as is: ${kept}\n${translated}`);
    }
    for (const text of ['SHIPPED WITH 50% OFF.', 'A PARAGRAPH WITH **BOLD**', 'title="JAVASCRIPT"', 'RUN THE INSTALLER.', 'THE MANUAL', 'HIDDEN BODY.', 'CENTERED TEXT', 'PRO CONTENT.', 'GET STARTED']) {
      assert.ok(translated.includes(text), `translated: ${text}\n${translated}`);
    }
    assert.ok(!firstTexts.some((x) => x.includes('console.log') || x.includes('space.vars') || x.includes('https://')), 'code, expressions and URLs never go to the engine');

    // Glossary: a fixed translation and a do-not-translate term; neither is sent to the engine.
    const startMarkdown = await pageMarkdown(admin, target.id, tStart!.id);
    assert.match(startMarkdown, /INSTALL Folio-FR WITH GitBook TODAY\./);
    assert.ok(firstTexts.includes('Install ⟦0⟧ with ⟦1⟧ today.'));

    // Links point at the target's pages, anchors keep their source names.
    const links = pages[1]!.pages[0]!;
    const linksMarkdown = await pageMarkdown(admin, target.id, links.id);
    assert.match(startMarkdown, /## FIRST STEPS/);
    const { data: linksDoc } = await admin.api.spaces.getPageById(target.id, links.id, { format: 'document' } as never);
    const refs = JSON.stringify((linksDoc as { document: unknown }).document);
    assert.ok(refs.includes(`"page":"${tGuide!.id}"`), refs);
    assert.ok(refs.includes(`"anchor":"first-steps"`) && refs.includes(`"page":"${tStart!.id}"`), refs);
    assert.match(linksMarkdown, /SEE \[THE GUIDE\]/);
    const { data: startDoc } = await admin.api.spaces.getPageById(target.id, tStart!.id, { format: 'document' } as never);
    assert.match(JSON.stringify(startDoc), /"id":"first-steps"/);

    // A one-page edit: the re-run sends only that page's changed segment, and keeps the page ids.
    await mergeChanges(admin, space.id, [{ operation: 'update_page', page: start.id, document: { markdown: 'Install Folio with GitBook today.\n\n## First steps\n\nRead the whole guide.\n' } }]);
    const sentBeforeRerun = libre.texts.length;
    const requestsBefore = libre.requests;
    await admin.api.orgs.runTranslation(org.id, translation.id);
    const second = await waitForRun(admin, org.id, translation.id, 2);
    assert.equal(second.status, 'completed');
    assert.deepEqual(libre.texts.slice(sentBeforeRerun), ['Read the whole guide.']);
    assert.equal(libre.requests - requestsBefore, 1);
    assert.equal(second.stats.latestPages, 1);
    assert.equal(second.stats.latestWords, 4);
    assert.equal(second.stats.totalWords, done.stats.totalWords + 4);
    assert.equal(second.stats.totalPages, 3);
    const after = (await admin.api.spaces.listPages(target.id)).data.pages as { id: string }[];
    assert.deepEqual(after.map((p) => p.id), pages.map((p) => p.id));
    assert.match(await pageMarkdown(admin, target.id, tStart!.id), /READ THE WHOLE GUIDE\./);

    // A run with nothing changed sends nothing; deleting the translation keeps the target space.
    const sent = libre.texts.length;
    await admin.api.orgs.runTranslation(org.id, translation.id);
    const third = await waitForRun(admin, org.id, translation.id, 3);
    assert.equal(third.status, 'completed');
    assert.equal(libre.texts.length, sent);
    assert.equal(third.stats.latestWords, 0);
    const del = await t.request('DELETE', `/v1/orgs/${org.id}/translations/${translation.id}`, { token: admin.token });
    assert.equal(del.status, 205);
    assert.equal((await admin.api.spaces.getSpaceById(target.id)).data.id, target.id);
  });

  test('OpenAI-compatible engine: instructions as guidance, batches, same result', async () => {
    useEngine('openai');
    try {
      const { admin, org, space } = await setup();
      const instructions = { object: 'document', data: {}, nodes: [{ object: 'block', type: 'paragraph', nodes: [{ object: 'text', leaves: [{ object: 'leaf', text: 'Address the reader formally.', marks: [] }] }] }] };
      const { data: translation } = await admin.api.orgs.createTranslation(org.id, { language: 'de' as never, source: { space: space.id, language: 'en' as never }, instructions: instructions as never });
      const before = openai.requests;
      await admin.api.orgs.runTranslation(org.id, translation.id);
      const done = await waitForRun(admin, org.id, translation.id, 1);
      assert.equal(done.status, 'completed', JSON.stringify(done));
      assert.ok(openai.requests - before >= 2, 'segments are sent in batches');
      assert.match(openai.systems.at(-1)!, /from English to German/);
      assert.match(openai.systems.at(-1)!, /Address the reader formally\./);
      const pages = (await admin.api.spaces.listPages(done.result!.space)).data.pages;
      assert.equal(pages[0]!.title, 'FIELD GUIDE');
      const markdown = await pageMarkdown(admin, done.result!.space, pages[0]!.id);
      assert.ok(markdown.includes('console.log("{% not a tag %}");'));
      assert.ok(markdown.includes('SHIPPED WITH 50% OFF.'));
    } finally {
      useEngine('libretranslate');
    }
  });

  test('retries through intermittent 503s; a failing engine or none leaves a failed run with its reason', async () => {
    useEngine('libretranslate');
    const { admin, org, space } = await setup();
    const create = async (language: string) =>
      (await admin.api.orgs.createTranslation(org.id, { language: language as never, source: { space: space.id, language: 'en' as never } })).data;
    try {
      libre.mode = 'flaky';
      const flaky = await create('es');
      await admin.api.orgs.runTranslation(org.id, flaky.id);
      const done = await waitForRun(admin, org.id, flaky.id, 1);
      assert.equal(done.status, 'completed', JSON.stringify(done));
      assert.equal((done as { error?: unknown }).error, undefined);

      libre.mode = 'down';
      const down = await create('it');
      await admin.api.orgs.runTranslation(org.id, down.id);
      const failed = (await waitForRun(admin, org.id, down.id, 1)) as Translation & { error?: { message: string } };
      assert.equal(failed.status, 'pending');
      assert.match(failed.error!.message, /answered 500: engine is down for maintenance/);
    } finally {
      libre.mode = 'ok';
    }

    useEngine(undefined);
    try {
      const none = await create('nl');
      await admin.api.orgs.runTranslation(org.id, none.id);
      const failed = (await waitForRun(admin, org.id, none.id, 1)) as Translation & { error?: { message: string } };
      assert.match(failed.error!.message, /No translation engine is configured: set TRANSLATION_ENGINE/);
      // Once an engine is there, the next run completes and the error is gone.
      useEngine('libretranslate');
      await admin.api.orgs.runTranslation(org.id, none.id);
      const ok = await waitForRun(admin, org.id, none.id, 2);
      assert.equal(ok.status, 'completed');
      assert.equal((ok as { error?: unknown }).error, undefined);
    } finally {
      useEngine('libretranslate');
    }
  });

  test('runs asked for while one is queued or running are not doubled', async () => {
    useEngine('libretranslate');
    const { admin, org, space } = await setup();
    const { data: translation } = await admin.api.orgs.createTranslation(org.id, { language: 'pl' as never, source: { space: space.id, language: 'en' as never } });
    await Promise.all([1, 2, 3, 4].map(() => admin.api.orgs.runTranslation(org.id, translation.id)));
    // waitForRun ran the job queue until idle: a run queued behind the first one has run too.
    const done = await waitForRun(admin, org.id, translation.id, 1);
    const jobs = await t.server.services.db.selectFrom('jobs').select(['id', 'status']).where('type', '=', 'translation.run').where(sql<string>`payload->>'translation'`, '=', translation.id).execute();
    assert.ok(jobs.length >= 1 && jobs.length <= 2, `at most one run queued behind the running one, got ${jobs.length}`);
    const final = (await admin.api.orgs.getTranslation(org.id, translation.id)).data;
    assert.equal(final.stats.runs, jobs.length);
    assert.equal(done.status, 'completed');
  });

  test('glossary: bulk update, list ordered by language, get; validation', async () => {
    const { admin, org } = await newOrg(t, 'Glossary Inc');
    await admin.api.orgs.updateGlossaryEntries(org.id, {
      operations: [
        { type: 'insert', translations: { en: 'Workspace', fr: 'Espace de travail' } },
        { type: 'insert', translations: { en: 'Billing', fr: 'Facturation' } },
      ] as never,
    });
    const { data: listed } = await admin.api.orgs.listGlossaryEntries(org.id, { orderBy: 'en' as never });
    assert.deepEqual(listed.items.map((e) => e.translations.en), ['Billing', 'Workspace']);
    const billing = listed.items[0]!;
    assert.equal(billing.object, 'glossary-entry');
    await admin.api.orgs.updateGlossaryEntries(org.id, {
      operations: [
        { type: 'update', id: billing.id, translations: { en: 'Billing', fr: 'Facturation', de: 'Abrechnung' } },
        { type: 'delete', id: listed.items[1]!.id },
      ] as never,
    });
    const { data: entry } = await admin.api.orgs.getGlossaryEntry(org.id, billing.id);
    assert.deepEqual(entry.translations, { en: 'Billing', fr: 'Facturation', de: 'Abrechnung' });
    assert.equal((await admin.api.orgs.listGlossaryEntries(org.id)).data.count, 1);
    await expectStatus(admin.api.orgs.getGlossaryEntry(org.id, listed.items[1]!.id), 404);

    const put = (operations: unknown) => t.request('PUT', `/v1/orgs/${org.id}/translations-glossary`, { token: admin.token, body: { operations } });
    let res = await put([{ type: 'insert', translations: { klingon: 'x' } }]);
    assert.equal(res.status, 400);
    assert.match(res.body.error.message, /"klingon" is not a translation language/);
    res = await put([{ type: 'delete', id: 'missing' }]);
    assert.equal(res.status, 400);
    assert.match(res.body.error.message, /not found/);
    const reader = await newMember(t, org.id, 'read');
    await expectStatus(reader.api.orgs.updateGlossaryEntries(org.id, { operations: [] }), 403);
    assert.equal((await reader.api.orgs.listGlossaryEntries(org.id)).data.count, 1);
  });
});
