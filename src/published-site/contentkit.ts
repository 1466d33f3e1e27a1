import hljs from 'highlight.js';
import { escapeHtml } from './render.ts';

/**
 * ContentKit (what an integration's component renders: `block`, stacks, text, markdown, code,
 * images, cards, buttons, web frames, hints) as static HTML for readers of a published site.
 *
 * Everything is escaped; links, images and frames take only http(s) URLs; frames are sandboxed
 * without same-origin access, and their origins come back so the page's policy can allow exactly
 * those. Interactive parts (inputs, actions other than opening a URL, modals) have no server to
 * talk back to on a published page: buttons that would need one are shown disabled, inputs not at
 * all. Trees are bounded (depth and element count), so a component cannot make a page explode.
 */

type Element = Record<string, any>;

export interface ContentKitContext {
  /** The component's state, for `{ $state: key }` bindings. */
  state: Record<string, unknown>;
  /** HTML of each markdown text in the tree (rendered beforehand by the site's renderer). */
  markdown: Map<string, string>;
}

const MAX_DEPTH = 32;
const MAX_ELEMENTS = 2000;

const httpUrl = (value: unknown): string | undefined => {
  if (typeof value !== 'string') return undefined;
  try {
    const url = new URL(value);
    return url.protocol === 'https:' || url.protocol === 'http:' ? url.href : undefined;
  } catch {
    return undefined;
  }
};

/** A ContentKit URL: a string, or `{ host, pathname, query }`. */
function urlOf(value: unknown): string | undefined {
  if (typeof value === 'string') return httpUrl(value);
  if (value && typeof value === 'object') {
    const { host, pathname, query } = value as { host?: unknown; pathname?: unknown; query?: Record<string, unknown> };
    if (typeof host !== 'string' || typeof pathname !== 'string') return undefined;
    const url = httpUrl(`https://${host}${pathname.startsWith('/') ? '' : '/'}${pathname}`);
    if (!url) return undefined;
    const built = new URL(url);
    for (const [k, v] of Object.entries(query ?? {})) if (typeof v === 'string') built.searchParams.set(k, v);
    return built.href;
  }
  return undefined;
}

export class ContentKitRenderer {
  readonly frames = new Set<string>();
  private count = 0;

  constructor(private readonly ctx: ContentKitContext) {}

  /** Markdown texts of a tree (to render before `html`). */
  static markdownOf(element: Element, state: Record<string, unknown>, out: string[] = [], depth = 0): string[] {
    if (!element || typeof element !== 'object' || depth > MAX_DEPTH || out.length > MAX_ELEMENTS) return out;
    if (element.type === 'markdown') {
      const text = bound(element.content, state);
      if (text) out.push(text);
    }
    for (const child of Array.isArray(element.children) ? element.children : []) ContentKitRenderer.markdownOf(child, state, out, depth + 1);
    return out;
  }

  html(element: Element): string {
    return `<div class="integration-block">${this.children(element.children, 0)}</div>`;
  }

  private children(children: unknown, depth: number): string {
    if (typeof children === 'string') return escapeHtml(children);
    if (!Array.isArray(children)) return '';
    return children.map((c) => this.element(c, depth + 1)).join('');
  }

  private element(el: unknown, depth: number): string {
    if (typeof el === 'string') return escapeHtml(el);
    if (!el || typeof el !== 'object' || depth > MAX_DEPTH || ++this.count > MAX_ELEMENTS) return '';
    const e = el as Element;
    switch (e.type) {
      case 'box':
        return `<div class="ck-box"${typeof e.grow === 'number' && e.grow >= 0 && e.grow < 100 ? ` style="flex-grow:${e.grow}"` : ''}>${this.children(e.children, depth)}</div>`;
      case 'vstack':
      case 'hstack':
        return `<div class="ck-${e.type} ck-align-${['center', 'end'].includes(e.align) ? e.align : 'start'}">${this.children(e.children, depth)}</div>`;
      case 'divider':
        return '<hr class="ck-divider">';
      case 'text': {
        const inner = this.children(e.children, depth);
        return { bold: `<strong>${inner}</strong>`, italic: `<em>${inner}</em>`, code: `<code>${inner}</code>`, strikethrough: `<s>${inner}</s>` }[String(e.style)] ?? `<span>${inner}</span>`;
      }
      case 'link': {
        const href = urlOf(e.target?.url);
        const inner = this.children(e.children, depth);
        return href ? `<a href="${escapeHtml(href)}" rel="noopener noreferrer">${inner}</a>` : inner;
      }
      case 'markdown': {
        const text = bound(e.content, this.ctx.state);
        return text ? `<div class="ck-markdown">${this.ctx.markdown.get(text) ?? `<p>${escapeHtml(text)}</p>`}</div>` : '';
      }
      case 'codeblock': {
        const text = bound(e.content, this.ctx.state) ?? '';
        const syntax = typeof e.syntax === 'string' ? e.syntax : '';
        let code: string;
        try {
          code = syntax && hljs.getLanguage(syntax) ? hljs.highlight(text, { language: syntax, ignoreIllegals: true }).value : escapeHtml(text);
        } catch {
          code = escapeHtml(text);
        }
        return `<div class="code"><pre><code${syntax ? ` class="language-${escapeHtml(syntax)}"` : ''}>${code}</code></pre></div>`;
      }
      case 'image': {
        const src = httpUrl(e.source?.url);
        return src ? `<img class="ck-image" src="${escapeHtml(src)}" alt=""${ratio(e.aspectRatio)}>` : '';
      }
      case 'webframe': {
        const src = httpUrl(e.source?.url);
        if (!src) return '';
        this.frames.add(new URL(src).origin);
        return `<iframe class="ck-webframe" src="${escapeHtml(src)}" sandbox="allow-scripts allow-popups allow-forms allow-presentation" loading="lazy" referrerpolicy="strict-origin-when-cross-origin" title="Embedded content"${ratio(e.aspectRatio)}></iframe>`;
      }
      case 'card': {
        const href = e.onPress?.action === '@ui.url.open' ? httpUrl(e.onPress.url) : undefined;
        const title = typeof e.title === 'string' ? `<p class="ck-card-title">${escapeHtml(e.title)}</p>` : '';
        const hint = typeof e.hint === 'string' ? `<p class="ck-card-hint">${escapeHtml(e.hint)}</p>` : Array.isArray(e.hint) ? `<p class="ck-card-hint">${this.children(e.hint, depth)}</p>` : '';
        const body = `${title}${hint}${this.children(e.children, depth)}${this.children(e.buttons, depth)}`;
        return href ? `<a class="ck-card" href="${escapeHtml(href)}" rel="noopener noreferrer">${body}</a>` : `<div class="ck-card">${body}</div>`;
      }
      case 'button': {
        const label = escapeHtml(typeof e.label === 'string' ? e.label : typeof e.tooltip === 'string' ? e.tooltip : 'Open');
        const href = e.onPress?.action === '@ui.url.open' ? httpUrl(e.onPress.url) : undefined;
        const style = ['primary', 'secondary', 'danger'].includes(e.style) ? e.style : 'secondary';
        return href && !e.disabled
          ? `<a class="ck-button ck-${style}" href="${escapeHtml(href)}" rel="noopener noreferrer">${label}</a>`
          : `<button type="button" class="ck-button ck-${style}" disabled>${label}</button>`;
      }
      case 'hint':
        return `<div class="ck-hint">${this.children(e.children, depth)}</div>`;
      case 'stepper':
        return `<ol class="ck-stepper">${(Array.isArray(e.children) ? e.children : []).map((step: Element) => `<li>${typeof step?.title === 'string' ? `<p class="ck-step-title">${escapeHtml(step.title)}</p>` : ''}${this.children(step?.children, depth + 1)}</li>`).join('')}</ol>`;
      default:
        // Inputs, selects, switches, modals: nothing a static page can do with them.
        return '';
    }
  }
}

/** A string, or the value of a `{ $state: key }` binding. */
function bound(value: unknown, state: Record<string, unknown>): string | undefined {
  if (typeof value === 'string') return value;
  if (value && typeof value === 'object' && typeof (value as { $state?: unknown }).$state === 'string') {
    const v = state[(value as { $state: string }).$state];
    return typeof v === 'string' ? v : v === undefined ? undefined : JSON.stringify(v);
  }
  return undefined;
}

const ratio = (value: unknown) => (typeof value === 'number' && value > 0.05 && value < 20 ? ` style="aspect-ratio:${value}"` : '');
