import { createHash } from 'node:crypto';
import { createRequire } from 'node:module';
import { posix } from 'node:path';
import SwaggerParser from '@apidevtools/swagger-parser';
import { fetchVetted } from '../content/files.ts';
import type { Config } from '../platform/config.ts';
import type { OpenAPIErrorCode, OpenAPIProcessError } from '../platform/db/schema.ts';
import { BadRequestError } from '../platform/errors.ts';
import { linesOf, parseSpecText, pointerOf, SpecParseError, type SpecFormat } from './parse.ts';

// The library's validators, called on their own: see validateDocuments.
const require = createRequire(import.meta.url);
const validateSchema = require('@apidevtools/swagger-parser/lib/validators/schema.js') as (api: unknown) => void;
const validateSpec = require('@apidevtools/swagger-parser/lib/validators/spec.js') as (api: unknown) => void;
const { dereferenceInternal } = require('@apidevtools/json-schema-ref-parser') as { dereferenceInternal: (parser: unknown, options: unknown) => void };

/** Errors kept on a spec (the first ones; `lastProcessedErrorCount` has the total). */
export const MAX_KEPT_ERRORS = 20;

/** Root of a spec given as text: a name that never resolves, so nothing relative to it is fetched. */
export const TEXT_ROOT = 'https://text-source.invalid/openapi';

/** One file of a processed spec: the root, or a file a `$ref` led to. */
export interface SpecFile {
  url: string;
  /** Path relative to the root's folder (the root's own file name for the root), or the absolute URL for files elsewhere. */
  path: string;
  format: SpecFormat;
  /** The bytes as fetched (as given, for text). */
  raw: Buffer;
  /** The parsed document as JSON text (before any reference is resolved). */
  json: string;
}

export type ProcessOutcome =
  | { ok: true; files: SpecFile[]; rootUrl: string; contentHash: string }
  | { ok: false; code: OpenAPIErrorCode; errors: OpenAPIProcessError[]; count: number };

export type SpecSource = { url: string } | { text: string };

type FetchLimits = Pick<Config, 'fetchAllowPrivate' | 'fetchAllowCidrs' | 'fetchTimeoutMs' | 'fetchMaxRequestBytes'>;

/** A failure that ends processing with one error code. */
class ProcessFailure extends Error {
  constructor(
    readonly code: OpenAPIErrorCode,
    readonly errors: OpenAPIProcessError[],
  ) {
    super(errors[0]?.message ?? code);
  }
}

function pathOf(url: string, rootUrl: string): string {
  if (url === rootUrl) return rootUrl.startsWith(TEXT_ROOT) ? 'openapi' : decodeURIComponent(new URL(url).pathname.split('/').pop() || 'openapi');
  const target = new URL(url);
  const root = new URL(rootUrl);
  if (target.origin !== root.origin) return url;
  // Files of the same origin are named relative to the root's folder (`schemas/pet.yaml`, `../common.yaml`).
  const relative = posix.relative(posix.dirname(decodeURIComponent(root.pathname)), decodeURIComponent(target.pathname));
  return `${relative}${target.search}`;
}

/**
 * Fetches, parses, resolves and validates a spec; nothing is written. Every file is fetched
 * through the vetted fetch of `insert_files` (addresses checked after DNS and on every redirect),
 * all of them within one deadline (FETCH_TIMEOUT_MS) and one byte budget
 * (FETCH_MAX_REQUEST_BYTES). The parser library never fetches nor reads a local file itself:
 * its `http` and `file` resolvers are replaced by ours and its parsers by ours (parse.ts).
 */
export async function processSource(source: SpecSource, config: FetchLimits): Promise<ProcessOutcome> {
  const rootUrl = 'url' in source ? new URL(source.url).href : TEXT_ROOT;
  const files = new Map<string, SpecFile>();
  const controller = new AbortController();
  const timer = setTimeout(() => controller.abort(new Error('deadline')), config.fetchTimeoutMs);
  let bytesLeft = config.fetchMaxRequestBytes;
  /** The first fetch failure: the resolver's own error is wrapped by the library. */
  let fetchFailure: ProcessFailure | undefined;
  /** The first parse failure, with its file and line. */
  let parseFailure: ProcessFailure | undefined;

  const read = async (file: { url: string }): Promise<Buffer> => {
    const url = file.url;
    try {
      if (url === TEXT_ROOT && 'text' in source) return Buffer.from(source.text, 'utf8');
      if (url.startsWith(TEXT_ROOT)) throw new BadRequestError(`${url.slice(TEXT_ROOT.length) || url}: a spec given as text cannot reference relative files; give absolute URLs or use source.url`);
      const { data } = await fetchVetted(url, {
        config,
        signal: controller.signal,
        maxBytes: bytesLeft,
        tooLarge: () => new BadRequestError(`${url}: the files of the spec add up to more than ${config.fetchMaxRequestBytes} bytes (FETCH_MAX_REQUEST_BYTES)`),
      });
      bytesLeft -= data.byteLength;
      return data;
    } catch (err) {
      const failure = controller.signal.aborted
        ? new ProcessFailure('FETCH_TIMEOUT', [
            { code: 'FETCH_TIMEOUT', message: `fetching ${url} did not finish within ${config.fetchTimeoutMs} ms (FETCH_TIMEOUT_MS)`, file: pathOf(url, rootUrl) },
          ])
        : new ProcessFailure('FETCH_ERROR', [{ code: 'FETCH_ERROR', message: (err as Error).message.startsWith(url) ? (err as Error).message : `${url}: ${(err as Error).message}`, file: pathOf(url, rootUrl) }]);
      fetchFailure ??= failure;
      throw failure;
    }
  };

  const parse = (file: { url: string; data: Buffer | string }) => {
    const text = typeof file.data === 'string' ? file.data : file.data.toString('utf8');
    const path = pathOf(file.url, rootUrl);
    try {
      const { value, format } = parseSpecText(text);
      files.set(file.url, { url: file.url, path, format, raw: typeof file.data === 'string' ? Buffer.from(file.data) : file.data, json: JSON.stringify(value) });
      return value;
    } catch (err) {
      if (!(err instanceof SpecParseError)) throw err;
      const failure = new ProcessFailure('PARSE_ERROR', [
        { code: 'PARSE_ERROR', message: `${path}${err.line ? ` line ${err.line}` : ''}: ${err.message}`, file: path, ...(err.line ? { line: err.line } : {}) },
      ]);
      parseFailure ??= failure;
      throw failure;
    }
  };

  const options = {
    resolve: { file: false, http: false, external: true, folio: { order: 1, canRead: /^https?:\/\//i, read } },
    parse: { json: false, yaml: false, text: false, binary: false, folio: { order: 1, canParse: true, allowEmpty: false, parse } },
    dereference: { circular: 'ignore' },
  };

  try {
    const parser = new SwaggerParser();
    try {
      // Reads the root and every file its references lead to, and checks the version fields.
      await parser.resolve(rootUrl, options as never);
    } catch (err) {
      if (fetchFailure) throw fetchFailure;
      if (parseFailure) throw parseFailure;
      throw new ProcessFailure('PARSE_ERROR', [{ code: 'PARSE_ERROR', message: libraryMessage(err, rootUrl), file: pathOf(rootUrl, rootUrl) }]);
    }
    const root = files.get(rootUrl);
    if (!root) throw new ProcessFailure('PARSE_ERROR', [{ code: 'PARSE_ERROR', message: 'the spec could not be read' }]);
    const problems = [...checkReferences(files, rootUrl), ...validateDocuments(parser, root, rootUrl, options)];
    if (problems.length) throw new ProcessFailure('PARSE_ERROR', problems);
    const ordered = [root, ...[...files.values()].filter((f) => f !== root).sort((a, b) => (a.path < b.path ? -1 : 1))];
    return { ok: true, files: ordered, rootUrl, contentHash: contentHash(ordered) };
  } catch (caught) {
    // Anything else thrown while reading the spec (the library on input it did not expect) is
    // still a problem of the spec: recorded, never a job failing forever.
    const err = caught instanceof ProcessFailure ? caught : new ProcessFailure('PARSE_ERROR', [{ code: 'PARSE_ERROR', message: `the spec could not be processed: ${(caught as Error)?.message ?? String(caught)}` }]);
    return { ok: false, code: err.code, errors: withLines(err.errors, files).slice(0, MAX_KEPT_ERRORS), count: err.errors.length };
  } finally {
    clearTimeout(timer);
  }
}

/** Hash of the files' paths and bytes: the same files give the same hash, whatever order they were read in. */
export function contentHash(files: readonly SpecFile[]): string {
  const hash = createHash('sha256');
  for (const f of files) {
    hash.update(`${f.path}\u0000${f.raw.byteLength}\u0000`);
    hash.update(f.raw);
  }
  return hash.digest('base64url');
}

function libraryMessage(err: unknown, rootUrl: string): string {
  const message = (err as Error)?.message ?? String(err);
  return message.split(rootUrl).join(pathOf(rootUrl, rootUrl));
}

/** Value at a JSON pointer of a parsed document, or undefined. */
function at(value: unknown, segments: readonly string[]): unknown {
  let node = value;
  for (const s of segments) {
    if (node === null || typeof node !== 'object' || !Object.hasOwn(node, s)) return undefined;
    node = (node as Record<string, unknown>)[s];
  }
  return node;
}

/**
 * Every `$ref` of every file must lead to something: a missing target is reported at the
 * reference itself (file, pointer, line). Iterative, so a deep document cannot overflow it.
 */
function checkReferences(files: Map<string, SpecFile>, rootUrl: string): OpenAPIProcessError[] {
  const errors: OpenAPIProcessError[] = [];
  const values = new Map<string, unknown>();
  const valueOf = (url: string) => {
    if (!values.has(url)) {
      const f = files.get(url);
      values.set(url, f ? JSON.parse(f.json) : undefined);
    }
    return values.get(url);
  };
  for (const file of files.values()) {
    const stack: [unknown, string[]][] = [[valueOf(file.url), []]];
    while (stack.length) {
      const [node, path] = stack.pop()!;
      if (node === null || typeof node !== 'object') continue;
      const ref = (node as { $ref?: unknown }).$ref;
      if (typeof ref === 'string' && !Array.isArray(node)) {
        let target: URL | undefined;
        try {
          target = new URL(ref, file.url);
        } catch {
          target = undefined;
        }
        const targetUrl = target ? target.href.replace(/#.*$/, '') : undefined;
        const fragment = target ? decodeURIComponent(target.hash.slice(1)) : '';
        const ok =
          targetUrl !== undefined &&
          files.has(targetUrl) &&
          (fragment === '' || (fragment.startsWith('/') && at(valueOf(targetUrl), fragment.slice(1).split('/').map((s) => s.replace(/~1/g, '/').replace(/~0/g, '~'))) !== undefined));
        // Fragments that are not pointers (3.1 anchors) are left to the renderer.
        if (!ok && !(fragment && !fragment.startsWith('/'))) {
          errors.push({ code: 'PARSE_ERROR', message: `$ref "${ref}" leads nowhere`, file: file.path, pointer: pointerOf([...path, '$ref']) });
        }
      }
      const entries = Array.isArray(node) ? node.map((v, i) => [String(i), v] as const) : Object.entries(node);
      for (const [key, child] of entries) if (child !== null && typeof child === 'object') stack.push([child, [...path, key]]);
    }
  }
  void rootUrl;
  return errors;
}

/**
 * Validation by the library's validators: the root document against the official JSON Schema of
 * its version (Swagger 2.0, OpenAPI 3.0 or 3.1), as written (references are Reference Objects
 * there, so nothing is expanded: a spec whose references multiply cannot blow up validation, and
 * each error's path is a place in the root file); then, for Swagger 2.0, the library's checks of
 * what the schema cannot express (duplicate operation ids, path parameters...), which need the
 * references resolved.
 */
function validateDocuments(parser: InstanceType<typeof SwaggerParser>, root: SpecFile, rootUrl: string, options: unknown): OpenAPIProcessError[] {
  const api = parser.api as { swagger?: string; openapi?: string };
  const rootPath = pathOf(rootUrl, rootUrl);
  try {
    validateSchema(api);
  } catch (err) {
    const details = (err as { details?: { instancePath: string; message?: string; params?: Record<string, unknown> }[] }).details;
    if (!details) return [{ code: 'PARSE_ERROR', message: (err as Error).message, file: rootPath }];
    const seen = new Set<string>();
    const errors: OpenAPIProcessError[] = [];
    for (const d of details) {
      const pointer = d.instancePath || '';
      const extra = d.params && 'additionalProperty' in d.params ? ` ("${d.params.additionalProperty}")` : d.params && 'missingProperty' in d.params ? '' : '';
      const message = `${d.message ?? 'is invalid'}${extra}`;
      const key = `${pointer} ${message}`;
      if (seen.has(key)) continue;
      seen.add(key);
      errors.push({ code: 'PARSE_ERROR', message, file: rootPath, pointer });
    }
    return errors;
  }
  if (api.swagger) {
    // The library's checks read the document with its references resolved, which changes it in
    // place: the place of an error is found in the document as written (kept as JSON text).
    const written = JSON.parse(root.json) as { paths?: Record<string, unknown>; definitions?: Record<string, unknown> };
    try {
      dereferenceInternal(parser, options);
      validateSpec(parser.api);
    } catch (err) {
      const message = libraryMessage(err, rootUrl).replace(/^Validation failed\. /, '');
      const pointer = pointerInMessage(message, written);
      return [{ code: 'PARSE_ERROR', message, file: rootPath, ...(pointer !== undefined ? { pointer } : {}) }];
    }
  }
  return [];
}

/**
 * The JSON pointer of the place a message of the library's Swagger 2.0 checks names, such as
 * `/paths/pets/{petId}/get has duplicate parameters`: the path key is the longest key of `paths`
 * the text starts with (keys hold slashes themselves), the rest are plain segments.
 */
function pointerInMessage(message: string, api: { paths?: Record<string, unknown>; definitions?: Record<string, unknown> }): string | undefined {
  const match = /(?:^|\s)\/(paths|definitions)(\/\S*)/.exec(message);
  if (!match) return undefined;
  const [, section, rest] = match as unknown as [string, 'paths' | 'definitions', string];
  const keys = Object.keys(api[section] ?? {});
  const candidates = section === 'paths' ? keys.filter((k) => rest === k || rest.startsWith(`${k}/`)) : keys.filter((k) => rest === `/${k}` || rest.startsWith(`/${k}/`));
  const key = candidates.sort((a, b) => b.length - a.length)[0];
  if (key === undefined) return pointerOf([section]);
  const after = rest.slice(section === 'paths' ? key.length : key.length + 1);
  return pointerOf([section, key, ...after.split('/').filter(Boolean)]);
}

/** Adds the line of each error that has a pointer, and puts file, line and pointer in the message. */
function withLines(errors: OpenAPIProcessError[], files: Map<string, SpecFile>): OpenAPIProcessError[] {
  const kept = errors.slice(0, MAX_KEPT_ERRORS);
  const byPath = new Map([...files.values()].map((f) => [f.path, f]));
  const wanted = new Map<string, number[]>();
  kept.forEach((e, i) => {
    if (e.pointer === undefined || e.file === undefined || !byPath.has(e.file)) return;
    wanted.set(e.file, [...(wanted.get(e.file) ?? []), i]);
  });
  for (const [path, indexes] of wanted) {
    const lines = linesOf(byPath.get(path)!.raw.toString('utf8'), indexes.map((i) => kept[i]!.pointer!));
    indexes.forEach((i, n) => {
      if (lines[n] !== undefined) kept[i] = { ...kept[i]!, line: lines[n] };
    });
  }
  return kept.map((e) => {
    if (e.pointer === undefined) return e;
    const where = `${e.file ?? ''}${e.line !== undefined ? ` line ${e.line}` : ''} at ${e.pointer || '/'}`;
    return { ...e, message: `${where}: ${e.message}` };
  });
}
