import type {
  DocumentInlineAnnotation,
  DocumentInlineButton,
  DocumentInlineIcon,
  DocumentInlineImage,
  DocumentInlineLink,
  DocumentTextColor,
} from '@gitbook/api';
import type * as md from 'mdast';
import { type MarkType, EMOJI, HTML_MARKS, colorMark, emojiCode, imageRefFromUrl, isTextColor, refFromUrl, textNode } from './shared.ts';
import { decodeEntities, parseStyle, tokenizeHtml } from './tags.ts';
import { IN_ANNOTATION } from './parse-containers.ts';
import { type Piece, assemble, inlineImage, leaf, paragraph, plainOfPieces } from './parse-nodes.ts';
import type { Reader } from './parse-reader.ts';
import { PLACEHOLDER } from './parse-source.ts';

/**
 * Inline content: text with its formulas and emoji, marks, links, images, inline HTML (buttons,
 * icons, colours, `<picture>`), and footnote references read as annotations.
 */

/** Inline HTML tags read as marks. */
const TAG_MARKS: Record<string, MarkType> = {
  b: 'bold',
  strong: 'bold',
  em: 'italic',
  s: 'strikethrough',
  del: 'strikethrough',
  strike: 'strikethrough',
  ...Object.fromEntries(Object.entries(HTML_MARKS).map(([mark, tag]) => [tag, mark])),
};

/** Options of an HTML `<a class="button …">`. */
function buttonData(attrs: Record<string, string>, label: string): DocumentInlineButton['data'] | null {
  const classes = (attrs.class ?? '').split(/\s+/);
  if (!classes.includes('button')) return null;
  const kind = classes.includes('secondary') ? 'secondary' : 'primary';
  const base: { label: string; kind: 'primary' | 'secondary'; size?: 'small' | 'medium' | 'large'; icon?: string } = { label, kind };
  const size = attrs['data-size'];
  if (size === 'small' || size === 'medium' || size === 'large') base.size = size;
  if (attrs['data-icon']) base.icon = attrs['data-icon'];
  const action = attrs['data-action'];
  if (action === 'search' || action === 'ask') {
    return { ...base, action: attrs['data-query'] !== undefined ? { action, query: attrs['data-query'] } : { action } };
  }
  if (action === 'select' && attrs['data-slug'] !== undefined) return { ...base, action: { action, slug: attrs['data-slug'] } };
  return { ...base, ref: refFromUrl(attrs.href ?? '') };
}

/** Footnotes being expanded into annotations right now (conversion is synchronous: one at a time per thread). */
const expandingFootnotes = new Set<md.FootnoteDefinition>();

export function phrasing(r: Reader, children: md.PhrasingContent[], marks: MarkType[]): Piece[] {
  const out: Piece[] = [];
  for (let i = 0; i < children.length; i++) {
    const node = children[i]!;
    switch (node.type) {
      case 'text':
        out.push(...textPieces(r, node.value, marks));
        break;
      case 'emphasis':
        out.push(...phrasing(r, node.children, [...marks, 'italic']));
        break;
      case 'strong':
        out.push(...phrasing(r, node.children, [...marks, 'bold']));
        break;
      case 'delete':
        out.push(...phrasing(r, node.children, [...marks, 'strikethrough']));
        break;
      case 'inlineCode':
        out.push({ kind: 'text', text: r.restore(node.value), marks: [...marks, 'code'] });
        break;
      case 'break':
        out.push({ kind: 'text', text: '\n', marks });
        break;
      case 'link':
        out.push(link(r, r.restore(node.url), node.children, marks, node.title));
        break;
      case 'linkReference': {
        const def = r.definitions.get(node.identifier);
        if (def) out.push(link(r, r.restore(def.url), node.children, marks, def.title));
        else out.push(...phrasing(r, node.children, marks));
        break;
      }
      case 'image':
      case 'imageReference': {
        const image = resolveImage(r, node);
        if (image) out.push({ kind: 'inline', node: inlineImage(imageRefFromUrl(image.url), image.alt, image.title) });
        break;
      }
      case 'html':
        i = inlineHtml(r, children, i, marks, out);
        break;
      case 'footnoteReference': {
        const found = r.footnotes.get(node.identifier);
        // A footnote is read by the reader of its own source; one referenced from inside its own
        // body stays text (it would expand forever).
        if (found && !expandingFootnotes.has(found.def)) {
          r.referenced.add(node.identifier);
          expandingFootnotes.add(found.def);
          try {
            out.push(annotation(found.owner, found.def, out));
          } finally {
            expandingFootnotes.delete(found.def);
          }
        }
        else out.push({ kind: 'text', text: `[^${node.label ?? node.identifier}]`, marks });
        break;
      }
      default:
        break;
    }
  }
  return out;
}

function resolveImage(r: Reader, node: md.PhrasingContent): { url: string; alt: string; title: string } | null {
  if (node.type === 'image') return { url: r.restore(node.url), alt: r.restore(node.alt ?? ''), title: r.restore(node.title ?? '') };
  if (node.type === 'imageReference') {
    const def = r.definitions.get(node.identifier);
    if (def) return { url: r.restore(def.url), alt: r.restore(node.alt ?? ''), title: r.restore(def.title ?? '') };
  }
  return null;
}

/** `word[^1]`: an annotation on the word before the reference, its body the footnote. */
function annotation(r: Reader, def: md.FootnoteDefinition, out: Piece[]): Piece {
  const last = out.at(-1);
  let word: { text: string; marks: MarkType[] } = { text: '', marks: [] };
  if (last?.kind === 'text' && !last.marks.includes('code')) {
    const m = /\S+$/.exec(last.text);
    if (m) {
      word = { text: m[0], marks: last.marks };
      last.text = last.text.slice(0, m.index);
    }
  }
  const body = r.flow(def.children, IN_ANNOTATION);
  if (body.length === 0) body.push(paragraph(assemble([])));
  const node: DocumentInlineAnnotation = {
    object: 'inline',
    type: 'annotation',
    data: {},
    nodes: [textNode([leaf(word.text, word.marks)])],
    fragments: [{ object: 'fragment', fragment: 'annotation-body', type: 'annotation-body', nodes: body as DocumentInlineAnnotation['fragments'][0]['nodes'] }],
    isVoid: false,
  };
  return { kind: 'inline', node };
}

/** Text with its formulas (placeholders) and emoji as inline nodes. */
function textPieces(r: Reader, value: string, marks: MarkType[]): Piece[] {
  const out: Piece[] = [];
  const plain = (text: string) => {
    if (text === '') return;
    if (marks.includes('code')) {
      out.push({ kind: 'text', text, marks });
      return;
    }
    if (r.emojiAsText) {
      out.push({ kind: 'text', text, marks });
      return;
    }
    let last = 0;
    for (const m of text.matchAll(EMOJI)) {
      out.push({ kind: 'text', text: text.slice(last, m.index), marks });
      out.push({ kind: 'inline', node: { object: 'inline', type: 'emoji', data: { code: emojiCode(m[0]) }, isVoid: true } });
      last = m.index + m[0].length;
    }
    out.push({ kind: 'text', text: text.slice(last), marks });
  };
  let last = 0;
  for (const m of value.matchAll(PLACEHOLDER)) {
    plain(value.slice(last, m.index));
    const formula = r.source.math[Number(m[1] ?? m[2])]!.formula;
    out.push({ kind: 'inline', node: { object: 'inline', type: 'inline-math', data: { formula }, isVoid: true } });
    last = m.index + m[0].length;
  }
  plain(value.slice(last));
  return out;
}

function link(r: Reader, url: string, children: md.PhrasingContent[], marks: MarkType[], title?: string | null): Piece {
  if (title === 'mention') return { kind: 'inline', node: { object: 'inline', type: 'mention', data: { ref: refFromUrl(url) }, isVoid: true } };
  // A link holds only text and images: other inlines inside it are kept as their text.
  const pieces = phrasing(r, children, marks).map((p): Piece => {
    if (p.kind === 'text' || p.node.type === 'inline-image') return p;
    return { kind: 'text', text: plainOfPieces([p]), marks };
  });
  const nodes = assemble(pieces) as DocumentInlineLink['nodes'];
  return { kind: 'inline', node: { object: 'inline', type: 'link', data: { ref: refFromUrl(url) }, nodes, isVoid: false } };
}

/** Reads inline HTML at `children[i]`; returns the index of the last sibling it consumed. */
function inlineHtml(r: Reader, children: md.PhrasingContent[], i: number, marks: MarkType[], out: Piece[]): number {
  const html = (children[i] as md.Html).value;
  const tokens = tokenizeHtml(html);
  const tag = tokens.length === 1 ? tokens[0]! : undefined;
  /** The sibling closing `name`, nested ones skipped; -1 when there is none. */
  const closing = (name: string) => {
    let depth = 1;
    for (let k = i + 1; k < children.length; k++) {
      const child = children[k]!;
      if (child.type !== 'html') continue;
      const t = tokenizeHtml(child.value);
      if (t.length !== 1) continue;
      if (t[0]!.kind === 'open' && t[0]!.name === name && !t[0]!.selfClosing) depth++;
      else if (t[0]!.kind === 'close' && t[0]!.name === name && --depth === 0) return k;
    }
    return -1;
  };
  if (tag?.kind === 'open') {
    const { name, attrs } = tag;
    if (name === 'code') {
      const end = closing('code');
      if (end > 0) {
        const inner = r.raw(children[i], children[end]);
        if ((attrs.class ?? '').split(/\s+/).includes('expression')) {
          out.push({ kind: 'inline', node: { object: 'inline', type: 'expression', data: { expression: inner.trim() }, isVoid: true } });
        } else out.push({ kind: 'text', text: decodeEntities(inner), marks: [...marks, 'code'] });
        return end;
      }
    }
    // An emoji as GitBook writes one in cells and captions: its code is the attribute's.
    if (name === 'span' && attrs['data-tag'] === 'emoji' && attrs['data-code']) {
      const end = closing('span');
      if (end > 0) {
        out.push({ kind: 'inline', node: { object: 'inline', type: 'emoji', data: { code: attrs['data-code'] }, isVoid: true } });
        return end;
      }
    }
    if (name === 'i' && (attrs.class ?? '').startsWith('fa-')) {
      const end = closing('i');
      const icon = (attrs.class ?? '').split(/\s+/)[0]!.slice(3);
      const node: DocumentInlineIcon = { object: 'inline', type: 'icon', data: { icon }, isVoid: true };
      const color = parseStyle(attrs.style ?? '').color;
      if (isTextColor(color)) node.data.color = color as DocumentTextColor;
      out.push({ kind: 'inline', node });
      return end > 0 ? end : i;
    }
    // GitBook writes link buttons as `<a class="button …">`, action buttons as `<button class="button …">`.
    if (name === 'a' || name === 'button') {
      const end = closing(name);
      if (end > 0) {
        const label = decodeEntities(r.raw(children[i], children[end]).replace(/<[^<>]*>/g, '')).trim();
        const button = buttonData(attrs, label);
        if (button) out.push({ kind: 'inline', node: { object: 'inline', type: 'button', data: button, isVoid: true } });
        else if (attrs.href !== undefined) out.push(link(r, attrs.href, children.slice(i + 1, end), marks, attrs.title));
        else out.push(...phrasing(r, children.slice(i + 1, end), marks));
        return end;
      }
    }
    if (name === 'mark') {
      const end = closing('mark');
      if (end > 0) {
        const style = parseStyle(attrs.style ?? '');
        const text = isTextColor(style.color) ? style.color : 'default';
        const background = isTextColor(style['background-color']) ? style['background-color'] : 'default';
        out.push(...phrasing(r, children.slice(i + 1, end), [...marks, colorMark(text, background)]));
        return end;
      }
    }
    if (name === 'picture') {
      const end = closing('picture');
      if (end > 0) {
        const inner = tokenizeHtml(children.slice(i, end + 1).map((c) => (c.type === 'html' ? c.value : '')).join(''));
        const img = inner.find((t) => t.kind === 'open' && t.name === 'img');
        const source = inner.find((t) => t.kind === 'open' && t.name === 'source');
        if (img?.kind === 'open' && img.attrs.src !== undefined) {
          const node = imgInline(img.attrs);
          if (source?.kind === 'open' && source.attrs.srcset !== undefined) node.data.refDark = imageRefFromUrl(source.attrs.srcset);
          out.push({ kind: 'inline', node });
        }
        return end;
      }
    }
    const mark = TAG_MARKS[name];
    if (mark) {
      const end = closing(name);
      if (end > 0) {
        out.push(...phrasing(r, children.slice(i + 1, end), [...marks, mark]));
        return end;
      }
    }
    if (name === 'i') {
      const end = closing('i');
      if (end > 0) {
        out.push(...phrasing(r, children.slice(i + 1, end), [...marks, 'italic']));
        return end;
      }
    }
    if (name === 'br') out.push({ kind: 'text', text: '\n', marks });
    if (name === 'img' && attrs.src !== undefined) out.push({ kind: 'inline', node: imgInline(attrs) });
  }
  // Any other tag is dropped; the text it wraps is read as usual.
  return i;
}

function imgInline(attrs: Record<string, string>): DocumentInlineImage {
  const node = inlineImage(imageRefFromUrl(attrs.src ?? ''), attrs.alt ?? '', attrs.title ?? '');
  const size = attrs['data-size'];
  if (size === 'line' || size === 'original') node.data.size = size;
  return node;
}
