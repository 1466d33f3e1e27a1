import assert from 'node:assert/strict';
import { createServer } from 'node:net';
import { test } from 'node:test';
import { S3BlobStore } from '../src/platform/blob-store-s3.ts';
import { UnavailableError } from '../src/platform/errors.ts';
import { startS3 } from './support/s3-server.ts';

// A bucket that does not answer is an outage the client may retry (503), not an internal error;
// a bucket that answers "no such object" is still a missing object.
test('an unreachable bucket fails with a 503 (the cause kept), a reachable one still says what is missing', async () => {
  const probe = createServer();
  await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
  const { port } = probe.address() as { port: number };
  await new Promise<void>((resolve) => probe.close(() => resolve()));
  const down = new S3BlobStore({ endpoint: `http://127.0.0.1:${port}`, region: 'us-east-1', bucket: 'folio', accessKeyId: 'x', secretAccessKey: 'y', forcePathStyle: true });
  try {
    for (const attempt of [() => down.get('abc'), () => down.exists('abc'), () => down.put('abc', new Uint8Array([1]))]) {
      await assert.rejects(attempt(), (err: unknown) => err instanceof UnavailableError && err.statusCode === 503 && err.cause instanceof Error);
    }
  } finally {
    down.close();
  }
  const s3 = await startS3();
  try {
    assert.equal(await s3.store.get('nothing-here'), undefined);
    assert.equal(await s3.store.exists('nothing-here'), false);
  } finally {
    await s3.close();
  }
});
