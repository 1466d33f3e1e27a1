import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { addMember, newSpace, openChangeRequest, statusOf } from './support/factories.ts';
import { expectStatus, startTestServer, type TestServer } from './support/server.ts';

let t: TestServer;
before(async () => {
  t = await startTestServer();
});
after(async () => {
  await t?.close();
});

async function setup() {
  const ann = await t.user('Ann');
  const carl = await t.user('Carl');
  const rita = await t.user('Rita');
  const { data: org } = await ann.api.orgs.createOrganization({ title: 'Talk' });
  await addMember(t, org.id, carl, 'comment');
  await addMember(t, org.id, rita, 'read');
  const space = await newSpace(ann, org.id, 'Notes');
  return { ann, carl, rita, org, space };
}

const body = (markdown: string) => ({ markdown }) as never;

describe('comments on a space', () => {
  test('post, reply, react, resolve, list with filters, edit, delete; counters stay true', async () => {
    const { ann, carl, rita, space } = await setup();
    const { data: first } = await carl.api.spaces.postCommentInSpace(space.id, { body: body('Typo in the intro') });
    assert.equal(first.status, 'open');
    assert.equal(first.postedBy.id, carl.id);
    assert.deepEqual(first.body, { markdown: 'Typo in the intro' });
    assert.equal(first.permissions.edit, true);
    const { data: second } = await ann.api.spaces.postCommentInSpace(space.id, { body: body('Needs a diagram') });
    assert.equal((await ann.api.spaces.getSpaceById(space.id)).data.comments, 2);

    const { data: reply } = await ann.api.spaces.postCommentReplyInSpace(space.id, first.id, { body: body('Fixed, thanks') });
    assert.equal(reply.object, 'comment-reply');
    await carl.api.spaces.postCommentReplyInSpace(space.id, first.id, { body: body('Great') });
    await ann.api.spaces.updateCommentInSpace(space.id, first.id, { addedReactions: ['👍', '🎉'] });
    await carl.api.spaces.updateCommentInSpace(space.id, first.id, { addedReactions: ['👍'] });
    await carl.api.spaces.updateCommentInSpace(space.id, first.id, { addedReactions: ['🎉'], removedReactions: ['🎉'] });
    const { data: got } = await rita.api.spaces.getCommentInSpace(space.id, first.id);
    assert.equal(got.replies, 2);
    assert.deepEqual(got.repliers.map((r) => [r.user.id, r.count]).sort(), [[ann.id, 1], [carl.id, 1]].sort());
    assert.deepEqual(got.reactions.map((r) => [r.emoji, r.count]), [['👍', 2], ['🎉', 1]]);
    assert.equal(got.permissions.edit, false);
    assert.equal(got.permissions.delete, false);

    const { data: resolved } = await ann.api.spaces.updateCommentInSpace(space.id, first.id, { resolved: true });
    assert.equal(resolved.status, 'resolved');
    assert.equal((resolved as { resolvedBy: { id: string } }).resolvedBy.id, ann.id);
    assert.equal((await ann.api.spaces.getSpaceById(space.id)).data.comments, 1);

    const ids = async (query: Record<string, unknown>) => (await ann.api.spaces.listCommentsInSpace(space.id, query as never)).data.items.map((c) => c.id);
    assert.deepEqual(await ids({}), [second.id, first.id]);
    assert.deepEqual(await ids({ order: 'asc' }), [first.id, second.id]);
    assert.deepEqual(await ids({ status: 'open' }), [second.id]);
    assert.deepEqual(await ids({ status: 'resolved' }), [first.id]);
    assert.deepEqual(await ids({ authors: [carl.id] }), [first.id]);

    // Only the author edits the text.
    await expectStatus(ann.api.spaces.updateCommentInSpace(space.id, first.id, { body: body('Hijacked') }), 403);
    const { data: edited } = await carl.api.spaces.updateCommentInSpace(space.id, first.id, { body: body('Typo in the intro (line 2)') });
    assert.ok(edited.editedAt);
    // Readers read but cannot post.
    await expectStatus(rita.api.spaces.postCommentInSpace(space.id, { body: body('Me too') }), 403);

    const { data: replies } = await rita.api.spaces.listCommentRepliesInSpace(space.id, first.id);
    assert.equal(replies.count, 2);
    assert.equal((await ann.api.spaces.deleteCommentReplyInSpace(space.id, first.id, reply.id)).status, 204);
    assert.equal((await rita.api.spaces.getCommentInSpace(space.id, first.id)).data.replies, 1);

    await expectStatus(rita.api.spaces.deleteCommentInSpace(space.id, second.id), 403);
    assert.equal((await ann.api.spaces.deleteCommentInSpace(space.id, second.id)).status, 204);
    assert.equal((await ann.api.spaces.deleteCommentInSpace(space.id, second.id)).status, 204);
    await expectStatus(ann.api.spaces.getCommentInSpace(space.id, second.id), 404);
    assert.equal((await ann.api.spaces.getSpaceById(space.id)).data.comments, 0);
  });

  test('change-request comments are their own thread, with their own counter', async () => {
    const { ann, carl, space } = await setup();
    const cr = await openChangeRequest(ann, space.id, 'Review me');
    const { data: c } = await carl.api.spaces.postCommentInChangeRequest(space.id, cr.id, { body: body('Looks good') });
    assert.equal(c.target.changeRequest, cr.id);
    assert.equal((await ann.api.spaces.getChangeRequestById(space.id, cr.id)).data.comments, 1);
    assert.equal((await ann.api.spaces.getSpaceById(space.id)).data.comments, 0);
    assert.deepEqual((await ann.api.spaces.listCommentsInSpace(space.id)).data.items, []);
    await expectStatus(ann.api.spaces.getCommentInSpace(space.id, c.id), 404);
    const { data: r } = await ann.api.spaces.postCommentReplyInChangeRequest(space.id, cr.id, c.id, { body: body('Thanks') });
    const { data: again } = await ann.api.spaces.updateCommentReplyInChangeRequest(space.id, cr.id, c.id, r.id, { body: body('Thanks!') });
    assert.deepEqual(again.body, { markdown: 'Thanks!' });
    const { data: list } = await carl.api.spaces.listCommentRepliesInChangeRequest(space.id, cr.id, c.id);
    assert.deepEqual(list.items.map((i) => i.id), [r.id]);
  });

  test('anchors, bad input and outsiders', async () => {
    const { ann, space } = await setup();
    const outsider = await t.user('Outsider');
    await expectStatus(outsider.api.spaces.listCommentsInSpace(space.id), 404);
    let res = await t.request('POST', `/v1/spaces/${space.id}/comments`, { token: ann.token, body: { body: { markdown: 5 } } });
    assert.equal(res.status, 400);
    res = await t.request('POST', `/v1/spaces/${space.id}/comments`, { token: ann.token, body: {} });
    assert.equal(res.status, 400);
    assert.match(res.body.error.message, /body/);
    res = await t.request('POST', `/v1/spaces/${space.id}/comments`, { token: ann.token, body: { body: { markdown: 'x' }, page: 'no-such-page' } });
    assert.equal(res.status, 400);
    assert.match(res.body.error.message, /page/);
    res = await t.request('PUT', `/v1/spaces/${space.id}/comments/nope`, { token: ann.token, body: { resolved: true } });
    assert.equal(res.status, 404);
    const { data: withCell } = await ann.api.spaces.postCommentInSpace(space.id, { body: body('Cell'), node: 'n1', tableCell: { record: 'r1', definition: 'd1' } });
    assert.deepEqual(withCell.target.tableCell, { record: 'r1', definition: 'd1' });
    assert.deepEqual(withCell.target.node, { id: 'n1' });
    assert.equal(await statusOf(ann.api.spaces.getCommentInSpace(space.id, withCell.id, { format: 'document' } as never)), 200);
  });

  test('the comment and reply schemas are declared: /v1/openapi.json names every field, documents keep their blocks', async () => {
    const spec = (await t.request('GET', '/v1/openapi.json')).body;
    const responseOf = (path: string, method: string) => {
      const schema = spec.paths[`/v1${path}`][method].responses['200'].content['application/json'].schema;
      return schema.properties.items ? schema.properties.items.items : schema;
    };
    for (const [path, method] of [
      ['/spaces/{spaceId}/comments', 'get'],
      ['/spaces/{spaceId}/comments/{commentId}', 'get'],
      ['/spaces/{spaceId}/change-requests/{changeRequestId}/comments/{commentId}', 'put'],
    ]) {
      const comment = responseOf(path!, method!);
      assert.notEqual(comment.additionalProperties, true, path);
      for (const field of ['postedBy', 'postedAt', 'reactions', 'replies', 'repliers', 'body', 'target', 'urls', 'permissions', 'status', 'resolvedBy']) {
        assert.ok(comment.properties[field], `${method} ${path}: ${field}`);
      }
    }
    const reply = responseOf('/spaces/{spaceId}/comments/{commentId}/replies/{commentReplyId}', 'get');
    assert.notEqual(reply.additionalProperties, true);
    for (const field of ['postedBy', 'postedAt', 'reactions', 'body', 'urls', 'permissions']) assert.ok(reply.properties[field], field);
    assert.equal(reply.properties.replies, undefined);

    // Serialized through the declared schemas, a document body keeps its nested blocks and text.
    const { ann, space } = await setup();
    const { data: c } = await ann.api.spaces.postCommentInSpace(space.id, { body: body('Hello **there**') });
    const { data: r } = await ann.api.spaces.postCommentReplyInSpace(space.id, c.id, { body: body('And *you*') });
    const text = (doc: unknown) => JSON.stringify(doc);
    const asDocument = (await ann.api.spaces.getCommentInSpace(space.id, c.id, { format: 'document' } as never)).data.body as { document: unknown };
    assert.match(text(asDocument.document), /"there"/);
    const replyDocument = (await ann.api.spaces.getCommentReplyInSpace(space.id, c.id, r.id, { format: 'document' } as never)).data.body as { document: unknown };
    assert.match(text(replyDocument.document), /"you"/);
  });
});
