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

export const PasswordSetupBody = Type.Object({
  token: Type.String({ minLength: 1, maxLength: 200, description: 'The token of the setup link (after `#token=` in the link)' }),
  password: Password,
});

export const AppSession = Type.Object({
  object: Type.Literal('session'),
  user: User,
  expiresAt: Type.Union([Timestamp, Type.Null()], { description: 'When the session (or the token of this request) ends; null: never' }),
});
