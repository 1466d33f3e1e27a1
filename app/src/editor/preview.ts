/**
 * Readable previews of the GitBook nodes the editor keeps as atoms (tables, images, embeds, math,
 * OpenAPI, emoji, buttons…), built with DOM calls only: user text is always set as text, never as
 * HTML, and only safe URLs become links or image sources (links.ts). Math is drawn by
 * `katex.render` into an element (math.ts, loaded when first needed).
 */
import { type RefContext, describeRef, hrefOf, imageSrc, safeUrl } from './links.ts';
import { type GBNode, isRecord, typeLabel } from './model.ts';

export type PreviewContext = RefContext;

type Props = { className?: string; text?: string; attrs?: Record<string, string | undefined> };

/** An element with a class, text and attributes (set one by one: nothing is parsed as HTML). */
export function h<K extends keyof HTMLElementTagNameMap>(tag: K, props: Props = {}, children: (Node | null | undefined | false)[] = []): HTMLElementTagNameMap[K] {
  const el = document.createElement(tag);
  if (props.className) el.className = props.className;
  if (props.text !== undefined) el.textContent = props.text;
  for (const [name, value] of Object.entries(props.attrs ?? {})) if (value !== undefined) el.setAttribute(name, value);
  for (const child of children) if (child) el.appendChild(child);
  return el;
}

/** The text of a GitBook subtree: its leaves, joined. */
export function plainText(value: unknown): string {
  if (Array.isArray(value)) return value.map(plainText).join('');
  if (!isRecord(value)) return '';
  if (value.object === 'leaf') return typeof value.text === 'string' ? value.text : '';
  if (value.object === 'text') return plainText(value.leaves);
  if (value.type === 'emoji' && isRecord(value.data)) return emojiChars(value.data.code);
  if (value.type === 'inline-math' && isRecord(value.data)) return String(value.data.formula ?? '');
  if (value.type === 'expression' && isRecord(value.data)) return String(value.data.expression ?? '');
  const inner = [plainText(value.nodes), ...(Array.isArray(value.fragments) ? value.fragments.map(plainText) : [])].filter(Boolean);
  const separator = value.object === 'block' || value.object === 'fragment' || value.object === 'document' ? '\n' : '';
  return inner.join(separator);
}

function blocksText(value: unknown): string {
  if (!Array.isArray(value)) return plainText(value);
  return value.map(plainText).join('\n');
}

export function emojiChars(code: unknown): string {
  if (typeof code !== 'string') return '';
  try {
    return String.fromCodePoint(...code.split('-').map((hex) => parseInt(hex, 16)));
  } catch {
    return '';
  }
}

let math: Promise<typeof import('./math.ts')> | undefined;

/**
 * A formula: its source at once, drawn by KaTeX once loaded (math.ts); a formula KaTeX cannot
 * read stays as its source.
 */
export function renderMath(formula: string, displayMode: boolean): HTMLElement {
  const el = h(displayMode ? 'div' : 'span', { className: displayMode ? 'gb-math-block' : 'gb-math-inline', text: formula, attrs: { role: 'math', 'aria-label': formula } });
  math ??= import('./math.ts');
  math.then(({ drawMath }) => drawMath(formula, el, displayMode)).catch(() => undefined);
  return el;
}

function data(node: GBNode): Record<string, unknown> {
  return isRecord(node.data) ? node.data : {};
}

const str = (value: unknown) => (typeof value === 'string' ? value : value === undefined || value === null ? '' : String(value));

function link(text: string, href: string | undefined): HTMLElement {
  return href ? h('a', { text, attrs: { href, rel: 'noopener noreferrer nofollow', target: '_blank' } }) : h('span', { text });
}

/** A labelled frame: the block's name, then what it holds. */
function framed(node: GBNode, label: string, body: (Node | null | false)[]): HTMLElement {
  return h('div', { className: `gb-atom gb-atom-${str(node.type).replace(/[^a-z0-9-]/g, '')}`, attrs: { role: 'group', 'aria-label': label } }, [
    h('div', { className: 'gb-atom-label', text: label, attrs: { 'aria-hidden': 'true' } }),
    ...body,
  ]);
}

/** The preview of a block kept as an atom. */
export function blockPreview(node: GBNode, context: PreviewContext): HTMLElement {
  const d = data(node);
  const label = typeLabel(node.type);
  switch (node.type) {
    case 'divider':
      return h('hr', { className: 'gb-divider', attrs: { 'aria-label': 'Divider' } });
    case 'math':
      return framed(node, label, [renderMath(str(d.formula), true)]);
    case 'images':
      return imagesPreview(node, context);
    case 'table':
      return tablePreview(node, context);
    case 'embed':
      return framed(node, label, [link(str(d.url), safeUrl(d.url))]);
    case 'file':
      return framed(node, label, [link(describeRef(d.ref), hrefOf(d.ref, context)), captionOf(node)]);
    case 'drawing': {
      const src = imageSrc(d.ref, context);
      return framed(node, label, [src ? h('img', { attrs: { src, alt: 'Drawing' } }) : h('span', { text: d.ref ? describeRef(d.ref) : 'Empty drawing' })]);
    }
    case 'content-ref':
      return framed(node, label, [link(describeRef(d.ref), hrefOf(d.ref, context))]);
    case 'reusable-content':
      return framed(node, label, [h('span', { text: describeRef(d.ref) })]);
    case 'swagger':
      return framed(node, label, [h('code', { text: `${str(d.method).toUpperCase()} ${str(d.path)}` }), h('span', { className: 'gb-muted', text: ` ${describeRef(d.ref)}` })]);
    case 'openapi-operation':
      return framed(node, label, [h('code', { text: `${str(d.method).toUpperCase()} ${str(d.path)}` }), h('span', { className: 'gb-muted', text: ` ${describeRef(d.ref)}` })]);
    case 'openapi-schemas':
      return framed(node, label, [h('span', { text: `${Array.isArray(d.schemas) ? d.schemas.map(str).join(', ') : ''} · ${describeRef(d.ref)}` })]);
    case 'openapi-webhook':
      return framed(node, label, [h('code', { text: `${str(d.method).toUpperCase()} ${str(d.name)}` }), h('span', { className: 'gb-muted', text: ` ${describeRef(d.ref)}` })]);
    case 'integration':
      return framed(node, label, [h('span', { text: `${str(d.integration)}${d.block ? ` / ${str(d.block)}` : ''}` })]);
    case 'prompt':
      return framed(node, label, [h('p', { text: str(d.description) }), h('pre', { className: 'gb-code', text: blocksText(node.nodes) })]);
    default: {
      // A block the editor cannot hold richly here (or a type it does not know): its text, read-only.
      const text = blocksText(node.nodes) || (Array.isArray(node.fragments) ? node.fragments.map(plainText).join('\n') : '');
      return framed(node, `${label} (kept as is)`, [h('div', { className: 'gb-atom-text', text })]);
    }
  }
}

function captionOf(node: GBNode): HTMLElement | null {
  const caption = Array.isArray(node.fragments) ? node.fragments.find((f) => f.fragment === 'caption') : undefined;
  const text = caption ? blocksText(caption.nodes) : '';
  return text ? h('div', { className: 'gb-caption', text }) : null;
}

function imagesPreview(node: GBNode, context: PreviewContext): HTMLElement {
  const images = Array.isArray(node.nodes) ? node.nodes : [];
  const align = str(data(node).align);
  return h(
    'div',
    { className: `gb-images${align ? ` gb-align-${align.replace(/[^a-z]/g, '')}` : ''}`, attrs: { role: 'group', 'aria-label': images.length > 1 ? `${images.length} images` : 'Image' } },
    images.map((image) => {
      const d = data(image);
      const src = imageSrc(d.ref, context);
      const alt = str(d.alt);
      return h('figure', { className: 'gb-image' }, [
        src ? h('img', { attrs: { src, alt, loading: 'lazy' } }) : h('div', { className: 'gb-image-missing', text: `Image: ${describeRef(d.ref)}${alt ? ` (${alt})` : ''}` }),
        (() => {
          const caption = captionOf(image);
          return caption ? h('figcaption', { text: caption.textContent ?? '' }) : null;
        })(),
      ]);
    }),
  );
}

/** A table's cell as text: rich cells are fragments, other column types values. */
function cellText(node: GBNode, definition: Record<string, unknown> | undefined, value: unknown): string {
  if (value === null || value === undefined) return '';
  const type = definition?.type;
  if (type === 'text' || (type === undefined && typeof value === 'string')) {
    const fragment = Array.isArray(node.fragments) ? node.fragments.find((f) => f.fragment === value) : undefined;
    return fragment ? blocksText(fragment.nodes) : '';
  }
  if (type === 'checkbox') return value === true ? '✓' : '';
  if (type === 'select' && Array.isArray(value)) {
    const options = Array.isArray(definition?.options) ? (definition.options as { value: string; label: string }[]) : [];
    return value.map((v) => options.find((o) => o.value === v)?.label ?? str(v)).join(', ');
  }
  if (type === 'rating') return `${str(value)} / ${str(definition?.max)}`;
  if (Array.isArray(value)) return value.map((v) => (isRecord(v) ? describeRef(v) : str(v))).join(', ');
  if (isRecord(value)) return describeRef(isRecord(value.ref) ? value.ref : value);
  return str(value);
}

/** The records of a table in their order, and its visible columns. */
export function tableRows(node: GBNode): { columns: string[]; definition: Record<string, Record<string, unknown>>; records: [string, { values: Record<string, unknown> }][] } {
  const d = data(node);
  const view = isRecord(d.view) ? d.view : {};
  const definition = (isRecord(d.definition) ? d.definition : {}) as Record<string, Record<string, unknown>>;
  const columns = Array.isArray(view.columns) && view.columns.length > 0 ? (view.columns as string[]) : Object.keys(definition);
  const records = Object.entries(isRecord(d.records) ? (d.records as Record<string, { orderIndex: string; values: Record<string, unknown> }>) : {})
    .filter(([, r]) => isRecord(r) && isRecord(r.values))
    .sort(([, a], [, b]) => (a.orderIndex < b.orderIndex ? -1 : a.orderIndex > b.orderIndex ? 1 : 0));
  return { columns, definition, records };
}

function tablePreview(node: GBNode, context: PreviewContext): HTMLElement {
  const d = data(node);
  const view = isRecord(d.view) ? d.view : {};
  const { columns, definition, records } = tableRows(node);
  if (view.type === 'cards') {
    return h(
      'div',
      { className: 'gb-cards', attrs: { role: 'list', 'aria-label': 'Cards' } },
      records.map(([, record]) => {
        const cover = typeof view.coverDefinition === 'string' ? record.values[view.coverDefinition] : undefined;
        const coverRef = isRecord(cover) && isRecord(cover.ref) ? cover.ref : cover;
        const src = coverRef ? imageSrc(coverRef, context) : undefined;
        const target = typeof view.targetDefinition === 'string' ? record.values[view.targetDefinition] : undefined;
        const href = target ? hrefOf(target, context) : undefined;
        const texts = columns.map((c) => cellText(node, definition[c], record.values[c])).filter(Boolean);
        return h('div', { className: 'gb-card', attrs: { role: 'listitem' } }, [
          src ? h('img', { attrs: { src, alt: '' } }) : null,
          ...texts.map((t, i) => (i === 0 && href ? h('strong', {}, [link(t, href)]) : h(i === 0 ? 'strong' : 'div', { text: t }))),
        ]);
      }),
    );
  }
  const table = h('table', { className: 'gb-table' });
  if (view.hideHeader !== true) {
    table.appendChild(h('thead', {}, [h('tr', {}, columns.map((c) => h('th', { text: str(definition[c]?.title), attrs: { scope: 'col' } })))]));
  }
  table.appendChild(h('tbody', {}, records.map(([, record]) => h('tr', {}, columns.map((c) => h('td', { text: cellText(node, definition[c], record.values[c]) }))))));
  return h('div', { className: 'gb-table-wrap', attrs: { role: 'group', 'aria-label': 'Table' } }, [table]);
}

/** The preview of an inline kept as an atom. */
export function inlinePreview(node: GBNode, context: PreviewContext): HTMLElement {
  const d = data(node);
  switch (node.type) {
    case 'emoji':
      return h('span', { className: 'gb-emoji', text: emojiChars(d.code), attrs: { role: 'img', 'aria-label': `emoji ${str(d.code)}` } });
    case 'icon':
      return h('span', { className: 'gb-icon', text: `⟨${str(d.icon)}⟩`, attrs: { role: 'img', 'aria-label': `Icon ${str(d.icon)}` } });
    case 'expression':
      return h('span', { className: 'gb-expression', text: str(d.expression), attrs: { 'aria-label': `Variable ${str(d.expression)}` } });
    case 'inline-math':
      return renderMath(str(d.formula), false);
    case 'inline-image': {
      const src = imageSrc(d.ref, context);
      return src
        ? h('img', { className: `gb-inline-image${d.size === 'line' ? ' gb-line' : ''}`, attrs: { src, alt: str(d.alt), title: str(d.caption) || undefined } })
        : h('span', { className: 'gb-inline-missing', text: `[image ${describeRef(d.ref)}]` });
    }
    case 'mention':
      return h('span', { className: 'gb-mention', text: `@${describeRef(d.ref)}`, attrs: { 'aria-label': `Mention of ${describeRef(d.ref)}` } });
    case 'button': {
      const href = d.ref ? hrefOf(d.ref, context) : undefined;
      const action = isRecord(d.action) ? `${str(d.action.action)}${d.action.query ? `: ${str(d.action.query)}` : ''}` : undefined;
      const el = link(str(d.label) || 'Button', href);
      el.className = `gb-button gb-button-${d.kind === 'secondary' ? 'secondary' : 'primary'}`;
      el.setAttribute('title', action ?? describeRef(d.ref));
      return el;
    }
    case 'link':
      return h('span', { className: 'gb-link', text: plainText(node.nodes) || describeRef(d.ref), attrs: { title: describeRef(d.ref) } });
    case 'annotation':
      return h('span', { className: 'gb-annotation', text: plainText(node.nodes), attrs: { title: blocksText(node.fragments?.[0]?.nodes) } });
    default:
      return h('span', { className: 'gb-inline-unknown', text: `[${typeLabel(node.type)}]` });
  }
}
