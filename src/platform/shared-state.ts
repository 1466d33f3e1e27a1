import { Redis } from 'ioredis';
import { sql } from 'kysely';
import { LocalBus, PostgresBus, RedisBus, type Bus } from './bus.ts';
import { ConfigError, type Config } from './config.ts';
import type { Db } from './db/database.ts';
import type { RateLimitStore, Window } from './rate-limit.ts';

/**
 * One request counted in a fixed window, atomically (one script: no other client runs between its
 * commands): the count, and the milliseconds left in the window, which starts with its first
 * request. A key without an expiry (never left by this script, but possible if one was lost) gets
 * one, so no window lasts for ever.
 */
const HIT = `
local count = redis.call('INCR', KEYS[1])
local ttl = redis.call('PTTL', KEYS[1])
if ttl < 0 then
  redis.call('PEXPIRE', KEYS[1], ARGV[1])
  ttl = tonumber(ARGV[1])
end
return {count, ttl}`;

const PEEK = `
local count = redis.call('GET', KEYS[1])
if not count then return false end
return {tonumber(count), redis.call('PTTL', KEYS[1])}`;

type Scripted = Redis & {
  folioHit(key: string, windowMs: number): Promise<[number, number]>;
  folioPeek(key: string): Promise<[number, number] | null>;
};

/** Rate-limit windows in Redis, shared by every process with the same REDIS_URL and REDIS_PREFIX. */
export class RedisRateLimitStore implements RateLimitStore {
  private readonly redis: Scripted;

  constructor(
    redis: Redis,
    private readonly prefix: string,
  ) {
    redis.defineCommand('folioHit', { numberOfKeys: 1, lua: HIT });
    redis.defineCommand('folioPeek', { numberOfKeys: 1, lua: PEEK });
    this.redis = redis as Scripted;
  }

  async hit(key: string, windowMs: number, now: number): Promise<Window> {
    const [count, ttl] = await this.redis.folioHit(`${this.prefix}rl:${key}`, windowMs);
    return { count, resetAt: now + ttl };
  }

  async peek(key: string, now: number): Promise<Window | undefined> {
    const found = await this.redis.folioPeek(`${this.prefix}rl:${key}`);
    if (!found || found[1] <= 0) return undefined;
    return { count: found[0], resetAt: now + found[1] };
  }
}

/** What the processes of one Folio share beyond the database: the invalidation bus, rate-limit windows. */
export interface SharedState {
  bus: Bus;
  /** Unset: every process counts rate limits on its own. */
  rateLimits: RateLimitStore | undefined;
  /** A line for the operator saying what is shared. */
  describe: string;
  close(): Promise<void>;
}

function redisOptions() {
  return {
    lazyConnect: true,
    // A command Redis does not answer within this fails: the limiter then counts in the process,
    // and a publish is given up (caches fall back on their TTLs).
    commandTimeout: 1000,
    maxRetriesPerRequest: 1,
    // While Redis is unreachable, commands fail at once instead of waiting in a queue: requests
    // are counted in the process meanwhile, without each waiting for the timeout.
    enableOfflineQueue: false,
    connectionName: 'folio',
  };
}

/**
 * Opens the shared state this configuration asks for:
 * - REDIS_URL: Redis pub/sub for the bus and Redis windows for rate limits;
 * - DATABASE_URL alone: LISTEN/NOTIFY on PostgreSQL for the bus, rate limits per process;
 * - the embedded database (one process): an in-process bus, rate limits in the process.
 * A start whose Redis or LISTEN connection cannot be opened fails, saying why.
 */
export async function openSharedState(config: Config, db: Db): Promise<SharedState> {
  if (config.redisUrl) {
    const redis = new Redis(config.redisUrl, redisOptions());
    const subscriber = new Redis(config.redisUrl, { ...redisOptions(), commandTimeout: undefined, enableOfflineQueue: true });
    // Errors are also reported through the failing commands; without a listener ioredis prints them.
    let lastError: unknown;
    redis.on('error', (err) => (lastError = err));
    subscriber.on('error', () => {});
    try {
      await Promise.all([redis.connect(), subscriber.connect()]);
      const bus = new RedisBus(redis, subscriber, `${config.redisPrefix}bus`);
      await bus.start();
      return {
        bus,
        rateLimits: new RedisRateLimitStore(redis, config.redisPrefix),
        describe: `Shared state: Redis at ${redactedUrl(config.redisUrl)} (rate limits shared by every process, invalidations by pub/sub)`,
        close: async () => {
          await bus.close();
          redis.disconnect();
        },
      };
    } catch (err) {
      redis.disconnect();
      subscriber.disconnect();
      const why = lastError ?? err;
      throw new ConfigError(
        `REDIS_URL is set but Redis at ${redactedUrl(config.redisUrl)} did not answer (${why instanceof Error ? why.message : why}): start it, or unset REDIS_URL (docs/scaling.md)`,
      );
    }
  }
  if (config.databaseUrl) {
    const bus = new PostgresBus(config.databaseUrl, async (channel, payload) => {
      await sql`SELECT pg_notify(${channel}, ${payload})`.execute(db);
    });
    await bus.start();
    return {
      bus,
      rateLimits: undefined,
      describe: 'Shared state: PostgreSQL LISTEN/NOTIFY for invalidations; rate limits counted by each process (set REDIS_URL to share them)',
      close: () => bus.close(),
    };
  }
  return { bus: new LocalBus(), rateLimits: undefined, describe: '', close: async () => {} };
}

function redactedUrl(url: string): string {
  return url.replace(/\/\/[^/@]*@/, '//[redacted]@');
}
