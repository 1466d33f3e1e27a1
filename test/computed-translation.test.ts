import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { Translation } from '@gitbook/api';
import { grantDirect, mergeChanges, newCollection, newMember, newOrg, newSpace } from './support/factories.ts';
import { textOf } from './support/content.ts';
import { expectStatus, startTestServer, type TestServer, type TestUser } from './support/server.ts';
import { fakeEngine, type FakeEngine } from './support/translation-engine.ts';
import { settleJobs } from './support/wait.ts';

// Computed content from a translation (`builtin:translation`): getComputedRevision answers the
// pages of the translation's result, getComputedDocument a source document translated. Runs use a
// fake LibreTranslate-compatible engine on 127.0.0.1 that upper-cases what it gets, so translated
// text is easy to tell apart. Every answer goes through the official client, which checks it
// against the official schema.

let t: TestServer;
let engine: FakeEngine;

before(async () => {
  engine = await fakeEngine('libretranslate');
  t = await startTestServer({ fetchAllowPrivate: true, translationEngine: 'libretranslate', translationEngineUrl: engine.url, translationRetryBaseMs: 20 });
});
after(async () => {
  await t?.close();
  engine?.server.close();
});

/** Runs the translation (a job) to its end. */
async function run(user: TestUser, organizationId: string, id: string): Promise<Translation> {
  const before = (await user.api.orgs.getTranslation(organizationId, id)).data.stats.runs;
  await user.api.orgs.runTranslation(organizationId, id);
  await settleJobs(t);
  const { data } = await user.api.orgs.getTranslation(organizationId, id);
  assert.ok(data.stats.runs > before, `the run was made: ${JSON.stringify(data)}`);
  assert.equal(data.status, 'completed', JSON.stringify(data));
  return data;
}

function keysOf(value: any): string[] {
  if (Array.isArray(value)) return value.flatMap(keysOf);
  if (value && typeof value === 'object') return [...(typeof value.key === 'string' ? [value.key] : []), ...Object.values(value).flatMap(keysOf)];
  return [];
}

function withoutKeys(value: any): any {
  if (Array.isArray(value)) return value.map(withoutKeys);
  if (value && typeof value === 'object') return Object.fromEntries(Object.entries(value).filter(([k]) => k !== 'key').map(([k, v]) => [k, withoutKeys(v)]));
  return value;
}

const dependency = (translation: string) => ({ translation: { ref: { kind: 'translation' as const, translation } } });
const revisionSource = (translation: string) => ({ type: 'builtin:translation' as const, props: {}, dependencies: dependency(translation) });
const documentSource = (translation: string, space: string, document: string) => ({ type: 'builtin:translation' as const, props: { space, document }, dependencies: dependency(translation) });

interface SourcePage {
  id: string;
  title: string;
  documentId?: string;
  pages: SourcePage[];
}

/** An organization with a source space of three pages (one nested) and its translation to French. */
async function setup() {
  const { admin, org } = await newOrg(t, 'Computed Translations Inc');
  const collection = await newCollection(admin, org.id, 'Docs');
  const space = await newSpace(admin, org.id, { title: 'Handbook', parent: collection.id });
  await mergeChanges(admin, space.id, [
    { operation: 'insert_page', title: 'Getting started', description: 'Where to begin', document: { markdown: 'Install the tool today.\n\n## First steps\n\nRead the guide.\n' } },
    { operation: 'insert_page', title: 'Reference', document: { markdown: 'Every option explained.\n' } },
  ]);
  let pages = (await admin.api.spaces.listPages(space.id)).data.pages as unknown as SourcePage[];
  await mergeChanges(admin, space.id, [{ operation: 'insert_page', title: 'Details', into: pages[0]!.id, document: { markdown: 'Some details here.\n' } }]);
  pages = (await admin.api.spaces.listPages(space.id)).data.pages as unknown as SourcePage[];
  const { data: translation } = await admin.api.orgs.createTranslation(org.id, { language: 'fr' as never, source: { space: space.id, language: 'en' as never } });
  return { admin, org, collection, space, translation, start: pages[0]!, reference: pages[1]!, details: pages[0]!.pages[0]! };
}

describe('computed content from a translation', () => {
  test('a revision is the pages of the translation\'s result, translated, with ids from the seed', async () => {
    const { admin, org, space, translation, details } = await setup();
    // Before any run there is nothing to compute, and the answer says what to do.
    await expectStatus(admin.api.spaces.getComputedRevision(space.id, { source: revisionSource(translation.id), seed: 'r1' }), 409, /has not run yet.*run it first/);

    const done = await run(admin, org.id, translation.id);
    const compute = async (seed: string) => ((await admin.api.spaces.getComputedRevision(space.id, { source: revisionSource(translation.id), seed })).data as any);
    const revision = await compute('r1');
    assert.deepEqual(revision.pages.map((p: any) => [p.type, p.title, p.slug, p.path]), [
      ['document', 'GETTING STARTED', 'getting-started', 'getting-started'],
      ['document', 'REFERENCE', 'reference', 'reference'],
    ]);
    const [tStart, tReference] = revision.pages;
    assert.equal(tStart.description, 'WHERE TO BEGIN');
    assert.deepEqual(tStart.document.nodes.map((n: any) => [n.type, textOf(n)]), [
      ['paragraph', 'INSTALL THE TOOL TODAY.'],
      ['heading-1', 'FIRST STEPS'],
      ['paragraph', 'READ THE GUIDE.'],
    ]);
    assert.deepEqual(tReference.document.nodes.map(textOf), ['EVERY OPTION EXPLAINED.']);
    assert.deepEqual(tStart.pages.map((p: any) => [p.title, p.path, p.document.nodes.map(textOf)]), [['DETAILS', 'getting-started/details', ['SOME DETAILS HERE.']]]);
    assert.deepEqual(revision.files, []);
    assert.deepEqual(revision.reusableContents, []);

    // Ids come from the seed: not the target's page ids, the same for the same seed, others for another.
    const targetIds = ((await admin.api.spaces.listPages(done.result!.space)).data.pages as any[]).map((p) => p.id);
    const ids = [tStart.id, tReference.id, tStart.pages[0].id];
    assert.ok(ids.every((id) => /^[0-9A-Za-z]{20}$/.test(id) && !targetIds.includes(id)));
    assert.equal(new Set(ids).size, 3);
    assert.deepEqual(await compute('r1'), revision);
    const other = await compute('r2');
    assert.deepEqual(other.pages.map((p: any) => p.title), ['GETTING STARTED', 'REFERENCE']);
    assert.ok(other.pages.every((p: any, i: number) => p.id !== revision.pages[i].id));

    // A page's document is getComputedDocument of its source document, seeded with the page's id.
    const { data: alone } = await admin.api.spaces.getComputedDocument(space.id, { source: documentSource(translation.id, space.id, details.documentId!), seed: tStart.pages[0].id });
    assert.deepEqual(alone, tStart.pages[0].document);

    // The dependency may come resolved (`{ref, value}`): Folio reads its own value, not the request's.
    const { data: resolved } = (await admin.api.spaces.getComputedRevision(space.id, {
      source: { type: 'builtin:translation', props: {}, dependencies: { translation: { ref: { kind: 'translation', translation: translation.id }, value: null } } },
      seed: 'r1',
    })) as { data: any };
    assert.deepEqual(resolved, revision);

    // Computed from any space of the organization (the path only scopes the lookup).
    const elsewhere = await newSpace(admin, org.id, 'Elsewhere');
    const fromElsewhere = ((await admin.api.spaces.getComputedRevision(elsewhere.id, { source: revisionSource(translation.id), seed: 'r1' })).data as any);
    assert.deepEqual(fromElsewhere.pages.map((p: any) => p.title), ['GETTING STARTED', 'REFERENCE']);
  });

  test('a document is the translated body of the page the latest run wrote from it', async () => {
    const { admin, org, space, translation, start, reference } = await setup();
    // Not run yet: a 409 for documents too.
    await expectStatus(admin.api.spaces.getComputedDocument(space.id, { source: documentSource(translation.id, space.id, start.documentId!), seed: 'd' }), 409, /has not run yet/);
    await run(admin, org.id, translation.id);

    const compute = async (document: string, seed = 'd1') => ((await admin.api.spaces.getComputedDocument(space.id, { source: documentSource(translation.id, space.id, document), seed })).data as any);
    const doc = await compute(start.documentId!);
    assert.equal(doc.object, 'document');
    assert.deepEqual(doc.nodes.map((n: any) => [n.type, textOf(n)]), [
      ['paragraph', 'INSTALL THE TOOL TODAY.'],
      ['heading-1', 'FIRST STEPS'],
      ['paragraph', 'READ THE GUIDE.'],
    ]);
    // Block keys follow the seed.
    assert.deepEqual(await compute(start.documentId!), doc);
    const reseeded = await compute(start.documentId!, 'd2');
    assert.deepEqual(withoutKeys(reseeded), withoutKeys(doc));
    const keys = keysOf(doc);
    assert.ok(keys.length >= 3);
    assert.ok(keysOf(reseeded).every((k) => !keys.includes(k)));
    assert.deepEqual((await compute(reference.documentId!)).nodes.map(textOf), ['EVERY OPTION EXPLAINED.']);

    // Unknown documents are 404s naming them.
    await expectStatus(admin.api.spaces.getComputedDocument(space.id, { source: documentSource(translation.id, space.id, 'no-such-document'), seed: 'd' }), 404, /no document "no-such-document" in space/);

    // The source page changes: its new text has no translation until the translation runs again,
    // while its old text still answers the translation the latest run made of it.
    await mergeChanges(admin, space.id, [{ operation: 'update_page', page: reference.id, document: { markdown: 'Every option, explained again.\n' } }]);
    const changed = ((await admin.api.spaces.getPageById(space.id, reference.id)).data as any).documentId as string;
    assert.notEqual(changed, reference.documentId);
    await expectStatus(admin.api.spaces.getComputedDocument(space.id, { source: documentSource(translation.id, space.id, changed), seed: 'd' }), 409, /translated no page from document .*\(run the translation again\)/);
    assert.deepEqual((await compute(reference.documentId!)).nodes.map(textOf), ['EVERY OPTION EXPLAINED.']);
    await run(admin, org.id, translation.id);
    assert.deepEqual((await compute(changed)).nodes.map(textOf), ['EVERY OPTION, EXPLAINED AGAIN.']);
    // The old text is no page's any more: the latest run translated nothing from it.
    await expectStatus(admin.api.spaces.getComputedDocument(space.id, { source: documentSource(translation.id, space.id, reference.documentId!), seed: 'd' }), 409, /translated no page from document/);

    // props.space must be the translation's source.
    const other = await newSpace(admin, org.id, 'Other');
    await expectStatus(admin.api.spaces.getComputedDocument(space.id, { source: documentSource(translation.id, other.id, start.documentId!), seed: 'd' }), 400, /source\.props\.space: .* is not the source of the translation/);
  });

  test('the caller reads the translation\'s spaces with their own rights; unknown translations are 404s', async () => {
    const { admin, org, collection, space, translation, start } = await setup();
    const elsewhere = await newSpace(admin, org.id, 'Elsewhere');
    // A guest granted the source space (and another space) only.
    const guest = await newMember(t, org.id, null, 'Guest');
    await grantDirect(t, org.id, { space: space.id }, { user: guest.id }, 'read');
    await grantDirect(t, org.id, { space: elsewhere.id }, { user: guest.id }, 'read');
    // One who cannot read the source is not told that the translation exists before it has run.
    const stranger = await newMember(t, org.id, null, 'Stranger');
    await grantDirect(t, org.id, { space: elsewhere.id }, { user: stranger.id }, 'read');
    await expectStatus(stranger.api.spaces.getComputedRevision(elsewhere.id, { source: revisionSource(translation.id), seed: 's' }), 404, /no translation ".*" whose content you can read/);
    await expectStatus(guest.api.spaces.getComputedRevision(elsewhere.id, { source: revisionSource(translation.id), seed: 's' }), 409, /has not run yet/);

    const done = await run(admin, org.id, translation.id);
    const { data: target } = await admin.api.spaces.getSpaceById(done.result!.space);
    assert.equal(target.parent, collection.id);
    // The guest cannot read the target space: the translation's content is not found for them.
    await expectStatus(guest.api.spaces.getSpaceById(target.id), 404, /not found/i);
    await expectStatus(guest.api.spaces.getComputedRevision(space.id, { source: revisionSource(translation.id), seed: 's' }), 404, /no translation ".*" whose content you can read/);
    await expectStatus(guest.api.spaces.getComputedDocument(space.id, { source: documentSource(translation.id, space.id, start.documentId!), seed: 's' }), 404, /no translation ".*" whose content you can read/);
    // Granted the target too, they compute both.
    await grantDirect(t, org.id, { space: target.id }, { user: guest.id }, 'read');
    const { data: revision } = (await guest.api.spaces.getComputedRevision(space.id, { source: revisionSource(translation.id), seed: 's' })) as { data: any };
    assert.deepEqual(revision.pages.map((p: any) => p.title), ['GETTING STARTED', 'REFERENCE']);
    const { data: doc } = (await guest.api.spaces.getComputedDocument(space.id, { source: documentSource(translation.id, space.id, start.documentId!), seed: 's' })) as { data: any };
    assert.equal(textOf(doc.nodes[0]), 'INSTALL THE TOOL TODAY.');
    // A document needs the source space too: granted the target and another space only, the source is not found.
    await grantDirect(t, org.id, { space: target.id }, { user: stranger.id }, 'read');
    await expectStatus(stranger.api.spaces.getComputedDocument(elsewhere.id, { source: documentSource(translation.id, space.id, start.documentId!), seed: 's' }), 404, /source\.props\.space: no space/);
    assert.equal(((await stranger.api.spaces.getComputedRevision(elsewhere.id, { source: revisionSource(translation.id), seed: 's' })).data as any).pages.length, 2);

    // Outsiders do not reach the space in the path.
    const outsider = await t.user('Outsider');
    await expectStatus(outsider.api.spaces.getComputedRevision(space.id, { source: revisionSource(translation.id), seed: 's' }), 404, /Space not found/);
    // A translation of another organization, or none, is not found from this one.
    const { admin: otherAdmin, org: otherOrg } = await newOrg(t, 'Other Inc');
    const otherSpace = await newSpace(otherAdmin, otherOrg.id, 'Theirs');
    await expectStatus(otherAdmin.api.spaces.getComputedRevision(otherSpace.id, { source: revisionSource(translation.id), seed: 's' }), 404, /no translation/);
    await expectStatus(admin.api.spaces.getComputedRevision(space.id, { source: revisionSource('nope'), seed: 's' }), 404, /no translation "nope"/);
  });

  test('bad sources are 400s naming the field', async () => {
    const { admin, space, translation } = await setup();
    const call = (source: unknown) => admin.api.spaces.getComputedRevision(space.id, { source: source as never, seed: 's' });
    const doc = (source: unknown) => admin.api.spaces.getComputedDocument(space.id, { source: source as never, seed: 's' });
    await expectStatus(call({ type: 'builtin:translation', props: {} }), 400, /source\.dependencies\.translation: required/);
    await expectStatus(call({ type: 'builtin:translation', props: {}, dependencies: { translation: { ref: { kind: 'space', space: space.id } } } }), 400, /source\.dependencies\.translation: must be/);
    await expectStatus(call({ type: 'builtin:translation', props: { page: 'x' }, dependencies: dependency(translation.id) }), 400, /source\.props: must be \{\}/);
    await expectStatus(doc({ type: 'builtin:translation', props: { document: 'x' }, dependencies: dependency(translation.id) }), 400, /source\.props\.space: required/);
    await expectStatus(doc({ type: 'builtin:translation', props: { space: space.id }, dependencies: dependency(translation.id) }), 400, /source\.props\.document: required/);
  });
});
