import { existsSync, readFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { basename, dirname, join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import type { AdminRequest } from './admin.ts';
import { askAdminSocket } from './platform/admin-socket.ts';
import { ConfigError, loadConfig, type Config } from './platform/config.ts';
import type { Db } from './platform/db/database.ts';
import { DataDirLockedError } from './platform/db/lock.ts';
import { HttpError } from './platform/errors.ts';
import { version } from './platform/home.ts';

// The database, the HTTP app and the areas are imported when a command needs them (import('...')
// below): help, usage errors and commands answered by a running server never load them, which
// saves about two seconds per command.

/** One command of the CLI: how it is written, what it does, the options it takes. */
interface Command {
  name: string;
  args: string;
  summary: string;
  /** Longer help, shown by `folio help <command>` and `folio <command> --help`. */
  details: string;
  options: string[];
  /** How many positional arguments it takes (after the command's words). */
  positionals?: number;
}

const COMMANDS: Command[] = [
  {
    name: 'serve',
    args: '',
    summary: 'Start the HTTP API and the background jobs',
    details: `Listens on http://HOST:PORT (default 127.0.0.1:8080). On a database without users it creates
the first one (FOLIO_ADMIN_EMAIL, default admin@localhost) and prints its API token once,
with a one-time link (valid 24 h) where it chooses its password for the app.
With the embedded database, administration commands run while it serves: they reach it
through DATA_DIR/folio.sock (mode 0600, this OS user only). SIGTERM or SIGINT stops it
gracefully. WORKERS=false leaves the background jobs to \`folio worker\` processes.`,
    options: [],
  },
  {
    name: 'worker',
    args: '',
    summary: 'Run background jobs only (no HTTP API), for scale-out on PostgreSQL',
    details: `Runs N API processes (WORKERS=false folio serve) and M workers against one PostgreSQL
(DATABASE_URL): jobs are claimed under leases with SKIP LOCKED, so no job runs twice. The
embedded database allows one process, whose \`folio serve\` already runs the jobs.`,
    options: [],
  },
  {
    name: 'users create',
    args: '--email E --name N',
    summary: 'Create a user; prints {"user", "token", "passwordSetup"} as one JSON line',
    details: `The token is shown only now: Folio keeps its hash. passwordSetup.url is a one-time link (24 hours)
where the person chooses their password for the app: hand it on (Folio sends no email).`,
    options: ['email', 'name'],
  },
  {
    name: 'users setup-link',
    args: '--email E',
    summary: 'A new one-time link where the user chooses their password; prints {"user", "passwordSetup"}',
    details: `For a link that was lost or expired (users create prints the first one). The link works once,
for 24 hours; hand it to the person (Folio sends no email). Earlier links still work until used or
expired; setting the password ends them all.`,
    options: ['email'],
  },
  {
    name: 'users set-password',
    args: '--email E',
    summary: 'Set a user\'s password for signing in to the app, read from standard input',
    details: `The password is read from standard input, never from the command line (where ps and the shell
history would show it): typed twice without echo on a terminal, or piped, one line
(printf '%s\\n' "$PASSWORD" | folio users set-password --email E). At least 8 characters.
The user's pending password setup links stop working and their app sessions end.
Prints {"user", "passwordSet"}.`,
    options: ['email'],
  },
  {
    name: 'tokens create',
    args: '--user <id or email> [--name N] [--expires-in 30d]',
    summary: 'Create an API token; prints {"token", "id", ...}',
    details: 'The token is shown only now. Durations: 90s 15m 12h 30d 2w.',
    options: ['user', 'name', 'expires-in'],
  },
  {
    name: 'tokens list',
    args: '--user <id or email>',
    summary: 'List a user\'s tokens, revoked and expired ones included',
    details: 'Prints {"count", "items"}: names, expiry and revocation, never the token values.',
    options: ['user'],
  },
  {
    name: 'tokens revoke',
    args: '<token id>',
    summary: 'Revoke a token (see tokens list for ids)',
    details: 'The server that ran the command refuses the token at once; other API processes within AUTH_CACHE_TTL_MS.',
    options: [],
    positionals: 1,
  },
  {
    name: 'migrate',
    args: '',
    summary: 'Apply database migrations (serve and worker also do it at start)',
    details: 'Prints {"applied": [...]}, the migrations this run applied.',
    options: [],
  },
  {
    name: 'storage migrate',
    args: '--to s3|embedded',
    summary: 'Move the bytes of every file to the bucket (s3) or into the database (embedded)',
    details: `Needs the bucket's settings (S3_BUCKET, S3_ENDPOINT, S3_REGION, S3_ACCESS_KEY_ID,
S3_SECRET_ACCESS_KEY, S3_FORCE_PATH_STYLE). Each file is copied, read back and checked against its
sha256 before the source lets it go (to s3: the database's copy is cleared; to embedded: the bucket's
objects stay, delete them once done). Prints a progress line per batch on standard error and
{"to", "moved", "bytes", "failed"} at the end; exits 1 if a file could not be moved. Stopped at any
point, it is resumed by running it again. Files keep being served throughout (from whichever store
holds them); set FILE_STORAGE to the target so that new files go there too. On the embedded
database, stop the server first (it holds DATA_DIR).`,
    options: ['to'],
  },
  {
    name: 'backup',
    args: '--out FILE',
    summary: 'Write a consistent backup of the database to FILE, while the server runs',
    details: `One snapshot of every table (on PostgreSQL a REPEATABLE READ transaction; on the embedded
database the running server takes it, reached through DATA_DIR/folio.sock, and keeps answering
requests), written as gzip-compressed JSON lines with the schema version in its first line.
FILE is replaced only once the new backup is complete; it is created with mode 0600 (it holds
secrets: token hashes, signing keys). Prints {"backup": {"out", "bytes", "tables", "rows", ...}}.
See docs/operating.md#backups.`,
    options: ['out'],
  },
  {
    name: 'restore',
    args: 'FILE',
    summary: 'Load a backup into an empty database (DATABASE_URL) or a new DATA_DIR',
    details: `Refuses a target that is not empty. Creates the schema through the migrations up to the
backup's version, loads every row, checks every reference, sets the sequences, then applies the
migrations that came after the backup. A backup of the embedded database restores into
PostgreSQL and the other way round. Prints {"restored": {"into", "tables", "rows", ...}}.`,
    options: [],
    positionals: 1,
  },
  {
    name: 'help',
    args: '[command]',
    summary: 'Show this help, or a command\'s',
    details: 'Also: folio --help, folio <command> --help.',
    options: [],
  },
];

const ENVIRONMENT = `Environment: PORT, HOST, DATA_DIR, DATABASE_URL, PUBLIC_URL, FOLIO_ADMIN_EMAIL, WORKERS,
LOG_LEVEL and more: see docs/operating.md.`;

function synopsis(cmd: Command): string {
  return `folio ${cmd.name}${cmd.args ? ` ${cmd.args}` : ''}`;
}

function usage(): string {
  const column = 42;
  const lines = COMMANDS.map((c) => {
    const left = `  ${synopsis(c)}`;
    return left.length < column ? `${left.padEnd(column)}${c.summary}` : `${left}\n${' '.repeat(column)}${c.summary}`;
  });
  return `Usage: folio <command> [options]

Commands:
${lines.join('\n')}

folio help <command> (or folio <command> --help) for a command's details.
${ENVIRONMENT}`;
}

function commandUsage(cmd: Command): string {
  return `Usage: ${synopsis(cmd)}

${cmd.summary}.
${cmd.details}

${ENVIRONMENT}`;
}

/** A mistake in how the command was written: exit 2 with the usage. */
class UsageError extends Error {
  constructor(
    message: string,
    readonly command?: Command,
  ) {
    super(message);
  }
}

/** A failure the operator can fix, said in one message without a stack: exit 1. */
class CliError extends Error {}

function findCommand(words: string[]): { command: Command; rest: string[] } | undefined {
  for (const cmd of COMMANDS) {
    const parts = cmd.name.split(' ');
    if (parts.every((p, i) => words[i] === p)) return { command: cmd, rest: words.slice(parts.length) };
  }
  return undefined;
}

/** The commands whose name starts with `word` (`tokens` → tokens create, list, revoke). */
function group(word: string): Command[] {
  return COMMANDS.filter((c) => c.name.split(' ')[0] === word && c.name.includes(' '));
}

function groupUsage(word: string): string {
  return `Usage:\n${group(word)
    .map((c) => `  ${synopsis(c)}\n      ${c.summary}`)
    .join('\n')}\n\nfolio help ${word} <subcommand> for details.`;
}

function parse(cmd: Command, args: string[]) {
  let parsed;
  try {
    parsed = parseArgs({
      args,
      options: {
        ...Object.fromEntries(cmd.options.map((n) => [n, { type: 'string' as const }])),
        help: { type: 'boolean' as const, short: 'h' },
      },
      strict: true,
      allowPositionals: true,
    });
  } catch (err) {
    // Node's message goes on about positional arguments starting with '-': its first sentence says it.
    const message = err instanceof Error ? err.message.replace(/\. To specify a positional argument[\s\S]*$/, '') : String(err);
    throw new UsageError(message, cmd);
  }
  const values = parsed.values as Record<string, string | boolean | undefined>;
  if (values.help) return { help: true as const };
  const expected = cmd.positionals ?? 0;
  if (parsed.positionals.length > expected) throw new UsageError(`Unexpected argument "${parsed.positionals[expected]}"`, cmd);
  return { help: false as const, values: values as Record<string, string | undefined>, positionals: parsed.positionals };
}

function print(value: unknown): void {
  process.stdout.write(JSON.stringify(value) + '\n');
}

function say(line: string): void {
  process.stderr.write(line + '\n');
}

/** Runs one administration command with the database open, and always closes it. */
async function withDatabase<T>(config: Config, purpose: string, fn: (db: Db) => Promise<T>, migrateFirst: boolean): Promise<T> {
  const { migrate, openDatabase } = await import('./platform/db/database.ts');
  const handle = await openDatabase(config, purpose);
  try {
    if (migrateFirst) await migrate(handle.db);
    return await fn(handle.db);
  } finally {
    await handle.close();
  }
}

function lockHolder(dataDir: string): { purpose?: string } | undefined {
  try {
    return JSON.parse(readFileSync(join(dataDir, 'folio.lock'), 'utf8'));
  } catch {
    return undefined;
  }
}

/** How long a command waits for a server that holds the data directory but is still starting. */
const SERVER_STARTING_WAIT_MS = 30_000;

/**
 * Runs an administration command. On PostgreSQL the CLI opens the database itself (it is shared).
 * On the embedded database it asks the server that holds DATA_DIR, if one runs, over its socket;
 * otherwise it opens DATA_DIR itself, under the same lock every process takes.
 */
async function admin(request: AdminRequest, opts: { answerTimeoutMs?: number } = {}): Promise<unknown> {
  const config = loadConfig();
  const local = async () => {
    const [{ parseAdminRequest, runAdminCommand }, { Urls }, { setPasswordHashCost }] = await Promise.all([import('./admin.ts'), import('./platform/urls.ts'), import('./sign-in/password-hash.ts')]);
    setPasswordHashCost(config.passwordHashCost);
    const ctx = (db: Db) => ({ db, urls: new Urls(config) });
    // A command that ends tokens tells running servers at once (on PostgreSQL: through Redis or
    // LISTEN/NOTIFY), as the server's own token routes do; the embedded database has no other process.
    const endsTokens = request.command === 'tokens revoke' || request.command === 'users set-password';
    const run = async (db: Db) => {
      if (!endsTokens || !config.databaseUrl) return runAdminCommand(ctx(db), parseAdminRequest(request));
      const [{ openSharedState }, { TokenCache }] = await Promise.all([import('./platform/shared-state.ts'), import('./platform/auth.ts')]);
      const shared = await openSharedState(config, db);
      try {
        return await runAdminCommand({ ...ctx(db), tokenCache: new TokenCache(0, { bus: shared.bus }) }, parseAdminRequest(request));
      } finally {
        await shared.close();
      }
    };
    return withDatabase(config, request.command, run, request.command !== 'migrate' && request.command !== 'backup');
  };
  if (config.databaseUrl) return local();
  const deadline = Date.now() + SERVER_STARTING_WAIT_MS;
  for (;;) {
    const asked = await askAdminSocket(config.dataDir, request, opts);
    if (asked.reached) return asked.result;
    try {
      return await local();
    } catch (err) {
      // A server holds the lock from its first step, its socket listens once it serves: wait.
      if (!(err instanceof DataDirLockedError) || lockHolder(config.dataDir)?.purpose !== 'server' || Date.now() > deadline) throw err;
      await new Promise((r) => setTimeout(r, 250));
    }
  }
}

/** `folio storage migrate`: the move runs in this process, with a progress line per batch. */
async function migrateStorage(to: 's3' | 'embedded') {
  const config = loadConfig();
  if (!config.s3) throw new CliError('storage migrate needs the bucket: set S3_BUCKET (and S3_ENDPOINT, S3_REGION, S3_ACCESS_KEY_ID, S3_SECRET_ACCESS_KEY, S3_FORCE_PATH_STYLE as your service needs)');
  const { moveBlobs, openBlobs } = await import('./platform/blob-store.ts');
  const outcome = await withDatabase(
    config,
    'storage migrate',
    async (db) => {
      const blobs = await openBlobs(db, config);
      try {
        return await moveBlobs(blobs, db, to, (p) => say(`storage migrate: ${p.moved} moved (${(p.bytes / 1048576).toFixed(1)} MB), ${p.remaining} to go, ${p.failed.length} failed`));
      } finally {
        blobs.close();
      }
    },
    true,
  );
  for (const f of outcome.failed) say(`storage migrate: file ${f.hash} not moved: ${f.reason}`);
  if (config.fileStorage !== to) say(`storage migrate: FILE_STORAGE is ${config.fileStorage}: set FILE_STORAGE=${to} so that new files go to the same store`);
  if (outcome.failed.length) {
    print({ to, moved: outcome.moved, bytes: outcome.bytes, failed: outcome.failed });
    throw new CliError(`${outcome.failed.length} file(s) could not be moved; run the command again to retry them`);
  }
  return { to, moved: outcome.moved, bytes: outcome.bytes, failed: [] };
}

/** Turns a failure to listen into what to change; undefined for other errors. */
function listenProblem(err: unknown, config: Config): CliError | undefined {
  const code = (err as NodeJS.ErrnoException | undefined)?.code;
  if (code === 'EADDRINUSE') {
    return new CliError(
      `Port ${config.port} on ${config.host} is already in use (another Folio, or another program). ` +
        `Set PORT to a free port (for example PORT=${config.port === 65535 ? 8081 : config.port + 1} npm start), or HOST to listen on another address.`,
    );
  }
  if (code === 'EACCES') return new CliError(`Not allowed to listen on port ${config.port} (ports below 1024 need privileges): set PORT to 1024 or above.`);
  if (code === 'EADDRNOTAVAIL' || code === 'ENOTFOUND' || code === 'EAI_AGAIN') {
    return new CliError(`Cannot listen on HOST=${config.host}: not an address of this machine. Set HOST to 127.0.0.1 (this machine only) or 0.0.0.0 (all interfaces).`);
  }
  return undefined;
}

/** Fails fast, before a first start spends seconds creating the database, when the port is taken. */
async function checkCanListen(config: Config): Promise<void> {
  if (config.port === 0) return;
  await new Promise<void>((resolve, reject) => {
    const probe = createServer();
    probe.once('error', reject);
    probe.listen({ port: config.port, host: config.host, exclusive: true }, () => probe.close(() => resolve()));
  }).catch((err) => {
    throw listenProblem(err, config) ?? err;
  });
}

/** Stops `close` on SIGTERM or SIGINT, then exits. */
function stopOnSignals(close: () => Promise<void>, what: string): void {
  let stopping = false;
  const stop = (signal: string) => {
    if (stopping) return;
    stopping = true;
    say(`${signal}: ${what}...`);
    close().then(
      () => process.exit(0),
      (err) => {
        say(`Shutdown failed: ${err instanceof Error ? err.message : err}`);
        process.exit(1);
      },
    );
  };
  process.on('SIGTERM', () => stop('SIGTERM'));
  process.on('SIGINT', () => stop('SIGINT'));
}

function describeDatabase(config: Config): string {
  return config.databaseUrl ? 'PostgreSQL (DATABASE_URL)' : `embedded database in ${config.dataDir}`;
}

async function adminEmail(): Promise<string> {
  const email = process.env.FOLIO_ADMIN_EMAIL || 'admin@localhost';
  const { normalizeEmail } = await import('./users/service.ts');
  try {
    return normalizeEmail(email);
  } catch {
    throw new ConfigError(`FOLIO_ADMIN_EMAIL must be an email address, got "${email}"`);
  }
}

async function serve(): Promise<void> {
  const config = loadConfig();
  await checkCanListen(config);
  say(`Folio ${version()}: starting with the ${describeDatabase(config)}`);
  const { startServer } = await import('./server.ts');
  const email = await adminEmail();
  let server;
  try {
    server = await startServer(config, { report: say, firstAdmin: email, adminSocket: true });
  } catch (err) {
    throw listenProblem(err, config) ?? err;
  }
  const url = server.url;
  say(`Folio listening on ${url} (${describeDatabase(config)})`);
  say(`API reference: ${url}/docs   OpenAPI: ${url}/v1/openapi.json   Health: ${url}/healthz ${url}/readyz`);
  if (!config.runWorkers) say('Background jobs: not run by this process (WORKERS=false); run ./bin/folio worker beside it');
  if (server.adminSocket) say(`Administration commands (./bin/folio users create, tokens ...) reach this server through ${server.adminSocket}`);
  if (server.firstAdmin) {
    const { token } = server.firstAdmin;
    say('');
    say(`First start: created the administrator ${server.firstAdmin.email} (FOLIO_ADMIN_EMAIL). Its API token, shown only now:`);
    say('');
    say(`  ${token}`);
    say('');
    say('Try it:');
    say(`  curl -H "Authorization: Bearer ${token}" ${url}/v1/user`);
    say(`  curl -X POST -H "Authorization: Bearer ${token}" -H 'Content-Type: application/json' -d '{"title":"My docs"}' ${url}/v1/orgs`);
    say('More users: ./bin/folio users create --email you@example.com --name "Your Name"');
    say('');
    const setup = server.firstAdmin.passwordSetup;
    say('To sign in to the app, choose the administrator\'s password here (a one-time link, shown only now):');
    say('');
    say(`  ${setup.url}`);
    say('');
    say(`The link works once, until ${setup.expiresAt.toISOString()} (24 hours). Lost or expired: ./bin/folio users setup-link --email ${server.firstAdmin.email} (a new link), or users set-password (reads the password from standard input)`);
    say('');
  }
  say(`Ready in ${(performance.now() / 1000).toFixed(1)} s (Ctrl-C stops)`);
  stopOnSignals(() => server.close(), 'finishing in-flight requests and closing the database');
}

async function worker(): Promise<void> {
  const config = loadConfig();
  if (!config.databaseUrl) {
    throw new CliError(
      'folio worker needs PostgreSQL (DATABASE_URL): the embedded database allows a single process, ' +
        'and ./bin/folio serve already runs the background jobs there. To scale out, run N ' +
        '`WORKERS=false folio serve` and M `folio worker` processes with the same DATABASE_URL.',
    );
  }
  say(`Folio ${version()} worker: starting with ${describeDatabase(config)}`);
  const { startWorker } = await import('./server.ts');
  const running = await startWorker(config, { report: say });
  say(`Running background jobs only (no HTTP API), polling every ${config.jobPollMs} ms (JOB_POLL_MS)`);
  say(`Ready in ${(performance.now() / 1000).toFixed(1)} s (Ctrl-C stops)`);
  stopOnSignals(() => running.close(), 'finishing the job in progress and closing the database');
}

/** Longest input read as a password (the server refuses more than 1024 characters anyway). */
const MAX_PASSWORD_INPUT = 16 * 1024;

/** One line typed on the terminal without echo (Backspace erases, Ctrl-C cancels). */
function readHidden(prompt: string): Promise<string> {
  const stdin = process.stdin;
  process.stderr.write(prompt);
  return new Promise((resolve, reject) => {
    let value = '';
    const finish = (err?: Error) => {
      stdin.off('data', onData);
      stdin.setRawMode(false);
      stdin.pause();
      process.stderr.write('\n');
      if (err) reject(err);
      else resolve(value);
    };
    const onData = (chunk: string) => {
      for (const ch of chunk) {
        if (ch === '\r' || ch === '\n' || ch === '\u0004') return finish();
        if (ch === '\u0003') return finish(new CliError('Cancelled: the password was not changed'));
        if (ch === '\u007f' || ch === '\b') value = [...value].slice(0, -1).join('');
        else if (value.length < MAX_PASSWORD_INPUT) value += ch;
      }
    };
    stdin.setEncoding('utf8');
    stdin.setRawMode(true);
    stdin.resume();
    stdin.on('data', onData);
  });
}

/**
 * The new password, from standard input: typed twice without echo on a terminal, else the first
 * line of what is piped in. Never from argv, where ps and the shell history would show it.
 */
async function readNewPassword(): Promise<string> {
  if (process.stdin.isTTY) {
    const first = await readHidden('New password: ');
    const again = await readHidden('Once more: ');
    if (first !== again) throw new CliError('The two passwords differ: the password was not changed');
    return first;
  }
  let text = '';
  process.stdin.setEncoding('utf8');
  for await (const chunk of process.stdin) {
    text += chunk;
    if (text.length > MAX_PASSWORD_INPUT) throw new CliError('Standard input is too long for a password: send one line');
  }
  const newline = text.search(/\r?\n/);
  const password = newline >= 0 ? text.slice(0, newline) : text;
  if (!password) throw new CliError('No password on standard input: pipe one line (printf \'%s\\n\' "$PASSWORD" | folio users set-password --email E) or run it on a terminal');
  return password;
}

function requireOption(cmd: Command, values: Record<string, string | undefined>, name: string, what = ''): string {
  const value = values[name];
  if (value === undefined) throw new UsageError(`${cmd.name} needs --${name}${what}`, cmd);
  return value;
}

/** Runs the command; returns the exit code, or -1 for a command that keeps running (serve, worker). */
export async function main(argv: string[]): Promise<number> {
  if (argv.length === 0) throw new UsageError('No command given');
  if (argv[0] === '--help' || argv[0] === '-h' || (argv[0] === 'help' && argv.length === 1)) {
    process.stdout.write(usage() + '\n');
    return 0;
  }
  if (argv[0] === 'help') {
    const words = argv.slice(1);
    const found = findCommand(words);
    if (found && found.rest.length === 0) process.stdout.write(commandUsage(found.command) + '\n');
    else if (words.length === 1 && group(words[0]!).length) process.stdout.write(groupUsage(words[0]!) + '\n');
    else throw new UsageError(`Unknown command "${words.join(' ')}"`);
    return 0;
  }
  const found = findCommand(argv);
  if (!found) {
    const word = argv[0]!;
    if (group(word).length) {
      if (argv[1] === '--help' || argv[1] === '-h') {
        process.stdout.write(groupUsage(word) + '\n');
        return 0;
      }
      throw new UsageError(argv[1] ? `Unknown command "${word} ${argv[1]}"` : `"${word}" needs a subcommand: ${group(word).map((c) => c.name).join(', ')}`);
    }
    throw new UsageError(`Unknown command "${word}"`);
  }
  const { command: cmd } = found;
  const parsed = parse(cmd, found.rest);
  if (parsed.help) {
    process.stdout.write(commandUsage(cmd) + '\n');
    return 0;
  }
  const { values, positionals } = parsed;
  switch (cmd.name) {
    case 'serve':
      await serve();
      return -1;
    case 'worker':
      await worker();
      return -1;
    case 'help':
      return 0; // handled above
    case 'migrate':
      print(await admin({ command: 'migrate' }));
      return 0;
    case 'backup': {
      const out = resolve(requireOption(cmd, values, 'out'));
      if (!existsSync(dirname(out))) throw new CliError(`No directory ${dirname(out)} to write ${basename(out)} in`);
      const config = loadConfig();
      // Opening an empty DATA_DIR would create a database just to find nothing in it.
      if (!config.databaseUrl && !existsSync(join(config.dataDir, 'PG_VERSION'))) throw new CliError(`No database in DATA_DIR=${config.dataDir}: nothing to back up`);
      // A backup takes as long as the database is large: no answer timeout.
      print(await admin({ command: 'backup', out }, { answerTimeoutMs: 0 }));
      return 0;
    }
    case 'restore': {
      if (positionals.length !== 1) throw new UsageError('restore needs the backup file', cmd);
      const [{ restoreInto }, { emptyFilesReport, filesSectionHandler }] = await Promise.all([import('./platform/db/backup.ts'), import('./platform/backup-files.ts')]);
      const config = loadConfig();
      const files = emptyFilesReport();
      const restored = await restoreInto(config, resolve(positionals[0]!), { sections: { files: filesSectionHandler(config, files) } });
      print({ restored: { ...restored, files } });
      if (files.inBucket > 0 && !files.checked) process.stderr.write(`${files.inBucket} files are in an S3 bucket: set the S3_* settings (as the server has them) and they are served from it; this restore could not check it holds them\n`);
      if (files.missingCount > 0) process.stderr.write(`The bucket does not hold ${files.missingCount} of the backup's files (first: ${files.missing.slice(0, 3).join(', ')}): restore the bucket from its own backup\n`);
      return 0;
    }
    case 'users create':
      print(await admin({ command: 'users create', email: requireOption(cmd, values, 'email'), name: requireOption(cmd, values, 'name') }));
      return 0;
    case 'users setup-link':
      print(await admin({ command: 'users setup-link', user: requireOption(cmd, values, 'email') }));
      return 0;
    case 'users set-password': {
      const email = requireOption(cmd, values, 'email');
      print(await admin({ command: 'users set-password', user: email, password: await readNewPassword() }));
      return 0;
    }
    case 'tokens create':
      print(await admin({ command: 'tokens create', user: requireOption(cmd, values, 'user', ' <id or email>'), name: values.name, expiresIn: values['expires-in'] }));
      return 0;
    case 'tokens list':
      print(await admin({ command: 'tokens list', user: requireOption(cmd, values, 'user', ' <id or email>') }));
      return 0;
    case 'storage migrate': {
      const to = requireOption(cmd, values, 'to', ' s3|embedded');
      if (to !== 's3' && to !== 'embedded') throw new UsageError(`--to must be s3 or embedded, got "${to}"`, cmd);
      print(await migrateStorage(to));
      return 0;
    }
    case 'tokens revoke':
      if (positionals.length !== 1) throw new UsageError('tokens revoke needs one token id (see tokens list)', cmd);
      print(await admin({ command: 'tokens revoke', id: positionals[0]! }));
      return 0;
  }
  throw new Error(`Command ${cmd.name} has no implementation`);
}

export async function run(argv: string[]): Promise<void> {
  try {
    const code = await main(argv);
    if (code >= 0) process.exit(code);
  } catch (err) {
    if (err instanceof UsageError) {
      process.stderr.write(`folio: ${err.message}\n\n${err.command ? commandUsage(err.command) : usage()}\n`);
      process.exit(2);
    }
    if (err instanceof CliError || err instanceof DataDirLockedError || err instanceof ConfigError || err instanceof HttpError) {
      process.stderr.write(`folio: ${err.message}\n`);
      process.exit(1);
    }
    process.stderr.write(`folio: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
    process.exit(1);
  }
}
