import type { SiteGrant, TokenCache } from './auth.ts';
import type { Blobs } from './blob-store.ts';
import type { Bus } from './bus.ts';
import type { Config } from './config.ts';
import type { Db, Prepared } from './db/database.ts';
import type { UserRow } from './db/schema.ts';
import type { Jobs } from './jobs.ts';
import type { RateLimitStore } from './rate-limit.ts';
import type { Urls } from './urls.ts';

/** What a service needs to serve one request: the database, configuration, and who is asking. */
export interface Services {
  db: Db;
  config: Config;
  urls: Urls;
  jobs: Jobs;
  /** File bytes by hash, in the configured store (FILE_STORAGE). */
  blobs: Blobs;
  /** Key that signs the JWTs Folio issues (visitor claims). */
  signingKey: Uint8Array;
  tokenCache: TokenCache;
  /**
   * Invalidation messages to every process of this Folio (src/platform/bus.ts): publish after a
   * change commits that other processes cache (tokens, published sites, custom hostnames).
   */
  bus: Bus;
  /** Rate-limit windows shared by every API process (REDIS_URL); unset: each process counts its own. */
  rateLimitStore?: RateLimitStore | undefined;
  /** Named prepared statements for per-request hot paths (see DatabaseHandle.prepared). */
  prepared: Prepared;
  /**
   * The time in milliseconds, as Date.now(): what token expiry, the token cache, rate-limit windows
   * and job due times are measured with. A test passes a clock it moves forward instead of sleeping.
   */
  now: () => number;
}

export interface Caller {
  user: UserRow;
  /** The API token the caller authenticated with (absent for callers that did not use one). */
  token?: {
    id: string;
    expiresAt: Date | null;
    ssoOrganizationId?: string | null;
    /** Set for a content token: the one space it reads, with at most the `read` role. */
    scopeSpaceId?: string | null;
    /** Set for a content token resolved through a site: it also reads what that site publishes. */
    scopeSite?: SiteGrant | null;
  };
  /** Set when the caller is an integration (its token's scopes and targets). */
  integration?: IntegrationGrant;
}

export type Ctx = Services & Caller;

/**
 * What an integration token allows: it acts as the integration's own user, restricted to the
 * integration's scopes, and for an installation token to the installation's targets (issued and
 * checked by src/integrations/grants.ts).
 */
export interface IntegrationGrant {
  integrationId: string;
  integrationName: string;
  /** Null for a token of the integration itself (not of one installation). */
  installationId: string | null;
  scopes: string[];
}
