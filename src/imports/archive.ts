import yauzl from 'yauzl';

/**
 * A zip archive read defensively, with yauzl: every entry's name, type and sizes are checked
 * before its bytes are read, and its bytes may not exceed what it declares. Refused, with a
 * reason that says why:
 * paths escaping the archive (`../`, absolute, drive letters), symlinks, encrypted entries, more
 * than `maxFiles` entries, more than `maxBytes` uncompressed in all, an entry whose
 * uncompressed/compressed ratio exceeds `maxRatio` (a zip bomb), an entry yielding more bytes than it declares, and anything malformed.
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

/**
 * The files of a zip archive (read with yauzl: its central directory first, each entry's bytes
 * checked against the size it declares), refused on the first entry that is not safe.
 */
export async function readZip(bytes: Buffer, limits: ArchiveLimits = DEFAULT_ARCHIVE_LIMITS): Promise<ArchiveEntry[]> {
  let zip: yauzl.ZipFile;
  try {
    // Names are checked here (decodeStrings off: yauzl's own check would answer in its words).
    zip = await yauzl.fromBufferPromise(bytes, { lazyEntries: true, decodeStrings: false, validateEntrySizes: true });
  } catch (err) {
    throw new ArchiveError(`not a zip archive, or a malformed one (${(err as Error).message})`);
  }
  try {
    if (zip.entryCount > limits.maxFiles) throw new ArchiveError(`the archive holds ${zip.entryCount} entries, more than the ${limits.maxFiles} an import takes`);
    const out: ArchiveEntry[] = [];
    const seen = new Set<string>();
    let declared = 0;
    for (;;) {
      const entry = await nextEntry(zip);
      if (!entry) break;
      const raw = Buffer.from(entry.fileName as unknown as Uint8Array).toString('utf8');
      const unix = entry.versionMadeBy >> 8 === 3;
      const mode = (entry.externalFileAttributes >>> 16) & 0o170000;
      if (unix && mode === 0o120000) throw new ArchiveError(`the archive holds a symbolic link ("${raw}"): refused`);
      if (entry.isEncrypted()) throw new ArchiveError(`the archive holds an encrypted entry ("${raw}"): refused`);
      const path = safeEntryPath(raw);
      if (raw.endsWith('/') || (unix && mode === 0o040000) || !path) continue;
      if (entry.compressionMethod !== 0 && entry.compressionMethod !== 8) throw new ArchiveError(`"${raw}" uses compression method ${entry.compressionMethod}: only stored and deflated entries are read`);
      const size = entry.uncompressedSize;
      if (size > 1024 * 1024 && size / Math.max(1, entry.compressedSize) > limits.maxRatio) {
        throw new ArchiveError(`"${raw}" expands ${Math.round(size / Math.max(1, entry.compressedSize))} times (more than ${limits.maxRatio}): looks like a zip bomb, refused`);
      }
      declared += size;
      if (declared > limits.maxBytes) throw new ArchiveError(`the archive expands to more than ${limits.maxBytes} bytes: refused`);
      if (seen.has(path.toLowerCase())) continue;
      seen.add(path.toLowerCase());
      out.push({ path, data: await readEntry(zip, entry, raw) });
    }
    return out;
  } finally {
    zip.close();
  }
}

function nextEntry(zip: yauzl.ZipFile): Promise<yauzl.Entry | undefined> {
  return new Promise((resolve, reject) => {
    const cleanup = () => {
      zip.off('entry', onEntry);
      zip.off('end', onEnd);
      zip.off('error', onError);
    };
    const onEntry = (e: yauzl.Entry) => (cleanup(), resolve(e));
    const onEnd = () => (cleanup(), resolve(undefined));
    const onError = (err: Error) => (cleanup(), reject(new ArchiveError(`the archive is malformed (${err.message})`)));
    zip.on('entry', onEntry);
    zip.on('end', onEnd);
    zip.on('error', onError);
    zip.readEntry();
  });
}

/** An entry's bytes; yauzl stops a stream that yields more (or fewer) bytes than the entry declares. */
async function readEntry(zip: yauzl.ZipFile, entry: yauzl.Entry, name: string): Promise<Buffer> {
  const chunks: Buffer[] = [];
  try {
    const stream = await zip.openReadStreamPromise(entry);
    for await (const chunk of stream) chunks.push(chunk as Buffer);
  } catch (err) {
    throw new ArchiveError(`"${name}" cannot be read: ${(err as Error).message}`);
  }
  return Buffer.concat(chunks);
}
