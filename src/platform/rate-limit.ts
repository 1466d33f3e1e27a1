import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { authenticates, bearerToken, hashToken } from './auth.ts';
import { HttpError } from './errors.ts';

declare module 'fastify' {
  interface FastifyContextConfig {
    /** `false`: the route is neither limited nor counted (health checks). */
    rateLimit?: false;
  }
  interface FastifyInstance {
    rateLimiter: RateLimiter;
  }
  interface FastifyRequest {
    /** `hashToken` of the request's bearer token, computed once here and reused by authentication. */
    tokenHash: string | undefined;
    /** The bearer token is not yet known valid: it is counted once authentication decides. */
    rateLimitPending: boolean;
  }
}

export interface RateLimitOptions {
  max: number;
  windowMs: number;
  maxKeys: number;
  /** The clock (Date.now by default); tests move one forward to end a window without waiting for it. */
  now?: () => number;
  /**
   * Windows shared by every process (Redis: `RedisRateLimitStore` in src/platform/shared-state.ts); unset: this
   * process's own table. Knowledge of which tokens are valid always stays in the process.
   */
  store?: RateLimitStore | undefined;
  /** Told when the shared store fails (its windows are then counted in this process until it answers). */
  onStoreError?: (err: unknown) => void;
}

export interface Window {
  count: number;
  resetAt: number;
}

/**
 * Fixed windows kept outside the process, so that several API processes count one client's
 * requests together. `hit` must be atomic: two processes counting the same key at once both count.
 */
export interface RateLimitStore {
  /** Counts one request against `key` and returns its window (started now if there was none). */
  hit(key: string, windowMs: number, now: number): Promise<Window>;
  /** The window of `key` without counting, if there is one. */
  peek(key: string, now: number): Promise<Window | undefined>;
}

/** A value now, or later: the process's own table answers at once, a shared store after a round trip. */
type Maybe<T> = T | Promise<T>;

function then<T, R>(value: Maybe<T>, fn: (v: T) => R): Maybe<R> {
  return value instanceof Promise ? value.then(fn) : fn(value);
}

/**
 * Fixed-window counters keyed by `t:<token hash>` for tokens known to be valid and `ip:<address>`
 * for everything else, in a table of at most `maxKeys` entries.
 *
 * A made-up token is never a key of its own: it counts against the caller's address, so random
 * tokens neither escape the limit nor grow the table. Keys are hashes, so a 12 KB token costs 64
 * characters. The table is a Map in window-start order (a new window is re-inserted at the end),
 * so when it is full the first entry is the oldest window and is the one dropped.
 */
export class RateLimiter {
  private readonly windows = new Map<string, Window>();
  /** Hashes of tokens that authenticated recently, with when that knowledge expires. */
  private readonly valid = new Map<string, number>();

  /** The clock windows are measured with (Services.now). */
  readonly clock: () => number;

  constructor(readonly opts: RateLimitOptions) {
    this.clock = opts.now ?? Date.now;
  }

  get size(): number {
    return this.windows.size;
  }

  keys(): IterableIterator<string> {
    return this.windows.keys();
  }

  /**
   * Counts one request against `key` in the shared store when there is one (in this process's
   * table while the store fails), else in this process's table.
   */
  count(key: string, now = this.clock()): Maybe<Window> {
    const store = this.opts.store;
    if (!store) return this.hit(key, now);
    return store.hit(key, this.opts.windowMs, now).catch((err: unknown) => {
      this.opts.onStoreError?.(err);
      return this.hit(key, now);
    });
  }

  /** The window of `key` without counting, from the shared store when there is one. */
  look(key: string, now = this.clock()): Maybe<Window | undefined> {
    const store = this.opts.store;
    if (!store) return this.peek(key, now);
    return store.peek(key, now).catch((err: unknown) => {
      this.opts.onStoreError?.(err);
      return this.peek(key, now);
    });
  }

  /** Counts one request against `key` in this process's table and returns its window. */
  hit(key: string, now = this.clock()): Window {
    let w = this.windows.get(key);
    if (!w || w.resetAt <= now) {
      if (w) this.windows.delete(key);
      else if (this.windows.size >= this.opts.maxKeys) this.windows.delete(this.windows.keys().next().value!);
      w = { count: 0, resetAt: now + this.opts.windowMs };
      this.windows.set(key, w);
    }
    w.count++;
    return w;
  }

  /** The window of `key` without counting, if it is current. */
  peek(key: string, now = this.clock()): Window | undefined {
    const w = this.windows.get(key);
    return w && w.resetAt > now ? w : undefined;
  }

  isValidToken(hash: string, now = this.clock()): boolean {
    const until = this.valid.get(hash);
    if (until === undefined) return false;
    if (until > now) return true;
    this.valid.delete(hash);
    return false;
  }

  rememberValidToken(hash: string, now = this.clock()): void {
    this.valid.delete(hash);
    if (this.valid.size >= this.opts.maxKeys) this.valid.delete(this.valid.keys().next().value!);
    // Known valid for a window: long enough to key its requests by token, short enough that a
    // revoked token soon counts against its address again.
    this.valid.set(hash, now + this.opts.windowMs);
  }

  /** Forgets finished windows and stale token knowledge. */
  sweep(now = this.clock()): void {
    for (const [key, w] of this.windows) if (w.resetAt <= now) this.windows.delete(key);
    for (const [hash, until] of this.valid) if (until <= now) this.valid.delete(hash);
  }

  /** Sets the X-RateLimit-* headers for `w`; the 429 error when it is over the limit. */
  apply(reply: FastifyReply, w: Window, now = this.clock()): HttpError | undefined {
    const { max, windowMs } = this.opts;
    const reset = Math.ceil((w.resetAt - now) / 1000);
    reply.header('x-ratelimit-limit', String(max));
    reply.header('x-ratelimit-remaining', String(Math.max(0, max - w.count)));
    reply.header('x-ratelimit-reset', String(reset));
    if (w.count <= max) return undefined;
    reply.header('retry-after', String(reset));
    return new HttpError(429, `Rate limit of ${max} requests per ${Math.round(windowMs / 1000)} s exceeded; retry in ${reset} s`);
  }

  /** Authentication accepted the pending token of `req`: its requests count against the token from now on. */
  tokenAccepted(req: FastifyRequest, reply: FastifyReply): Maybe<HttpError | undefined> {
    if (!req.rateLimitPending || !req.tokenHash) return undefined;
    req.rateLimitPending = false;
    this.rememberValidToken(req.tokenHash);
    return then(this.count(`t:${req.tokenHash}`), (w) => this.apply(reply, w));
  }

  /** Authentication refused the pending token of `req`: it counts against the address. */
  tokenRefused(req: FastifyRequest, reply: FastifyReply): Maybe<HttpError | undefined> {
    if (!req.rateLimitPending) return undefined;
    req.rateLimitPending = false;
    return then(this.count(`ip:${req.ip}`), (w) => this.apply(reply, w));
  }
}

/**
 * Rate limits over fixed windows: per token for valid tokens, per address otherwise, with the
 * usual X-RateLimit-* headers and 429 + Retry-After past the limit. Routes configured with
 * `rateLimit: false` (health checks) are neither limited nor counted.
 *
 * A request with a token this process has not seen authenticate is not counted here: the address
 * must still be under its limit (so an address that is flooding gets 429 without a token lookup),
 * and authentication then counts it against the token if it is valid (`tokenAccepted`) or against
 * the address if it is not (`tokenRefused`). Valid tokens never use up their address's allowance.
 *
 * Written here rather than using @fastify/rate-limit: measured on `GET /v1/orgs/{id}`, that plugin
 * cost about a fifth of the throughput, while a map lookup and three headers cost next to nothing.
 * Counters live in this process, unless `opts.store` shares them (REDIS_URL): then every API
 * process counts against the same windows, one round trip to Redis per request. Without it, behind
 * several API processes each enforces the limit on its own (docs/scaling.md).
 */
export function registerRateLimit(app: FastifyInstance, opts: RateLimitOptions): RateLimiter {
  const limiter = new RateLimiter(opts);
  // Forget finished windows so memory follows the active clients, not every client ever seen.
  const sweep = setInterval(() => limiter.sweep(), Math.max(1000, opts.windowMs));
  sweep.unref();
  app.addHook('onClose', async () => clearInterval(sweep));
  app.decorate('rateLimiter', limiter);
  app.decorateRequest('tokenHash', undefined);
  app.decorateRequest('rateLimitPending', false);

  app.addHook('onRequest', (req: FastifyRequest, reply: FastifyReply, done: (err?: Error) => void) => {
    const config = req.routeOptions.config;
    if (config?.rateLimit === false) return done();
    const token = bearerToken(req.headers.authorization);
    const now = limiter.clock();
    // Answers at once from this process's table, after a round trip from a shared store.
    const count = (key: string) => {
      const w = limiter.count(key, now);
      if (w instanceof Promise) w.then((v) => done(limiter.apply(reply, v, now)), done);
      else done(limiter.apply(reply, w, now));
    };
    if (token) {
      const hash = hashToken(token);
      req.tokenHash = hash;
      if (limiter.isValidToken(hash, now)) return count(`t:${hash}`);
      // Routes without authentication (public ones, unknown ones) never decide on the token.
      if (authenticates(req)) {
        const decide = (address: Window | undefined) => {
          if (address && address.count >= opts.max) return count(`ip:${req.ip}`);
          req.rateLimitPending = true;
          done();
        };
        const address = limiter.look(`ip:${req.ip}`, now);
        if (address instanceof Promise) address.then(decide, done);
        else decide(address);
        return;
      }
    }
    count(`ip:${req.ip}`);
  });
  return limiter;
}
