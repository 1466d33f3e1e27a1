import { documentToMarkdown, markdownToDocument, type GitBookDocument } from '../content/markdown.ts';
import { BadRequestError } from '../platform/errors.ts';

/**
 * Rich-text documents sent by clients (page bodies, change request descriptions). The request
 * schema only checks the envelope; the nodes are checked here, so a malformed document is a 400
 * naming the node, never a crash of the markdown writer.
 */

function fail(field: string, path: string, problem: string): never {
  throw new BadRequestError(`${field}${path}: ${problem}`);
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function checkNodes(field: string, path: string, nodes: unknown, depth: number): void {
  if (!Array.isArray(nodes)) fail(field, path, 'must be an array of nodes');
  if (depth > 50) fail(field, path, 'nodes are nested too deeply');
  nodes.forEach((node, i) => {
    const at = `${path}.${i}`;
    if (!isObject(node)) fail(field, at, 'must be a node object');
    switch (node.object) {
      case 'text': {
        if (!Array.isArray(node.leaves)) fail(field, `${at}.leaves`, 'must be an array of leaves');
        node.leaves.forEach((leaf, j) => {
          if (!isObject(leaf) || typeof leaf.text !== 'string') fail(field, `${at}.leaves.${j}`, 'must be a leaf with a string "text"');
          if (!Array.isArray(leaf.marks)) fail(field, `${at}.leaves.${j}.marks`, 'must be an array of marks ([] for plain text)');
          leaf.marks.forEach((mark, k) => {
            if (!isObject(mark) || typeof mark.type !== 'string') fail(field, `${at}.leaves.${j}.marks.${k}`, 'must be a mark with a string "type"');
          });
        });
        return;
      }
      case 'block':
      case 'inline':
        if (typeof node.type !== 'string') fail(field, `${at}.type`, 'must be a string');
        if (node.data !== undefined && !isObject(node.data)) fail(field, `${at}.data`, 'must be an object');
        if (node.nodes !== undefined || node.isVoid !== true) checkNodes(field, `${at}.nodes`, node.nodes, depth + 1);
        return;
      default:
        fail(field, `${at}.object`, 'must be "block", "inline" or "text"');
    }
  });
}

/** The markdown of a client's document; 400 when it cannot be read. */
export function documentInputToMarkdown(doc: unknown, field: string): string {
  if (!isObject(doc) || doc.object !== 'document') fail(field, '', 'must be a document ({ object: "document", data, nodes })');
  checkNodes(field, '.nodes', doc.nodes, 0);
  try {
    return documentToMarkdown(doc as unknown as GitBookDocument);
  } catch (err) {
    // The writer trusts node shapes (an image's `data.ref`, a table's definitions…).
    throw new BadRequestError(`${field}: the document cannot be read (${(err as Error).message}); check the shape of its nodes`);
  }
}

/**
 * A client's document as Folio stores and serves it: read, then written back in canonical form,
 * so every stored description is a document the official schema accepts.
 */
export function normalizeDocument(doc: unknown, field: string): GitBookDocument {
  return markdownToDocument(documentInputToMarkdown(doc, field));
}
