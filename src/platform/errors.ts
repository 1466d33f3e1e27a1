/**
 * Typed errors with a status. Services throw these; the HTTP error handler turns them into
 * `{ error: { code, message } }`. Status is never chosen by matching message text.
 */
export class HttpError extends Error {
  constructor(
    readonly statusCode: number,
    message: string,
  ) {
    super(message);
  }
}

export class BadRequestError extends HttpError {
  constructor(message: string) {
    super(400, message);
  }
}
export class UnauthorizedError extends HttpError {
  constructor(message = 'Authentication required: send "Authorization: Bearer <token>"') {
    super(401, message);
  }
}
export class ForbiddenError extends HttpError {
  constructor(message: string) {
    super(403, message);
  }
}
export class NotFoundError extends HttpError {
  /** `hint`: what else may be meant, worded so it is true whether or not the thing exists. */
  constructor(what: string, hint?: string) {
    super(404, hint ? `${what} not found: ${hint}` : `${what} not found`);
  }
}
export class ConflictError extends HttpError {
  constructor(message: string) {
    super(409, message);
  }
}

/** A service Folio stores in did not answer (the S3 bucket): the client may try again shortly. */
export class UnavailableError extends HttpError {
  constructor(message: string, cause?: unknown) {
    super(503, message);
    if (cause !== undefined) this.cause = cause;
  }
}

/** Postgres unique violation, for turning a race on a unique key into a 409 rather than a 500. */
export function isUniqueViolation(err: unknown): boolean {
  return typeof err === 'object' && err !== null && (err as { code?: string }).code === '23505';
}
