import { parseArgs } from 'node:util';
import { ConfigError, loadConfig } from './platform/config.ts';
import { migrate, openDatabase } from './platform/db/database.ts';
import { DataDirLockedError } from './platform/db/lock.ts';
import { revokeApiToken } from './platform/auth.ts';
import { HttpError } from './platform/errors.ts';
import { Urls } from './platform/urls.ts';
import { startServer } from './server.ts';
import { createUser, findUserByIdOrEmail } from './users/service.ts';
import { presentUser } from './users/presenter.ts';
import { presentToken } from './tokens/presenter.ts';
import { createToken, listAllTokens, parseDuration } from './tokens/service.ts';

const USAGE = `Usage: folio <command>

Commands:
  serve                                   Start the HTTP API and background workers
  users create --email E --name N         Create a user; prints {"user", "token"} as one JSON line
  tokens create --user <id or email> [--name N] [--expires-in 30d]
                                          Create an API token; prints {"token", "id", ...} (the
                                          token is shown only now); durations: 90s 15m 12h 30d 2w
  tokens list --user <id or email>        List a user's tokens (never the token values), revoked
                                          and expired ones included
  tokens revoke <token id>                Revoke a token; a running server stops accepting it
                                          within AUTH_CACHE_TTL_MS
  migrate                                 Apply database migrations

Environment: PORT, HOST, DATA_DIR, DATABASE_URL, PUBLIC_URL, LOG_LEVEL (see README.md).`;

class UsageError extends Error {}

function option(args: string[], names: string[]): Record<string, string | undefined> {
  return options(args, names).values;
}

function options(args: string[], names: string[], allowPositionals = false) {
  const { values, positionals } = parseArgs({
    args,
    options: Object.fromEntries(names.map((n) => [n, { type: 'string' as const }])),
    strict: true,
    allowPositionals,
  });
  return { values: values as Record<string, string | undefined>, positionals };
}

/** Runs one administration command with the database open, and always closes it. */
async function withDatabase<T>(
  purpose: string,
  fn: (db: Awaited<ReturnType<typeof openDatabase>>['db']) => Promise<T>,
  opts: { migrateFirst?: boolean } = {},
) {
  const config = loadConfig();
  const handle = await openDatabase(config, purpose);
  try {
    if (opts.migrateFirst !== false) await migrate(handle.db);
    return await fn(handle.db);
  } finally {
    await handle.close();
  }
}

async function serve(): Promise<void> {
  const config = loadConfig();
  const server = await startServer(config);
  const users = await server.database.db
    .selectFrom('users')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .executeTakeFirstOrThrow();
  const where = config.databaseUrl ? 'PostgreSQL (DATABASE_URL)' : `embedded database in ${config.dataDir}`;
  process.stderr.write(`Folio listening on ${server.url} (${where})\n`);
  process.stderr.write(`API reference: ${server.url}/docs   OpenAPI: ${server.url}/v1/openapi.json\n`);
  if (Number(users.n) === 0) {
    process.stderr.write(
      config.databaseUrl
        ? `No users yet. Create one and get a token:\n  ./bin/folio users create --email you@example.com --name "Your Name"\n`
        : `No users yet. The embedded database allows one process at a time, so stop this server (Ctrl-C), then:\n` +
            `  ./bin/folio users create --email you@example.com --name "Your Name"\n` +
            `and start it again with npm start. The command prints your API token.\n`,
    );
  }
  let stopping = false;
  const stop = (signal: string) => {
    if (stopping) return;
    stopping = true;
    process.stderr.write(`${signal}: finishing in-flight requests and closing the database...\n`);
    server.close().then(
      () => process.exit(0),
      (err) => {
        process.stderr.write(`Shutdown failed: ${err instanceof Error ? err.message : err}\n`);
        process.exit(1);
      },
    );
  };
  process.on('SIGTERM', () => stop('SIGTERM'));
  process.on('SIGINT', () => stop('SIGINT'));
}

export async function main(argv: string[]): Promise<number> {
  const [command, sub, ...rest] = argv;
  if (command === 'serve') {
    await serve();
    return -1; // keep running
  }
  if (command === 'migrate') {
    const applied = await withDatabase('migrate', (db) => migrate(db), { migrateFirst: false });
    process.stdout.write(JSON.stringify({ applied }) + '\n');
    return 0;
  }
  if (command === 'users' && sub === 'create') {
    const { email, name } = option(rest, ['email', 'name']);
    if (!email || !name) throw new UsageError('users create needs --email and --name');
    const config = loadConfig();
    const out = await withDatabase('users create', (db) => createUser(db, { email, name }));
    process.stdout.write(JSON.stringify({ user: presentUser(new Urls(config), out.user), token: out.token }) + '\n');
    return 0;
  }
  if (command === 'tokens' && sub === 'create') {
    const { user, name, 'expires-in': expiresIn } = option(rest, ['user', 'name', 'expires-in']);
    if (!user) throw new UsageError('tokens create needs --user <id or email>');
    if (name !== undefined && (name.trim() === '' || name.length > 100)) throw new UsageError('--name must be 1 to 100 characters');
    const expiresAt = expiresIn !== undefined ? new Date(Date.now() + parseDuration(expiresIn)) : undefined;
    const created = await withDatabase('tokens create', async (db) => {
      const found = await findUserByIdOrEmail(db, user);
      if (!found) throw new HttpError(404, `No user with id or email "${user}"`);
      return createToken(db, found.id, { name, expiresAt });
    });
    const { object: _object, ...info } = presentToken(created.info);
    process.stdout.write(JSON.stringify({ token: created.token, ...info }) + '\n');
    return 0;
  }
  if (command === 'tokens' && sub === 'list') {
    const { user } = option(rest, ['user']);
    if (!user) throw new UsageError('tokens list needs --user <id or email>');
    const rows = await withDatabase('tokens list', async (db) => {
      const found = await findUserByIdOrEmail(db, user);
      if (!found) throw new HttpError(404, `No user with id or email "${user}"`);
      return listAllTokens(db, found.id);
    });
    process.stdout.write(JSON.stringify({ count: rows.length, items: rows.map((row) => presentToken(row)) }) + '\n');
    return 0;
  }
  if (command === 'tokens' && sub === 'revoke') {
    const { positionals } = options(rest, [], true);
    if (positionals.length !== 1) throw new UsageError('tokens revoke needs one token id (see tokens list)');
    const id = positionals[0]!;
    const revoked = await withDatabase('tokens revoke', (db) => revokeApiToken(db, id));
    if (!revoked) throw new HttpError(404, `No live token with id "${id}"`);
    process.stdout.write(JSON.stringify({ revoked: presentToken(revoked) }) + '\n');
    return 0;
  }
  throw new UsageError(command ? `Unknown command "${[command, sub].filter(Boolean).join(' ')}"` : 'No command given');
}

export async function run(argv: string[]): Promise<void> {
  try {
    const code = await main(argv);
    if (code >= 0) process.exit(code);
  } catch (err) {
    if (err instanceof UsageError || (err instanceof TypeError && (err as { code?: string }).code?.startsWith('ERR_PARSE_ARGS'))) {
      process.stderr.write(`${err.message}\n\n${USAGE}\n`);
      process.exit(2);
    }
    if (err instanceof DataDirLockedError || err instanceof ConfigError || err instanceof HttpError) {
      process.stderr.write(`folio: ${err.message}\n`);
      process.exit(1);
    }
    process.stderr.write(`folio: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
    process.exit(1);
  }
}
