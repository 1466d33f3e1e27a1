import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { changeRequestWith, mergePages, newOrg, newSpace, openChangeRequest } from './support/factories.ts';
import { expectStatus, startTestServer, type TestServer } from './support/server.ts';

/**
 * Variables (space and page), reusable contents and the document reads GitBook's renderer uses:
 * written through change requests, served through the official client (whose responses are
 * checked against the official schemas).
 */

let t: TestServer;
before(async () => {
  t = await startTestServer();
});
after(async () => {
  await t?.close();
});

/** The texts of a document, block by block (leaves joined). */
function texts(node: any): string[] {
  const out: string[] = [];
  const walk = (n: any, into: string[]) => {
    if (n.object === 'leaf') into.push(n.text);
    for (const c of n.nodes ?? n.leaves ?? []) walk(c, into);
  };
  for (const block of node.nodes) {
    const parts: string[] = [];
    walk(block, parts);
    out.push(parts.join(''));
  }
  return out;
}

const PAGE = `---
vars:
  product: Folio Cloud
  seats: 5
---

# Pricing

Plan <code class="expression">space.vars.plan</code> for <code class="expression">page.vars.product</code>, <code class="expression">page.vars.seats</code> seats.

{% include ".gitbook/includes/support.md" %}
`;

test('space and page variables are set and evaluated; reusable contents are stored, listed, read and expanded', async () => {
  const { admin, org } = await newOrg(t);
  const space = await newSpace(admin, org.id, 'Docs');
  const body = await mergePages(t, admin, space.id, [
    { operation: 'update_variables', variables: { plan: 'Pro', gone: 'x' } },
    { operation: 'update_variables', variables: { gone: null, enabled: true } },
    { operation: 'insert_reusable_content', reusableContent: 'support', title: 'Support', document: { markdown: 'Write to **help@example.com**.\n' } },
    { operation: 'insert_page', document: { markdown: PAGE } },
  ]);
  const pageId = body.changes[0].page.id as string;

  const { data: revision } = await admin.api.spaces.getCurrentRevision(space.id);
  assert.deepEqual(revision.variables, { plan: 'Pro', enabled: true });
  assert.equal(revision.reusableContents.length, 1);
  const reusable = revision.reusableContents[0]!;
  assert.equal(reusable.id, 'support');
  assert.equal(reusable.title, 'Support');
  assert.ok('document' in reusable && typeof reusable.document === 'string');

  // Page variables come from the front matter, are served in `variables`, and written back as `vars`.
  const { data: page } = await admin.api.spaces.getPageById(space.id, pageId, { format: 'markdown' });
  assert.ok('variables' in page);
  assert.deepEqual(page.variables, { product: 'Folio Cloud', seats: 5 });
  assert.ok('markdown' in page && /^vars:\n {2}product: Folio Cloud\n {2}seats: 5$/m.test(page.markdown), 'markdown' in page ? page.markdown : '');

  // Evaluated: expressions take their values; dereferenced: the include is replaced by its content.
  const { data: plain } = await admin.api.spaces.getPageById(space.id, pageId, { format: 'document' });
  assert.ok('document' in plain && plain.document);
  assert.ok(plain.document.nodes.some((n: any) => n.type === 'reusable-content' && n.data.ref.reusableContent === 'support'));
  const { data: full } = await admin.api.spaces.getPageById(space.id, pageId, { format: 'document', evaluated: true, dereferenced: true });
  assert.ok('document' in full && full.document);
  assert.deepEqual(texts(full.document), ['Plan Pro for Folio Cloud, 5 seats.', 'Write to help@example.com.']);

  // The reusable content through the official reads: live, in the revision, in a change request.
  const { data: live } = await admin.api.spaces.getReusableContentById(space.id, 'support');
  assert.deepEqual(live, reusable);
  const { data: inRevision } = await admin.api.spaces.getReusableContentInRevisionById(space.id, revision.id, 'support');
  assert.deepEqual(inRevision, reusable);
  const { data: doc } = await admin.api.spaces.getReusableContentDocumentInRevisionById(space.id, revision.id, 'support');
  assert.deepEqual(texts(doc), ['Write to help@example.com.']);
  const cr = await changeRequestWith(admin, space.id, [{ operation: 'update_reusable_content', reusableContent: 'support', title: 'Help', document: { markdown: 'Call us.\n' } }]);
  const { data: inCr } = await admin.api.spaces.getReusableContentInChangeRequestById(space.id, cr.id, 'support');
  assert.equal(inCr.title, 'Help');
  assert.notEqual('document' in inCr && inCr.document, 'document' in reusable && reusable.document);
  // The live content did not change until the merge.
  assert.equal((await admin.api.spaces.getReusableContentById(space.id, 'support')).data.title, 'Support');
  await admin.api.spaces.mergeChangeRequest(space.id, cr.id);
  const { data: after } = await admin.api.spaces.getPageById(space.id, pageId, { format: 'document', dereferenced: 'reusable-contents' });
  assert.ok('document' in after && after.document);
  assert.equal(texts(after.document).at(-1), 'Call us.');

  // The page's document alone, and any stored document of the space by its id.
  const { data: pageDoc } = await admin.api.spaces.getPageDocumentInRevisionById(space.id, revision.id, pageId, { evaluated: true });
  assert.equal(texts(pageDoc)[0], 'Plan Pro for Folio Cloud, 5 seats.');
  assert.ok('documentId' in page && page.documentId);
  const { data: byId } = await admin.api.spaces.getDocumentById(space.id, page.documentId!);
  assert.equal(byId.object, 'document');
  // Stored as written: the expressions are there, unevaluated.
  assert.match(JSON.stringify(byId), /"expression":"space\.vars\.plan"/);

  // Deleting the reusable content leaves the include unexpanded (nothing invented).
  await mergePages(t, admin, space.id, [{ operation: 'delete_reusable_content', reusableContent: 'support' }]);
  await expectStatus(admin.api.spaces.getReusableContentById(space.id, 'support'), 404);
  const { data: orphan } = await admin.api.spaces.getPageById(space.id, pageId, { format: 'document', dereferenced: true });
  assert.ok('document' in orphan && orphan.document?.nodes.some((n: any) => n.type === 'reusable-content'));
});

test('documents are read only through a space that holds them', async () => {
  const a = await newOrg(t, 'Alpha');
  const b = await newOrg(t, 'Bravo');
  const spaceA = await newSpace(a.admin, a.org.id, 'A');
  const spaceA2 = await newSpace(a.admin, a.org.id, 'A2');
  const spaceB = await newSpace(b.admin, b.org.id, 'B');
  const body = await mergePages(t, b.admin, spaceB.id, [{ operation: 'insert_page', title: 'Secret', document: { markdown: 'Bravo secret.\n' } }]);
  const { data: secret } = await b.admin.api.spaces.getPageById(spaceB.id, body.changes[0].page.id, {});
  const documentId = 'documentId' in secret ? secret.documentId! : '';
  assert.ok(documentId);
  await b.admin.api.spaces.getDocumentById(spaceB.id, documentId);
  // Another organization's space, or another space of one's own, does not hold it.
  await expectStatus(a.admin.api.spaces.getDocumentById(spaceA.id, documentId), 404);
  await expectStatus(a.admin.api.spaces.getDocumentById(spaceA2.id, documentId), 404);
  // Someone outside the space cannot read it at all.
  await expectStatus(a.admin.api.spaces.getDocumentById(spaceB.id, documentId), 404);
  // A duplicate holds the documents of the content it copied.
  const { data: copy } = await b.admin.api.spaces.duplicateSpace(spaceB.id);
  assert.equal((await b.admin.api.spaces.getDocumentById(copy.id, documentId)).data.object, 'document');
});

test('bad variables and reusable contents are refused with what to fix', async () => {
  const { admin, org } = await newOrg(t);
  const space = await newSpace(admin, org.id, 'Docs');
  const cr = await openChangeRequest(admin, space.id, 'bad');
  const bad = async (change: unknown, message: RegExp) => {
    const res = await t.request('POST', `/v1/spaces/${space.id}/change-requests/${cr.id}/content`, { token: admin.token, body: { changes: [change] } });
    assert.equal(res.status, 400, JSON.stringify(res.body));
    assert.match(res.body.error.message, message);
  };
  await bad({ operation: 'update_variables', variables: { 'not a name': 'x' } }, /not a variable name/);
  await bad({ operation: 'update_variables', variables: { long: 'x'.repeat(257) } }, /variables/);
  await bad({ operation: 'update_variables', variables: { obj: { a: 1 } } }, /variables/);
  await bad({ operation: 'insert_reusable_content', reusableContent: '../escape', title: 'X', document: { markdown: 'x' } }, /reusableContent/);
  await bad({ operation: 'update_reusable_content', reusableContent: 'missing', title: 'X' }, /not found/);
  await bad({ operation: 'delete_reusable_content', reusableContent: 'missing' }, /not found/);
  await bad({ operation: 'insert_page', title: 'P', variables: { '1x': 'y' }, document: { markdown: 'x' } }, /not a variable name/);
  const res = await t.request('POST', `/v1/spaces/${space.id}/change-requests/${cr.id}/content`, {
    token: admin.token,
    body: { changes: [{ operation: 'insert_reusable_content', reusableContent: 'dup', title: 'X', document: { markdown: 'x' } }, { operation: 'insert_reusable_content', reusableContent: 'dup', title: 'Y', document: { markdown: 'y' } }] },
  });
  assert.equal(res.status, 400);
  assert.match(res.body.error.message, /already exists/);
  // Computed documents: a translation source naming no translation is a 404 that names it (sources
  // are tested in computed-content.test.ts and computed-translation.test.ts).
  const computed = await t.request('POST', `/v1/spaces/${space.id}/content/computed/document`, {
    token: admin.token,
    body: { source: { type: 'builtin:translation', props: { space: space.id, document: 'd' }, dependencies: { translation: { ref: { kind: 'translation', translation: 't' } } } }, seed: 's' },
  });
  assert.equal(computed.status, 404);
  assert.match(computed.body.error.message, /no translation "t"/);
});
