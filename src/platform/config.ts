import { resolve } from 'node:path';
import ipaddr from 'ipaddr.js';

/**
 * `DATA_DIR=memory://`: the embedded database lives in the process's memory and nothing is kept
 * when it stops (a throwaway instance, the test servers).
 */
export const MEMORY_DATA_DIR = 'memory://';

/** Everything Folio reads from its environment, parsed once at start. */
export interface Config {
  port: number;
  host: string;
  /** Directory of the embedded database (PGlite) when no DATABASE_URL is set. */
  dataDir: string;
  /** PostgreSQL connection string; when set, the embedded database is not used. */
  databaseUrl: string | undefined;
  /**
   * Redis shared by the processes of one Folio (redis:// or rediss://): rate-limit windows and
   * invalidation messages (docs/scaling.md). Unset: PostgreSQL LISTEN/NOTIFY for invalidations.
   */
  redisUrl: string | undefined;
  /** Prefix of Folio's keys and channel in Redis, so several Folio installations can share one Redis. */
  redisPrefix: string;
  /** Base of every absolute `urls.*` field, without a trailing slash. */
  publicUrl: string;
  /** Base of the links into the (future) web application. */
  appUrl: string;
  logLevel: string;
  /** Requests allowed per token (or per address when anonymous) in each rate-limit window. */
  rateLimitMax: number;
  rateLimitWindowMs: number;
  /** Most rate-limit windows kept at once (one per address or valid token); the oldest go first. */
  rateLimitMaxKeys: number;
  /** Time a client has to send a request's headers. */
  httpHeadersTimeoutMs: number;
  /** Time a client has to send a whole request, body included (a slow drip is cut off). */
  httpRequestTimeoutMs: number;
  /**
   * How long an idle kept-alive connection stays open between requests. Longer than the idle
   * timeout of common load balancers (60 s), so they never reuse a connection Folio is closing.
   */
  httpKeepAliveTimeoutMs: number;
  /** A connection on which nothing moves for this long is closed. */
  httpIdleTimeoutMs: number;
  /** Largest accepted request body, in bytes. */
  bodyLimit: number;
  /** Translation engine used by translation runs (none: runs fail saying so). */
  translationEngine: 'libretranslate' | 'openai' | undefined;
  /** Base URL of the translation engine (LibreTranslate: its root; OpenAI-compatible: the `/v1` base). */
  translationEngineUrl: string | undefined;
  /** API key sent to the translation engine. */
  translationEngineKey: string | undefined;
  /** Model named in chat-completion requests (OpenAI-compatible engines). */
  translationModel: string | undefined;
  /** Time allowed for one request to the translation engine, in milliseconds. */
  translationTimeoutMs: number;
  /** Delay before the first retry of a failed engine request (doubled at each retry, 5 attempts in all). */
  translationRetryBaseMs: number;
  /** Interval at which the background worker looks for due jobs. */
  jobPollMs: number;
  /** Whether this process runs the background workers. */
  runWorkers: boolean;
  /** How long a deleted space can be restored before it is removed for good. */
  spaceRetentionMs: number;
  /** How long this process trusts a token it has checked before looking it up again. */
  authCacheTtlMs: number;
  /** Cost of new password hashes: log2 of scrypt's N, 10 to 20 (src/sign-in/password-hash.ts). */
  passwordHashCost: number;
  /** How often custom hostnames of published sites are re-read (src/published-site/hosts.ts). */
  siteHostsRefreshMs: number;
  /** How long a published site's settings and structure are reused before being read again (src/published-site/routes.ts). */
  siteCacheTtlMs: number;
  /** Whether insert_files may fetch URLs that resolve to private or loopback addresses. */
  fetchAllowPrivate: boolean;
  /** Address ranges (CIDR) insert_files may fetch from although they are not public. */
  fetchAllowCidrs: string[];
  /** Time allowed for fetching all the URLs of one content request, in milliseconds. */
  fetchTimeoutMs: number;
  /** Most pages a website import crawls. */
  importWebsiteMaxPages: number;
  /** Most bytes a website import reads (pages, then their images, each counted apart). */
  importWebsiteMaxBytes: number;
  /** Time a website import's crawl may take, in milliseconds (it then keeps the pages it has, with a warning). */
  importWebsiteTimeoutMs: number;
  /** Most bytes the files of one content request may add up to (fetched and inline). */
  fetchMaxRequestBytes: number;
  /** How often OpenAPI specs given by URL are fetched again, in milliseconds; 0: never (only on PUT). */
  openapiRefreshMs: number;
  /** Origins browser clients may call from (`*` for any); empty: no CORS headers, no preflight. */
  corsOrigins: string[];
  /** Whether GET /metrics serves Prometheus metrics. */
  metrics: boolean;
  /** Bearer token GET /metrics requires, when set. */
  metricsToken: string | undefined;
  /** Git sync: most files a repository (or its project directory) may hold. */
  gitMaxFiles: number;
  /** Git sync: most bytes the files of a repository's project directory may add up to. */
  gitMaxBytes: number;
  /** Git sync: time allowed for one git command (fetch, push). */
  gitTimeoutMs: number;
  /** Key (32 bytes, base64) that encrypts stored git credentials; unset: one kept in the database. */
  gitSecretKey: string | undefined;
  /** How long integration events (with their traces) are kept. */
  integrationEventRetentionMs: number;
  /** Time one delivery of an event to a script or dev tunnel may take; a script past it is stopped. */
  integrationTimeoutMs: number;
  /** Most fetches a script may make while handling one event. */
  integrationSubrequestLimit: number;
  /** Memory a script may use, in MB (its runtime's own memory aside); past it the runtime is killed. */
  integrationMemoryMb: number;
  /** CPU time one delivery to a script may use, in ms (time spent waiting on fetches not counted); past it the runtime is killed. */
  integrationCpuMs: number;
  /** Deliveries of one event before it is recorded as failed. */
  integrationMaxAttempts: number;
  /** Wait before the first retry of a failed delivery; doubled at each further one. */
  integrationRetryBaseMs: number;
  /** How long a session obtained through SAML single sign-on lasts (the session cookie). */
  ssoSessionTtlMs: number;
  /** How long an app session opened by a password sign-in lasts (its cookie and the token behind it). */
  appSessionTtlMs: number;
  /** How long an API token made from an SSO session lasts. */
  ssoTokenTtlMs: number;
  /**
   * Base URL of the OpenAI-compatible API (`…/v1`) every AI feature uses (Ask, conversation
   * insights): AI_ENGINE_URL, or INSIGHTS_ENGINE_URL as before; unset: the built-in engines.
   */
  aiEngineUrl: string | undefined;
  /** API key sent to it as a bearer token (AI_ENGINE_KEY or INSIGHTS_ENGINE_KEY). */
  aiEngineKey: string | undefined;
  /** Chat model (AI_MODEL or INSIGHTS_MODEL): Ask's answers, issue extraction, cluster labels (unset: extractive answers, built-in extraction). */
  aiModel: string | undefined;
  /** Embedding model (AI_EMBEDDING_MODEL or INSIGHTS_EMBEDDING_MODEL): issue vectors (unset: built-in TF-IDF vectors). */
  aiEmbeddingModel: string | undefined;
  /** How long after new issues a cluster recomputation runs (issues join clusters at once meanwhile). */
  insightsReclusterDelayMs: number;
  /** Where new file bytes are stored: in the database (`embedded`, the default) or an S3-compatible bucket. */
  fileStorage: 'embedded' | 's3';
  /** How file downloads are answered: streamed through Folio (`proxy`) or redirected to a presigned URL of the bucket (`redirect`, S3 only). */
  fileDownloads: 'proxy' | 'redirect';
  /** Most bytes one direct upload (generateStorageUploadURL) may announce and send. */
  uploadMaxBytes: number;
  /** The bucket's settings, when S3_BUCKET is set (needed by FILE_STORAGE=s3 and by `folio storage migrate`). */
  s3: S3Settings | undefined;
  /** Live co-editing (src/collab/): how it saves, checks access and bounds what clients send. */
  collab: CollabSettings;
  /** Most connections this process opens to PostgreSQL (DATABASE_POOL_MAX): every process of a Folio counts against the server's max_connections. */
  databasePoolMax: number;
  /** PDF export (src/pdf/): the Chromium that prints, and the bounds of printing. */
  pdf: PdfSettings;
}

export interface PdfSettings {
  /** The Chromium (or Chrome) executable that prints PDFs (CHROMIUM_PATH). */
  chromiumPath: string;
  /** PDFs one process prints at once (PDF_CONCURRENCY); more wait their turn. */
  concurrency: number;
  /** Time one PDF may take to lay out and print, waiting for its turn included (PDF_TIMEOUT_MS). */
  timeoutMs: number;
  /** A PDF of more pages than this is printed by a background job, not while the request waits (PDF_BACKGROUND_PAGES). */
  backgroundPages: number;
  /** Most pages one PDF prints (PDF_MAX_PAGES): more are refused, to be printed part by part (`page`). */
  maxPages: number;
}

export interface CollabSettings {
  /** Quiet time after the last keystroke before the shared page is saved (COLLAB_SAVE_DELAY_MS). */
  saveDelayMs: number;
  /** Longest time typing goes unsaved while someone keeps typing (COLLAB_SAVE_MAX_DELAY_MS). */
  saveMaxDelayMs: number;
  /** How often each connection's access is checked again (COLLAB_RECHECK_MS): a removed member is disconnected within it. */
  recheckMs: number;
  /** Largest message a client may send (COLLAB_MAX_MESSAGE_BYTES); bigger closes its connection. */
  maxMessageBytes: number;
  /** Messages per second a connection may send, on average over a few seconds (COLLAB_MAX_MESSAGES_PER_SECOND). */
  maxMessagesPerSecond: number;
}

export interface S3Settings {
  /** Endpoint URL of an S3-compatible service (MinIO, R2, Ceph…); unset: AWS for the region. */
  endpoint: string | undefined;
  region: string;
  bucket: string;
  accessKeyId: string | undefined;
  secretAccessKey: string | undefined;
  /** Path-style addresses (`endpoint/bucket/key`), which most S3-compatible servers need. */
  forcePathStyle: boolean;
}

export class ConfigError extends Error {}

function intFrom(env: NodeJS.ProcessEnv, name: string, fallback: number, min = 0): number {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  const value = Number(raw);
  if (!Number.isInteger(value) || value < min) {
    throw new ConfigError(`${name} must be an integer >= ${min}, got "${raw}"`);
  }
  return value;
}

/** PASSWORD_HASH_COST: log2 of scrypt's N for new password hashes; 15 by default, 10 to 20. */
function passwordHashCost(env: NodeJS.ProcessEnv): number {
  const cost = intFrom(env, 'PASSWORD_HASH_COST', 15, 10);
  if (cost > 20) throw new ConfigError(`PASSWORD_HASH_COST must be an integer from 10 to 20, got "${env.PASSWORD_HASH_COST}"`);
  return cost;
}

function cidrsFrom(env: NodeJS.ProcessEnv, name: string): string[] {
  const list = (env[name] ?? '').split(',').map((s) => s.trim()).filter(Boolean);
  const bad = list.find((cidr) => !ipaddr.isValidCIDR(cidr));
  if (bad !== undefined) throw new ConfigError(`${name} must be a comma-separated list of address ranges such as 10.1.0.0/16, got "${bad}"`);
  return list;
}

/** CORS_ORIGINS: `*`, or comma-separated origins such as https://docs.example.com,http://localhost:3000. */
function originsFrom(env: NodeJS.ProcessEnv, name: string): string[] {
  const list = (env[name] ?? '').split(',').map((s) => s.trim().replace(/\/+$/, '')).filter(Boolean);
  for (const origin of list) {
    if (origin === '*') continue;
    let parsed: URL | undefined;
    try {
      parsed = new URL(origin);
    } catch {
      // reported below
    }
    if (!parsed || parsed.origin !== origin) {
      throw new ConfigError(`${name} must be * or a comma-separated list of origins such as https://docs.example.com (scheme, host and port, no path), got "${origin}"`);
    }
  }
  return list;
}

function gitKeyFrom(env: NodeJS.ProcessEnv): string | undefined {
  const raw = env.GIT_SECRET_KEY;
  if (!raw) return undefined;
  if (Buffer.from(raw, 'base64').length !== 32) throw new ConfigError('GIT_SECRET_KEY must be 32 bytes in base64 (openssl rand -base64 32)');
  return raw;
}

function trimSlash(url: string): string {
  return url.replace(/\/+$/, '');
}

function httpTimeouts(env: NodeJS.ProcessEnv) {
  const timeouts = {
    httpHeadersTimeoutMs: intFrom(env, 'HTTP_HEADERS_TIMEOUT_MS', 10_000, 100),
    httpRequestTimeoutMs: intFrom(env, 'HTTP_REQUEST_TIMEOUT_MS', 60_000, 100),
    httpKeepAliveTimeoutMs: intFrom(env, 'HTTP_KEEP_ALIVE_TIMEOUT_MS', 72_000, 100),
    httpIdleTimeoutMs: intFrom(env, 'HTTP_IDLE_TIMEOUT_MS', 60_000, 100),
  };
  // Node refuses a header timeout longer than the whole-request timeout.
  if (timeouts.httpHeadersTimeoutMs > timeouts.httpRequestTimeoutMs) {
    throw new ConfigError('HTTP_HEADERS_TIMEOUT_MS must not be larger than HTTP_REQUEST_TIMEOUT_MS');
  }
  return timeouts;
}

/** An http(s) base URL of an engine Folio calls (translation, insights), without its trailing slash. */
function engineUrl(env: NodeJS.ProcessEnv, name: string): string | undefined {
  const url = env[name] ? trimSlash(env[name]!) : undefined;
  if (url === undefined) return undefined;
  let parsed: URL | undefined;
  try {
    parsed = new URL(url);
  } catch {
    // reported below
  }
  if (!parsed || (parsed.protocol !== 'http:' && parsed.protocol !== 'https:')) {
    throw new ConfigError(`${name} must be an http(s) URL such as https://api.example.com/v1, got "${url}"`);
  }
  return url;
}

/**
 * The AI engine settings: one set for every AI feature, `AI_*`, with the older `INSIGHTS_*` names
 * still accepted (an `AI_*` setting wins over its `INSIGHTS_*` twin).
 */
function aiFrom(env: NodeJS.ProcessEnv) {
  const pick = (name: string) => (env[`AI_${name}`] ? `AI_${name}` : `INSIGHTS_${name}`);
  const urlName = pick('ENGINE_URL');
  const url = engineUrl(env, urlName);
  const model = env[pick('MODEL')] || undefined;
  const embedding = env[pick('EMBEDDING_MODEL')] || undefined;
  if (url === undefined && (model || embedding)) {
    throw new ConfigError('AI_MODEL and AI_EMBEDDING_MODEL (or INSIGHTS_MODEL, INSIGHTS_EMBEDDING_MODEL) need AI_ENGINE_URL or INSIGHTS_ENGINE_URL (the OpenAI-compatible API that serves them)');
  }
  return {
    aiEngineUrl: url,
    aiEngineKey: env[pick('ENGINE_KEY')] || undefined,
    aiModel: model,
    aiEmbeddingModel: embedding,
    insightsReclusterDelayMs: intFrom(env, 'INSIGHTS_RECLUSTER_DELAY_MS', 10 * 60_000, 0),
  };
}

function storageFrom(env: NodeJS.ProcessEnv) {
  const fileStorage = env.FILE_STORAGE || 'embedded';
  if (fileStorage !== 'embedded' && fileStorage !== 's3') throw new ConfigError(`FILE_STORAGE must be "embedded" or "s3", got "${fileStorage}"`);
  const fileDownloads = env.FILE_DOWNLOADS || 'proxy';
  if (fileDownloads !== 'proxy' && fileDownloads !== 'redirect') throw new ConfigError(`FILE_DOWNLOADS must be "proxy" or "redirect", got "${fileDownloads}"`);
  const endpoint = engineUrl(env, 'S3_ENDPOINT');
  const bucket = env.S3_BUCKET || undefined;
  if (fileStorage === 's3' && !bucket) throw new ConfigError('FILE_STORAGE=s3 needs S3_BUCKET (and S3_REGION, S3_ENDPOINT for a service other than AWS, and credentials)');
  if (fileDownloads === 'redirect' && !bucket) throw new ConfigError('FILE_DOWNLOADS=redirect needs a bucket (S3_BUCKET): the embedded store has no URL of its own to redirect to');
  if (!!env.S3_ACCESS_KEY_ID !== !!env.S3_SECRET_ACCESS_KEY) throw new ConfigError('S3_ACCESS_KEY_ID and S3_SECRET_ACCESS_KEY go together: set both, or neither to use the AWS default credentials');
  const forcePathStyle = env.S3_FORCE_PATH_STYLE || 'false';
  if (forcePathStyle !== 'true' && forcePathStyle !== 'false') throw new ConfigError(`S3_FORCE_PATH_STYLE must be "true" or "false", got "${forcePathStyle}"`);
  return {
    fileStorage: fileStorage as 'embedded' | 's3',
    fileDownloads: fileDownloads as 'proxy' | 'redirect',
    uploadMaxBytes: intFrom(env, 'UPLOAD_MAX_BYTES', 100 * 1024 * 1024, 1),
    s3: bucket
      ? {
          endpoint,
          region: env.S3_REGION || 'us-east-1',
          bucket,
          accessKeyId: env.S3_ACCESS_KEY_ID || undefined,
          secretAccessKey: env.S3_SECRET_ACCESS_KEY || undefined,
          forcePathStyle: forcePathStyle === 'true',
        }
      : undefined,
  };
}

function translationEngine(env: NodeJS.ProcessEnv) {
  const engine = env.TRANSLATION_ENGINE || undefined;
  if (engine !== undefined && engine !== 'libretranslate' && engine !== 'openai') {
    throw new ConfigError(`TRANSLATION_ENGINE must be "libretranslate" or "openai", got "${engine}"`);
  }
  return {
    translationEngine: engine as 'libretranslate' | 'openai' | undefined,
    translationEngineUrl: engineUrl(env, 'TRANSLATION_ENGINE_URL'),
    translationEngineKey: env.TRANSLATION_ENGINE_KEY || undefined,
    translationModel: env.TRANSLATION_MODEL || undefined,
    translationTimeoutMs: intFrom(env, 'TRANSLATION_TIMEOUT_MS', 60_000, 1),
    translationRetryBaseMs: intFrom(env, 'TRANSLATION_RETRY_BASE_MS', 500, 0),
  };
}

export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  const port = intFrom(env, 'PORT', 8080);
  if (port > 65535) throw new ConfigError(`PORT must be at most 65535, got ${port}`);
  const host = env.HOST || '127.0.0.1';
  const databaseUrl = env.DATABASE_URL || undefined;
  if (databaseUrl && !/^postgres(ql)?:\/\//.test(databaseUrl)) {
    throw new ConfigError('DATABASE_URL must start with postgres:// or postgresql://');
  }
  const redisUrl = env.REDIS_URL || undefined;
  if (redisUrl && !/^rediss?:\/\//.test(redisUrl)) {
    throw new ConfigError('REDIS_URL must start with redis:// or rediss://');
  }
  const publicUrl = trimSlash(env.PUBLIC_URL || `http://${host.includes(':') ? `[${host}]` : host}:${port}`);
  try {
    new URL(publicUrl);
  } catch {
    throw new ConfigError(`PUBLIC_URL must be an absolute URL, got "${env.PUBLIC_URL}"`);
  }
  return {
    port,
    host,
    dataDir: env.DATA_DIR === MEMORY_DATA_DIR ? MEMORY_DATA_DIR : resolve(env.DATA_DIR || './data'),
    databaseUrl,
    redisUrl,
    redisPrefix: env.REDIS_PREFIX ?? 'folio:',
    publicUrl,
    appUrl: trimSlash(env.APP_URL || publicUrl),
    logLevel: env.LOG_LEVEL || 'info',
    rateLimitMax: intFrom(env, 'RATE_LIMIT_MAX', 6000, 1),
    rateLimitWindowMs: intFrom(env, 'RATE_LIMIT_WINDOW_MS', 60_000, 1),
    rateLimitMaxKeys: intFrom(env, 'RATE_LIMIT_MAX_KEYS', 100_000, 1),
    ...httpTimeouts(env),
    bodyLimit: intFrom(env, 'BODY_LIMIT', 2 * 1024 * 1024, 1024),
    ...translationEngine(env),
    jobPollMs: intFrom(env, 'JOB_POLL_MS', 1000, 10),
    runWorkers: env.WORKERS !== 'false',
    spaceRetentionMs: intFrom(env, 'SPACE_RETENTION_MS', 7 * 24 * 3600 * 1000, 0),
    authCacheTtlMs: intFrom(env, 'AUTH_CACHE_TTL_MS', 5000, 0),
    passwordHashCost: passwordHashCost(env),
    siteHostsRefreshMs: intFrom(env, 'SITE_HOSTS_REFRESH_MS', 5000, 100),
    siteCacheTtlMs: intFrom(env, 'SITE_CACHE_TTL_MS', 1000, 0),
    fetchAllowPrivate: env.FETCH_ALLOW_PRIVATE === 'true',
    fetchAllowCidrs: cidrsFrom(env, 'FETCH_ALLOW_CIDRS'),
    fetchTimeoutMs: intFrom(env, 'FETCH_TIMEOUT_MS', 30_000, 1),
    importWebsiteMaxPages: intFrom(env, 'IMPORT_WEBSITE_MAX_PAGES', 500, 1),
    importWebsiteMaxBytes: intFrom(env, 'IMPORT_WEBSITE_MAX_BYTES', 200 * 1024 * 1024, 1024),
    importWebsiteTimeoutMs: intFrom(env, 'IMPORT_WEBSITE_TIMEOUT_MS', 5 * 60_000, 1000),
    fetchMaxRequestBytes: intFrom(env, 'FETCH_MAX_REQUEST_BYTES', 25 * 1024 * 1024, 1),
    openapiRefreshMs: intFrom(env, 'OPENAPI_REFRESH_INTERVAL_MS', 6 * 3600 * 1000, 0),
    corsOrigins: originsFrom(env, 'CORS_ORIGINS'),
    metrics: env.METRICS === 'true',
    metricsToken: env.METRICS_TOKEN || undefined,
    gitMaxFiles: intFrom(env, 'GIT_MAX_FILES', 20_000, 1),
    gitMaxBytes: intFrom(env, 'GIT_MAX_BYTES', 200 * 1024 * 1024, 1),
    gitTimeoutMs: intFrom(env, 'GIT_TIMEOUT_MS', 120_000, 1000),
    gitSecretKey: gitKeyFrom(env),
    integrationEventRetentionMs: intFrom(env, 'INTEGRATION_EVENT_RETENTION_MS', 30 * 24 * 3600 * 1000, 0),
    integrationTimeoutMs: intFrom(env, 'INTEGRATION_TIMEOUT_MS', 10_000, 100),
    integrationSubrequestLimit: intFrom(env, 'INTEGRATION_SUBREQUEST_LIMIT', 50, 0),
    integrationMemoryMb: intFrom(env, 'INTEGRATION_MEMORY_MB', 128, 8),
    integrationCpuMs: intFrom(env, 'INTEGRATION_CPU_MS', 5000, 10),
    integrationMaxAttempts: intFrom(env, 'INTEGRATION_MAX_ATTEMPTS', 5, 1),
    integrationRetryBaseMs: intFrom(env, 'INTEGRATION_RETRY_BASE_MS', 1000, 0),
    ssoSessionTtlMs: intFrom(env, 'SSO_SESSION_TTL_MS', 8 * 3600 * 1000, 60_000),
    appSessionTtlMs: intFrom(env, 'APP_SESSION_TTL_MS', 7 * 24 * 3600 * 1000, 60_000),
    databasePoolMax: intFrom(env, 'DATABASE_POOL_MAX', 10, 1),
    collab: {
      saveDelayMs: intFrom(env, 'COLLAB_SAVE_DELAY_MS', 2000, 0),
      saveMaxDelayMs: intFrom(env, 'COLLAB_SAVE_MAX_DELAY_MS', 10_000, 0),
      recheckMs: intFrom(env, 'COLLAB_RECHECK_MS', 5000, 50),
      maxMessageBytes: intFrom(env, 'COLLAB_MAX_MESSAGE_BYTES', 4 * 1024 * 1024, 1024),
      maxMessagesPerSecond: intFrom(env, 'COLLAB_MAX_MESSAGES_PER_SECOND', 200, 1),
    },
    ssoTokenTtlMs: intFrom(env, 'SSO_TOKEN_TTL_MS', 30 * 24 * 3600 * 1000, 60_000),
    pdf: {
      chromiumPath: env.CHROMIUM_PATH || '/usr/bin/chromium',
      concurrency: intFrom(env, 'PDF_CONCURRENCY', 2, 1),
      timeoutMs: intFrom(env, 'PDF_TIMEOUT_MS', 5 * 60_000, 1000),
      backgroundPages: intFrom(env, 'PDF_BACKGROUND_PAGES', 100, 0),
      maxPages: intFrom(env, 'PDF_MAX_PAGES', 2000, 1),
    },
    ...aiFrom(env),
    ...storageFrom(env),
  };
}
