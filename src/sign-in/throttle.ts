import { HttpError } from '../platform/errors.ts';

/** Failed sign-ins allowed per account and per client address in one window. */
export const MAX_FAILURES = 10;
export const WINDOW_MS = 15 * 60_000;
/** Keys kept at most; the oldest are forgotten first (a flood of addresses cannot grow memory). */
const MAX_KEYS = 100_000;

/**
 * Failed sign-ins counted over fixed windows, per account (`a:<email>`) and per client address
 * (`ip:<address>`), on the injectable clock (Services.now). Past MAX_FAILURES, further attempts
 * are refused with 429 and Retry-After until the window ends, whether the password is right or
 * not, so guessing cannot go on. Counters live in this process: behind several API processes each
 * enforces its own share, like the rate limits.
 */
export class SignInThrottle {
  private readonly windows = new Map<string, { failures: number; resetAt: number }>();
  constructor(private readonly now: () => number) {}

  private live(key: string, now: number) {
    const w = this.windows.get(key);
    if (w && w.resetAt <= now) {
      this.windows.delete(key);
      return undefined;
    }
    return w;
  }

  /** Throws 429 when the account or the address has used up its failures. */
  check(account: string, address: string): void {
    const now = this.now();
    const blocked = [this.live(`a:${account}`, now), this.live(`ip:${address}`, now)].filter((w) => w && w.failures >= MAX_FAILURES);
    if (!blocked.length) return;
    const retryAfter = Math.ceil((Math.max(...blocked.map((w) => w!.resetAt)) - now) / 1000);
    throw new TooManyAttemptsError(retryAfter);
  }

  fail(account: string, address: string): void {
    const now = this.now();
    for (const key of [`a:${account}`, `ip:${address}`]) {
      const w = this.live(key, now);
      if (w) w.failures++;
      else {
        if (this.windows.size >= MAX_KEYS) this.windows.delete(this.windows.keys().next().value!);
        this.windows.set(key, { failures: 1, resetAt: now + WINDOW_MS });
      }
    }
  }

  /** A successful sign-in clears the account's failures (not the address's). */
  succeed(account: string): void {
    this.windows.delete(`a:${account}`);
  }
}

export class TooManyAttemptsError extends HttpError {
  constructor(readonly retryAfterSeconds: number) {
    super(429, `Too many failed sign-in attempts: try again in ${Math.ceil(retryAfterSeconds / 60)} min`);
  }
}
