import jsyaml from 'js-yaml';
import { LineCounter, isMap, isNode, isScalar, isSeq, parseDocument, type Document, type Node as YamlNode } from 'yaml';
import { jsonDepthExceeds } from '../platform/app.ts';

/**
 * Reading spec files safely: JSON or YAML text becomes a plain value, or a SpecParseError that
 * says where the problem is (with its line). Both formats are refused past MAX_SPEC_DEPTH levels
 * of nesting as they are read (JSON by a linear scan before JSON.parse, YAML by js-yaml's
 * `maxDepth`), so no deep file overflows a recursive walker or builds a huge parser stack; YAML
 * aliases are measured without being expanded, and a document they would blow up (an alias bomb)
 * is refused. YAML is read by js-yaml (about ten times faster than `yaml` on large specs);
 * `yaml`, which keeps positions, only finds the lines of validation errors.
 */

/** Deepest nesting of objects and arrays a spec file may have (real specs stay far below). */
export const MAX_SPEC_DEPTH = 200;

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
  let value: unknown;
  try {
    // maxDepth: nesting is refused as it is read (js-yaml reads recursively, so this also bounds
    // its stack); duplicate keys are errors; the core schema reads no dates, binaries or merge keys.
    value = jsyaml.load(text, { schema: jsyaml.CORE_SCHEMA, maxDepth: MAX_SPEC_DEPTH } as jsyaml.LoadOptions);
  } catch (err) {
    if (err instanceof jsyaml.YAMLException) {
      const line = err.mark ? err.mark.line + 1 : undefined;
      const reason = /maxDepth/.test(err.reason) ? `the document nests deeper than ${MAX_SPEC_DEPTH} levels of objects and arrays` : `invalid YAML: ${err.reason}`;
      return { ok: false, error: new SpecParseError(reason, line) };
    }
    if (err instanceof RangeError) return { ok: false, error: new SpecParseError('the document nests too deeply to be read') };
    throw err;
  }
  // An alias is the same object at each place it is used: cheap to read, but a few aliases of
  // aliases stand for billions of values once written out (an alias bomb). Count what it expands to.
  const expansion = aliasExpansion(value);
  if (expansion === 'cycle') return { ok: false, error: new SpecParseError('a YAML alias refers to a node that contains it') };
  if (expansion.expanded > Math.max(MIN_EXPANSION_ALLOWED, expansion.distinct * 4)) {
    return { ok: false, error: new SpecParseError(`YAML aliases expand the document to ${expansion.expanded > 1e12 ? 'more than a trillion' : expansion.expanded} values (an alias bomb?); at most ${Math.max(MIN_EXPANSION_ALLOWED, expansion.distinct * 4)} are allowed`) };
  }
  return { ok: true, value };
}

/** Values a YAML document may expand to through aliases, at least (more when it has many distinct values). */
const MIN_EXPANSION_ALLOWED = 2_000_000;

/**
 * How many values a parsed document stands for once every alias is written out, against how
 * many distinct values it holds: linear in the distinct values (each object is counted once, its
 * count reused), so a bomb is measured without expanding it. 'cycle' when an alias contains itself.
 */
function aliasExpansion(value: unknown): { expanded: number; distinct: number } | 'cycle' {
  const sizes = new Map<object, number>();
  const open = new Set<object>();
  const stack: { node: object; children: unknown[] }[] = [];
  const enter = (v: unknown): number | 'cycle' | undefined => {
    if (v === null || typeof v !== 'object') return 1;
    const known = sizes.get(v);
    if (known !== undefined) return known;
    if (open.has(v)) return 'cycle';
    open.add(v);
    stack.push({ node: v, children: Array.isArray(v) ? [...v] : Object.values(v) });
    return undefined;
  };
  if (enter(value) === 'cycle') return 'cycle';
  const totals = new Map<object, number>();
  while (stack.length) {
    const top = stack[stack.length - 1]!;
    if (top.children.length === 0) {
      // Every child counted: this node's size is known, and adds to its parent's.
      stack.pop();
      open.delete(top.node);
      const size = (totals.get(top.node) ?? 0) + 1;
      sizes.set(top.node, size);
      const parent = stack[stack.length - 1];
      if (parent) totals.set(parent.node, (totals.get(parent.node) ?? 0) + size);
      continue;
    }
    const size = enter(top.children.pop());
    if (size === 'cycle') return 'cycle';
    if (size !== undefined) totals.set(top.node, (totals.get(top.node) ?? 0) + size);
  }
  const root = value !== null && typeof value === 'object' ? sizes.get(value)! : 1;
  return { expanded: root, distinct: sizes.size };
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
