import { type GitBookDocument, SCHEMA_VERSION, hashKey } from './shared.ts';
import { shiftPath, splitTopLevel } from './chunks.ts';
import { Reader } from './parse-reader.ts';
import { prepareSource, processor } from './parse-source.ts';

/**
 * Markdown → GitBook document. remark parses CommonMark + GFM; GitBook's own syntax is recognised
 * around it: `{% hint %}` / `{% code %}` tags, `$$` math, `<code class="expression">` expressions,
 * `<sup>`/`<sub>`/`<kbd>` marks and `<a id>` heading anchors.
 *
 * The reader is in parts, one per family of constructs: the source prepared for remark
 * (parse-source.ts), the reader that walks remark's tree and hands each node to its family
 * (parse-reader.ts), markdown blocks (parse-blocks.ts), GitBook `{% %}` tags (parse-liquid.ts),
 * HTML blocks (parse-html.ts, tables in parse-html-table.ts), inline text and marks
 * (parse-inline.ts), and the nodes they build and the containers that hold them (parse-nodes.ts,
 * parse-containers.ts).
 */

export interface ParseOptions {
  /** Key of the node at a position path such as `3.0.f1.0` (indices; `f<n>` is a fragment). */
  keyFor?: (path: string) => string;
  /** Size of the pieces a long page is parsed in (tests set it small to compare with a whole parse). */
  pieceChars?: number;
}

export interface ParsedMarkdown {
  document: GitBookDocument;
  /** Markdown depth (1–6) of each top-level heading block; the document only has three levels. */
  headingDepth: WeakMap<object, number>;
}

type Keyed = { object: string; type?: string; key?: string; nodes?: Keyed[]; fragments?: Keyed[] };

/** Gives blocks, inlines and fragments their position key, written right after `object`/`type`. */
function withKeys(nodes: Keyed[], prefix: string, keyFor: (path: string) => string, moved: (from: Keyed, to: Keyed) => void): Keyed[] {
  return nodes.map((node, i) => {
    if (node.object !== 'block' && node.object !== 'inline') return node;
    const path = prefix === '' ? String(i) : `${prefix}.${i}`;
    const { object, type, key: _key, ...rest } = node;
    const keyed: Keyed = { object, type, key: keyFor(path), ...rest };
    if (node.nodes) keyed.nodes = withKeys(node.nodes, path, keyFor, moved);
    if (node.fragments) {
      keyed.fragments = node.fragments.map((fragment, j) => {
        const fragmentPath = `${path}.f${j}`;
        const { object: fragmentObject, key: _fragmentKey, ...fragmentRest } = fragment;
        return { object: fragmentObject, key: keyFor(fragmentPath), ...fragmentRest, nodes: withKeys(fragment.nodes ?? [], fragmentPath, keyFor, moved) };
      });
    }
    moved(node, keyed);
    return keyed;
  });
}

export function parseMarkdown(markdown: string, opts: ParseOptions = {}): ParsedMarkdown {
  const nodes: GitBookDocument['nodes'] = [];
  const headingDepth = new WeakMap<object, number>();
  for (const parsed of parseMarkdownPieces(markdown, opts)) {
    for (const node of parsed.document.nodes) {
      nodes.push(node);
      const depth = parsed.headingDepth.get(node);
      if (depth !== undefined) headingDepth.set(node, depth);
    }
  }
  return { document: { object: 'document', data: { schemaVersion: SCHEMA_VERSION }, nodes }, headingDepth };
}

/**
 * The page parsed piece by piece (one piece for a short page): each piece's blocks take the
 * positions, and so the keys, they have in the whole page. A caller that consumes pieces as they
 * come (serializing them, say) never holds the whole document's objects at once.
 */
export function* parseMarkdownPieces(markdown: string, opts: ParseOptions = {}): Generator<ParsedMarkdown> {
  const keyFor = opts.keyFor ?? hashKey;
  let offset = 0;
  for (const piece of splitTopLevel(markdown, opts.pieceChars ?? PIECE_CHARS)) {
    const at = offset;
    const parsed = parsePiece(piece, at === 0 ? keyFor : (path) => keyFor(shiftPath(path, at)));
    offset += parsed.document.nodes.length;
    yield parsed;
  }
}

/** Pages longer than this are parsed in pieces of about this size (see chunks.ts). */
const PIECE_CHARS = 32 * 1024;

function parsePiece(markdown: string, keyFor: (path: string) => string): ParsedMarkdown {
  const source = prepareSource(markdown);
  const reader = new Reader(source);
  const blocks = reader.read(processor.parse(source.text));
  const headingDepth = new WeakMap<object, number>();
  const moved = (from: Keyed, to: Keyed) => {
    const depth = reader.headingDepth.get(from);
    if (depth !== undefined) headingDepth.set(to, depth);
  };
  const nodes = withKeys(blocks as unknown as Keyed[], '', keyFor, moved) as unknown as GitBookDocument['nodes'];
  return { document: { object: 'document', data: { schemaVersion: SCHEMA_VERSION }, nodes }, headingDepth };
}
