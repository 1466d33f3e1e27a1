import { AsyncLocalStorage } from 'node:async_hooks';
import { ForbiddenError } from './errors.ts';

/**
 * Single sign-on enforcement. When an organization enforces SSO (`sso: true`), its members marked
 * SSO (`sso: true` on the member) reach its content only with a credential obtained through the
 * organization's SSO: the session cookie or an API token made from it. Admins are exempt, so an
 * admin's ordinary token remains a recovery path (to fix the identity provider, or to turn the
 * enforcement off).
 *
 * Authentication computes the organizations the request's token may not reach (auth.ts); the
 * gateways that resolve the caller's membership of an organization (requireMembership,
 * requireOrganization, orgRoleOf) call `assertSsoSatisfied`. The list travels in an
 * AsyncLocalStorage entered right before the handler runs, so those functions keep their
 * signatures; outside a request (jobs, the CLI) nothing is blocked.
 */
interface GateStore {
  blocked: readonly string[];
}

const scope = new AsyncLocalStorage<GateStore>();

/** Runs `next` (the rest of the request) with the organizations its token may not reach. */
export function runWithSsoGate(blocked: readonly string[], next: () => void): void {
  scope.run({ blocked }, next);
}

/** Refuses (403) when the current request's token may not reach the organization because of SSO. */
export function assertSsoSatisfied(organizationId: string): void {
  const store = scope.getStore();
  if (store && store.blocked.includes(organizationId)) {
    throw new ForbiddenError(
      'This organization requires single sign-on for your account: sign in through one of its identity providers ' +
        `(GET /v1/orgs/${organizationId}/sso lists their start URLs) and use the session or the API token obtained there`,
    );
  }
}
