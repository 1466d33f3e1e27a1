import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import { after, before, describe, test } from 'node:test';
import { installedIntegration, newCollection, newOrg } from './support/factories.ts';
import { gitSyncHarness } from './support/git-sync.ts';
import { officialSchema } from './support/official-schema.ts';
import type { TestUser } from './support/server.ts';
import { settleJobs } from './support/wait.ts';

// One Folio server allowed to reach 127.0.0.1 (FETCH_ALLOW_PRIVATE), a git server, and a dev tunnel
// receiver: integrations in development mode get their events there.
const { h, importRepo, exportRepo, editAndMerge, newSpace, gitJobsDone, info } = gitSyncHarness();
const validEvent = officialSchema('Event');

let tunnel: Server;
const received: { eventId: string; type: string }[] = [];
before(async () => {
  tunnel = createServer(async (req, res) => {
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    const form = await new Request('http://x', { method: 'POST', body: Buffer.concat(chunks), headers: { 'content-type': req.headers['content-type']! } }).formData();
    received.push(JSON.parse(String(form.get('event'))));
    res.end('ok');
  });
  await new Promise<void>((r) => tunnel.listen(0, '127.0.0.1', r));
});
after(() => tunnel?.close());

type Payload = { eventId: string; type: string; installationId: string; spaceId?: string } & Record<string, unknown>;

/** An integration in development mode towards the tunnel, installed on every space of the organization. */
async function listening(user: TestUser, organization: string) {
  const tunnelUrl = `http://127.0.0.1:${(tunnel.address() as { port: number }).port}/events`;
  const { name, installation } = await installedIntegration(user, organization, { body: { title: 'Events', scopes: ['space:content:read'] }, tunnelUrl, spaces: 'all' });
  return { name, installationId: installation.id };
}

/**
 * The delivered events of `type`, oldest first, once the job queue has delivered everything (at
 * least `count` of them); each is checked against the official Event schema and was received by
 * the tunnel.
 */
async function delivered(user: TestUser, name: string, type: string, count: number): Promise<Payload[]> {
  await settleJobs(h.t);
  const { data } = await user.api.integrations.listIntegrationEvents(name, { limit: 100 });
  const items = data.items.filter((e) => e.payload.type === type).reverse();
  assert.ok(items.length >= count, `no ${count} ${type} events: ${JSON.stringify(data.items.map((e) => [e.payload.type, e.status]))}`);
  for (const e of items) {
    assert.equal(e.status, 'success');
    assert.ok(validEvent(e.payload), `${type} does not match the official Event schema: ${validEvent.errors()}\n${JSON.stringify(e.payload)}`);
    assert.ok(received.some((r) => r.eventId === e.payload.eventId), 'the tunnel received it');
  }
  return items.map((e) => e.payload as unknown as Payload);
}

describe('space events', () => {
  test('space_visibility_updated: on every path that changes the visibility, never when it stays', async () => {
    const { admin, org } = await newOrg(h.t, 'Visible Inc');
    const { name, installationId } = await listening(admin, org.id);
    const space = await newSpace(admin, org.id);
    // The official client's body type omits `visibility`; Folio takes it here (as openapi.test.ts does).
    await admin.api.spaces.updateSpaceById(space.id, { visibility: 'public' } as never);
    // Unchanged visibility, or no visibility at all: no event.
    await admin.api.spaces.updateSpaceById(space.id, { visibility: 'public' } as never);
    await admin.api.spaces.updateSpaceById(space.id, { title: 'Renamed' });
    // Leaving its collection, an "in-collection" space becomes private: by transfer to the top level,
    const collection = await newCollection(admin, org.id, 'Guides');
    const { data: inside } = await admin.api.orgs.createSpace(org.id, { title: 'Inside', parent: collection.id, visibility: 'in-collection' } as never);
    const moved = await h.t.request('POST', `/v1/spaces/${inside.id}/transfer`, { token: admin.token, body: { organization: org.id } }); // no official operation
    assert.equal(moved.status, 200);
    assert.equal(moved.body.visibility, 'private');
    // and by restore once its collection was deleted.
    const other = await newCollection(admin, org.id, 'Doomed');
    const { data: trashed } = await admin.api.orgs.createSpace(org.id, { title: 'Trashed', parent: other.id, visibility: 'in-collection' } as never);
    await admin.api.collections.deleteCollectionById(other.id);
    assert.equal((await admin.api.spaces.restoreSpace(trashed.id)).data.visibility, 'private');

    // Events are delivered in order per installation: had the unchanged updates made one, it would
    // be among these three.
    const events = await delivered(admin, name, 'space_visibility_updated', 3);
    assert.equal(new Set(events.map((e) => e.eventId)).size, 3);
    assert.deepEqual(events.map(({ eventId: _, ...rest }) => rest), [
      { type: 'space_visibility_updated', installationId, spaceId: space.id, previousVisibility: 'private', visibility: 'public' },
      { type: 'space_visibility_updated', installationId, spaceId: inside.id, previousVisibility: 'in-collection', visibility: 'private' },
      { type: 'space_visibility_updated', installationId, spaceId: trashed.id, previousVisibility: 'in-collection', visibility: 'private' },
    ]);
  });

  test('space_gitsync_started / completed: import, failed import, export', async () => {
    const { admin, org } = await newOrg(h.t, 'Synced Inc');
    const { name, installationId } = await listening(admin, org.id);
    const space = await newSpace(admin, org.id);
    h.g.createRepo('evented');
    const commit = h.g.commit('evented', { 'site/README.md': '# Welcome\n\nHello.\n' }, 'First');

    assert.equal((await importRepo(admin, space.id, 'evented')).operation?.state, 'success');
    const imported = (await admin.api.spaces.getSpaceById(space.id)).data.revision;
    assert.notEqual(imported, space.revision);
    // A branch that does not exist: a failure the user must fix, not retried; best ids known: the
    // space's revision and the last commit synced.
    const missing = await h.t.request('POST', `/v1/spaces/${space.id}/git/import`, { token: admin.token, body: { url: h.g.urlOf('evented'), ref: 'refs/heads/nope', repoProjectDirectory: 'site' } });
    assert.equal(missing.status, 204);
    // The import runs as a job: it must have failed before the merge below moves the revision.
    await gitJobsDone();
    assert.equal((await info(admin, space.id)).operation?.state, 'failure');
    await editAndMerge(admin, space.id, [{ operation: 'insert_page', title: 'Second', document: { markdown: '# Second\n\nMore.\n' } }]);
    assert.equal((await exportRepo(admin, space.id, 'evented', 'From Folio')).operation?.state, 'success');
    const merged = (await admin.api.spaces.getSpaceById(space.id)).data.revision;
    const pushed = h.g.head('evented')!;
    assert.notEqual(pushed, commit);

    const common = { installationId, spaceId: space.id };
    const started = await delivered(admin, name, 'space_gitsync_started', 3);
    const completed = await delivered(admin, name, 'space_gitsync_completed', 3);
    const ids = (e: Payload) => ({ installationId: e.installationId, spaceId: e.spaceId, state: e.state, revisionId: e.revisionId, commitId: e.commitId });
    // Import: from the space's revision towards the fetched commit, completed at the new revision.
    // Failure: the revision and commit as they were. Export: from the revision exported, completed
    // at the commit pushed.
    assert.deepEqual(started.map(ids), [
      { ...common, state: undefined, revisionId: space.revision, commitId: commit },
      { ...common, state: undefined, revisionId: imported, commitId: commit },
      { ...common, state: undefined, revisionId: merged, commitId: commit },
    ]);
    assert.deepEqual(completed.map(ids), [
      { ...common, state: 'success', revisionId: imported, commitId: commit },
      { ...common, state: 'failure', revisionId: imported, commitId: commit },
      { ...common, state: 'success', revisionId: merged, commitId: pushed },
    ]);
    // The import moved the space's content, as the merge did: both are space_content_updated.
    const updated = await delivered(admin, name, 'space_content_updated', 2);
    assert.deepEqual(updated.map((e) => e.revisionId), [imported, merged]);
    // Each started precedes its completed.
    const order = (await admin.api.integrations.listIntegrationEvents(name, { limit: 100 })).data.items
      .map((e) => e.payload.type)
      .filter((t) => t.startsWith('space_gitsync'))
      .reverse();
    assert.deepEqual(order, ['started', 'completed', 'started', 'completed', 'started', 'completed'].map((s) => `space_gitsync_${s}`));
  });
});
