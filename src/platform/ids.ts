import { randomBytes } from 'node:crypto';

const ALPHABET = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';

/** An opaque random identifier (base62, ~119 bits for the default length). */
export function newId(length = 20): string {
  const bytes = randomBytes(length * 2);
  let out = '';
  for (let i = 0; out.length < length && i < bytes.length; i++) {
    // 248 = 62 * 4: rejecting larger bytes keeps every character equally likely.
    if (bytes[i]! < 248) out += ALPHABET[bytes[i]! % 62];
  }
  return out.length === length ? out : newId(length);
}
