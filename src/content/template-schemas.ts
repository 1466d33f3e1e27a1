import { Type } from '@sinclair/typebox';
import { TEMPLATES } from './templates.ts';

/** A content reference by name; the template places file references (`{kind: 'file', file, space}`). */
const ContentRef = Type.Object(
  {
    /** Kind of the reference: only `file` can be placed by a template. */
    kind: Type.String({ maxLength: 50 }),
    /** Id of the file, in the space's content. */
    file: Type.Optional(Type.String({ maxLength: 100 })),
    /** Space of the file: this space when omitted. */
    space: Type.Optional(Type.String({ maxLength: 100 })),
  },
  { additionalProperties: true },
);

/** A template and its parameters: what `applySpaceTemplate` and a new site space (`spaceId: null`) take. */
export const ApplySpaceTemplate = Type.Object({
  /** The template to apply. */
  id: Type.String({ maxLength: 100, description: `The template to apply: ${TEMPLATES.map((t) => t.id).join(', ')}` }),
  /** Parameters of the template. */
  params: Type.Optional(
    Type.Object({
      contentRefs: Type.Optional(Type.Record(Type.String({ maxLength: 100 }), ContentRef, { maxProperties: 20, description: 'Files placed where the template references them, by name' })),
    }),
  ),
});

export const ApplyTemplateBody = Type.Object({
  ...ApplySpaceTemplate.properties,
  /** Apply into this change request (id or number) instead of the space's content. */
  changeRequestId: Type.Optional(Type.String({ maxLength: 100, description: "The change request to apply the template to; the space's content when omitted" })),
});

