import { createHmac, randomBytes, timingSafeEqual, X509Certificate } from 'node:crypto';
import type { CacheProvider, Profile, SAML } from '@node-saml/node-saml';
import { DOMParser, type Document, type Element, type Node } from '@xmldom/xmldom';
import type { Services } from '../platform/context.ts';
import type { Db } from '../platform/db/database.ts';
import type { SamlProviderRow, UserRow } from '../platform/db/schema.ts';
import { isUniqueViolation } from '../platform/errors.ts';
import { appPathOf } from '../platform/app-paths.ts';
import { serviceProviderKey } from './keys.ts';
import { admitAndOpenSession, displayNameOf, emailOf, resolveUser } from './accounts.ts';
import { SsoLoginError } from './errors.ts';
import * as store from './store.ts';
import { providerStatus, serviceUrls } from './urls.ts';

/** Clock difference tolerated between Folio and the identity provider on NotBefore/NotOnOrAfter. */
export const CLOCK_SKEW_MS = 60_000;
/** How long an authentication request may wait for its response. */
export const REQUEST_TTL_MS = 10 * 60_000;
/** Largest SAMLResponse accepted (base64 text): real responses are a few kilobytes. */
export const MAX_RESPONSE_CHARS = 512 * 1024;

const ASSERTION_NS = 'urn:oasis:names:tc:SAML:2.0:assertion';
const PROTOCOL_NS = 'urn:oasis:names:tc:SAML:2.0:protocol';
const BEARER = 'urn:oasis:names:tc:SAML:2.0:cm:bearer';

export { SsoLoginError };

/**
 * The store of authentication requests node-saml reads InResponseTo against: rows of
 * saml_requests for one provider, valid until they expire or are consumed. A request of another
 * provider (another organization) is never found. Removal is left to `consumeRequest`, which
 * marks the request used atomically once the whole response has been accepted.
 */
class RequestStore implements CacheProvider {
  constructor(
    private readonly db: Db,
    private readonly providerId: string,
  ) {}

  async saveAsync(key: string, value: string) {
    const now = new Date();
    await store.saveRequest(this.db, this.providerId, key, now, new Date(now.getTime() + REQUEST_TTL_MS));
    return { value, createdAt: now.getTime() };
  }

  async getAsync(key: string) {
    const createdAt = await store.pendingRequestCreatedAt(this.db, this.providerId, key);
    return createdAt ? createdAt.toISOString() : null;
  }

  async removeAsync(key: string | null) {
    return key;
  }
}

async function samlFor(services: Pick<Services, 'db' | 'urls'>, provider: SamlProviderRow, requestId?: string): Promise<SAML> {
  // node-saml is loaded on the first SAML sign-in, not at every start.
  const { SAML, ValidateInResponseTo } = await import('@node-saml/node-saml');
  const sp = await serviceProviderKey(services.db);
  const service = serviceUrls(services.urls, provider.id);
  return new SAML({
    entryPoint: provider.sso_url!,
    issuer: service.entityID,
    callbackUrl: service.acsURL,
    audience: service.entityID,
    // Pinned: only this provider's certificate verifies its responses (KeyInfo in a message is ignored).
    idpCert: provider.certificate!,
    idpIssuer: provider.entity_id!,
    privateKey: sp.privateKey,
    publicCert: sp.certificate,
    signatureAlgorithm: 'sha256',
    digestAlgorithm: 'http://www.w3.org/2001/04/xmlenc#sha256',
    // The response or its assertion must be signed (node-saml refuses a message with neither).
    wantAssertionsSigned: false,
    wantAuthnResponseSigned: false,
    acceptedClockSkewMs: CLOCK_SKEW_MS,
    // Only answers to requests Folio sent: IdP-initiated (unsolicited) responses are refused.
    validateInResponseTo: ValidateInResponseTo.always,
    requestIdExpirationPeriodMs: REQUEST_TTL_MS,
    cacheProvider: new RequestStore(services.db, provider.id),
    // Let the identity provider pick how it authenticates (password, MFA, passkeys...).
    disableRequestedAuthnContext: true,
    // The id is chosen before the request is made, so the RelayState can be bound to it.
    ...(requestId ? { generateUniqueId: () => requestId } : {}),
  });
}

/** A provider by id, with the organization it belongs to; undefined when there is none. */
export function findProvider(db: Db, providerId: string) {
  return store.findProviderById(db, providerId);
}

function requireActive(provider: SamlProviderRow | undefined, providerId: string): SamlProviderRow {
  if (!provider) throw new SsoLoginError(`unknown provider ${providerId}`, 'This single sign-on link does not lead to any identity provider. Ask your administrator for the right one.', 404);
  if (providerStatus(provider) !== 'active') {
    throw new SsoLoginError(
      'provider is pending (entityID, certificate or ssoURL missing)',
      'This identity provider is not fully configured yet. An administrator must set its entity id, certificate and single sign-on URL.',
    );
  }
  // Checked when it was set, but a certificate expires while it is in use.
  const validTo = new Date(new X509Certificate(provider.certificate!).validTo);
  if (validTo <= new Date()) {
    throw new SsoLoginError(
      `provider certificate expired on ${validTo.toISOString()}`,
      'The identity provider\'s certificate configured in Folio has expired. An administrator must set the provider\'s current certificate.',
    );
  }
  return provider;
}

/**
 * The URL of the identity provider with a signed AuthnRequest (HTTP-Redirect binding). `next`, an
 * app path to open once signed in, travels as the RelayState (the identity provider posts it back
 * untouched), signed with the server's key and bound to this very request, so a RelayState cannot
 * be made up nor moved onto another sign-in.
 */
export async function startLogin(services: Pick<Services, 'db' | 'urls' | 'signingKey'>, providerId: string, next?: string): Promise<string> {
  const provider = requireActive(await findProvider(services.db, providerId), providerId);
  // node-saml's own format: an underscore (an XML ID must not start with a digit) and 40 hex digits.
  const requestId = `_${randomBytes(20).toString('hex')}`;
  const saml = await samlFor(services, provider, requestId);
  // Expired requests are dropped as new ones arrive, so the table stays small.
  await store.dropExpiredRequests(services.db, new Date(Date.now() - REQUEST_TTL_MS));
  const path = appPathOf(next);
  return saml.getAuthorizeUrlAsync(path ? signedRelayState(services.signingKey, provider.id, requestId, path) : '', undefined, {});
}

/** Characters of the RelayState's signature (base64url of 16 bytes of HMAC-SHA256: 128 bits). */
const RELAY_SIGNATURE_CHARS = 22;

function relaySignature(key: Uint8Array, providerId: string, requestId: string, path: string): string {
  return createHmac('sha256', key).update(`sso-next\0${providerId}\0${requestId}\0${path}`).digest('base64url').slice(0, RELAY_SIGNATURE_CHARS);
}

/** `<signature>.<path>`: short, since some identity providers limit the RelayState (SAML says 80 bytes). */
function signedRelayState(key: Uint8Array, providerId: string, requestId: string, path: string): string {
  return `${relaySignature(key, providerId, requestId, path)}.${path}`;
}

/**
 * The app path a RelayState posted back with an accepted response names, when its signature is
 * the one `startLogin` made for that request; undefined otherwise (the caller then opens the
 * default screen).
 */
export function nextOfRelayState(key: Uint8Array, providerId: string, requestId: string, relayState: unknown): string | undefined {
  if (typeof relayState !== 'string') return undefined;
  const dot = relayState.indexOf('.');
  if (dot !== RELAY_SIGNATURE_CHARS) return undefined;
  const path = appPathOf(relayState.slice(dot + 1));
  if (!path) return undefined;
  const want = Buffer.from(relaySignature(key, providerId, requestId, path));
  const got = Buffer.from(relayState.slice(0, dot));
  return want.length === got.length && timingSafeEqual(want, got) ? path : undefined;
}

function parseXml(xml: string): Document {
  try {
    return new DOMParser({
      onError: (level, message) => {
        if (level !== 'warning') throw new Error(message);
      },
    }).parseFromString(xml, 'text/xml');
  } catch (err) {
    throw new SsoLoginError(`malformed XML: ${(err as Error).message.slice(0, 200)}`, 'The identity provider sent a response that is not well-formed XML.');
  }
}

function* walk(node: Node): Generator<Node> {
  yield node;
  for (let child = node.firstChild; child; child = child.nextSibling) yield* walk(child);
}

function children(parent: Element, ns: string, name: string): Element[] {
  const out: Element[] = [];
  for (let child = parent.firstChild; child; child = child.nextSibling) {
    if (child.nodeType === 1 && (child as Element).namespaceURI === ns && (child as Element).localName === name) out.push(child as Element);
  }
  return out;
}

/**
 * Checks on the raw response before node-saml reads it: no DTD (entity expansion), no comments
 * (they can split a NameID so that a parser reads only part of it), a SAML Response root whose
 * Destination, when present, is this provider's ACS URL.
 */
function precheck(xml: string, acsURL: string): void {
  if (/<!DOCTYPE|<!ENTITY/i.test(xml)) {
    throw new SsoLoginError('response contains a DTD (DOCTYPE/ENTITY)', 'The response carries a document type declaration, which Folio never accepts.');
  }
  const doc = parseXml(xml);
  for (const node of walk(doc)) {
    if (node.nodeType === 8) throw new SsoLoginError('response contains an XML comment', 'The response contains XML comments, which Folio does not accept in SAML messages.');
    if (node.nodeType === 10) throw new SsoLoginError('response contains a DTD', 'The response carries a document type declaration, which Folio never accepts.');
  }
  const root = doc.documentElement;
  if (!root || root.namespaceURI !== PROTOCOL_NS || root.localName !== 'Response') {
    throw new SsoLoginError('not a samlp:Response', 'The identity provider did not send a SAML response.');
  }
  const destination = root.getAttribute('Destination');
  if (destination && destination !== acsURL) {
    throw new SsoLoginError(`Destination ${destination.slice(0, 200)} is not this provider's ACS URL`, 'The response was addressed to another service.');
  }
}

interface AssertionFacts {
  id: string;
  expiresAt: Date;
}

/**
 * Checks on the assertion node-saml verified (its signed content, not the envelope around it):
 * a bearer SubjectConfirmation whose Recipient is this provider's ACS URL, and the assertion id
 * and expiry that the replay check records.
 */
function checkAssertion(assertionXml: string, acsURL: string): AssertionFacts {
  const doc = parseXml(assertionXml);
  const assertion = doc.documentElement;
  if (!assertion || assertion.localName !== 'Assertion' || assertion.namespaceURI !== ASSERTION_NS) {
    throw new SsoLoginError('verified content is not an assertion', 'The identity provider sent no usable assertion.');
  }
  const id = assertion.getAttribute('ID');
  if (!id) throw new SsoLoginError('assertion has no ID', 'The identity provider sent an assertion without an identifier.');
  const subject = children(assertion, ASSERTION_NS, 'Subject')[0];
  const confirmations = subject ? children(subject, ASSERTION_NS, 'SubjectConfirmation').filter((c) => c.getAttribute('Method') === BEARER) : [];
  const data = confirmations.flatMap((c) => children(c, ASSERTION_NS, 'SubjectConfirmationData'));
  if (!data.length) throw new SsoLoginError('no bearer SubjectConfirmationData', 'The assertion does not say who it is for.');
  if (!data.some((d) => d.getAttribute('Recipient') === acsURL)) {
    const got = data.map((d) => d.getAttribute('Recipient') ?? '(none)').join(', ');
    throw new SsoLoginError(`Recipient ${got.slice(0, 200)} is not this provider's ACS URL`, 'The assertion was issued for another service.');
  }
  const ends = [
    ...children(assertion, ASSERTION_NS, 'Conditions').map((c) => c.getAttribute('NotOnOrAfter')),
    ...data.map((d) => d.getAttribute('NotOnOrAfter')),
  ]
    .filter((v): v is string => !!v)
    .map((v) => new Date(v).getTime())
    .filter((v) => Number.isFinite(v));
  const expiresAt = new Date((ends.length ? Math.max(...ends) : Date.now() + REQUEST_TTL_MS) + CLOCK_SKEW_MS);
  return { id, expiresAt };
}

function firstString(value: unknown): string | undefined {
  if (typeof value === 'string') return value.trim() || undefined;
  if (Array.isArray(value)) return firstString(value[0]);
  return undefined;
}

/** The email and display name the assertion gives for the person. */
function personOf(profile: Profile): { email: string; name: string } {
  const candidates = [
    profile.email,
    profile.mail,
    profile['http://schemas.xmlsoap.org/ws/2005/05/identity/claims/emailaddress'],
    profile.nameID,
  ];
  const email = candidates.map((v) => emailOf(firstString(v))).find(Boolean);
  if (!email) {
    throw new SsoLoginError('no email address in the assertion (NameID or email attribute)', 'The identity provider did not send your email address. Your administrator can send it as the NameID or as an "email" attribute.');
  }
  const given = firstString(profile.givenName ?? profile['http://schemas.xmlsoap.org/ws/2005/05/identity/claims/givenname']);
  const family = firstString(profile.sn ?? profile.surname ?? profile['http://schemas.xmlsoap.org/ws/2005/05/identity/claims/surname']);
  const display =
    firstString(profile.displayName ?? profile['http://schemas.microsoft.com/identity/claims/displayname'] ?? profile.name) ?? [given, family].filter(Boolean).join(' ');
  return { email, name: displayNameOf(display, email) };
}

export interface LoginResult {
  user: UserRow;
  organizationId: string;
  provider: SamlProviderRow;
  /** The id of the AuthnRequest the response answered (what the RelayState is bound to). */
  requestId: string;
  /** The session token (the cookie's value) and when it expires. */
  session: { token: string; expiresAt: Date };
  created: boolean;
}

/**
 * Validates a SAMLResponse posted to a provider's ACS and signs the person in: the signature
 * (pinned certificate), issuer, audience, destination, recipient, validity window, InResponseTo
 * of a pending request of this provider, and a never-seen assertion id. Then finds or creates the
 * user, makes them an SSO member with the provider's default role and team, and opens a session.
 */
export async function completeLogin(services: Pick<Services, 'db' | 'urls' | 'config' | 'tokenCache'>, providerId: string, samlResponse: unknown): Promise<LoginResult> {
  const provider = requireActive(await findProvider(services.db, providerId), providerId);
  if (typeof samlResponse !== 'string' || samlResponse.length === 0) {
    throw new SsoLoginError('no SAMLResponse field', 'No SAML response was received. Start the login again from your organization\'s login page.');
  }
  if (samlResponse.length > MAX_RESPONSE_CHARS) throw new SsoLoginError(`SAMLResponse of ${samlResponse.length} characters`, 'The SAML response is too large.');
  if (!/^[A-Za-z0-9+/=\s]+$/.test(samlResponse)) throw new SsoLoginError('SAMLResponse is not base64', 'The SAML response is not encoded as expected (base64).');
  const xml = Buffer.from(samlResponse, 'base64').toString('utf8');
  const { acsURL } = serviceUrls(services.urls, provider.id);
  precheck(xml, acsURL);

  const saml = await samlFor(services, provider);
  let profile: Profile | null;
  try {
    ({ profile } = await saml.validatePostResponseAsync({ SAMLResponse: samlResponse }));
  } catch (err) {
    const reason = err instanceof Error ? err.message : String(err);
    throw new SsoLoginError(`validation failed: ${reason.slice(0, 300)}`, 'The identity provider\'s response could not be verified, so you were not signed in.');
  }
  if (!profile) throw new SsoLoginError('no profile (NoPassive)', 'The identity provider did not sign you in.');
  if (profile.issuer !== provider.entity_id) {
    throw new SsoLoginError(`assertion Issuer ${String(profile.issuer).slice(0, 200)} is not the provider's entityID`, 'The response came from another identity provider than the one configured.');
  }
  const requestId = typeof profile.inResponseTo === 'string' ? profile.inResponseTo : undefined;
  if (!requestId) throw new SsoLoginError('response answers no request', 'Folio only accepts sign-ins it started: open your organization\'s login page and start again.');
  const assertion = checkAssertion(profile.getAssertionXml!(), acsURL);
  const person = personOf(profile);
  const nameId = profile.nameID;
  if (typeof nameId !== 'string' || !nameId || nameId.length > 1024) {
    throw new SsoLoginError('assertion has no usable NameID', 'The identity provider did not say who you are (no NameID).');
  }

  try {
    const result = await signIn(services, provider, { requestId, assertion, person, nameId });
    // The member is marked SSO now: SSO enforcement applies to their other tokens (see sso-gate.ts).
    services.tokenCache.clear();
    return result;
  } catch (err) {
    // Two sign-ins of the same new person at once: one creates the account, the other is told to retry.
    if (isUniqueViolation(err)) throw new SsoLoginError('concurrent sign-in of the same person', 'Another sign-in for you was in progress. Start again.', 409);
    throw err;
  }
}

async function signIn(
  services: Pick<Services, 'db' | 'config'>,
  provider: SamlProviderRow,
  { requestId, assertion, person, nameId }: { requestId: string; assertion: AssertionFacts; person: { email: string; name: string }; nameId: string },
): Promise<LoginResult> {
  return services.db.transaction().execute(async (trx) => {
    const now = new Date();
    if (!(await store.consumeRequest(trx, provider.id, requestId, now))) throw new SsoLoginError(`request ${requestId.slice(0, 100)} already answered or expired`, 'This sign-in was already used or has expired. Start again from your organization\'s login page.');
    try {
      await store.recordAssertion(trx, provider.id, assertion.id, assertion.expiresAt, now);
    } catch (err) {
      if (isUniqueViolation(err)) throw new SsoLoginError(`assertion ${assertion.id.slice(0, 100)} replayed`, 'This sign-in was already used. Start again from your organization\'s login page.');
      throw err;
    }

    const { user, created } = await resolveUser(trx, provider.organization_id, await store.linkedUser(trx, provider.id, nameId), person);
    await store.linkIdentity(trx, provider.id, nameId, user.id, now);
    const { token, expiresAt } = await admitAndOpenSession(trx, services.config, provider, user, now);
    return { user, organizationId: provider.organization_id, provider, requestId, session: { token, expiresAt }, created };
  });
}
