import hljs from 'highlight.js';
import katex from 'katex';
import type { ContentRef, DocumentFragment } from '@gitbook/api';
import { captionNodes } from '../content/markdown/serialize-blocks.ts';
import { fragmentOf, sortedRecords } from '../content/markdown/serialize-tables.ts';
import { emoji, type GitBookDocument } from '../content/markdown/shared.ts';
import { anchorSlug } from '../content/markdown/text.ts';

/**
 * A GitBook document as HTML for readers of a published site.
 *
 * Safety comes from the construction: the document model has no raw HTML, every text and attribute
 * is escaped here, URLs pass `safeUrl` (http, https, mailto, tel and in-site paths only), math is
 * rendered by KaTeX with `trust: false`, and code is highlighted by highlight.js, which escapes its
 * input. Nothing a page holds can add a script, an event handler or a `javascript:` URL.
 */

/** What rendering needs from around the document: where references lead, and the visitor's view. */
export interface RenderContext {
  /** URL of a page of the site (undefined when it is not published). */
  pageUrl(ref: { page: string; anchor?: string; space?: string }): string | undefined;
  /** A file of the space: its URL, name and type (undefined when missing). */
  file(id: string): { url: string; name: string; contentType: string; size: number } | undefined;
  /** Whether a condition holds for the visitor (`if` blocks); unknown expressions are false. */
  condition(expression: string): boolean;
  /** The value of a variable expression (`space.vars.x`), undefined when unknown. */
  expression(expression: string): string | undefined;
  /** HTML of an OpenAPI block, when the site has the specification (undefined otherwise). */
  openapi?(block: Node): string | undefined;
  /** Title of a page (for content references and mentions). */
  pageTitle?(pageId: string): string | undefined;
  /** HTML of an integration block, as its integration rendered it (undefined: a placeholder is shown). */
  integration?(block: Node): string | undefined;
  /**
   * Put before every id the page defines (headings, notes, tabs) and every link to them, so that
   * several pages rendered into one document (the PDF of a space) keep apart.
   */
  idPrefix?: string;
  /** Rendering for print: images are loaded at once rather than when scrolled to. */
  print?: boolean;
}

export interface Heading {
  id: string;
  level: 1 | 2 | 3;
  text: string;
}

export interface Rendered {
  html: string;
  /** Headings in order, for a table of contents. */
  headings: Heading[];
}

// The document model is a large union; the renderer reads it structurally.
// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Node = any;

export function escapeHtml(text: string): string {
  return text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;').replace(/'/g, '&#39;');
}

const SAFE_SCHEME = /^(?:https?:|mailto:|tel:)/i;

/** A URL safe in an href or src: http(s), mailto, tel, or a path within the site; anything else is dropped. */
export function safeUrl(url: string | undefined): string | undefined {
  if (!url) return undefined;
  const trimmed = url.trim();
  // Browsers ignore tabs and newlines inside schemes (`java\tscript:`): judge the URL without them.
  const compact = trimmed.replace(/[\u0000-\u0020]/g, '');
  if (SAFE_SCHEME.test(compact)) return trimmed;
  if (/^[a-z][a-z0-9+.-]*:/i.test(compact) || compact.startsWith('//') || compact.startsWith('\\')) return undefined;
  return trimmed;
}

const attr = (name: string, value: string | number | undefined) => (value === undefined ? '' : ` ${name}="${escapeHtml(String(value))}"`);

class Renderer {
  readonly headings: Heading[] = [];
  private readonly usedIds = new Set<string>();
  private annotations = 0;
  readonly notes: string[] = [];

  /** Added to a heading's level for its HTML tag: the top heading level used becomes h2 (the page title is h1). */
  headingShift = 1;

  private readonly prefix: string;
  private readonly loading: string;

  constructor(private readonly ctx: RenderContext) {
    this.prefix = ctx.idPrefix ?? '';
    this.loading = ctx.print ? '' : ' loading="lazy"';
  }

  /** The id of a note or its reference, as this document names it. */
  noteId(kind: 'note' | 'note-ref', n: number): string {
    return `${this.prefix}${kind}-${n}`;
  }

  refUrl(ref: ContentRef | undefined): string | undefined {
    if (!ref) return undefined;
    switch (ref.kind) {
      case 'url':
        return safeUrl(ref.url);
      case 'page':
        return this.ctx.pageUrl({ page: ref.page, ...(ref.space ? { space: ref.space } : {}) });
      case 'anchor':
        return ref.page ? this.ctx.pageUrl({ page: ref.page, anchor: ref.anchor, ...(ref.space ? { space: ref.space } : {}) }) : `#${encodeURIComponent(this.prefix + ref.anchor)}`;
      case 'file':
        return this.ctx.file(ref.file)?.url;
      default:
        return undefined;
    }
  }

  blocks(nodes: Node[] | undefined): string {
    return (nodes ?? []).map((n) => this.block(n)).join('');
  }

  fragment(node: Node, name: string): DocumentFragment | undefined {
    return (node.fragments as DocumentFragment[] | undefined)?.find((f) => f.fragment === name);
  }

  caption(node: Node): string {
    const nodes = captionNodes(node.fragments);
    return nodes ? this.inlines(nodes) : '';
  }

  headingId(node: Node, text: string): string {
    let id = this.prefix + ((node.data?.id as string | undefined) || anchorSlug(text) || 'section');
    if (this.usedIds.has(id)) {
      let i = 2;
      while (this.usedIds.has(`${id}-${i}`)) i++;
      id = `${id}-${i}`;
    }
    this.usedIds.add(id);
    return id;
  }

  block(node: Node): string {
    const align = node.data?.align && node.data.align !== 'start' ? ` style="text-align:${node.data.align === 'end' ? 'right' : escapeHtml(node.data.align)}"` : '';
    switch (node.type) {
      case 'paragraph':
        return `<p${align}>${this.inlines(node.nodes)}</p>`;
      case 'heading-1':
      case 'heading-2':
      case 'heading-3': {
        const level = Number(node.type.slice(-1)) as 1 | 2 | 3;
        const text = plainText(node);
        const id = this.headingId(node, text);
        this.headings.push({ id, level, text });
        // The page title is the h1: the body's top heading level is h2, and levels are never skipped.
        const tag = `h${Math.min(6, level + this.headingShift)}`;
        return `<${tag} id="${escapeHtml(id)}"${align}>${this.inlines(node.nodes)}<a class="anchor" href="#${escapeHtml(encodeURIComponent(id))}" aria-label="Link to this section">#</a></${tag}>`;
      }
      case 'list-unordered':
        return `<ul>${this.blocks(node.nodes)}</ul>`;
      case 'list-ordered':
        return `<ol${attr('start', node.data?.start)}>${this.blocks(node.nodes)}</ol>`;
      case 'list-tasks':
        return `<ul class="tasks">${this.blocks(node.nodes)}</ul>`;
      case 'list-item': {
        const box = node.data?.checked !== undefined ? `<input type="checkbox" disabled${node.data.checked ? ' checked' : ''} aria-label="${node.data.checked ? 'done' : 'to do'}"> ` : '';
        return `<li>${box}${this.blocks(node.nodes)}</li>`;
      }
      case 'divider':
        return '<hr>';
      case 'blockquote':
        return `<blockquote>${this.blocks(node.nodes)}</blockquote>`;
      case 'hint': {
        const style = ['info', 'warning', 'danger', 'success'].includes(node.data?.style) ? node.data.style : 'info';
        return `<div class="hint hint-${style}" role="note"><span class="hint-label">${style}</span>${this.blocks(node.nodes)}</div>`;
      }
      case 'code':
        return this.code(node);
      case 'math':
        return `<div class="math">${katex.renderToString(String(node.data?.formula ?? ''), { displayMode: true, throwOnError: false, trust: false, output: 'htmlAndMathml' })}</div>`;
      case 'images':
        return `<div class="images${node.data?.fullWidth ? ' full-width' : ''}${node.data?.withFrame ? ' framed' : ''}"${align}>${this.blocks(node.nodes)}</div>`;
      case 'image':
        return this.image(node);
      case 'drawing': {
        const src = this.refUrl(node.data?.ref);
        return src ? `<figure class="drawing"><img src="${escapeHtml(src)}" alt="Drawing"${this.loading}></figure>` : '';
      }
      case 'file': {
        const file = node.data?.ref?.kind === 'file' ? this.ctx.file(node.data.ref.file) : undefined;
        const url = file?.url ?? this.refUrl(node.data?.ref);
        if (!url) return '';
        const caption = this.caption(node);
        const name = file?.name ?? url;
        return `<div class="file"><a href="${escapeHtml(url)}" download="${escapeHtml(name)}">${escapeHtml(name)}</a>${file ? ` <span class="file-size">${formatSize(file.size)}</span>` : ''}${caption ? `<p>${caption}</p>` : ''}</div>`;
      }
      case 'embed': {
        const url = safeUrl(node.data?.url);
        if (!url) return '';
        const caption = this.caption(node);
        return `<figure class="embed"><a href="${escapeHtml(url)}" rel="noopener nofollow" target="_blank">${escapeHtml(url)}</a>${caption ? `<figcaption>${caption}</figcaption>` : ''}</figure>`;
      }
      case 'expandable': {
        const title = this.fragment(node, 'expandable-title');
        const body = this.fragment(node, 'expandable-body');
        const summary = (title?.nodes ?? []).map((n: Node) => this.inlines(n.nodes)).join(' ');
        return `<details class="expandable"${node.data?.defaultExpanded ? ' open' : ''}><summary>${summary}</summary>${this.blocks(body?.nodes)}</details>`;
      }
      case 'tabs': {
        const items = (node.nodes ?? []) as Node[];
        const base = escapeHtml(this.prefix + (node.key ?? 'tabs'));
        const tabs = items
          .map((item, i) => `<button type="button" role="tab" id="${base}-tab-${i}" aria-controls="${base}-panel-${i}" aria-selected="${i === 0}"${i === 0 ? '' : ' tabindex="-1"'}>${escapeHtml(String(item.data?.title ?? `Tab ${i + 1}`))}</button>`)
          .join('');
        const panels = items
          .map((item, i) => `<section role="tabpanel" id="${base}-panel-${i}" aria-labelledby="${base}-tab-${i}" data-title="${escapeHtml(String(item.data?.title ?? ''))}"${i === 0 ? '' : ' data-inactive'}>${this.blocks(item.nodes)}</section>`)
          .join('');
        return `<div class="tabs"><div role="tablist">${tabs}</div>${panels}</div>`;
      }
      case 'tabs-item':
        return `<section>${this.blocks(node.nodes)}</section>`;
      case 'stepper':
        return `<ol class="stepper">${this.blocks(node.nodes)}</ol>`;
      case 'stepper-step':
        return `<li class="step">${this.blocks(node.nodes)}</li>`;
      case 'columns':
        return `<div class="columns">${this.blocks(node.nodes)}</div>`;
      case 'column': {
        const width = node.data?.width?.value;
        return `<div class="column"${typeof width === 'number' ? ` style="flex-basis:${Math.max(0, Math.min(100, width))}%"` : ''}>${this.blocks(node.nodes)}</div>`;
      }
      case 'updates':
        return `<div class="updates">${this.blocks(node.nodes)}</div>`;
      case 'update': {
        const date = typeof node.data?.date === 'string' ? node.data.date : '';
        const tags = ((node.data?.tags ?? []) as { tag?: string }[]).map((t) => `<span class="tag">${escapeHtml(t.tag ?? '')}</span>`).join('');
        return `<article class="update">${date ? `<time datetime="${escapeHtml(date)}">${escapeHtml(date.slice(0, 10))}</time>` : ''}${tags}${this.blocks(node.nodes)}</article>`;
      }
      case 'if':
        return this.ctx.condition(String(node.data?.expression ?? '')) ? this.blocks(node.nodes) : '';
      case 'prompt':
        return `<div class="prompt"><p class="prompt-description">${escapeHtml(String(node.data?.description ?? ''))}</p>${this.blocks(node.nodes)}</div>`;
      case 'table':
        return this.table(node);
      case 'content-ref': {
        const url = this.refUrl(node.data?.ref);
        if (!url) return '';
        const title = node.data?.ref?.kind === 'page' ? this.ctx.pageTitle?.(node.data.ref.page) : undefined;
        return `<a class="content-ref" href="${escapeHtml(url)}">${escapeHtml(title ?? url)}</a>`;
      }
      case 'swagger':
      case 'openapi-operation':
      case 'openapi-schemas':
      case 'openapi-webhook': {
        const html = this.ctx.openapi?.(node);
        if (html !== undefined) return html;
        const what = node.type === 'openapi-schemas' ? (node.data?.schemas ?? []).join(', ') : `${String(node.data?.method ?? '').toUpperCase()} ${node.data?.path ?? node.data?.name ?? ''}`;
        return `<div class="openapi"><code>${escapeHtml(what)}</code></div>`;
      }
      case 'integration': {
        const html = this.ctx.integration?.(node);
        if (html !== undefined) return html;
        return `<div class="integration" data-integration="${escapeHtml(String(node.data?.integration ?? ''))}">${escapeHtml(String(node.data?.integration ?? 'integration'))} block</div>`;
      }
      case 'reusable-content':
        // Reusable contents are expanded before rendering (dereferenced reads); one left is missing.
        return '';
      default:
        return node.nodes ? this.blocks(node.nodes) : '';
    }
  }

  code(node: Node): string {
    const lines = ((node.nodes ?? []) as Node[]).map((line) => plainText(line));
    const text = lines.join('\n');
    const syntax = String(node.data?.syntax ?? '');
    let highlighted: string;
    try {
      highlighted = syntax && hljs.getLanguage(syntax) ? hljs.highlight(text, { language: syntax, ignoreIllegals: true }).value : escapeHtml(text);
    } catch {
      highlighted = escapeHtml(text);
    }
    const title = node.data?.title ? `<div class="code-title">${escapeHtml(String(node.data.title))}</div>` : '';
    const classes = ['code', node.data?.lineNumbers ? 'line-numbers' : '', node.data?.overflow === 'wrap' ? 'wrap' : ''].filter(Boolean).join(' ');
    return `<div class="${classes}">${title}<pre><code${syntax ? ` class="language-${escapeHtml(syntax)}"` : ''}>${highlighted}</code></pre><button type="button" class="copy" data-copy hidden>Copy</button></div>`;
  }

  image(node: Node): string {
    const src = this.refUrl(node.data?.ref);
    if (!src) return '';
    const dark = this.refUrl(node.data?.refDark);
    const alt = escapeHtml(String(node.data?.alt ?? ''));
    const size = `${attr('width', node.data?.width)}${attr('height', node.data?.height)}`;
    const img = `<img src="${escapeHtml(src)}" alt="${alt}"${size}${this.loading}>`;
    const picture = dark ? `<picture><source srcset="${escapeHtml(dark)}" media="(prefers-color-scheme: dark)">${img}</picture>` : img;
    const caption = this.caption(node);
    return `<figure class="image">${picture}${caption ? `<figcaption>${caption}</figcaption>` : ''}</figure>`;
  }

  table(node: Node): string {
    const { view, definition } = node.data ?? {};
    if (!view || !definition) return '';
    const columns = ((view.columns ?? []) as string[]).filter((id) => definition[id]);
    const records = sortedRecords(node);
    const cell = (id: string, value: unknown): string => {
      const def = definition[id];
      if (value === null || value === undefined) return '';
      switch (def?.type) {
        case 'number':
          return escapeHtml(String(value));
        case 'checkbox':
          return value ? '<span aria-label="yes">✓</span>' : '<span aria-label="no"></span>';
        case 'rating':
          return `<span aria-label="${escapeHtml(String(value))} out of ${escapeHtml(String(def.max ?? 5))}">${'★'.repeat(Math.max(0, Math.min(10, Number(value) || 0)))}</span>`;
        case 'files':
          return (Array.isArray(value) ? value : [])
            .map((fileId: string) => {
              const file = this.ctx.file(fileId);
              return file ? `<a href="${escapeHtml(file.url)}">${escapeHtml(file.name)}</a>` : '';
            })
            .join(' ');
        case 'content-ref':
        case 'image': {
          const ref = (value as { ref?: ContentRef }).ref ?? (value as ContentRef);
          const url = this.refUrl(ref);
          return url ? `<a href="${escapeHtml(url)}">${escapeHtml(url)}</a>` : '';
        }
        default: {
          const fragment = fragmentOf(node, value);
          return fragment ? (fragment.nodes as Node[]).map((n) => this.inlines(n.nodes)).join('<br>') : escapeHtml(typeof value === 'string' ? value : '');
        }
      }
    };
    if (view.type === 'cards') {
      const cards = records.map(([, record]: [string, Node]) => {
        const target = view.targetDefinition ? this.refUrl((record.values[view.targetDefinition] as { ref?: ContentRef })?.ref ?? record.values[view.targetDefinition]) : undefined;
        const coverFile = view.coverDefinition ? (record.values[view.coverDefinition] as string[] | undefined)?.[0] : undefined;
        const cover = coverFile ? this.ctx.file(coverFile)?.url : undefined;
        const body = columns.map((id) => `<div>${cell(id, record.values[id])}</div>`).join('');
        const inner = `${cover ? `<img class="card-cover" src="${escapeHtml(cover)}" alt=""${this.loading}>` : ''}${body}`;
        return target ? `<a class="card" href="${escapeHtml(target)}">${inner}</a>` : `<div class="card">${inner}</div>`;
      });
      return `<div class="cards">${cards.join('')}</div>`;
    }
    const head = view.hideHeader ? '' : `<thead><tr>${columns.map((id) => `<th scope="col">${escapeHtml(String(definition[id].title ?? ''))}</th>`).join('')}</tr></thead>`;
    const body = records.map(([, record]: [string, Node]) => `<tr>${columns.map((id) => `<td>${cell(id, record.values[id])}</td>`).join('')}</tr>`).join('');
    return `<div class="table-wrap"><table>${head}<tbody>${body}</tbody></table></div>`;
  }

  inlines(nodes: Node[] | undefined): string {
    return (nodes ?? []).map((n) => (n.object === 'text' ? this.text(n) : this.inline(n))).join('');
  }

  text(node: Node): string {
    return ((node.leaves ?? []) as Node[])
      .map((leaf) => {
        let html = escapeHtml(String(leaf.text ?? '')).replace(/\n/g, '<br>');
        for (const mark of [...(leaf.marks ?? [])].reverse() as Node[]) html = this.mark(mark, html);
        return html;
      })
      .join('');
  }

  mark(mark: Node, html: string): string {
    switch (mark.type) {
      case 'bold':
        return `<strong>${html}</strong>`;
      case 'italic':
        return `<em>${html}</em>`;
      case 'strikethrough':
        return `<s>${html}</s>`;
      case 'code':
        return `<code>${html}</code>`;
      case 'keyboard':
        return `<kbd>${html}</kbd>`;
      case 'superscript':
        return `<sup>${html}</sup>`;
      case 'subscript':
        return `<sub>${html}</sub>`;
      case 'color': {
        const cls = (c: unknown) => String(c ?? 'default').replace(/[^a-z]/gi, '');
        return `<mark class="color-${cls(mark.data?.text)} bg-${cls(mark.data?.background)}">${html}</mark>`;
      }
      default:
        return html;
    }
  }

  inline(node: Node): string {
    switch (node.type) {
      case 'link': {
        const url = this.refUrl(node.data?.ref);
        const inner = this.inlines(node.nodes);
        if (!url) return inner;
        const external = node.data?.ref?.kind === 'url' && /^https?:/i.test(url);
        return `<a href="${escapeHtml(url)}"${external ? ' rel="noopener nofollow"' : ''}>${inner}</a>`;
      }
      case 'mention': {
        const ref = node.data?.ref;
        const url = this.refUrl(ref);
        const label = ref?.kind === 'page' ? (this.ctx.pageTitle?.(ref.page) ?? url ?? '') : (url ?? '');
        return url ? `<a class="mention" href="${escapeHtml(url)}">${escapeHtml(label)}</a>` : '';
      }
      case 'emoji':
        return `<span class="emoji" role="img">${escapeHtml(emoji(String(node.data?.code ?? '')))}</span>`;
      case 'icon':
        return `<span class="icon" data-icon="${escapeHtml(String(node.data?.icon ?? ''))}" aria-hidden="true"></span>`;
      case 'expression': {
        const value = this.ctx.expression(String(node.data?.expression ?? ''));
        return value === undefined ? '' : escapeHtml(value);
      }
      case 'inline-math':
        return katex.renderToString(String(node.data?.formula ?? ''), { displayMode: false, throwOnError: false, trust: false, output: 'htmlAndMathml' });
      case 'inline-image': {
        const src = this.refUrl(node.data?.ref);
        return src ? `<img class="inline-image" src="${escapeHtml(src)}" alt="${escapeHtml(String(node.data?.alt ?? ''))}"${this.loading}>` : '';
      }
      case 'button': {
        const url = this.refUrl(node.data?.ref);
        const label = escapeHtml(String(node.data?.label ?? ''));
        const kind = node.data?.kind === 'secondary' ? 'secondary' : 'primary';
        return url ? `<a class="button button-${kind}" href="${escapeHtml(url)}">${label}</a>` : `<span class="button button-${kind}">${label}</span>`;
      }
      case 'annotation': {
        const body = this.fragment(node, 'annotation-body');
        // Notes are phrasing content here (a footnote mark) and listed after the page's content.
        const n = ++this.annotations;
        this.notes.push((body?.nodes ?? []).map((b: Node) => this.inlines(b.nodes)).join(' '));
        return `<span class="annotated">${this.inlines(node.nodes)}<sup class="annotation"><a href="#${this.noteId('note', n)}" id="${this.noteId('note-ref', n)}" aria-label="Note ${n}">${n}</a></sup></span>`;
      }
      default:
        return this.inlines(node.nodes);
    }
  }
}

/** The text of a node and its descendants. */
export function plainText(node: Node): string {
  if (node.object === 'text') return ((node.leaves ?? []) as Node[]).map((l) => String(l.text ?? '')).join('');
  return ((node.nodes ?? []) as Node[]).map(plainText).join('');
}

function formatSize(bytes: number): string {
  if (bytes < 1024) return `${bytes} B`;
  if (bytes < 1024 * 1024) return `${(bytes / 1024).toFixed(1)} KB`;
  return `${(bytes / 1024 / 1024).toFixed(1)} MB`;
}

/** Renders a document for a reader; headings come back for the table of contents. */
export function renderDocument(doc: GitBookDocument, ctx: RenderContext): Rendered {
  const renderer = new Renderer(ctx);
  const json = JSON.stringify(doc.nodes);
  const top = json.includes('"heading-1"') ? 1 : json.includes('"heading-2"') ? 2 : 3;
  renderer.headingShift = 2 - top;
  let html = renderer.blocks(doc.nodes as Node[]);
  if (renderer.notes.length) {
    const items = renderer.notes.map((note, i) => `<li id="${renderer.noteId('note', i + 1)}">${note} <a href="#${renderer.noteId('note-ref', i + 1)}" aria-label="Back to the text">↩</a></li>`);
    html += `<section class="notes" aria-label="Notes"><ol>${items.join('')}</ol></section>`;
  }
  return { html, headings: renderer.headings };
}
