import { Slugger, anchorSlug } from '../content/markdown/text.ts';
import type { GitBookDocument } from '../content/markdown/markdown.ts';

/**
 * What a translation run translates in a page: the text of the JSON document model, never its
 * structure. A slot is one piece of text with a way to put its translation back:
 * - text leaves of every block (paragraphs, headings, list items, hints, quotes, tabs, steppers,
 *   expandables, captions, table cells, annotations, link texts), except leaves marked as inline
 *   code;
 * - text held in block data: tab titles, button labels, image alt texts, table column titles,
 *   prompt descriptions.
 * Code blocks, math, expressions, URLs and every other reference, file names, integration props,
 * OpenAPI blocks and all block attributes are left alone: they are never in a slot.
 */

export interface Slot {
  text: string;
  set(translated: string): void;
}

/** Blocks whose content is never translated. */
const UNTRANSLATED = new Set(['code', 'math', 'inline-math', 'expression', 'integration', 'openapi', 'openapi-operation', 'openapi-schemas', 'openapi-webhook', 'swagger']);

type Node = Record<string, any>;

/** A slot for a piece of text: its surrounding spaces stay out of what is translated. */
function textSlot(text: string, set: (value: string) => void): Slot | undefined {
  const match = /^(\s*)([\s\S]*?)(\s*)$/.exec(text)!;
  const core = match[2]!;
  if (!/\p{L}/u.test(core)) return undefined; // numbers, punctuation, symbols: nothing to translate
  return { text: core, set: (translated) => set(`${match[1]}${translated}${match[3]}`) };
}

/**
 * The slots of a document, in document order. Top-level headings without an explicit anchor get
 * the anchor their source text gives them, so `#anchor` links keep working once the text changes.
 */
export function documentSlots(doc: GitBookDocument): Slot[] {
  const slots: Slot[] = [];
  const add = (slot: Slot | undefined) => slot && slots.push(slot);
  const slugger = new Slugger();
  for (const block of doc.nodes as Node[]) {
    if (/^heading-[123]$/.test(block.type)) {
      const title = plainTextOf(block).trim();
      block.data = block.data ?? {};
      const id = slugger.slug(block.data.id ?? anchorSlug(title));
      if (!block.data.id && id) block.data.id = id;
    }
  }
  const visit = (node: Node) => {
    if (!node || typeof node !== 'object') return;
    if (node.object === 'text') {
      for (const leaf of (node.leaves ?? []) as Node[]) {
        if ((leaf.marks ?? []).some((m: Node) => m.type === 'code')) continue;
        add(textSlot(String(leaf.text ?? ''), (v) => (leaf.text = v)));
      }
      return;
    }
    if (UNTRANSLATED.has(node.type)) return;
    const data = node.data as Node | undefined;
    if (data) {
      if (node.type === 'tabs-item' && typeof data.title === 'string') add(textSlot(data.title, (v) => (data.title = v)));
      if (node.type === 'button' && typeof data.label === 'string') add(textSlot(data.label, (v) => (data.label = v)));
      if (node.type === 'prompt' && typeof data.description === 'string') add(textSlot(data.description, (v) => (data.description = v)));
      if ((node.type === 'image' || node.type === 'inline-image') && typeof data.alt === 'string') add(textSlot(data.alt, (v) => (data.alt = v)));
      if (node.type === 'table' && data.definition && typeof data.definition === 'object') {
        for (const column of Object.values(data.definition as Record<string, Node>)) {
          if (typeof column?.title === 'string') add(textSlot(column.title, (v) => (column.title = v)));
        }
      }
    }
    for (const child of (node.nodes ?? []) as Node[]) visit(child);
    for (const fragment of (node.fragments ?? []) as Node[]) visit(fragment);
  };
  for (const block of doc.nodes as Node[]) visit(block);
  return slots;
}

function plainTextOf(node: Node): string {
  if (node.object === 'text') return ((node.leaves ?? []) as Node[]).map((l) => l.text ?? '').join('');
  return ((node.nodes ?? []) as Node[]).map(plainTextOf).join('');
}

/** Points every page reference (links, mentions, content-refs, anchors, cards) at the mapped page. */
export function remapPageRefs(value: unknown, map: (pageId: string) => string | undefined): void {
  if (Array.isArray(value)) {
    for (const item of value) remapPageRefs(item, map);
    return;
  }
  if (!value || typeof value !== 'object') return;
  const node = value as Node;
  if ((node.kind === 'page' || node.kind === 'anchor') && typeof node.page === 'string') {
    const mapped = map(node.page);
    if (mapped) node.page = mapped;
  }
  for (const child of Object.values(node)) if (child && typeof child === 'object') remapPageRefs(child, map);
}

/** A term of the glossary for one run: what it is in the source and what it becomes. */
export interface GlossaryTerm {
  source: string;
  target: string;
}

/**
 * Replaces glossary terms (whole words, longest first) by placeholders ⟦0⟧, ⟦1⟧… before the text
 * goes to the engine; `restore` puts each term's fixed translation back in the engine's answer.
 */
export function protectTerms(text: string, terms: GlossaryTerm[], pattern: RegExp | undefined): { text: string; restore: (translated: string) => string } {
  if (!pattern || !terms.length) return { text, restore: (t) => t };
  const found: string[] = [];
  const byTerm = new Map(terms.map((t) => [t.source, t.target]));
  const protectedText = text.replace(pattern, (whole, before: string, term: string) => {
    found.push(byTerm.get(term) ?? term);
    return `${before}⟦${found.length - 1}⟧`;
  });
  if (!found.length) return { text, restore: (t) => t };
  return {
    text: protectedText,
    restore: (translated) => translated.replace(/⟦(\d+)⟧/g, (whole, n: string) => found[Number(n)] ?? whole),
  };
}

/** One pattern for all the terms of a run: whole words, longest term first. */
export function termPattern(terms: GlossaryTerm[]): RegExp | undefined {
  if (!terms.length) return undefined;
  const escaped = [...terms].sort((a, b) => b.source.length - a.source.length).map((t) => t.source.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'));
  return new RegExp(`(^|[^\\p{L}\\p{N}_])(${escaped.join('|')})(?![\\p{L}\\p{N}_])`, 'gu');
}

/** Words of a text, as counted for the stats. */
export function wordCount(text: string): number {
  return text.split(/\s+/).filter((w) => /[\p{L}\p{N}]/u.test(w)).length;
}
