import { createHash } from 'node:crypto';
import { lookup } from 'node:dns/promises';
import { isIP } from 'node:net';
import type { Db } from '../platform/db/database.ts';
import { BadRequestError } from '../platform/errors.ts';

export const MAX_INLINE_FILE = 1024 * 1024;
export const MAX_FETCHED_FILE = 10 * 1024 * 1024;

/** Stores bytes by hash (idempotent) and returns the hash. */
export async function putBlob(db: Db, data: Uint8Array): Promise<string> {
  const hash = createHash('sha256').update(data).digest('base64url');
  await db.insertInto('blobs').values({ hash, data, size: data.byteLength }).onConflict((oc) => oc.column('hash').doNothing()).execute();
  return hash;
}

export async function getBlob(db: Db, hash: string): Promise<Uint8Array | undefined> {
  const row = await db.selectFrom('blobs').select('data').where('hash', '=', hash).executeTakeFirst();
  return row?.data;
}

/** Width and height of PNG, GIF and JPEG images, read from their headers. */
export function imageDimensions(data: Uint8Array): { width: number; height: number } | undefined {
  const b = Buffer.from(data);
  if (b.length > 24 && b.readUInt32BE(0) === 0x89504e47) return { width: b.readUInt32BE(16), height: b.readUInt32BE(20) };
  if (b.length > 10 && b.toString('ascii', 0, 3) === 'GIF') return { width: b.readUInt16LE(6), height: b.readUInt16LE(8) };
  if (b.length > 4 && b[0] === 0xff && b[1] === 0xd8) {
    let i = 2;
    while (i + 9 < b.length) {
      if (b[i] !== 0xff) return undefined;
      const marker = b[i + 1]!;
      const length = b.readUInt16BE(i + 2);
      if (marker >= 0xc0 && marker <= 0xcf && marker !== 0xc4 && marker !== 0xc8 && marker !== 0xcc) {
        return { width: b.readUInt16BE(i + 7), height: b.readUInt16BE(i + 5) };
      }
      i += 2 + length;
    }
  }
  return undefined;
}

function isPrivateAddress(address: string): boolean {
  if (address.includes(':')) {
    const a = address.toLowerCase();
    if (a === '::1' || a === '::' || a.startsWith('fc') || a.startsWith('fd') || a.startsWith('fe80')) return true;
    const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/.exec(a);
    return mapped ? isPrivateAddress(mapped[1]!) : false;
  }
  const [a, b] = address.split('.').map(Number) as [number, number];
  return (
    a === 10 || a === 127 || a === 0 || (a === 169 && b === 254) || (a === 172 && b >= 16 && b <= 31) ||
    (a === 192 && b === 168) || (a === 100 && b >= 64 && b <= 127) || a >= 224
  );
}

/**
 * Fetches a file for `insert_files`. Private, loopback and link-local addresses are refused unless
 * the configuration allows them, so a request cannot make the server reach its own network.
 */
export async function fetchFile(url: string, opts: { allowPrivate: boolean }): Promise<{ data: Uint8Array; contentType: string | undefined }> {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new BadRequestError(`files: "${url}" is not a valid URL`);
  }
  if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') throw new BadRequestError('files: only http(s) URLs can be fetched');
  const host = parsed.hostname.replace(/^\[|\]$/g, '');
  const addresses = isIP(host) ? [host] : (await lookup(host, { all: true }).catch(() => [])).map((a) => a.address);
  if (addresses.length === 0) throw new BadRequestError(`files: cannot resolve ${parsed.hostname}`);
  if (!opts.allowPrivate && addresses.some(isPrivateAddress)) {
    throw new BadRequestError(`files: ${parsed.hostname} is a private address; send the bytes with base64 instead`);
  }
  let res: Response;
  try {
    res = await fetch(parsed, { redirect: 'error', signal: AbortSignal.timeout(10_000) });
  } catch (err) {
    throw new BadRequestError(`files: could not fetch ${url}: ${(err as Error).message}`);
  }
  if (!res.ok) throw new BadRequestError(`files: fetching ${url} answered ${res.status}`);
  const data = new Uint8Array(await res.arrayBuffer());
  if (data.byteLength > MAX_FETCHED_FILE) throw new BadRequestError(`files: ${url} is larger than ${MAX_FETCHED_FILE} bytes`);
  return { data, contentType: res.headers.get('content-type')?.split(';')[0] ?? undefined };
}

export function decodeBase64(text: string): Uint8Array {
  if (!/^[A-Za-z0-9+/=\s_-]*$/.test(text)) throw new BadRequestError('files: base64 is not valid base64');
  const data = Buffer.from(text, 'base64');
  if (data.byteLength > MAX_INLINE_FILE) throw new BadRequestError(`files: base64 content is larger than ${MAX_INLINE_FILE} bytes; use url`);
  return new Uint8Array(data);
}
