import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { after, before, test } from 'node:test';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { emptyFilesReport, FILES_SECTION, filesSectionHandler } from '../src/platform/backup-files.ts';
import { moveBlobs, openBlobs } from '../src/platform/blob-store.ts';
import { restoreInto, writeBackup } from '../src/platform/db/backup.ts';
import { blobKey } from '../src/platform/blob-store-s3.ts';
import { editPages, newSite, newSpace, openChangeRequest, orgWithSpace } from './support/factories.ts';
import { startS3, type TestS3 } from './support/s3-server.ts';
import { startTestServer, type TestServer, type TestUser } from './support/server.ts';

// Object storage against a local S3-compatible server (s3rver). The server starts on the embedded
// store with the bucket configured, as a deployment does before `folio storage migrate`; the move
// to the bucket is then checked, and the server switched to FILE_STORAGE=s3 as a restart would.

let t: TestServer;
let s3: TestS3;

before(async () => {
  s3 = await startS3();
  t = await startTestServer({ s3: s3.settings });
});

after(async () => {
  await t?.close();
  await s3?.close();
});

const sha = (data: Uint8Array) => createHash('sha256').update(data).digest('base64url');

async function upload(user: TestUser, organizationId: string, name: string, bytes: Buffer) {
  const { data } = await user.api.orgs.generateStorageUploadUrl(organizationId, { file: { name, type: 'text/plain', size: bytes.length }, kind: 'organization_file' as never });
  return data;
}

/** Inserts files into a change request of the space and merges it with a page linking them; the files as listed. */
async function publishFiles(user: TestUser, spaceId: string, files: Record<string, unknown>[]) {
  const cr = await openChangeRequest(user, spaceId);
  const links = files.map((f) => `[${f.name}](./${f.ref})`).join('\n\n');
  await editPages(t, user, spaceId, cr.id, [
    { operation: 'insert_files', files },
    { operation: 'insert_page', title: `Files ${cr.number}`, document: { markdown: links } },
  ]);
  await user.api.spaces.mergeChangeRequest(spaceId, cr.id);
  const { data } = await user.api.spaces.listFiles(spaceId);
  return data.items;
}

async function bytesAt(url: string): Promise<{ status: number; type: string | null; body: Buffer }> {
  const res = await fetch(url);
  return { status: res.status, type: res.headers.get('content-type'), body: Buffer.from(await res.arrayBuffer()) };
}

test('embedded store: an upload URL signed by Folio takes the bytes, insert_files uses the upload, the API and the published site serve it', async () => {
  const { admin, org, space } = await orgWithSpace(t);
  const bytes = Buffer.from(`notes kept in the database ${'x'.repeat(200)}`);
  const up = await upload(admin, org.id, 'notes.txt', bytes);
  assert.equal(up.object, 'storage-signed-url');
  assert.ok(up.url.startsWith(`${t.url}/v1/storage/${up.key}?`), up.url);

  // The signature is the credential; the size is the one announced.
  assert.equal((await fetch(up.url.replace(/signature=[^&]+/, 'signature=forged'), { method: 'PUT', body: bytes })).status, 403);
  assert.equal((await fetch(up.url, { method: 'PUT' })).status, 400);
  const short = await fetch(up.url, { method: 'PUT', body: bytes.subarray(1) });
  assert.equal(short.status, 400);
  assert.match((await short.json()).error.message, /announced/);
  assert.equal((await fetch(up.url, { method: 'PUT', body: bytes, headers: { 'content-type': 'text/plain' } })).status, 200);

  const files = await publishFiles(admin, space.id, [{ ref: 'notes', name: 'notes.txt', url: `${t.url}/v1/storage/${up.key}` }]);
  const file = files.find((f) => f.name === 'notes.txt')!;
  assert.equal(file.size, bytes.length);
  const api = await bytesAt(file.downloadURL);
  assert.equal(api.status, 200);
  assert.deepEqual(api.body, bytes);
  assert.match(api.type ?? '', /^text\/plain/);
  assert.deepEqual(await s3.keys(), [], 'nothing goes to the bucket while FILE_STORAGE is embedded');

  // The published site links the file and serves its bytes.
  const site = await newSite(admin, org.id, { spaces: [space.id] });
  const { data: published } = await admin.api.orgs.getSiteById(org.id, site.id);
  const page = await (await fetch(published.urls.published!)).text();
  const link = /href="([^"]*_folio\/files\/[^"]+)"/.exec(page)?.[1];
  assert.ok(link, 'the page links the file');
  const served = await bytesAt(new URL(link!, published.urls.published!).href);
  assert.equal(served.status, 200);
  assert.deepEqual(served.body, bytes);

  // Another organization cannot use the upload.
  const { data: other } = await admin.api.orgs.createOrganization({ title: 'Other' });
  const otherSpace = await newSpace(admin, other.id, 'Other');
  const cr = await openChangeRequest(admin, otherSpace.id);
  const res = await t.request('POST', `/v1/spaces/${otherSpace.id}/change-requests/${cr.id}/content`, {
    token: admin.token,
    body: { changes: [{ operation: 'insert_files', files: [{ name: 'n.txt', url: `${t.url}/v1/storage/${up.key}` }] }] },
  });
  assert.equal(res.status, 400);
  assert.match(res.body.error.message, /no upload/);
});

test('storage migrate moves every file to the bucket, verified by hash; then FILE_STORAGE=s3 stores identical bytes once, uploads go to the bucket, downloads stream or redirect', async () => {
  const { admin, org, space } = await orgWithSpace(t);
  const kept = Buffer.from(`kept before the move ${'k'.repeat(300)}`);
  await publishFiles(admin, space.id, [{ ref: 'kept', name: 'kept.txt', contentType: 'text/plain', base64: kept.toString('base64') }]);

  // The move: every file's bytes go to the bucket, and the database keeps hashes and sizes only.
  const lines: string[] = [];
  const moved = await moveBlobs(t.server.services.blobs, t.server.services.db, 's3', (p) => lines.push(`${p.moved} ${p.remaining}`));
  assert.deepEqual(moved.failed, []);
  assert.ok(moved.moved >= 2 && lines.length >= 1, JSON.stringify(moved));
  const left = await t.server.services.db.selectFrom('blobs').select('hash').where('data', 'is not', null).execute();
  assert.deepEqual(left, []);
  assert.ok((await s3.keys('blobs/')).includes(blobKey(sha(kept))));
  // Run again: nothing left to move.
  assert.equal((await moveBlobs(t.server.services.blobs, t.server.services.db, 's3', () => {})).moved, 0);
  // Files keep being served, now from the bucket.
  const keptFile = (await admin.api.spaces.listFiles(space.id)).data.items.find((f) => f.name === 'kept.txt')!;
  assert.deepEqual((await bytesAt(keptFile.downloadURL)).body, kept);

  // As a restart with FILE_STORAGE=s3 would.
  t.server.services.config.fileStorage = 's3';
  t.server.services.blobs = await openBlobs(t.server.services.db, t.server.services.config);

  // Identical bytes under two names: one object.
  const same = Buffer.from(`stored once ${'s'.repeat(500)}`);
  const before = await s3.keys('blobs/');
  const files = await publishFiles(admin, space.id, [
    { ref: 'a', name: 'a.txt', contentType: 'text/plain', base64: same.toString('base64') },
    { ref: 'b', name: 'b.txt', contentType: 'text/plain', base64: same.toString('base64') },
  ]);
  const added = (await s3.keys('blobs/')).filter((k) => !before.includes(k));
  assert.deepEqual(added, [blobKey(sha(same))]);
  const row = await t.server.services.db.selectFrom('blobs').select(['size', 'data']).where('hash', '=', sha(same)).executeTakeFirstOrThrow();
  assert.deepEqual(row, { size: same.length, data: null });

  // A direct upload goes to the bucket through its presigned URL, then insert_files uses it.
  const direct = Buffer.from(`sent straight to the bucket ${'d'.repeat(400)}`);
  const up = await upload(admin, org.id, 'direct.txt', direct);
  assert.ok(up.url.startsWith(`${s3.settings.endpoint}/${s3.settings.bucket}/${up.key}?`), up.url);
  assert.equal((await fetch(up.url, { method: 'PUT', body: direct, headers: { 'content-type': 'text/plain' } })).status, 200);
  const withUpload = await publishFiles(admin, space.id, [{ ref: 'direct', name: 'direct.txt', url: `${t.url}/v1/storage/${up.key}` }]);
  const directFile = withUpload.find((f) => f.name === 'direct.txt')!;
  assert.ok((await s3.keys('blobs/')).includes(blobKey(sha(direct))));
  assert.deepEqual(await s3.keys('uploads/'), [], 'the staging object is removed once stored by hash');

  // A change request's PDF is stored in the bucket too, and its link serves it.
  const cr = await openChangeRequest(admin, space.id);
  const beforePdf = await s3.keys('blobs/');
  const { data: pdf } = await admin.api.spaces.getChangeRequestPdf(space.id, cr.id);
  const printed = await bytesAt(pdf.url);
  assert.equal(printed.status, 200);
  assert.equal(printed.body.subarray(0, 5).toString('latin1'), '%PDF-');
  assert.deepEqual((await s3.keys('blobs/')).filter((k) => !beforePdf.includes(k)), [blobKey(sha(printed.body))]);

  // Downloads streamed through Folio (the default)…
  const a = files.find((f) => f.name === 'a.txt')!;
  assert.deepEqual((await bytesAt(a.downloadURL)).body, same);
  assert.deepEqual((await bytesAt(directFile.downloadURL)).body, direct);
  // …or redirected to a presigned URL of the bucket, which answers the type and name.
  t.server.services.config.fileDownloads = 'redirect';
  try {
    const res = await fetch(a.downloadURL, { redirect: 'manual' });
    assert.equal(res.status, 302);
    const location = res.headers.get('location')!;
    assert.ok(location.startsWith(`${s3.settings.endpoint}/${s3.settings.bucket}/${blobKey(sha(same))}?`), location);
    const followed = await bytesAt(location);
    assert.equal(followed.status, 200);
    assert.deepEqual(followed.body, same);
    assert.match(followed.type ?? '', /^text\/plain/);
  } finally {
    t.server.services.config.fileDownloads = 'proxy';
  }

  // A backup names the files in the bucket (its files manifest); a restore checks the bucket holds
  // each of them and says which it does not.
  const inBucket = await t.server.services.db.selectFrom('blobs').select('hash').where('data', 'is', null).execute();
  assert.ok(inBucket.length >= 3);
  const scratch = mkdtempSync(join(tmpdir(), 'folio-backup-s3-'));
  try {
    await writeBackup(t.server.services.db, join(scratch, 'folio.backup.gz'), { folio: 'test', sections: [FILES_SECTION] });
    await s3.store.delete(sha(same));
    const report = emptyFilesReport();
    await restoreInto({ databaseUrl: undefined, dataDir: join(scratch, 'data') }, join(scratch, 'folio.backup.gz'), { sections: { files: filesSectionHandler({ s3: s3.settings }, report) } });
    assert.deepEqual(report, { inBucket: inBucket.length, checked: true, missing: [sha(same)], missingCount: 1 });
  } finally {
    await s3.store.put(sha(same), same);
    rmSync(scratch, { recursive: true, force: true });
  }

  // And back into the database: every file verified, the bucket's objects left as they were.
  const back = await moveBlobs(t.server.services.blobs, t.server.services.db, 'embedded', () => {});
  assert.deepEqual(back.failed, []);
  const outside = await t.server.services.db.selectFrom('blobs').select('hash').where('data', 'is', null).execute();
  assert.deepEqual(outside, []);
  assert.ok((await s3.keys('blobs/')).length >= 3);
  assert.deepEqual((await bytesAt(a.downloadURL)).body, same);
});
