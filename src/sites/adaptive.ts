import Ajv from 'ajv';
import type { Ctx } from '../platform/context.ts';
import type { SiteRow } from '../platform/db/schema.ts';
import { BadRequestError } from '../platform/errors.ts';
import { requireSite } from './access.ts';
import { updateSite } from './store.ts';

/**
 * Adaptive content: a site describes the claims its visitors carry with a JSON Schema (draft-07).
 * Folio accepts the shape GitBook documents: an object of boolean claims, each with a
 * description, plus a nested `unsigned` object of boolean claims, both closed with
 * `additionalProperties: false`. Conditions on site spaces and sections then test those claims.
 */

const DRAFT_07 = 'http://json-schema.org/draft-07/schema#';
const UNSIGNED_DESCRIPTION = 'Unsigned claims of the site visitor.';
const CLAIM_NAME = /^[A-Za-z_][A-Za-z0-9_]{0,99}$/;
const ajv = new Ajv({ strict: false });

type Obj = Record<string, unknown>;
const isObject = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);

function emptySchema(): Obj {
  return {
    type: 'object',
    properties: { unsigned: { type: 'object', description: UNSIGNED_DESCRIPTION, properties: {}, additionalProperties: false } },
    additionalProperties: false,
  };
}

/** Checks the claims of one object level and returns them normalized; `where` names it in errors. */
function claims(level: Obj, where: string): Obj {
  const bad = (what: string) => new BadRequestError(`${where}: ${what}`);
  if (level.type !== 'object') throw bad('"type" must be "object"');
  if (level.additionalProperties !== false) throw bad('"additionalProperties" must be false (visitors may only carry the claims you list)');
  if (!isObject(level.properties)) throw bad('"properties" must be an object of claims');
  const out: Obj = {};
  for (const [name, claim] of Object.entries(level.properties)) {
    if (name === 'unsigned' && where === 'jsonSchema') continue;
    if (!CLAIM_NAME.test(name)) throw bad(`claim "${name}" must be a name of letters, digits and underscores, not starting with a digit`);
    if (!isObject(claim) || claim.type !== 'boolean') throw bad(`claim "${name}" must be {"type": "boolean", "description": "…"}: only boolean claims are supported`);
    if (typeof claim.description !== 'string' || claim.description.trim() === '') throw bad(`claim "${name}" needs a non-empty "description"`);
    const extra = Object.keys(claim).filter((k) => k !== 'type' && k !== 'description');
    if (extra.length) throw bad(`claim "${name}" may only have "type" and "description" (remove ${extra.join(', ')})`);
    out[name] = { type: 'boolean', description: claim.description };
  }
  return out;
}

/** The normalized schema, or a 400 that says what to change. */
export function validateAdaptiveSchema(input: Obj): Obj {
  if (input.$schema !== undefined && input.$schema !== DRAFT_07) throw new BadRequestError(`jsonSchema.$schema: only "${DRAFT_07}" (draft-07) is supported`);
  const extra = Object.keys(input).filter((k) => !['$schema', 'type', 'properties', 'additionalProperties'].includes(k));
  if (extra.length) throw new BadRequestError(`jsonSchema: unexpected keywords ${extra.join(', ')}; use type, properties and additionalProperties`);
  const top = claims(input, 'jsonSchema');
  const unsignedIn = isObject(input.properties) ? input.properties.unsigned : undefined;
  let unsigned: Obj = {};
  if (unsignedIn !== undefined) {
    if (!isObject(unsignedIn)) throw new BadRequestError('jsonSchema.properties.unsigned: must be an object schema of boolean claims');
    const unknown = Object.keys(unsignedIn).filter((k) => !['type', 'description', 'properties', 'additionalProperties'].includes(k));
    if (unknown.length) throw new BadRequestError(`jsonSchema.properties.unsigned: unexpected keywords ${unknown.join(', ')}`);
    unsigned = claims(unsignedIn, 'jsonSchema.properties.unsigned');
  }
  const schema: Obj = {
    ...(input.$schema ? { $schema: DRAFT_07 } : {}),
    type: 'object',
    properties: { ...top, unsigned: { type: 'object', description: UNSIGNED_DESCRIPTION, properties: unsigned, additionalProperties: false } },
    additionalProperties: false,
  };
  // Whatever passed the checks above must also be a schema a draft-07 validator accepts.
  if (!ajv.validateSchema(schema)) throw new BadRequestError(`jsonSchema: not a valid draft-07 JSON Schema (${ajv.errorsText(ajv.errors)})`);
  return schema;
}

function present(site: SiteRow) {
  return {
    object: 'site-adaptive-schema' as const,
    jsonSchema: (site.adaptive_schema as Obj | null) ?? emptySchema(),
    updatedAt: (site.adaptive_schema_updated_at ?? site.created_at).toISOString(),
  };
}

export async function getAdaptiveSchema(ctx: Ctx, organizationId: string, siteId: string) {
  const { site } = await requireSite(ctx, organizationId, siteId, 'create', 'read the adaptive schema of the site');
  return present(site);
}

export async function putAdaptiveSchema(ctx: Ctx, organizationId: string, siteId: string, jsonSchema: Obj) {
  const { site } = await requireSite(ctx, organizationId, siteId, 'admin', 'change the adaptive schema of the site');
  const schema = validateAdaptiveSchema(jsonSchema);
  const updated = await updateSite(ctx.db, site.organization_id, site.id, { adaptiveSchema: schema });
  return present(updated);
}

/** One suggested condition per claim: `visitor.claims.<name>` and `visitor.claims.unsigned.<name>`. */
export async function templateConditions(ctx: Ctx, organizationId: string, siteId: string) {
  const { site } = await requireSite(ctx, organizationId, siteId, 'create', 'read the adaptive schema of the site');
  const schema = (site.adaptive_schema as Obj | null) ?? emptySchema();
  const items: { description: string; condition: string }[] = [];
  const props = (isObject(schema.properties) ? schema.properties : {}) as Record<string, Obj>;
  for (const [name, claim] of Object.entries(props)) {
    if (name === 'unsigned') continue;
    items.push({ description: String(claim.description), condition: `visitor.claims.${name}` });
  }
  const unsigned = (isObject(props.unsigned?.properties) ? props.unsigned!.properties : {}) as Record<string, Obj>;
  for (const [name, claim] of Object.entries(unsigned)) {
    items.push({ description: String(claim.description), condition: `visitor.claims.unsigned.${name}` });
  }
  return { items };
}
