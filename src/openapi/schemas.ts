import { Type, type Static } from '@sinclair/typebox';
import { PageQuery } from '../platform/paging.ts';
import { asEnum, Timestamp } from '../platform/schemas.ts';

export const SLUG_PATTERN = '^[a-zA-Z0-9]+(?:-[a-zA-Z0-9]+)*$';
export const Slug = Type.String({ minLength: 1, maxLength: 100, pattern: SLUG_PATTERN, description: 'Slug of the spec: letters and digits, words joined by single hyphens (1 to 100 characters)' });
const SourceURL = Type.String({ format: 'uri', maxLength: 2048, pattern: '^[hH][tT][tT][pP][sS]?://', description: 'http(s) URL of the spec (JSON or YAML)' });

export const Visibility = asEnum(Type.Union([Type.Literal('private'), Type.Literal('public')]), {
  description: 'private (members only) or public (anyone with the link)',
});

export const Source = Type.Union(
  [
    Type.Object({ url: SourceURL }, { additionalProperties: false }),
    Type.Object({ text: Type.String({ minLength: 1, description: 'The spec itself, JSON or YAML' }) }, { additionalProperties: false }),
  ],
  { description: 'Where the spec comes from: `{url}` (fetched, and refreshed periodically) or `{text}`' },
);

export const OrgParams = Type.Object({ organizationId: Type.String({ maxLength: 100 }) });
export const SpecParams = Type.Object({ organizationId: Type.String({ maxLength: 100 }), specSlug: Type.String({ maxLength: 100 }) });
export const VersionParams = Type.Object({
  organizationId: Type.String({ maxLength: 100 }),
  specSlug: Type.String({ maxLength: 100 }),
  versionId: Type.String({ maxLength: 100 }),
});
export const ListQuery = Type.Object({ ...PageQuery });

export const CreateSpecBody = Type.Object({ slug: Slug, source: Source });
export const PutSpecBody = Type.Object({ source: Source });
export const PatchSpecBody = Type.Object({ visibility: Visibility });

export const ProcessError = Type.Object({
  message: Type.String({ description: 'What is wrong, with the file, line and JSON pointer when known' }),
  code: Type.String({ description: 'FETCH_TIMEOUT, FETCH_ERROR or PARSE_ERROR' }),
  file: Type.Optional(Type.String({ description: 'File of the spec the problem is in' })),
  pointer: Type.Optional(Type.String({ description: 'JSON pointer (RFC 6901) of the place in that file' })),
  line: Type.Optional(Type.Integer({ description: 'Line (1-based) of that place' })),
});

export const OpenAPISpec = Type.Object({
  object: Type.Literal('openapi-spec'),
  id: Type.String(),
  createdAt: Timestamp,
  updatedAt: Timestamp,
  slug: Type.String(),
  sourceURL: Type.Optional(Type.String({ description: 'Where the spec is fetched from (absent for a spec given as text)' })),
  processingState: asEnum(Type.Union([Type.Literal('pending'), Type.Literal('progress'), Type.Literal('complete')])),
  visibility: Visibility,
  lastVersion: Type.Optional(Type.String({ description: 'Id of the latest version' })),
  lastProcessedAt: Type.Optional(Timestamp),
  lastProcessErrorCode: Type.Optional(asEnum(Type.Union([Type.Literal('FETCH_TIMEOUT'), Type.Literal('FETCH_ERROR'), Type.Literal('PARSE_ERROR')]))),
  lastProcessedErrors: Type.Array(ProcessError),
  lastProcessedErrorCount: Type.Integer({ minimum: 0, description: 'How many problems the last processing found (lastProcessedErrors holds the first 20)' }),
  permissions: Type.Object({ view: Type.Boolean(), edit: Type.Boolean() }),
  urls: Type.Object({ location: Type.String(), app: Type.String(), published: Type.Optional(Type.String()) }),
});
export type OpenAPISpecResource = Static<typeof OpenAPISpec>;

export const OpenAPISpecVersion = Type.Object({
  object: Type.Literal('openapi-spec-version'),
  id: Type.String(),
  createdAt: Timestamp,
  url: Type.String({ description: 'URL the version was fetched from' }),
  urls: Type.Object({ location: Type.String() }),
});

/** Sent as JSON text assembled from stored blobs (see presenter); declared here for the reference. */
export const OpenAPISpecContent = Type.Object({
  filesystem: Type.Object({}, { additionalProperties: true, description: 'Every file of the spec by path (relative to the root file\'s folder), each its parsed document' }),
  url: Type.String({ description: 'URL of the root file' }),
  entrypoint: Type.String({ description: 'Path of the root file in filesystem' }),
  urls: Type.Object({ source: Type.String(), public: Type.Union([Type.String(), Type.Null()]) }),
});

export const OpenAPISpecRawContent = Type.Object({
  text: Type.String({ description: 'The root file as fetched' }),
  format: asEnum(Type.Union([Type.Literal('json'), Type.Literal('yaml')])),
});
