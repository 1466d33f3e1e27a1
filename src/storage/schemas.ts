import { Type, type Static } from '@sinclair/typebox';
import { asEnum } from '../platform/schemas.ts';

export const OrgParams = Type.Object({ organizationId: Type.String({ maxLength: 100 }) });

export const StorageUploadKind = asEnum(Type.Union([Type.Literal('customization_font'), Type.Literal('import_file'), Type.Literal('organization_file')]), {
  description: 'What the file is for: a font of a site customization, a file to import, or a file of the organization',
});

/** The official `generateStorageUploadURL` body. */
export const GenerateUploadBody = Type.Object(
  {
    file: Type.Object(
      {
        /** Original file name. */
        name: Type.String({ minLength: 1, maxLength: 256, description: 'Original filename' }),
        /** MIME type the upload is sent with. */
        type: Type.String({ minLength: 1, maxLength: 200, description: 'MIME type of the file' }),
        /** Exact size of the bytes the upload sends. */
        size: Type.Number({ minimum: 0, description: 'Size of the file in bytes' }),
      },
      { additionalProperties: false },
    ),
    kind: StorageUploadKind,
  },
  { additionalProperties: false },
);
export type GenerateUploadInput = Static<typeof GenerateUploadBody>;

/** The official `StorageUploadURL`. */
export const StorageUploadURL = Type.Object({
  object: Type.Literal('storage-signed-url', { description: 'The kind of file to upload' }),
  /** Where to PUT the bytes (with the announced content type), until it expires. */
  url: Type.String({ format: 'uri', description: 'Presigned URL for uploading the file' }),
  /** The object's key, which names the upload afterwards. */
  key: Type.String({ description: 'The bucket object key for the file' }),
});

export const UploadParams = Type.Object({
  organizationId: Type.String({ maxLength: 100 }),
  uploadId: Type.String({ maxLength: 100 }),
  name: Type.String({ maxLength: 300 }),
});
export const UploadQuery = Type.Object({
  expires: Type.Optional(Type.String({ maxLength: 20 })),
  signature: Type.Optional(Type.String({ maxLength: 100 })),
});
