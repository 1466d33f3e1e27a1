import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { type Change, editChangeRequest, openChangeRequest, orgWithSpace } from './support/factories.ts';
import { expectStatus, startTestServer, type TestServer } from './support/server.ts';

let t: TestServer;
before(async () => {
  t = await startTestServer();
});
after(async () => {
  await t?.close();
});

const md = (markdown: string) => ({ markdown });

describe('change requests', () => {
  test('insert a tree of pages, merge, read back as markdown and as a document', async () => {
    const { admin: ann, space } = await orgWithSpace(t);
    const cr = await openChangeRequest(ann, space.id, 'First pages');
    assert.equal(cr.number, 1);
    assert.equal(cr.revision, space.revision);
    const edited = await editChangeRequest(ann, space.id, cr.id, [
      { operation: 'insert_page', ref: 'guide', document: md('# Guide\n\nWelcome to the **guide**.\n') } as Change,
      { operation: 'insert_page', into: 'guide', title: 'Install', document: md('Run `npm ci`.\n\n## Requirements\n\nNode 20.\n') } as Change,
      { operation: 'insert_page', title: 'FAQ', document: md('Questions.\n') } as Change,
    ]);
    assert.notEqual((edited as { revision: string }).revision, cr.revision);
    // The space is untouched until the merge.
    assert.deepEqual((await ann.api.spaces.listPages(space.id)).data.pages, []);

    const merged = await ann.api.spaces.mergeChangeRequest(space.id, cr.id);
    assert.equal(merged.data.result, 'merge');
    const { data: after } = await ann.api.spaces.getSpaceById(space.id);
    assert.equal(after.revision, merged.data.revision);
    const { data: crAfter } = await ann.api.spaces.getChangeRequestById(space.id, String(cr.number));
    assert.equal(crAfter.status, 'merged');
    assert.equal(crAfter.revisionMerged, merged.data.revision);

    const { data: pages } = await ann.api.spaces.listPages(space.id);
    assert.deepEqual(pages.pages.map((p) => p.title), ['Guide', 'FAQ']);
    const guide = pages.pages[0] as { id: string; path: string; pages: { id: string; title: string; path: string }[] };
    assert.equal(guide.path, 'guide');
    assert.deepEqual(guide.pages.map((p) => [p.title, p.path]), [['Install', 'guide/install']]);

    const { data: asMarkdown } = await ann.api.spaces.getPageById(space.id, guide.pages[0]!.id, { format: 'markdown' });
    assert.equal((asMarkdown as { markdown: string }).markdown, 'Run `npm ci`.\n\n## Requirements\n\nNode 20.\n');
    const { data: asDocument } = await ann.api.spaces.getPageById(space.id, guide.id, { format: 'document' });
    const doc = (asDocument as { document: { nodes: { type: string }[] } }).document;
    assert.equal(doc.nodes[0]!.type, 'paragraph');
    assert.match(JSON.stringify(doc), /guide/);

    const { data: byPath } = await ann.api.spaces.getPageByPath(space.id, 'guide/install');
    assert.equal(byPath.id, guide.pages[0]!.id);
    const { data: revision } = await ann.api.spaces.getCurrentRevision(space.id);
    assert.deepEqual(revision.parents.length, 2);
  });

  test('two change requests editing different paragraphs of one page both merge', async () => {
    const { admin: ann, space } = await orgWithSpace(t);
    const seed = await openChangeRequest(ann, space.id, 'Seed');
    await editChangeRequest(ann, space.id, seed.id, [{ operation: 'insert_page', title: 'Page', document: md('Alpha one.\n\nBeta two.\n\nGamma three.\n') } as Change]);
    await ann.api.spaces.mergeChangeRequest(space.id, seed.id);
    const pageId = (await ann.api.spaces.listPages(space.id)).data.pages[0]!.id;

    const a = await openChangeRequest(ann, space.id, 'A');
    const b = await openChangeRequest(ann, space.id, 'B');
    await editChangeRequest(ann, space.id, a.id, [{ operation: 'update_page', page: pageId, document: md('Alpha ONE.\n\nBeta two.\n\nGamma three.\n') } as Change]);
    await editChangeRequest(ann, space.id, b.id, [{ operation: 'update_page', page: pageId, document: md('Alpha one.\n\nBeta two.\n\nGamma THREE.\n') } as Change]);
    await ann.api.spaces.mergeChangeRequest(space.id, a.id);
    assert.equal((await ann.api.spaces.getChangeRequestById(space.id, b.id)).data.outdated, true);
    await ann.api.spaces.mergeChangeRequest(space.id, b.id);
    const { data } = await ann.api.spaces.getPageById(space.id, pageId, { format: 'markdown' });
    assert.equal((data as { markdown: string }).markdown, 'Alpha ONE.\n\nBeta two.\n\nGamma THREE.\n');
  });

  test('a conflicting pair: 409 listing the page, space unchanged; update marks, edit resolves, merge succeeds', async () => {
    const { admin: ann, space } = await orgWithSpace(t);
    const seed = await openChangeRequest(ann, space.id, 'Seed');
    await editChangeRequest(ann, space.id, seed.id, [{ operation: 'insert_page', title: 'Page', document: md('Same line.\n') } as Change]);
    await ann.api.spaces.mergeChangeRequest(space.id, seed.id);
    const pageId = (await ann.api.spaces.listPages(space.id)).data.pages[0]!.id;
    const a = await openChangeRequest(ann, space.id, 'A');
    const b = await openChangeRequest(ann, space.id, 'B');
    await editChangeRequest(ann, space.id, a.id, [{ operation: 'update_page', page: pageId, document: md('Line from A.\n') } as Change]);
    await editChangeRequest(ann, space.id, b.id, [{ operation: 'update_page', page: pageId, document: md('Line from B.\n') } as Change]);
    await ann.api.spaces.mergeChangeRequest(space.id, a.id);
    const before = (await ann.api.spaces.getSpaceById(space.id)).data.revision;

    const refused = await t.request('POST', `/v1/spaces/${space.id}/change-requests/${b.id}/merge`, { token: ann.token });
    assert.equal(refused.status, 409);
    assert.deepEqual(refused.body.error.conflicts.map((c: { page: string }) => c.page), [pageId]);
    assert.equal((await ann.api.spaces.getSpaceById(space.id)).data.revision, before);

    const { data: updated } = await ann.api.spaces.updateChangeRequest(space.id, b.id);
    assert.equal(updated.result, 'conflicts');
    const { data: crB } = await ann.api.spaces.getChangeRequestById(space.id, b.id);
    assert.equal(crB.outdated, false);
    const { data: changes } = await ann.api.spaces.getChangeRequestChanges(space.id, b.id);
    assert.deepEqual((changes as unknown as { conflicts: { page: string }[] }).conflicts.map((c) => c.page), [pageId]);
    const { data: marked } = await ann.api.spaces.getPageInChangeRequestById(space.id, b.id, pageId, { format: 'markdown' });
    const text = (marked as { markdown: string }).markdown;
    assert.match(text, /<<<<<<< /);
    assert.match(text, /Line from A\./);
    assert.match(text, /Line from B\./);
    await expectStatus(ann.api.spaces.mergeChangeRequest(space.id, b.id), 409);

    await editChangeRequest(ann, space.id, b.id, [{ operation: 'update_page', page: pageId, document: md('Line from A and B.\n') } as Change]);
    assert.equal((await ann.api.spaces.mergeChangeRequest(space.id, b.id)).data.result, 'merge');
    const { data } = await ann.api.spaces.getPageById(space.id, pageId, { format: 'markdown' });
    assert.equal((data as { markdown: string }).markdown, 'Line from A and B.\n');
  });

  test('edited on one side and deleted on the other is a conflict', async () => {
    const { admin: ann, space } = await orgWithSpace(t);
    const seed = await openChangeRequest(ann, space.id, 'Seed');
    await editChangeRequest(ann, space.id, seed.id, [{ operation: 'insert_page', title: 'Doomed', document: md('Text.\n') } as Change]);
    await ann.api.spaces.mergeChangeRequest(space.id, seed.id);
    const pageId = (await ann.api.spaces.listPages(space.id)).data.pages[0]!.id;
    const a = await openChangeRequest(ann, space.id, 'Delete');
    const b = await openChangeRequest(ann, space.id, 'Edit');
    await editChangeRequest(ann, space.id, a.id, [{ operation: 'delete_page', page: pageId } as Change]);
    await editChangeRequest(ann, space.id, b.id, [{ operation: 'update_page', page: pageId, document: md('Better text.\n') } as Change]);
    await ann.api.spaces.mergeChangeRequest(space.id, a.id);
    const refused = await t.request('POST', `/v1/spaces/${space.id}/change-requests/${b.id}/merge`, { token: ann.token });
    assert.equal(refused.status, 409);
    assert.equal(refused.body.error.conflicts[0].page, pageId);
  });

  test('20 concurrent merges of non-conflicting change requests keep every change', async () => {
    const { admin: ann, space } = await orgWithSpace(t);
    const crs = [];
    for (let i = 0; i < 20; i++) {
      const cr = await openChangeRequest(ann, space.id, `CR ${i}`);
      await editChangeRequest(ann, space.id, cr.id, [{ operation: 'insert_page', title: `Page ${i}`, document: md(`Body ${i}.\n`) } as Change]);
      crs.push(cr);
    }
    const results = await Promise.all(crs.map((cr) => ann.api.spaces.mergeChangeRequest(space.id, cr.id)));
    assert.ok(results.every((r) => r.data.result === 'merge'));
    const titles = (await ann.api.spaces.listPages(space.id)).data.pages.map((p) => p.title).sort();
    assert.deepEqual(titles, Array.from({ length: 20 }, (_, i) => `Page ${i}`).sort());
  });

  test('merge rules: required reviewers must approve the latest changes', async () => {
    const { admin: ann, org, space } = await orgWithSpace(t);
    const rita = await t.user('Rita');
    await t.server.services.db.insertInto('members').values({ organization_id: org.id, user_id: rita.id, role: 'review', joined_at: new Date(), last_seen_at: null }).execute();
    await ann.api.spaces.updateSpaceById(space.id, { mergeRules: { type: 'rules', rules: [{ rule: 'require_specific_reviewers' as never, users: [rita.id] }] } } as never);
    const cr = await openChangeRequest(ann, space.id, 'Needs review');
    await editChangeRequest(ann, space.id, cr.id, [{ operation: 'insert_page', title: 'P', document: md('x\n') } as Change]);
    await expectStatus(ann.api.spaces.mergeChangeRequest(space.id, cr.id), 403);
    await ann.api.spaces.requestReviewersForChangeRequest(space.id, cr.id, { users: [rita.id] });
    const { data: review } = await rita.api.spaces.submitChangeRequestReview(space.id, cr.id, { status: 'approved' as never });
    assert.equal(review.status, 'approved');
    await editChangeRequest(ann, space.id, cr.id, [{ operation: 'insert_page', title: 'Q', document: md('y\n') } as Change]);
    // The approval was for an older head.
    await expectStatus(ann.api.spaces.mergeChangeRequest(space.id, cr.id), 403);
    await rita.api.spaces.submitChangeRequestReview(space.id, cr.id, { status: 'approved' as never });
    assert.equal((await ann.api.spaces.mergeChangeRequest(space.id, cr.id)).data.result, 'merge');
  });

  test('a locked space refuses content edits and merges', async () => {
    const { admin: ann, space } = await orgWithSpace(t);
    const cr = await openChangeRequest(ann, space.id, 'Locked');
    await ann.api.spaces.updateSpaceById(space.id, { editMode: 'locked' as never });
    await expectStatus(editChangeRequest(ann, space.id, cr.id, [{ operation: 'insert_page', title: 'P', document: md('x\n') } as Change]), 403);
    await expectStatus(ann.api.spaces.mergeChangeRequest(space.id, cr.id), 403);
    await ann.api.spaces.updateSpaceById(space.id, { editMode: 'live' as never });
    await editChangeRequest(ann, space.id, cr.id, [{ operation: 'insert_page', title: 'P', document: md('x\n') } as Change]);
  });
});

describe('space counters', () => {
  test('changeRequests, changeRequestsOpen and changeRequestsDraft stay true', async () => {
    const { admin: ann, space } = await orgWithSpace(t);
    const counts = async () => {
      const { data } = await ann.api.spaces.getSpaceById(space.id);
      return [data.changeRequests, data.changeRequestsOpen, data.changeRequestsDraft];
    };
    assert.deepEqual(await counts(), [0, 0, 0]);
    const a = await openChangeRequest(ann, space.id, 'A');
    const b = await openChangeRequest(ann, space.id, 'B');
    assert.deepEqual(await counts(), [2, 2, 0]);
    await ann.api.spaces.updateChangeRequestById(space.id, b.id, { status: 'draft' as never });
    assert.deepEqual(await counts(), [2, 1, 1]);
    await editChangeRequest(ann, space.id, a.id, [{ operation: 'insert_page', title: 'P', document: md('x\n') } as Change]);
    await ann.api.spaces.mergeChangeRequest(space.id, a.id);
    assert.deepEqual(await counts(), [2, 0, 1]);
    const { data: listed } = await ann.api.orgs.listSpacesInOrganizationById(space.organization);
    assert.equal(listed.items[0]!.changeRequestsDraft, 1);
  });
});
