/**
 * Hand-written scanners for the two tag syntaxes GitBook markdown mixes into CommonMark: Liquid-style
 * block tags (`{% tab title="A" %}`) and the small HTML vocabulary GitBook writes (`<figure>`,
 * `<table data-view="cards">`, `<mark style="…">`…). Both are single left-to-right passes with no
 * regular expressions that could backtrack, so their cost is linear in the input whatever it holds
 * (`%`, quotes and query strings inside attribute values included).
 */

export interface LiquidTag {
  /** Tag name without the `end` prefix: `hint`, `content-ref`, `@github/code-block`… */
  name: string;
  end: boolean;
  /** `name="value"`, `name='value'` and `name=value` attributes, values verbatim. */
  attrs: Record<string, string>;
  /** Positional arguments: quoted strings and bare words (`{% include "x.md" %}`). */
  args: string[];
  /** Everything after the name, verbatim (`{% if visitor.claims.x === "a" %}`). */
  rest: string;
}

const isSpace = (c: string | undefined) => c === ' ' || c === '\t' || c === '\n' || c === '\r';
const isNameChar = (c: string | undefined) => c !== undefined && /[\w@/.:-]/.test(c);

/** Reads a whole-string Liquid tag `{% … %}`; null when the text is anything else. */
export function scanLiquidTag(text: string): LiquidTag | null {
  const s = text.trim();
  if (!s.startsWith('{%') || !s.endsWith('%}') || s.length < 4) return null;
  const stop = s.length - 2;
  let i = 2;
  while (i < stop && isSpace(s[i])) i++;
  const nameStart = i;
  while (i < stop && isNameChar(s[i])) i++;
  let name = s.slice(nameStart, i);
  if (name === '') return null;
  const attrs: Record<string, string> = {};
  const args: string[] = [];
  const rest = s.slice(i, stop).trim();
  while (i < stop) {
    while (i < stop && isSpace(s[i])) i++;
    if (i >= stop) break;
    const c = s[i]!;
    if (c === '"' || c === "'") {
      const close = s.indexOf(c, i + 1);
      if (close < 0 || close >= stop) return null;
      args.push(s.slice(i + 1, close));
      i = close + 1;
      continue;
    }
    const wordStart = i;
    while (i < stop && !isSpace(s[i]) && s[i] !== '=' && s[i] !== '"' && s[i] !== "'") i++;
    const word = s.slice(wordStart, i);
    if (s[i] === '=' && word !== '') {
      i++;
      const q = s[i];
      if (q === '"' || q === "'") {
        const close = s.indexOf(q, i + 1);
        if (close < 0 || close >= stop) return null;
        attrs[word] = s.slice(i + 1, close);
        i = close + 1;
      } else {
        const valueStart = i;
        while (i < stop && !isSpace(s[i])) i++;
        attrs[word] = s.slice(valueStart, i);
      }
    } else if (word !== '') args.push(word);
    else i++;
  }
  const end = name.startsWith('end') && name.length > 3;
  if (end) name = name.slice(3);
  return { name, end, attrs, args, rest };
}

/** An attribute value as written in a Liquid tag: double quotes unless the value holds some. */
export function liquidValue(value: string): string {
  if (!value.includes('"')) return `"${value}"`;
  if (!value.includes("'")) return `'${value}'`;
  return `"${value.replace(/"/g, '%22')}"`;
}

export function liquidTag(name: string, attrs: Record<string, string | undefined>, args: string[] = []): string {
  const parts = [name, ...args.map(liquidValue)];
  for (const [key, value] of Object.entries(attrs)) if (value !== undefined) parts.push(`${key}=${liquidValue(value)}`);
  return `{% ${parts.join(' ')} %}`;
}

// ---- HTML ----

/** A piece of HTML; `start`/`end` are its offsets in the source. */
export type HtmlToken = { start: number; end: number } & (
  | { kind: 'open'; name: string; attrs: Record<string, string>; selfClosing: boolean }
  | { kind: 'close'; name: string }
  | { kind: 'text'; text: string }
);

function codePoint(n: number): string {
  return n > 0 && n <= 0x10ffff ? String.fromCodePoint(n) : '\uFFFD';
}

const NAMED: Record<string, string> = { quot: '"', apos: "'", lt: '<', gt: '>', amp: '&', nbsp: '\u00a0' };

/** Decodes character references in one pass (so `&amp;lt;` stays `&lt;`). */
export function decodeEntities(text: string): string {
  if (!text.includes('&')) return text;
  return text.replace(/&(#[xX][0-9a-fA-F]{1,8}|#\d{1,9}|[a-zA-Z]{2,8});/g, (whole, body: string) => {
    if (body[0] === '#') return codePoint(body[1] === 'x' || body[1] === 'X' ? parseInt(body.slice(2), 16) : Number(body.slice(1)));
    return NAMED[body] ?? whole;
  });
}

/** Escapes an attribute value the way GitBook writes them (`&` as `&#x26;`, quotes as `&#x22;`). */
export function escapeAttr(value: string): string {
  return value.replace(/&/g, '&#x26;').replace(/"/g, '&#x22;').replace(/'/g, '&#x27;').replace(/</g, '&#x3C;').replace(/>/g, '&#x3E;');
}

export function escapeHtmlText(value: string): string {
  return value.replace(/&/g, '&#x26;').replace(/</g, '&#x3C;').replace(/>/g, '&#x3E;');
}

/** Attributes of an open tag's inside (`src="a" alt='' data-hidden`); names lower-cased, values decoded. */
export function parseAttrs(s: string): Record<string, string> {
  const attrs: Record<string, string> = {};
  let i = 0;
  while (i < s.length) {
    while (i < s.length && (isSpace(s[i]) || s[i] === '/')) i++;
    const start = i;
    while (i < s.length && !isSpace(s[i]) && s[i] !== '=' && s[i] !== '/' && s[i] !== '>') i++;
    const name = s.slice(start, i).toLowerCase();
    if (name === '') {
      i++;
      continue;
    }
    while (i < s.length && isSpace(s[i])) i++;
    if (s[i] !== '=') {
      attrs[name] = '';
      continue;
    }
    i++;
    while (i < s.length && isSpace(s[i])) i++;
    const q = s[i];
    if (q === '"' || q === "'") {
      let close = s.indexOf(q, i + 1);
      if (close < 0) close = s.length;
      attrs[name] = decodeEntities(s.slice(i + 1, close));
      i = close + 1;
    } else {
      const valueStart = i;
      while (i < s.length && !isSpace(s[i])) i++;
      attrs[name] = decodeEntities(s.slice(valueStart, i));
    }
  }
  return attrs;
}

/** Splits HTML into open tags, close tags and text (text entity-decoded); comments are dropped. */
export function tokenizeHtml(html: string): HtmlToken[] {
  const out: HtmlToken[] = [];
  let i = 0;
  let textStart = 0;
  const flushText = (to: number) => {
    if (to > textStart) out.push({ kind: 'text', text: decodeEntities(html.slice(textStart, to)), start: textStart, end: to });
  };
  while (i < html.length) {
    const lt = html.indexOf('<', i);
    if (lt < 0) break;
    if (html.startsWith('<!--', lt)) {
      const end = html.indexOf('-->', lt + 4);
      flushText(lt);
      i = textStart = end < 0 ? html.length : end + 3;
      continue;
    }
    const closing = html[lt + 1] === '/';
    const nameStart = lt + (closing ? 2 : 1);
    let j = nameStart;
    while (j < html.length && /[a-zA-Z0-9-]/.test(html[j]!)) j++;
    if (j === nameStart || !/[a-zA-Z]/.test(html[nameStart]!)) {
      i = lt + 1;
      continue;
    }
    // The end of the tag: the first `>` outside a quoted value.
    let k = j;
    let quote: string | null = null;
    for (; k < html.length; k++) {
      const c = html[k]!;
      if (quote) {
        if (c === quote) quote = null;
      } else if (c === '"' || c === "'") quote = c;
      else if (c === '>') break;
    }
    if (k >= html.length) break;
    flushText(lt);
    const name = html.slice(nameStart, j).toLowerCase();
    if (closing) out.push({ kind: 'close', name, start: lt, end: k + 1 });
    else {
      const inner = html.slice(j, k);
      out.push({ kind: 'open', name, attrs: parseAttrs(inner), selfClosing: inner.trimEnd().endsWith('/'), start: lt, end: k + 1 });
    }
    i = textStart = k + 1;
  }
  flushText(html.length);
  return out;
}

/** A `style` attribute as a map (`color:red;background-color:blue;`). */
export function parseStyle(style: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const part of style.split(';')) {
    const colon = part.indexOf(':');
    if (colon > 0) out[part.slice(0, colon).trim().toLowerCase()] = part.slice(colon + 1).trim();
  }
  return out;
}
