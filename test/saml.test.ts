import assert from 'node:assert/strict';
import { createVerify, randomBytes } from 'node:crypto';
import { Writable } from 'node:stream';
import { inflateRawSync } from 'node:zlib';
import { after, before, describe, test } from 'node:test';
import { DOMParser, XMLSerializer, type Document, type Element } from '@xmldom/xmldom';
import { SignedXml } from 'xml-crypto';
import { selfSignedCertificate, type KeyAndCertificate } from '../src/sso/keys.ts';
import { addMember, newMember, newOrg } from './support/factories.ts';
import { expectStatus, startTestServer, type TestServer, type TestUser } from './support/server.ts';

/**
 * SAML single sign-on against a test identity provider that lives in this file: its keys and
 * certificate are made at test time, its responses are built here and signed with xml-crypto.
 * Every forged response of the gauntlet is refused, and the log says why (each test checks the
 * reason, so a response refused for an unrelated cause would fail the test).
 */

const logs: string[] = [];
const logStream = new Writable({
  write(chunk, _enc, done) {
    logs.push(...String(chunk).split('\n').filter(Boolean));
    done();
  },
});

let t: TestServer;
let idp: KeyAndCertificate;
let otherKey: KeyAndCertificate;
before(async () => {
  [t, idp, otherKey] = await Promise.all([
    startTestServer({ logLevel: 'info' }, { logStream }),
    selfSignedCertificate('Test IdP'),
    selfSignedCertificate('Someone else'),
  ]);
});
after(async () => {
  await t?.close();
});

const SAMLP = 'urn:oasis:names:tc:SAML:2.0:protocol';
const SAML = 'urn:oasis:names:tc:SAML:2.0:assertion';
const IDP_ENTITY = 'https://idp.example.test/metadata';
const IDP_SSO = 'https://idp.example.test/sso';

interface Provider {
  id: string;
  orgId: string;
  admin: TestUser;
  teamId: string;
  service: { acsURL: string; startURL: string; entityID: string };
}

async function newProvider(opts: { cert?: string; role?: 'read' | 'edit' | null } = {}): Promise<Provider> {
  const { admin, org } = await newOrg(t, 'SSO Inc');
  const { data: team } = await admin.api.orgs.createOrganizationTeam(org.id, { title: 'Newcomers' });
  const { data: provider } = await admin.api.orgs.createOrganizationSamlProvider(org.id, {
    label: 'Test IdP',
    entityID: IDP_ENTITY,
    certificate: opts.cert ?? idp.certificate,
    ssoURL: IDP_SSO,
    defaultTeam: team.id,
    defaultRole: (opts.role === undefined ? 'edit' : opts.role) as never,
  });
  assert.equal(provider.status, 'active');
  return { id: provider.id, orgId: org.id, admin, teamId: team.id, service: provider.service };
}

/** Opens the start URL as a browser would and returns the id of the AuthnRequest Folio sent (and the RelayState). */
async function startLogin(p: Provider, next?: string): Promise<{ requestId: string; location: URL; relayState: string }> {
  const res = await fetch(next === undefined ? p.service.startURL : `${p.service.startURL}?next=${encodeURIComponent(next)}`, { redirect: 'manual' });
  assert.equal(res.status, 302);
  const location = new URL(res.headers.get('location')!);
  const xml = inflateRawSync(Buffer.from(location.searchParams.get('SAMLRequest')!, 'base64')).toString('utf8');
  const requestId = /\bID="([^"]+)"/.exec(xml)![1]!;
  return { requestId, location, relayState: location.searchParams.get('RelayState') ?? '' };
}

interface ResponseOptions {
  requestId: string;
  nameId?: string;
  email?: string;
  issuer?: string;
  audience?: string;
  destination?: string | null;
  recipient?: string;
  notBefore?: Date;
  notOnOrAfter?: Date;
  assertionId?: string;
}

const iso = (d: Date) => d.toISOString().replace(/\.\d{3}Z$/, 'Z');

/** An unsigned Response with one Assertion, as an identity provider would write it. */
function responseXml(p: Provider, o: ResponseOptions): string {
  const now = new Date();
  const notBefore = o.notBefore ?? new Date(now.getTime() - 30_000);
  const notOnOrAfter = o.notOnOrAfter ?? new Date(now.getTime() + 5 * 60_000);
  const nameId = o.nameId ?? `${randomBytes(5).toString('hex')}@corp.example`;
  const destination = o.destination === undefined ? p.service.acsURL : o.destination;
  const assertionId = o.assertionId ?? `_a${randomBytes(16).toString('hex')}`;
  return (
    `<samlp:Response xmlns:samlp="${SAMLP}" xmlns:saml="${SAML}" ID="_r${randomBytes(16).toString('hex')}" Version="2.0" IssueInstant="${iso(now)}"` +
    `${destination !== null ? ` Destination="${destination}"` : ''} InResponseTo="${o.requestId}">` +
    `<saml:Issuer>${o.issuer ?? IDP_ENTITY}</saml:Issuer>` +
    `<samlp:Status><samlp:StatusCode Value="urn:oasis:names:tc:SAML:2.0:status:Success"/></samlp:Status>` +
    `<saml:Assertion ID="${assertionId}" Version="2.0" IssueInstant="${iso(now)}">` +
    `<saml:Issuer>${o.issuer ?? IDP_ENTITY}</saml:Issuer>` +
    `<saml:Subject><saml:NameID Format="urn:oasis:names:tc:SAML:1.1:nameid-format:emailAddress">${nameId}</saml:NameID>` +
    `<saml:SubjectConfirmation Method="urn:oasis:names:tc:SAML:2.0:cm:bearer">` +
    `<saml:SubjectConfirmationData InResponseTo="${o.requestId}" NotOnOrAfter="${iso(notOnOrAfter)}" Recipient="${o.recipient ?? p.service.acsURL}"/>` +
    `</saml:SubjectConfirmation></saml:Subject>` +
    `<saml:Conditions NotBefore="${iso(notBefore)}" NotOnOrAfter="${iso(notOnOrAfter)}">` +
    `<saml:AudienceRestriction><saml:Audience>${o.audience ?? p.service.entityID}</saml:Audience></saml:AudienceRestriction></saml:Conditions>` +
    `<saml:AuthnStatement AuthnInstant="${iso(now)}" SessionIndex="_s1"><saml:AuthnContext><saml:AuthnContextClassRef>urn:oasis:names:tc:SAML:2.0:ac:classes:PasswordProtectedTransport</saml:AuthnContextClassRef></saml:AuthnContext></saml:AuthnStatement>` +
    `<saml:AttributeStatement><saml:Attribute Name="email"><saml:AttributeValue>${o.email ?? nameId}</saml:AttributeValue></saml:Attribute>` +
    `<saml:Attribute Name="displayName"><saml:AttributeValue>Sam L. User</saml:AttributeValue></saml:Attribute></saml:AttributeStatement>` +
    `</saml:Assertion></samlp:Response>`
  );
}

/** Signs the Assertion (or the whole Response) with xml-crypto, the signature placed where the schema wants it. */
function sign(xml: string, key: KeyAndCertificate, what: 'Assertion' | 'Response' = 'Assertion'): string {
  const sig = new SignedXml({
    privateKey: key.privateKey,
    publicCert: key.certificate,
    signatureAlgorithm: 'http://www.w3.org/2001/04/xmldsig-more#rsa-sha256',
    canonicalizationAlgorithm: 'http://www.w3.org/2001/10/xml-exc-c14n#',
  });
  sig.addReference({
    xpath: `/*[local-name(.)='Response']${what === 'Assertion' ? "/*[local-name(.)='Assertion']" : ''}`,
    transforms: ['http://www.w3.org/2000/09/xmldsig#enveloped-signature', 'http://www.w3.org/2001/10/xml-exc-c14n#'],
    digestAlgorithm: 'http://www.w3.org/2001/04/xmlenc#sha256',
  });
  const issuer = what === 'Assertion' ? "/*[local-name(.)='Response']/*[local-name(.)='Assertion']/*[local-name(.)='Issuer']" : "/*[local-name(.)='Response']/*[local-name(.)='Issuer']";
  sig.computeSignature(xml, { location: { reference: issuer, action: 'after' } });
  return sig.getSignedXml();
}

async function post(
  p: Provider,
  xml: string,
  relayState = '',
): Promise<{ status: number; cookie: string | null; setCookies: string[]; text: string; location: string | null }> {
  const res = await fetch(p.service.acsURL, {
    method: 'POST',
    redirect: 'manual',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ SAMLResponse: Buffer.from(xml).toString('base64'), RelayState: relayState }).toString(),
  });
  return { status: res.status, cookie: res.headers.get('set-cookie'), setCookies: res.headers.getSetCookie(), text: await res.text(), location: res.headers.get('location') };
}

/** Posts a forged response and checks it is refused with an HTML page and the expected logged reason. */
async function expectRefused(p: Provider, xml: string, reason: RegExp): Promise<void> {
  const before = logs.length;
  const res = await post(p, xml);
  assert.ok(res.status >= 400 && res.status < 500, `refused with a 4xx, got ${res.status}`);
  assert.equal(res.cookie, null, 'no session cookie');
  assert.match(res.text, /^<!doctype html>/);
  assert.match(res.text, /Sign-in failed/);
  assert.doesNotMatch(res.text, /\bat .+\.(ts|js):\d+/, 'no stack trace');
  const refusals = logs.slice(before).map((l) => JSON.parse(l)).filter((l) => l.msg === 'SAML sign-in refused');
  assert.equal(refusals.length, 1, 'one refusal logged');
  assert.match(refusals[0].reason, reason);
  assert.doesNotMatch(JSON.stringify(refusals[0]), /SAMLResponse|PRIVATE KEY|folio_/);
}

async function sessionPage(cookie: string) {
  const res = await fetch(`${t.url}/sso/session`, { headers: { cookie } });
  return { status: res.status, text: await res.text() };
}

/** The `Set-Cookie` of the cookie `name` among those an answer set. */
function setCookieNamed(setCookies: string[], name: string): string {
  const found = setCookies.find((c) => c.startsWith(`${name}=`));
  assert.ok(found, `${name} set (got ${setCookies.join(' | ')})`);
  return found;
}

function cookieOf(setCookie: string): string {
  return setCookie.split(';')[0]!;
}

/**
 * Logs in through the provider and returns the session cookies (of the /sso/session page and of
 * the app) and an API token made from the session.
 */
async function login(p: Provider, nameId?: string) {
  const { requestId } = await startLogin(p);
  const res = await post(p, sign(responseXml(p, { requestId, ...(nameId ? { nameId } : {}) }), idp));
  assert.equal(res.status, 303, res.text);
  // Without a `next`, the app opens the organization.
  assert.equal(res.location, `/app/o/${p.orgId}`);
  const setCookie = setCookieNamed(res.setCookies, 'folio_sso_session');
  const cookie = cookieOf(setCookie);
  const appCookie = cookieOf(setCookieNamed(res.setCookies, 'folio_session'));
  const page = await sessionPage(cookie);
  assert.equal(page.status, 200);
  const userId = /data-user="([^"]+)"/.exec(page.text)![1]!;
  const csrf = /name="csrf" value="([^"]+)"/.exec(page.text)![1]!;
  const tokenRes = await fetch(`${t.url}/sso/token`, {
    method: 'POST',
    headers: { cookie, 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ csrf }).toString(),
  });
  assert.equal(tokenRes.status, 201);
  const token = /<pre id="token">([^<]+)<\/pre>/.exec(await tokenRes.text())![1]!;
  return { cookie, appCookie, userId, token, api: t.client(token), setCookie, setCookies: res.setCookies, page: page.text };
}

describe('SAML providers', () => {
  test('create, get, list, update and delete through the official client; pending until complete', async () => {
    const { admin, org } = await newOrg(t, 'Providers Inc');
    const { data: created } = await admin.api.orgs.createOrganizationSamlProvider(org.id, { label: 'Okta' });
    assert.equal(created.status, 'pending');
    assert.equal(created.label, 'Okta');
    assert.equal(created.defaultRole, 'read');
    assert.match(created.service.acsURL, new RegExp(`/sso/saml/${created.id}/acs$`));
    assert.match(created.service.startURL, new RegExp(`/sso/saml/${created.id}/start$`));
    assert.match(created.service.entityID, new RegExp(`/sso/saml/${created.id}/metadata$`));
    // A pending provider is not offered on the login page.
    assert.deepEqual((await admin.api.orgs.listSsoProviderLoginsInOrganization(org.id)).data.items, []);

    const bare = idp.certificate.replace(/-----[A-Z ]+-----|\s/g, '');
    const { data: updated } = await admin.api.orgs.updateOrganizationSamlProvider(org.id, created.id, {
      entityID: IDP_ENTITY,
      certificate: bare,
      ssoURL: IDP_SSO,
      defaultRole: null,
    });
    assert.equal(updated.status, 'active');
    assert.equal(updated.defaultRole, null);
    assert.match(updated.certificate, /^-----BEGIN CERTIFICATE-----\n/);
    assert.equal(updated.certificate.replace(/-----[A-Z ]+-----|\s/g, ''), bare);

    const { data: got } = await admin.api.orgs.getOrganizationSamlProviderById(org.id, created.id);
    assert.deepEqual(got, updated);
    const { data: list } = await admin.api.orgs.listSamlProvidersInOrganizationById(org.id);
    assert.deepEqual(list.items.map((i) => i.id), [created.id]);

    // The login page listing needs no token and shows no authentication details.
    const logins = await t.request('GET', `/v1/orgs/${org.id}/sso`);
    assert.equal(logins.status, 200);
    assert.deepEqual(logins.body, { items: [{ id: created.id, label: 'Okta', startURL: created.service.startURL }] });

    await admin.api.orgs.deleteOrganizationSamlProvider(org.id, created.id);
    await expectStatus(admin.api.orgs.getOrganizationSamlProviderById(org.id, created.id), 404);
    // Deleting again is not an error.
    await admin.api.orgs.deleteOrganizationSamlProvider(org.id, created.id);
  });

  test('certificates that do not parse, have expired or are keys get a clear 400', async () => {
    const { admin, org } = await newOrg(t, 'Certs Inc');
    const expired = await selfSignedCertificate('Old IdP', { notBefore: new Date(Date.now() - 10 * 86_400_000), notAfter: new Date(Date.now() - 86_400_000) });
    const cases: [string, RegExp][] = [
      ['not a certificate!', /certificate: not a PEM certificate nor base64/],
      ['AAAA', /certificate: does not parse/],
      [expired.certificate, /certificate: expired on/],
      [idp.privateKey, /not another kind of PEM block/],
    ];
    for (const [certificate, message] of cases) {
      const res = await t.request('POST', `/v1/orgs/${org.id}/saml`, { token: admin.token, body: { label: 'Bad', certificate } });
      assert.equal(res.status, 400);
      assert.match(res.body.error.message, message);
    }
  });

  test('defaultTeam must be a team of the same organization; only admins manage providers', async () => {
    const a = await newOrg(t, 'Org A');
    const b = await newOrg(t, 'Org B');
    const { data: teamB } = await b.admin.api.orgs.createOrganizationTeam(b.org.id, { title: 'B team' });
    const res = await t.request('POST', `/v1/orgs/${a.org.id}/saml`, { token: a.admin.token, body: { label: 'X', defaultTeam: teamB.id } });
    assert.equal(res.status, 400);
    assert.match(res.body.error.message, /defaultTeam/);
    const editor = await newMember(t, a.org.id, 'edit');
    await expectStatus(editor.api.orgs.createOrganizationSamlProvider(a.org.id, { label: 'X' }), 403);
    await expectStatus(editor.api.orgs.listSamlProvidersInOrganizationById(a.org.id), 403);
    await expectStatus(b.admin.api.orgs.listSamlProvidersInOrganizationById(a.org.id), 404);
  });

  test('SP metadata XML is served at the entity id URL with the ACS and the signing certificate', async () => {
    const p = await newProvider();
    const res = await fetch(p.service.entityID);
    assert.equal(res.status, 200);
    assert.match(res.headers.get('content-type')!, /samlmetadata\+xml/);
    const xml = await res.text();
    assert.ok(xml.includes(`entityID="${p.service.entityID}"`));
    assert.ok(xml.includes(`Location="${p.service.acsURL}"`));
    assert.match(xml, /HTTP-POST/);
    assert.match(xml, /<ds:X509Certificate>|<X509Certificate>/);
  });
});

describe('SAML sign-in', () => {
  test('startURL redirects to the IdP with an AuthnRequest signed by the key of the SP metadata', async () => {
    const p = await newProvider();
    const { location, requestId } = await startLogin(p);
    assert.equal(`${location.origin}${location.pathname}`, IDP_SSO);
    assert.ok(requestId);
    assert.equal(location.searchParams.get('SigAlg'), 'http://www.w3.org/2001/04/xmldsig-more#rsa-sha256');
    const metadata = await (await fetch(p.service.entityID)).text();
    const certB64 = /X509Certificate>([^<]+)</.exec(metadata)![1]!.replace(/\s/g, '');
    const pem = `-----BEGIN CERTIFICATE-----\n${certB64.match(/.{1,64}/g)!.join('\n')}\n-----END CERTIFICATE-----\n`;
    // The signed octets are the raw query parameters in order (SAML bindings §3.4.4.1).
    const raw = location.search.slice(1).split('&');
    const signed = raw.filter((kv) => !kv.startsWith('Signature=')).join('&');
    const signature = Buffer.from(location.searchParams.get('Signature')!, 'base64');
    assert.ok(createVerify('RSA-SHA256').update(signed).verify(pem, signature));
    assert.ok(!createVerify('RSA-SHA256').update(signed + 'x').verify(pem, signature));
  });

  test('a new user signs in end to end: member with the default role, in the default team, sso, with a session', async () => {
    const p = await newProvider({ role: 'edit' });
    const email = `new.${randomBytes(4).toString('hex')}@corp.example`;
    const s = await login(p, email);
    assert.match(s.setCookie, /HttpOnly/);
    assert.match(s.setCookie, /SameSite=Lax/);
    assert.ok(s.page.includes(email));
    // The API token made from the session works with the official client.
    const { data: me } = await s.api.user.getAuthenticatedUser();
    assert.equal(me.id, s.userId);
    const { data: member } = await p.admin.api.orgs.getMemberInOrganizationById(p.orgId, s.userId);
    assert.equal(member.role, 'edit');
    assert.equal(member.sso, true);
    assert.equal(member.user.email, email);
    assert.equal(member.user.displayName, 'Sam L. User');
    const { data: teams } = await p.admin.api.orgs.listTeamsForOrganizationMember(p.orgId, s.userId);
    assert.deepEqual(teams.items.map((i) => i.team.id), [p.teamId]);
    // Signing in again is the same user, not a new one.
    const again = await login(p, email);
    assert.equal(again.userId, s.userId);
    // Signing out ends the session.
    const csrf = /name="csrf" value="([^"]+)"/.exec(s.page)![1]!;
    const out = await fetch(`${t.url}/sso/logout`, { method: 'POST', headers: { cookie: s.cookie, 'content-type': 'application/x-www-form-urlencoded' }, body: `csrf=${csrf}` });
    assert.equal(out.status, 200);
    assert.equal((await sessionPage(s.cookie)).status, 401);
  });

  test('a response signed as a whole (not its assertion) is accepted too', async () => {
    const p = await newProvider();
    const { requestId } = await startLogin(p);
    const res = await post(p, sign(responseXml(p, { requestId }), idp, 'Response'));
    assert.equal(res.status, 303);
    assert.match(setCookieNamed(res.setCookies, 'folio_sso_session'), /^folio_sso_session=folio_/);
  });

  test('an existing member of only this organization signs in to their account, keeps their role, becomes SSO', async () => {
    const p = await newProvider({ role: 'read' });
    const reviewer = await newMember(t, p.orgId, 'review');
    const { data: before } = await p.admin.api.orgs.getMemberInOrganizationById(p.orgId, reviewer.id);
    assert.equal(before.sso, false);
    const s = await login(p, reviewer.email);
    assert.equal(s.userId, reviewer.id);
    const { data: member } = await p.admin.api.orgs.getMemberInOrganizationById(p.orgId, reviewer.id);
    assert.equal(member.role, 'review');
    assert.equal(member.sso, true);
  });

  test('a token request without the form token of the session is refused', async () => {
    const p = await newProvider();
    const s = await login(p);
    const res = await fetch(`${t.url}/sso/token`, { method: 'POST', headers: { cookie: s.cookie, 'content-type': 'application/x-www-form-urlencoded' }, body: 'csrf=nope' });
    assert.equal(res.status, 403);
  });

  test('an existing account used in another organization is not taken over by an SSO sign-in', async () => {
    const p = await newProvider();
    const other = await newOrg(t, 'Elsewhere');
    await expectRefused(p, sign(responseXml(p, { requestId: (await startLogin(p)).requestId, nameId: other.admin.email }), idp), /exists outside this organization/);
  });
});

describe('signing in to the app through SSO', () => {
  const appGet = (path: string, cookie: string) => t.request('GET', path, { headers: { cookie } });

  test('the ACS also opens an app session (folio_session, Path=/) that works on /app/api and /v1, and /sso/session still works', async () => {
    const p = await newProvider();
    const s = await login(p);
    const app = setCookieNamed(s.setCookies, 'folio_session');
    for (const attribute of ['Path=/', 'HttpOnly', 'SameSite=Lax']) assert.ok(app.split('; ').includes(attribute), `${attribute} in ${app}`);
    const maxAge = Number(/Max-Age=(\d+)/.exec(app)![1]);
    const ttl = t.server.services.config.ssoSessionTtlMs / 1000;
    assert.ok(maxAge > ttl - 60 && maxAge <= ttl, `Max-Age ${maxAge} is the SSO session's (${ttl} s)`);
    assert.ok(s.setCookie.split('; ').includes('Path=/sso'), 'the /sso/session cookie keeps its path');
    const session = await appGet('/app/api/session', s.appCookie);
    assert.equal(session.status, 200, JSON.stringify(session.body));
    assert.equal(session.body.user.id, s.userId);
    // The app learns which organization's identity provider to send the person back to.
    assert.equal(session.body.ssoOrganization, p.orgId);
    assert.equal((await appGet('/v1/user', s.appCookie)).body.id, s.userId);
    assert.equal((await appGet(`/v1/orgs/${p.orgId}`, s.appCookie)).status, 200);
    // Writes through the cookie follow the CSRF rule of every session.
    const { data: space } = await p.admin.api.orgs.createSpace(p.orgId, { title: 'Handbook' });
    const cr = `/v1/spaces/${space.id}/change-requests`;
    assert.equal((await t.request('POST', cr, { headers: { cookie: s.appCookie }, body: { subject: 'x' } })).status, 403);
    assert.equal((await t.request('POST', cr, { headers: { cookie: s.appCookie, 'x-folio-csrf': '1' }, body: { subject: 'x' } })).status, 201);
    // Signing out of the app ends the one session: the /sso/session page is signed out too.
    assert.equal((await t.request('POST', '/app/api/sign-out', { headers: { cookie: s.appCookie, 'x-folio-csrf': '1' } })).status, 204);
    assert.equal((await appGet('/app/api/session', s.appCookie)).status, 401);
    assert.equal((await sessionPage(s.cookie)).status, 401);
  });

  test('start?next=/app/... comes back to that screen; the RelayState cannot be forged or moved to another sign-in', async () => {
    const p = await newProvider();
    const next = `/app/s/abc123/getting-started/install?tab=mac#step-2`;
    const { requestId, relayState } = await startLogin(p, next);
    assert.ok(relayState.endsWith(`.${next}`), relayState);
    const ok = await post(p, sign(responseXml(p, { requestId }), idp), relayState);
    assert.equal(ok.status, 303, ok.text);
    assert.equal(ok.location, next);

    // The path changed after signing: the default screen instead.
    const second = await startLogin(p, '/app/s/abc123');
    const forged = `${second.relayState.slice(0, second.relayState.indexOf('.'))}.${'/app/o/someone-else'}`;
    assert.equal((await post(p, sign(responseXml(p, { requestId: second.requestId }), idp), forged)).location, `/app/o/${p.orgId}`);
    // A genuine RelayState of another sign-in: ignored too.
    const third = await startLogin(p);
    assert.equal((await post(p, sign(responseXml(p, { requestId: third.requestId }), idp), relayState)).location, `/app/o/${p.orgId}`);
  });

  test('a next that is not a screen of this app is dropped at the start', async () => {
    const p = await newProvider();
    for (const next of ['//evil.example/app', 'https://evil.example/app/o/x', '/v1/user', '/application', '/app/api/session', '/app/assets/x.js', '/app\\..\\v1', '/app/../v1/user', 'app/o/x']) {
      const { relayState } = await startLogin(p, next);
      assert.equal(relayState, '', `${next} dropped`);
    }
    // A path that normalizes into the app is kept, normalized.
    assert.ok((await startLogin(p, '/app/o/x/../y')).relayState.endsWith('./app/o/y'));
  });

  test('the SSO session is scoped: it reaches its organization when SSO is enforced, not another enforcing one', async () => {
    const p = await newProvider({ role: 'read' });
    const s = await login(p);
    await p.admin.api.orgs.updateOrganizationById(p.orgId, { sso: true });
    assert.equal((await appGet(`/v1/orgs/${p.orgId}`, s.appCookie)).status, 200);
    // Another organization that enforces SSO and counts this person as an SSO member.
    const other = await newOrg(t, 'Other SSO Inc');
    const me = (await appGet('/v1/user', s.appCookie)).body;
    await addMember(t, other.org.id, { id: me.id, email: me.email, token: s.token, api: s.api }, 'read');
    await other.admin.api.orgs.setUserAsSsoMemberForOrganization(other.org.id, me.id);
    await other.admin.api.orgs.updateOrganizationById(other.org.id, { sso: true });
    const refused = await appGet(`/v1/orgs/${other.org.id}`, s.appCookie);
    assert.equal(refused.status, 403);
    assert.match(refused.body.error.message, /single sign-on/);
    assert.equal((await appGet(`/v1/orgs/${p.orgId}`, s.appCookie)).status, 200);
  });
});

describe('SSO enforcement', () => {
  test('SSO members reach an enforcing organization only with an SSO-obtained credential; admins keep theirs', async () => {
    const p = await newProvider();
    const s = await login(p);
    // Make the SSO user an ordinary token, as the CLI would.
    const { createApiToken } = await import('../src/platform/auth.ts');
    const plain = t.client(await createApiToken(t.server.services.db, s.userId));
    const { data: space } = await p.admin.api.orgs.createSpace(p.orgId, { title: 'Handbook' });
    // Not enforced yet: any token works.
    await plain.orgs.getOrganizationById(p.orgId);
    await p.admin.api.orgs.updateOrganizationById(p.orgId, { sso: true });
    await expectStatus(plain.orgs.getOrganizationById(p.orgId), 403);
    await expectStatus(plain.spaces.getSpaceById(space.id), 403);
    await expectStatus(plain.orgs.listMembersInOrganizationById(p.orgId), 403);
    // The SSO-obtained token works.
    await s.api.orgs.getOrganizationById(p.orgId);
    await s.api.spaces.getSpaceById(space.id);
    // A token created with the SSO token carries the organization too.
    const made = await t.request('POST', '/v1/user/tokens', { token: s.token, body: { name: 'ci' } });
    assert.equal(made.status, 201);
    await t.client(made.body.token).orgs.getOrganizationById(p.orgId);
    // Admins keep their ordinary token (the recovery path).
    await p.admin.api.orgs.getOrganizationById(p.orgId);
    // A member not marked SSO is not affected; marking them makes it apply.
    const editor = await newMember(t, p.orgId, 'edit');
    await editor.api.orgs.getOrganizationById(p.orgId);
    const { data: marked } = await p.admin.api.orgs.setUserAsSsoMemberForOrganization(p.orgId, editor.id);
    assert.equal(marked.sso, true);
    await expectStatus(editor.api.orgs.getOrganizationById(p.orgId), 403);
    // Turning enforcement off is the admins' recovery path: ordinary tokens work again.
    await p.admin.api.orgs.updateOrganizationById(p.orgId, { sso: false });
    await plain.orgs.getOrganizationById(p.orgId);
    await editor.api.orgs.getOrganizationById(p.orgId);
    // The login page listing stays reachable.
    assert.equal((await t.request('GET', `/v1/orgs/${p.orgId}/sso`)).status, 200);
  });
});

// ---- The gauntlet: forged responses, each refused for its own reason -------------------------

function dom(xml: string): Document {
  return new DOMParser().parseFromString(xml, 'text/xml');
}
const text = (d: Document | Element) => new XMLSerializer().serializeToString(d);
function first(d: Document | Element, name: string): Element {
  return (d as Element).getElementsByTagNameNS('*', name)[0] as Element;
}

describe('forged responses are refused', () => {
  let p: Provider;
  before(async () => {
    p = await newProvider();
  });
  const fresh = async (o: Partial<ResponseOptions> = {}) => responseXml(p, { requestId: (await startLogin(p)).requestId, ...o });

  test('control: the same builder, correctly signed, is accepted', async () => {
    const res = await post(p, sign(await fresh(), idp));
    assert.equal(res.status, 303);
  });

  test('unsigned', async () => {
    await expectRefused(p, await fresh(), /validation failed: Invalid signature/);
  });

  test('signed by another key', async () => {
    await expectRefused(p, sign(await fresh(), otherKey), /validation failed: Invalid signature/);
  });

  test('signed, then altered (NameID changed after signing)', async () => {
    const xml = sign(await fresh({ nameId: 'mallory@corp.example' }), idp).replace('mallory@corp.example</saml:NameID>', 'victim@corp.example</saml:NameID>');
    await expectRefused(p, xml, /validation failed: Invalid signature/);
  });

  test('XSW1: evil response wraps the signed response inside its signature', async () => {
    const signed = dom(sign(await fresh({ nameId: 'mallory@corp.example' }), idp, 'Response'));
    const original = signed.documentElement!.cloneNode(true) as Element;
    const evil = signed.documentElement!;
    evil.setAttribute('ID', '_evil');
    first(evil, 'NameID').textContent = 'victim@corp.example';
    const signature = Array.from(evil.childNodes).find((n) => (n as Element).localName === 'Signature') as Element;
    const obj = signed.createElementNS('http://www.w3.org/2000/09/xmldsig#', 'ds:Object');
    const origSig = Array.from(original.childNodes).find((n) => (n as Element).localName === 'Signature')!;
    original.removeChild(origSig);
    obj.appendChild(original);
    signature.appendChild(obj);
    await expectRefused(p, text(signed), /validation failed: Invalid signature/);
  });

  test('XSW2: evil response with the signed response as a detached sibling before the signature', async () => {
    const signed = dom(sign(await fresh({ nameId: 'mallory@corp.example' }), idp, 'Response'));
    const evil = signed.documentElement!;
    const original = evil.cloneNode(true) as Element;
    const origSig = Array.from(original.childNodes).find((n) => (n as Element).localName === 'Signature')!;
    original.removeChild(origSig);
    evil.setAttribute('ID', '_evil');
    first(evil, 'NameID').textContent = 'victim@corp.example';
    const signature = Array.from(evil.childNodes).find((n) => (n as Element).localName === 'Signature') as Element;
    evil.insertBefore(original, signature);
    await expectRefused(p, text(signed), /validation failed: Invalid signature/);
  });

  test('XSW3: evil assertion inserted before the signed assertion', async () => {
    const signed = dom(sign(await fresh({ nameId: 'mallory@corp.example' }), idp));
    const assertion = first(signed, 'Assertion');
    const evil = assertion.cloneNode(true) as Element;
    evil.setAttribute('ID', '_evil');
    evil.removeChild(first(evil, 'Signature'));
    first(evil, 'NameID').textContent = 'victim@corp.example';
    signed.documentElement!.insertBefore(evil, assertion);
    await expectRefused(p, text(signed), /validation failed: Invalid signature: multiple assertions/);
  });

  test('XSW4: evil assertion wraps the signed assertion', async () => {
    const signed = dom(sign(await fresh({ nameId: 'mallory@corp.example' }), idp));
    const assertion = first(signed, 'Assertion');
    const evil = assertion.cloneNode(true) as Element;
    evil.setAttribute('ID', '_evil');
    evil.removeChild(first(evil, 'Signature'));
    first(evil, 'NameID').textContent = 'victim@corp.example';
    signed.documentElement!.replaceChild(evil, assertion);
    evil.appendChild(assertion);
    await expectRefused(p, text(signed), /validation failed: Invalid signature/);
  });

  test('XSW5: evil assertion carries the signature, the signed assertion appended unchanged', async () => {
    const signed = dom(sign(await fresh({ nameId: 'mallory@corp.example' }), idp));
    const assertion = first(signed, 'Assertion');
    const copy = assertion.cloneNode(true) as Element;
    copy.removeChild(first(copy, 'Signature'));
    first(assertion, 'NameID').textContent = 'victim@corp.example';
    assertion.setAttribute('ID', '_evil');
    signed.documentElement!.appendChild(copy);
    await expectRefused(p, text(signed), /validation failed: Invalid signature/);
  });

  test('XSW6: evil assertion carries the signature, the signed assertion inside that signature', async () => {
    const signed = dom(sign(await fresh({ nameId: 'mallory@corp.example' }), idp));
    const assertion = first(signed, 'Assertion');
    const copy = assertion.cloneNode(true) as Element;
    copy.removeChild(first(copy, 'Signature'));
    first(assertion, 'NameID').textContent = 'victim@corp.example';
    assertion.setAttribute('ID', '_evil');
    const obj = signed.createElementNS('http://www.w3.org/2000/09/xmldsig#', 'ds:Object');
    obj.appendChild(copy);
    first(assertion, 'Signature').appendChild(obj);
    await expectRefused(p, text(signed), /validation failed: Invalid signature/);
  });

  test('XSW7: signed assertion hidden in Extensions, evil assertion in its place', async () => {
    const signed = dom(sign(await fresh({ nameId: 'mallory@corp.example' }), idp));
    const assertion = first(signed, 'Assertion');
    const evil = assertion.cloneNode(true) as Element;
    evil.removeChild(first(evil, 'Signature'));
    first(evil, 'NameID').textContent = 'victim@corp.example';
    const ext = signed.createElementNS(SAMLP, 'samlp:Extensions');
    signed.documentElement!.replaceChild(evil, assertion);
    ext.appendChild(assertion);
    signed.documentElement!.insertBefore(ext, first(signed, 'Status'));
    await expectRefused(p, text(signed), /validation failed: Invalid signature/);
  });

  test('XSW8: evil assertion keeps the signature, the signed assertion inside the signature Object', async () => {
    const signed = dom(sign(await fresh({ nameId: 'mallory@corp.example' }), idp));
    const assertion = first(signed, 'Assertion');
    const original = assertion.cloneNode(true) as Element;
    original.removeChild(first(original, 'Signature'));
    first(assertion, 'NameID').textContent = 'victim@corp.example';
    const obj = signed.createElementNS('http://www.w3.org/2000/09/xmldsig#', 'ds:Object');
    obj.appendChild(original);
    first(assertion, 'Signature').appendChild(obj);
    await expectRefused(p, text(signed), /validation failed: Invalid signature/);
  });

  test('comment injected in NameID after signing', async () => {
    const xml = sign(await fresh({ nameId: 'victim@corp.example.evil.test', email: 'x@corp.example.evil.test' }), idp).replace(
      'victim@corp.example.evil.test</saml:NameID>',
      'victim@corp.example<!---->.evil.test</saml:NameID>',
    );
    await expectRefused(p, xml, /response contains an XML comment/);
  });

  test('expired', async () => {
    const past = new Date(Date.now() - 10 * 60_000);
    await expectRefused(p, sign(await fresh({ notBefore: new Date(past.getTime() - 60_000), notOnOrAfter: past }), idp), /validation failed: .*(expired|No valid subject confirmation)/i);
  });

  test('not yet valid', async () => {
    const future = new Date(Date.now() + 10 * 60_000);
    await expectRefused(p, sign(await fresh({ notBefore: future, notOnOrAfter: new Date(future.getTime() + 60_000) }), idp), /validation failed: .*(not yet valid|No valid subject confirmation)/i);
  });

  test('wrong audience', async () => {
    await expectRefused(p, sign(await fresh({ audience: 'https://other-sp.example/metadata' }), idp), /validation failed: .*audience/i);
  });

  test('wrong destination', async () => {
    await expectRefused(p, sign(await fresh({ destination: 'https://other-sp.example/acs' }), idp), /Destination .* is not this provider's ACS URL/);
  });

  test('wrong recipient', async () => {
    await expectRefused(p, sign(await fresh({ recipient: 'https://other-sp.example/acs' }), idp), /Recipient .* is not this provider's ACS URL/);
  });

  test('wrong issuer', async () => {
    await expectRefused(p, sign(await fresh({ issuer: 'https://evil-idp.example/metadata' }), idp), /Issuer .* is not the provider's entityID/);
  });

  test('replayed assertion', async () => {
    const xml = sign(await fresh(), idp);
    assert.equal((await post(p, xml)).status, 303);
    await expectRefused(p, xml, /validation failed: InResponseTo is not valid|already answered/);
  });

  test('replayed assertion id in the answer to another request', async () => {
    const assertionId = `_a${randomBytes(16).toString('hex')}`;
    assert.equal((await post(p, sign(await fresh({ assertionId }), idp))).status, 303);
    await expectRefused(p, sign(await fresh({ assertionId }), idp), /assertion .* replayed/);
  });

  test('InResponseTo of a request Folio never sent, and unsolicited responses', async () => {
    await expectRefused(p, sign(responseXml(p, { requestId: '_never_sent' }), idp), /validation failed: InResponseTo is not valid/);
    const unsolicited = sign(responseXml(p, { requestId: 'x' }).replace(/ InResponseTo="x"/g, ''), idp);
    await expectRefused(p, unsolicited, /validation failed: InResponseTo is missing/);
  });

  test('InResponseTo of another provider\'s request', async () => {
    const other = await newProvider();
    const { requestId } = await startLogin(other);
    await expectRefused(p, sign(responseXml(p, { requestId }), idp), /validation failed: InResponseTo is not valid/);
  });

  test('DOCTYPE with entity expansion', async () => {
    const xml = sign(await fresh(), idp);
    const bomb = `<?xml version="1.0"?><!DOCTYPE r [<!ENTITY a "aaaaaaaaaa"><!ENTITY b "&a;&a;&a;&a;&a;&a;&a;&a;&a;&a;">]>${xml}`;
    await expectRefused(p, bomb, /DTD/);
  });

  test('an assertion for another organization\'s provider', async () => {
    // Org B's IdP (its own key) answers org B's request; the response is posted to org A's ACS.
    const otherIdp = await selfSignedCertificate('Org B IdP');
    const b = await newProvider({ cert: otherIdp.certificate });
    const { requestId } = await startLogin(b);
    const forB = sign(responseXml(b, { requestId }), otherIdp);
    await expectRefused(p, forB, /Destination .* is not this provider's ACS URL|validation failed/);
    // Even re-addressed to A, B's assertion fails A's pinned certificate and audience.
    const readdressed = sign(responseXml(b, { requestId, destination: p.service.acsURL, recipient: p.service.acsURL }), otherIdp);
    await expectRefused(p, readdressed, /validation failed/);
    // And with the same IdP key for both organizations, A refuses B's audience and request.
    const shared = await newProvider();
    const { requestId: sharedReq } = await startLogin(shared);
    await expectRefused(p, sign(responseXml(shared, { requestId: sharedReq, destination: p.service.acsURL, recipient: p.service.acsURL }), idp), /validation failed/);
  });

  test('a pinned certificate that has expired since it was set stops sign-ins', async () => {
    const q = await newProvider();
    const { requestId } = await startLogin(q);
    const expired = await selfSignedCertificate('Old IdP', { notBefore: new Date(Date.now() - 10 * 86_400_000), notAfter: new Date(Date.now() - 86_400_000) });
    // Set behind the API's back: the API refuses expired certificates.
    await t.server.services.db.updateTable('saml_providers').set({ certificate: expired.certificate }).where('id', '=', q.id).execute();
    await expectRefused(q, sign(responseXml(q, { requestId }), expired), /provider certificate expired/);
    const start = await fetch(q.service.startURL, { redirect: 'manual' });
    assert.equal(start.status, 400);
    assert.match(await start.text(), /certificate configured in Folio has expired/);
  });

  test('not a form, no response, not base64, pending or unknown provider: clear error pages', async () => {
    const res = await fetch(p.service.acsURL, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: 'RelayState=x' });
    assert.equal(res.status, 400);
    assert.match(await res.text(), /No SAML response was received/);
    const bad = await fetch(p.service.acsURL, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: 'SAMLResponse=%%%' });
    assert.equal(bad.status, 400);
    const unknown = await fetch(`${t.url}/sso/saml/nope/start`, { redirect: 'manual' });
    assert.equal(unknown.status, 404);
    assert.match(await unknown.text(), /does not lead to any identity provider/);
    const { admin, org } = await newOrg(t, 'Pending');
    const { data: pending } = await admin.api.orgs.createOrganizationSamlProvider(org.id, { label: 'Half' });
    const half = await fetch(pending.service.startURL, { redirect: 'manual' });
    assert.equal(half.status, 400);
    assert.match(await half.text(), /not fully configured/);
  });
});
