import type { Readable } from 'node:stream';
import { DeleteObjectCommand, GetObjectCommand, HeadObjectCommand, PutObjectCommand, S3Client, S3ServiceException } from '@aws-sdk/client-s3';
import { getSignedUrl } from '@aws-sdk/s3-request-presigner';
import type { BlobStore } from './blob-store.ts';
import type { S3Settings } from './config.ts';
import { UnavailableError } from './errors.ts';

/** Where a hash's bytes are in the bucket: content-addressed, so the same bytes are one object. */
export const blobKey = (hash: string) => `blobs/${hash}`;

function missing(err: unknown): boolean {
  return err instanceof S3ServiceException && (err.name === 'NoSuchKey' || err.name === 'NotFound' || err.$metadata.httpStatusCode === 404);
}

/**
 * The bucket's failures that are an outage (no answer, or a 5xx from the service) become a 503 the
 * client may retry, the SDK's error kept as the cause for the log; the rest (a missing object, a
 * refused signature: a configuration to fix) stay as the SDK threw them.
 */
async function reaching<T>(work: Promise<T>): Promise<T> {
  try {
    return await work;
  } catch (err) {
    const answered = err instanceof S3ServiceException && err.$fault === 'client';
    if (answered) throw err;
    throw new UnavailableError('The file storage (S3 bucket) did not answer: try again shortly', err);
  }
}

/** File bytes in an S3-compatible bucket, through the AWS SDK. */
export class S3BlobStore implements BlobStore {
  readonly kind = 's3';
  readonly client: S3Client;
  readonly bucket: string;

  constructor(settings: S3Settings) {
    this.bucket = settings.bucket;
    // The SDK warns on Node 20 that its releases after January 2027 will need Node 22: the version
    // package.json names runs on Node 20, which Folio supports; the warning is for whoever upgrades
    // it (docs/storage.md says so), not for every operator's log.
    process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true';
    this.client = new S3Client({
      region: settings.region,
      ...(settings.endpoint ? { endpoint: settings.endpoint } : {}),
      forcePathStyle: settings.forcePathStyle,
      ...(settings.accessKeyId && settings.secretAccessKey ? { credentials: { accessKeyId: settings.accessKeyId, secretAccessKey: settings.secretAccessKey } } : {}),
      // Checksums only where S3 requires them: many S3-compatible servers do not know the
      // newer checksum headers, and the bytes are verified by their sha256 anyway.
      requestChecksumCalculation: 'WHEN_REQUIRED',
      responseChecksumValidation: 'WHEN_REQUIRED',
    });
  }

  async put(hash: string, data: Uint8Array): Promise<void> {
    await reaching(this.client.send(new PutObjectCommand({ Bucket: this.bucket, Key: blobKey(hash), Body: data, ContentLength: data.byteLength })));
  }

  async get(hash: string): Promise<Readable | undefined> {
    return this.getKey(blobKey(hash));
  }

  async exists(hash: string): Promise<boolean> {
    try {
      await reaching(this.client.send(new HeadObjectCommand({ Bucket: this.bucket, Key: blobKey(hash) })));
      return true;
    } catch (err) {
      if (missing(err)) return false;
      throw err;
    }
  }

  async delete(hash: string): Promise<void> {
    await reaching(this.client.send(new DeleteObjectCommand({ Bucket: this.bucket, Key: blobKey(hash) })));
  }

  async presignGet(hash: string, o: { expiresIn: number; contentType: string; disposition: string }): Promise<string> {
    const command = new GetObjectCommand({ Bucket: this.bucket, Key: blobKey(hash), ResponseContentType: o.contentType, ResponseContentDisposition: o.disposition });
    return getSignedUrl(this.client, command, { expiresIn: o.expiresIn });
  }

  async presignPut(key: string, o: { expiresIn: number; contentType: string }): Promise<string> {
    return getSignedUrl(this.client, new PutObjectCommand({ Bucket: this.bucket, Key: key, ContentType: o.contentType }), { expiresIn: o.expiresIn });
  }

  getUpload(key: string): Promise<Readable | undefined> {
    return this.getKey(key);
  }

  async deleteUpload(key: string): Promise<void> {
    await reaching(this.client.send(new DeleteObjectCommand({ Bucket: this.bucket, Key: key })));
  }

  close(): void {
    this.client.destroy();
  }

  private async getKey(key: string): Promise<Readable | undefined> {
    try {
      const out = await reaching(this.client.send(new GetObjectCommand({ Bucket: this.bucket, Key: key })));
      return out.Body as Readable;
    } catch (err) {
      if (missing(err)) return undefined;
      throw err;
    }
  }
}
