import { Type } from '@sinclair/typebox';
import { asEnum, Timestamp } from '../platform/schemas.ts';

/**
 * A page of a revision: a document, a group or a link (the official `RevisionPage`). What only
 * some of them have is optional here (a link has no path, a group no layout); the presenter
 * writes each official shape whole. Child pages and document bodies keep their full shape.
 */
export const Page = Type.Object(
  {
    id: Type.String(),
    title: Type.String(),
    kind: Type.String(),
    type: Type.String(),
    urls: Type.Optional(Type.Object({ app: Type.String() })),
    slug: Type.Optional(Type.String()),
    path: Type.Optional(Type.String()),
    pages: Type.Optional(Type.Array(Type.Object({}, { additionalProperties: true }))),
    layout: Type.Optional(Type.Object({}, { additionalProperties: true })),
    tags: Type.Optional(Type.Array(Type.Object({}, { additionalProperties: true }))),
    documentId: Type.Optional(Type.String()),
    markdown: Type.Optional(Type.String()),
    document: Type.Optional(Type.Object({}, { additionalProperties: true })),
    createdAt: Type.Optional(Timestamp),
    updatedAt: Type.Optional(Timestamp),
  },
  { additionalProperties: true },
);

export const File = Type.Object(
  {
    id: Type.String(),
    name: Type.String(),
    contentType: Type.String(),
    downloadURL: Type.String(),
    size: Type.Number(),
  },
  { additionalProperties: true },
);

/** Variable values, as the official `VariableValue`. */
export const Variables = Type.Record(Type.String(), Type.Union([Type.String({ maxLength: 256 }), Type.Number(), Type.Boolean()]));

/** The official `RevisionReusableContent`: `document` is the id of its stored body. */
export const ReusableContent = Type.Object({
  id: Type.String(),
  title: Type.String(),
  document: Type.Optional(Type.String()),
  git: Type.Optional(Type.Object({ oid: Type.String(), path: Type.String() })),
});

/** The official `JSONDocument`. */
export const JsonDocument = Type.Object(
  {
    object: Type.Literal('document'),
    data: Type.Object({}, { additionalProperties: true }),
    nodes: Type.Array(Type.Object({}, { additionalProperties: true })),
  },
  { additionalProperties: true },
);

export const Revision = Type.Object(
  {
    object: Type.Literal('revision'),
    id: Type.String(),
    parents: Type.Array(Type.String()),
    type: Type.String(),
    pages: Type.Array(Page),
    files: Type.Array(File),
    reusableContents: Type.Array(ReusableContent),
    tags: Type.Array(Type.Object({}, { additionalProperties: true })),
    variables: Variables,
    createdAt: Timestamp,
    urls: Type.Object({}, { additionalProperties: true }),
  },
  { additionalProperties: true },
);

const BoolText = asEnum(Type.Union([Type.Literal('true'), Type.Literal('false')]));

export const RevisionQuery = Type.Object({
  metadata: Type.Optional(BoolText),
  computed: Type.Optional(BoolText),
});

/** Reads of a document body alone. */
export const DocumentQuery = Type.Object({
  evaluated: Type.Optional(asEnum(Type.Union([Type.Literal('true'), Type.Literal('false'), Type.Literal('deterministic-only')]))),
  dereferenced: Type.Optional(asEnum(Type.Union([Type.Literal('true'), Type.Literal('false'), Type.Literal('reusable-contents')]))),
});

export const PageQuery = Type.Object({
  format: Type.Optional(asEnum(Type.Union([Type.Literal('document'), Type.Literal('markdown')]))),
  evaluated: Type.Optional(asEnum(Type.Union([Type.Literal('true'), Type.Literal('false'), Type.Literal('deterministic-only')]))),
  dereferenced: Type.Optional(asEnum(Type.Union([Type.Literal('true'), Type.Literal('false'), Type.Literal('reusable-contents')]))),
  'format.markdown.refs': Type.Optional(asEnum(Type.Union([Type.Literal('relative'), Type.Literal('stable')]))),
  metadata: Type.Optional(BoolText),
  computed: Type.Optional(BoolText),
});

