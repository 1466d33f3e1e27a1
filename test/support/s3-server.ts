import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ListObjectsV2Command } from '@aws-sdk/client-s3';
import S3rver from 's3rver';
import { S3BlobStore } from '../../src/platform/blob-store-s3.ts';
import type { S3Settings } from '../../src/platform/config.ts';

export interface TestS3 {
  settings: S3Settings;
  /** A client of the bucket, as Folio makes it. */
  store: S3BlobStore;
  /** The keys in the bucket under `prefix`. */
  keys(prefix?: string): Promise<string[]>;
  close(): Promise<void>;
}

/**
 * A local S3-compatible server (s3rver, objects in a temporary directory) on 127.0.0.1 with one
 * bucket, for the object storage tests: nothing leaves the machine.
 */
export async function startS3(bucket = 'folio'): Promise<TestS3> {
  const directory = mkdtempSync(join(tmpdir(), 'folio-s3-'));
  const server = new S3rver({ address: '127.0.0.1', port: 0, silent: true, directory, configureBuckets: [{ name: bucket }] });
  const { port } = await server.run();
  // s3rver accepts any signature made with its default key pair.
  const settings: S3Settings = { endpoint: `http://127.0.0.1:${port}`, region: 'us-east-1', bucket, accessKeyId: 'S3RVER', secretAccessKey: 'S3RVER', forcePathStyle: true };
  const store = new S3BlobStore(settings);
  return {
    settings,
    store,
    keys: async (prefix = '') => {
      const out = await store.client.send(new ListObjectsV2Command({ Bucket: bucket, Prefix: prefix }));
      return (out.Contents ?? []).map((o) => o.Key!).sort();
    },
    close: async () => {
      store.client.destroy();
      await server.close();
      rmSync(directory, { recursive: true, force: true });
    },
  };
}
