/**
 * A refused sign-in (SAML or OpenID Connect): `reason` goes to the log (no secrets: no assertion,
 * no token, no code), `userMessage` to the person on the error page. `status` is the HTTP status
 * of that page.
 */
export class SsoLoginError extends Error {
  constructor(
    readonly reason: string,
    readonly userMessage: string,
    readonly status = 400,
  ) {
    super(reason);
  }
}
