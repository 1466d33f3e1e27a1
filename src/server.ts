import { randomBytes } from 'node:crypto';
import { IMPORT_RUN_JOB, importRunJob } from './imports/jobs.ts';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import Fastify from 'fastify';
import { createFirstAdmin, parseAdminRequest, runAdminCommand } from './admin.ts';
import { closeConversions } from './content/convert.ts';
import { listenAdminSocket, type AdminSocket } from './platform/admin-socket.ts';
import type { FolioApp } from './platform/app.ts';
import { buildFolioApp } from './routes.ts';
import { setPasswordHashCost } from './sign-in/password-hash.ts';
import { wireAreas } from './wiring.ts';
import { TokenCache } from './platform/auth.ts';
import { MEMORY_DATA_DIR, type Config } from './platform/config.ts';
import { insertSettingIfAbsent, readSetting } from './platform/settings.ts';
import type { Services } from './platform/context.ts';
import { migrate, openDatabase, type Db, type DatabaseHandle } from './platform/db/database.ts';
import { Jobs } from './platform/jobs.ts';
import { openBlobs } from './platform/blob-store.ts';
import { openSharedState, type SharedState } from './platform/shared-state.ts';
import { Urls } from './platform/urls.ts';
import { applySpaceLanguage, refreshStaleSearchIndexes, SEARCH_LANGUAGE_JOB } from './search/indexer.ts';
import { EMBED_JOB, embedJob, queueStaleEmbeddings } from './ask/vectors.ts';
import { PURGE_SPACE_JOB, purgeSpaceJob } from './spaces/service.ts';
import { registerInsightJobs } from './insights/process.ts';
import { translationRunJob } from './translations/run.ts';
import { TRANSLATION_RUN_JOB } from './translations/service.ts';
import { OPENAPI_PROCESS_JOB, processSpecJob } from './openapi/service.ts';
import { closeOpenAPIWorkers } from './openapi/workers.ts';
import { GIT_EXPORT_JOB, GIT_IMPORT_JOB } from './git/auto-export.ts';
import { exportJob, importJob } from './git/jobs.ts';
import { registerIntegrationJobs } from './integrations/dispatch.ts';
import { closeSandboxes } from './integrations/sandbox.ts';
import { closePrinters } from './pdf/browser.ts';
import { PDF_EXPORT_JOB, pdfExportJob } from './pdf/service.ts';
import { startCollab, type CollabServer } from './collab/server.ts';

/** The key that signs JWTs, created once and kept in the database so it survives restarts. */
async function signingKey(db: Db): Promise<Uint8Array> {
  await insertSettingIfAbsent(db, 'jwt_signing_key', randomBytes(32).toString('base64'));
  return new Uint8Array(Buffer.from(await readSetting(db, 'jwt_signing_key'), 'base64'));
}

export interface RunningServer {
  app: FolioApp;
  services: Services;
  database: DatabaseHandle;
  url: string;
  /** Migrations this start applied (empty when the schema was up to date). */
  migrations: string[];
  /** The first administrator, when this start created it (opts.firstAdmin on a database without users). */
  firstAdmin: Awaited<ReturnType<typeof createFirstAdmin>>;
  /** Path of the administration socket (embedded database with opts.adminSocket). */
  adminSocket: string | undefined;
  /** Live co-editing's server (src/collab/), on this server's `/collab`. */
  collab: CollabServer;
  /** Stops accepting requests, finishes those in flight and the running job, closes the database. */
  close(): Promise<void>;
}

export interface StartOptions {
  purpose?: string;
  logStream?: NodeJS.WritableStream;
  /** Told each step of the start, as a line for the operator. */
  report?: (line: string) => void;
  /** Create the first administrator with this email when the database has no user. */
  firstAdmin?: string;
  /** Let administration commands reach this process over DATA_DIR/folio.sock (embedded database only). */
  adminSocket?: boolean;
  /** Adds routes before the server listens (benchmarks compare Folio with a baseline served the same way). */
  extend?: (app: FolioApp) => void;
  /** The clock (Date.now by default); tests pass one they move forward instead of sleeping (Services.now). */
  now?: () => number;
  /** Compile every route's validators and serializers at start rather than on first use; see buildApp. */
  compileSchemasAtStart?: boolean;
  /** With `DATA_DIR=memory://`, what the embedded database holds at the start (see openDatabase). */
  initialData?: Blob;
}

/** Opens and migrates the database, saying what it does; the first start of PGlite runs initdb. */
async function openAndMigrate(config: Config, purpose: string, report: (line: string) => void, initialData?: Blob) {
  const inMemory = !config.databaseUrl && config.dataDir === MEMORY_DATA_DIR;
  const creating = !config.databaseUrl && !inMemory && !existsSync(join(config.dataDir, 'PG_VERSION'));
  const started = performance.now();
  if (creating) report(`Creating the embedded database in ${config.dataDir} (first start only, a few seconds)...`);
  if (inMemory) report('The embedded database is in memory (DATA_DIR=memory://): nothing is kept when Folio stops');
  const database = await openDatabase(config, purpose, { initialData });
  try {
    if (creating) report(`Database created in ${seconds(started)}`);
    const migrations = await migrate(database.db);
    report(migrations.length ? `Migrations applied: ${migrations.join(', ')}` : 'Database schema up to date');
    return { database, migrations };
  } catch (err) {
    await database.close();
    throw err;
  }
}

function seconds(since: number): string {
  return `${((performance.now() - since) / 1000).toFixed(1)} s`;
}

async function createServices(config: Config, database: DatabaseHandle, shared: SharedState, now: () => number = Date.now): Promise<Services> {
  wireAreas();
  setPasswordHashCost(config.passwordHashCost);
  return {
    db: database.db,
    config,
    urls: new Urls(config),
    jobs: new Jobs(database.db, { pollMs: config.jobPollMs, now }),
    blobs: await openBlobs(database.db, config),
    signingKey: await signingKey(database.db),
    tokenCache: new TokenCache(config.authCacheTtlMs, { now, bus: shared.bus }),
    bus: shared.bus,
    rateLimitStore: shared.rateLimits,
    prepared: database.prepared,
    now,
  };
}

/** Opens the database, migrates, and starts the HTTP API and the background workers. */
export async function startServer(config: Config, opts: StartOptions = {}): Promise<RunningServer> {
  const report = opts.report ?? (() => {});
  const { database, migrations } = await openAndMigrate(config, opts.purpose ?? 'server', report, opts.initialData);
  let adminSocket: AdminSocket | undefined;
  let started: Awaited<ReturnType<typeof buildFolioApp>> | undefined;
  let shared: SharedState | undefined;
  let collab: CollabServer | undefined;
  try {
    shared = await openSharedState(config, database.db);
    if (shared.describe) report(shared.describe);
    const services = await createServices(config, database, shared, opts.now);
    const { jobs } = services;
    const app = (started = await buildFolioApp(services, { logLevel: config.logLevel, logStream: opts.logStream, compileSchemasAtStart: opts.compileSchemasAtStart }));
    jobs.logger = app.log;
    setBusLogger(shared, app.log);
    opts.extend?.(app);
    collab = startCollab(services, app.server, app.log);
    await registerJobHandlers(services);
    // A merge killed between its commit and its search update leaves the index behind the content.
    await refreshStaleSearchIndexes(database.db, jobs);
    // With an embedding model, spaces whose section vectors are behind their index are embedded in the background.
    if (config.aiEmbeddingModel) await queueStaleEmbeddings(database.db, jobs, config.aiEmbeddingModel);
    await app.listen({ port: config.port, host: config.host });
    // Only once the port is ours: a start that fails to listen must not create an administrator
    // whose token nobody sees (it is created only while no user exists).
    const firstAdmin = opts.firstAdmin !== undefined ? await createFirstAdmin(database.db, opts.firstAdmin, services.urls, services.now) : undefined;
    if (opts.adminSocket && database.engine === 'pglite' && config.dataDir !== MEMORY_DATA_DIR) {
      try {
        adminSocket = await listenAdminSocket(
          config.dataDir,
          (raw) => runAdminCommand(services, parseAdminRequest(raw)),
          (err) => app.log.error({ err }, 'administration command failed'),
        );
      } catch (err) {
        report(`Warning: ${err instanceof Error ? err.message : err}`);
      }
    }
    if (config.runWorkers) jobs.start();
    const address = app.server.address();
    const port = typeof address === 'object' && address ? address.port : config.port;
    const host = config.host.includes(':') ? `[${config.host}]` : config.host;
    let closing: Promise<void> | undefined;
    return {
      app,
      services,
      database,
      url: `http://${host}:${port}`,
      migrations,
      firstAdmin,
      adminSocket: adminSocket?.path,
      collab,
      close: () =>
        (closing ??= (async () => {
          await adminSocket?.close();
          // What editors typed and the delay has not saved yet is saved before the database closes.
          await collab!.close();
          await app.close();
          await jobs.stop();
          await closeConversions();
          await closeOpenAPIWorkers();
          await closeSandboxes();
          await closePrinters();
          await shared!.close();
          services.blobs.close();
          await database.close();
        })()),
    };
  } catch (err) {
    await adminSocket?.close();
    await collab?.close().catch(() => {});
    await shared?.close();
    // A start that failed after the app was built (listening, the first administrator) closes it.
    await started?.close().catch(() => {});
    await database.close();
    throw err;
  }
}

export interface RunningWorker {
  services: Services;
  migrations: string[];
  /** Finishes the job in progress, takes no new one, closes the database. */
  close(): Promise<void>;
}

/**
 * Background jobs only, no HTTP API: for scale-out, next to API processes started with
 * WORKERS=false, all on one PostgreSQL. Jobs are claimed with SKIP LOCKED leases, so any number of
 * workers can poll the same queue without running a job twice.
 */
export async function startWorker(config: Config, opts: Pick<StartOptions, 'report' | 'purpose'> = {}): Promise<RunningWorker> {
  const report = opts.report ?? (() => {});
  const { database, migrations } = await openAndMigrate(config, opts.purpose ?? 'worker', report);
  let shared: SharedState | undefined;
  try {
    // Workers publish invalidations too (a git import changes what a published site shows).
    shared = await openSharedState(config, database.db);
    if (shared.describe) report(shared.describe);
    const services = await createServices(config, database, shared);
    // The same structured logs as the API's, without an HTTP server.
    services.jobs.logger = Fastify({ logger: config.logLevel === 'silent' ? false : { level: config.logLevel } }).log;
    setBusLogger(shared, services.jobs.logger);
    await registerJobHandlers(services);
    services.jobs.start();
    let closing: Promise<void> | undefined;
    return {
      services,
      migrations,
      close: () =>
        (closing ??= (async () => {
          await services.jobs.stop();
          await closeConversions();
          await closeOpenAPIWorkers();
          await closeSandboxes();
          await closePrinters();
          await shared!.close();
          services.blobs.close();
          await database.close();
        })()),
    };
  } catch (err) {
    await shared?.close();
    await database.close();
    throw err;
  }
}

function setBusLogger(shared: SharedState, log: { warn(obj: object, msg: string): void }): void {
  shared.bus.logger = log;
}

/** Background job types known to this version. Areas add theirs here. */
async function registerJobHandlers(services: Services): Promise<void> {
  services.jobs.register(PURGE_SPACE_JOB, purgeSpaceJob(services));
  services.jobs.register(SEARCH_LANGUAGE_JOB, (payload: { spaceId: string }, { db }) => applySpaceLanguage(db, payload.spaceId));
  registerInsightJobs(services);
  // Ask's section vectors exist only with an embedding model: without one no job is registered, so none is queued.
  if (services.config.aiEmbeddingModel) services.jobs.register(EMBED_JOB, embedJob(services.config), { maxAttempts: 8 });
  services.jobs.register(TRANSLATION_RUN_JOB, translationRunJob(services), { maxAttempts: 3 });
  services.jobs.register(OPENAPI_PROCESS_JOB, processSpecJob(services));
  services.jobs.register(GIT_IMPORT_JOB, importJob(services), { maxAttempts: 3 });
  services.jobs.register(GIT_EXPORT_JOB, exportJob(services), { maxAttempts: 3 });
  services.jobs.register(IMPORT_RUN_JOB, importRunJob(services), { maxAttempts: 3 });
  services.jobs.register(PDF_EXPORT_JOB, pdfExportJob(services), { maxAttempts: 2 });
  await registerIntegrationJobs(services);
}
