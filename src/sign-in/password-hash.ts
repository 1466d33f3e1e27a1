import { randomBytes, scrypt, timingSafeEqual, type ScryptOptions } from 'node:crypto';
import { BadRequestError } from '../platform/errors.ts';

/**
 * Password hashes: scrypt (node:crypto) with a random 16-byte salt per hash. The stored value
 * names its parameters, `scrypt$<N>$<r>$<p>$<salt>$<hash>` (base64url), so they can be raised for
 * new hashes while old ones still verify with their own.
 */
let PARAMS = { N: 2 ** 15, r: 8, p: 1 };
/** The default cost (log2 of scrypt's N) and the bounds PASSWORD_HASH_COST may take (src/platform/config.ts). */
export const DEFAULT_PASSWORD_HASH_COST = 15;
export const MIN_PASSWORD_HASH_COST = 10;
export const MAX_PASSWORD_HASH_COST = 20;
const KEY_BYTES = 32;
const SALT_BYTES = 16;
/** Bounds on stored parameters, so a damaged value cannot ask for gigabytes or hours. */
const MAX_N = 2 ** 20;
const MAX_RP = 16;

export const MIN_PASSWORD_LENGTH = 8;
/** Longer passwords add nothing and only cost hashing time. */
export const MAX_PASSWORD_LENGTH = 1024;

function derive(password: string, salt: Buffer, params: { N: number; r: number; p: number }): Promise<Buffer> {
  // scrypt needs 128·N·r bytes; room for that and a little more.
  const options: ScryptOptions = { ...params, maxmem: 256 * params.N * params.r + 1024 * 1024 };
  return new Promise((resolve, reject) => scrypt(password.normalize('NFC'), salt, KEY_BYTES, options, (err, key) => (err ? reject(err) : resolve(key))));
}

/** Refuses a password that is too short or too long, saying which. */
export function checkPasswordRules(password: string): void {
  const length = [...password].length;
  if (length < MIN_PASSWORD_LENGTH) throw new BadRequestError(`The password must be at least ${MIN_PASSWORD_LENGTH} characters long (it has ${length})`);
  if (length > MAX_PASSWORD_LENGTH) throw new BadRequestError(`The password must be at most ${MAX_PASSWORD_LENGTH} characters long`);
}

/**
 * Sets the cost of new hashes for this process (PASSWORD_HASH_COST, log2 of scrypt's N), as the
 * server, the worker and the CLI do at start. Hashes made at another cost still verify; those
 * made at a lower one are rehashed at the next sign-in (needsRehash). The test suite lowers it:
 * each hash at the default costs ~90 ms of CPU.
 */
export function setPasswordHashCost(cost: number): void {
  if (!Number.isInteger(cost) || cost < MIN_PASSWORD_HASH_COST || cost > MAX_PASSWORD_HASH_COST) {
    throw new RangeError(`The password hash cost must be an integer from ${MIN_PASSWORD_HASH_COST} to ${MAX_PASSWORD_HASH_COST}, got ${cost}`);
  }
  if (PARAMS.N === 2 ** cost) return;
  PARAMS = { ...PARAMS, N: 2 ** cost };
  dummy = undefined;
}

/** The cost (log2 of scrypt's N) of the hashes this process makes now. */
export function passwordHashCost(): number {
  return Math.log2(PARAMS.N);
}

export async function hashPassword(password: string): Promise<string> {
  const salt = randomBytes(SALT_BYTES);
  const key = await derive(password, salt, PARAMS);
  return ['scrypt', PARAMS.N, PARAMS.r, PARAMS.p, salt.toString('base64url'), key.toString('base64url')].join('$');
}

function parse(stored: string) {
  const [scheme, n, r, p, salt, key] = stored.split('$');
  const params = { N: Number(n), r: Number(r), p: Number(p) };
  const valid =
    scheme === 'scrypt' && Number.isInteger(params.N) && params.N > 1 && params.N <= MAX_N && (params.N & (params.N - 1)) === 0 &&
    Number.isInteger(params.r) && params.r >= 1 && params.r <= MAX_RP && Number.isInteger(params.p) && params.p >= 1 && params.p <= MAX_RP && !!salt && !!key;
  return valid ? { params, salt: Buffer.from(salt!, 'base64url'), key: Buffer.from(key!, 'base64url') } : undefined;
}

/** Whether `password` matches `stored`, compared in constant time. */
export async function verifyPassword(password: string, stored: string): Promise<boolean> {
  const parsed = parse(stored);
  if (!parsed) return false;
  const key = await derive(password, parsed.salt, parsed.params);
  return key.length === parsed.key.length && timingSafeEqual(key, parsed.key);
}

/** Whether a stored hash was made with weaker parameters than today's (rehash it at the next sign-in). */
export function needsRehash(stored: string): boolean {
  const parsed = parse(stored);
  return !parsed || parsed.params.N < PARAMS.N || parsed.params.r < PARAMS.r || parsed.params.p < PARAMS.p;
}

let dummy: Promise<string> | undefined;

/**
 * Spends the time of a real verification when there is no hash to check (unknown email, no
 * password set), so the answer's timing does not tell whether the account exists.
 */
export async function verifyNothing(password: string): Promise<false> {
  await verifyPassword(password, await (dummy ??= hashPassword(randomBytes(16).toString('hex'))));
  return false;
}
