import { BadRequestError } from './errors.ts';

/**
 * Bounds on the content one request may make Folio parse, convert or merge. Every check here is a
 * single linear scan that runs before any parser or recursive walk sees the input, so a hostile
 * page is refused with a 400 naming the limit instead of exhausting the stack, the event loop or
 * memory. The numbers are far above what real documentation uses (GitBook itself caps a page well
 * below them) and far below what makes a conversion take seconds.
 */
export const LIMITS = {
  /** Characters of markdown in one page (the request schemas say the same). */
  markdownChars: 2_000_000,
  /** Containers (block quotes and lists) nested inside each other. */
  nesting: 100,
  /** Emphasis delimiter runs (`*`, `_`, `~`) in one paragraph: their pairing costs grow with the square of this. */
  delimitersPerBlock: 4_000,
  /** Columns of one table. */
  tableColumns: 200,
  /** Cells of all tables of one page. */
  tableCells: 50_000,
  /** Nodes (blocks, inlines, texts, leaves) of one rich-text document. */
  documentNodes: 200_000,
  /** Blocks and inlines nested inside each other in one rich-text document. */
  documentDepth: 50,
  /** Characters of text in one rich-text document. */
  documentChars: 2_000_000,
} as const;

export class ContentLimitError extends BadRequestError {}

const LIST_OR_QUOTE = /^[ \t]{0,3}(?:>|[-+*](?=[ \t]|$)|\d{1,9}[.)](?=[ \t]|$))[ \t]?/;
const TABLE_DELIMITER = /^[ \t]*>*[ \t]*\|?[ \t]*:?-+:?[ \t]*(\|[ \t]*:?-+:?[ \t]*)*\|?[ \t]*$/;

/**
 * Checks markdown against the limits, in one pass over its lines. `field` names the input in the
 * error (for example `changes[0].document.markdown`).
 */
export function checkMarkdownLimits(markdown: string, field = 'markdown'): void {
  if (markdown.length > LIMITS.markdownChars) {
    throw new ContentLimitError(`${field}: at most ${LIMITS.markdownChars} characters per page (got ${markdown.length})`);
  }
  let delimiters = 0;
  let cells = 0;
  let tableColumns = 0;
  let start = 0;
  while (start <= markdown.length) {
    let end = markdown.indexOf('\n', start);
    if (end === -1) end = markdown.length;
    const line = markdown.slice(start, end);
    start = end + 1;

    if (line.trim() === '') {
      delimiters = 0;
      tableColumns = 0;
      continue;
    }

    // Nesting: markers that open a container, chained at the start of the line (`> > - 1. x`),
    // plus the levels a list item's indentation implies (two columns or more per level).
    let depth = 0;
    let rest = line;
    const indent = /^[ \t]*/.exec(line)![0];
    const width = indent.replace(/\t/g, '    ').length;
    if (width >= 4 && /^[ \t]*(?:[-+*]|\d{1,9}[.)])(?:[ \t]|$)/.test(line)) depth += Math.floor(width / 2);
    rest = rest.slice(indent.length > 3 ? indent.length : 0);
    for (let m = LIST_OR_QUOTE.exec(rest); m; m = LIST_OR_QUOTE.exec(rest)) {
      depth++;
      rest = rest.slice(m[0].length);
      if (depth > LIMITS.nesting) break;
    }
    if (depth > LIMITS.nesting) {
      throw new ContentLimitError(`${field}: block quotes and lists are nested more than ${LIMITS.nesting} levels deep`);
    }

    // Emphasis delimiter runs in this paragraph (a blank line ends it).
    for (let i = 0; i < line.length; i++) {
      const c = line.charCodeAt(i);
      if ((c === 42 || c === 95 || c === 126) && line.charCodeAt(i - 1) !== c) delimiters++;
    }
    if (delimiters > LIMITS.delimitersPerBlock) {
      throw new ContentLimitError(
        `${field}: a paragraph has more than ${LIMITS.delimitersPerBlock} emphasis markers (*, _ or ~); split it or escape them`,
      );
    }

    // Tables: the delimiter row gives the column count; each row after it adds that many cells.
    if (tableColumns > 0) {
      cells += tableColumns;
    } else if (line.includes('-') && TABLE_DELIMITER.test(line)) {
      tableColumns = (line.match(/-+/g) ?? []).length;
      if (tableColumns > LIMITS.tableColumns) {
        throw new ContentLimitError(`${field}: a table has ${tableColumns} columns; at most ${LIMITS.tableColumns} are allowed`);
      }
      cells += tableColumns * 2; // the header row and the delimiter row
    }
    if (cells > LIMITS.tableCells) {
      throw new ContentLimitError(`${field}: tables of one page have more than ${LIMITS.tableCells} cells in all`);
    }
  }
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/**
 * Checks the shape and size of a client's rich-text document without recursion: an explicit stack
 * walks it, depth is known before a level is entered, and the walk stops at the first node over a
 * limit. Errors name the node by its path (`description.nodes.3.nodes.0`).
 */
export function checkDocumentInput(doc: unknown, field: string): void {
  const fail: (path: string, problem: string) => never = (path, problem) => {
    throw new BadRequestError(`${field}${path}: ${problem}`);
  };
  if (!isObject(doc) || doc.object !== 'document') fail('', 'must be a document ({ object: "document", data, nodes })');
  let nodes = 0;
  let chars = 0;
  const stack: { list: unknown; path: string; depth: number }[] = [{ list: (doc as Record<string, unknown>).nodes, path: '.nodes', depth: 0 }];
  while (stack.length) {
    const { list, path, depth } = stack.pop()!;
    if (!Array.isArray(list)) fail(path, 'must be an array of nodes');
    if (depth > LIMITS.documentDepth) fail(path, `nodes are nested more than ${LIMITS.documentDepth} levels deep`);
    nodes += (list as unknown[]).length;
    if (nodes > LIMITS.documentNodes) fail(path, `a document has at most ${LIMITS.documentNodes} nodes`);
    (list as unknown[]).forEach((node, i) => {
      const at = `${path}.${i}`;
      if (!isObject(node)) fail(at, 'must be a node object');
      switch (node.object) {
        case 'text': {
          if (!Array.isArray(node.leaves)) fail(`${at}.leaves`, 'must be an array of leaves');
          const leaves = node.leaves as unknown[];
          nodes += leaves.length;
          leaves.forEach((leaf, j) => {
            if (!isObject(leaf) || typeof leaf.text !== 'string') fail(`${at}.leaves.${j}`, 'must be a leaf with a string "text"');
            chars += (leaf.text as string).length;
            if (!Array.isArray(leaf.marks)) fail(`${at}.leaves.${j}.marks`, 'must be an array of marks ([] for plain text)');
            (leaf.marks as unknown[]).forEach((mark, k) => {
              if (!isObject(mark) || typeof mark.type !== 'string') fail(`${at}.leaves.${j}.marks.${k}`, 'must be a mark with a string "type"');
            });
          });
          if (chars > LIMITS.documentChars) fail(at, `a document has at most ${LIMITS.documentChars} characters of text`);
          return;
        }
        case 'block':
        case 'inline':
          if (typeof node.type !== 'string') fail(`${at}.type`, 'must be a string');
          if (node.data !== undefined && !isObject(node.data)) fail(`${at}.data`, 'must be an object');
          if (node.nodes !== undefined || node.isVoid !== true) stack.push({ list: node.nodes, path: `${at}.nodes`, depth: depth + 1 });
          // Fragments (table cells, captions…) hold nodes of their own.
          if (Array.isArray(node.fragments)) {
            (node.fragments as unknown[]).forEach((fragment, f) => {
              if (!isObject(fragment)) fail(`${at}.fragments.${f}`, 'must be a fragment object');
              stack.push({ list: fragment.nodes, path: `${at}.fragments.${f}.nodes`, depth: depth + 1 });
            });
          }
          return;
        default:
          fail(`${at}.object`, 'must be "block", "inline" or "text"');
      }
    });
  }
}
