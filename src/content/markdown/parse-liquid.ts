import type {
  DocumentBlockCode,
  DocumentBlockColumn,
  DocumentBlockColumns,
  DocumentBlockEmbed,
  DocumentBlockFile,
  DocumentBlockHint,
  DocumentBlockIf,
  DocumentBlockOpenAPI,
  DocumentBlockOpenAPISchemas,
  DocumentBlockPrompt,
  DocumentBlockStepperStep,
  DocumentBlockTabsItem,
  DocumentBlockUpdate,
  DocumentFragment,
  VerticalAlignment,
} from '@gitbook/api';
import type * as md from 'mdast';
import { type Block, type HintStyle, HINT_STYLES, refFromUrl } from './shared.ts';
import type { LiquidTag } from './tags.ts';
import { IN_COLUMN, IN_HINT, IN_STEP, IN_TAB, IN_UPDATE, TOP_LEVEL } from './parse-containers.ts';
import { codeBlock, isTrue, linkParagraph, parseLength, voidBlock } from './parse-nodes.ts';
import type { Reader } from './parse-reader.ts';

/**
 * GitBook's `{% %}` block tags: hints, code attributes, tabs, steppers, columns, updates,
 * conditions, prompts, embeds, files, includes, OpenAPI and integration blocks.
 */

/** GitBook's Liquid block tags; `@owner/block` integration tags are recognised by their `@`. */
export const BLOCK_TAGS = new Set([
  'hint', 'code', 'embed', 'tabs', 'tab', 'stepper', 'step', 'columns', 'column', 'updates', 'update', 'if',
  'prompt', 'content-ref', 'file', 'include', 'openapi', 'swagger', 'openapi-operation', 'openapi-schemas',
  'openapi-webhook', 'drawing',
]);

export function knownTag(tag: LiquidTag | null): tag is LiquidTag {
  return tag !== null && (BLOCK_TAGS.has(tag.name) || (tag.name.startsWith('@') && !tag.end));
}

/** A date as the schema's date-time: a bare `YYYY-MM-DD` is midnight UTC. */
function timestamp(date: string): string {
  return /^\d{4}-\d{2}-\d{2}$/.test(date) ? `${date}T00:00:00.000Z` : date;
}

/** `.gitbook/includes/name.md` (with any `../`) → `name`. */
function includeId(path: string): string {
  let p = path.trim();
  while (p.startsWith('../') || p.startsWith('./')) p = p.slice(p.indexOf('/') + 1);
  if (p.startsWith('/')) p = p.slice(1);
  if (p.startsWith('.gitbook/includes/')) p = p.slice('.gitbook/includes/'.length);
  return p.endsWith('.md') ? p.slice(0, -3) : p;
}

/** Items of a list container (`{% tabs %}` → `{% tab %}`…): content outside any item is kept after it. */
function tagItems(r: Reader, inner: md.RootContent[], name: string, make: (tag: LiquidTag, body: md.RootContent[]) => Block): { items: Block[]; stray: md.RootContent[] } {
  const pairs = r.pairs(inner);
  const items: Block[] = [];
  const stray: md.RootContent[] = [];
  for (let j = 0; j < inner.length; j++) {
    const tag = r.liquidTag(inner[j]);
    const end = pairs.get(j);
    if (tag && !tag.end && tag.name === name && end !== undefined) {
      items.push(make(tag, inner.slice(j + 1, end)));
      j = end;
    } else stray.push(inner[j]!);
  }
  return { items, stray };
}

/** The block(s) a Liquid tag stands for; null when the tag is not complete (it then stays text). */
export function tagBlock(r: Reader, tag: LiquidTag, inner: md.RootContent[], closed: boolean, allowed: Set<string>): Block[] | null {
  const a = tag.attrs;
  const wrap = (block: Block, stray: md.RootContent[] = []) => [block, ...(stray.length > 0 ? r.flow(stray, allowed) : [])];
  switch (tag.name) {
    case 'hint': {
      if (!closed) return null;
      const style = (HINT_STYLES as readonly string[]).includes(a.style ?? '') ? (a.style as HintStyle) : 'info';
      const data: DocumentBlockHint['data'] = { style };
      if (a.icon) data.icon = a.icon;
      return [{ object: 'block', type: 'hint', data, nodes: r.flow(inner, IN_HINT) as DocumentBlockHint['nodes'] }];
    }
    case 'code':
      if (!closed) return null;
      return r.flow(inner, allowed).map((b) => (b.type === 'code' ? withCodeAttrs(b, a) : b));
    case 'tabs': {
      if (!closed) return null;
      const { items, stray } = tagItems(r, inner, 'tab', (t, body) => {
        const data: DocumentBlockTabsItem['data'] = { title: t.attrs.title ?? '' };
        if (t.attrs.icon) data.icon = t.attrs.icon;
        return { object: 'block', type: 'tabs-item', data, nodes: r.flow(body, IN_TAB) as DocumentBlockTabsItem['nodes'] };
      });
      return wrap({ object: 'block', type: 'tabs', data: {}, nodes: items as DocumentBlockTabsItem[] }, stray);
    }
    case 'stepper': {
      if (!closed) return null;
      const { items, stray } = tagItems(r, inner, 'step', (t, body) => ({
        object: 'block',
        type: 'stepper-step',
        data: t.attrs.icon ? { icon: t.attrs.icon } : {},
        nodes: r.flow(body, IN_STEP) as DocumentBlockStepperStep['nodes'],
      }));
      return wrap({ object: 'block', type: 'stepper', data: {}, nodes: items as DocumentBlockStepperStep[] }, stray);
    }
    case 'columns': {
      if (!closed) return null;
      const { items, stray } = tagItems(r, inner, 'column', (t, body) => {
        const data: DocumentBlockColumn['data'] = {};
        const width = parseLength(t.attrs.width);
        if (width !== undefined) data.width = width;
        const valign = t.attrs.valign;
        if (valign === 'top' || valign === 'middle' || valign === 'bottom') data.verticalAlignment = valign as VerticalAlignment;
        return { object: 'block', type: 'column', data, nodes: r.flow(body, IN_COLUMN) as DocumentBlockColumn['nodes'] };
      });
      const data: DocumentBlockColumns['data'] = isTrue(a.fullWidth) ? { fullWidth: true } : {};
      return wrap({ object: 'block', type: 'columns', data, nodes: items as DocumentBlockColumn[], isVoid: false }, stray);
    }
    case 'updates': {
      if (!closed) return null;
      const { items, stray } = tagItems(r, inner, 'update', (t, body) => {
        const data: DocumentBlockUpdate['data'] = { date: timestamp(t.attrs.date ?? '1970-01-01') };
        const tags = (t.attrs.tags ?? '').split(',').map((x) => x.trim()).filter(Boolean);
        if (tags.length > 0) data.tags = tags.map((x) => ({ kind: 'tag', tag: x }));
        return { object: 'block', type: 'update', data, nodes: r.flow(body, IN_UPDATE) as DocumentBlockUpdate['nodes'] };
      });
      const format = a.format === 'numeric' || a.format === 'short' ? a.format : 'full';
      return wrap({ object: 'block', type: 'updates', data: { format }, nodes: items as DocumentBlockUpdate[] }, stray);
    }
    case 'if': {
      if (!closed) return null;
      const expression = a.condition ?? tag.rest;
      return [{ object: 'block', type: 'if', data: { expression }, nodes: r.flow(inner, TOP_LEVEL) as DocumentBlockIf['nodes'] }];
    }
    case 'prompt': {
      if (!closed) return null;
      const blocks = r.flow(inner, TOP_LEVEL);
      const code = blocks.find((b): b is DocumentBlockCode => b.type === 'code') ?? codeBlock(blocksPlain(blocks), {});
      const data = { description: a.description ?? '' } as DocumentBlockPrompt['data'];
      if (a.icon) data.icon = a.icon;
      if (a.openInAIProviders !== undefined) data.openInAIProviders = isTrue(a.openInAIProviders);
      if (a.defaultExpanded === 'hidden' || a.defaultExpanded === 'partial' || a.defaultExpanded === 'full') data.defaultExpanded = a.defaultExpanded;
      return [{ object: 'block', type: 'prompt', data, nodes: [code] }];
    }
    case 'content-ref':
      if (!closed && a.url === undefined) return null;
      return voidBlock('content-ref', { ref: refFromUrl(a.url ?? '') });
    case 'embed': {
      const url = a.url ?? tag.args[0];
      if (url === undefined) return null;
      const block: DocumentBlockEmbed = { object: 'block', type: 'embed', data: { url }, isVoid: true };
      if (isTrue(a.fullWidth)) block.data.fullWidth = true;
      else if (a.fullWidth === 'false') block.data.fullWidth = false;
      const caption = captionFragment(r, inner);
      if (caption) (block as { fragments?: DocumentFragment[] }).fragments = [caption];
      return [block];
    }
    case 'file': {
      const src = a.src ?? tag.args[0] ?? '';
      const ref = refFromUrl(src);
      if (ref.kind !== 'file') return [linkParagraph(ref, src)];
      const block: DocumentBlockFile = { object: 'block', type: 'file', data: { ref }, isVoid: true };
      const caption = captionFragment(r, inner);
      if (caption) (block as { fragments?: DocumentFragment[] }).fragments = [caption];
      return [block];
    }
    case 'drawing': {
      const ref = a.src === undefined ? undefined : refFromUrl(a.src);
      return voidBlock('drawing', ref?.kind === 'file' ? { ref } : {});
    }
    case 'include': {
      const path = tag.args[0] ?? a.src;
      if (path === undefined) return null;
      return voidBlock('reusable-content', { ref: { kind: 'reusable-content', reusableContent: includeId(path) } });
    }
    case 'openapi':
    case 'swagger': {
      const src = a.src ?? '';
      const ref = refFromUrl(src);
      const data: DocumentBlockOpenAPI['data'] = { ref: ref.kind === 'file' ? ref : { kind: 'url', url: src }, path: a.path ?? '', method: a.method ?? '' };
      if (isTrue(a.expanded)) data.expanded = true;
      if (isTrue(a.fullWidth)) data.fullWidth = true;
      return voidBlock('swagger', data);
    }
    case 'openapi-operation':
      return voidBlock('openapi-operation', { ref: { kind: 'openapi', spec: a.spec ?? '' }, path: a.path ?? '', method: a.method ?? '' });
    case 'openapi-schemas': {
      const schemas = (a.schemas ?? '').split(',').map((x) => x.trim()).filter(Boolean);
      const data: DocumentBlockOpenAPISchemas['data'] = { ref: { kind: 'openapi', spec: a.spec ?? '' }, schemas };
      if (a.grouped !== undefined) data.grouped = isTrue(a.grouped);
      if (a.title !== undefined) data.title = a.title;
      return voidBlock('openapi-schemas', data);
    }
    case 'openapi-webhook':
      return voidBlock('openapi-webhook', { ref: { kind: 'openapi', spec: a.spec ?? '' }, name: a.name ?? '', method: a.method ?? '' });
    default: {
      if (!tag.name.startsWith('@')) return null;
      const slash = tag.name.indexOf('/');
      const integration = slash > 0 ? tag.name.slice(1, slash) : tag.name.slice(1);
      const block = slash > 0 ? tag.name.slice(slash + 1) : '';
      return voidBlock('integration', { integration, block, props: { ...a } });
    }
  }
}

/** The caption written between a void tag and its end tag (`{% embed %}caption{% endembed %}`). */
function captionFragment(r: Reader, inner: md.RootContent[]): DocumentFragment | null {
  const blocks = r.flow(inner, new Set(['paragraph'])).filter((b) => b.type === 'paragraph');
  if (blocks.length === 0) return null;
  return { object: 'fragment', fragment: 'caption', nodes: blocks };
}

function withCodeAttrs(block: DocumentBlockCode, attrs: Record<string, string>): DocumentBlockCode {
  const data = { ...block.data };
  if (attrs.title) data.title = attrs.title;
  if (attrs.lineNumbers === 'true') data.lineNumbers = true;
  if (attrs.overflow === 'wrap') data.overflow = 'wrap';
  // An explicit `false` is kept: GitBook writes it for a block switched back from full width.
  if (attrs.fullWidth === 'true' || attrs.fullWidth === 'false') data.fullWidth = attrs.fullWidth === 'true';
  if (attrs.expandable === 'true') data.expandable = true;
  const collapsed = Number(attrs.collapsedLineCount);
  if (Number.isInteger(collapsed) && collapsed >= 1) data.collapsedLineCount = collapsed;
  return { ...block, data };
}

function blocksPlain(blocks: Block[]): string {
  const lines: string[] = [];
  const visit = (nodes: unknown[]) => {
    for (const n of nodes as { object: string; nodes?: unknown[]; leaves?: { text: string }[] }[]) {
      if (n.object === 'text') lines.push((n.leaves ?? []).map((l) => l.text).join(''));
      else visit(n.nodes ?? []);
    }
  };
  visit(blocks);
  return lines.join('\n');
}
