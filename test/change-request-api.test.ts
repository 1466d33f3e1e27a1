import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { ChangeRequestStatus, MemberRole } from '@gitbook/api';
import { addMember, type Change, editChangeRequest, mergeChanges, newSpace, openChangeRequest, orgWithPersonas, orgWithSpace, type Persona, personaName, PERSONAS, statusOf } from './support/factories.ts';
import { expectStatus, startTestServer, type TestServer, type TestUser } from './support/server.ts';

let t: TestServer;
before(async () => {
  t = await startTestServer();
});
after(async () => {
  await t?.close();
});

type Description = NonNullable<Parameters<TestUser['api']['spaces']['updateChangeRequestById']>[2]['description']>;

const md = (markdown: string) => ({ markdown });
const c = (change: Record<string, unknown>) => change as unknown as Change;
const insert = (title: string, text = `${title} text.\n`) => c({ operation: 'insert_page', title, document: md(text) });

async function member(orgId: string, role: MemberRole | null, name: string) {
  const user = await t.user(name);
  await addMember(t, orgId, user, role as never);
  return user;
}

const paragraph = (text: string): Description =>
  ({
    object: 'document',
    data: { schemaVersion: 1 },
    nodes: [{ object: 'block', type: 'paragraph', key: 'p1', data: {}, nodes: [{ object: 'text', leaves: [{ object: 'leaf', text, marks: [] }] }] }],
  }) as unknown as Description;

const numbers = (items: { number: number }[]) => items.map((i) => i.number);

describe('change requests: resource', () => {
  test('create numbers 1, 2, 3 per space; read by id and by number', async () => {
    const { admin: ann, space } = await orgWithSpace(t);
    const created = await t.request('POST', `/v1/spaces/${space.id}/change-requests`, { token: ann.token, body: { subject: 'First' } });
    assert.equal(created.status, 201);
    assert.equal(created.headers.get('location'), `${t.url}/v1/spaces/${space.id}/change-requests/${created.body.id}`);
    const second = await openChangeRequest(ann, space.id, 'Second');
    const { data: third } = await ann.api.spaces.createChangeRequest(space.id, {});
    assert.deepEqual([created.body.number, second.number, third.number], [1, 2, 3]);
    assert.equal(third.subject, '');
    // Numbers are per space.
    const other = await newSpace(ann, space.organization, 'Other');
    assert.equal((await openChangeRequest(ann, other.id)).number, 1);

    assert.equal(second.object, 'change-request');
    assert.equal(second.status, 'open');
    assert.equal(second.space, space.id);
    assert.equal(second.revision, space.revision);
    assert.equal(second.revisionInitial, space.revision);
    assert.equal(second.revisionMerged, undefined);
    assert.equal(second.revisionMergedAncestor, undefined);
    assert.equal(second.outdated, false);
    assert.equal(second.comments, 0);
    assert.equal(second.createdBy?.id, (await ann.api.user.getAuthenticatedUser()).data.id);
    assert.equal(second.urls.location, `${t.url}/v1/spaces/${space.id}/change-requests/${second.id}`);
    assert.equal(second.urls.app, `${t.url}/app/s/${space.id}/~/changes/2`);

    assert.deepEqual((await ann.api.spaces.getChangeRequestById(space.id, second.id)).data, second);
    assert.deepEqual((await ann.api.spaces.getChangeRequestById(space.id, '2')).data, second);
    // A number is resolved in its own space only.
    assert.equal((await ann.api.spaces.getChangeRequestById(other.id, '1')).data.space, other.id);
    await expectStatus(ann.api.spaces.getChangeRequestById(space.id, '4'), 404);
    await expectStatus(ann.api.spaces.getChangeRequestById(space.id, 'no-such-cr'), 404);
    await expectStatus(ann.api.spaces.getChangeRequestById(other.id, second.id), 404);
    await expectStatus(ann.api.spaces.getChangeRequestById('no-such-space', '1'), 404);
  });

  test('concurrent creations take distinct numbers; concurrent edits all land', async () => {
    const { admin: ann, space } = await orgWithSpace(t);
    const created = await Promise.all(Array.from({ length: 8 }, (_, i) => openChangeRequest(ann, space.id, `CR ${i}`)));
    assert.deepEqual(numbers(created).sort((a, b) => a - b), [1, 2, 3, 4, 5, 6, 7, 8]);
    const cr = created[0]!;
    await Promise.all(Array.from({ length: 6 }, (_, i) => editChangeRequest(ann, space.id, cr.id, [insert(`Page ${i}`)])));
    const { data: pages } = await ann.api.spaces.listPagesInChangeRequest(space.id, cr.id);
    assert.deepEqual(pages.pages.map((p) => p.title).sort(), Array.from({ length: 6 }, (_, i) => `Page ${i}`));
    // Each edit made a revision on top of the previous one: six steps from the start.
    let revision = (await ann.api.spaces.getChangeRequestById(space.id, cr.id)).data.revision;
    for (let i = 0; i < 6; i++) revision = (await ann.api.spaces.getRevisionById(space.id, revision)).data.parents[0]!;
    assert.equal(revision, space.revision);
  });

  test('list per space: status, creator, contributor, requested reviewer, order and paging', async () => {
    const { admin: ann, org, space } = await orgWithSpace(t);
    const bob = await member(org.id, MemberRole.Edit, 'Bob');
    const one = await openChangeRequest(ann, space.id, 'One');
    const two = await openChangeRequest(bob, space.id, 'Two');
    const three = await openChangeRequest(ann, space.id, 'Three');
    const draft = await openChangeRequest(ann, space.id, 'Draft');
    await ann.api.spaces.updateChangeRequestById(space.id, draft.id, { status: ChangeRequestStatus.Draft as 'draft' });
    // Editing bumps `updatedAt`: One is now the most recently updated.
    await editChangeRequest(bob, space.id, one.id, [insert('By Bob')]);

    const list = async (query: Parameters<TestUser['api']['spaces']['listChangeRequestsForSpace']>[1] = {}) =>
      (await ann.api.spaces.listChangeRequestsForSpace(space.id, query)).data;
    const open = await list();
    assert.equal(open.count, 3);
    assert.deepEqual(numbers(open.items), [one.number, three.number, two.number]);
    assert.deepEqual(numbers((await list({ orderBy: 'updatedAt' as never })).items), [1, 3, 2]);
    assert.deepEqual(numbers((await list({ orderBy: 'createdAt' as never })).items), [3, 2, 1]);
    assert.deepEqual(numbers((await list({ status: 'draft' as never })).items), [4]);
    assert.deepEqual(numbers((await list({ status: 'merged' as never })).items), []);
    assert.deepEqual(numbers((await list({ creator: bob.id })).items), [2]);
    assert.deepEqual(numbers((await list({ creator: ann.id, orderBy: 'createdAt' as never })).items), [3, 1]);
    assert.deepEqual(numbers((await list({ contributor: bob.id })).items), [1]);
    assert.deepEqual(numbers((await list({ contributor: ann.id })).items), []);
    await ann.api.spaces.requestReviewersForChangeRequest(space.id, three.id, { users: [bob.id] });
    assert.deepEqual(numbers((await list({ requestedReviewer: bob.id })).items), [3]);

    const page1 = await list({ limit: 2, orderBy: 'createdAt' as never });
    assert.equal(page1.count, 3);
    assert.deepEqual(numbers(page1.items), [3, 2]);
    assert.ok(page1.next?.page);
    const page2 = await list({ limit: 2, orderBy: 'createdAt' as never, page: page1.next!.page });
    assert.deepEqual(numbers(page2.items), [1]);
    assert.equal(page2.next, undefined);
    // A cursor of one ordering is refused by another.
    const mixed = await t.request('GET', `/v1/spaces/${space.id}/change-requests?orderBy=updatedAt&page=${page1.next!.page}`, { token: ann.token });
    assert.equal(mixed.status, 400);
    const badStatus = await t.request('GET', `/v1/spaces/${space.id}/change-requests?status=closed`, { token: ann.token });
    assert.equal(badStatus.status, 400);
    assert.match(badStatus.body.error.message, /status/);
    const badOrder = await t.request('GET', `/v1/spaces/${space.id}/change-requests?orderBy=number`, { token: ann.token });
    assert.equal(badOrder.status, 400);
    assert.match(badOrder.body.error.message, /orderBy/);
  });

  test('list per organization: only spaces the caller can read', async () => {
    const { admin: ann, org, space } = await orgWithSpace(t);
    const secret = await newSpace(ann, org.id, 'Secret');
    const reader = await member(org.id, MemberRole.Read, 'Reader');
    const guest = await member(org.id, null, 'Guest');
    const outsider = await t.user('Outsider');
    await openChangeRequest(ann, space.id, 'Public one');
    await openChangeRequest(ann, secret.id, 'Secret one');
    // Members read every space of the organization; a guest only the spaces granted to them.
    await ann.api.spaces.inviteToSpace(space.id, { role: MemberRole.Read, users: [guest.id] });
    const { data: drafted } = await ann.api.spaces.createChangeRequest(space.id, { subject: 'Drafted' });
    await ann.api.spaces.updateChangeRequestById(space.id, drafted.id, { status: 'draft' });

    const subjects = async (user: TestUser, query: Parameters<TestUser['api']['orgs']['listChangeRequestsForOrganization']>[1] = {}) =>
      (await user.api.orgs.listChangeRequestsForOrganization(org.id, query)).data.items.map((i) => i.subject).sort();
    assert.deepEqual(await subjects(ann), ['Public one', 'Secret one']);
    assert.deepEqual(await subjects(reader), ['Public one', 'Secret one']);
    assert.deepEqual(await subjects(guest), ['Public one']);
    assert.deepEqual(await subjects(ann, { status: ['draft' as never] }), ['Drafted']);
    assert.deepEqual(await subjects(ann, { status: ['draft' as never, 'open' as never] }), ['Drafted', 'Public one', 'Secret one']);
    assert.deepEqual(await subjects(ann, { space: secret.id }), ['Secret one']);
    assert.deepEqual(await subjects(guest, { space: secret.id }), []);
    const { data: paged } = await ann.api.orgs.listChangeRequestsForOrganization(org.id, { limit: 1 });
    assert.equal(paged.count, 2);
    assert.equal(paged.items.length, 1);
    const { data: rest } = await ann.api.orgs.listChangeRequestsForOrganization(org.id, { limit: 1, page: paged.next!.page });
    assert.notEqual(rest.items[0]!.id, paged.items[0]!.id);
    await expectStatus(outsider.api.orgs.listChangeRequestsForOrganization(org.id), 404);
  });

  test('update: subject, rich-text description and status; merged and archived refuse edits', async () => {
    const { admin: ann, space } = await orgWithSpace(t);
    const cr = await openChangeRequest(ann, space.id, 'Start');
    const { data: renamed } = await ann.api.spaces.updateChangeRequestById(space.id, cr.id, { subject: 'x'.repeat(100), description: paragraph('Why this change.') });
    assert.equal(renamed.subject, 'x'.repeat(100));
    assert.equal((renamed.description as unknown as { nodes: { nodes: { leaves: { text: string }[] }[] }[] }).nodes[0]!.nodes[0]!.leaves[0]!.text, 'Why this change.');
    assert.ok(renamed.updatedAt >= cr.updatedAt);
    assert.deepEqual((await ann.api.spaces.getChangeRequestById(space.id, cr.id)).data.description, renamed.description);

    // A description is kept in canonical form: what the official schema accepts, whatever was sent.
    const loose = { object: 'document', data: {}, nodes: [{ object: 'block', type: 'paragraph', nodes: [{ object: 'text', leaves: [{ object: 'leaf', text: 'Loose', marks: [] }] }] }] };
    const { data: normalized } = await ann.api.spaces.updateChangeRequestById(space.id, cr.id, { description: loose as unknown as Description });
    assert.match(JSON.stringify(normalized.description), /"text":"Loose"/);
    await ann.api.spaces.updateChangeRequestById(space.id, cr.id, { description: paragraph('Why this change.') });

    const tooLong = await t.request('PATCH', `/v1/spaces/${space.id}/change-requests/${cr.id}`, { token: ann.token, body: { subject: 'x'.repeat(101) } });
    assert.equal(tooLong.status, 400);
    assert.match(tooLong.body.error.message, /subject/);
    const createTooLong = await t.request('POST', `/v1/spaces/${space.id}/change-requests`, { token: ann.token, body: { subject: 'y'.repeat(101) } });
    assert.equal(createTooLong.status, 400);
    assert.match(createTooLong.body.error.message, /subject/);
    for (const [body, field] of [
      [{ description: 'plain text' }, /description/],
      [{ description: { object: 'paragraph', nodes: [] } }, /description/],
      [{ status: 'merged' }, /status/],
      [{ status: 'closed' }, /status/],
      [{ subject: 42 }, /subject/],
    ] as const) {
      const res = await t.request('PATCH', `/v1/spaces/${space.id}/change-requests/${cr.id}`, { token: ann.token, body });
      assert.equal(res.status, 400, JSON.stringify(body));
      assert.match(res.body.error.message, field);
    }

    for (const status of ['draft', 'archived', 'open'] as const) {
      const { data } = await ann.api.spaces.updateChangeRequestById(space.id, cr.id, { status });
      assert.equal(data.status, status);
    }

    // Archived: no content edits, merge, update or review until reopened.
    await ann.api.spaces.updateChangeRequestById(space.id, cr.id, { status: 'archived' });
    const head = (await ann.api.spaces.getChangeRequestById(space.id, cr.id)).data.revision;
    await expectStatus(editChangeRequest(ann, space.id, cr.id, [insert('Nope')]), 400);
    await expectStatus(ann.api.spaces.mergeChangeRequest(space.id, cr.id), 400);
    await expectStatus(ann.api.spaces.updateChangeRequest(space.id, cr.id), 400);
    await expectStatus(ann.api.spaces.submitChangeRequestReview(space.id, cr.id, { status: 'approved' as never }), 400);
    assert.equal((await ann.api.spaces.getChangeRequestById(space.id, cr.id)).data.revision, head);
    await ann.api.spaces.updateChangeRequestById(space.id, cr.id, { status: 'open' });
    await editChangeRequest(ann, space.id, cr.id, [insert('Yes')]);

    // Merged: a final state.
    const merge = await ann.api.spaces.mergeChangeRequest(space.id, cr.id);
    const { data: merged } = await ann.api.spaces.getChangeRequestById(space.id, cr.id);
    assert.equal(merged.status, 'merged');
    assert.equal(merged.revisionMerged, merge.data.revision);
    assert.equal(merged.mergedBy?.id, ann.id);
    assert.ok(merged.mergedAt);
    assert.equal(merged.outdated, false);
    await expectStatus(ann.api.spaces.updateChangeRequestById(space.id, cr.id, { status: 'open' }), 400);
    await expectStatus(editChangeRequest(ann, space.id, cr.id, [insert('After')]), 400);
    await expectStatus(ann.api.spaces.mergeChangeRequest(space.id, cr.id), 400);
    await expectStatus(ann.api.spaces.updateChangeRequest(space.id, cr.id), 400);
    assert.equal((await ann.api.spaces.getSpaceById(space.id)).data.revision, merge.data.revision);
  });

  test('outdated exactly when the space moved since the last base', async () => {
    const { admin: ann, space } = await orgWithSpace(t);
    const cr = await openChangeRequest(ann, space.id);
    await editChangeRequest(ann, space.id, cr.id, [insert('Mine')]);
    assert.equal((await ann.api.spaces.getChangeRequestById(space.id, cr.id)).data.outdated, false);
    // Updating when nothing moved changes nothing.
    const { data: noop } = await ann.api.spaces.updateChangeRequest(space.id, cr.id);
    assert.equal(noop.result, 'update');
    assert.equal(noop.revision, (await ann.api.spaces.getChangeRequestById(space.id, cr.id)).data.revision);

    const merged = await mergeChanges(ann, space.id, [insert('Theirs')]);
    const { data: stale } = await ann.api.spaces.getChangeRequestById(space.id, cr.id);
    assert.equal(stale.outdated, true);
    assert.equal((await ann.api.spaces.listChangeRequestsForSpace(space.id)).data.items.find((i) => i.id === cr.id)?.outdated, true);
    const { data: pulled } = await ann.api.spaces.updateChangeRequest(space.id, cr.id);
    assert.equal(pulled.result, 'update');
    const { data: fresh } = await ann.api.spaces.getChangeRequestById(space.id, cr.id);
    assert.equal(fresh.outdated, false);
    assert.equal(fresh.revisionMergedAncestor, merged);
    assert.equal(fresh.revision, pulled.revision);
    assert.equal(fresh.revisionInitial, space.revision);
    // Both sides' pages are in the change request.
    const { data: pages } = await ann.api.spaces.listPagesInChangeRequest(space.id, cr.id);
    assert.deepEqual(pages.pages.map((p) => p.title).sort(), ['Mine', 'Theirs']);
    await mergeChanges(ann, space.id, [insert('Later')]);
    assert.equal((await ann.api.spaces.getChangeRequestById(space.id, cr.id)).data.outdated, true);
    await ann.api.spaces.mergeChangeRequest(space.id, cr.id);
    assert.equal((await ann.api.spaces.getChangeRequestById(space.id, cr.id)).data.outdated, false);
    const { data: all } = await ann.api.spaces.listPages(space.id);
    assert.deepEqual(all.pages.map((p) => p.title).sort(), ['Later', 'Mine', 'Theirs']);
  });

  test('changes: what the change request changes compared with its base', async () => {
    const { admin: ann, space } = await orgWithSpace(t);
    await mergeChanges(ann, space.id, [insert('Keep'), insert('Drop'), insert('Rename')]);
    const { data: pages } = await ann.api.spaces.listPages(space.id);
    const id = (title: string) => pages.pages.find((p) => p.title === title)!.id;
    const cr = await openChangeRequest(ann, space.id);
    assert.deepEqual((await ann.api.spaces.getChangeRequestChanges(space.id, cr.id)).data.changes, []);
    await editChangeRequest(ann, space.id, cr.id, [
      insert('Added'),
      c({ operation: 'delete_page', page: id('Drop') }),
      c({ operation: 'update_page', page: id('Rename'), title: 'Renamed' }),
      c({ operation: 'insert_files', files: [{ name: 'a.txt', contentType: 'text/plain', base64: Buffer.from('a').toString('base64') }] }),
    ]);
    const { data } = await ann.api.spaces.getChangeRequestChanges(space.id, cr.id);
    const summary = data.changes
      .map((ch) => {
        const x = ch as unknown as { type: string; page?: { title: string }; file?: { name: string }; attributes?: Record<string, unknown> };
        return `${x.type}:${x.page?.title ?? x.file?.name}${x.attributes ? `:${Object.keys(x.attributes).sort().join(',')}` : ''}`;
      })
      .sort();
    assert.deepEqual(summary, ['file_created:a.txt', 'page_created:Added', 'page_deleted:Drop', 'page_edited:Renamed:slug,title']);
    const { data: limited } = await ann.api.spaces.getChangeRequestChanges(space.id, cr.id, { limit: 1 } as never);
    assert.equal(limited.changes.length, 1);
  });

  test('an edit of a page document keeps the text GitBook gave its mentions and cards of other spaces', async () => {
    const { admin: ann, space } = await orgWithSpace(t);
    const outside = 'https://app.gitbook.com/s/NkEGS7hzeqa35sMXQZ4X/manage-your-site/customization';
    const markdown =
      `See [Site customization](${outside} "mention") and [install](https://example.com/docs/install "mention").\n\n` +
      `<table data-view="cards"><thead><tr><th></th><th data-hidden data-card-target data-type="content-ref"></th></tr></thead><tbody><tr><td>Customize</td><td><a href="${outside}">Site customization</a></td></tr></tbody></table>\n`;
    await mergeChanges(ann, space.id, [insert('Mentions', markdown)]);
    const { data: listed } = await ann.api.spaces.listPages(space.id);
    const page = listed.pages.find((p) => p.title === 'Mentions')!;
    const cr = await openChangeRequest(ann, space.id);
    // What a client does: read the document, add a paragraph, write the document back.
    const { data: doc } = await ann.api.spaces.getPageDocumentInRevisionById(space.id, cr.revision, page.id);
    const nodes = [...(doc as { nodes: unknown[] }).nodes, { object: 'block', type: 'paragraph', nodes: [{ object: 'text', leaves: [{ object: 'leaf', text: 'Added.', marks: [] }] }] }];
    await editChangeRequest(ann, space.id, cr.id, [c({ operation: 'update_page', page: page.id, document: { document: { object: 'document', data: {}, nodes } } })]);
    const { data: read } = await ann.api.spaces.getPageInChangeRequestById(space.id, cr.id, page.id, { format: 'markdown' });
    const written = (read as { markdown: string }).markdown;
    assert.match(written, /Added\./);
    assert.ok(written.includes(`[Site customization](${outside} "mention")`), written);
    // A label the writer derives stays derived (the document never held another).
    assert.ok(written.includes('[install](https://example.com/docs/install "mention")'), written);
    assert.ok(written.includes(`<a href="${outside}">Site customization</a>`), written);
    // Without the earlier text (a new page), a mention is labelled from its target.
    await editChangeRequest(ann, space.id, cr.id, [c({ operation: 'insert_page', title: 'Fresh', document: { document: { object: 'document', data: {}, nodes } } })]);
    const fresh = (await ann.api.spaces.listPagesInChangeRequest(space.id, cr.id)).data.pages.find((p) => p.title === 'Fresh')!;
    const { data: freshRead } = await ann.api.spaces.getPageInChangeRequestById(space.id, cr.id, fresh.id, { format: 'markdown' });
    assert.ok((freshRead as { markdown: string }).markdown.includes(`[customization](${outside} "mention")`), (freshRead as { markdown: string }).markdown);
  });

  test('groups and links: inserted, retargeted and moved where the table of contents allows them', async () => {
    const { admin: ann, space } = await orgWithSpace(t);
    const cr = await openChangeRequest(ann, space.id);
    await editChangeRequest(ann, space.id, cr.id, [
      c({ operation: 'insert_page', type: 'group', title: 'Guides', ref: 'guides' }),
      c({ operation: 'insert_page', title: 'Install', document: md('Run it.\n'), into: 'guides', ref: 'install' }),
      c({ operation: 'insert_page', type: 'link', title: 'Status', target: { kind: 'url', url: 'https://status.example.com' }, into: 'guides' }),
      c({ operation: 'insert_page', type: 'link', title: 'See install', target: { kind: 'page', page: 'install' }, ref: 'see' }),
    ]);
    const pages = (await ann.api.spaces.listPagesInChangeRequest(space.id, cr.id)).data.pages;
    const [guides, see] = pages as any[];
    assert.deepEqual([guides.type, guides.title, guides.pages.map((p: any) => [p.type, p.title])], ['group', 'Guides', [['document', 'Install'], ['link', 'Status']]]);
    const install = guides.pages[0];
    assert.equal(guides.pages[1].href, 'https://status.example.com');
    assert.deepEqual([see.type, see.target], ['link', { kind: 'page', page: install.id }]);

    await editChangeRequest(ann, space.id, cr.id, [c({ operation: 'update_page', page: guides.pages[1].id, target: { kind: 'url', url: 'https://status.example.org' }, title: 'Status page' })]);
    const status = ((await ann.api.spaces.listPagesInChangeRequest(space.id, cr.id)).data.pages[0] as any).pages[1];
    assert.deepEqual([status.title, status.href], ['Status page', 'https://status.example.org']);

    const refused = async (change: Record<string, unknown>, message: RegExp) => {
      const res = await t.request('POST', `/v1/spaces/${space.id}/change-requests/${cr.id}/content`, { token: ann.token, body: { changes: [change] } });
      assert.equal(res.status, 400, JSON.stringify(res.body));
      assert.match(res.body.error.message, message);
    };
    await refused({ operation: 'insert_page', type: 'group', title: 'Nested', into: install.id }, /group stands at the top level/);
    await refused({ operation: 'insert_page', type: 'link', title: 'Nowhere' }, /a link needs a target/);
    await refused({ operation: 'insert_page', type: 'link', title: 'Script', target: { kind: 'url', url: 'javascript:alert(1)' } }, /not an absolute http\(s\) or mailto URL/);
    await refused({ operation: 'insert_page', title: 'Under a link', document: {}, into: see.id }, /is a link, which holds no pages/);
    await refused({ operation: 'update_page', page: guides.id, into: install.id }, /group stands at the top level/);
    await refused({ operation: 'update_page', page: install.id, target: { kind: 'url', url: 'https://x.example' } }, /is a document, not a link/);
    await refused({ operation: 'update_page', page: guides.id, document: md('Text.\n') }, /is a group, which has no content/);
  });
});

describe('reviews and requested reviewers', () => {
  test('submit, list and get reviews; a review of an older head is outdated', async () => {
    const { admin: ann, org, space } = await orgWithSpace(t);
    const rita = await member(org.id, MemberRole.Review, 'Rita');
    const cr = await openChangeRequest(ann, space.id);
    await editChangeRequest(ann, space.id, cr.id, [insert('One')]);
    const head = (await ann.api.spaces.getChangeRequestById(space.id, cr.id)).data.revision;

    const submitted = await t.request('POST', `/v1/spaces/${space.id}/change-requests/${cr.id}/reviews`, { token: rita.token, body: { status: 'changes-requested' } });
    assert.equal(submitted.status, 201);
    const { data: first } = await rita.api.spaces.getChangeRequestReviewById(space.id, cr.id, submitted.body.id);
    assert.equal(first.object, 'change-request-review');
    assert.equal(first.status, 'changes-requested');
    assert.equal(first.reviewer.id, rita.id);
    assert.equal(first.revision, head);
    assert.equal(first.outdated, false);
    assert.equal(first.urls.location, `${t.url}/v1/spaces/${space.id}/change-requests/${cr.id}/reviews/${first.id}`);

    await editChangeRequest(ann, space.id, cr.id, [insert('Two')]);
    const { data: approved } = await rita.api.spaces.submitChangeRequestReview(space.id, cr.id, { status: 'approved' as never });
    const { data: reviews } = await ann.api.spaces.getReviewsByChangeRequestId(space.id, cr.id);
    assert.equal(reviews.count, 2);
    assert.deepEqual(
      reviews.items.map((r) => [r.id, r.status, r.outdated]),
      [
        [first.id, 'changes-requested', true],
        [approved.id, 'approved', false],
      ],
    );
    const { data: paged } = await ann.api.spaces.getReviewsByChangeRequestId(space.id, cr.id, { limit: 1 });
    assert.deepEqual(paged.items.map((r) => r.id), [first.id]);
    const { data: rest } = await ann.api.spaces.getReviewsByChangeRequestId(space.id, cr.id, { limit: 1, page: paged.next!.page });
    assert.deepEqual(rest.items.map((r) => r.id), [approved.id]);

    await expectStatus(ann.api.spaces.getChangeRequestReviewById(space.id, cr.id, 'no-such-review'), 404);
    const other = await openChangeRequest(ann, space.id);
    await expectStatus(ann.api.spaces.getChangeRequestReviewById(space.id, other.id, first.id), 404);
    for (const body of [{}, { status: 'maybe' }, { status: 1 }]) {
      const res = await t.request('POST', `/v1/spaces/${space.id}/change-requests/${cr.id}/reviews`, { token: rita.token, body });
      assert.equal(res.status, 400, JSON.stringify(body));
      assert.match(res.body.error.message, /status/);
    }
  });

  test('request, list and remove reviewers; only members can be asked', async () => {
    const { admin: ann, org, space } = await orgWithSpace(t);
    const rita = await member(org.id, MemberRole.Review, 'Rita');
    const bob = await member(org.id, MemberRole.Edit, 'Bob');
    const outsider = await t.user('Outsider');
    const cr = await openChangeRequest(ann, space.id);

    const { data: requested } = await ann.api.spaces.requestReviewersForChangeRequest(space.id, cr.id, { users: [rita.id, bob.id, rita.id] });
    assert.deepEqual(requested.users!.map((u) => (u as { user: { id: string } }).user.id).sort(), [rita.id, bob.id].sort());
    const first = requested.users![0]!;
    assert.equal(first.object, 'change-request-requested-reviewer');
    assert.equal(first.requestedBy.id, ann.id);
    assert.equal(first.revision, cr.revision);
    // Asking again is harmless.
    await ann.api.spaces.requestReviewersForChangeRequest(space.id, cr.id, { users: [rita.id] });
    const { data: listed } = await ann.api.spaces.getRequestedReviewersByChangeRequestId(space.id, cr.id);
    assert.equal(listed.count, 2);
    assert.deepEqual(listed.items.map((u) => (u as { user: { id: string } }).user.id).sort(), [rita.id, bob.id].sort());

    for (const users of [[outsider.id], ['no-such-user'], [rita.id, outsider.id]]) {
      const res = await t.request('POST', `/v1/spaces/${space.id}/change-requests/${cr.id}/requested-reviewers`, { token: ann.token, body: { users } });
      assert.equal(res.status, 400);
      assert.match(res.body.error.message, new RegExp(users[users.length - 1]!));
    }
    for (const body of [{}, { users: 'x' }, { users: [] }, { users: [5] }]) {
      const res = await t.request('POST', `/v1/spaces/${space.id}/change-requests/${cr.id}/requested-reviewers`, { token: ann.token, body });
      assert.equal(res.status, 400, JSON.stringify(body));
      assert.match(res.body.error.message, /users/);
    }

    assert.equal((await ann.api.spaces.removeRequestedReviewerFromChangeRequest(space.id, cr.id, bob.id)).status, 204);
    // Removing again is still 204.
    assert.equal((await ann.api.spaces.removeRequestedReviewerFromChangeRequest(space.id, cr.id, bob.id)).status, 204);
    // A requested reviewer can decline; nobody below edit can remove someone else.
    const reader = await member(org.id, MemberRole.Read, 'Reader');
    await ann.api.spaces.requestReviewersForChangeRequest(space.id, cr.id, { users: [reader.id] });
    await expectStatus(reader.api.spaces.removeRequestedReviewerFromChangeRequest(space.id, cr.id, rita.id), 403);
    assert.equal((await reader.api.spaces.removeRequestedReviewerFromChangeRequest(space.id, cr.id, reader.id)).status, 204);
    const { data: after } = await ann.api.spaces.getRequestedReviewersByChangeRequestId(space.id, cr.id);
    assert.deepEqual(after.items.map((u) => (u as { user: { id: string } }).user.id), [rita.id]);
  });

  test('a guest who cannot read the space cannot be asked to review it', async () => {
    const { admin: ann, org, space } = await orgWithSpace(t);
    const guest = await member(org.id, null, 'Guest');
    const cr = await openChangeRequest(ann, space.id);
    const res = await t.request('POST', `/v1/spaces/${space.id}/change-requests/${cr.id}/requested-reviewers`, { token: ann.token, body: { users: [guest.id] } });
    assert.equal(res.status, 400);
    assert.match(res.body.error.message, new RegExp(guest.id));
    await ann.api.spaces.inviteToSpace(space.id, { role: MemberRole.Review, users: [guest.id] });
    await ann.api.spaces.requestReviewersForChangeRequest(space.id, cr.id, { users: [guest.id] });
    assert.equal((await guest.api.spaces.submitChangeRequestReview(space.id, cr.id, { status: 'approved' as never })).data.reviewer.id, guest.id);
  });
});

describe('space counters', () => {
  test('changeRequests, changeRequestsOpen and changeRequestsDraft follow the change requests', async () => {
    const { admin: ann, org, space } = await orgWithSpace(t);
    const counters = async () => {
      const { data } = await ann.api.spaces.getSpaceById(space.id);
      const listed = (await ann.api.orgs.listSpacesInOrganizationById(org.id)).data.items.find((s) => s.id === space.id)!;
      const got = [data.changeRequests, data.changeRequestsOpen, data.changeRequestsDraft];
      assert.deepEqual([listed.changeRequests, listed.changeRequestsOpen, listed.changeRequestsDraft], got);
      return got;
    };
    assert.deepEqual(await counters(), [0, 0, 0]);
    const a = await openChangeRequest(ann, space.id);
    const b = await openChangeRequest(ann, space.id);
    const d = await openChangeRequest(ann, space.id);
    assert.deepEqual(await counters(), [3, 3, 0]);
    await ann.api.spaces.updateChangeRequestById(space.id, d.id, { status: 'draft' });
    assert.deepEqual(await counters(), [3, 2, 1]);
    await ann.api.spaces.updateChangeRequestById(space.id, b.id, { status: 'archived' });
    await ann.api.spaces.mergeChangeRequest(space.id, a.id);
    assert.deepEqual(await counters(), [3, 0, 1]);
  });
});

describe('permissions', () => {
  // Expected status per persona for each operation: read content needs read, authoring needs edit,
  // reviewing and merging need review; a space the caller cannot read is not found.
  const expected = (persona: Persona, min: 'read' | 'edit' | 'review', ok: number) => {
    const rank = { read: 1, comment: 2, edit: 3, review: 4, create: 5, admin: 6 } as const;
    if (persona === null || persona === 'outsider') return 404;
    return rank[persona] >= rank[min] ? ok : 403;
  };

  test('each role × each operation', async () => {
    const { owner, org, people } = await orgWithPersonas(t);
    const space = await newSpace(owner, org.id, 'Matrix');
    await mergeChanges(owner, space.id, [insert('Base')]);
    const results: string[] = [];
    const failures: string[] = [];
    for (const persona of PERSONAS) {
      const user = people.get(persona)!;
      const name = personaName(persona);
      // A change request of the owner's for each persona, with a change, so merging has work to do.
      const cr = await openChangeRequest(owner, space.id, `For ${name}`);
      await editChangeRequest(owner, space.id, cr.id, [insert(`Page for ${name}`)]);
      const checks: [string, 'read' | 'edit' | 'review', number, () => Promise<{ status: number }>][] = [
        ['read content', 'read', 200, () => user.api.spaces.getRevisionOfChangeRequestById(space.id, cr.id)],
        ['read pages', 'read', 200, () => user.api.spaces.listPagesInChangeRequest(space.id, cr.id)],
        ['read change request', 'read', 200, () => user.api.spaces.getChangeRequestById(space.id, cr.id)],
        ['list change requests', 'read', 200, () => user.api.spaces.listChangeRequestsForSpace(space.id)],
        ['list reviews', 'read', 200, () => user.api.spaces.getReviewsByChangeRequestId(space.id, cr.id)],
        ['read space content', 'read', 200, () => user.api.spaces.getCurrentRevision(space.id)],
        ['create', 'edit', 201, () => user.api.spaces.createChangeRequest(space.id, { subject: 'Mine' })],
        ['edit content', 'edit', 200, () => user.api.spaces.updateChangeRequestContent(space.id, cr.id, { changes: [insert(`Edit by ${name}`)] })],
        ['patch', 'edit', 200, () => user.api.spaces.updateChangeRequestById(space.id, cr.id, { subject: `Renamed by ${name}` })],
        ['request reviewers', 'edit', 200, () => user.api.spaces.requestReviewersForChangeRequest(space.id, cr.id, { users: [owner.id] })],
        ['update', 'edit', 200, () => user.api.spaces.updateChangeRequest(space.id, cr.id)],
        ['review', 'review', 201, () => user.api.spaces.submitChangeRequestReview(space.id, cr.id, { status: 'approved' as never })],
        ['merge', 'review', 200, () => user.api.spaces.mergeChangeRequest(space.id, cr.id)],
      ];
      for (const [op, min, ok, call] of checks) {
        const want = expected(persona, min, ok);
        const got = await statusOf(call());
        results.push(`${name} ${op}: ${got}`);
        if (got !== want) failures.push(`${name} ${op}: expected ${want}, got ${got}`);
      }
    }
    assert.deepEqual(failures, [], results.join('\n'));
    // Only the review-or-stronger personas merged their change requests.
    const { data: pages } = await owner.api.spaces.listPages(space.id);
    assert.deepEqual(
      pages.pages.map((p) => p.title).filter((title) => title.startsWith('Page for')).sort(),
      ['Page for admin', 'Page for create', 'Page for review'],
    );
  });

  test('a guest with a grant on the space gets what the grant allows', async () => {
    const { admin: ann, org, space } = await orgWithSpace(t);
    const guest = await member(org.id, null, 'Guest');
    const cr = await openChangeRequest(ann, space.id);
    await expectStatus(guest.api.spaces.getChangeRequestById(space.id, cr.id), 404);
    await ann.api.spaces.inviteToSpace(space.id, { role: MemberRole.Edit, users: [guest.id] });
    await editChangeRequest(guest, space.id, cr.id, [insert('By guest')]);
    assert.equal((await guest.api.spaces.createChangeRequest(space.id, { subject: 'Guest CR' })).status, 201);
    await expectStatus(guest.api.spaces.mergeChangeRequest(space.id, cr.id), 403);
  });
});

describe('bad input', () => {
  test('malformed bodies are 4xx naming the problem, never 500', async () => {
    const { admin: ann, space } = await orgWithSpace(t);
    await mergeChanges(ann, space.id, [insert('Existing')]);
    const pageId = (await ann.api.spaces.listPages(space.id)).data.pages[0]!.id;
    const cr = await openChangeRequest(ann, space.id);
    const content = `/v1/spaces/${space.id}/change-requests/${cr.id}/content`;
    const cases: [string, string, unknown, RegExp][] = [
      ['POST', content, undefined, /body|changes/],
      ['POST', content, {}, /changes/],
      ['POST', content, { changes: 'x' }, /changes/],
      ['POST', content, { changes: [null] }, /changes\.0/],
      ['POST', content, { changes: [{}] }, /operation/],
      ['POST', content, { changes: [{ operation: 'rename_page', page: pageId }] }, /operation/],
      ['POST', content, { changes: [{ operation: 'insert_page' }] }, /document/],
      ['POST', content, { changes: [{ operation: 'insert_page', document: { markdown: 5 } }] }, /markdown/],
      ['POST', content, { changes: [{ operation: 'insert_page', document: { document: 'x' } }] }, /document/],
      ['POST', content, { changes: [{ operation: 'insert_page', document: { html: '<p>' } }] }, /document/],
      ['POST', content, { changes: [{ operation: 'insert_page', document: {}, title: 7 }] }, /title/],
      ['POST', content, { changes: [{ operation: 'insert_page', document: {}, title: '' }] }, /title/],
      ['POST', content, { changes: [{ operation: 'insert_page', document: {}, at: -1 }] }, /at/],
      ['POST', content, { changes: [{ operation: 'insert_page', document: {}, into: 'no-such-page' }] }, /no-such-page/],
      ['POST', content, { changes: [{ operation: 'update_page' }] }, /page/],
      ['POST', content, { changes: [{ operation: 'update_page', page: 'no-such-page', title: 'T' }] }, /no-such-page/],
      ['POST', content, { changes: [{ operation: 'update_page', page: pageId, hidden: 'yes' }] }, /hidden/],
      ['POST', content, { changes: [{ operation: 'update_page', page: pageId, into: 5 }] }, /into/],
      ['POST', content, { changes: [{ operation: 'delete_page', page: 'no-such-page' }] }, /no-such-page/],
      ['POST', content, { changes: [{ operation: 'delete_page', page: 5 }] }, /page/],
      ['POST', content, { changes: [{ operation: 'revert_page' }] }, /page/],
      ['POST', content, { changes: [{ operation: 'insert_files', files: [{ name: 'a', contentType: 'text/plain', base64: 'bad base64 ###' }] }] }, /base64/],
      ['POST', content, { changes: [{ operation: 'insert_files', files: [{ name: 'a', contentType: 'text/plain', base64: 5 }] }] }, /base64/],
      ['POST', content, { changes: [{ operation: 'insert_page', document: { document: { object: 'document', data: {}, nodes: [{ object: 'block', type: 'paragraph' }] } } }] }, /changes\[0\].*document\.nodes\.0\.nodes/],
      ['POST', content, { changes: [{ operation: 'insert_page', document: { document: { object: 'document', data: {}, nodes: [{ object: 'text', leaves: [{ text: 5 }] }] } } }] }, /document\.nodes\.0\.leaves\.0/],
      ['POST', content, { changes: [{ operation: 'insert_page', document: { document: { object: 'document', data: {}, nodes: [{ object: 'block', type: 'images', nodes: [{ object: 'block', type: 'image', isVoid: true, data: {} }] }] } } }] }, /document/],
      ['POST', content, { changes: [{ operation: 'insert_page', ref: 'a', document: {} }, { operation: 'insert_page', ref: 'a', document: {} }] }, /changes\[1\].*ref "a"/],
      ['POST', content, { changes: [{ operation: 'insert_page', ref: 'a', document: {} }, { operation: 'insert_files', files: [{ ref: 'a', name: 'a', contentType: 'text/plain', base64: 'eA==' }] }] }, /changes\[1\].*ref "a"/],
      ['POST', `/v1/spaces/${space.id}/change-requests`, { subject: 5 }, /subject/],
      ['POST', `/v1/spaces/${space.id}/change-requests`, { subject: 'z'.repeat(101) }, /subject/],
      ['POST', `/v1/spaces/${space.id}/change-requests`, [], /body/],
      ['PATCH', `/v1/spaces/${space.id}/change-requests/${cr.id}`, { status: null }, /status/],
      ['PATCH', `/v1/spaces/${space.id}/change-requests/${cr.id}`, { description: { object: 'document', data: {}, nodes: 'x' } }, /description/],
      ['PATCH', `/v1/spaces/${space.id}/change-requests/${cr.id}`, { description: { object: 'document', data: {}, nodes: [{ object: 'block', type: 'paragraph' }] } }, /description\.nodes\.0\.nodes/],
      ['PATCH', `/v1/spaces/${space.id}/change-requests/${cr.id}`, { description: { object: 'document', data: {}, nodes: [{ object: 'leaf' }] } }, /description\.nodes\.0\.object/],
      ['PATCH', `/v1/spaces/${space.id}/change-requests/${cr.id}`, { description: { object: 'document', data: {}, nodes: [{ object: 'block', type: 'paragraph', nodes: [{ object: 'text', leaves: [{ object: 'leaf', text: 'x' }] }] }] } }, /description\.nodes\.0\.nodes\.0\.leaves\.0\.marks/],
      ['POST', `/v1/spaces/${space.id}/change-requests/${cr.id}/reviews`, { status: ['approved'] }, /status/],
      ['POST', `/v1/spaces/${space.id}/change-requests/${cr.id}/requested-reviewers`, { users: [{}] }, /users/],
      ['GET', `/v1/spaces/${space.id}/change-requests?limit=0`, undefined, /limit/],
      ['GET', `/v1/spaces/${space.id}/change-requests?limit=abc`, undefined, /limit/],
      ['GET', `/v1/spaces/${space.id}/change-requests?page=%%%`, undefined, /page/],
      ['GET', `/v1/spaces/${space.id}/change-requests/${cr.id}/changes?limit=0`, undefined, /limit/],
      ['GET', `/v1/spaces/${space.id}/content?metadata=maybe`, undefined, /metadata/],
      ['GET', `/v1/spaces/${space.id}/content/files?limit=5000`, undefined, /limit/],
    ];
    const failures: string[] = [];
    for (const [method, path, body, message] of cases) {
      const res = await t.request(method, path, { token: ann.token, ...(body !== undefined ? { body } : {}) });
      const ok = res.status >= 400 && res.status < 500 && message.test(String(res.body?.error?.message));
      if (!ok) failures.push(`${method} ${path} ${JSON.stringify(body)} → ${res.status} ${JSON.stringify(res.body)}`);
    }
    const raw = await t.request('POST', content, { token: ann.token, raw: '{"changes": [' });
    if (raw.status !== 400) failures.push(`truncated JSON → ${raw.status}`);
    assert.deepEqual(failures, []);
    // None of it reached the change request.
    assert.equal((await ann.api.spaces.getChangeRequestById(space.id, cr.id)).data.revision, cr.revision);
  });
});
