import { documentToMarkdown, markdownLinkTargets, markdownSearchText, markdownToDocument, type GitBookDocument } from './markdown.ts';

/**
 * The conversions a worker thread runs for `convert.ts`. Inputs and results cross the thread
 * boundary by structured clone, so everything here takes and returns plain data.
 */
export type ConvertTask =
  | { kind: 'toDocument'; markdown: string }
  | { kind: 'toDocumentJson'; markdown: string }
  | { kind: 'toMarkdown'; document: GitBookDocument }
  | { kind: 'searchText'; markdown: string }
  | { kind: 'linkTargets'; markdown: string };

export function runConversion(task: ConvertTask): unknown {
  switch (task.kind) {
    case 'toDocument':
      return markdownToDocument(task.markdown);
    case 'toDocumentJson':
      // Text crosses the thread boundary as one copy; a document object would be rebuilt node by
      // node on the receiving thread, and serialized there again.
      return JSON.stringify(markdownToDocument(task.markdown));
    case 'toMarkdown':
      return documentToMarkdown(task.document);
    case 'linkTargets':
      return markdownLinkTargets(task.markdown);
    case 'searchText': {
      const text = markdownSearchText(task.markdown);
      return { sections: text.sections.map((s) => ({ id: s.id, title: s.title, body: s.body })), body: text.body };
    }
  }
}

export default runConversion;
