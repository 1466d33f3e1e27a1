/**
 * Who may join a shared page, and how: the same credentials and rights as the API. A connection
 * authenticates with the app's session cookie (sent with the WebSocket upgrade, from Folio's own
 * origin only: a page of another origin can open a WebSocket with the visitor's cookies) or with
 * an API token sent in the protocol's authentication message (Node clients, integrations of
 * editors). Writers need the `edit` role on the change request's space, an open change request
 * and a live space; readers follow along without typing.
 */
import type { IncomingMessage } from 'node:http';
import type { Ctx, Services } from '../platform/context.ts';
import { authenticateTokenHash, hashToken } from '../platform/auth.ts';
import { requestCookies } from '../platform/cookies.ts';
import { SESSION_COOKIE } from '../platform/session.ts';
import { runWithSsoGate } from '../platform/sso-gate.ts';
import { atLeast } from '../platform/policy.ts';
import { loadChangeRequest } from '../change-requests/service.ts';
import { loadRevision } from '../content/service.ts';
import { ContentReader } from '../content/model.ts';

/** A shared page's name on the wire: `<spaceId>/<changeRequestId>/<pageId>`. */
export interface PageAddress {
  spaceId: string;
  changeRequestId: string;
  pageId: string;
}

const ID = /^[A-Za-z0-9_-]{1,64}$/;

export function parseDocumentName(name: string): PageAddress | undefined {
  const parts = name.split('/');
  if (parts.length !== 3 || !parts.every((p) => ID.test(p))) return undefined;
  return { spaceId: parts[0]!, changeRequestId: parts[1]!, pageId: parts[2]! };
}

export function documentName(address: PageAddress): string {
  return `${address.spaceId}/${address.changeRequestId}/${address.pageId}`;
}

/** Why a connection was refused or ended: the reason the client is told. */
export class AccessRefused extends Error {
  constructor(readonly reason: string) {
    super(reason);
  }
}

/** The session cookie of an upgrade request, when it comes from Folio's own origin (else undefined: no cookie credential). */
export function sessionOfUpgrade(request: IncomingMessage, services: Services): string | undefined {
  const session = requestCookies(request.headers.cookie).get(SESSION_COOKIE);
  if (!session) return undefined;
  const origin = request.headers.origin;
  const ours = [services.config.publicUrl, services.config.appUrl].map((u) => new URL(u).origin);
  return typeof origin === 'string' && ours.includes(origin) ? session : undefined;
}

export interface Access {
  ctx: Ctx;
  organizationId: string;
  /** True when the caller may only follow along. */
  readOnly: boolean;
}

/**
 * The caller's access to a shared page: a token (the protocol's) or else the session cookie;
 * refused when neither authenticates, when the page is not visible (as the API's 404) or does not
 * exist in the change request's head.
 */
export async function accessTo(services: Services, credential: string | undefined, address: PageAddress): Promise<Access> {
  if (!credential) throw new AccessRefused('unauthenticated: sign in, or send an API token');
  const auth = await authenticateTokenHash(services.db, hashToken(credential), services.tokenCache);
  // Content tokens read one published space: never its change requests.
  if (!auth || auth.scopeSpaceId) throw new AccessRefused('unauthenticated: the session has ended or the token is not valid');
  const ctx: Ctx = { ...services, user: auth.user, token: { id: auth.tokenId, expiresAt: auth.tokenExpiresAt, ssoOrganizationId: auth.ssoOrganizationId } };
  try {
    const found = await new Promise<Awaited<ReturnType<typeof loadChangeRequest>>>((resolve, reject) =>
      runWithSsoGate(auth.ssoBlocked, () => void loadChangeRequest(ctx, address.spaceId, address.changeRequestId).then(resolve, reject)),
    );
    if (!atLeast(found.role, 'read')) throw new AccessRefused('not-found');
    const head = await loadRevision(services.db, found.space.id, found.cr.revision);
    if (!(await new ContentReader(services.db, head.root).page(address.pageId))) throw new AccessRefused('not-found: no such page in the change request');
    const writable = atLeast(found.role, 'edit') && found.cr.status !== 'merged' && found.cr.status !== 'archived' && found.space.edit_mode !== 'locked';
    return { ctx: { ...ctx }, organizationId: found.space.organization_id, readOnly: !writable };
  } catch (err) {
    if (err instanceof AccessRefused) throw err;
    const status = (err as { statusCode?: number }).statusCode;
    if (status === 404) throw new AccessRefused('not-found');
    if (status === 403) throw new AccessRefused(`forbidden: ${(err as Error).message}`);
    throw err;
  }
}
