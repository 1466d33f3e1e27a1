import { createHmac, timingSafeEqual } from 'node:crypto';
import type { Readable } from 'node:stream';
import { requireMembership } from '../access/organizations.ts';
import type { Ctx, Services } from '../platform/context.ts';
import { BadRequestError, ForbiddenError, NotFoundError } from '../platform/errors.ts';
import { newId } from '../platform/ids.ts';
import { assertCanUpload } from '../platform/policy.ts';
import type { GenerateUploadInput } from './schemas.ts';
import { findUpload, insertUpload, setUploadBlob, type UploadRow } from './store.ts';

/** How long an upload URL takes a PUT. */
export const UPLOAD_URL_TTL_SECONDS = 3600;

/**
 * Direct uploads (`generateStorageUploadURL`). The client asks for a URL, PUTs the bytes there,
 * and names the upload afterwards by its key. With FILE_STORAGE=s3 the URL is the bucket's own
 * presigned URL, so the bytes never pass through Folio; on the embedded store it is a URL of Folio
 * signed with its key, which stores the bytes by hash as they arrive. Either way the bytes end up
 * content-addressed (a bucket upload is read and stored by hash the first time it is used), and
 * the key is recorded with its organization, so only that organization's content can use it.
 */

/** `uploads/<organization>/<upload id>/<file name>`: unique, and readable in a bucket listing. */
export function uploadKey(organizationId: string, uploadId: string, name: string): string {
  return `uploads/${organizationId}/${uploadId}/${name}`;
}

/** A file name as a key segment: letters, digits, dots, dashes and underscores. */
function keyName(name: string): string {
  const clean = name.normalize('NFKD').replace(/[^A-Za-z0-9._-]+/g, '-').replace(/^[.-]+/, '').slice(-100);
  return clean || 'file';
}

/** Folio's address of an upload: where the embedded store takes the PUT, and how insert_files names it. */
export function uploadAddress(publicUrl: string, key: string): string {
  return `${publicUrl}/v1/storage/${key}`;
}

/** The upload key an address of Folio names (`<PUBLIC_URL>/v1/storage/uploads/…`, any query ignored), or undefined. */
export function uploadKeyOf(publicUrl: string, url: string): string | undefined {
  const prefix = `${publicUrl}/v1/storage/`;
  if (!url.startsWith(prefix)) return undefined;
  const key = url.slice(prefix.length).split(/[?#]/)[0]!;
  return /^uploads\/[^/]+\/[^/]+\/[^/]+$/.test(key) ? key : undefined;
}

function signature(key: Uint8Array, uploadKey: string, expires: number): string {
  return createHmac('sha256', key).update(`PUT\n${uploadKey}\n${expires}`).digest('base64url');
}

export async function generateUploadURL(ctx: Ctx, organizationId: string, input: GenerateUploadInput) {
  const membership = await requireMembership(ctx, organizationId);
  assertCanUpload(membership, input.kind);
  const { size } = input.file;
  if (!Number.isSafeInteger(size)) throw new BadRequestError('file.size: give the size of the file in bytes, a whole number');
  if (size > ctx.config.uploadMaxBytes) throw new BadRequestError(`file.size: ${size} bytes is more than ${ctx.config.uploadMaxBytes}, the most one upload may send (UPLOAD_MAX_BYTES)`);
  const key = uploadKey(organizationId, newId(), keyName(input.file.name));
  const now = ctx.now();
  const expires = Math.floor(now / 1000) + UPLOAD_URL_TTL_SECONDS;
  await insertUpload(ctx.db, {
    key,
    organization_id: organizationId,
    kind: input.kind,
    name: input.file.name,
    content_type: input.file.type,
    size,
    created_by: ctx.user.id,
    created_at: new Date(now),
    expires_at: new Date(expires * 1000),
  });
  const url =
    (await ctx.blobs.primary.presignPut(key, { expiresIn: UPLOAD_URL_TTL_SECONDS, contentType: input.file.type })) ??
    `${uploadAddress(ctx.config.publicUrl, key)}?expires=${expires}&signature=${signature(ctx.signingKey, key, expires)}`;
  return { object: 'storage-signed-url' as const, url, key };
}

/** Reads exactly `size` bytes from a stream; more or fewer is refused. */
async function readExactly(stream: Readable, size: number, what: string): Promise<Buffer> {
  const chunks: Buffer[] = [];
  let total = 0;
  for await (const chunk of stream as AsyncIterable<Buffer>) {
    total += chunk.byteLength;
    if (total > size) {
      stream.destroy();
      throw new BadRequestError(`${what}: more bytes than the ${size} the upload announced`);
    }
    chunks.push(chunk);
  }
  if (total !== size) throw new BadRequestError(`${what}: ${total} bytes, but the upload announced ${size}`);
  return Buffer.concat(chunks, total);
}

/**
 * The PUT of an upload URL on the embedded store: the signature and expiry are the credential (no
 * token), the bytes must be exactly the size announced, and are stored by hash.
 */
export async function receiveUpload(
  services: Services,
  params: { organizationId: string; uploadId: string; name: string },
  query: { expires?: string | undefined; signature?: string | undefined },
  body: Readable,
): Promise<void> {
  const key = uploadKey(params.organizationId, params.uploadId, params.name);
  const expires = Number(query.expires);
  const given = Buffer.from(query.signature ?? '');
  const expected = Buffer.from(Number.isSafeInteger(expires) ? signature(services.signingKey, key, expires) : '');
  if (given.length === 0 || given.length !== expected.length || !timingSafeEqual(given, expected)) throw new ForbiddenError('This upload URL is not valid');
  if (expires * 1000 < services.now()) throw new ForbiddenError('This upload URL has expired: ask for a new one');
  const row = await findUpload(services.db, params.organizationId, key);
  if (!row) throw new NotFoundError('Upload');
  const data = await readExactly(body, row.size, 'upload');
  const blob = await services.blobs.put(data);
  await setUploadBlob(services.db, row.organization_id, key, blob);
}

/**
 * The bytes of an upload of the organization, for content that uses it (insert_files). An upload
 * sent straight to the bucket is read once, checked against its announced size, stored by hash,
 * and its staging object removed (only after the bytes are stored by hash).
 */
export async function uploadedFile(ctx: Ctx, organizationId: string, key: string): Promise<{ data: Uint8Array; row: UploadRow }> {
  const row = await findUpload(ctx.db, organizationId, key);
  if (!row) throw new BadRequestError(`no upload "${key}" in this organization`);
  let blob = row.blob;
  if (!blob) {
    const staged = await ctx.blobs.bucket?.getUpload(key);
    if (!staged) throw new BadRequestError(`nothing was uploaded to "${key}" yet: PUT the bytes to the URL generateStorageUploadURL answered`);
    const data = await readExactly(staged, row.size, `upload "${key}"`);
    blob = await ctx.blobs.put(data);
    await setUploadBlob(ctx.db, organizationId, key, blob);
    await ctx.blobs.bucket!.deleteUpload(key);
    return { data, row };
  }
  const data = await ctx.blobs.read(blob);
  if (!data) throw new BadRequestError(`the bytes of upload "${key}" are missing`);
  return { data, row };
}
