import { checkMarkdownLimits, ContentLimitError } from '../platform/document-limits.ts';
import { documentToMarkdown, markdownLinkTargets, markdownSearchText, markdownToDocument, markdownToDocumentJson, type GitBookDocument } from './markdown/markdown.ts';
import { hashKey, SCHEMA_VERSION } from './markdown/shared.ts';

/**
 * The conversions a worker thread runs for `convert.ts` (small inputs run in the calling thread).
 * Inputs and results cross the thread boundary by structured clone, so everything here takes and
 * returns plain data.
 *
 * Reads of stored markdown never fail: the limits are checked here, where the work happens (a
 * scan of a 2 MB page is work too), and markdown stored before a limit existed, or grown past one
 * by a merge, reads as plain paragraphs of its text.
 */
export type ConvertTask =
  /** `keySeed`: block keys come from the seed and each node's position (computed content), not the position alone. */
  | { kind: 'toDocument'; markdown: string; keySeed?: string | undefined }
  | { kind: 'toDocumentJson'; markdown: string }
  | { kind: 'toMarkdown'; document: GitBookDocument }
  | { kind: 'searchText'; markdown: string }
  | { kind: 'linkTargets'; markdown: string };

/** Runs `read` on markdown within the limits; anything past them (or too deep for the parser) gets `fallback`. */
function readSafely<T>(markdown: string, read: () => T, fallback: () => T): T {
  try {
    checkMarkdownLimits(markdown);
    return read();
  } catch (err) {
    if (err instanceof ContentLimitError || err instanceof RangeError) return fallback();
    throw err;
  }
}

export function runConversion(task: ConvertTask): unknown {
  switch (task.kind) {
    case 'toDocument':
      return readSafely(task.markdown, () => markdownToDocument(task.markdown, keyOptions(task.keySeed)), () => plainDocument(task.markdown));
    case 'toDocumentJson':
      // Text crosses the thread boundary as one copy; a document object would be rebuilt node by
      // node on the receiving thread, and serialized there again.
      return readSafely(task.markdown, () => markdownToDocumentJson(task.markdown), () => JSON.stringify(plainDocument(task.markdown)));
    case 'toMarkdown':
      return documentToMarkdown(task.document);
    case 'linkTargets':
      return readSafely(task.markdown, () => markdownLinkTargets(task.markdown), () => ({ urls: [], anchors: [] }));
    case 'searchText':
      return readSafely(
        task.markdown,
        () => {
          const text = markdownSearchText(task.markdown);
          return { sections: text.sections.map((s) => ({ id: s.id, title: s.title, body: s.body })), body: text.body };
        },
        () => ({ sections: [], body: task.markdown }),
      );
  }
}

/** Keys from a seed: the same seed and markdown give the same keys, another seed other keys. */
function keyOptions(seed: string | undefined) {
  return seed === undefined ? undefined : { keyFor: (path: string) => hashKey(`${seed}\u0000${path}`) };
}

/** Markdown shown as it is: one paragraph per block of lines. Linear, and never recursive. */
export function plainDocument(markdown: string): GitBookDocument {
  const nodes = markdown
    .split(/\r?\n(?:[ \t]*\r?\n)+/)
    .filter((chunk) => chunk.trim() !== '')
    .map((chunk) => ({
      object: 'block' as const,
      type: 'paragraph' as const,
      data: {},
      nodes: [{ object: 'text' as const, leaves: [{ object: 'leaf' as const, text: chunk, marks: [] }] }],
    }));
  return { object: 'document', data: { schemaVersion: SCHEMA_VERSION }, nodes } as GitBookDocument;
}

export default runConversion;
