import type { ContentRef, DocumentFragment } from '@gitbook/api';
import { type Block, emoji, urlFromRef } from './shared.ts';

/**
 * Text views of a parsed document: plain text for indexing, heading sections with anchors, and the
 * URLs it links to. Working on the document (not the markdown) means every view agrees with what
 * the API serves.
 */

/** Any node, read loosely: documents from clients may hold node types this module does not model. */
type Loose = {
  object?: string;
  type?: string;
  data?: { ref?: ContentRef; url?: string; alt?: string; formula?: string; code?: string };
  nodes?: Loose[];
  leaves?: { text: string }[];
  fragments?: DocumentFragment[];
};

/** Visible text of inline content: link text, image alt text and formulas; expressions are unevaluated, so empty. */
export function inlineText(nodes: readonly unknown[] | undefined): string {
  let out = '';
  for (const node of (nodes ?? []) as Loose[]) {
    if (node.object === 'text') out += (node.leaves ?? []).map((l) => l.text).join('');
    else if (node.type === 'inline-image') out += node.data?.alt ?? '';
    else if (node.type === 'inline-math') out += node.data?.formula ?? '';
    else if (node.type === 'expression') continue;
    else if (node.type === 'emoji') out += emoji(node.data?.code ?? '');
    else out += inlineText(node.nodes);
  }
  return out;
}

/** Lines of text of a block, in reading order. */
export function blockLines(block: Block): string[] {
  const node = block as Loose;
  switch (block.type) {
    case 'paragraph':
    case 'heading-1':
    case 'heading-2':
    case 'heading-3':
      return inlineText(block.nodes).split('\n');
    case 'code':
      return block.nodes.map((line) => inlineText(line.nodes));
    case 'math':
      return [block.data.formula];
    case 'divider':
      return [];
    case 'embed':
      return [block.data.url];
    case 'images':
      return block.nodes.flatMap((image) => [image.data.alt ?? '', ...image.fragments.flatMap((f) => f.nodes.flatMap(blockLines))]);
    case 'table': {
      const { view, records, definition } = block.data;
      const columns = view.type === 'grid' ? view.columns : Object.keys(definition);
      const cell = (value: unknown): string => {
        const fragment = typeof value === 'string' ? block.fragments.find((f) => f.fragment === value) : undefined;
        if (fragment) return fragment.nodes.flatMap(blockLines).join(' ');
        return value === null || value === undefined || typeof value === 'object' ? '' : String(value);
      };
      const rows = Object.values(records).sort((a, b) => (a.orderIndex < b.orderIndex ? -1 : a.orderIndex > b.orderIndex ? 1 : 0));
      return [
        columns.map((c) => definition[c]?.title ?? '').join(' '),
        ...rows.map((record) => columns.map((c) => cell(record.values[c])).join(' ')),
      ];
    }
    default: {
      const lines = (node.fragments ?? []).flatMap((f) => f.nodes.flatMap(blockLines));
      const children = node.nodes ?? [];
      if (children.some((c) => c.object === 'block')) lines.push(...(children as Block[]).flatMap(blockLines));
      else if (children.length > 0) lines.push(...inlineText(children).split('\n'));
      return lines;
    }
  }
}

export function blocksText(blocks: readonly Block[]): string {
  return blocks
    .flatMap(blockLines)
    .map((line) => line.trim())
    .filter((line) => line !== '')
    .join('\n');
}

/**
 * GitBook-style heading anchor: lowercase, punctuation dropped, whitespace runs become one `-`,
 * letters of any script kept. Not the page slug (`slugify` in content/model.ts, ASCII only).
 */
export function anchorSlug(text: string): string {
  return text
    .toLowerCase()
    .replace(/[^\p{L}\p{M}\p{N}\s_-]/gu, '')
    .trim()
    .replace(/\s+/g, '-')
    .replace(/-{2,}/g, '-')
    .replace(/^-+|-+$/g, '');
}

/** Hands out unique anchors: a repeated slug gets `-1`, `-2`… (skipping ones already taken). */
export class Slugger {
  private readonly taken = new Set<string>();

  slug(base: string): string {
    let candidate = base;
    for (let n = 1; this.taken.has(candidate); n++) candidate = `${base}-${n}`;
    this.taken.add(candidate);
    return candidate;
  }
}

export interface LinkRef {
  url: string;
  text: string;
}

/** Every link and image target in the blocks, in document order (duplicates kept). */
export function collectLinks(blocks: readonly Block[]): LinkRef[] {
  const out: LinkRef[] = [];
  const visit = (nodes: readonly Loose[] | undefined) => {
    for (const node of nodes ?? []) {
      const { ref, url, alt } = node.data ?? {};
      if (node.type === 'link' && ref) out.push({ url: urlFromRef(ref), text: inlineText(node.nodes) });
      if (node.type === 'embed' && url) out.push({ url, text: '' });
      if ((node.type === 'inline-image' || node.type === 'image') && ref) out.push({ url: urlFromRef(ref), text: alt ?? '' });
      visit(node.nodes);
      for (const fragment of node.fragments ?? []) visit(fragment.nodes as Loose[]);
    }
  };
  visit(blocks as Loose[]);
  return out;
}
