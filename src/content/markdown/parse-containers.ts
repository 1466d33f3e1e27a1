import type { DocumentBlockParagraph } from '@gitbook/api';
import { type Block, type InlineOrText, textNode, urlFromRef } from './shared.ts';
import { inlineImage, leaf, linkParagraph, mergeTexts, paragraph } from './parse-nodes.ts';

// Which blocks each container may hold, per the official schema.
const ESSENTIALS = ['paragraph', 'heading-1', 'heading-2', 'heading-3', 'list-ordered', 'list-unordered', 'list-tasks', 'divider'];
export const IN_QUOTE = new Set([...ESSENTIALS, 'blockquote']);
export const IN_HINT = new Set([...ESSENTIALS, 'table', 'embed', 'integration']);
export const IN_LIST_ITEM = new Set([...ESSENTIALS, 'code', 'hint', 'blockquote', 'math', 'table']);
export const IN_ANNOTATION = new Set([...ESSENTIALS, 'code']);
export const TOP_LEVEL = new Set([
  ...ESSENTIALS, 'blockquote', 'hint', 'prompt', 'images', 'file', 'drawing', 'embed', 'code', 'math', 'expandable', 'tabs',
  'table', 'swagger', 'openapi-operation', 'openapi-schemas', 'openapi-webhook', 'content-ref', 'integration',
  'reusable-content', 'stepper', 'if', 'columns', 'updates',
]);
export const IN_TAB = new Set([
  ...ESSENTIALS, 'content-ref', 'code', 'embed', 'file', 'images', 'drawing', 'hint', 'prompt', 'blockquote', 'math', 'integration',
]);
export const IN_STEP = new Set([...IN_TAB, 'expandable']);
export const IN_UPDATE = new Set([...IN_TAB, 'tabs', 'expandable']);
export const IN_COLUMN = new Set([...IN_TAB, 'table', 'expandable', 'stepper']);
export const IN_EXPANDABLE = new Set([
  ...ESSENTIALS, 'file', 'images', 'code', 'table', 'hint', 'prompt', 'blockquote', 'reusable-content', 'integration',
]);

/**
 * Rewrites blocks a container may not hold (per the schema) into ones it may: code becomes
 * code-marked paragraphs, images inline images, math inline math, tables one paragraph per row,
 * references links, and containers (hints, quotes, tabs, steps, columns…) give up their wrapper.
 */
export function fit(blocks: Block[], allowed: Set<string>): Block[] {
  const out: Block[] = [];
  for (const block of blocks) {
    if (allowed.has(block.type)) {
      out.push(block);
      continue;
    }
    switch (block.type) {
      case 'code':
        for (const line of block.nodes) {
          const text = line.nodes.map((n) => (n.object === 'text' ? n.leaves.map((l) => l.text).join('') : '')).join('');
          if (text.trim() !== '') out.push(paragraph([textNode([leaf(text, ['code'])])]));
        }
        break;
      case 'images':
        out.push(
          paragraph(
            block.nodes.map((image) => {
              const caption = (image.fragments[0]?.nodes as DocumentBlockParagraph[] | undefined)
                ?.flatMap((p) => p.nodes.map((n) => (n.object === 'text' ? n.leaves.map((l) => l.text).join('') : '')))
                .join('');
              return inlineImage(image.data.ref, image.data.alt ?? '', caption ?? '');
            }),
          ),
        );
        break;
      case 'math':
        // A formula where no math block may stand becomes inline math; an empty one, nothing.
        if (block.data.formula.trim() === '') break;
        out.push(paragraph([{ object: 'inline', type: 'inline-math', data: { formula: block.data.formula }, isVoid: true }]));
        break;
      case 'embed':
        out.push(linkParagraph({ kind: 'url', url: block.data.url }, block.data.url));
        break;
      case 'content-ref':
      case 'file':
        out.push(linkParagraph(block.data.ref, urlFromRef(block.data.ref)));
        break;
      case 'drawing':
        if (block.data.ref) out.push(linkParagraph(block.data.ref, urlFromRef(block.data.ref)));
        break;
      case 'reusable-content':
      case 'swagger':
        out.push(linkParagraph(block.data.ref, urlFromRef(block.data.ref)));
        break;
      case 'openapi-operation':
      case 'openapi-schemas':
      case 'openapi-webhook':
      case 'integration':
        break;
      case 'expandable':
        out.push(...fit(block.fragments.flatMap((f) => f.nodes) as Block[], allowed));
        break;
      case 'table': {
        const { view, records, definition } = block.data;
        const columns = view.columns.length > 0 ? view.columns : Object.keys(definition);
        out.push(paragraph([textNode([leaf(columns.map((c) => definition[c]?.title ?? '').join(' | '))])]));
        const rows = Object.values(records).sort((a, b) => (a.orderIndex < b.orderIndex ? -1 : 1));
        for (const record of rows) {
          const nodes: InlineOrText[] = [];
          columns.forEach((column, j) => {
            if (j > 0) nodes.push(textNode([leaf(' | ')]));
            const name = record.values[column];
            const fragment = block.fragments.find((f) => f.fragment === name);
            for (const p of fragment?.nodes ?? []) if (p.type === 'paragraph') nodes.push(...p.nodes);
          });
          out.push(paragraph(mergeTexts(nodes)));
        }
        break;
      }
      default: {
        const nested = (block as { nodes?: Block[] }).nodes;
        if (nested && nested.every((n) => n.object === 'block')) out.push(...fit(nested, allowed));
        break;
      }
    }
  }
  return out;
}
