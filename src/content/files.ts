import type { LookupAddress } from 'node:dns';
import { lookup } from 'node:dns/promises';
import { request as httpRequest, type IncomingMessage } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { isIP, type LookupFunction } from 'node:net';
import ipaddr from 'ipaddr.js';
import type { Config } from '../platform/config.ts';
import { BadRequestError } from '../platform/errors.ts';

export const MAX_INLINE_FILE = 1024 * 1024;
export const MAX_FETCHED_FILE = 10 * 1024 * 1024;

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

// Outbound fetches for `insert_files`. A caller names URLs and the server fetches them, so every
// address the server would connect to is classified first (only globally routable unicast passes
// unless the configuration says otherwise), the connection goes to an address that was vetted
// (never to a second DNS answer), redirects are followed a few times with every target vetted
// again, and one content request is bounded in time and in bytes across all its files.

const GLOBAL_UNICAST_V6 = ipaddr.IPv6.parseCIDR('2000::/3');
const MAX_REDIRECTS = 5;
const REDIRECT_STATUSES = new Set([301, 302, 303, 307, 308]);

const v4From = (hi: number, lo: number) => new ipaddr.IPv4([hi >> 8, hi & 0xff, lo >> 8, lo & 0xff]);

/**
 * An address in standard notation (dotted quad, or IPv6 with an optional zone), or undefined.
 * IPv6 text goes through the URL parser first, which writes it in canonical hexadecimal form:
 * ipaddr.js would read the IPv4-compatible `::a.b.c.d` as the mapped `::ffff:a.b.c.d`.
 */
function parseAddress(address: string): ipaddr.IPv4 | ipaddr.IPv6 | undefined {
  const text = address.replace(/^\[|\]$/g, '');
  // Only the standard dotted quad: "127.1" or "0x7f.1" never come from DNS or a parsed URL.
  if (ipaddr.IPv4.isValidFourPartDecimal(text)) return ipaddr.IPv4.parse(text);
  if (!ipaddr.IPv6.isValid(text)) return undefined;
  let canonical: string;
  try {
    canonical = new URL(`http://[${text.replace(/%.*$/, '')}]/`).hostname.slice(1, -1);
  } catch {
    return undefined;
  }
  return ipaddr.IPv6.isValid(canonical) ? ipaddr.IPv6.parse(canonical) : undefined;
}

/**
 * The special-purpose range an address belongs to, named as ipaddr.js names them (`loopback`,
 * `private`, `linkLocal`, `carrierGradeNat`, `uniqueLocal`, `multicast`, `reserved`, …), or
 * `unicast` for a globally routable unicast address. IPv6 forms whose packets end up at an
 * embedded IPv4 address (IPv4-mapped, IPv4-translated, NAT64 64:ff9b::/96, 6to4, Teredo) are
 * classified by that IPv4 address, e.g. `ipv4Mapped/loopback`. Forms that are never globally
 * routable (the deprecated IPv4-compatible `::a.b.c.d`, the local-use NAT64 prefix 64:ff9b:1::/48,
 * IPv6 outside 2000::/3) and strings that are not an address in standard notation get a
 * non-`unicast` name too.
 */
export function addressRange(address: string): string {
  const parsed = parseAddress(address);
  if (!parsed) return 'invalid';
  if (parsed.kind() === 'ipv4') return parsed.range();
  const v6 = parsed as ipaddr.IPv6;
  const range = v6.range();
  const p = v6.parts as [number, number, number, number, number, number, number, number];
  const via = (...inner: ipaddr.IPv4[]) => {
    const bad = inner.map((v4) => v4.range()).find((r) => r !== 'unicast');
    return bad ? `${range}/${bad}` : 'unicast';
  };
  switch (range) {
    case 'ipv4Mapped': // ::ffff:a.b.c.d
    case 'rfc6145': // ::ffff:0:a.b.c.d (IPv4-translated)
      return via(v4From(p[6], p[7]));
    case 'rfc6052': // NAT64: the well-known 64:ff9b::/96 carries the address; 64:ff9b:1::/48 is local use
      return p[2] === 0 ? via(v4From(p[6], p[7])) : `${range}/localUse`;
    case '6to4': // 2002:AABB:CCDD::/48 routes to AA.BB.CC.DD
      return via(v4From(p[1], p[2]));
    case 'teredo': // 2001:0:server:flags:port:client, the client address and port inverted
      return via(v4From(p[2], p[3]), v4From(p[6] ^ 0xffff, p[7] ^ 0xffff));
    case 'unicast':
      if (p.slice(0, 6).every((x) => x === 0)) return 'ipv4Compatible';
      return v6.match(GLOBAL_UNICAST_V6) ? 'unicast' : 'reserved';
    default:
      return range;
  }
}

/** Whether an address is globally routable unicast (see addressRange). */
export function isPublicAddress(address: string): boolean {
  return addressRange(address) === 'unicast';
}

/** Limits of the URL fetches of one content request, from the configuration. */
export type FetchConfig = Pick<Config, 'fetchAllowPrivate' | 'fetchAllowCidrs' | 'fetchTimeoutMs' | 'fetchMaxRequestBytes'>;

/** Whether the configuration lets a fetch connect to this address. */
export function fetchMayReach(address: string, config: Pick<FetchConfig, 'fetchAllowPrivate' | 'fetchAllowCidrs'>): boolean {
  if (config.fetchAllowPrivate || isPublicAddress(address)) return true;
  let parsed = config.fetchAllowCidrs.length > 0 ? parseAddress(address) : undefined;
  if (!parsed) return false;
  // An IPv4-mapped address is matched as the IPv4 address it is.
  if (parsed.kind() === 'ipv6' && (parsed as ipaddr.IPv6).isIPv4MappedAddress()) parsed = (parsed as ipaddr.IPv6).toIPv4Address();
  return config.fetchAllowCidrs.some((cidr) => {
    const range = ipaddr.parseCIDR(cidr);
    return parsed.kind() === range[0].kind() && parsed.match(range);
  });
}

/**
 * What the files of one content request may still use: bytes across all of them (inline ones
 * included), and time until one deadline for all the URL fetches. Files are fetched one after
 * another against it, so the request never holds more than the byte limit.
 */
export class FileBudget {
  bytesLeft: number;
  readonly deadline: number;

  constructor(readonly config: FetchConfig) {
    this.bytesLeft = config.fetchMaxRequestBytes;
    this.deadline = Date.now() + config.fetchTimeoutMs;
  }

  overBudget(what: string): BadRequestError {
    return new BadRequestError(`files: ${what} goes past ${this.config.fetchMaxRequestBytes} bytes, the most that the files of one request may add up to`);
  }

  /** Counts the bytes of one more file; refuses once the files add up to more than the limit. */
  take(bytes: number, what: string): void {
    if (bytes > this.bytesLeft) throw this.overBudget(what);
    this.bytesLeft -= bytes;
  }
}

function parseFileUrl(url: string, label = 'files: '): URL {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new BadRequestError(`${label}"${url}" is not a valid URL`);
  }
  if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') throw new BadRequestError(`${label}only http(s) URLs can be fetched`);
  return parsed;
}

/** Rejects as soon as the signal aborts, whether or not the promise settles. */
function unlessAborted<T>(promise: Promise<T>, signal: AbortSignal): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    if (signal.aborted) return reject(signal.reason);
    const onAbort = () => reject(signal.reason);
    signal.addEventListener('abort', onAbort, { once: true });
    promise.then(resolve, reject).finally(() => signal.removeEventListener('abort', onAbort));
  });
}

/**
 * The addresses a connection to the URL's host may use, every one of them vetted: a literal
 * address is checked as it is, a name is resolved (all A and AAAA answers) and refused if any
 * answer is not allowed, so no answer order or later answer can lead elsewhere.
 */
export async function vettedAddresses(url: URL, config: ReachConfig, signal: AbortSignal, label = '', hint = ''): Promise<LookupAddress[]> {
  const host = url.hostname.replace(/^\[|\]$/g, '');
  const refused = () => new BadRequestError(`${label}${url.hostname} is a private address${hint}`);
  const family = isIP(host);
  if (family) {
    if (!fetchMayReach(host, config)) throw refused();
    return [{ address: host, family }];
  }
  const answers = await unlessAborted(lookup(host, { all: true, verbatim: true }), signal).catch((err: unknown) => {
    if (signal.aborted) throw err;
    return [];
  });
  if (answers.length === 0) throw new BadRequestError(`${label}cannot resolve ${url.hostname}`);
  if (!answers.every((a) => fetchMayReach(a.address, config))) throw refused();
  return answers;
}

/** A lookup that answers with addresses already vetted, and never asks DNS again. */
export function pinnedLookup(addresses: LookupAddress[]): LookupFunction {
  return (_hostname, options, callback) => {
    if ((options as { all?: boolean }).all) return (callback as unknown as (e: null, a: LookupAddress[]) => void)(null, addresses);
    const first = addresses.find((a) => !options.family || a.family === options.family) ?? addresses[0]!;
    callback(null, first.address, first.family);
  };
}

function get(url: URL, addresses: LookupAddress[], signal: AbortSignal): Promise<IncomingMessage> {
  return new Promise((resolve, reject) => {
    const request = (url.protocol === 'https:' ? httpsRequest : httpRequest)(
      url,
      {
        method: 'GET',
        signal,
        // No pooled sockets: each connection goes to the address vetted for it, and closes after.
        agent: false,
        lookup: pinnedLookup(addresses),
        headers: { 'user-agent': 'Folio', accept: '*/*', 'accept-encoding': 'identity' },
      },
      resolve,
    );
    request.on('error', reject);
    request.end();
  });
}

/** Reads a body of at most `limit` bytes: past it, the connection is cut and nothing more is kept. */
export async function readBody(res: IncomingMessage, limit: number, tooLarge: () => Error): Promise<Buffer> {
  if (Number(res.headers['content-length'] ?? 0) > limit) {
    res.destroy();
    throw tooLarge();
  }
  const chunks: Buffer[] = [];
  let size = 0;
  // Leaving the loop early (throw) destroys the response and its socket.
  for await (const chunk of res as AsyncIterable<Buffer>) {
    size += chunk.byteLength;
    if (size > limit) throw tooLarge();
    chunks.push(chunk);
  }
  return Buffer.concat(chunks, size);
}

type ReachConfig = Pick<FetchConfig, 'fetchAllowPrivate' | 'fetchAllowCidrs'>;

/** How one vetted fetch is bounded and how its errors are worded. */
export interface VettedFetchOptions {
  config: ReachConfig;
  /** Aborts the fetch (DNS, connections, redirects and body): the caller's deadline. */
  signal: AbortSignal;
  /** Most bytes of the body; past it `tooLarge()` is thrown and the connection cut. */
  maxBytes: number;
  tooLarge: () => Error;
  /** Prefix of error messages (`files: `). */
  label?: string;
  /** Appended to the message refusing a private address. */
  privateHint?: string;
}

/**
 * GET of an http(s) URL through the address checks: every address the connection may use is
 * vetted (private ones refused unless the configuration allows them), at most MAX_REDIRECTS
 * redirects are followed with each target vetted again, and at most `maxBytes` of body are read.
 * Errors are BadRequestErrors whose message says what happened; an abort rejects with the
 * signal's reason. Used by `insert_files` (fetchFile) and by OpenAPI spec processing.
 */
export async function fetchVetted(url: string, o: VettedFetchOptions): Promise<{ data: Buffer; contentType: string | undefined; url: URL }> {
  const label = o.label ?? '';
  let current = parseFileUrl(url, label);
  for (let redirects = 0; ; redirects++) {
    const addresses = await vettedAddresses(current, o.config, o.signal, label, o.privateHint ?? '');
    const res = await get(current, addresses, o.signal);
    const status = res.statusCode ?? 0;
    if (REDIRECT_STATUSES.has(status) && res.headers.location) {
      res.destroy();
      if (redirects === MAX_REDIRECTS) throw new BadRequestError(`${label}${url} redirects more than ${MAX_REDIRECTS} times`);
      let target: string;
      try {
        target = new URL(res.headers.location, current).href;
      } catch {
        throw new BadRequestError(`${label}${url} redirects to an invalid URL`);
      }
      current = parseFileUrl(target, label);
      continue;
    }
    if (status < 200 || status >= 300) {
      res.destroy();
      throw new BadRequestError(`${label}fetching ${url} answered ${status}`);
    }
    const data = await readBody(res, o.maxBytes, o.tooLarge);
    return { data, contentType: res.headers['content-type']?.split(';')[0]?.trim() || undefined, url: current };
  }
}

/**
 * Fetches a file for `insert_files` within the request's budget: addresses the configuration does
 * not allow are refused (private ones by default), at most MAX_REDIRECTS redirects are followed,
 * each target vetted again, at most MAX_FETCHED_FILE bytes are read and no more than the
 * request's remaining bytes, and the whole fetch (DNS, connection, redirects, body) stops at the
 * request's deadline, however slowly or steadily the server sends.
 */
export async function fetchFile(url: string, budget: FileBudget): Promise<{ data: Uint8Array; contentType: string | undefined }> {
  parseFileUrl(url);
  const timedOut = () =>
    new BadRequestError(`files: fetching ${url} did not finish within ${budget.config.fetchTimeoutMs} ms, the time allowed for fetching the files of one request`);
  const remaining = budget.deadline - Date.now();
  if (remaining <= 0) throw timedOut();
  const controller = new AbortController();
  const timer = setTimeout(() => controller.abort(new Error('deadline')), Math.min(remaining, 2 ** 31 - 1));
  try {
    const perFile = budget.bytesLeft >= MAX_FETCHED_FILE;
    const { data, contentType } = await fetchVetted(url, {
      config: budget.config,
      signal: controller.signal,
      maxBytes: Math.min(MAX_FETCHED_FILE, budget.bytesLeft),
      tooLarge: () => (perFile ? new BadRequestError(`files: ${url} is larger than ${MAX_FETCHED_FILE} bytes`) : budget.overBudget(url)),
      label: 'files: ',
      privateHint: '; send the bytes with base64 instead',
    });
    budget.take(data.byteLength, url);
    return { data: new Uint8Array(data), contentType };
  } catch (err) {
    if (controller.signal.aborted) throw timedOut();
    if (err instanceof BadRequestError) throw err;
    throw new BadRequestError(`files: could not fetch ${url}: ${(err as Error).message}`);
  } finally {
    clearTimeout(timer);
  }
}

export function decodeBase64(text: string): Uint8Array {
  if (!/^[A-Za-z0-9+/=\s_-]*$/.test(text)) throw new BadRequestError('files: base64 is not valid base64');
  const data = Buffer.from(text, 'base64');
  if (data.byteLength > MAX_INLINE_FILE) throw new BadRequestError(`files: base64 content is larger than ${MAX_INLINE_FILE} bytes; use url`);
  return new Uint8Array(data);
}
