import type * as md from 'mdast';
import type { Block, GitBookDocument } from './shared.ts';
import { blocks } from './serialize-blocks.ts';
import type { Notes } from './serialize-inline.ts';
import { processor } from './serialize-remark.ts';

/**
 * GitBook document → markdown, written so that `parse.ts` reads it back to the same document.
 * Marks are grouped into the fewest nested markdown spans; GitBook constructs without markdown
 * syntax are written the way GitBook itself writes them (`{% hint %}`, `{% tabs %}`, `<details>`,
 * `<figure>`, `<table data-view="cards">`, `<mark>`, `$$`…).
 *
 * The writer is in parts: remark-stringify set up as GitBook writes (serialize-remark.ts), blocks
 * and containers (serialize-blocks.ts), tables (serialize-tables.ts), and rich text with its marks
 * (serialize-inline.ts).
 */

export function serializeDocument(doc: GitBookDocument): string {
  const notes: Notes = [];
  const children = blocks(doc.nodes as Block[], notes);
  const root: md.Root = { type: 'root', children: [...children, ...notes] };
  return processor.stringify(root);
}
