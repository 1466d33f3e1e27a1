import { issueApiToken } from '../platform/auth.ts';
import type { Config } from '../platform/config.ts';
import type { Db } from '../platform/db/database.ts';
import type { RoleOrGuest, UserRow } from '../platform/db/schema.ts';
import { SsoLoginError } from './errors.ts';
import * as store from './store.ts';

/**
 * What a single sign-on does once the identity provider's word is verified, the same for SAML and
 * OpenID Connect: who the person is in Folio (just-in-time accounts), their membership of the
 * provider's organization, and the session it opens.
 */

/** What of a provider (SAML or OIDC) a sign-in needs. */
export interface SsoProviderFacts {
  organization_id: string;
  label: string;
  default_role: RoleOrGuest;
  default_team: string | null;
}

export interface Person {
  email: string;
  name: string;
}

/**
 * Who the sign-in is. `linked`, the user this provider's identifier (NameID, `sub`) signed in as
 * before, wins. Otherwise an account with the email is used only when it belongs to this
 * organization and to no other: an organization's identity provider must not be able to sign in
 * as someone whose account reaches other organizations. Otherwise a new user is created.
 */
export async function resolveUser(trx: Db, organizationId: string, linked: UserRow | undefined, person: Person): Promise<{ user: UserRow; created: boolean }> {
  if (linked) return { user: linked, created: false };
  const existing = await store.lockUserByEmail(trx, person.email);
  if (existing) {
    const orgs = await store.organizationsOf(trx, existing.id);
    const onlyThis = orgs.length === 1 && orgs[0] === organizationId;
    if (!onlyThis) {
      throw new SsoLoginError(
        'an account with this email exists outside this organization',
        'A Folio account with your email address already exists and is used outside this organization, so single sign-on cannot sign in to it. Sign in with that account\'s API token, or ask an administrator.',
        403,
      );
    }
    return { user: existing, created: false };
  }
  return { user: await store.insertUser(trx, person.email, person.name), created: true };
}

/**
 * Makes the user an SSO member of the provider's organization (with its default role and team
 * when new; a disabled member is refused) and opens the session: an API token marked as obtained
 * through this organization's SSO, which is also the app's session.
 */
export async function admitAndOpenSession(
  trx: Db,
  config: Pick<Config, 'ssoSessionTtlMs'>,
  provider: SsoProviderFacts,
  user: UserRow,
  now: Date,
): Promise<{ token: string; expiresAt: Date }> {
  const member = await store.membershipOf(trx, provider.organization_id, user.id);
  if (member?.disabled) throw new SsoLoginError('membership is disabled', 'Your membership of this organization is disabled. Ask an administrator.', 403);
  if (member) {
    await store.markSsoMember(trx, provider.organization_id, user.id);
  } else {
    await store.insertSsoMember(trx, provider.organization_id, user.id, provider.default_role, now);
  }
  if (provider.default_team) await store.joinTeam(trx, provider.organization_id, provider.default_team, user.id, now);
  const expiresAt = new Date(now.getTime() + config.ssoSessionTtlMs);
  const { token } = await issueApiToken(trx, user.id, {
    name: `SSO session (${provider.label})`,
    expiresAt,
    ssoOrganizationId: provider.organization_id,
    // Also the app's session (the folio_session cookie): a new password ends it, as it ends
    // sessions opened with the old one.
    appSession: true,
  });
  return { token, expiresAt };
}

const EMAIL = /^[^\s@<>"]+@[^\s@<>"]+\.[^\s@<>"]+$/;

/** The address when it looks like an email (at most 320 characters), lower case; undefined otherwise. */
export function emailOf(value: string | undefined): string | undefined {
  return value && EMAIL.test(value) && value.length <= 320 ? value.toLowerCase() : undefined;
}

/** A display name on one line, at most 64 characters; the email's local part when there is none. */
export function displayNameOf(display: string | undefined, email: string): string {
  const local = email.slice(0, email.indexOf('@')).slice(0, 64);
  // eslint-disable-next-line no-control-regex
  return (display ?? '').replace(/[\u0000-\u001f\u007f]/g, ' ').trim().slice(0, 64) || local;
}
