import { isAbsolute } from 'node:path';
import { sql } from 'kysely';
import { revokeApiToken, type TokenCache } from './platform/auth.ts';
import { writeBackup } from './platform/db/backup.ts';
import { FILES_SECTION } from './platform/backup-files.ts';
import { migrate, type Db } from './platform/db/database.ts';
import { BadRequestError, HttpError } from './platform/errors.ts';
import { version } from './platform/home.ts';
import type { Urls } from './platform/urls.ts';
import { presentToken } from './tokens/presenter.ts';
import { createToken, listAllTokens, parseDuration } from './tokens/service.ts';
import { presentUser } from './users/presenter.ts';
import { createUser } from './users/service.ts';
import { findUserByIdOrEmail } from './users/store.ts';
import { createPasswordSetupLink, setPassword } from './sign-in/service.ts';

/**
 * The administration commands, one implementation each. The CLI runs them on a database it opened
 * itself, or sends the same request to a running server (src/platform/admin-socket.ts), which runs
 * them here on its own database: the output is the same either way.
 */
export type AdminRequest =
  | { command: 'migrate' }
  | { command: 'backup'; out: string }
  | { command: 'users create'; email: string; name: string }
  | { command: 'users set-password'; user: string; password: string }
  | { command: 'users setup-link'; user: string }
  | { command: 'tokens create'; user: string; name?: string | undefined; expiresIn?: string | undefined }
  | { command: 'tokens list'; user: string }
  | { command: 'tokens revoke'; id: string };

export interface AdminContext {
  db: Db;
  urls: Urls;
  /** The server's token cache, when a server runs the command: a revoked token stops at once. */
  tokenCache?: TokenCache | undefined;
}

function str(value: unknown, field: string, optional = false): string | undefined {
  if (value === undefined && optional) return undefined;
  if (typeof value !== 'string') throw new BadRequestError(`"${field}" must be a string`);
  return value;
}

/** Checks a request received over the socket: it comes from a CLI of any version. */
export function parseAdminRequest(raw: unknown): AdminRequest {
  if (!raw || typeof raw !== 'object') throw new BadRequestError('The request must be a JSON object');
  const r = raw as Record<string, unknown>;
  switch (r.command) {
    case 'migrate':
      return { command: 'migrate' };
    case 'backup': {
      // The server writes the file: the path must not depend on its working directory.
      const out = str(r.out, 'out')!;
      if (!isAbsolute(out)) throw new BadRequestError('"out" must be an absolute path');
      return { command: 'backup', out };
    }
    case 'users create':
      return { command: 'users create', email: str(r.email, 'email')!, name: str(r.name, 'name')! };
    case 'users set-password':
      return { command: 'users set-password', user: str(r.user, 'user')!, password: str(r.password, 'password')! };
    case 'users setup-link':
      return { command: 'users setup-link', user: str(r.user, 'user')! };
    case 'tokens create':
      return { command: 'tokens create', user: str(r.user, 'user')!, name: str(r.name, 'name', true), expiresIn: str(r.expiresIn, 'expiresIn', true) };
    case 'tokens list':
      return { command: 'tokens list', user: str(r.user, 'user')! };
    case 'tokens revoke':
      return { command: 'tokens revoke', id: str(r.id, 'id')! };
    default:
      throw new BadRequestError(`Unknown administration command ${JSON.stringify(r.command)}: this server may be older than the CLI`);
  }
}

async function userByIdOrEmail(db: Db, who: string) {
  const found = await findUserByIdOrEmail(db, who);
  if (!found) throw new HttpError(404, `No user with id or email "${who}"`);
  return found;
}

/** Runs one command; returns what the CLI prints as one JSON line. */
export async function runAdminCommand(ctx: AdminContext, req: AdminRequest): Promise<unknown> {
  switch (req.command) {
    case 'migrate':
      return { applied: await migrate(ctx.db) };
    case 'backup':
      // A server runs it when it passes its token cache: its requests share an embedded database's session.
      return { backup: await writeBackup(ctx.db, req.out, { folio: version(), shared: ctx.tokenCache !== undefined, sections: [FILES_SECTION] }) };
    case 'users create': {
      // With the one-time link where the person chooses their password for the app: the operator
      // hands it on (Folio sends no email). Unused, it expires; `users setup-link` makes a new one.
      const out = await createUser(ctx.db, { email: req.email, name: req.name });
      const passwordSetup = await createPasswordSetupLink(ctx, out.user.id);
      return { user: presentUser(ctx.urls, out.user), token: out.token, passwordSetup };
    }
    case 'users setup-link': {
      const user = await userByIdOrEmail(ctx.db, req.user);
      return { user: presentUser(ctx.urls, user), passwordSetup: await createPasswordSetupLink(ctx, user.id) };
    }
    case 'users set-password': {
      const user = await setPassword(ctx.db, req.user, req.password, ctx.tokenCache);
      return { user: presentUser(ctx.urls, user), passwordSet: true };
    }
    case 'tokens create': {
      if (req.name !== undefined && (req.name.trim() === '' || req.name.length > 100)) throw new BadRequestError('--name must be 1 to 100 characters');
      const expiresAt = req.expiresIn !== undefined ? new Date(Date.now() + parseDuration(req.expiresIn)) : undefined;
      const user = await userByIdOrEmail(ctx.db, req.user);
      const created = await createToken(ctx.db, user.id, { name: req.name, expiresAt });
      const { object: _object, ...info } = presentToken(created.info);
      return { token: created.token, ...info };
    }
    case 'tokens list': {
      const user = await userByIdOrEmail(ctx.db, req.user);
      const rows = await listAllTokens(ctx.db, user.id);
      return { count: rows.length, items: rows.map((row) => presentToken(row)) };
    }
    case 'tokens revoke': {
      const revoked = await revokeApiToken(ctx.db, req.id, { cache: ctx.tokenCache });
      if (!revoked) throw new HttpError(404, `No live token with id "${req.id}"`);
      return { revoked: presentToken(revoked) };
    }
  }
}

/** Advisory lock key serializing the first-administrator check of processes starting together. */
const FIRST_ADMIN_LOCK = 727275;

/**
 * On a database without any user, creates the first one (named Administrator) and returns its
 * token and a one-time link where they choose their password; undefined as soon as any user
 * exists. Several processes starting together on one PostgreSQL check under a lock, so only one
 * of them creates it.
 */
export async function createFirstAdmin(
  db: Db,
  email: string,
  urls: Urls,
  now?: () => number,
): Promise<{ email: string; token: string; passwordSetup: { url: string; expiresAt: Date } } | undefined> {
  return db.connection().execute(async (conn) => {
    await sql`SELECT pg_advisory_lock(${sql.lit(FIRST_ADMIN_LOCK)})`.execute(conn);
    try {
      const any = await conn.selectFrom('users').select('id').limit(1).executeTakeFirst();
      if (any) return undefined;
      const { user, token } = await createUser(conn, { email, name: 'Administrator' });
      const passwordSetup = await createPasswordSetupLink({ db: conn, urls, ...(now ? { now } : {}) }, user.id);
      return { email: user.email, token, passwordSetup };
    } finally {
      await sql`SELECT pg_advisory_unlock(${sql.lit(FIRST_ADMIN_LOCK)})`.execute(conn);
    }
  });
}
