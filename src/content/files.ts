import { createHash } from 'node:crypto';
import { lookup as dnsLookup, type LookupAddress } from 'node:dns';
import { lookup } from 'node:dns/promises';
import { request as httpRequest } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { isIP, type LookupFunction } from 'node:net';
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

/** The eight 16-bit groups of an IPv6 address (with an embedded dotted IPv4 tail), or undefined. */
function ipv6Groups(address: string): number[] | undefined {
  let text = address.toLowerCase().replace(/%.*$/, '');
  const v4 = /(\d+)\.(\d+)\.(\d+)\.(\d+)$/.exec(text);
  if (v4) {
    const [a, b, c, d] = v4.slice(1).map(Number) as [number, number, number, number];
    text = `${text.slice(0, v4.index)}${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
  }
  const [head, tail] = text.split('::') as [string, string | undefined];
  const part = (s: string | undefined) => (s ? s.split(':').map((g) => Number.parseInt(g, 16)) : []);
  const left = part(head);
  const right = part(tail);
  const groups = tail === undefined ? left : [...left, ...Array<number>(8 - left.length - right.length).fill(0), ...right];
  return groups.length === 8 && groups.every((g) => Number.isInteger(g) && g >= 0 && g <= 0xffff) ? groups : undefined;
}

/**
 * Addresses a fetch must not reach: loopback, private, link-local, carrier-grade NAT, benchmarking,
 * multicast and reserved ranges, and every IPv6 form that embeds one of them (mapped, compatible,
 * NAT64, 6to4). Unparseable addresses count as private.
 */
export function isPrivateAddress(address: string): boolean {
  if (isIP(address) === 4) {
    const [a, b, c] = address.split('.').map(Number) as [number, number, number];
    return (
      a === 0 || a === 10 || a === 127 || (a === 169 && b === 254) || (a === 172 && b >= 16 && b <= 31) ||
      (a === 192 && b === 168) || (a === 192 && b === 0 && c === 0) || (a === 100 && b >= 64 && b <= 127) ||
      (a === 198 && (b === 18 || b === 19)) || a >= 224
    );
  }
  const g = ipv6Groups(address);
  if (!g) return true;
  const v4 = (hi: number, lo: number) => `${hi >> 8}.${hi & 0xff}.${lo >> 8}.${lo & 0xff}`;
  const zeros = (n: number) => g.slice(0, n).every((x) => x === 0);
  if (zeros(8)) return true; // ::
  if (zeros(7) && g[7] === 1) return true; // ::1
  if (zeros(5) && g[5] === 0xffff) return isPrivateAddress(v4(g[6]!, g[7]!)); // ::ffff:a.b.c.d
  if (zeros(6)) return isPrivateAddress(v4(g[6]!, g[7]!)); // ::a.b.c.d (deprecated compatible form)
  if (g[0] === 0x64 && g[1] === 0xff9b && g.slice(2, 6).every((x) => x === 0)) return isPrivateAddress(v4(g[6]!, g[7]!)); // NAT64
  if (g[0] === 0x2002) return isPrivateAddress(v4(g[1]!, g[2]!)); // 6to4
  return (
    (g[0]! & 0xfe00) === 0xfc00 || // unique local fc00::/7
    (g[0]! & 0xffc0) === 0xfe80 || // link-local fe80::/10
    (g[0]! & 0xffc0) === 0xfec0 || // site-local fec0::/10
    (g[0]! & 0xff00) === 0xff00 || // multicast
    (g[0] === 0x2001 && g[1] === 0xdb8) // documentation
  );
}

/**
 * Resolves like dns.lookup, but fails for private addresses: the check happens on the addresses
 * the connection really uses, so a name that resolves differently the second time (DNS
 * rebinding) cannot slip through.
 */
function guardedLookup(allowPrivate: boolean): LookupFunction {
  return (hostname, options, callback) => {
    dnsLookup(hostname, { ...options, all: true }, (err, addresses) => {
      if (err) return callback(err, '', 4);
      const list = addresses as unknown as LookupAddress[];
      if (!allowPrivate && list.some((a) => isPrivateAddress(a.address))) {
        return callback(Object.assign(new Error(`${hostname} is a private address`), { code: 'EPRIVATE' }), '', 4);
      }
      if ((options as { all?: boolean }).all) return (callback as unknown as (e: null, a: LookupAddress[]) => void)(null, list);
      return callback(null, list[0]!.address, list[0]!.family);
    });
  };
}

/**
 * Fetches a file for `insert_files`. Private, loopback and link-local addresses are refused unless
 * the configuration allows them, so a request cannot make the server reach its own network.
 * Redirects are not followed, and at most MAX_FETCHED_FILE bytes are read.
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
  const privateError = () => new BadRequestError(`files: ${parsed.hostname} is a private address; send the bytes with base64 instead`);
  if (isIP(host)) {
    // Literal addresses are never looked up, so they are checked here.
    if (!opts.allowPrivate && isPrivateAddress(host)) throw privateError();
  } else {
    const addresses = (await lookup(host, { all: true }).catch(() => [])).map((a) => a.address);
    if (addresses.length === 0) throw new BadRequestError(`files: cannot resolve ${parsed.hostname}`);
    if (!opts.allowPrivate && addresses.some(isPrivateAddress)) throw privateError();
  }
  const tooLarge = () => new BadRequestError(`files: ${url} is larger than ${MAX_FETCHED_FILE} bytes`);
  return new Promise((resolve, reject) => {
    const request = (parsed.protocol === 'https:' ? httpsRequest : httpRequest)(
      parsed,
      { method: 'GET', lookup: guardedLookup(opts.allowPrivate), headers: { 'user-agent': 'Folio', accept: '*/*' } },
      (res) => {
        const status = res.statusCode ?? 0;
        if (status < 200 || status >= 300) {
          res.resume();
          request.destroy();
          return reject(new BadRequestError(`files: fetching ${url} answered ${status}${status >= 300 && status < 400 ? ' (redirects are not followed)' : ''}`));
        }
        if (Number(res.headers['content-length'] ?? 0) > MAX_FETCHED_FILE) {
          request.destroy();
          return reject(tooLarge());
        }
        // Read at most the limit: a server that sends more (or lies about its length) is cut off.
        const chunks: Buffer[] = [];
        let size = 0;
        res.on('data', (chunk: Buffer) => {
          size += chunk.byteLength;
          if (size > MAX_FETCHED_FILE) {
            request.destroy();
            reject(tooLarge());
          } else chunks.push(chunk);
        });
        res.on('end', () => resolve({ data: new Uint8Array(Buffer.concat(chunks)), contentType: res.headers['content-type']?.split(';')[0]?.trim() || undefined }));
        res.on('error', (err) => reject(new BadRequestError(`files: could not read ${url}: ${err.message}`)));
      },
    );
    request.setTimeout(10_000, () => request.destroy(new Error('timed out after 10 s')));
    request.on('error', (err: NodeJS.ErrnoException) =>
      reject(err.code === 'EPRIVATE' ? privateError() : new BadRequestError(`files: could not fetch ${url}: ${err.message}`)),
    );
    request.end();
  });
}

export function decodeBase64(text: string): Uint8Array {
  if (!/^[A-Za-z0-9+/=\s_-]*$/.test(text)) throw new BadRequestError('files: base64 is not valid base64');
  const data = Buffer.from(text, 'base64');
  if (data.byteLength > MAX_INLINE_FILE) throw new BadRequestError(`files: base64 content is larger than ${MAX_INLINE_FILE} bytes; use url`);
  return new Uint8Array(data);
}
