import { createHash } from 'node:crypto';
import { Readable } from 'node:stream';
import type { Config } from './config.ts';
import type { Db } from './db/database.ts';

/**
 * File bytes, stored once by the hash of what they hold (sha256, base64url). A store keeps bytes
 * under a hash; the `blobs` table keeps the hash and size of every file whichever store holds its
 * bytes (and, for the embedded store, the bytes themselves). Two stores: the embedded one (the
 * database, nothing to install) and an S3-compatible bucket (blob-store-s3.ts).
 */
export interface BlobStore {
  readonly kind: 'embedded' | 's3';
  /** Stores bytes under their hash; storing the same bytes again changes nothing. */
  put(hash: string, data: Uint8Array): Promise<void>;
  /** The bytes as a stream, or undefined when the store does not hold them. */
  get(hash: string): Promise<Readable | undefined>;
  exists(hash: string): Promise<boolean>;
  /** Removes the bytes (the hash's `blobs` row stays: it is the file's record). */
  delete(hash: string): Promise<void>;
  /**
   * A URL that reads the bytes for `expiresIn` seconds without Folio, answering them with this
   * type and disposition; undefined when the store has none (the embedded store: Folio streams).
   */
  presignGet(hash: string, o: { expiresIn: number; contentType: string; disposition: string }): Promise<string | undefined>;
  /**
   * A URL a client PUTs bytes to, at `key` (a direct upload, before their hash is known), for
   * `expiresIn` seconds; undefined when the store has none (the embedded store: Folio takes it).
   */
  presignPut(key: string, o: { expiresIn: number; contentType: string }): Promise<string | undefined>;
  /** What a direct upload left at `key`, as a stream, or undefined while nothing arrived there. */
  getUpload(key: string): Promise<Readable | undefined>;
  deleteUpload(key: string): Promise<void>;
  /** Lets go of the store's connections (the bucket's sockets); nothing to do for the embedded one. */
  close(): void;
}

/** The content address of bytes. */
export function hashOf(data: Uint8Array): string {
  return createHash('sha256').update(data).digest('base64url');
}

export async function readAll(stream: Readable): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of stream) chunks.push(Buffer.isBuffer(chunk) ? chunk : Buffer.from(chunk as Uint8Array));
  return Buffer.concat(chunks);
}

/**
 * The embedded store: bytes in the `blobs` table's `data` column, beside their hash. No direct
 * uploads or presigned reads: Folio takes uploads and streams downloads itself.
 */
export class EmbeddedBlobStore implements BlobStore {
  readonly kind = 'embedded';

  constructor(private readonly db: Db) {}

  async put(hash: string, data: Uint8Array): Promise<void> {
    await this.db
      .insertInto('blobs')
      .values({ hash, data, size: data.byteLength })
      // A row without bytes (they are in the bucket) takes them: a move back to the database.
      .onConflict((oc) => oc.column('hash').doUpdateSet({ data }).where('blobs.data', 'is', null))
      .execute();
  }

  async read(hash: string): Promise<Uint8Array | undefined> {
    const row = await this.db.selectFrom('blobs').select('data').where('hash', '=', hash).executeTakeFirst();
    return row?.data ?? undefined;
  }

  async get(hash: string): Promise<Readable | undefined> {
    const data = await this.read(hash);
    return data ? Readable.from([Buffer.from(data)]) : undefined;
  }

  async exists(hash: string): Promise<boolean> {
    const row = await this.db.selectFrom('blobs').select('hash').where('hash', '=', hash).where('data', 'is not', null).executeTakeFirst();
    return !!row;
  }

  async delete(hash: string): Promise<void> {
    await this.db.updateTable('blobs').set({ data: null }).where('hash', '=', hash).execute();
  }

  async presignGet(): Promise<undefined> {
    return undefined;
  }

  async presignPut(): Promise<undefined> {
    return undefined;
  }

  async getUpload(): Promise<undefined> {
    return undefined;
  }

  async deleteUpload(): Promise<void> {}

  close(): void {}
}

/** How long a presigned download URL works (a redirect is followed at once). */
export const DOWNLOAD_URL_TTL_SECONDS = 300;

/** A download: a URL to redirect to, or the bytes to stream. */
export type Download = { redirect: string } | { stream: Readable; size: number };

/**
 * What the areas use: file bytes by hash, written to the configured store, read from whichever
 * store holds them (during a move between stores, some bytes are still in the other one).
 */
export class Blobs {
  readonly embedded: EmbeddedBlobStore;

  constructor(
    private readonly db: Db,
    /** Where new bytes go (FILE_STORAGE). */
    readonly primary: BlobStore,
    /** The bucket, when S3 settings are given (also while FILE_STORAGE is embedded: reads and moves). */
    readonly bucket: BlobStore | undefined,
    /** Read at each download (FILE_DOWNLOADS). */
    private readonly config: Pick<Config, 'fileDownloads'> = { fileDownloads: 'proxy' },
  ) {
    this.embedded = primary instanceof EmbeddedBlobStore ? primary : new EmbeddedBlobStore(db);
  }

  /**
   * Stores bytes once by hash and returns the hash. Never call it inside a transaction: the bytes
   * may go over the network, and the embedded store writes through its own session.
   */
  async put(data: Uint8Array): Promise<string> {
    const hash = hashOf(data);
    const record = (bytes: Uint8Array | null) =>
      this.db.insertInto('blobs').values({ hash, data: bytes, size: data.byteLength }).onConflict((oc) => oc.column('hash').doNothing()).execute();
    if (this.primary.kind === 'embedded') {
      // One statement: bytes already known (in the database or the bucket) are left as they are.
      await record(data);
      return hash;
    }
    // Known bytes are not sent over the network again: one read by primary key spares the upload.
    const known = await this.db.selectFrom('blobs').select('hash').where('hash', '=', hash).executeTakeFirst();
    if (known) return hash;
    await this.primary.put(hash, data);
    // The record after the bytes: a row always names bytes that are stored somewhere.
    await record(null);
    return hash;
  }

  /** Size of the stored bytes, or undefined for an unknown hash. */
  async size(hash: string): Promise<number | undefined> {
    const row = await this.db.selectFrom('blobs').select('size').where('hash', '=', hash).executeTakeFirst();
    return row?.size;
  }

  /** The file's record, with its bytes when the database holds them (one query either way). */
  private row(hash: string) {
    return this.db.selectFrom('blobs').select(['size', 'data']).where('hash', '=', hash).executeTakeFirst();
  }

  private fromBucket(hash: string): Promise<Readable | undefined> {
    if (!this.bucket) throw new Error(`The bytes of file ${hash} are in object storage, but no S3 bucket is configured (S3_BUCKET)`);
    return this.bucket.get(hash);
  }

  /** The bytes as a stream from whichever store holds them, or undefined. */
  async get(hash: string): Promise<Readable | undefined> {
    const row = await this.row(hash);
    if (!row) return undefined;
    return row.data ? Readable.from([Buffer.from(row.data)]) : this.fromBucket(hash);
  }

  /** The bytes in memory (for what Folio itself reads: PDFs, git exports, OpenAPI files). */
  async read(hash: string): Promise<Uint8Array | undefined> {
    const stream = await this.get(hash);
    return stream ? new Uint8Array(await readAll(stream)) : undefined;
  }

  /**
   * How to answer a download of the bytes (the caller has checked access): a redirect to a
   * presigned URL of the bucket when FILE_DOWNLOADS=redirect and the bucket holds them, otherwise
   * a stream through Folio.
   */
  async download(hash: string, o: { contentType: string; disposition: string }): Promise<Download | undefined> {
    const row = await this.row(hash);
    if (!row) return undefined;
    if (row.data) return { stream: Readable.from([Buffer.from(row.data)]), size: row.size };
    if (this.config.fileDownloads === 'redirect' && this.bucket) {
      const url = await this.bucket.presignGet(hash, { expiresIn: DOWNLOAD_URL_TTL_SECONDS, ...o });
      if (url) return { redirect: url };
    }
    const stream = await this.fromBucket(hash);
    return stream ? { stream, size: row.size } : undefined;
  }

  /** Lets go of the bucket's connections (at shutdown, or when a command is done with the files). */
  close(): void {
    this.bucket?.close();
  }
}

/**
 * The S3 bucket the configuration names, or undefined without S3 settings. The one place a bucket
 * is opened (the AWS SDK is loaded only then); close it when done.
 */
export async function openBucket(config: Pick<Config, 's3'>): Promise<BlobStore | undefined> {
  return config.s3 ? new (await import('./blob-store-s3.ts')).S3BlobStore(config.s3) : undefined;
}

/** The stores the configuration names; the AWS SDK is loaded only when a bucket is configured. */
export async function openBlobs(db: Db, config: Pick<Config, 'fileStorage' | 'fileDownloads' | 's3'>): Promise<Blobs> {
  const bucket = await openBucket(config);
  const primary = config.fileStorage === 's3' && bucket ? bucket : new EmbeddedBlobStore(db);
  return new Blobs(db, primary, bucket, config);
}

/** Progress of a move between stores, reported after every batch. */
export interface MoveProgress {
  moved: number;
  bytes: number;
  /** Files still to move (counted at the start, less those moved since). */
  remaining: number;
  failed: { hash: string; reason: string }[];
}

/** Files per batch of a move: their bytes are in memory together. */
const MOVE_BATCH = 20;

/**
 * Moves every file's bytes to the store `to` (`folio storage migrate`). Each file is copied,
 * read back from the target and checked against its hash before the source lets go of it: on the
 * way to the bucket the database's copy is cleared only after the bucket's copy is verified; on
 * the way back the bucket's objects are left as they are (delete them, or the bucket, once the
 * move is done). Resumable: a move stopped at any point is continued by running it again, since
 * what is left to move is exactly the files the target does not hold yet.
 */
export async function moveBlobs(blobs: Blobs, db: Db, to: 'embedded' | 's3', report: (p: MoveProgress) => void): Promise<MoveProgress> {
  const bucket = blobs.bucket;
  if (!bucket) throw new Error('No S3 bucket is configured: set S3_BUCKET (and S3_ENDPOINT, S3_REGION, S3_ACCESS_KEY_ID, S3_SECRET_ACCESS_KEY, S3_FORCE_PATH_STYLE)');
  const toBucket = to === 's3';
  const left = () => db.selectFrom('blobs').select((eb) => eb.fn.countAll<number>().as('n')).where('data', toBucket ? 'is not' : 'is', null).executeTakeFirstOrThrow();
  const progress: MoveProgress = { moved: 0, bytes: 0, remaining: Number((await left()).n), failed: [] };
  let after = '';
  for (;;) {
    const batch = await db
      .selectFrom('blobs')
      .select(toBucket ? ['hash', 'data'] : ['hash'])
      .where('data', toBucket ? 'is not' : 'is', null)
      .where('hash', '>', after)
      .orderBy('hash')
      .limit(MOVE_BATCH)
      .execute();
    if (batch.length === 0) break;
    for (const row of batch as { hash: string; data?: Uint8Array | null }[]) {
      after = row.hash;
      try {
        let data: Uint8Array;
        if (toBucket) {
          data = row.data!;
          if (hashOf(data) !== row.hash) throw new Error('the bytes in the database do not match their hash');
          await bucket.put(row.hash, data);
          const back = await bucket.get(row.hash);
          if (!back || hashOf(await readAll(back)) !== row.hash) throw new Error('the copy read back from the bucket does not match the hash');
          await db.updateTable('blobs').set({ data: null }).where('hash', '=', row.hash).execute();
        } else {
          const stream = await bucket.get(row.hash);
          if (!stream) throw new Error('the bucket does not hold it');
          data = await readAll(stream);
          if (hashOf(data) !== row.hash) throw new Error('the bytes in the bucket do not match their hash');
          await blobs.embedded.put(row.hash, data);
          if (!(await blobs.embedded.exists(row.hash))) throw new Error('the database did not keep the bytes');
        }
        progress.moved++;
        progress.bytes += data.byteLength;
      } catch (err) {
        const cause = err instanceof Error && err.cause instanceof Error ? ` (${err.cause.message})` : '';
        progress.failed.push({ hash: row.hash, reason: err instanceof Error ? `${err.message}${cause}` : String(err) });
      }
      progress.remaining--;
    }
    report(progress);
  }
  return progress;
}
