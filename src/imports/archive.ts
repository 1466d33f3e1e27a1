import { Inflate } from 'fflate';

/**
 * A zip archive read defensively: the central directory is parsed here (so symlinks and every
 * entry's sizes are seen before anything is inflated), and each entry is inflated in small steps
 * that stop as soon as it yields more than it declared. Refused, with a reason that says why:
 * paths escaping the archive (`../`, absolute, drive letters), symlinks, encrypted entries, more
 * than `maxFiles` entries, more than `maxBytes` uncompressed in all, an entry whose
 * uncompressed/compressed ratio exceeds `maxRatio` (a zip bomb), and anything malformed.
 */

export class ArchiveError extends Error {}

export interface ArchiveLimits {
  maxFiles: number;
  maxBytes: number;
  maxRatio: number;
}

export const DEFAULT_ARCHIVE_LIMITS: ArchiveLimits = { maxFiles: 10_000, maxBytes: 512 * 1024 * 1024, maxRatio: 200 };

export interface ArchiveEntry {
  path: string;
  data: Buffer;
}

const EOCD = 0x06054b50;
const CEN = 0x02014b50;
const LOC = 0x04034b50;

/** A clean relative path of an entry, or an ArchiveError for one that could escape. */
export function safeEntryPath(name: string): string {
  const path = name.replace(/\\/g, '/');
  if (path.startsWith('/') || /^[A-Za-z]:/.test(path)) throw new ArchiveError(`the archive holds an absolute path ("${name}"): refused`);
  const parts = path.split('/').filter((p) => p !== '' && p !== '.');
  if (parts.some((p) => p === '..')) throw new ArchiveError(`the archive holds a path leading out of it ("${name}"): refused`);
  if (parts.some((p) => p.includes('\0'))) throw new ArchiveError(`the archive holds a path with a NUL character: refused`);
  return parts.join('/');
}

export function isZip(bytes: Uint8Array): boolean {
  return bytes.length >= 4 && bytes[0] === 0x50 && bytes[1] === 0x4b && (bytes[2] === 3 || bytes[2] === 5) && (bytes[3] === 4 || bytes[3] === 6);
}

export function readZip(bytes: Buffer, limits: ArchiveLimits = DEFAULT_ARCHIVE_LIMITS): ArchiveEntry[] {
  // End of central directory: within the last 64 KiB + 22 bytes.
  let eocd = -1;
  for (let i = bytes.length - 22; i >= Math.max(0, bytes.length - 22 - 0xffff); i--) {
    if (bytes.readUInt32LE(i) === EOCD) {
      eocd = i;
      break;
    }
  }
  if (eocd < 0) throw new ArchiveError('not a zip archive (no end of central directory)');
  const count = bytes.readUInt16LE(eocd + 10);
  const cdSize = bytes.readUInt32LE(eocd + 12);
  const cdOffset = bytes.readUInt32LE(eocd + 16);
  if (count === 0xffff || cdOffset === 0xffffffff) throw new ArchiveError('ZIP64 archives are not supported: split the archive');
  if (count > limits.maxFiles) throw new ArchiveError(`the archive holds ${count} entries, more than the ${limits.maxFiles} an import takes`);
  if (cdOffset + cdSize > bytes.length) throw new ArchiveError('the archive is truncated or malformed');

  interface Header {
    name: string;
    method: number;
    flags: number;
    compressed: number;
    size: number;
    offset: number;
    dir: boolean;
  }
  const headers: Header[] = [];
  let p = cdOffset;
  let declared = 0;
  for (let n = 0; n < count; n++) {
    if (p + 46 > bytes.length || bytes.readUInt32LE(p) !== CEN) throw new ArchiveError('the archive is malformed (central directory)');
    const madeBy = bytes.readUInt16LE(p + 4) >> 8;
    const flags = bytes.readUInt16LE(p + 8);
    const method = bytes.readUInt16LE(p + 10);
    const compressed = bytes.readUInt32LE(p + 20);
    const size = bytes.readUInt32LE(p + 24);
    const nameLen = bytes.readUInt16LE(p + 28);
    const extraLen = bytes.readUInt16LE(p + 30);
    const commentLen = bytes.readUInt16LE(p + 32);
    const external = bytes.readUInt32LE(p + 38);
    const offset = bytes.readUInt32LE(p + 42);
    const raw = bytes.subarray(p + 46, p + 46 + nameLen).toString('utf8');
    p += 46 + nameLen + extraLen + commentLen;
    const mode = (external >>> 16) & 0o170000;
    if (madeBy === 3 && mode === 0o120000) throw new ArchiveError(`the archive holds a symbolic link ("${raw}"): refused`);
    if (flags & 1) throw new ArchiveError(`the archive holds an encrypted entry ("${raw}"): refused`);
    const path = safeEntryPath(raw);
    const dir = raw.endsWith('/') || (madeBy === 3 && mode === 0o040000);
    if (dir || !path) continue;
    if (method !== 0 && method !== 8) throw new ArchiveError(`"${raw}" uses compression method ${method}: only stored and deflated entries are read`);
    if (size > 1024 * 1024 && size / Math.max(1, compressed) > limits.maxRatio) {
      throw new ArchiveError(`"${raw}" expands ${Math.round(size / Math.max(1, compressed))} times (more than ${limits.maxRatio}): looks like a zip bomb, refused`);
    }
    declared += size;
    if (declared > limits.maxBytes) throw new ArchiveError(`the archive expands to more than ${limits.maxBytes} bytes: refused`);
    headers.push({ name: raw, method, flags, compressed, size, offset, dir });
  }

  const out: ArchiveEntry[] = [];
  const seen = new Set<string>();
  for (const h of headers) {
    const path = safeEntryPath(h.name);
    if (seen.has(path.toLowerCase())) continue;
    seen.add(path.toLowerCase());
    if (h.offset + 30 > bytes.length || bytes.readUInt32LE(h.offset) !== LOC) throw new ArchiveError(`the archive is malformed (entry "${h.name}")`);
    const start = h.offset + 30 + bytes.readUInt16LE(h.offset + 26) + bytes.readUInt16LE(h.offset + 28);
    const end = start + h.compressed;
    if (end > bytes.length) throw new ArchiveError(`the archive is truncated (entry "${h.name}")`);
    const body = bytes.subarray(start, end);
    out.push({ path, data: h.method === 0 ? Buffer.from(body.subarray(0, h.size)) : inflateBounded(body, h.size, h.name) });
  }
  return out;
}

/** Inflates at most `size` bytes (the declared size), in steps: a lying header cannot make more. */
function inflateBounded(body: Uint8Array, size: number, name: string): Buffer {
  const chunks: Uint8Array[] = [];
  let total = 0;
  let over = false;
  const inflate = new Inflate((chunk) => {
    total += chunk.length;
    if (total > size) over = true;
    else chunks.push(chunk);
  });
  const STEP = 16 * 1024;
  try {
    for (let i = 0; i < body.length && !over; i += STEP) inflate.push(body.subarray(i, Math.min(body.length, i + STEP)), i + STEP >= body.length);
    if (body.length === 0) inflate.push(new Uint8Array(0), true);
  } catch (err) {
    throw new ArchiveError(`"${name}" cannot be decompressed: ${(err as Error).message}`);
  }
  if (over) throw new ArchiveError(`"${name}" expands to more than its declared ${size} bytes: refused`);
  if (total !== size) throw new ArchiveError(`"${name}" is ${total} bytes, not the ${size} its header declares: the archive is corrupt`);
  return Buffer.concat(chunks, total);
}
