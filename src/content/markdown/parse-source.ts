import remarkParse from 'remark-parse';
import { unified } from 'unified';
import { scanLiquidTag } from './tags.ts';
import { gitbookGfm } from './gfm.ts';
import { knownTag } from './parse-liquid.ts';

/**
 * The page text as remark reads it: front matter taken off, math swapped for placeholders, `$$`
 * lines turned into fences, and GitBook tags and `<details>` lines put on paragraphs of their own.
 */

export const processor = unified().use(remarkParse).use(gitbookGfm);

// Math is cut out before parsing so markdown never rewrites it (`*`, `_`, `\{` and `|` are all
// common in TeX); it is swapped for a placeholder that markdown leaves alone: private-use characters
// inside `$…$`, so emphasis next to it flanks as it did next to `$$`.
export const PLACEHOLDER = /\$\uE000(\d+)\uE001\$|\$%EE%80%80(\d+)%EE%80%81\$/g;
export const MATH_INFO = '\uE002math';
// A formula never holds a backtick, so `$$` in two code spans on one line is not math.
const INLINE_MATH = /(?<!\\)\$\$(?!\$)([^`]+?)(?<!\\)\$\$/g;
const FENCE_OPEN = /^(\s*)(`{3,}|~{3,})(.*)$/;
// Line prefixes: blockquote markers, then indentation, then (on an opening line) a list marker.
const QUOTE_PREFIX = String.raw`((?:[ \t]*>)*)[ \t]*`;
const LIST_MARKER = String.raw`(?:(?:[-+*]|\d{1,9}[.)])[ \t]+)?`;
const MATH_OPEN = new RegExp(`^(${QUOTE_PREFIX}${LIST_MARKER})\\$\\$\\s*$`);
const MATH_CLOSE = new RegExp(`^(${QUOTE_PREFIX})\\$\\$\\s*$`);
const PRE_OPEN = new RegExp(`^${QUOTE_PREFIX}${LIST_MARKER}<pre(?:[ \\t>]|$)`, 'i');
const LINE_PREFIX = new RegExp(`^(${QUOTE_PREFIX})${LIST_MARKER}`);

/** The quote markers of a line that holds only a block tag or a `<details>`/`<summary>` line; null otherwise. */
function isolatedLine(line: string): string | null {
  const m = LINE_PREFIX.exec(line);
  const rest = line.slice(m ? m[0].length : 0).trim();
  if (rest.startsWith('{%')) return knownTag(scanLiquidTag(rest)) ? (m?.[1] ?? '').replace(/[ \t]/g, '') : null;
  const lower = rest.slice(0, 10).toLowerCase();
  if (lower.startsWith('<details') || lower.startsWith('</details') || lower.startsWith('<summary')) return (m?.[1] ?? '').replace(/[ \t]/g, '');
  return null;
}
const FRONT_MATTER = /^---\r?\n([\s\S]*?)\r?\n---[ \t]*(?:\r?\n|$)/;

export interface Source {
  text: string;
  math: { formula: string; raw: string }[];
}

function stripFrontMatter(markdown: string): string {
  const m = FRONT_MATTER.exec(markdown);
  if (!m) return markdown;
  // Only YAML-looking blocks without blank lines: `---`, a paragraph, `---` is content.
  const lines = m[1]!.split(/\r?\n/);
  const yamlish = /^[\w-]+\s*:/.test(lines[0]!) && lines.every((line) => line.trim() !== '' && /^([\w-]+\s*:|\s|-\s|#)/.test(line));
  return yamlish ? markdown.slice(m[0].length) : markdown;
}

/** Protects math and isolates GitBook tags on their own paragraphs, leaving fenced code untouched. */
export function prepareSource(markdown: string): Source {
  const math: Source['math'] = [];
  const placeholder = (formula: string, raw: string) => `$\uE000${math.push({ formula, raw }) - 1}\uE001$`;
  const lines = stripFrontMatter(markdown.replace(/[\uE000-\uE003]/g, '\uFFFD')).replace(/\r\n?/g, '\n').split('\n');
  const out: string[] = [];
  // The next `$$` line after each line, found in one pass from the end (a search forward from
  // every opening line would cost the square of the page's length).
  const closeAfter = new Array<number>(lines.length);
  for (let i = lines.length - 1, next = -1; i >= 0; i--) {
    closeAfter[i] = next;
    if (MATH_CLOSE.test(lines[i]!)) next = i;
  }
  let fence: { char: string; length: number } | null = null;
  let pre = false;
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i]!;
    // A `<pre>` block is code too (GitBook's form for highlighted lines): its lines stay as written.
    if (pre || (!fence && PRE_OPEN.test(line))) {
      pre = !/<\/pre>/i.test(line);
      out.push(line);
      continue;
    }
    if (fence) {
      const close = /^\s*(`+|~+)\s*$/.exec(line);
      if (close && close[1]![0] === fence.char && close[1]!.length >= fence.length) fence = null;
      out.push(line);
      continue;
    }
    const open = FENCE_OPEN.exec(line);
    if (open && !(open[2]![0] === '`' && open[3]!.includes('`'))) {
      fence = { char: open[2]![0]!, length: open[2]!.length };
      out.push(line);
      continue;
    }
    // `$$` lines become a fence, so the formula between them is read verbatim.
    const mathOpen = MATH_OPEN.exec(line);
    if (mathOpen) {
      const end = closeAfter[i]!;
      if (end > 0) {
        const body = lines.slice(i + 1, end);
        const ticks = '`'.repeat(Math.max(3, ...body.map((l) => Math.max(0, ...(l.match(/`+/g) ?? []).map((r) => r.length + 1)))));
        const closeIndent = MATH_CLOSE.exec(lines[end]!)![1]!;
        out.push(`${mathOpen[1]}${ticks}${MATH_INFO}`, ...body, `${closeIndent}${ticks}`);
        i = end;
        continue;
      }
    }
    // A tag gets a paragraph of its own, however the text around it is written.
    const quote = isolatedLine(line);
    if (quote !== null) {
      out.push(quote, line, quote);
      continue;
    }
    out.push(line.replace(INLINE_MATH, (raw, formula: string) => placeholder(formula, raw)));
  }
  return { text: out.join('\n'), math };
}
