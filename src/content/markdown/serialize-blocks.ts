import type { DocumentBlockCode, DocumentBlockImage, DocumentBlockImages, DocumentFragment } from '@gitbook/api';
import type * as md from 'mdast';
import { type Block, type InlineOrText, urlFromRef } from './shared.ts';
import { escapeAttr, liquidTag } from './tags.ts';
import { type Notes, html, imgTag, inlineMarkdown, lengthText, phrasing, textOf } from './serialize-inline.ts';
import { htmlTable, isPipeTable, pipeTable } from './serialize-tables.ts';

/** Blocks: paragraphs, headings, lists, code, images and GitBook's containers, written as tags or HTML. */

/** A code line's text in `<pre>`: GitBook escapes `&` and `<` (so no tag or reference can open). */
const preText = (text: string) => text.replace(/&/g, '&#x26;').replace(/</g, '&#x3C;');

/**
 * A code block with highlighted lines, the way GitBook writes one: `<pre>` with the options as
 * `data-` attributes, every line followed by its newline, a highlighted line (newline included)
 * in `<strong>`.
 */
function preCode(block: DocumentBlockCode): md.Html {
  const { syntax, title, overflow, lineNumbers, fullWidth, expandable, collapsedLineCount } = block.data;
  const attrs: string[] = syntax ? [`class="language-${escapeAttr(syntax)}"`] : [];
  if (title) attrs.push(`data-title="${escapeAttr(title)}"`);
  if (overflow === 'wrap') attrs.push('data-overflow="wrap"');
  if (lineNumbers) attrs.push('data-line-numbers');
  if (fullWidth) attrs.push('data-full-width="true"');
  if (expandable) attrs.push('data-expandable="true"');
  if (collapsedLineCount !== undefined) attrs.push(`data-collapsed-line-count="${collapsedLineCount}"`);
  const lines = block.nodes.map((line) => {
    const text = `${preText(textOf(line.nodes))}\n`;
    return line.data?.highlighted ? `<strong>${text}</strong>` : text;
  });
  const code = syntax ? `<code class="lang-${escapeAttr(syntax)}">` : '<code>';
  return html(`<pre${attrs.map((a) => ` ${a}`).join('')}>${code}${lines.join('')}</code></pre>`);
}

function codeBlock(block: DocumentBlockCode): md.RootContent[] {
  if (block.nodes.some((line) => line.data?.highlighted)) return [preCode(block)];
  const value = block.nodes.map((line) => textOf(line.nodes)).join('\n');
  const code: md.Code = { type: 'code', lang: block.data.syntax || null, meta: null, value };
  const { title, lineNumbers, overflow, fullWidth, expandable, collapsedLineCount } = block.data;
  const attrs = {
    title: title || undefined,
    overflow: overflow === 'wrap' ? 'wrap' : undefined,
    lineNumbers: lineNumbers ? 'true' : undefined,
    fullWidth: fullWidth !== undefined ? String(fullWidth) : undefined,
    expandable: expandable ? 'true' : undefined,
    collapsedLineCount: collapsedLineCount !== undefined ? String(collapsedLineCount) : undefined,
  };
  if (Object.values(attrs).every((v) => v === undefined)) return [code];
  return tagged(liquidTag('code', attrs), 'code', [code]);
}

export function captionNodes(fragments: readonly DocumentFragment[] | undefined): InlineOrText[] | null {
  const caption = fragments?.find((f) => f.fragment === 'caption');
  const first = caption?.nodes[0] as { nodes?: InlineOrText[] } | undefined;
  return first?.nodes ?? null;
}

function figure(image: DocumentBlockImage, notes: Notes): string {
  const caption = captionNodes(image.fragments);
  const text = caption ? inlineMarkdown(caption, notes, { emojiSpans: true }) : '';
  return `<figure>${imgTag(image.data)}<figcaption>${text ? `<p>${text}</p>` : ''}</figcaption></figure>`;
}

function imagesBlock(node: DocumentBlockImages, notes: Notes): md.RootContent[] {
  if (node.nodes.length === 0) return [];
  const { align, fullWidth, withFrame } = node.data;
  // Always figures, as GitBook writes block images; several side by side are separated by a space.
  const figures = node.nodes.map((image) => figure(image, notes)).join(' ');
  const attrs = [align ? `align="${align}"` : '', fullWidth !== undefined ? `data-full-width="${fullWidth}"` : '', withFrame ? 'data-with-frame="true"' : ''].filter(Boolean);
  return [html(attrs.length > 0 || node.nodes.length > 1 ? `<div${attrs.map((a) => ` ${a}`).join('')}>${figures}</div>` : figures)];
}

function listItemChildren(nodes: Block[], notes: Notes): md.BlockContent[] {
  const children = blocks(nodes, notes) as md.BlockContent[];
  // An empty item is written `- <br>` (which reads back empty): a bare `-` can turn into something
  // else, and a checkbox needs text after it.
  const first = nodes[0];
  if (first?.type === 'paragraph') {
    const lead = children[0];
    if (lead?.type === 'paragraph' && lead.children.length === 0) children.shift();
    if (children[0]?.type !== 'paragraph' || children[0] !== lead) children.unshift({ type: 'paragraph', children: [html('<br>')] });
  }
  return children;
}

export function blocks(nodes: readonly Block[], notes: Notes): md.RootContent[] {
  return nodes.flatMap((node) => block(node, notes));
}

/** A container written as an opening tag, its content and the closing tag. */
function tagged(open: string, name: string, children: md.RootContent[]): md.RootContent[] {
  const tag = (value: string, side: 'open' | 'close'): md.Html => ({ type: 'html', value, data: { tag: side } as md.Data });
  return [tag(open, 'open'), ...children, tag(`{% end${name} %}`, 'close')];
}

const ALIGN_ATTR: Record<string, string> = { start: 'left', center: 'center', end: 'right' };

function block(node: Block, notes: Notes): md.RootContent[] {
  switch (node.type) {
    case 'paragraph': {
      if (node.data?.align) {
        const inner = inlineMarkdown(node.nodes, notes);
        return [html(`<p align="${ALIGN_ATTR[node.data.align]}">${inner}</p>`)];
      }
      const children = phrasing(node.nodes, notes);
      // An empty paragraph is an empty line between blank ones, as GitBook writes it (parse-reader reads it back).
      return [{ type: 'paragraph', children }];
    }
    case 'heading-1':
    case 'heading-2':
    case 'heading-3': {
      // One level below the page title, as GitBook writes them: heading-1 is `##` (see headingType).
      const depth = (Number(node.type.slice(-1)) + 1) as 2 | 3 | 4;
      const anchor = node.data.id ? `<a href="#${node.data.id}" id="${node.data.id}"></a>` : '';
      if (node.data.align) {
        const inner = inlineMarkdown(node.nodes, notes).replace(/<br>/g, ' ');
        return [html(`<h${depth} align="${ALIGN_ATTR[node.data.align]}">${inner}${anchor ? ` ${anchor}` : ''}</h${depth}>`)];
      }
      const children = phrasing(node.nodes, notes, { inHeading: true });
      if (anchor) children.push({ type: 'text', value: ' ' }, html(anchor));
      return [{ type: 'heading', depth, children }];
    }
    case 'list-ordered':
    case 'list-unordered':
    case 'list-tasks': {
      const start = node.type === 'list-ordered' ? (node.data.start ?? 1) : null;
      return [
        {
          type: 'list',
          ordered: node.type === 'list-ordered',
          start,
          spread: false,
          children: node.nodes.map(
            (item): md.ListItem => ({
              type: 'listItem',
              // As GitBook writes items: one holding several blocks besides nested lists is "spread"
              // (blank lines between its blocks, content indented to the next tab stop); items are
              // never separated by blank lines.
              spread: (item.nodes as Block[]).filter((b) => !b.type.startsWith('list-')).length > 1,
              checked: node.type === 'list-tasks' ? item.data?.checked === true : null,
              children: listItemChildren(item.nodes as Block[], notes),
            }),
          ),
        },
      ];
    }
    case 'list-item':
      return blocks(node.nodes as Block[], notes);
    case 'divider':
      return [{ type: 'thematicBreak' }];
    case 'blockquote':
      return [{ type: 'blockquote', children: blocks(node.nodes as Block[], notes) as md.BlockContent[] }];
    case 'hint':
      return tagged(liquidTag('hint', { style: node.data.style, icon: node.data.icon }), 'hint', blocks(node.nodes as Block[], notes));
    case 'code':
      return codeBlock(node);
    case 'math': {
      // One-line formulas stay on one line so they can open a list item (a task's checkbox needs text
      // after it). Not one with a backtick: on one line, `$$` around a code span is read as text.
      const { formula } = node.data;
      if (!formula.includes('\n') && !formula.includes('`') && formula.trim() !== '') return [{ type: 'paragraph', children: [html(`$$${formula}$$`)] }];
      return [html(`$$\n${formula}\n$$`)];
    }
    case 'images':
      return imagesBlock(node, notes);
    case 'image':
      return [html(figure(node, notes))];
    case 'table':
      return isPipeTable(node) ? [pipeTable(node, notes)] : [html(htmlTable(node, notes))];
    case 'embed': {
      const open = liquidTag('embed', { url: node.data.url, fullWidth: node.data.fullWidth !== undefined ? String(node.data.fullWidth) : undefined });
      const caption = captionNodes((node as { fragments?: DocumentFragment[] }).fragments);
      const children = caption ? phrasing(caption, notes) : [];
      return children.length > 0 ? tagged(open, 'embed', [{ type: 'paragraph', children }]) : [html(open)];
    }
    case 'file': {
      const caption = captionNodes((node as { fragments?: DocumentFragment[] }).fragments);
      const children = caption ? phrasing(caption, notes) : [];
      const open = liquidTag('file', { src: urlFromRef(node.data.ref) });
      return children.length > 0 ? tagged(open, 'file', [{ type: 'paragraph', children }]) : [html(open)];
    }
    case 'drawing':
      // As GitBook writes a drawing today (`{% drawing %}` is still read).
      return node.data.ref ? [html(`<img src="${escapeAttr(urlFromRef(node.data.ref))}" alt="" class="gitbook-drawing">`)] : [];
    case 'content-ref': {
      const url = urlFromRef(node.data.ref);
      const link: md.Link = { type: 'link', url, title: null, children: [{ type: 'text', value: url }] };
      return tagged(liquidTag('content-ref', { url }), 'content-ref', [{ type: 'paragraph', children: [link] }]);
    }
    case 'reusable-content':
      return [html(liquidTag('include', {}, [`.gitbook/includes/${node.data.ref.reusableContent}.md`]))];
    case 'swagger': {
      const { ref, path, method, expanded, fullWidth } = node.data;
      const src = urlFromRef(ref);
      const attrs = { src, path, method, expanded: expanded ? 'true' : undefined, fullWidth: fullWidth ? 'true' : undefined };
      const link: md.Link = { type: 'link', url: src, title: null, children: [{ type: 'text', value: src }] };
      return tagged(liquidTag('openapi', attrs), 'openapi', [{ type: 'paragraph', children: [link] }]);
    }
    case 'openapi-operation':
      return tagged(liquidTag('openapi-operation', { spec: node.data.ref.spec, path: node.data.path, method: node.data.method }), 'openapi-operation', []);
    case 'openapi-schemas': {
      const { ref, schemas, grouped, title } = node.data;
      const attrs = { spec: ref.spec, schemas: schemas.join(','), grouped: grouped === undefined ? undefined : String(grouped), title };
      return tagged(liquidTag('openapi-schemas', attrs), 'openapi-schemas', []);
    }
    case 'openapi-webhook':
      return tagged(liquidTag('openapi-webhook', { spec: node.data.ref.spec, name: node.data.name, method: node.data.method }), 'openapi-webhook', []);
    case 'integration': {
      const props: Record<string, string> = {};
      for (const [key, value] of Object.entries(node.data.props ?? {})) props[key] = typeof value === 'string' ? value : JSON.stringify(value);
      const name = node.data.block ? `@${node.data.integration}/${node.data.block}` : `@${node.data.integration}`;
      return [html(liquidTag(name, props))];
    }
    case 'tabs':
      return tagged(
        '{% tabs %}',
        'tabs',
        node.nodes.flatMap((tab) => tagged(liquidTag('tab', { title: tab.data.title ?? '', icon: tab.data.icon }), 'tab', blocks(tab.nodes as Block[], notes))),
      );
    case 'stepper':
      return tagged(
        '{% stepper %}',
        'stepper',
        node.nodes.flatMap((step) => tagged(liquidTag('step', { icon: step.data.icon }), 'step', blocks(step.nodes as Block[], notes))),
      );
    case 'columns':
      return tagged(
        liquidTag('columns', { fullWidth: node.data.fullWidth ? 'true' : undefined }),
        'columns',
        node.nodes.flatMap((column) =>
          tagged(
            liquidTag('column', {
              width: column.data.width === undefined ? undefined : lengthText(column.data.width),
              valign: column.data.verticalAlignment,
            }),
            'column',
            blocks(column.nodes as Block[], notes),
          ),
        ),
      );
    case 'updates':
      return tagged(
        liquidTag('updates', { format: node.data.format }),
        'updates',
        node.nodes.flatMap((update) => {
          const date = update.data.date.endsWith('T00:00:00.000Z') ? update.data.date.slice(0, 10) : update.data.date;
          const tags = update.data.tags && update.data.tags.length > 0 ? update.data.tags.map((t) => t.tag).join(',') : undefined;
          return tagged(liquidTag('update', { date, tags }), 'update', blocks(update.nodes as Block[], notes));
        }),
      );
    case 'if': {
      const expression = node.data.expression;
      // The bare form GitBook writes, unless the expression could be mistaken for attributes.
      const bare = expression !== '' && !expression.includes('%}') && !/^condition\s*=/.test(expression) && !/^['"]/.test(expression);
      return tagged(bare ? `{% if ${expression} %}` : liquidTag('if', { condition: expression }), 'if', blocks(node.nodes as Block[], notes));
    }
    case 'prompt': {
      const { description, icon, openInAIProviders, defaultExpanded } = node.data;
      const attrs = {
        description,
        icon,
        openInAIProviders: openInAIProviders === undefined ? undefined : String(openInAIProviders),
        defaultExpanded,
      };
      return tagged(liquidTag('prompt', attrs), 'prompt', blocks(node.nodes as Block[], notes));
    }
    case 'expandable': {
      const title = node.fragments.find((f) => f.fragment === 'expandable-title');
      const body = node.fragments.find((f) => f.fragment === 'expandable-body');
      const titleNodes = ((title?.nodes[0] as { nodes?: InlineOrText[] } | undefined)?.nodes ?? []) as InlineOrText[];
      return [
        html(node.data.defaultExpanded ? '<details open>' : '<details>'),
        html(`<summary>${inlineMarkdown(titleNodes, notes)}</summary>`),
        ...blocks((body?.nodes ?? []) as Block[], notes),
        html('</details>'),
      ];
    }
    default: {
      // Blocks without a markdown form keep their content.
      const loose = node as { nodes?: unknown[]; fragments?: DocumentFragment[] };
      const children = (loose.nodes ?? []) as { object?: string }[];
      const out: md.RootContent[] = [];
      for (const fragment of loose.fragments ?? []) out.push(...blocks(fragment.nodes, notes));
      if (children.some((c) => c.object === 'block')) out.push(...blocks(children as Block[], notes));
      else if (children.length > 0) {
        const inline = phrasing(children as InlineOrText[], notes);
        if (inline.length > 0) out.push({ type: 'paragraph', children: inline });
      }
      return out;
    }
  }
}
