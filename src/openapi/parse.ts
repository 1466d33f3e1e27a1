import { Lexer, LineCounter, isMap, isNode, isScalar, isSeq, parseDocument, type Document, type Node as YamlNode } from 'yaml';
import { jsonDepthExceeds } from '../platform/app.ts';

/**
 * Reading spec files safely: JSON or YAML text becomes a plain value, or a SpecParseError that
 * says where the problem is. Both formats are refused past MAX_SPEC_DEPTH levels of nesting
 * before the parser builds anything (a deeply nested file would otherwise overflow recursive
 * walkers or hold a huge parser stack), and YAML aliases are limited (an alias bomb, a few lines
 * that expand to billions of nodes, is refused when it would expand past MAX_ALIAS_COUNT).
 */

/** Deepest nesting of objects and arrays a spec file may have (real specs stay far below). */
export const MAX_SPEC_DEPTH = 200;
/** The `yaml` package's measure of alias expansion allowed per document. */
const MAX_ALIAS_COUNT = 1000;

export class SpecParseError extends Error {
  constructor(
    message: string,
    readonly line?: number,
  ) {
    super(message);
  }
}

export type SpecFormat = 'json' | 'yaml';

/** Line (1-based) of a character offset in `text`. */
function lineAt(text: string, offset: number): number {
  let line = 1;
  for (let i = text.indexOf('\n'); i !== -1 && i < offset; i = text.indexOf('\n', i + 1)) line++;
  return line;
}

/** Deepest flow nesting (`[`, `{`) of YAML text, read by the `yaml` lexer (a stream of tokens; it builds nothing). */
function yamlFlowDepthExceeds(text: string, limit: number): boolean {
  let depth = 0;
  for (const token of new Lexer().lex(text)) {
    if (token === '[' || token === '{') {
      if (++depth > limit) return true;
    } else if (token === ']' || token === '}') {
      depth = Math.max(0, depth - 1);
    }
  }
  return false;
}

/** Whether a parsed value nests deeper than `limit` (iterative: a deep value cannot overflow it). */
function valueDepthExceeds(value: unknown, limit: number): boolean {
  const stack: [unknown, number][] = [[value, 1]];
  const seen = new Set<object>();
  while (stack.length) {
    const [v, depth] = stack.pop()!;
    if (v === null || typeof v !== 'object' || seen.has(v)) continue;
    if (depth > limit) return true;
    seen.add(v);
    for (const child of Array.isArray(v) ? v : Object.values(v)) stack.push([child, depth + 1]);
  }
  return false;
}

/** JSON when the text is JSON, else YAML (which JSON is a subset of, so this is what a reader expects). */
export function parseSpecText(text: string): { value: unknown; format: SpecFormat } {
  const first = text.trimStart()[0];
  if (first === '{' || first === '[') {
    if (jsonDepthExceeds(text, MAX_SPEC_DEPTH)) throw new SpecParseError(`the document nests deeper than ${MAX_SPEC_DEPTH} levels of objects and arrays`);
    try {
      return { value: JSON.parse(text), format: 'json' };
    } catch (err) {
      // Not JSON after all: YAML flow style reads it, or says where it fails.
      const yaml = tryYaml(text);
      if (yaml.ok) return { value: yaml.value, format: 'yaml' };
      const at = /position (\d+)/.exec((err as Error).message);
      throw new SpecParseError(`invalid JSON: ${(err as Error).message}`, at ? lineAt(text, Number(at[1])) : undefined);
    }
  }
  const yaml = tryYaml(text);
  if (yaml.ok) return { value: yaml.value, format: 'yaml' };
  throw yaml.error;
}

function tryYaml(text: string): { ok: true; value: unknown } | { ok: false; error: SpecParseError } {
  if (yamlFlowDepthExceeds(text, MAX_SPEC_DEPTH)) {
    return { ok: false, error: new SpecParseError(`the document nests deeper than ${MAX_SPEC_DEPTH} levels of objects and arrays`) };
  }
  const lines = new LineCounter();
  let doc: Document.Parsed;
  try {
    doc = parseDocument(text, { lineCounter: lines, prettyErrors: false, uniqueKeys: true, strict: true });
  } catch (err) {
    // The composer recurses per level of block nesting: past the stack, the nesting is the problem.
    if (err instanceof RangeError) return { ok: false, error: new SpecParseError('the document nests too deeply to be read') };
    throw err;
  }
  const error = doc.errors[0];
  if (error) {
    const line = lines.linePos(error.pos[0]).line;
    return { ok: false, error: new SpecParseError(`invalid YAML: ${error.message.split('\n')[0]}`, line) };
  }
  let value: unknown;
  try {
    value = doc.toJS({ maxAliasCount: MAX_ALIAS_COUNT });
  } catch (err) {
    const message = (err as Error).message;
    if (/alias/i.test(message)) return { ok: false, error: new SpecParseError(`YAML aliases expand too much (an alias bomb?): ${message}`) };
    if (err instanceof RangeError) return { ok: false, error: new SpecParseError('the document nests too deeply to be read') };
    return { ok: false, error: new SpecParseError(`invalid YAML: ${message}`) };
  }
  if (valueDepthExceeds(value, MAX_SPEC_DEPTH)) {
    return { ok: false, error: new SpecParseError(`the document nests deeper than ${MAX_SPEC_DEPTH} levels of objects and arrays`) };
  }
  return { ok: true, value };
}

/** `/a/b~1c` → ['a', 'b/c'] (RFC 6901). */
export function pointerSegments(pointer: string): string[] {
  if (pointer === '' || pointer === '/') return pointer === '/' ? [''] : [];
  return pointer
    .slice(1)
    .split('/')
    .map((s) => s.replace(/~1/g, '/').replace(/~0/g, '~'));
}

export function pointerOf(segments: readonly string[]): string {
  return segments.map((s) => `/${s.replace(/~/g, '~0').replace(/\//g, '~1')}`).join('');
}

/**
 * Line numbers (1-based) of JSON pointers in a file's text (JSON or YAML, read with positions).
 * The deepest node the pointer reaches is used, so a missing property points at its parent.
 * Only used to report errors, so the cost of a positioned parse is paid only for invalid specs.
 */
export function linesOf(text: string, pointers: readonly string[]): (number | undefined)[] {
  const lines = new LineCounter();
  let doc: Document.Parsed;
  try {
    doc = parseDocument(text, { lineCounter: lines, uniqueKeys: false, strict: false });
  } catch {
    return pointers.map(() => undefined);
  }
  return pointers.map((pointer) => {
    // The line of the last key (or item) the pointer reaches: a problem inside `info` is shown on
    // the `info:` line, a missing property on its parent's key.
    let node: unknown = doc.contents;
    let range: [number, number, number] | undefined = isNode(node) ? (node as YamlNode).range ?? undefined : undefined;
    for (const segment of pointerSegments(pointer)) {
      if (isMap(node)) {
        const pair = node.items.find((p) => (isScalar(p.key) ? String(p.key.value) : String(p.key)) === segment);
        if (!pair) break;
        if (isNode(pair.key) && pair.key.range) range = pair.key.range;
        node = pair.value;
      } else if (isSeq(node)) {
        const item = /^\d+$/.test(segment) ? node.items[Number(segment)] : undefined;
        if (!isNode(item)) break;
        if (item.range) range = item.range;
        node = item;
      } else {
        break;
      }
    }
    return range ? lines.linePos(range[0]).line : undefined;
  });
}
