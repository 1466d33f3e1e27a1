import { Type, type Static } from '@sinclair/typebox';
import { PageQuery } from '../platform/paging.ts';
import { asEnum, Timestamp } from '../platform/schemas.ts';

const EntityId = (description: string) => Type.String({ maxLength: 100, pattern: '^[a-zA-Z0-9_-]+$', description });

export const OrgParams = Type.Object({ organizationId: Type.String({ maxLength: 100 }) });
export const ImportRunParams = Type.Object({ organizationId: Type.String({ maxLength: 100 }), importRunId: EntityId('The unique id of the import run') });

export const MAX_IMPORT_FILES = 50;

/** The official ContentImportSource: a website, or uploaded files (keys from generateStorageUploadURL). */
export const ContentImportSource = Type.Union([
  Type.Object(
    {
      type: Type.Literal('website'),
      url: Type.String({ format: 'uri', maxLength: 2048, description: 'URL of the website to import' }),
    },
    { additionalProperties: false },
  ),
  Type.Object(
    {
      type: Type.Literal('file'),
      files: Type.Array(Type.String({ minLength: 1, maxLength: 512, description: 'Key of file' }), {
        minItems: 1,
        maxItems: MAX_IMPORT_FILES,
        description: 'Files to import: keys from generateStorageUploadURL (Markdown, MDX, zip archives, images)',
      }),
    },
    { additionalProperties: false },
  ),
]);
export type ContentImportSourceInput = Static<typeof ContentImportSource>;

/** The official ContentImportTarget. */
export const ContentImportTarget = Type.Object(
  {
    space: Type.String({ maxLength: 100, description: 'ID of the space to import in' }),
    changeRequest: Type.Optional(Type.String({ maxLength: 100, description: 'ID of the change request to import in (else the import is merged into the space as one revision)' })),
    page: Type.Optional(Type.String({ maxLength: 100, description: 'ID of the page to import under (else at the top level)' })),
  },
  { additionalProperties: false },
);

export const StartImportBody = Type.Object(
  {
    source: ContentImportSource,
    target: ContentImportTarget,
    site: Type.Optional(Type.String({ maxLength: 100, description: 'ID of the site the import is for' })),
    enhance: Type.Optional(Type.Boolean({ description: 'Enhance the imported content with AI (accepted; Folio imports the content as it is)' })),
  },
  { additionalProperties: false },
);
export type StartImportInput = Static<typeof StartImportBody>;

const Status = asEnum(
  Type.Union([Type.Literal('pending'), Type.Literal('in-progress'), Type.Literal('completed'), Type.Literal('failed'), Type.Literal('cancelled')]),
  { description: 'Status of the import' },
);

export const ListImportRunsQuery = Type.Object({
  space: Type.Optional(Type.String({ maxLength: 100, description: 'Only the import runs targeting this space' })),
  changeRequest: Type.Optional(Type.String({ maxLength: 100, description: 'Only the import runs targeting this change request' })),
  site: Type.Optional(Type.String({ maxLength: 100, description: 'Only the import runs targeting a space of this site' })),
  status: Type.Optional(
    asEnum(Type.Union([Type.Literal('active'), Type.Literal('pending'), Type.Literal('in-progress'), Type.Literal('completed'), Type.Literal('failed'), Type.Literal('cancelled')]), {
      description: 'Only the import runs in this status; active covers pending and in-progress',
    }),
  ),
  ...PageQuery,
});

/** The official ContentImportRun, with Folio's additions (the official schema permits more properties). */
export const ContentImportRun = Type.Object({
  object: Type.Literal('import-run'),
  id: Type.String({ description: 'Unique ID of the import' }),
  status: Status,
  reason: Type.Optional(Type.String({ description: 'Why the import failed, when status is failed' })),
  source: ContentImportSource,
  target: ContentImportTarget,
  site: Type.Optional(Type.String()),
  createdBy: Type.Optional(Type.String({ description: 'ID of the user who started the import' })),
  createdAt: Timestamp,
  updatedAt: Timestamp,
  startedAt: Type.Optional(Timestamp),
  completedAt: Type.Optional(Timestamp),
  urls: Type.Object({ location: Type.String({ format: 'uri', description: 'URL of the import run in the API' }) }),
  pages: Type.Optional(
    Type.Array(
      Type.Object({
        id: Type.String({ description: 'ID of the page' }),
        sourceURL: Type.Optional(Type.String({ description: 'Where the page was imported from (its path in the files)' })),
        type: asEnum(Type.Union([Type.Literal('page'), Type.Literal('folder')])),
        status: asEnum(Type.Union([Type.Literal('complete'), Type.Literal('pending')])),
      }),
    ),
  ),
  project: Type.Optional(Type.String({ description: 'Folio: what the files were recognised as: docusaurus, mkdocs, folder or files' })),
  progress: Type.Object(
    {
      pagesFound: Type.Integer({ description: 'Pages found in the source' }),
      pagesConverted: Type.Integer({ description: 'Pages converted' }),
      pagesFailed: Type.Integer({ description: 'Pages that could not be converted (imported empty)' }),
    },
    { description: 'Folio: progress of the import' },
  ),
  warnings: Type.Array(
    Type.Object({
      page: Type.Optional(Type.String({ description: 'The source file it is about' })),
      message: Type.String(),
    }),
    { description: 'Folio: what could not be converted as it was, per page (at most 1,000)' },
  ),
  result: Type.Optional(
    Type.Object(
      {
        revision: Type.String({ description: 'The revision holding the import' }),
        changeRequest: Type.Optional(Type.String({ description: 'The change request the import went into' })),
      },
      { description: 'Folio: where the import landed, once completed' },
    ),
  ),
});
export type ContentImportRunResource = Static<typeof ContentImportRun>;
