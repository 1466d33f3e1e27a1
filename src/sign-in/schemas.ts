import { Type } from '@sinclair/typebox';
import { Timestamp, User } from '../platform/schemas.ts';
import { MAX_PASSWORD_LENGTH } from './password-hash.ts';

// Characters, not bytes; the service says which rule a password breaks, so no minLength here.
const Password = Type.String({ maxLength: MAX_PASSWORD_LENGTH * 2, description: 'The password, at least 8 characters' });

export const SignInBody = Type.Object({
  /** The account's email address. */
  email: Type.String({ maxLength: 320, description: 'The account\'s email address' }),
  password: Password,
});

const SetupToken = Type.String({ minLength: 1, maxLength: 200, description: 'The token of the setup link (after `#token=` in the link)' });

export const PasswordSetupBody = Type.Object({
  token: SetupToken,
  password: Password,
});

export const PasswordSetupCheckBody = Type.Object({ token: SetupToken });

export const PasswordSetupAccount = Type.Object({
  email: Type.String({ description: 'Email of the account the link sets the password of' }),
  displayName: Type.String(),
});

export const AppSession = Type.Object({
  object: Type.Literal('session'),
  user: User,
  expiresAt: Type.Union([Timestamp, Type.Null()], { description: 'When the session (or the token of this request) ends; null: never' }),
  ssoOrganization: Type.Optional(
    Type.String({ description: 'Set when the session was opened through an organization\'s identity provider: that organization (signing in again goes through it)' }),
  ),
});

export const SignInOptionsQuery = Type.Object({
  next: Type.Optional(Type.String({ maxLength: 2048, description: 'The app path the sign-in screen returns to (`/app/o/{organizationId}/...` names the organization)' })),
  organization: Type.Optional(Type.String({ maxLength: 100, description: 'The organization whose sign-in options to list, when `next` names none' })),
});

export const SignInOptions = Type.Object({
  sso: Type.Array(
    Type.Object({
      label: Type.String({ description: 'The identity provider\'s label, as its administrator named it' }),
      startURL: Type.String({ description: 'Where the browser goes to sign in through it; it returns to `next` afterwards' }),
    }),
    { description: 'The SAML identity providers of the organization, ready to use; empty when there are none (or no such organization)' },
  ),
});
