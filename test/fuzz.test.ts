/**
 * Fuzz of the whole API (issue 18): malformed requests to every operation of Folio's own
 * /v1/openapi.json, as an organization admin on real fixtures (so requests reach the handlers) and
 * a few without a valid token. No answer may be a 5xx, and every error answer must be
 * `{ error: { code: <the HTTP status>, message: <non-empty> } }`.
 *
 * Reproducible: each case is generated from the run's seed and its own index, so a failure prints
 * `FUZZ_SEED=<seed> FUZZ_CASE=<index>` to replay exactly that request (FUZZ_CASES sets how many).
 * The suite sends about ten cases per operation with a new seed each run, so runs add up to a deep
 * search; `FUZZ_CASES=20000 npm test -- test/fuzz.test.ts` searches deeper at once.
 * Bodies and query strings are generated from the schemas of the OpenAPI document, then broken:
 * wrong types, missing required fields, unknown fields, huge strings, deep nesting, invalid UTF-8,
 * lone surrogates, wrong content types, empty bodies, arrays and nulls in place of objects,
 * out-of-range numbers, malformed path ids, query strings and paging cursors.
 */
import assert from 'node:assert/strict';
import { randomInt } from 'node:crypto';
import { Agent, request as httpRequest } from 'node:http';
import { after, before, describe, test } from 'node:test';
import { addMember, newOrg } from './support/factories.ts';
import { startTestServer, type TestServer, type TestUser } from './support/server.ts';

const SEED = process.env.FUZZ_SEED ? Number(process.env.FUZZ_SEED) : randomInt(2 ** 31);
const CASES = Number(process.env.FUZZ_CASES ?? 3_000);
const ONLY = process.env.FUZZ_CASE === undefined ? undefined : Number(process.env.FUZZ_CASE);
const CONCURRENCY = 6;
const BODY_LIMIT = 2 * 1024 * 1024;

type Json = null | boolean | number | string | Json[] | { [key: string]: Json };
type Schema = Record<string, any>;

/** mulberry32: small, fast, and the same sequence for the same seed on every platform. */
class Rng {
  private state: number;
  constructor(seed: number) {
    this.state = seed | 0;
  }
  next(): number {
    let x = (this.state = (this.state + 0x6d2b79f5) | 0);
    x = Math.imul(x ^ (x >>> 15), x | 1);
    x ^= x + Math.imul(x ^ (x >>> 7), x | 61);
    return ((x ^ (x >>> 14)) >>> 0) / 4294967296;
  }
  int(n: number): number {
    return Math.floor(this.next() * n);
  }
  pick<T>(items: readonly T[]): T {
    return items[this.int(items.length)]!;
  }
  chance(p: number): boolean {
    return this.next() < p;
  }
}

/** The generator of case `index`: independent of the other cases, so any one can be replayed alone. */
const caseRng = (index: number) => new Rng(Math.imul(SEED ^ 0x9e3779b9, 0x85ebca6b) ^ Math.imul(index + 1, 0xc2b2ae35));

// ---------------------------------------------------------------------------------------------
// Fixtures: ids the generated requests use, so that they reach handlers rather than 404s.

interface Fixtures {
  /** Path parameter and body field name → a real id of that kind. */
  ids: Record<string, string>;
  /** The same for destructive operations (DELETE, move, transfer, merge…): spare objects. */
  victims: Record<string, string>;
  /** Ids of another organization's objects, for cross-tenant references. */
  foreign: string[];
  /** Real `next.page` cursors, by operation, to be tampered with. */
  cursors: Map<string, string>;
}

let t: TestServer;
let admin: TestUser;
let fx: Fixtures;
let spec: { paths: Record<string, Record<string, Schema>> };
const agent = new Agent({ keepAlive: true, maxSockets: CONCURRENCY });

async function ok(method: string, path: string, body?: unknown, token = admin.token): Promise<any> {
  const res = await t.request(method, path, { token, ...(body !== undefined ? { body } : {}) });
  assert.ok(res.status < 300, `${method} ${path}: ${res.status} ${String(JSON.stringify(res.body)).slice(0, 300)}`);
  return res.body;
}

const changeContent = (space: string, cr: string, changes: unknown[]) =>
  ok('POST', `/v1/spaces/${space}/change-requests/${cr}/content`, { changes });

/** A space with a merged page and file (so it has content, a revision and a file), in a collection. */
async function contentSpace(org: string, collection: string, title: string) {
  const space = await ok('POST', `/v1/orgs/${org}/spaces`, { title, parent: collection });
  const seed = await ok('POST', `/v1/spaces/${space.id}/change-requests`, { subject: 'seed' });
  await changeContent(space.id, seed.id, [
    { operation: 'insert_page', title: 'Fuzz page', slug: 'fuzz-page', document: { markdown: '# Fuzz\n\nSee [other](https://example.com).\n' } },
    { operation: 'insert_files', files: [{ name: 'fuzz.txt', contentType: 'text/plain', base64: Buffer.from('fuzz').toString('base64') }] },
  ]);
  await ok('POST', `/v1/spaces/${space.id}/change-requests/${seed.id}/merge`);
  const revision = await ok('GET', `/v1/spaces/${space.id}/content`);
  const page = revision.pages[0].id as string;
  const file = revision.files[0].id as string;
  return { space: space.id as string, revision: revision.id as string, page, file };
}

async function changeRequestWithComments(space: string, page: string, reviewer: TestUser) {
  const cr = await ok('POST', `/v1/spaces/${space}/change-requests`, { subject: 'fuzz' });
  await changeContent(space, cr.id, [{ operation: 'update_page', page, document: { markdown: '# Fuzz\n\nEdited.\n' } }]);
  await changeContent(space, cr.id, [{ operation: 'insert_page', title: 'New page', document: { markdown: 'New.' } }]);
  const review = await ok('POST', `/v1/spaces/${space}/change-requests/${cr.id}/reviews`, { status: 'changes-requested' }, reviewer.token);
  await ok('POST', `/v1/spaces/${space}/change-requests/${cr.id}/requested-reviewers`, { users: [reviewer.id] });
  const crComment = await ok('POST', `/v1/spaces/${space}/change-requests/${cr.id}/comments`, { body: { markdown: 'On the CR' } });
  const crReply = await ok('POST', `/v1/spaces/${space}/change-requests/${cr.id}/comments/${crComment.id}/replies`, { body: { markdown: 'Reply' } });
  return { cr: cr.id as string, review: review.id as string, crComment: crComment.id as string, crReply: crReply.id as string };
}

async function spaceComment(space: string) {
  const comment = await ok('POST', `/v1/spaces/${space}/comments`, { body: { markdown: 'On the space' } });
  const reply = await ok('POST', `/v1/spaces/${space}/comments/${comment.id}/replies`, { body: { markdown: 'Reply' } });
  return { comment: comment.id as string, reply: reply.id as string };
}

async function makeFixtures(): Promise<Fixtures> {
  const made = await newOrg(t, 'Fuzz Inc');
  const org = made.org;
  admin = made.admin;
  const reviewer = await t.user('Rita Reviewer');
  const member = await t.user('Mel Member');
  const spare = await t.user('Sam Spare');
  for (const [u, role] of [[reviewer, 'review'], [member, 'edit'], [spare, 'read']] as const) await addMember(t, org.id, u, role);

  const sets: Record<string, string>[] = [];
  for (const label of ['main', 'victim']) {
    const collection = await ok('POST', `/v1/orgs/${org.id}/collections`, { title: `${label} collection` });
    const { space, revision, page, file } = await contentSpace(org.id, collection.id, `${label} space`);
    const crs = await changeRequestWithComments(space, page, reviewer);
    const comments = await spaceComment(space);
    const team = await ok('PUT', `/v1/orgs/${org.id}/teams`, { title: `${label} team`, members: [member.id, spare.id] });
    const invite = await ok('POST', `/v1/orgs/${org.id}/link-invites`, { role: 'read' });
    const token = await ok('POST', '/v1/user/tokens', { name: `${label} token` });
    await ok('POST', `/v1/spaces/${space}/permissions`, { role: 'read', users: [spare.id], teams: [team.id] });
    await ok('POST', `/v1/collections/${collection.id}/permissions`, { role: 'read', users: [spare.id], teams: [team.id] });
    sets.push({
      organizationId: org.id,
      organization: org.id,
      collectionId: collection.id,
      collection: collection.id,
      parent: collection.id,
      spaceId: space,
      space,
      revisionId: revision,
      revision,
      pageId: page,
      page,
      into: page,
      fileId: file,
      changeRequestId: crs.cr,
      reviewId: crs.review,
      commentId: comments.comment,
      commentReplyId: comments.reply,
      crCommentId: crs.crComment,
      crCommentReplyId: crs.crReply,
      teamId: team.id,
      team: team.id,
      inviteId: invite.id,
      tokenId: token.id,
      // Member routes act on a member, never on the admin making the calls.
      userId: label === 'main' ? member.id : spare.id,
      user: member.id,
      users: member.id,
      members: member.id,
      add: member.id,
      remove: member.id,
      teams: team.id,
      emailDomain: 'example.com',
      '*': 'fuzz-page',
    });
  }

  // Another organization (the admin is not in it) whose ids are offered as references.
  const { admin: otherAdmin, org: other } = await newOrg(t, 'Elsewhere');
  const otherSpace = await ok('POST', `/v1/orgs/${other.id}/spaces`, { title: 'Theirs' }, otherAdmin.token);
  const foreign = [other.id, otherSpace.id as string, otherAdmin.id];

  return { ids: sets[0]!, victims: sets[1]!, foreign, cursors: new Map() };
}

// ---------------------------------------------------------------------------------------------
// Operations of the OpenAPI document.

interface Operation {
  id: string;
  method: string;
  /** Path template, e.g. /v1/spaces/{spaceId}/comments/{commentId}. */
  path: string;
  pathParams: string[];
  query: Record<string, Schema>;
  body: Schema | undefined;
  destructive: boolean;
  /** Answers without a token (`security: []`): health checks. */
  public: boolean;
}

function operations(): Operation[] {
  const out: Operation[] = [];
  for (const [path, methods] of Object.entries(spec.paths)) {
    for (const [method, op] of Object.entries(methods)) {
      const params = (op.parameters ?? []) as { in: string; name: string; schema: Schema }[];
      out.push({
        id: op.operationId ?? `${method} ${path}`,
        method: method.toUpperCase(),
        path,
        pathParams: [...path.matchAll(/\{([^}]+)\}/g)].map((m) => m[1]!),
        query: Object.fromEntries(params.filter((p) => p.in === 'query').map((p) => [p.name, p.schema])),
        body: op.requestBody?.content?.['application/json']?.schema,
        public: Array.isArray(op.security) && op.security.length === 0,
        destructive: method === 'delete' || /\/(move|transfer|merge|restore)$/.test(path) || (method === 'patch' && /change-requests\/\{changeRequestId\}$/.test(path)),
      });
    }
  }
  return out;
}

/** The fixture id for a path parameter; comment ids under a change request are that CR's. */
function idFor(op: Operation, name: string, ids: Record<string, string>): string {
  const underCr = op.path.includes('{changeRequestId}/comments');
  if (underCr && name === 'commentId') return ids.crCommentId!;
  if (underCr && name === 'commentReplyId') return ids.crCommentReplyId!;
  if (name === 'userId' && op.path.startsWith('/v1/users/')) return admin.id;
  return ids[name] ?? 'unknown';
}

// ---------------------------------------------------------------------------------------------
// Values from schemas.

/** The concrete schema to generate from: one branch of if/then/else, allOf of conditionals, anyOf. */
function branch(schema: Schema, rng: Rng): Schema {
  if (schema.if && schema.then) {
    if (rng.chance(0.7) || !schema.else) return branch(schema.then, rng);
    return branch(schema.else, rng);
  }
  const conditionals: Schema[] = (schema.allOf ?? []).filter((s: Schema) => s.if && s.then);
  if (conditionals.length) return branch(rng.pick(conditionals).then, rng);
  const choices = schema.anyOf ?? schema.oneOf;
  if (choices?.length) return branch(rng.pick(choices), rng);
  return schema;
}

function typeOf(schema: Schema, rng: Rng): string {
  if (Array.isArray(schema.type)) {
    const types = schema.type.filter((x: string) => x !== 'null');
    return types.length ? rng.pick(types) : 'null';
  }
  if (schema.type) return schema.type;
  if (schema.properties) return 'object';
  if (schema.items) return 'array';
  return 'string';
}

function stringFor(schema: Schema, name: string | undefined, rng: Rng): string {
  if (name && fx.ids[name] && rng.chance(0.8)) return fx.ids[name]!;
  if (name && rng.chance(0.1)) return rng.pick(fx.foreign);
  let s: string;
  if (schema.format === 'uri') s = rng.pick(['http://127.0.0.1:1/a.png', 'https://localhost/x', 'mailto:a@b.c']);
  else if (schema.format === 'date-time') s = new Date(Date.now() + 86_400_000 * (1 + rng.int(30))).toISOString();
  else if (schema.format === 'email' || name === 'email' || name === 'emails') s = `fuzz${rng.int(1e6)}@example.com`;
  else if (schema.pattern) s = 'fuzz-value';
  else s = rng.pick(['fuzz', 'Fuzz title', 'ü ☃ 😀', 'a', 'x y z']);
  if (schema.maxLength !== undefined) s = s.slice(0, schema.maxLength);
  if (schema.minLength !== undefined && s.length < schema.minLength) s = s.padEnd(schema.minLength, 'x');
  return s;
}

function valid(schema: Schema, rng: Rng, name?: string, depth = 0): Json {
  const s = branch(schema, rng);
  if ('const' in s) return s.const;
  if (Array.isArray(s.enum)) return rng.pick(s.enum);
  switch (typeOf(s, rng)) {
    case 'object': {
      const out: Record<string, Json> = {};
      const required: string[] = s.required ?? [];
      for (const [key, sub] of Object.entries<Schema>(s.properties ?? {})) {
        if (required.includes(key) || (depth < 4 && rng.chance(0.4))) out[key] = valid(sub, rng, key, depth + 1);
      }
      return out;
    }
    case 'array': {
      const min = s.minItems ?? 0;
      const n = Math.min(Math.max(min, rng.int(3)), s.maxItems ?? 3);
      return depth > 5 ? [] : Array.from({ length: n }, () => valid(s.items ?? {}, rng, name, depth + 1));
    }
    case 'integer':
    case 'number': {
      const min = s.minimum ?? 0;
      const max = s.maximum ?? min + 10;
      return min + rng.int(Math.min(max - min, 10) + 1);
    }
    case 'boolean':
      return rng.chance(0.5);
    case 'null':
      return null;
    default:
      return stringFor(s, name, rng);
  }
}

// ---------------------------------------------------------------------------------------------
// Mutations.

/** A spot in a generated value: the containing object/array, the key, and the schema there. */
interface Spot {
  parent: Record<string, Json> | Json[];
  key: string | number;
  schema: Schema;
}

/** Every field of `value` that the schema declares (or, for arrays, every item), depth first. */
function spots(value: Json, schema: Schema, rng: Rng, out: Spot[] = [], depth = 0): Spot[] {
  if (depth > 8 || value === null || typeof value !== 'object') return out;
  const s = branch(schema, rng);
  if (Array.isArray(value)) {
    value.forEach((item, i) => {
      out.push({ parent: value, key: i, schema: s.items ?? {} });
      spots(item, s.items ?? {}, rng, out, depth + 1);
    });
  } else {
    for (const [key, item] of Object.entries(value)) {
      const sub = s.properties?.[key] ?? {};
      out.push({ parent: value, key, schema: sub });
      spots(item, sub, rng, out, depth + 1);
    }
  }
  return out;
}

/** Objects inside `value` whose schema lists required fields, with those fields. */
function requiredSpots(value: Json, schema: Schema, rng: Rng): { target: Record<string, Json>; required: string[] }[] {
  const out: { target: Record<string, Json>; required: string[] }[] = [];
  const visit = (v: Json, s: Schema, depth: number) => {
    if (depth > 8 || v === null || typeof v !== 'object') return;
    const b = branch(s, rng);
    if (Array.isArray(v)) return v.forEach((item) => visit(item, b.items ?? {}, depth + 1));
    const required = (b.required ?? []).filter((k: string) => k in v);
    if (required.length) out.push({ target: v, required });
    for (const [k, item] of Object.entries(v)) visit(item, b.properties?.[k] ?? {}, depth + 1);
  };
  visit(value, schema, 0);
  return out;
}

/** A value of another type than the schema declares. */
function wrongType(schema: Schema, rng: Rng): Json {
  const type = typeOf(schema, rng);
  const candidates: Json[] = [
    'string', '', 0, -1, 1.5, true, false, null, [], [1, 'a'], {}, { a: 1 }, 1e308, -1e308, 2 ** 53 + 2, '1', 'true', 'null',
  ];
  const different = candidates.filter((c) => {
    if (type === 'string') return typeof c !== 'string';
    if (type === 'integer') return !Number.isInteger(c);
    if (type === 'number') return typeof c !== 'number';
    if (type === 'boolean') return typeof c !== 'boolean';
    if (type === 'array') return !Array.isArray(c);
    if (type === 'object') return c === null || typeof c !== 'object' || Array.isArray(c);
    return true;
  });
  return rng.pick(different.length ? different : candidates);
}

/** Numbers at and past the edges: JSON text, since some (1e400, -0) do not survive JSON.stringify. */
const EDGE_NUMBERS = ['-1', '0', '-0', '1e400', '-1e400', '1e-400', '9007199254740993', '18446744073709551616', '2147483648', '-2147483649', '0.5', '1E2', '123456789012345678901234567890'];

/** Bytes that are not UTF-8, and escapes that decode to lone surrogates or NUL. */
const BAD_TEXT: { raw: Buffer | string }[] = [
  { raw: Buffer.from([0x22, 0xff, 0xfe, 0x22]) },
  { raw: Buffer.from([0x22, 0xc3, 0x28, 0x22]) },
  { raw: Buffer.from([0x22, 0xed, 0xa0, 0x80, 0x22]) }, // CESU-8 surrogate
  { raw: Buffer.from([0x22, 0xf4, 0x90, 0x80, 0x80, 0x22]) }, // past U+10FFFF
  { raw: Buffer.from([0x22, 0xe2, 0x82, 0x22]) }, // truncated sequence
  { raw: '"\\ud800"' },
  { raw: '"\\udfff tail"' },
  { raw: '"a\\ud83d"' },
  { raw: '"\\u0000"' },
  { raw: '"nul\\u0000inside"' },
  { raw: '"\\u001b[31mred"' },
];

/** JSON text nested `depth` levels, written as text (JSON.stringify overflows the stack on it). */
function deep(depth: number, rng: Rng): string {
  if (rng.chance(0.5)) return '['.repeat(depth) + ']'.repeat(depth);
  return '{"a":'.repeat(depth) + 'null' + '}'.repeat(depth);
}

interface Request {
  method: string;
  path: string;
  headers: Record<string, string>;
  body: Buffer | undefined;
  kind: string;
  /** Sent without a valid token to an operation that needs one. */
  unauthenticated: boolean;
}

/** Builds JSON text in which marked strings are replaced by raw pieces (bytes or JSON text). */
class RawJson {
  private raws: (Buffer | string)[] = [];
  mark(raw: Buffer | string): Json {
    this.raws.push(raw);
    return `\u0000RAW${this.raws.length - 1}\u0000`;
  }
  encode(value: Json): Buffer {
    const text = JSON.stringify(value);
    const pieces: Buffer[] = [];
    let last = 0;
    for (const m of text.matchAll(/"\\u0000RAW(\d+)\\u0000"/g)) {
      pieces.push(Buffer.from(text.slice(last, m.index)));
      const raw = this.raws[Number(m[1])]!;
      pieces.push(typeof raw === 'string' ? Buffer.from(raw) : raw);
      last = m.index! + m[0].length;
    }
    pieces.push(Buffer.from(text.slice(last)));
    return Buffer.concat(pieces);
  }
}

const BAD_IDS = [
  '', '%20', '%00', '%ff', '%', '%zz', '..', '.', '%2e%2e', 'a'.repeat(101), 'a'.repeat(499), 'a'.repeat(600), "'%20OR%20'1'%3D'1", '%F0%9F%98%80',
  '%ED%A0%80', '%C3%28', '-1', '0', '1e9', 'null', 'undefined', '__proto__', 'constructor', 'prototype', '%0A', '%0D%0Aset-cookie:%20x',
  '%22%3E%3Cscript%3E', '%5C', '%2F', 'a%2Fb', '%E2%80%AE', '9223372036854775808',
];

const WRONG_CONTENT_TYPES = [
  'text/plain', 'text/plain; charset=utf-8', 'application/x-www-form-urlencoded', 'multipart/form-data; boundary=x', 'application/xml',
  'application/json; charset=utf-16', 'application/json; charset=latin1', 'APPLICATION/JSON', 'application/json;;;', 'application/jsonx',
  'application/vnd.api+json', 'application/octet-stream', '*/*', 'json', ';', 'application/json, text/plain',
];

function queryString(op: Operation, rng: Rng, mutate: boolean): { qs: string; kind?: string } {
  const parts: string[] = [];
  const enc = (k: string, v: string) => `${encodeURIComponent(k)}=${encodeURIComponent(v)}`;
  for (const [name, schema] of Object.entries(op.query)) {
    if (!rng.chance(0.3)) continue;
    const v = valid(schema, rng, name);
    parts.push(enc(name, typeof v === 'string' ? v : JSON.stringify(v)));
  }
  if (!mutate) return { qs: parts.length ? `?${parts.join('&')}` : '' };
  const names = Object.keys(op.query);
  const name = names.length ? rng.pick(names) : 'limit';
  const cursor = fx.cursors.get(op.id);
  const mutation = rng.pick(['wrong', 'edge', 'huge', 'repeat', 'unknown', 'encoding', 'cursor', 'empty'] as const);
  switch (mutation) {
    case 'wrong':
      parts.push(enc(name, rng.pick(['abc', 'true', '[]', '{}', 'null', '1.5', '-', ' ', '∞', '😀'])));
      break;
    case 'edge':
      parts.push(`${encodeURIComponent(name)}=${rng.pick(EDGE_NUMBERS)}`);
      break;
    case 'huge':
      parts.push(enc(name, 'q'.repeat(rng.pick([513, 2000, 7000]))));
      break;
    case 'repeat':
      parts.push(enc(name, '1'), enc(name, '2'), `${encodeURIComponent(name)}[]=3`, `${encodeURIComponent(name)}[a]=b`);
      break;
    case 'unknown':
      parts.push(rng.pick(['__proto__=x', 'constructor[prototype][x]=1', 'unknown=1', '__proto__[admin]=true', 'a[b][c]=d']));
      break;
    case 'encoding':
      parts.push(rng.pick([`${name}=%`, `${name}=%zz`, `${name}=%ff%fe`, `${name}=%ED%A0%80`, `${name}=%00`, '&&&', '=', `${name}==`, '%%%']));
      break;
    case 'cursor': {
      // Keyset cursors are base64url JSON objects, offset cursors base64url numbers: keep the form, break the content.
      let decoded: unknown;
      try {
        decoded = cursor ? JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8')) : { v: null, s: 1, k: 'x' };
      } catch {
        decoded = 0;
      }
      const field = rng.pick(['v', 's', 'k', 'extra']);
      let tampered: string;
      if (decoded !== null && typeof decoded === 'object') {
        (decoded as Record<string, Json>)[field] = rng.pick<Json>(['not a date', '2024-13-45T99:99:99Z', '', 1e308, -1e308, 1.5, -1, 2 ** 63, 'x'.repeat(300), null, [], {}, true, '\u0000']);
        tampered = JSON.stringify(decoded);
      } else tampered = rng.pick([...EDGE_NUMBERS, 'abc', '', ' 1', '0x10']);
      const text = rng.chance(0.2) ? rng.pick(['!!!', 'e30', 'bnVsbA', '[]', Buffer.from('{"s":1e400}').toString('base64url')]) : Buffer.from(tampered).toString('base64url');
      parts.push(enc('page', text));
      return { qs: `?${parts.join('&')}`, kind: `query cursor ${field}` };
    }
    case 'empty':
      parts.push(`${encodeURIComponent(name)}=`);
      break;
  }
  return { qs: `?${parts.join('&')}`, kind: `query ${mutation} ${name}` };
}

/** The body mutations; each returns the request body and content type, or undefined if it does not apply. */
function mutateBody(op: Operation, rng: Rng): { body: Buffer | undefined; contentType: string | undefined; extraHeaders?: Record<string, string>; kind: string } {
  const schema: Schema = op.body ?? { type: 'object', properties: {} };
  const raw = new RawJson();
  const value = valid(schema, rng);
  const json = 'application/json';
  const mutation = rng.pick([
    'wrong-type', 'wrong-type', 'wrong-type', 'missing', 'missing', 'unknown', 'unknown', 'huge', 'deep', 'bad-text', 'bad-text',
    'content-type', 'content-type', 'empty', 'array', 'null', 'number', 'number', 'malformed', 'foreign', 'duplicate',
  ] as const);
  const at = spots(value, schema, rng);
  const spot = at.length ? rng.pick(at) : undefined;
  const set = (v: Json) => {
    if (spot) (spot.parent as Record<string | number, Json>)[spot.key] = v;
  };
  switch (mutation) {
    case 'wrong-type':
      if (!spot) return { body: raw.encode(wrongType(schema, rng)), contentType: json, kind: 'wrong-type root' };
      set(wrongType(spot.schema, rng));
      return { body: raw.encode(value), contentType: json, kind: `wrong-type ${spot.key}` };
    case 'missing': {
      const objects = requiredSpots(value, schema, rng);
      if (!objects.length) break;
      const { target, required } = rng.pick(objects);
      const key = rng.pick(required);
      delete target[key];
      return { body: raw.encode(value), contentType: json, kind: `missing ${key}` };
    }
    case 'unknown': {
      const objects = [value, ...at.map((s) => (s.parent as Record<string, Json>)[s.key as string])].filter(
        (v): v is Record<string, Json> => v !== null && typeof v === 'object' && !Array.isArray(v),
      );
      const target = objects.length ? rng.pick(objects) : undefined;
      const name = rng.pick(['unknownField', '__proto__', 'constructor', 'id', 'organization_id', 'createdAt', 'x'.repeat(300), '', '😀']);
      if (!target) break;
      if (name === '__proto__' || name === 'constructor') {
        // Written as text: an object literal cannot hold an own __proto__ key through JSON.stringify.
        target.zzMarker = raw.mark(name === '__proto__' ? '{"admin":true}' : '{"prototype":{"admin":true}}');
        const text = raw.encode(value).toString().replace('"zzMarker":', `"${name}":`);
        return { body: Buffer.from(text), contentType: json, kind: `unknown ${name}` };
      }
      target[name] = rng.pick<Json>(['x', 1, null, {}, [1]]);
      return { body: raw.encode(value), contentType: json, kind: `unknown field` };
    }
    case 'huge': {
      // Past the declared maxLength (cheap to refuse), or a large size when none is declared; once
      // in a while past the body limit itself.
      const max = spot?.schema.maxLength as number | undefined;
      const size = rng.chance(0.1) ? BODY_LIMIT + 10 : max !== undefined ? max + 1 + rng.int(3) * max : rng.pick([10_000, 100_000, 1_000_000]);
      if (size > BODY_LIMIT + 100) break;
      const big = rng.pick(['a', 'é', '😀', '<', '\\\\', ' ']).repeat(Math.ceil(size / 2));
      if (spot) set(raw.mark(`"${big.slice(0, size)}"`));
      return { body: spot ? raw.encode(value) : Buffer.from(`"${big}"`), contentType: json, kind: `huge ${size}${spot ? ` ${spot.key}` : ''}` };
    }
    case 'deep': {
      const depth = rng.pick([127, 129, 1000, 10_000, 100_000]);
      if (spot && rng.chance(0.8)) set(raw.mark(deep(depth, rng)));
      else return { body: Buffer.from(deep(depth, rng)), contentType: json, kind: `deep root ${depth}` };
      return { body: raw.encode(value), contentType: json, kind: `deep ${depth} at ${spot?.key}` };
    }
    case 'bad-text': {
      const bad = rng.pick(BAD_TEXT).raw;
      const stringSpots = at.filter((s) => typeof (s.parent as Record<string | number, Json>)[s.key] === 'string');
      const target = stringSpots.length ? rng.pick(stringSpots) : spot;
      if (target) (target.parent as Record<string | number, Json>)[target.key] = raw.mark(bad);
      else if (value && typeof value === 'object' && !Array.isArray(value)) value.text = raw.mark(bad);
      if (rng.chance(0.15)) {
        // A raw byte in a key, or as the whole body.
        return { body: rng.chance(0.5) ? Buffer.concat([Buffer.from('{"'), Buffer.from([0xff, 0xc0]), Buffer.from('":1}')]) : Buffer.from([0xff, 0xfe, 0x7b, 0x7d]), contentType: json, kind: 'bad bytes' };
      }
      return { body: raw.encode(value), contentType: json, kind: `bad-text ${target?.key ?? 'text'}` };
    }
    case 'content-type': {
      const type = rng.pick([...WRONG_CONTENT_TYPES, undefined]);
      const text = rng.chance(0.3) ? 'title=x&subject=y' : JSON.stringify(value);
      if (rng.chance(0.25)) {
        // The right type, but an encoding the body does not have (or that the server does not know).
        const encoding = rng.pick(['gzip', 'deflate', 'br', 'x-unknown', 'gzip, gzip']);
        return { body: Buffer.from(text), contentType: json, extraHeaders: { 'content-encoding': encoding }, kind: `content-encoding ${encoding}` };
      }
      return { body: Buffer.from(text), contentType: type, kind: `content-type ${type ?? 'none'}` };
    }
    case 'empty': {
      const [body, type] = rng.pick<[string | undefined, string | undefined]>([
        ['', json], [undefined, json], [' \n\t ', json], ['', undefined], ['', 'text/plain'], [undefined, undefined], ['\uFEFF', json], ['\uFEFF{}', json],
      ]);
      return { body: body === undefined ? undefined : Buffer.from(body), contentType: type, kind: `empty ${JSON.stringify(body)} ${type ?? 'none'}` };
    }
    case 'array':
      return { body: raw.encode(rng.pick<Json>([[value], [], [[]], [null]])), contentType: json, kind: 'array body' };
    case 'null':
      if (spot && rng.chance(0.6)) {
        set(null);
        return { body: raw.encode(value), contentType: json, kind: `null ${spot.key}` };
      }
      return { body: Buffer.from(rng.pick(['null', '0', '"str"', 'true', '1e400', '-0'])), contentType: json, kind: 'scalar body' };
    case 'number': {
      const numeric = at.filter((s) => ['integer', 'number'].includes(typeOf(s.schema, rng)) || typeof (s.parent as Record<string | number, Json>)[s.key] === 'number');
      const target = numeric.length ? rng.pick(numeric) : spot;
      if (!target) break;
      (target.parent as Record<string | number, Json>)[target.key] = raw.mark(rng.pick(EDGE_NUMBERS));
      return { body: raw.encode(value), contentType: json, kind: `number ${target.key}` };
    }
    case 'malformed': {
      const text = JSON.stringify(value);
      const broken = rng.pick([
        text.slice(0, Math.max(1, rng.int(text.length))), `${text},`, text.replace(/"/g, "'"), `${text} // comment`, `/* c */${text}`,
        text.replace(/:/, '::'), `${text}${text}`, '{', '}', '[', 'NaN', 'undefined', '{"a":1,}', '{a:1}', '\u0000', text.replace(/,/g, ',,'),
      ]);
      return { body: Buffer.from(broken), contentType: json, kind: 'malformed json' };
    }
    case 'foreign':
      if (!spot || typeof (spot.parent as Record<string | number, Json>)[spot.key] !== 'string') break;
      set(rng.pick([...fx.foreign, ...Object.values(fx.victims), 'a'.repeat(100), '../x', '%00', '']));
      return { body: raw.encode(value), contentType: json, kind: `reference ${spot.key}` };
    case 'duplicate': {
      const text = JSON.stringify(value);
      if (!text.startsWith('{"')) break;
      return { body: Buffer.from(`{"${text.slice(2).split('"')[0]}":${rng.pick(['null', '1', '[]', '"x"'])},${text.slice(1)}`), contentType: json, kind: 'duplicate key' };
    }
  }
  // Mutation not applicable to this body: send an unknown field at the top instead.
  return { body: Buffer.from(JSON.stringify(Array.isArray(value) || value === null || typeof value !== 'object' ? { zz: value } : { ...value, zzUnknown: 1 })), contentType: json, kind: 'unknown top' };
}

/** Case `index`: an operation (round robin, so each gets its share) and a malformed request to it. */
function makeCase(index: number, ops: Operation[]): Request {
  const rng = caseRng(index);
  const op = ops[index % ops.length]!;
  const ids = op.destructive ? fx.victims : fx.ids;
  const headers: Record<string, string> = {};
  let unauthenticated = false;
  if (rng.chance(0.08)) {
    unauthenticated = !op.public;
    const bad = rng.pick([undefined, 'Bearer', 'Bearer ', `Bearer ${admin.token}x`, 'Bearer folio_0000', 'Basic YTpi', `Token ${admin.token}`, `Bearer ${'z'.repeat(5000)}`]);
    if (bad !== undefined) headers.authorization = bad;
  } else headers.authorization = `Bearer ${admin.token}`;

  // What to break: the body (most), a path parameter, or the query string.
  const targets = [...(op.body ? ['body', 'body', 'body', 'body'] : ['body']), ...(op.pathParams.length ? ['path', 'path'] : []), 'query'];
  const target = rng.pick(targets);
  let kind = '';

  const segments = op.pathParams.map((name) => encodeURIComponent(idFor(op, name, ids)).replace(/%2F/g, '/'));
  if (target === 'path') {
    const i = rng.int(op.pathParams.length);
    const choice = rng.next();
    segments[i] = choice < 0.7 ? rng.pick(BAD_IDS) : choice < 0.85 ? rng.pick(fx.foreign) : encodeURIComponent(rng.pick(Object.values(fx.ids)));
    kind = `path ${op.pathParams[i]}=${segments[i]!.slice(0, 40)}`;
  }
  let n = 0;
  let path = op.path.replace(/\{[^}]+\}/g, () => segments[n++]!);
  const query = queryString(op, rng, target === 'query');
  if (query.kind) kind = query.kind;
  path += query.qs;

  let body: Buffer | undefined;
  if (target === 'body') {
    const m = mutateBody(op, rng);
    body = m.body;
    if (m.contentType !== undefined) headers['content-type'] = m.contentType;
    Object.assign(headers, m.extraHeaders);
    kind = `body ${m.kind}`;
  } else if (op.body) {
    body = Buffer.from(JSON.stringify(valid(op.body, rng)));
    headers['content-type'] = 'application/json';
  }
  return { method: op.method, path, headers, body, kind: `${op.id}: ${kind}`, unauthenticated };
}

interface Answer {
  status: number;
  text: string;
}

function send(req: Request): Promise<Answer> {
  const url = new URL(t.url);
  return new Promise((resolve, reject) => {
    const r = httpRequest(
      {
        host: url.hostname,
        port: url.port,
        method: req.method,
        path: req.path,
        agent,
        headers: { ...req.headers, ...(req.body !== undefined ? { 'content-length': String(req.body.length) } : {}) },
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => resolve({ status: res.statusCode!, text: Buffer.concat(chunks).toString('utf8') }));
        res.on('error', reject);
      },
    );
    r.on('error', reject);
    r.end(req.body);
  });
}

/** What is wrong with an answer, or undefined. */
function check(req: Request, answer: Answer): string | undefined {
  // A public endpoint answers with what the integration's script answers. A fuzz case may publish
  // an integration (named `unknown`) whose script is a fuzz string ('fuzz', 'Fuzz title'): no
  // working module, so the endpoint's later cases fail upstream, a 502 that is not the request's
  // doing (an integration published without a script is a 404: see the fixed case below).
  const upstream = answer.status === 502 && /^\/v1\/integrations\/[^/?]+(\/installations\/[^/?]+)?\/public([/?]|$)/.test(req.path) && answer.text.includes('The integration did not answer: ');
  if (answer.status >= 500 && !upstream) return `answered ${answer.status}`;
  if (req.unauthenticated && answer.status < 400) return `answered ${answer.status} without a valid token`;
  if (answer.status < 400) return undefined;
  let body: any;
  try {
    body = JSON.parse(answer.text);
  } catch {
    return `error body is not JSON`;
  }
  const error = body?.error;
  if (!error || typeof error !== 'object') return 'no "error" object';
  if (error.code !== answer.status) return `error.code ${JSON.stringify(error.code)} is not the status ${answer.status}`;
  if (typeof error.message !== 'string' || error.message.trim() === '') return 'error.message is not a non-empty string';
  return undefined;
}

const describeRequest = (index: number, req: Request, answer: Answer | undefined, problem: string) =>
  `#${index} ${req.kind}\n  ${req.method} ${req.path.slice(0, 200)}\n  headers ${JSON.stringify({ ...req.headers, authorization: req.headers.authorization ? '[…]' : undefined })}` +
  `\n  body ${req.body === undefined ? '(none)' : JSON.stringify(req.body.subarray(0, 300).toString('utf8'))}${req.body && req.body.length > 300 ? ` … (${req.body.length} bytes)` : ''}` +
  `\n  → ${problem}${answer ? `: ${answer.text.slice(0, 300)}` : ''}\n  replay: FUZZ_SEED=${SEED} FUZZ_CASE=${index}`;

/** Harvests a real `next.page` cursor from each list that has more than one item. */
async function harvestCursors(ops: Operation[]) {
  for (const op of ops) {
    if (op.method !== 'GET' || !('page' in op.query) || !('limit' in op.query)) continue;
    let n = 0;
    const path = op.path.replace(/\{[^}]+\}/g, () => idFor(op, op.pathParams[n++]!, fx.ids)) + '?limit=1';
    const res = await t.request('GET', path, { token: admin.token });
    if (typeof res.body?.next?.page === 'string') fx.cursors.set(op.id, res.body.next.page);
  }
}

before(async () => {
  // Short outbound timeouts: fuzzed insert_files URLs name private addresses, refused at once.
  t = await startTestServer({ fetchTimeoutMs: 2000 }, process.env.FUZZ_LOG ? { logStream: (await import("node:fs")).createWriteStream(process.env.FUZZ_LOG) } : {});
  const res = await fetch(`${t.url}/v1/openapi.json`);
  spec = (await res.json()) as typeof spec;
});
after(async () => {
  agent.destroy();
  await t?.close();
});

describe('fuzz of every route of /v1/openapi.json', () => {
  test(`${ONLY !== undefined ? `case ${ONLY}` : `${CASES} malformed requests`}: no 5xx, every error in the error shape (seed ${SEED})`, { timeout: 300_000 }, async () => {
    fx = await makeFixtures();
    const ops = operations();
    assert.ok(ops.length >= 100, `the OpenAPI document lists ${ops.length} operations`);
    await harvestCursors(ops);

    const indexes = ONLY !== undefined ? [ONLY] : Array.from({ length: CASES }, (_, i) => i);
    const failures: string[] = [];
    const statuses = new Map<string, Map<number, number>>();
    const started = Date.now();
    let next = 0;
    const worker = async () => {
      while (next < indexes.length) {
        const index = indexes[next++]!;
        const req = makeCase(index, ops);
        let answer: Answer | undefined;
        let problem: string | undefined;
        try {
          answer = await send(req);
          problem = check(req, answer);
        } catch (err) {
          problem = `request failed: ${(err as Error).message}`;
        }
        const op = ops[index % ops.length]!.id;
        const counts = statuses.get(op) ?? new Map<number, number>();
        counts.set(answer?.status ?? 0, (counts.get(answer?.status ?? 0) ?? 0) + 1);
        statuses.set(op, counts);
        if (problem) failures.push(describeRequest(index, req, answer, problem));
      }
    };
    await Promise.all(Array.from({ length: CONCURRENCY }, worker));
    const seconds = (Date.now() - started) / 1000;
    const total = [...statuses.values()].reduce((sum, m) => sum + [...m.values()].reduce((a, b) => a + b, 0), 0);
    const histogram = new Map<number, number>();
    for (const m of statuses.values()) for (const [s, c] of m) histogram.set(s, (histogram.get(s) ?? 0) + c);
    console.log(`fuzz: ${total} requests to ${ops.length} operations in ${seconds.toFixed(1)} s (seed ${SEED}); statuses ${JSON.stringify(Object.fromEntries([...histogram].sort((a, b) => a[0] - b[0])))}`);
    if (process.env.FUZZ_VERBOSE) for (const [op, m] of statuses) console.log(`  ${op}: ${JSON.stringify(Object.fromEntries(m))}`);
    assert.equal(failures.length, 0, `${failures.length} bad answers (seed ${SEED}):\n${failures.slice(0, 25).join('\n')}`);
    if (ONLY === undefined) {
      assert.equal(statuses.size, ops.length, 'every operation was called');
      const reached = [...statuses.values()].filter((m) => [...m.keys()].some((s) => s < 400 || s === 403 || s === 409)).length;
      console.log(`fuzz: ${reached} of ${ops.length} operations answered at least once with a handler's own answer (2xx, 403 or 409)`);
    }
  });
});

/** A status and error shape check for the focused cases below. */
async function expectError(res: { status: number; body: any }, status: number, message?: RegExp) {
  assert.equal(res.status, status, JSON.stringify(res.body).slice(0, 300));
  assert.equal(res.body.error.code, status);
  assert.ok(typeof res.body.error.message === 'string' && res.body.error.message.length > 0);
  if (message) assert.match(res.body.error.message, message);
}

describe('found by the fuzz', () => {
  test('a tampered paging cursor (a sort value that is no date, a non-integer position) is a 400, not a 500', async () => {
    const { admin: owner, org } = await newOrg(t, 'Cursors');
    for (let i = 0; i < 2; i++) await addMember(t, org.id, await t.user(), 'read');
    const first = await t.request('GET', `/v1/orgs/${org.id}/members?limit=1`, { token: owner.token });
    assert.equal(first.status, 200);
    const cursor = JSON.parse(Buffer.from(first.body.next.page, 'base64url').toString('utf8'));
    assert.equal(cursor.k, 'members:joinedAt:desc', 'a keyset cursor sorted on a timestamp');
    const tampered = (change: Record<string, unknown>) => Buffer.from(JSON.stringify({ ...cursor, ...change })).toString('base64url');
    for (const change of [{ v: '2024-13-45T99:99:99Z' }, { v: 'not a date' }, { v: 1e308 }, { s: 1.5 }, { s: 1e308 }, { s: -1e308 }]) {
      const res = await t.request('GET', `/v1/orgs/${org.id}/members?limit=1&page=${tampered(change)}`, { token: owner.token });
      await expectError(res, 400, /Invalid "page" cursor/);
    }
    const second = await t.request('GET', `/v1/orgs/${org.id}/members?limit=1&page=${first.body.next.page}`, { token: owner.token });
    assert.equal(second.status, 200, 'the real cursor still works');
    assert.notEqual(second.body.items[0].user.id, first.body.items[0].user.id);
  });

  test('the public endpoint of an integration published without a script is a 404 whatever the body (it was a 502); a script that does not load is a 502 in the error shape', { timeout: 60_000 }, async () => {
    // Seed 354306178: a publishIntegration case published `unknown` without a script, and the
    // public endpoint's later cases (a body nested 1,000 deep, a repeated query) answered 502.
    const { admin: owner, org } = await newOrg(t, 'Endpoint');
    const name = `fuzz-endpoint-${Date.now().toString(36)}`;
    const published = await t.request('POST', `/v1/integrations/${name}`, { token: owner.token, body: { title: 'Fuzz title', organization: org.id } });
    assert.equal(published.status, 200, JSON.stringify(published.body).slice(0, 300));
    const send = async (method: string, path: string, body?: string) => {
      const res = await fetch(`${t.url}${path}`, { method, ...(body !== undefined ? { body, headers: { 'content-type': 'application/json' } } : {}) });
      const text = await res.text();
      return { status: res.status, body: JSON.parse(text) };
    };
    const deep = '['.repeat(1000) + ']'.repeat(1000);
    await expectError(await send('POST', `/v1/integrations/${name}/public`, deep), 404, new RegExp(`integration ${name} has no published script nor development tunnel`));
    await expectError(await send('PUT', `/v1/integrations/${name}/public?limit=1&limit=2&limit[]=3&limit[a]=b`, '{}'), 404, /no published script/);
    await expectError(await send('GET', `/v1/integrations/${name}/public/oauth/callback?code=x`), 404, /no published script/);
    const installed = await t.request('POST', `/v1/integrations/${name}/installations`, { token: owner.token, body: { organization: org.id } });
    assert.equal(installed.status, 201, JSON.stringify(installed.body).slice(0, 300));
    await expectError(await send('POST', `/v1/integrations/${name}/installations/${installed.body.id}/public`, deep), 404, /no published script/);
    await expectError(await send('POST', `/v1/integrations/fuzz-nothing-${Date.now().toString(36)}/public`, deep), 404, /^Integration not found$/);
    // A script that is no working module (a fuzz string) fails upstream: a 502, in the error shape.
    const broken = await t.request('POST', `/v1/integrations/${name}`, { token: owner.token, body: { script: 'Fuzz title' } });
    assert.equal(broken.status, 200, JSON.stringify(broken.body).slice(0, 300));
    await expectError(await send('POST', `/v1/integrations/${name}/public`, deep), 502, /^The integration did not answer: its script failed to load or run/);
  });

  test('content edits, updates from the space, merges and new change requests at once on one space: no deadlock (500) on PostgreSQL', { timeout: 60_000 }, async () => {
    const { admin: owner, org } = await newOrg(t, 'Locks');
    const call = (method: string, path: string, body?: unknown) => t.request(method, path, { token: owner.token, ...(body !== undefined ? { body } : {}) });
    const space = (await call('POST', `/v1/orgs/${org.id}/spaces`, { title: 'Locks' })).body.id as string;
    const cr = (await call('POST', `/v1/spaces/${space}/change-requests`, { subject: 'edited' })).body.id as string;
    const statuses: number[] = [];
    for (let round = 0; round < 12; round++) {
      const other = (await call('POST', `/v1/spaces/${space}/change-requests`, { subject: `other ${round}` })).body.id as string;
      await call('POST', `/v1/spaces/${space}/change-requests/${other}/content`, { changes: [{ operation: 'insert_page', title: `Other ${round}`, document: { markdown: 'x' } }] });
      const answers = await Promise.all([
        call('POST', `/v1/spaces/${space}/change-requests/${cr}/content`, { changes: [{ operation: 'insert_page', title: `Page ${round}`, document: { markdown: `Text ${round}` } }] }),
        call('POST', `/v1/spaces/${space}/change-requests/${cr}/update`),
        call('POST', `/v1/spaces/${space}/change-requests/${other}/merge`),
        call('POST', `/v1/spaces/${space}/change-requests/${cr}/content`, { changes: [{ operation: 'insert_page', title: `More ${round}`, document: { markdown: 'More' } }] }),
        call('POST', `/v1/spaces/${space}/change-requests`, { subject: `new ${round}` }),
        call('POST', `/v1/spaces/${space}/change-requests/${cr}/update`),
      ]);
      for (const a of answers) {
        statuses.push(a.status);
        assert.ok(a.status < 500, `round ${round}: ${a.status} ${JSON.stringify(a.body).slice(0, 300)}`);
      }
    }
    assert.ok(statuses.every((s) => s === 200 || s === 201), `all succeeded: ${statuses.join(',')}`);
  });
});
