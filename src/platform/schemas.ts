import { Type, type Static, type TLiteral, type TUnion } from '@sinclair/typebox';

/** Shapes shared by several resource areas. One-line descriptions end up in /v1/openapi.json. */

export const ErrorResponse = Type.Object(
  {
    error: Type.Object({
      code: Type.Integer({ description: 'HTTP status code' }),
      message: Type.String({ description: 'What went wrong and what to fix' }),
      conflicts: Type.Optional(
        Type.Array(Type.Object({ page: Type.String(), title: Type.String(), reason: Type.String() }), {
          description: 'For a refused merge (409): the conflicting pages',
        }),
      ),
    }),
  },
  { $id: 'ErrorResponse' },
);

/**
 * Emits a union of string literals as a plain JSON Schema `enum` (its static type stays the union),
 * so that a wrong value is reported with the list of allowed ones.
 */
export function asEnum<T extends TUnion<TLiteral<string>[]>>(schema: T, options: { description?: string; default?: string } = {}): T {
  const values = schema.anyOf.map((literal) => literal.const);
  delete (schema as { anyOf?: unknown }).anyOf;
  return Object.assign(schema, { type: 'string', enum: values }, options);
}

export const Role = asEnum(
  Type.Union([
    Type.Literal('admin'),
    Type.Literal('create'),
    Type.Literal('review'),
    Type.Literal('edit'),
    Type.Literal('comment'),
    Type.Literal('read'),
  ]),
  { description: 'admin, create, review, edit, comment or read (strongest first)' },
);

/**
 * A role or null. Emitted as one schema (`type: [string, null]` with an `enum`) rather than an
 * anyOf: validation errors stay readable and responses serialize without trying each branch.
 */
export const RoleOrGuest = (() => {
  const schema = Type.Union([Role, Type.Null()], { description: 'A role, or null for guests' });
  delete (schema as { anyOf?: unknown }).anyOf;
  Object.assign(schema, { type: ['string', 'null'], enum: [...(Role as unknown as { enum: string[] }).enum, null] });
  return schema;
})();

export const Timestamp = Type.String({ format: 'date-time' });

export const User = Type.Object({
  object: Type.Literal('user'),
  id: Type.String(),
  displayName: Type.String({ description: 'Full name' }),
  email: Type.Optional(Type.String()),
  photoURL: Type.Optional(Type.String()),
  urls: Type.Object({ location: Type.String({ description: 'URL of the user in the API' }) }),
});
export type UserResource = Static<typeof User>;

/** Rich-text document. Blocks are kept as given (their shape evolves with the editor). */
export const Document = Type.Object(
  {
    object: Type.Literal('document'),
    data: Type.Object({ schemaVersion: Type.Optional(Type.Integer()) }, { additionalProperties: true }),
    nodes: Type.Array(
      Type.Object({ object: Type.String(), type: Type.Optional(Type.String()) }, { additionalProperties: true }),
      { maxItems: 10000 },
    ),
    meta: Type.Optional(Type.Object({ token: Type.Optional(Type.String()) }, { additionalProperties: true })),
  },
  { description: 'Rich-text document' },
);

export const MergeRule = Type.Object({
  rule: Type.Literal('require_specific_reviewers'),
  users: Type.Array(Type.String({ maxLength: 100 }), { maxItems: 100 }),
});

export const MergeRulesRules = Type.Object({ type: Type.Literal('rules'), rules: Type.Array(MergeRule, { maxItems: 20 }) });

export const OrganizationIdParams = Type.Object({ organizationId: Type.String({ maxLength: 100 }) });

/** Error responses every authenticated route may answer; documents them in the OpenAPI output. */
export const errorResponses = {
  400: ErrorResponse,
  401: ErrorResponse,
  403: ErrorResponse,
  404: ErrorResponse,
  429: ErrorResponse,
};
