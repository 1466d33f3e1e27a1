/**
 * Live co-editing (src/collab/): clients of the official Hocuspocus provider, as the app uses it,
 * on pages of change requests; what they type is read back through the official API client.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import WebSocket from 'ws';
import * as Y from 'yjs';
import { editPages, newMember, openChangeRequest, orgWithSpace } from './support/factories.ts';
import { startTestServer, type TestServer, type TestUser } from './support/server.ts';
import { collabClient, collabUrl, firstText, sharedText, typeAt, until, type CollabClient } from './support/collab.ts';

let t: TestServer;
const clients: CollabClient[] = [];
before(async () => {
  t = await startTestServer({ collab: { saveDelayMs: 100, saveMaxDelayMs: 500, recheckMs: 100, maxMessageBytes: 64 * 1024, maxMessagesPerSecond: 400 } });
});
after(async () => {
  for (const c of clients) c.close();
  await t?.close();
});

function join(user: TestUser, name: string, opts: { headers?: Record<string, string> } = {}): CollabClient {
  const client = collabClient(t.url, name, user.token, opts);
  clients.push(client);
  return client;
}

/** A space with a change request holding one page of `text`; answers the shared page's name. */
async function sharedPage(text = 'Hello world.') {
  const { admin, org, space } = await orgWithSpace(t);
  const cr = await openChangeRequest(admin, space.id);
  const edit = await editPages(t, admin, space.id, cr.id, [{ operation: 'insert_page', title: 'Guide', document: { markdown: `${text}\n` } }]);
  const pageId = edit.pageIds[0]!;
  return { admin, org, space, cr, pageId, name: `${space.id}/${cr.id}/${pageId}` };
}

async function markdownIn(user: TestUser, spaceId: string, crId: string, pageId: string): Promise<string> {
  const res = await t.request('GET', `/v1/spaces/${spaceId}/change-requests/${crId}/content/page/${pageId}?format=markdown`, { token: user.token });
  assert.equal(res.status, 200, JSON.stringify(res.body));
  return (res.body as { markdown: string }).markdown;
}

describe('co-editing', () => {
  test('two editors converge, and the change request reads what both typed', async () => {
    const { admin, org, space, cr, pageId, name } = await sharedPage('Hello world.');
    const bob = await newMember(t, org.id, 'edit' as never, 'Bob');
    const a = join(admin, name);
    const b = join(bob, name);
    await Promise.all([a.ready, b.ready]);
    assert.equal(sharedText(a.doc), 'Hello world.');
    assert.equal(a.readOnly(), false);
    typeAt(a.doc, 0, 'Ann: ');
    typeAt(b.doc, 'Hello world.'.length, ' Bob!');
    await until(() => sharedText(a.doc) === sharedText(b.doc) && sharedText(a.doc).includes('Bob!') && sharedText(b.doc).includes('Ann:'), 5000, 'convergence');
    assert.equal(sharedText(a.doc), 'Ann: Hello world. Bob!');
    // Saved within the delay through the same content service as API edits.
    let markdown = '';
    for (let i = 0; i < 100 && !markdown.includes('Ann: Hello world. Bob!'); i++) {
      markdown = await markdownIn(admin, space.id, cr.id, pageId);
      if (!markdown.includes('Ann: Hello world. Bob!')) await new Promise((r) => setTimeout(r, 50));
    }
    assert.match(markdown, /Ann: Hello world\. Bob!/);
    // Both are contributors of the change request.
    for (const user of [admin, bob]) {
      const listed = await t.request('GET', `/v1/spaces/${space.id}/change-requests?contributor=${user.id}`, { token: admin.token });
      assert.deepEqual(listed.body.items.map((c: { id: string }) => c.id), [cr.id], `${user.id} is a contributor`);
    }
  });

  test('an API write while people type appears in their editors, and keeps what they typed', async () => {
    const { admin, space, cr, pageId, name } = await sharedPage('First line.');
    const a = join(admin, name);
    await a.ready;
    typeAt(a.doc, 0, 'Typed ');
    // Written through the API at once (before the editors' save), from the stored text.
    const res = await t.request('POST', `/v1/spaces/${space.id}/change-requests/${cr.id}/content`, {
      token: admin.token,
      body: { changes: [{ operation: 'update_page', page: pageId, document: { markdown: 'First line.\n\nAdded by the API.\n' } }] },
    });
    assert.equal(res.status, 200, JSON.stringify(res.body));
    await until(() => sharedText(a.doc).includes('Added by the API.'), 5000, 'the API write in the editor');
    await until(() => sharedText(a.doc).startsWith('Typed First line.'), 5000, 'the typing kept');
    let markdown = '';
    for (let i = 0; i < 100; i++) {
      markdown = await markdownIn(admin, space.id, cr.id, pageId);
      if (markdown.includes('Typed First line.') && markdown.includes('Added by the API.')) break;
      await new Promise((r) => setTimeout(r, 50));
    }
    assert.match(markdown, /Typed First line\./);
    assert.match(markdown, /Added by the API\./);
  });

  test('a reader follows along but cannot type; an outsider and a bad token are refused', async () => {
    const { admin, org, name } = await sharedPage('Read me.');
    const reader = await newMember(t, org.id, 'read' as never, 'Reader');
    const writer = join(admin, name);
    const follower = join(reader, name);
    await Promise.all([writer.ready, follower.ready]);
    assert.equal(follower.readOnly(), true);
    typeAt(follower.doc, 0, 'NOPE ');
    typeAt(writer.doc, 0, 'Yes ');
    await until(() => sharedText(follower.doc).includes('Yes '), 5000, 'the writer seen by the reader');
    await new Promise((r) => setTimeout(r, 300));
    assert.ok(!sharedText(writer.doc).includes('NOPE'), 'the reader typed nothing into the shared page');

    const outsider = await t.user('Outsider');
    await assert.rejects(join(outsider, name).ready, /not-found/);
    const forged = collabClient(t.url, name, 'gb_api_not_a_token');
    clients.push(forged);
    await assert.rejects(forged.ready, /unauthenticated/);
  });

  test('the session cookie works from Folio’s own origin only', async () => {
    const { admin, name } = await sharedPage('Cookies.');
    // A cookie sent by a page of another origin is no credential (cross-site WebSocket hijacking).
    const cookie = { Cookie: `folio_session=${admin.token}` };
    await assert.rejects(join({ ...admin, token: '' }, name, { headers: { ...cookie, Origin: 'https://evil.example' } }).ready, /unauthenticated/);
    const own = join({ ...admin, token: '' }, name, { headers: { ...cookie, Origin: new URL(t.url).origin } });
    await own.ready;
    assert.equal(sharedText(own.doc), 'Cookies.');
  });

  test('a member removed from the organization is disconnected', async () => {
    const { admin, org, name } = await sharedPage('Members only.');
    const bob = await newMember(t, org.id, 'edit' as never, 'Bob');
    const b = join(bob, name);
    await b.ready;
    await admin.api.orgs.removeMemberFromOrganizationById(org.id, bob.id);
    await until(() => b.closes.some((c) => /access ended: not-found/.test(c.reason)), 5000, 'the disconnection');
  });

  test('a merge includes what was typed and not yet saved', async () => {
    const { admin, space, cr, name } = await sharedPage('Merge me.');
    // Saves wait a minute here: only the merge can save what was typed.
    const configuration = t.server.collab.hocuspocus.configuration;
    const delays = { debounce: configuration.debounce, maxDebounce: configuration.maxDebounce };
    Object.assign(configuration, { debounce: 60_000, maxDebounce: 60_000 });
    after(() => Object.assign(configuration, delays));
    const a = join(admin, name);
    await a.ready;
    typeAt(a.doc, 0, 'Unsaved ');
    // The keystrokes reach the server (not the save: its delay has not passed).
    await until(() => sharedText(t.server.collab.hocuspocus.documents.get(name)!).startsWith('Unsaved'), 2000, 'the keystrokes on the server');
    await admin.api.spaces.mergeChangeRequest(space.id, cr.id);
    const pages = (await admin.api.spaces.listPages(space.id)).data.pages;
    const page = pages.find((p) => p.title === 'Guide')!;
    const read = await t.request('GET', `/v1/spaces/${space.id}/content/page/${page.id}?format=markdown`, { token: admin.token });
    assert.match((read.body as { markdown: string }).markdown, /Unsaved Merge me\./);
  });

  test('malformed, oversized and flooding clients are cut off; the server and the page stay sound', async () => {
    const { admin, space, cr, pageId, name } = await sharedPage('Sturdy.');
    const a = join(admin, name);
    await a.ready;
    // 10,000 random messages over a few connections.
    let sent = 0;
    let seed = 42;
    const random = () => (seed = (seed * 1103515245 + 12345) & 0x7fffffff) / 0x7fffffff;
    while (sent < 10_000) {
      const ws = new WebSocket(collabUrl(t.url));
      await new Promise<void>((resolve) => ws.once('open', () => resolve()));
      ws.on('error', () => undefined);
      for (let i = 0; i < 500 && ws.readyState === WebSocket.OPEN; i++, sent++) {
        const bytes = new Uint8Array(1 + Math.floor(random() * 64));
        for (let j = 0; j < bytes.length; j++) bytes[j] = Math.floor(random() * 256);
        // Some start with the page's name, as real messages do.
        if (random() < 0.3) {
          const header = Buffer.concat([Buffer.from([name.length]), Buffer.from(name)]);
          ws.send(Buffer.concat([header, Buffer.from(bytes)]));
        } else ws.send(bytes);
      }
      ws.terminate();
    }
    // Oversized: closed by the server (1009).
    const big = new WebSocket(collabUrl(t.url));
    const closed = new Promise<number>((resolve) => big.on('close', (code) => resolve(code)));
    big.on('error', () => undefined);
    await new Promise<void>((resolve) => big.once('open', () => resolve()));
    big.send(new Uint8Array(128 * 1024));
    assert.equal(await closed, 1009);
    // A flood: closed (1008) once past the burst. Malformed messages were closed with 1007 above.
    const flood = new WebSocket(collabUrl(t.url));
    const flooded = new Promise<number>((resolve) => flood.on('close', (code) => resolve(code)));
    flood.on('error', () => undefined);
    await new Promise<void>((resolve) => flood.once('open', () => resolve()));
    // Well-formed messages (asking for the page's presence), only too many of them.
    const query = Buffer.concat([Buffer.from([name.length]), Buffer.from(name), Buffer.from([3])]);
    for (let i = 0; i < 5000 && flood.readyState === WebSocket.OPEN; i++) flood.send(query);
    assert.equal(await flooded, 1008);

    typeAt(a.doc, 0, 'Still ');
    let markdown = '';
    for (let i = 0; i < 100; i++) {
      markdown = await markdownIn(admin, space.id, cr.id, pageId);
      if (markdown.includes('Still Sturdy.')) break;
      await new Promise((r) => setTimeout(r, 50));
    }
    assert.match(markdown, /Still Sturdy\./);
    assert.equal((await t.request('GET', '/healthz')).status, 200);
  });

  test('a restart resumes the same shared page: reconnecting editors do not double the text', async () => {
    const { admin, name, space, cr, pageId } = await sharedPage('Once.');
    const a = join(admin, name);
    await a.ready;
    typeAt(a.doc, 0, 'Only ');
    await until(() => sharedText(a.doc) === 'Only Once.', 2000, 'typing');
    // The server forgets the page (as a restart would): the editor's document is kept and syncs again.
    const saved = Y.encodeStateAsUpdate(a.doc);
    a.close();
    await until(() => t.server.collab.stats().pages === 0 || !t.server.collab.hocuspocus.documents.has(name), 5000, 'the page unloaded');
    const again = collabClient(t.url, name, admin.token);
    clients.push(again);
    Y.applyUpdate(again.doc, saved);
    await again.ready;
    await new Promise((r) => setTimeout(r, 200));
    assert.equal(sharedText(again.doc), 'Only Once.');
    assert.equal(firstText(again.doc).toString(), 'Only Once.');
    const markdown = await markdownIn(admin, space.id, cr.id, pageId);
    assert.equal(markdown.match(/Once\./g)?.length, 1, markdown);
  });
});

