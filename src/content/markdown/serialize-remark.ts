import type * as md from 'mdast';
import type { Handle } from 'mdast-util-to-markdown';
import remarkStringify from 'remark-stringify';
import { unified } from 'unified';
import { gitbookGfm } from './gfm.ts';

/** remark-stringify, set up to write markdown the way GitBook does. */

/**
 * Text as GitBook escapes it: markdown's escapes, plus every `_` (GitBook writes `:heavy\_plus\_sign:`
 * where markdown would leave an underscore inside a word alone).
 */
const text: Handle = (node: md.Text, parent, state, info) => {
  const out = state.safe(node.value, info).replace(/(?<!\\)_/g, '\\_');
  // A backslash ending a paragraph is text as it stands (nothing follows it to escape), and
  // GitBook writes it bare: `balance.\`.
  // (Not in a paragraph written inside HTML, where `</td>` or `</p>` follows it.)
  const endsParagraph = parent?.type === 'paragraph' && !(parent.data as HtmlParagraphData | undefined)?.insideHtml && parent.children.at(-1) === node;
  if (endsParagraph && /(?<!\\)(?:\\\\)*\\$/.test(node.value)) return out.replace(/\\\\$/, '\\');
  return out;
};

export const processor = unified().use(gitbookGfm).use(remarkStringify, {
  handlers: { text },
  listItemIndent: 'mixed',
  // GitBook's own choices, so that an exported page only changes where its content did.
  bullet: '*',
  emphasis: '_',
  strong: '*',
  rule: '*',
  fence: '`',
  fences: true,
  // Text that would read back as math or as a GitBook tag is escaped.
  join: [tagSpacing],
  // `[https://x](https://x)`, not `<https://x>`.
  resourceLink: true,
  unsafe: [
    { character: '$', after: '\\$' },
    { character: '{', after: '%', atBreak: true },
  ],
});

/**
 * GitBook writes a container's tags right against its content: no blank line after an opening tag
 * (`{% hint %}`, `{% tabs %}` then `{% tab %}`…) nor before a closing one; blocks and items are
 * separated by one blank line as usual.
 */
function tagSpacing(left: md.Node, right: md.Node): number | undefined {
  if ((left.data as TagData | undefined)?.tag === 'open' || (right.data as TagData | undefined)?.tag === 'close') return 0;
  return undefined;
}

export type TagData = { tag?: 'open' | 'close' };

/** A paragraph of rich text written inside HTML (a cell, a caption, a summary). */
export type HtmlParagraphData = { insideHtml?: boolean };
