import { createRequire } from 'node:module';
import Ajv2020 from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';

/**
 * Validation of responses against the official GitBook OpenAPI document shipped in @gitbook/api.
 * Every response the official client receives in tests passes through `checkResponse`, which finds
 * the operation by method and path and validates the body against the schema of that status.
 */

const require = createRequire(import.meta.url);
const spec = require('@gitbook/api/spec/openapi.json');
/** The official OpenAPI document (with the workarounds below), for tests that walk its schemas. */
export const officialSpec: { components: { schemas: Record<string, any> }; paths: Record<string, any> } = spec;

type Operation = { operationId: string; responses: Record<string, any> };

// One known defect of the official document: the `attributes` of a page_edited change is a oneOf of
// three schemas where every object valid for the first (document pages) is also valid for the
// second (groups), so no value can ever match exactly one. We check it as anyOf instead.
const edited = spec.components.schemas.RevisionSemanticChangePageEdited.properties.attributes;
if (edited.oneOf) {
  edited.anyOf = edited.oneOf;
  delete edited.oneOf;
}

// Four defects of the Document model, worked around the same way (see docs/api.md):
// 1. a prompt's `data` requires `description` but does not list it while forbidding extra properties;
const schemas = spec.components.schemas;
schemas.DocumentBlockPrompt.properties.data.properties.description = { type: 'string' };
// 2. a button's `data` is an allOf whose second part forbids the `label`/`kind` the first part requires;
for (const branch of schemas.DocumentInlineButton.properties.data.allOf[1].oneOf) delete branch.additionalProperties;
// 3. a table record value that is a file or URL reference matches two branches of a oneOf;
const recordValues = schemas.DocumentTableRecord.properties.values.additionalProperties;
if (recordValues.oneOf) {
  recordValues.anyOf = recordValues.oneOf;
  delete recordValues.oneOf;
}
// 4. `PlainObject` (integration props) has no `type: object`, so a string prop matches two branches.
schemas.PlainObject.type = 'object';

/**
 * Two compilers of the same document. Responses are checked by validators that stop at the first
 * error (a oneOf of the Document model's ~60 block schemas then rejects a wrong branch at its
 * first mismatch); only a response that fails is checked again, by a validator that collects every
 * error, for the message. Whether a value is valid does not depend on `allErrors`: collecting all
 * errors made the checks cost more than the tests' own requests.
 */
function officialAjv(allErrors: boolean): Ajv2020 {
  const ajv = new Ajv2020({ strict: false, allErrors, validateFormats: true });
  addFormats(ajv);
  // Formats the official document uses without defining them (emoji, icon too): any value passes, as Ajv
  // would do for an unknown format, minus its warning at every compile.
  for (const format of ['int32', 'int64', 'float', 'double', 'byte', 'binary', 'password', 'emoji', 'icon']) ajv.addFormat(format, true);
  ajv.addSchema(spec, 'openapi');
  return ajv;
}
const fast = officialAjv(false);
let detailed: Ajv2020 | undefined;

/** A check against `schema`: undefined when the value matches, else every mismatch, one per line. */
type Check = (value: unknown) => string | undefined;

function compileCheck(schema: object): Check {
  const validate = fast.compile(schema);
  let explain: ReturnType<Ajv2020['compile']> | undefined;
  return (value) => {
    if (validate(value)) return undefined;
    detailed ??= officialAjv(true);
    explain ??= detailed.compile(schema);
    explain(value);
    return detailed.errorsText(explain.errors ?? validate.errors, { separator: '\n  ' });
  };
}

const routes: { method: string; pattern: RegExp; template: string; op: Operation }[] = [];
for (const [template, ops] of Object.entries<Record<string, Operation>>(spec.paths)) {
  // A page path is the one parameter that may span several segments.
  const pattern = new RegExp(
    '^' +
      template
        .replace(/[.*+?^$()|[\]\\]/g, '\\$&')
        .replace(/\\?\{pagePath\\?\}/g, '.+')
        .replace(/\\?\{[^}]+\\?\}/g, '[^/]+') +
      '$',
  );
  for (const [method, op] of Object.entries(ops)) {
    if (op && typeof op === 'object' && 'operationId' in op) routes.push({ method: method.toUpperCase(), pattern, template, op });
  }
}
// Literal segments beat parameters: /versions/latest must not match /versions/{versionId}.
routes.sort((a, b) => (b.template.match(/\{/g)?.length ?? 0) < (a.template.match(/\{/g)?.length ?? 0) ? 1 : -1);

const validators = new Map<string, Check>();

function pointer(...parts: string[]): string {
  return parts.map((p) => encodeURIComponent(p.replace(/~/g, '~0').replace(/\//g, '~1'))).join('/');
}

export function findOperation(method: string, path: string) {
  return routes.find((r) => r.method === method && r.pattern.test(path));
}

/** The official JSON schema (as a validator) of an operation's response with a given status. */
function validatorFor(template: string, method: string, status: string, response: any) {
  const key = `${method} ${template} ${status}`;
  let validate = validators.get(key);
  if (!validate) {
    let ref = `openapi#/${pointer('paths', template, method.toLowerCase(), 'responses', status)}`;
    if (response.$ref) ref = `openapi${response.$ref}`;
    validate = compileCheck({ $ref: `${ref}/content/application~1json/schema` });
    validators.set(key, validate);
  }
  return validate;
}

export const seenOperations = new Set<string>();

export class SchemaMismatchError extends Error {}

/** Throws when a response does not match the official schema of its operation and status. */
export function checkResponse(method: string, url: string, status: number, body: string): void {
  const path = new URL(url).pathname.replace(/^\/v1/, '');
  const route = findOperation(method, path);
  if (!route) throw new SchemaMismatchError(`No official operation for ${method} ${path}`);
  seenOperations.add(route.op.operationId);
  const responses = route.op.responses;
  const declared = responses[String(status)];
  if (status >= 400) {
    const parsed = JSON.parse(body);
    if (parsed?.error?.code !== status || typeof parsed.error.message !== 'string') {
      throw new SchemaMismatchError(`${route.op.operationId} ${status}: error body must be {error:{code,message}}, got ${body}`);
    }
    return;
  }
  if (!declared) {
    throw new SchemaMismatchError(
      `${route.op.operationId} answered ${status}, which the official spec does not declare (${Object.keys(responses).join(', ')})`,
    );
  }
  const resolved = declared.$ref ? resolveRef(declared.$ref) : declared;
  if (resolved.content?.['text/event-stream']) return checkEventStream(route.op.operationId, resolved.content['text/event-stream'].schema, body);
  if (!resolved.content?.['application/json']) {
    if (body.length > 0) throw new SchemaMismatchError(`${route.op.operationId} ${status} must have no body, got ${body.slice(0, 200)}`);
    return;
  }
  const mismatch = validatorFor(route.template, method, String(status), declared)(JSON.parse(body));
  if (mismatch) {
    throw new SchemaMismatchError(`${route.op.operationId} ${status} does not match the official schema: ${mismatch}\nbody: ${body.slice(0, 2000)}`);
  }
}

const eventValidators = new Map<string, Check>();

/**
 * A server-sent event stream, read as the official client reads it: every event's `data` is JSON;
 * those without an `event:` name must match the operation's schema, `event: error` carries the
 * usual error body, `event: done` ends the stream.
 */
function checkEventStream(operationId: string, schema: any, body: string): void {
  const key = JSON.stringify(schema);
  let validate = eventValidators.get(key);
  if (!validate) eventValidators.set(key, (validate = compileCheck(schema.$ref ? { $ref: `openapi${schema.$ref}` } : schema)));
  for (const block of body.split(/\r?\n\r?\n/)) {
    if (!block.trim()) continue;
    const lines = block.split(/\r?\n/);
    const event = lines.find((l) => l.startsWith('event:'))?.slice(6).trim();
    const data = lines
      .filter((l) => l.startsWith('data:'))
      .map((l) => l.slice(5).replace(/^ /, ''))
      .join('\n');
    if (event === 'done') continue;
    const parsed = JSON.parse(data);
    if (event === 'error') {
      if (typeof parsed?.error?.message !== 'string') throw new SchemaMismatchError(`${operationId}: an error event must be {error:{code,message}}, got ${data}`);
      continue;
    }
    const mismatch = validate(parsed);
    if (mismatch) throw new SchemaMismatchError(`${operationId} event does not match the official schema: ${mismatch}\ndata: ${data.slice(0, 2000)}`);
  }
}

function resolveRef(ref: string): any {
  return ref
    .replace(/^#\//, '')
    .split('/')
    .reduce((node: any, part) => node[part.replace(/~1/g, '/').replace(/~0/g, '~')], spec);
}

/** A fetch for the official client that checks every response it receives. */
export async function validatingFetch(input: RequestInfo | URL, init?: RequestInit): Promise<Response> {
  const request = new Request(input, init);
  const response = await fetch(request);
  const body = await response.text();
  checkResponse(request.method, request.url, response.status, body);
  return new Response(response.status === 204 || response.status === 205 ? null : body, {
    status: response.status,
    statusText: response.statusText,
    headers: response.headers,
  });
}

/** A validator of one official component schema (with the workarounds above), e.g. `JSONDocument`. */
export function officialSchema(name: string) {
  const check = compileCheck({ $ref: `openapi#/components/schemas/${name}` });
  let last: string | undefined;
  return Object.assign(
    (value: unknown) => {
      last = check(value);
      return last === undefined;
    },
    { errors: () => last ?? 'no errors' },
  );
}
