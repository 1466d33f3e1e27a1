/**
 * What the app's screens need from the server, over HTTP and through the official client (whose
 * answers are checked against the official schema): `urls.app` naming the app's screens (pages
 * read inside a change request included), the sign-in options of an organization, and space
 * permissions that say truthfully what the caller may do (the app hides buttons by them).
 */
import assert from 'node:assert/strict';
import { inflateRawSync } from 'node:zlib';
import { after, before, describe, test } from 'node:test';
import { setPassword } from '../src/sign-in/service.ts';
import { Urls } from '../src/platform/urls.ts';
import { appPathOf, organizationOfAppPath } from '../src/platform/app-paths.ts';
import { selfSignedCertificate } from '../src/sso/keys.ts';
import {
  atLeast,
  type ChangeInput,
  editChangeRequest,
  mergeChanges,
  newCollection,
  newOrg,
  newSite,
  newSpace,
  openChangeRequest,
  orgWithPersonas,
  PERSONAS,
  personaName,
  statusOf,
} from './support/factories.ts';
import { startTestServer, type TestServer } from './support/server.ts';

let t: TestServer;
before(async () => {
  t = await startTestServer();
});
after(async () => {
  await t?.close();
});

const page = (title: string, extra: Record<string, unknown> = {}): ChangeInput => ({ operation: 'insert_page', title, document: { markdown: `${title} text.\n` }, ...extra });

/** Every document page of a tree with its path and `urls.app`, depth first. */
function flatten(pages: readonly object[]): { title: string; path: string; app: string }[] {
  return pages.flatMap((p) => {
    const { title, path, urls, pages: children } = p as { title: string; path?: string; urls?: { app: string }; pages?: object[] };
    return [...(urls && path !== undefined ? [{ title, path, app: urls.app }] : []), ...flatten(children ?? [])];
  });
}

describe('urls.app names the screen of the app', () => {
  test('organization, collection, space, site, change request, pages; pages read in a change request are inside it', async () => {
    const { admin, org } = await newOrg(t, 'Screens Inc');
    const app = `${t.url}/app`;
    assert.equal((await admin.api.orgs.getOrganizationById(org.id)).data.urls.app, `${app}/o/${org.id}`);
    const collection = await newCollection(admin, org.id, 'Guides');
    assert.equal(collection.urls.app, `${app}/c/${collection.id}`);
    const space = await newSpace(admin, org.id, 'Manual');
    assert.equal(space.urls.app, `${app}/s/${space.id}`);
    const site = await newSite(admin, org.id, { publish: false });
    assert.equal((await admin.api.orgs.getSiteById(org.id, site.id)).data.urls.app, `${app}/o/${org.id}/sites/${site.id}`);

    await mergeChanges(admin, space.id, [page('Guide', { ref: 'guide' }), page('Install', { into: 'guide' })]);
    const spacePage = (path: string) => `${app}/s/${space.id}/${path}`;
    const { data: current } = await admin.api.spaces.listPages(space.id);
    assert.deepEqual(flatten(current.pages).map((p) => [p.path, p.app]), [
      ['guide', spacePage('guide')],
      ['guide/install', spacePage('guide/install')],
    ]);
    const guideId = (current.pages[0] as { id: string }).id;
    assert.equal(flatten([(await admin.api.spaces.getPageByPath(space.id, 'guide/install')).data])[0]?.app, spacePage('guide/install'));

    const cr = await openChangeRequest(admin, space.id, 'More pages');
    const changes = `${app}/s/${space.id}/~/changes/${cr.number}`;
    assert.equal(cr.urls.app, changes);
    assert.equal((await admin.api.spaces.getChangeRequestById(space.id, cr.id)).data.urls.app, changes);
    await editChangeRequest(admin, space.id, cr.id, [page('Draft')]);
    const inChanges = (path: string) => `${changes}/${path}`;

    const { data: listed } = await admin.api.spaces.listPagesInChangeRequest(space.id, cr.id);
    assert.deepEqual(flatten(listed.pages).map((p) => [p.path, p.app]), [
      ['guide', inChanges('guide')],
      ['guide/install', inChanges('guide/install')],
      ['draft', inChanges('draft')],
    ]);
    const { data: revision } = await admin.api.spaces.getRevisionOfChangeRequestById(space.id, cr.id);
    assert.deepEqual(flatten(revision.pages).map((p) => p.app), [inChanges('guide'), inChanges('guide/install'), inChanges('draft')]);
    // One page, by id and by path: it and the pages below it.
    const { data: byId } = await admin.api.spaces.getPageInChangeRequestById(space.id, cr.id, guideId);
    assert.deepEqual(flatten([byId]).map((p) => p.app), [inChanges('guide'), inChanges('guide/install')]);
    const { data: byPath } = await admin.api.spaces.getPageInChangeRequestByPath(space.id, cr.id, 'guide/install');
    assert.equal(flatten([byPath])[0]?.app, inChanges('guide/install'));
    // The same page read in the space is the space's.
    assert.equal(flatten([(await admin.api.spaces.getPageById(space.id, guideId)).data])[0]?.app, spacePage('guide'));
    // By number too (the app's address has the number).
    assert.equal((await t.request('GET', `/v1/spaces/${space.id}/change-requests/${cr.number}/content/page/${guideId}`, { token: admin.token })).body.urls.app, inChanges('guide'));

    // A search hit is a page of the space's current content.
    const { data: hits } = await admin.api.spaces.searchSpaceContent(space.id, { query: 'install' });
    assert.equal(hits.items[0]?.urls.app, spacePage('guide/install'));
  });

  test('a page with an empty path is the screen of its space or change request, without a trailing slash', () => {
    const urls = new Urls({ publicUrl: 'https://docs.example.com', appUrl: 'https://docs.example.com' });
    assert.equal(urls.pageApp({ id: 'S1' }, ''), 'https://docs.example.com/app/s/S1');
    assert.equal(urls.pageApp({ id: 'S1', changeRequest: 4 }, ''), 'https://docs.example.com/app/s/S1/~/changes/4');
    assert.equal(urls.pageApp({ id: 'S1', changeRequest: 4 }, 'a/b'), 'https://docs.example.com/app/s/S1/~/changes/4/a/b');
  });
});

describe('sign-in options', () => {
  const options = (query: string) => t.request('GET', `/app/api/sign-in/options${query}`);

  async function orgWithProviders() {
    const { admin, org } = await newOrg(t, 'Single Sign-On Inc');
    const idp = await selfSignedCertificate('Options IdP');
    const { data: active } = await admin.api.orgs.createOrganizationSamlProvider(org.id, {
      label: 'Corporate login',
      entityID: 'https://idp.example.test/metadata',
      certificate: idp.certificate,
      ssoURL: 'https://idp.example.test/sso',
    });
    // Not configured yet: not offered.
    await admin.api.orgs.createOrganizationSamlProvider(org.id, { label: 'Half done' });
    return { org, active };
  }

  test('the providers of the organization named in next, with start URLs that come back to next; no session needed', async () => {
    const { org, active } = await orgWithProviders();
    const next = `/app/o/${org.id}/sites/abc?tab=settings`;
    const res = await options(`?next=${encodeURIComponent(next)}`);
    assert.equal(res.status, 200, JSON.stringify(res.body));
    assert.equal(res.headers.get('cache-control'), 'no-store');
    const startURL = `${active.service.startURL}?next=${encodeURIComponent(next)}`;
    assert.deepEqual(res.body, { sso: [{ label: 'Corporate login', startURL }] });

    // The start URL leads to the identity provider, next carried in the RelayState.
    const started = await fetch(startURL, { redirect: 'manual' });
    assert.equal(started.status, 302);
    const location = new URL(started.headers.get('location')!);
    assert.ok(location.href.startsWith('https://idp.example.test/sso?'), location.href);
    assert.ok(location.searchParams.get('RelayState')!.endsWith(`.${next}`));
    assert.match(inflateRawSync(Buffer.from(location.searchParams.get('SAMLRequest')!, 'base64')).toString('utf8'), /AuthnRequest/);

    // By organization (the start URLs then lead to the organization's screen).
    assert.deepEqual((await options(`?organization=${org.id}`)).body, { sso: [{ label: 'Corporate login', startURL: active.service.startURL }] });
    // A next that names no organization, with one given apart.
    const spaceNext = '/app/s/xyz/page';
    assert.deepEqual((await options(`?next=${encodeURIComponent(spaceNext)}&organization=${org.id}`)).body.sso[0].startURL, `${active.service.startURL}?next=${encodeURIComponent(spaceNext)}`);
  });

  test('nothing to tell: an unknown organization looks like one without providers; a next outside the app is ignored', async () => {
    const { org } = await orgWithProviders();
    const { org: plain } = await newOrg(t, 'Passwords Only Inc');
    for (const query of ['', '?next=%2Fapp%2Fo%2Fno-such-org', `?organization=${plain.id}`, `?next=${encodeURIComponent(`//evil.example/app/o/${org.id}`)}`, `?next=${encodeURIComponent(`/v1/orgs/${org.id}`)}`]) {
      const res = await options(query);
      assert.equal(res.status, 200, query);
      assert.deepEqual(res.body, { sso: [] }, query);
    }
    // A next outside the app is not passed on to the start URL.
    const res = await options(`?next=${encodeURIComponent('https://evil.example/')}&organization=${org.id}`);
    assert.ok(!res.body.sso[0].startURL.includes('next='), res.body.sso[0].startURL);
    assert.equal((await options(`?organization=${'x'.repeat(101)}`)).status, 400);
  });

  test('is in the API reference, tag app, public', async () => {
    const doc = (await t.request('GET', '/v1/openapi.json')).body;
    const op = doc.paths['/app/api/sign-in/options']?.get;
    assert.ok(op?.summary && op.description, 'documented');
    assert.deepEqual(op.tags, ['app']);
    assert.deepEqual(op.security, []);
    assert.deepEqual(op.parameters.map((p: { name: string }) => p.name).sort(), ['next', 'organization']);
  });

  test('app paths: what counts as a screen of the app', () => {
    assert.equal(appPathOf('/app'), '/app');
    assert.equal(appPathOf('/app/o/x?y=1#z'), '/app/o/x?y=1#z');
    assert.equal(appPathOf('/app/o/x/../y'), '/app/o/y');
    for (const bad of [undefined, 42, '', 'app/o/x', '//evil.example', '/\\evil.example', '/app\\o', '/application', '/app/../v1', '/app/api/session', '/app/assets/a.js', `/app/${'x'.repeat(2048)}`, '/app/o/x\n']) {
      assert.equal(appPathOf(bad), undefined, String(bad));
    }
    assert.equal(organizationOfAppPath('/app/o/ORG1/sites/s'), 'ORG1');
    assert.equal(organizationOfAppPath('/app/o/ORG1'), 'ORG1');
    assert.equal(organizationOfAppPath('/app/s/S1'), undefined);
  });
});

describe('space permissions are what the caller may do', () => {
  test('each role: view, comment, edit, review, merge and admin match what the API then allows', async () => {
    const { owner, org, people } = await orgWithPersonas(t);
    const space = await newSpace(owner, org.id, 'Truth');
    await mergeChanges(owner, space.id, [page('Base')]);
    const failures: string[] = [];
    for (const persona of PERSONAS) {
      const user = people.get(persona)!;
      const name = personaName(persona);
      const read = await statusOf(user.api.spaces.getSpaceById(space.id));
      if (!atLeast(persona === 'outsider' ? null : persona, 'read')) {
        // A guest without a grant, an outsider: no space to show at all.
        assert.equal(read, 404, name);
        continue;
      }
      const { permissions } = (await user.api.spaces.getSpaceById(space.id)).data;
      const forReview = await openChangeRequest(owner, space.id, `Review by ${name}`);
      const forMerge = await openChangeRequest(owner, space.id, `Merge by ${name}`);
      await editChangeRequest(owner, space.id, forMerge.id, [page(`Page of ${name}`)]);
      const ok = async (call: Promise<{ status: number }>) => (await statusOf(call)) < 300;
      const allowed = {
        view: read === 200,
        comment: await ok(user.api.spaces.postCommentInSpace(space.id, { body: { markdown: 'A remark' } as never })),
        edit: await ok(user.api.spaces.createChangeRequest(space.id, { subject: 'Mine' })),
        review: await ok(user.api.spaces.submitChangeRequestReview(space.id, forReview.id, { status: 'approved' as never })),
        merge: await ok(user.api.spaces.mergeChangeRequest(space.id, forMerge.id)),
        admin: await ok(user.api.spaces.updateSpaceById(space.id, { editMode: 'live' as never })),
      };
      for (const [what, may] of Object.entries(allowed)) {
        const says = permissions[what as keyof typeof permissions];
        if (says !== may) failures.push(`${name}: permissions.${what} is ${says}, but the call ${may ? 'succeeded' : 'was refused'}`);
      }
    }
    assert.deepEqual(failures, []);
  });

  test('through the app session cookie: a reader is told they cannot merge, edit or manage', async () => {
    const { owner, org, people } = await orgWithPersonas(t);
    const space = await newSpace(owner, org.id, 'Read only');
    const reader = people.get('read')!;
    await setPassword(t.server.services.db, reader.email, 'a reader password');
    const signedIn = await t.request('POST', '/app/api/sign-in', { body: { email: reader.email, password: 'a reader password' }, headers: { 'x-folio-csrf': '1' } });
    assert.equal(signedIn.status, 200);
    const cookie = /folio_session=[^;]+/.exec(signedIn.headers.get('set-cookie')!)![0];
    const res = await t.request('GET', `/v1/spaces/${space.id}`, { headers: { cookie } });
    assert.equal(res.status, 200);
    assert.deepEqual(
      { view: res.body.permissions.view, comment: res.body.permissions.comment, edit: res.body.permissions.edit, merge: res.body.permissions.merge, admin: res.body.permissions.admin },
      { view: true, comment: false, edit: false, merge: false, admin: false },
    );
  });
});
