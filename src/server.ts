import { randomBytes } from 'node:crypto';
import { closeConversions } from './content/convert.ts';
import { buildApp, type FolioApp } from './platform/app.ts';
import { TokenCache } from './platform/auth.ts';
import type { Config } from './platform/config.ts';
import type { Services } from './platform/context.ts';
import { migrate, openDatabase, type Db, type DatabaseHandle } from './platform/db/database.ts';
import { Jobs } from './platform/jobs.ts';
import { Urls } from './platform/urls.ts';
import { refreshStaleSearchIndexes } from './search/indexer.ts';
import { PURGE_SPACE_JOB, purgeSpaceJob } from './spaces/service.ts';

/** The key that signs JWTs, created once and kept in the database so it survives restarts. */
async function signingKey(db: Db): Promise<Uint8Array> {
  await db
    .insertInto('settings')
    .values({ key: 'jwt_signing_key', value: randomBytes(32).toString('base64') })
    .onConflict((oc) => oc.column('key').doNothing())
    .execute();
  const row = await db.selectFrom('settings').select('value').where('key', '=', 'jwt_signing_key').executeTakeFirstOrThrow();
  return new Uint8Array(Buffer.from(row.value, 'base64'));
}

export interface RunningServer {
  app: FolioApp;
  services: Services;
  database: DatabaseHandle;
  url: string;
  /** Stops accepting requests, finishes those in flight and the running job, closes the database. */
  close(): Promise<void>;
}

/** Opens the database, migrates, and starts the HTTP API and the background workers. */
export async function startServer(
  config: Config,
  opts: { purpose?: string; logStream?: NodeJS.WritableStream } = {},
): Promise<RunningServer> {
  const database = await openDatabase(config, opts.purpose ?? 'server');
  try {
    await migrate(database.db);
    const jobs = new Jobs(database.db, { pollMs: config.jobPollMs });
    const services: Services = {
      db: database.db,
      config,
      urls: new Urls(config),
      jobs,
      signingKey: await signingKey(database.db),
      tokenCache: new TokenCache(config.authCacheTtlMs),
      prepared: database.prepared,
    };
    const app = await buildApp(services, { logLevel: config.logLevel, logStream: opts.logStream });
    jobs.logger = app.log;
    registerJobHandlers(services);
    // A merge killed between its commit and its search update leaves the index behind the content.
    await refreshStaleSearchIndexes(database.db);
    await app.listen({ port: config.port, host: config.host });
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
      close: () =>
        (closing ??= (async () => {
          await app.close();
          await jobs.stop();
          await closeConversions();
          await database.close();
        })()),
    };
  } catch (err) {
    await database.close();
    throw err;
  }
}

/** Background job types known to this version. Areas add theirs here. */
function registerJobHandlers(services: Services): void {
  services.jobs.register(PURGE_SPACE_JOB, purgeSpaceJob(services));
}
