import { parse as parseYaml } from 'yaml';

/**
 * Conversions of other documentation tools' Markdown idioms into GitBook Markdown (the format
 * git sync reads): pure functions of text, with warnings for what could not be kept. Fenced code
 * is never touched.
 */

export type Warn = (message: string) => void;

/** GitBook hint styles for admonition kinds of Docusaurus and Material for MkDocs. */
const HINT_STYLES: Record<string, 'info' | 'success' | 'warning' | 'danger'> = {
  note: 'info',
  info: 'info',
  abstract: 'info',
  summary: 'info',
  tldr: 'info',
  todo: 'info',
  seealso: 'info',
  question: 'info',
  help: 'info',
  faq: 'info',
  example: 'info',
  quote: 'info',
  cite: 'info',
  important: 'info',
  tip: 'success',
  hint: 'success',
  success: 'success',
  check: 'success',
  done: 'success',
  warning: 'warning',
  caution: 'warning',
  attention: 'warning',
  danger: 'danger',
  error: 'danger',
  failure: 'danger',
  fail: 'danger',
  missing: 'danger',
  bug: 'danger',
};

export function hintStyle(kind: string, warn?: Warn): string {
  const style = HINT_STYLES[kind.toLowerCase()];
  if (!style) warn?.(`admonition "${kind}" has no GitBook equivalent: imported as an info hint`);
  return style ?? 'info';
}

const quoteAttr = (s: string) => s.replace(/"/g, '&quot;');

/** Front matter (`---` YAML `---`) split from the body; YAML that cannot be read is a warning. */
export function splitFrontMatter(text: string, warn: Warn): { data: Record<string, unknown>; body: string } {
  const m = /^\uFEFF?---[ \t]*\r?\n([\s\S]*?)\r?\n---[ \t]*(?:\r?\n|$)/.exec(text);
  if (!m) return { data: {}, body: text.replace(/^\uFEFF/, '') };
  let data: Record<string, unknown> = {};
  try {
    const parsed = parseYaml(m[1]!);
    if (parsed && typeof parsed === 'object' && !Array.isArray(parsed)) data = parsed as Record<string, unknown>;
  } catch {
    warn('front matter is not valid YAML: ignored');
  }
  return { data, body: text.slice(m[0].length) };
}

/**
 * Whether `line` closes a fence opened by `open` (its marker and indentation): the same character,
 * at least as long, nothing after it, and indented at most 3 spaces more than the opening (so an
 * indented fence shown inside a fenced example does not close it, as in CommonMark).
 */
function closesFence(line: string, open: { marker: string; indent: number }): boolean {
  const m = /^([ \t]*)(`{3,}|~{3,})\s*$/.exec(line);
  return !!m && m[2]![0] === open.marker[0] && m[2]!.length >= open.marker.length && m[1]!.replace(/\t/g, '    ').length <= open.indent + 3;
}

const indentOf = (line: string) => /^[ \t]*/.exec(line)![0].replace(/\t/g, '    ').length;

/** Lines of a text with whether each one is inside fenced code (the fence lines themselves count as inside). */
function fenced(lines: string[]): boolean[] {
  const inside: boolean[] = [];
  let fence: { marker: string; indent: number } | null = null;
  for (const line of lines) {
    const m = /^\s*(`{3,}|~{3,})/.exec(line);
    if (fence === null && m) {
      fence = { marker: m[1]!, indent: indentOf(line) };
      inside.push(true);
    } else if (fence !== null) {
      inside.push(true);
      if (closesFence(line, fence)) fence = null;
    } else inside.push(false);
  }
  return inside;
}

/**
 * The line that closes a block opened before `from`: the first line `closes` matches outside the
 * blocks `opens` starts inside it (nested ones counted) and outside fenced code (`inside`, from
 * fenced()). -1 when none does.
 */
function closingLine(lines: string[], from: number, inside: boolean[], opens: (line: string) => boolean, closes: (line: string) => boolean): number {
  let depth = 0;
  for (let j = from; j < lines.length; j++) {
    if (inside[j]) continue;
    if (opens(lines[j]!)) depth++;
    else if (closes(lines[j]!)) {
      if (depth === 0) return j;
      depth--;
    }
  }
  return -1;
}

function dedent(lines: string[]): string[] {
  const indents = lines.filter((l) => l.trim()).map((l) => /^[ \t]*/.exec(l)![0].length);
  const n = indents.length ? Math.min(...indents) : 0;
  return lines.map((l) => l.slice(Math.min(n, /^[ \t]*/.exec(l)![0].length)));
}

function trimBlank(lines: string[]): string[] {
  let a = 0;
  let b = lines.length;
  while (a < b && !lines[a]!.trim()) a++;
  while (b > a && !lines[b - 1]!.trim()) b--;
  return lines.slice(a, b);
}

/**
 * Code fences with a title (```js title="app.js"```, Docusaurus and Material) become GitBook code
 * blocks with a title; line numbers are kept. Other fence attributes are dropped.
 */
export function convertCodeTitles(text: string): string {
  const lines = text.split(/\r?\n/);
  const out: string[] = [];
  let open: { fence: string; indent: string; wrapped: boolean } | null = null;
  for (const line of lines) {
    if (!open) {
      const m = /^(\s*)(`{3,}|~{3,})\s*([^\s`{=]*(?![^\s]*=))\s*(.*)$/.exec(line);
      if (m) {
        const [, indent, fence, lang, rest] = m as unknown as [string, string, string, string, string];
        const title = /(?:^|\s)title=(?:"([^"]*)"|'([^']*)'|(\S+))/.exec(rest);
        const numbers = /(?:^|\s)(showLineNumbers|linenums=\S+)/.test(rest);
        const wrapped = !!title || numbers;
        if (wrapped) {
          const attrs = [title ? `title="${quoteAttr(title[1] ?? title[2] ?? title[3] ?? '')}"` : '', numbers ? 'lineNumbers="true"' : ''].filter(Boolean).join(' ');
          out.push(`${indent}{% code ${attrs} %}`);
        }
        out.push(`${indent}${fence}${lang}`);
        open = { fence, indent, wrapped };
        continue;
      }
      out.push(line);
    } else {
      out.push(line);
      if (closesFence(line, { marker: open.fence, indent: indentOf(open.indent) })) {
        if (open.wrapped) out.push(`${open.indent}{% endcode %}`);
        open = null;
      }
    }
  }
  return out.join('\n');
}

// --- Docusaurus ---

/**
 * Docusaurus MDX to GitBook Markdown: `:::note Title` admonitions to hints, `<Tabs>`/`<TabItem>`
 * to tabs, `import`/`export` lines removed (each one a warning), other JSX components reported.
 */
export function docusaurusToGitbook(text: string, warn: Warn, opts: { mdx?: boolean } = {}): string {
  const mdx = opts.mdx ?? true;
  let lines = text.split(/\r?\n/);
  if (mdx) lines = unwrapMdxCodeBlocks(lines);
  // MDX imports and exports (outside code): in MDX only (plain Markdown keeps such lines as text).
  const inside = fenced(lines);
  lines = lines.filter((line, i) => {
    if (inside[i] || !mdx) return true;
    // An MDX comment alone on its line (`{/* prettier-ignore */}`) shows nothing.
    if (/^\s*\{\/\*[^]*?\*\/\}\s*$/.test(line)) return false;
    if (/^(import\s.+from\s+['"].+['"];?|import\s+['"].+['"];?)\s*$/.test(line)) {
      warn(`MDX import removed: ${line.trim().slice(0, 120)}`);
      return false;
    }
    if (/^export\s+(const|default|function|let)\b/.test(line)) {
      warn(`MDX export removed: ${line.trim().slice(0, 120)}`);
      return false;
    }
    return true;
  });
  if (mdx) lines = unwrapComponents(lines, warn);
  lines = convertAdmonitions(lines, warn);
  lines = convertTabs(lines, warn);
  lines = convertTabBlocks(lines);
  let out = lines.join('\n');
  // Components other than the ones converted are kept as text, reported once per name.
  const seen = new Set<string>();
  if (!mdx) return convertCodeTitles(out);
  const outInside = fenced(out.split('\n'));
  out.split('\n').forEach((line, i) => {
    if (outInside[i]) return;
    for (const m of line.matchAll(/<([A-Z][A-Za-z0-9.]*)\b/g)) {
      if (!seen.has(m[1]!)) {
        seen.add(m[1]!);
        warn(`MDX component <${m[1]}> has no GitBook equivalent: kept as text`);
      }
    }
  });
  return convertCodeTitles(out);
}

/**
 * ```` ```mdx-code-block ```` fences hold MDX that Docusaurus renders (the Docusaurus site writes
 * its live examples so): the fence goes, its content is read as the page's own.
 */
function unwrapMdxCodeBlocks(lines: string[]): string[] {
  if (!lines.some((l) => /^\s*(`{3,}|~{3,})\s*mdx-code-block\s*$/.test(l))) return lines;
  const out: string[] = [];
  let open: { marker: string; indent: number; unwrap: boolean } | null = null;
  for (const line of lines) {
    const m = /^\s*(`{3,}|~{3,})(.*)$/.exec(line);
    if (open) {
      if (closesFence(line, open)) {
        if (!open.unwrap) out.push(line);
        open = null;
      } else out.push(line);
      continue;
    }
    if (m) {
      open = { marker: m[1]!, indent: indentOf(line), unwrap: m[2]!.trim() === 'mdx-code-block' };
      if (!open.unwrap) out.push(line);
      continue;
    }
    out.push(line);
  }
  return out;
}

/**
 * A component that wraps content (`<BrowserWindow>` alone on its line … `</BrowserWindow>` alone on
 * its line), other than tabs: GitBook has no equivalent, so the wrapper goes (a warning per name)
 * and its content is read as the page's own (else the whole would be read as HTML).
 */
function unwrapComponents(lines: string[], warn: Warn): string[] {
  const inside = fenced(lines);
  const open = /^\s*<([A-Z][\w.]*)(\s[^<>]*)?>\s*$/;
  const warned = new Set<string>();
  const out: string[] = [];
  for (let i = 0; i < lines.length; i++) {
    const m = inside[i] ? null : open.exec(lines[i]!);
    if (!m || m[1] === 'Tabs' || m[1] === 'TabItem') {
      out.push(lines[i]!);
      continue;
    }
    const name = m[1]!;
    const opening = new RegExp(`^\\s*<${name}(\\s[^<>]*)?>\\s*$`);
    const closing = new RegExp(`^\\s*</${name}>\\s*$`);
    const end = closingLine(lines, i + 1, inside, (l) => opening.test(l), (l) => closing.test(l));
    if (end < 0) {
      out.push(lines[i]!);
      continue;
    }
    if (!warned.has(name)) {
      warned.add(name);
      warn(`MDX component <${name}> has no GitBook equivalent: its content is kept without it`);
    }
    out.push('', ...unwrapComponents(dedent(lines.slice(i + 1, end)), warn), '');
    i = end;
  }
  return out;
}

const kindTitle = (kind: string) => kind.charAt(0).toUpperCase() + kind.slice(1).toLowerCase();

/** Whether converted lines hold text a hint keeps (not only code, tabs or collapsibles). */
function hasText(lines: string[]): boolean {
  const inside = fenced(lines);
  return lines.some((l, i) => !inside[i] && l.trim() && !/^\s*(\{%|<\/?(details|summary)\b)/.test(l));
}

function convertAdmonitions(lines: string[], warn: Warn): string[] {
  const out: string[] = [];
  const inside = fenced(lines);
  for (let i = 0; i < lines.length; i++) {
    const m = inside[i] ? null : /^(\s*)(:{3,})(\w+)(?:\[(.*)\]|[ \t]+(.*))?\s*$/.exec(lines[i]!);
    if (!m || !HINT_STYLES[m[3]!.toLowerCase()] && !/^(note|tip|info|warning|danger|caution|important|success|secondary)$/.test(m[3]!)) {
      out.push(lines[i]!);
      continue;
    }
    const colons = m[2]!;
    const closing = new RegExp(`^\\s*:{${colons.length}}\\s*$`);
    const closed = closingLine(lines, i + 1, inside, (l) => /^\s*(:{3,})\w+/.exec(l)?.[1]!.length === colons.length, (l) => closing.test(l));
    // Not closed: it runs to the end of the page, as Docusaurus reads it.
    const j = closed < 0 ? lines.length : closed;
    if (closed < 0) warn(`admonition ":::${m[3]}" is not closed: it runs to the end of the page`);
    const inner = convertAdmonitions(trimBlank(dedent(lines.slice(i + 1, j))), warn);
    // Without a title of its own and without text (only code, say), the kind is its title, as Docusaurus shows it.
    const title = (m[4] ?? m[5] ?? '').trim() || (hasText(inner) ? '' : kindTitle(m[3]!));
    out.push(`${m[1]}{% hint style="${hintStyle(m[3]!, warn)}" %}`);
    if (title) out.push(`${m[1]}**${title}**`, '');
    out.push(...inner.map((l) => (l ? m[1] + l : l)));
    out.push(`${m[1]}{% endhint %}`);
    i = j;
  }
  return out;
}

function attr(tag: string, name: string): string | undefined {
  const m = new RegExp(`\\b${name}=(?:"([^"]*)"|'([^']*)'|\\{["'\`]([^"'\`]*)["'\`]\\})`).exec(tag);
  return m ? (m[1] ?? m[2] ?? m[3]) : undefined;
}

function convertTabs(lines: string[], warn: Warn): string[] {
  const text = lines.join('\n');
  if (!/<Tabs\b/.test(text)) return lines;
  const out: string[] = [];
  const inside = fenced(lines);
  for (let i = 0; i < lines.length; i++) {
    // The opening tag, on one line or over several (`<Tabs\n  values={[…]}>`).
    let openEnd = i;
    if (!inside[i] && /^\s*<Tabs\b[^>]*$/.test(lines[i]!)) {
      for (let k = i + 1; k < Math.min(lines.length, i + 30) && !inside[k]; k++) {
        if (/^[^<]*>\s*$/.test(lines[k]!)) {
          openEnd = k;
          break;
        }
      }
    }
    if (inside[i] || (openEnd === i && !/^\s*<Tabs\b[^>]*>\s*$/.test(lines[i]!))) {
      out.push(lines[i]!);
      continue;
    }
    // Labels given by the `values` prop ({label: 'Apple', value: 'apple'}), for items without their own.
    const valueLabels = new Map<string, string>();
    for (const v of lines.slice(i, openEnd + 1).join(' ').matchAll(/\{\s*label:\s*(['"])(.*?)\1\s*,\s*value:\s*(['"])(.*?)\3\s*\}/g)) valueLabels.set(v[4]!, v[2]!);
    // The matching </Tabs> (nested tabs counted).
    const end = closingLine(lines, openEnd + 1, inside, (l) => /^\s*<Tabs\b/.test(l), (l) => /^\s*<\/Tabs>\s*$/.test(l));
    if (end < 0) {
      warn('<Tabs> is not closed: kept as text');
      out.push(lines[i]!);
      continue;
    }
    const indent = /^\s*/.exec(lines[i]!)![0];
    const tabs: { title: string; body: string[] }[] = [];
    let current: { title: string; body: string[] } | null = null;
    let nested = 0;
    for (let j = openEnd + 1; j < end; j++) {
      const line = lines[j]!;
      if (!inside[j] && nested === 0) {
        const open = /^\s*<TabItem\b([^>]*)>(.*)$/.exec(line);
        if (open) {
          const value = attr(open[1]!, 'value');
          current = { title: attr(open[1]!, 'label') ?? (value !== undefined ? valueLabels.get(value) ?? value : undefined) ?? `Tab ${tabs.length + 1}`, body: [] };
          tabs.push(current);
          const rest = open[2]!.replace(/<\/TabItem>\s*$/, '');
          if (rest.trim()) current.body.push(rest.trim());
          if (/<\/TabItem>\s*$/.test(open[2]!)) current = null;
          continue;
        }
        if (/^\s*<\/TabItem>\s*$/.test(line)) {
          current = null;
          continue;
        }
      }
      if (!inside[j] && /^\s*<Tabs\b/.test(line)) nested++;
      if (!inside[j] && /^\s*<\/Tabs>/.test(line)) nested--;
      if (current) current.body.push(line);
    }
    out.push(`${indent}{% tabs %}`);
    for (const tab of tabs) {
      out.push(`${indent}{% tab title="${quoteAttr(tab.title)}" %}`);
      out.push(...convertTabs(trimBlank(dedent(tab.body)), warn).map((l) => (l ? indent + l : l)));
      out.push(`${indent}{% endtab %}`);
    }
    out.push(`${indent}{% endtabs %}`);
    i = end;
  }
  return out;
}

const LANGUAGE_NAMES: Record<string, string> = { js: 'JavaScript', jsx: 'JavaScript', javascript: 'JavaScript', ts: 'TypeScript', tsx: 'TypeScript', typescript: 'TypeScript', py: 'Python', python: 'Python', sh: 'Shell', bash: 'Bash', json: 'JSON', yaml: 'YAML', yml: 'YAML' };

/**
 * Code blocks marked `tab` (```` ```js tab title="a.js" ````, the docusaurus-remark-plugin-tab-blocks
 * idiom) that follow each other (blank lines between) become one set of tabs, each tab titled by
 * its `{"label": …}` or its language.
 */
function convertTabBlocks(lines: string[]): string[] {
  if (!lines.some((l) => /^\s*(`{3,}|~{3,})\S*\s.*\btab\b/.test(l))) return lines;
  type Block = { from: number; to: number; indent: string; fence: string; lang: string; rest: string };
  const blockAt = (i: number): Block | undefined => {
    const m = /^(\s*)(`{3,}|~{3,})([^\s`]*)(.*)$/.exec(lines[i] ?? '');
    if (!m) return undefined;
    let j = i + 1;
    for (; j < lines.length; j++) if (closesFence(lines[j]!, { marker: m[2]!, indent: indentOf(m[1]!) })) break;
    return { from: i, to: Math.min(j, lines.length - 1), indent: m[1]!, fence: m[2]!, lang: m[3]!, rest: m[4]! };
  };
  const isTab = (b: Block) => /(^|\s)tab(\s|$)/.test(b.rest);
  const out: string[] = [];
  for (let i = 0; i < lines.length; i++) {
    const first = blockAt(i);
    if (!first) {
      out.push(lines[i]!);
      continue;
    }
    if (!isTab(first)) {
      out.push(...lines.slice(i, first.to + 1));
      i = first.to;
      continue;
    }
    const run = [first];
    for (;;) {
      let k = run.at(-1)!.to + 1;
      while (k < lines.length && !lines[k]!.trim()) k++;
      const next = blockAt(k);
      if (!next || !isTab(next) || next.indent !== first.indent) break;
      run.push(next);
    }
    const pad = first.indent;
    out.push(`${pad}{% tabs %}`);
    for (const b of run) {
      const label = /\{[^}]*"label"\s*:\s*"([^"]*)"[^}]*\}/.exec(b.rest)?.[1];
      const title = label ?? LANGUAGE_NAMES[b.lang.toLowerCase()] ?? (b.lang || 'Code');
      const rest = b.rest.replace(/\{[^}]*\}/, '').replace(/(^|\s)tab(?=\s|$)/, ' ').replace(/\s+/g, ' ').trim();
      out.push(`${pad}{% tab title="${quoteAttr(title)}" %}`, `${pad}${b.fence}${b.lang}${rest ? ` ${rest}` : ''}`, ...lines.slice(b.from + 1, b.to + 1), `${pad}{% endtab %}`);
    }
    out.push(`${pad}{% endtabs %}`);
    i = run.at(-1)!.to;
  }
  return out;
}

// --- Material for MkDocs ---

/**
 * Material for MkDocs (Python-Markdown) to GitBook Markdown: `!!! note "Title"` admonitions to
 * hints, `??? note` / `???+ note` collapsibles to expandables, `=== "Tab"` content tabs to tabs,
 * titled code fences to code blocks.
 */
export function mkdocsToGitbook(text: string, warn: Warn): string {
  return convertCodeTitles(convertMkdocsBlocks(unwrapMarkdownDivs(text.split(/\r?\n/)), warn).join('\n'));
}

/**
 * `<div class="…" markdown>` … `</div>` (Python-Markdown's md_in_html, which Material uses for
 * results and grids): the wrapper goes, its Markdown stays (GitBook would read the whole as HTML).
 */
function unwrapMarkdownDivs(lines: string[]): string[] {
  if (!lines.some((l) => /<div\b[^>]*\smarkdown\b/.test(l))) return lines;
  const inside = fenced(lines);
  const stack: boolean[] = []; // for each open <div> line: is it a Markdown one (dropped)?
  const out: string[] = [];
  lines.forEach((line, i) => {
    if (inside[i]) return void out.push(line);
    if (/^\s*<div\b[^>]*>\s*$/.test(line)) {
      const md = /\smarkdown(\s*=\s*["']?(1|block)["']?)?[\s>]/.test(line);
      stack.push(md);
      if (!md) out.push(line);
      return;
    }
    if (/^\s*<\/div>\s*$/.test(line) && stack.length) {
      if (!stack.pop()) out.push(line);
      return;
    }
    out.push(line);
  });
  return out;
}

function indentedBlock(lines: string[], from: number, indent: number): number {
  let j = from;
  for (; j < lines.length; j++) {
    const line = lines[j]!;
    if (!line.trim()) continue;
    if (/^[ \t]*/.exec(line)![0].replace(/\t/g, '    ').length < indent + 4) break;
  }
  while (j > from && !lines[j - 1]!.trim()) j--;
  return j;
}

function convertMkdocsBlocks(lines: string[], warn: Warn): string[] {
  const out: string[] = [];
  const inside = fenced(lines);
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i]!;
    const adm = inside[i] ? null : /^(\s*)(!!!|\?\?\?\+?)\s+([\w-]+)(?:\s+[\w-]+)*(?:\s+"(.*)")?\s*$/.exec(line);
    if (adm) {
      const indent = adm[1]!.length;
      const end = indentedBlock(lines, i + 1, indent);
      const inner = convertMkdocsBlocks(trimBlank(dedent(lines.slice(i + 1, end))), warn);
      const pad = adm[1]!;
      const kind = adm[3]!;
      // Without a title and without text (only code, say), the kind is its title, as Material shows it.
      const title = adm[4] ?? (adm[2] === '!!!' && !hasText(inner) ? kindTitle(kind) : undefined);
      if (adm[2] === '!!!') {
        out.push(`${pad}{% hint style="${hintStyle(kind, warn)}" %}`);
        if (title) out.push(`${pad}**${title}**`, '');
        out.push(...inner.map((l) => (l ? pad + l : l)));
        out.push(`${pad}{% endhint %}`);
      } else {
        const summary = title ?? kind.charAt(0).toUpperCase() + kind.slice(1);
        out.push(`${pad}<details>`, '', `${pad}<summary>${summary}</summary>`, '');
        out.push(...inner.map((l) => (l ? pad + l : l)));
        out.push('', `${pad}</details>`);
      }
      i = end - 1;
      continue;
    }
    // A definition (Python-Markdown def_list, `:   text` with its blocks indented below): GitBook
    // has no definition lists, so its text and blocks follow the term as ordinary blocks.
    const def = inside[i] ? null : /^(\s*):[ \t]{1,3}(\S.*)$/.exec(line);
    if (def) {
      const indent = def[1]!.length;
      const end = indentedBlock(lines, i + 1, indent);
      const first = def[2]!;
      const inner = convertMkdocsBlocks(dedent([' '.repeat(indent + 4) + first, ...lines.slice(i + 1, end)].map((l) => (l.trim() ? l : ''))), warn);
      out.push(...inner.map((l) => (l ? def[1]! + l : l)));
      i = end - 1;
      continue;
    }
    const tab = inside[i] ? null : /^(\s*)===(!)?\s+"(.*)"\s*$/.exec(line);
    if (tab) {
      const indent = tab[1]!.length;
      const pad = tab[1]!;
      out.push(`${pad}{% tabs %}`);
      let j = i;
      for (;;) {
        const t = /^(\s*)===(!)?\s+"(.*)"\s*$/.exec(lines[j] ?? '');
        if (!t || t[1]!.length !== indent) break;
        const end = indentedBlock(lines, j + 1, indent);
        const inner = convertMkdocsBlocks(trimBlank(dedent(lines.slice(j + 1, end))), warn);
        out.push(`${pad}{% tab title="${quoteAttr(t[3]!)}" %}`, ...inner.map((l) => (l ? pad + l : l)), `${pad}{% endtab %}`);
        j = end;
        // The next tab of the same set may follow blank lines.
        let k = j;
        while (k < lines.length && !lines[k]!.trim()) k++;
        const next = /^(\s*)===(!)?\s+"(.*)"\s*$/.exec(lines[k] ?? '');
        if (next && next[1]!.length === indent && !next[2]) j = k;
        else break;
      }
      out.push(`${pad}{% endtabs %}`);
      i = j - 1;
      continue;
    }
    out.push(line);
  }
  return out;
}

const normLabel = (label: string) => label.trim().replace(/\s+/g, ' ').toLowerCase();

/**
 * Reference-style links and images (`[text][ref]`, `[text][]`, `[ref]` with a `[ref]: target
 * "title"` definition, as Material for MkDocs writes every link) become inline links, so that
 * their targets are rewritten to pages like any other link; the definitions they used are
 * removed. Footnotes, code and labels without a definition are left alone.
 */
export function inlineReferenceLinks(text: string): string {
  const lines = text.split(/\r?\n/);
  const inside = fenced(lines);
  const defs = new Map<string, { url: string; title?: string }>();
  const defLine = /^\s*\[([^\]^][^\]]*)\]:\s*<?([^\s>]+)>?(?:\s+(?:"([^"]*)"|'([^']*)'|\(([^)]*)\)))?\s*$/;
  lines.forEach((line, i) => {
    const m = inside[i] ? null : defLine.exec(line);
    if (m && !defs.has(normLabel(m[1]!))) defs.set(normLabel(m[1]!), { url: m[2]!, ...((m[3] ?? m[4] ?? m[5]) !== undefined ? { title: m[3] ?? m[4] ?? m[5] } : {}) });
  });
  if (!defs.size) return text;
  const used = new Set<string>();
  const inline = (label: string): string | undefined => {
    const d = defs.get(normLabel(label));
    if (!d) return undefined;
    used.add(normLabel(label));
    const url = /[\s()]/.test(d.url) ? `<${d.url}>` : d.url;
    return d.title !== undefined ? `(${url} "${d.title.replace(/"/g, '\\"')}")` : `(${url})`;
  };
  // Runs of lines outside code are rewritten together: a link's text may go over several lines.
  const replaceRun = (run: string): string => {
    const spans: string[] = [];
    const masked = run.replace(/(?<!`)(`+)(?!`)[^]*?(?<!`)\1(?!`)/g, (span) => `\u0000${spans.push(span) - 1}\u0000`);
    const replaced = masked.replace(/(!?)\[((?:[^\[\]\\]|\\.|\[[^\[\]]*\])*)\](?:\[([^\[\]]*)\])?(?![([])/g, (whole, bang: string, content: string, ref: string | undefined, at: number, all: string) => {
      if (content.startsWith('^') || all[at - 1] === '\\' || /\n\s*\n/.test(content)) return whole;
      const target = inline(ref ? ref : content);
      return target ? `${bang}[${content}]${target}` : whole;
    });
    return replaced.replace(/\u0000(\d+)\u0000/g, (_, n: string) => spans[Number(n)]!);
  };
  const out: string[] = [];
  let run: string[] = [];
  const flush = () => {
    if (run.length) out.push(...replaceRun(run.join('\n')).split('\n'));
    run = [];
  };
  lines.forEach((line, i) => {
    if (inside[i] || defLine.test(line)) {
      flush();
      out.push(line);
    } else run.push(line);
  });
  flush();
  // Definitions that were used go; others stay (Markdown shows none of them).
  return out.filter((line, i) => {
    const m = inside[i] ? null : defLine.exec(line);
    return !(m && used.has(normLabel(m[1]!)));
  }).join('\n');
}

/**
 * A GitBook hint may hold only text blocks (paragraphs, headings, lists, tables), so an admonition
 * that holds code blocks, tabs or collapsibles is split around them: its text stays in hints of its
 * style (the title in the first), the code blocks and tabs come between them at the same place,
 * as blocks. One warning per admonition split.
 */
export function splitHints(text: string, warn: Warn): string {
  if (!text.includes('{% hint')) return text;
  const lines = text.split('\n');
  const inside = fenced(lines);
  const out: string[] = [];
  for (let i = 0; i < lines.length; i++) {
    const open = inside[i] ? null : /^(\s*)\{%\s*hint\b[^%]*%\}\s*$/.exec(lines[i]!);
    if (!open) {
      out.push(lines[i]!);
      continue;
    }
    const pad = open[1]!;
    // Its end (hints inside it counted), and the blocks a hint may not hold.
    const end = closingLine(lines, i + 1, inside, (l) => /^\s*\{%\s*hint\b/.test(l), (l) => /^\s*\{%\s*endhint\s*%\}\s*$/.test(l));
    if (end < 0) {
      out.push(lines[i]!);
      continue;
    }
    const body = lines.slice(i + 1, end);
    const insideBody = inside.slice(i + 1, end);
    // Segments: text (a hint may hold it) or a block (fenced code with its {% code %} wrapper, tabs, details, a nested hint).
    const segments: { block: boolean; lines: string[] }[] = [];
    const push = (block: boolean, ls: string[]) => {
      const last = segments.at(-1);
      if (last && last.block === block && !block) last.lines.push(...ls);
      else segments.push({ block, lines: ls });
    };
    for (let k = 0; k < body.length; k++) {
      const l = body[k]!;
      const pair = (openRe: RegExp, closeRe: RegExp): number => closingLine(body, k + 1, insideBody, (b) => openRe.test(b), (b) => closeRe.test(b));
      let to = -1;
      const fenceOpen = /^\s*(`{3,}|~{3,})/.exec(l);
      if (fenceOpen) {
        to = body.length - 1;
        for (let m = k + 1; m < body.length; m++) {
          if (closesFence(body[m]!, { marker: fenceOpen[1]!, indent: indentOf(l) })) {
            to = m;
            break;
          }
        }
      } else if (/^\s*\{%\s*code\b/.test(l)) to = pair(/^\s*\{%\s*code\b/, /^\s*\{%\s*endcode\s*%\}/);
      else if (/^\s*\{%\s*tabs\s*%\}/.test(l)) to = pair(/^\s*\{%\s*tabs\s*%\}/, /^\s*\{%\s*endtabs\s*%\}/);
      else if (/^\s*\{%\s*hint\b/.test(l)) to = pair(/^\s*\{%\s*hint\b/, /^\s*\{%\s*endhint\s*%\}/);
      else if (/^\s*<details\b/i.test(l)) to = pair(/^\s*<details\b/i, /^\s*<\/details>/i);
      if (to >= k) {
        push(true, body.slice(k, to + 1));
        k = to;
      } else push(false, [l]);
    }
    if (!segments.some((sg) => sg.block)) {
      out.push(...lines.slice(i, end + 1));
      i = end;
      continue;
    }
    warn('an admonition holds code blocks, tabs or collapsibles, which a GitBook hint cannot hold: they follow its text as blocks, the rest of its text in a hint of the same style');
    for (const sg of segments) {
      if (sg.block) out.push('', ...sg.lines.map((l) => (l.startsWith(pad) ? l.slice(pad.length) : l)).map((l) => (l ? pad + l : l)), '');
      else if (sg.lines.some((l) => l.trim())) out.push(lines[i]!, ...trimBlank(sg.lines), `${pad}{% endhint %}`);
    }
    i = end;
  }
  return out.join('\n');
}

/** A plain Markdown file: only titled code fences change. */
export function plainToGitbook(text: string): string {
  return convertCodeTitles(text);
}
