import { Readability } from '@mozilla/readability';
import { parseHTML } from 'linkedom';
import TurndownService from 'turndown';

/**
 * HTML → GitBook Markdown (the git-sync format that src/content/markdown reads), for imports of
 * websites, HTML files, Word documents (through docx.ts) and Notion/Confluence exports.
 *
 * The page is parsed into a DOM (linkedom), cleaned (scripts, styles, forms, iframes and the
 * site's chrome dropped, each kind of dropped content named in `warnings`), the site idioms are
 * rewritten into marker elements (callouts and admonitions → hints, tab sets → tabs, `<details>`
 * and Notion toggles → expandables, code blocks with their language and title), then turndown
 * writes Markdown with rules for those markers and for GFM pipe tables.
 *
 * The Markdown has no `# Title` line: the title (the content's first `<h1>`, else the document's
 * `<title>`) is returned apart, for the page file's title line.
 */

export interface HtmlToMarkdownOptions {
  /** Resolves relative links and image sources. */
  baseUrl?: string;
  /** Keeps only the page's main content: `<article>`/`<main>`/`[role=main]`, else Readability's pick. */
  mainContent?: boolean;
  /** Rewrites an image source (absolute when baseUrl is given), e.g. to `.gitbook/assets/<name>`. */
  rewriteAsset?: (src: string) => string;
  /** Rewrites a link target (absolute when baseUrl is given), e.g. to another imported page's file. */
  rewriteLink?: (href: string) => string;
}

export interface HtmlToMarkdownResult {
  markdown: string;
  title?: string;
  warnings: string[];
  /** Image sources the Markdown refers to (after baseUrl resolution, before rewriteAsset), in order, once each. */
  assets: string[];
}

type HintStyle = 'info' | 'success' | 'warning' | 'danger';

// Admonition kinds of Docusaurus, MkDocs/Material, Confluence and GitHub, as GitBook hint styles.
const KIND_STYLE: Record<string, HintStyle> = {
  note: 'info', info: 'info', information: 'info', abstract: 'info', summary: 'info', tldr: 'info', todo: 'info', seealso: 'info',
  question: 'info', help: 'info', faq: 'info', example: 'info', quote: 'info', cite: 'info', important: 'info', secondary: 'info',
  tip: 'success', hint: 'success', success: 'success', check: 'success', done: 'success',
  warning: 'warning', caution: 'warning', attention: 'warning',
  danger: 'danger', error: 'danger', failure: 'danger', fail: 'danger', missing: 'danger', bug: 'danger',
};
// Confluence's macro names: "note" is its yellow one, "warning" its red one.
const CONFLUENCE_STYLE: Record<string, HintStyle> = { information: 'info', tip: 'success', note: 'warning', warning: 'danger' };

/** Elements dropped with a warning naming them; scripts and styles are never written. */
const UNCONVERTIBLE: Record<string, string> = {
  iframe: 'embedded frame', frame: 'frame', frameset: 'frameset', object: 'embedded object', embed: 'embedded object',
  applet: 'applet', form: 'form', video: 'video', audio: 'audio', canvas: 'canvas', svg: 'SVG drawing', math: 'MathML formula',
};
const SILENT = ['script', 'style', 'noscript', 'template', 'link', 'meta', 'base', 'head > title'];
/** Site chrome that is not the page's content (Docusaurus, MkDocs/Material, Sphinx, GitBook, Confluence, Notion). */
const CHROME = [
  'nav', 'footer', 'button', '[role=navigation]', '[aria-hidden=true]:not(details *)', '.headerlink', '.hash-link', '.anchor-link',
  '.theme-doc-breadcrumbs', '.theme-doc-footer', '.theme-doc-toc-mobile', '.pagination-nav', '.theme-edit-this-page', '.md-source-file',
  '.md-content__button', '.md-feedback', '.linenos', '.linenodiv', '#breadcrumb-section', '.page-metadata', '#likes-and-labels-container',
  '.pageSection.group', '#footer', '.copy-button', '.clipboard-button', '.sr-only', '.visually-hidden',
];

export function htmlToGitbookMarkdown(html: string, opts: HtmlToMarkdownOptions = {}): HtmlToMarkdownResult {
  const warnings: string[] = [];
  const assets: string[] = [];
  const warn = (message: string) => {
    if (!warnings.includes(message)) warnings.push(message);
  };
  const { document } = parseHTML(/<html[\s>]/i.test(html) ? html : `<!doctype html><html><head></head><body>${html}</body></html>`);
  const docTitle = cleanTitle(document.querySelector('title')?.textContent ?? '');

  // 1. Drop what can never be content.
  for (const selector of SILENT) for (const el of Array.from(document.querySelectorAll(selector))) el.remove();
  // Icons drawn in SVG are decoration, not content.
  for (const svg of Array.from(document.querySelectorAll('svg'))) {
    if (svg.getAttribute('aria-hidden') === 'true' || svg.closest('button, a, h1, h2, h3, h4, h5, h6, [class*="icon"], [class*="Icon"], [class*="admonition"], summary, nav, header, footer')) svg.remove();
  }
  for (const [tag, what] of Object.entries(UNCONVERTIBLE)) {
    const found = Array.from(document.querySelectorAll(tag));
    if (found.length === 0) continue;
    found.forEach((el) => el.remove());
    warn(`${found.length} ${what}${found.length > 1 ? 's' : ''} (<${tag}>) could not be converted and ${found.length > 1 ? 'were' : 'was'} left out`);
  }
  for (const el of Array.from(document.querySelectorAll('input, select, textarea'))) el.remove();

  // 2. The content root.
  let root: Element = document.body ?? document.documentElement;
  if (opts.mainContent) root = mainContent(document, warn) ?? root;
  for (const selector of CHROME) {
    try {
      for (const el of Array.from(root.querySelectorAll(selector))) if (!isInsideCode(el)) el.remove();
    } catch {
      // A selector the DOM does not support is skipped.
    }
  }

  // 3. The title: the content's first <h1> (Notion's and Confluence's page titles are theirs), else <title>.
  let title: string | undefined;
  const h1 = root.querySelector('h1');
  if (h1 && !h1.closest('details, aside, table, li')) {
    title = normalizeSpace(h1.textContent ?? '');
    // Confluence titles its pages "Space : Page".
    const confluence = /^.+? : (.+)$/.exec(title);
    if (h1.id === 'title-heading' && confluence) title = confluence[1]!;
    h1.remove();
  }
  title ||= docTitle || undefined;

  // 4. Site idioms → marker elements the rules below write.
  rewriteIdioms(document, root, warn);
  shiftHeadings(root);

  // 5. Markdown.
  const td = turndownService(opts, assets, warn);
  let markdown = td.turndown(root.innerHTML);
  markdown = markdown.replace(/\n{3,}/g, '\n\n').replace(/[ \t]+$/gm, '').trim();
  return { markdown: markdown ? `${markdown}\n` : '', ...(title ? { title } : {}), warnings, assets };
}

function normalizeSpace(text: string): string {
  return text.replace(/\s+/g, ' ').trim();
}

/** "Install | Docs" → "Install": a document title without the site's name. */
function cleanTitle(text: string): string {
  const t = normalizeSpace(text);
  const parts = t.split(/\s+[|–—·]\s+|\s+-\s+/);
  return (parts[0] ?? t).trim();
}

function isInsideCode(el: Element): boolean {
  return el.closest('pre, code') !== null;
}

function mainContent(document: Document, warn: (m: string) => void): Element | undefined {
  const candidates = ['article .md-content__inner', 'article', 'main', '[role=main]', '#main-content', '.page-body', '.wiki-content', '#content'];
  for (const selector of candidates) {
    const el = document.querySelector(selector);
    if (el && normalizeSpace(el.textContent ?? '').length > 0) {
      // A title kept outside the article (Confluence, Notion, some themes) stays the page's title.
      if (!el.querySelector('h1')) {
        const h1 = document.querySelector('h1');
        if (h1 && !el.contains(h1)) el.insertBefore(h1, el.firstChild);
      }
      return el;
    }
  }
  try {
    const clone = document.cloneNode(true) as Document;
    const article = new Readability(clone as unknown as Document, { keepClasses: true }).parse();
    if (article?.content) {
      const { document: picked } = parseHTML(`<!doctype html><html><body><article>${article.title ? `<h1>${escapeHtml(article.title)}</h1>` : ''}${article.content}</article></body></html>`);
      return picked.querySelector('article') ?? undefined;
    }
  } catch (err) {
    warn(`the main content could not be picked out (${(err as Error).message}); the whole page was converted`);
  }
  return undefined;
}

function escapeHtml(text: string): string {
  return text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');
}

function classes(el: Element): string[] {
  return (el.getAttribute('class') ?? '').split(/\s+/).filter(Boolean);
}

function marker(document: Document, kind: string, attrs: Record<string, string> = {}): HTMLElement {
  // Code is a <pre> so that turndown keeps its whitespace.
  const el = document.createElement(kind === 'code' ? 'pre' : 'div');
  el.setAttribute('data-folio', kind);
  for (const [k, v] of Object.entries(attrs)) el.setAttribute(`data-${k}`, v);
  return el;
}

function moveChildren(from: Element, to: Element): void {
  while (from.firstChild) to.appendChild(from.firstChild);
}

/** The hint style of a callout element, or undefined when it is not one. */
function calloutStyle(el: Element): HintStyle | undefined {
  const cls = classes(el);
  const tag = el.tagName.toLowerCase();
  // Confluence: confluence-information-macro confluence-information-macro-{information,tip,note,warning}
  if (cls.includes('confluence-information-macro')) {
    const kind = cls.find((c) => c.startsWith('confluence-information-macro-') && c !== 'confluence-information-macro-has-icon');
    return CONFLUENCE_STYLE[kind?.slice('confluence-information-macro-'.length) ?? ''] ?? 'info';
  }
  // Docusaurus 2/3: theme-admonition theme-admonition-{note,tip,info,warning,danger,caution}; 2.0 alpha: admonition admonition-note
  if (cls.includes('theme-admonition') || (tag === 'div' && cls.some((c) => /^admonition-\w+$/.test(c) && c !== 'admonition-title'))) {
    const kind = cls.find((c) => /^(theme-)?admonition-\w+$/.test(c) && c !== 'admonition-title' && c !== 'admonition-heading' && c !== 'admonition-content');
    return KIND_STYLE[kind?.replace(/^(theme-)?admonition-/, '') ?? ''] ?? 'info';
  }
  // MkDocs / Sphinx: <div class="admonition note">
  if (tag === 'div' && cls.includes('admonition')) return KIND_STYLE[cls.find((c) => KIND_STYLE[c]) ?? ''] ?? 'info';
  // GitHub: markdown-alert markdown-alert-note
  if (cls.includes('markdown-alert')) return KIND_STYLE[cls.find((c) => c.startsWith('markdown-alert-'))?.slice(15) ?? ''] ?? 'info';
  // Notion: <figure class="callout"> (exports) or <aside> (copied pages); generic .callout/.alert/.hint/.notice
  if (tag === 'aside' || cls.includes('callout') || (tag !== 'span' && cls.some((c) => c === 'alert' || c === 'notice' || c === 'hint'))) {
    const kind = cls.map((c) => c.replace(/^(alert|callout|hint|notice)[-_]+/, '')).find((c) => KIND_STYLE[c]);
    if (kind) return KIND_STYLE[kind];
    const color = cls.find((c) => c.startsWith('block-color-')) ?? '';
    if (/red/.test(color)) return 'danger';
    if (/(yellow|orange)/.test(color)) return 'warning';
    if (/green/.test(color)) return 'success';
    return 'info';
  }
  return undefined;
}

/** The title element of a callout (an admonition heading), when it has one. */
function calloutTitle(el: Element): Element | undefined {
  for (const child of Array.from(el.children)) {
    const cls = classes(child);
    if (
      cls.includes('admonition-title') ||
      cls.some((c) => /^admonitionHeading/.test(c) || c === 'admonition-heading') ||
      cls.includes('confluence-information-macro-title') ||
      cls.includes('markdown-alert-title') ||
      cls.includes('alert-title') ||
      cls.includes('callout-title') ||
      (cls.includes('title') && child.tagName.toLowerCase() === 'p')
    )
      return child;
  }
  return undefined;
}

function rewriteIdioms(document: Document, root: Element, warn: (m: string) => void): void {
  // Line-numbered code (Pygments' highlighttable): keep only the code cell.
  for (const table of Array.from(root.querySelectorAll('table.highlighttable, table.rouge-table'))) {
    const code = table.querySelector('td.code pre, td.rouge-code pre');
    if (code) table.replaceWith(code);
  }

  // Code blocks: <pre> with its language and title.
  for (const pre of Array.from(root.querySelectorAll('pre'))) {
    if (pre.closest('[data-folio=code]')) continue;
    const code = pre.querySelector('code') ?? pre;
    const language = codeLanguage(pre, code);
    const container = pre.closest('.codeBlockContainer, [class*="codeBlockContainer"], .highlight, div[class*="language-"], figure, .code-block, .codeContent');
    let title = '';
    const titleEl = container?.querySelector('.codeBlockTitle, [class*="codeBlockTitle"], .filename, figcaption, .code-title, [data-rehype-pretty-code-title]');
    if (titleEl && !titleEl.contains(pre)) {
      title = normalizeSpace(titleEl.textContent ?? '');
      titleEl.remove();
    }
    title ||= pre.getAttribute('data-title') ?? code.getAttribute('data-title') ?? '';
    const m = marker(document, 'code', { language, title });
    m.textContent = codeText(code);
    pre.replaceWith(m);
  }

  // Tabs (ARIA tablists: Docusaurus, many themes; Material for MkDocs' tabbed sets).
  for (const set of Array.from(root.querySelectorAll('.tabbed-set')).reverse()) {
    const labels = Array.from(set.querySelectorAll(':scope > label, :scope > .tabbed-labels > label')).map((l) => normalizeSpace(l.textContent ?? ''));
    let panels = Array.from(set.querySelectorAll(':scope > .tabbed-content > .tabbed-block'));
    if (panels.length === 0) panels = Array.from(set.querySelectorAll(':scope > .tabbed-content'));
    replaceTabs(document, set, labels, panels);
  }
  for (const list of Array.from(root.querySelectorAll('[role=tablist]')).reverse()) {
    const container = list.parentElement;
    if (!container || !container.isConnected) continue;
    const tabs = Array.from(list.querySelectorAll('[role=tab]'));
    const labels = tabs.map((t) => normalizeSpace(t.textContent ?? ''));
    let scope: Element | null = container;
    let panels: Element[] = [];
    // The panels sit beside the tab list, or one level further (Docusaurus wraps them in a div).
    for (let depth = 0; scope && depth < 2 && panels.length === 0; depth++, scope = scope.parentElement) {
      panels = Array.from(scope.querySelectorAll('[role=tabpanel]')).filter((p) => !p.parentElement?.closest('[role=tabpanel]') || !scope!.contains(p.parentElement.closest('[role=tabpanel]')));
    }
    if (panels.length === 0) continue;
    const setRoot = panels[0]!.parentElement && container.contains(panels[0]!) ? container : (container.parentElement ?? container);
    replaceTabs(document, setRoot, labels, panels);
  }

  // Callouts → hints.
  const callouts = Array.from(root.querySelectorAll('div, aside, figure, section, blockquote, p')).filter((el) => el.getAttribute('data-folio') === null && calloutStyle(el) !== undefined);
  for (const el of callouts.reverse()) {
    if (!el.isConnected) continue;
    const style = calloutStyle(el)!;
    const hint = marker(document, 'hint', { style });
    const titleEl = calloutTitle(el);
    if (titleEl) {
      const text = normalizeSpace(titleEl.textContent ?? '');
      titleEl.remove();
      // A title other than the kind's name ("Note", "Tip"…) is kept as the hint's first line.
      if (text && !KIND_STYLE[text.toLowerCase()] && !CONFLUENCE_STYLE[text.toLowerCase()]) {
        const p = document.createElement('p');
        const strong = document.createElement('strong');
        strong.textContent = text;
        p.appendChild(strong);
        hint.appendChild(p);
      }
    }
    // Icons (Notion's emoji, Confluence's and Docusaurus' icon spans) are decoration.
    for (const icon of Array.from(el.querySelectorAll('.icon, .aui-icon, [class*="admonitionIcon"], .notion-record-icon'))) icon.remove();
    moveChildren(el, hint);
    el.replaceWith(hint);
  }

  // Icons beside link texts and page titles (Notion) are decoration.
  for (const icon of Array.from(root.querySelectorAll('.link-to-page .icon, .page-header-icon'))) icon.remove();
  // An image that links to itself (or to another image file) is just the image.
  for (const a of Array.from(root.querySelectorAll('a[href]'))) {
    const imgs = a.querySelectorAll('img');
    if (imgs.length !== 1 || normalizeSpace(a.textContent ?? '') !== '') continue;
    const href = a.getAttribute('href') ?? '';
    if (href === imgs[0]!.getAttribute('src') || /\.(png|jpe?g|gif|webp|svg|bmp)(\?.*)?$/i.test(href)) a.replaceWith(imgs[0]!);
  }

  // Notion toggles: <ul class="toggle"><li><details>…</details></li></ul> → the details themselves.
  for (const list of Array.from(root.querySelectorAll('ul.toggle'))) {
    const details = Array.from(list.querySelectorAll(':scope > li > details'));
    if (details.length === 0) continue;
    for (const d of details) list.parentNode?.insertBefore(d, list);
    list.remove();
  }
  // Expandables: <details><summary> (MkDocs' ??? collapsibles are <details class="note">).
  for (const details of Array.from(root.querySelectorAll('details')).reverse()) {
    const summary = details.querySelector(':scope > summary');
    const m = marker(document, 'expandable', { title: normalizeSpace(summary?.textContent ?? '') || 'Details', open: details.hasAttribute('open') ? 'true' : '' });
    summary?.remove();
    moveChildren(details, m);
    details.replaceWith(m);
  }
  void warn;
}

function replaceTabs(document: Document, container: Element, labels: string[], panels: Element[]): void {
  const tabs = marker(document, 'tabs');
  panels.forEach((panel, i) => {
    const tab = marker(document, 'tab', { title: labels[i] || `Tab ${i + 1}` });
    moveChildren(panel, tab);
    tabs.appendChild(tab);
  });
  container.replaceWith(tabs);
}

function codeLanguage(pre: Element, code: Element): string {
  const sources = [code, pre, pre.parentElement, pre.parentElement?.parentElement, pre.closest('[class*="language-"]')];
  for (const el of sources) {
    if (!el) continue;
    for (const c of classes(el)) {
      const m = /^(?:language|lang|highlight-source|highlight)-([\w+#.-]+)$/.exec(c);
      if (m && m[1] !== 'plaintext' && m[1] !== 'text' && m[1] !== 'none') return m[1]!.toLowerCase();
    }
    const lang = el.getAttribute('data-lang') ?? el.getAttribute('data-language');
    if (lang) return lang.toLowerCase();
    // Confluence: data-syntaxhighlighter-params="brush: java; gutter: false"
    const brush = /brush:\s*([\w+#-]+)/.exec(el.getAttribute('data-syntaxhighlighter-params') ?? el.getAttribute('class') ?? '');
    if (brush) return brush[1]!.toLowerCase();
  }
  return '';
}

/** A code element's text: `<br>` are line breaks (Docusaurus' token lines end with one). */
function codeText(el: Node): string {
  let out = '';
  const walk = (node: Node) => {
    if (node.nodeType === 3) out += node.nodeValue ?? '';
    else if (node.nodeType === 1) {
      const tag = (node as Element).tagName.toLowerCase();
      if (tag === 'br') out += '\n';
      else {
        const block = tag === 'div' || (tag === 'span' && classes(node as Element).includes('line'));
        for (const child of Array.from(node.childNodes)) walk(child);
        if (block && !out.endsWith('\n')) out += '\n';
      }
    }
  };
  walk(el);
  return out.replace(/\u00a0/g, ' ').replace(/\n+$/, '');
}

/** Body headings as GitBook levels: the shallowest level left becomes `##` (heading-1), then `###`, then `####`. */
function shiftHeadings(root: Element): void {
  const headings = Array.from(root.querySelectorAll('h1, h2, h3, h4, h5, h6'));
  if (headings.length === 0) return;
  const top = Math.min(...headings.map((h) => Number(h.tagName[1])));
  for (const h of headings) {
    const level = Math.min(4, Number(h.tagName[1]) - top + 2);
    h.setAttribute('data-level', String(level));
  }
}

/** Child elements, read through childNodes (turndown's DOM has no iterable `children`). */
function elementChildren(el: Element): Element[] {
  return Array.from(el.childNodes).filter((n): n is Element => n.nodeType === 1);
}

function attr(node: Element, name: string): string {
  return node.getAttribute(`data-${name}`) ?? '';
}

/** A Liquid attribute value: GitBook's tags read "…" values without escapes. */
function liquidValue(text: string): string {
  return text.replace(/"/g, '\u201d').replace(/%\}/g, '% }');
}

function fence(code: string): string {
  let ticks = '```';
  while (code.includes(ticks)) ticks += '`';
  return ticks;
}

function turndownService(opts: HtmlToMarkdownOptions, assets: string[], warn: (m: string) => void): TurndownService {
  const td = new TurndownService({
    headingStyle: 'atx',
    codeBlockStyle: 'fenced',
    bulletListMarker: '-',
    emDelimiter: '*',
    strongDelimiter: '**',
    hr: '---',
    linkStyle: 'inlined',
    // A backslash hard break: trailing spaces would be trimmed away.
    br: '\\',
  });
  const baseEscape = td.escape.bind(td);
  // Text must stay text: `<` would open HTML and a line starting `{%` a GitBook tag.
  td.escape = (text: string) => baseEscape(text).replace(/</g, '\\<').replace(/\{%/g, '\\{%').replace(/\|/g, '\\|');

  const resolve = (url: string): string => {
    if (!opts.baseUrl || url.startsWith('#')) return url;
    try {
      return new URL(url, opts.baseUrl).href;
    } catch {
      return url;
    }
  };
  const image = (el: Element): string | undefined => {
    const raw = el.getAttribute('src') ?? el.getAttribute('data-src') ?? '';
    if (!raw) return undefined;
    if (/^data:/i.test(raw)) {
      warn('an image embedded in the page (data: URL) was left out');
      return undefined;
    }
    if (/^(javascript|vbscript):/i.test(raw)) return undefined;
    let src = resolve(raw);
    // A path inside an export or upload (no baseUrl) is named as the file is: decoded.
    if (!/^[a-z][a-z0-9+.-]*:/i.test(src) && !src.startsWith('//')) {
      try {
        src = decodeURIComponent(src);
      } catch {
        // Kept as written.
      }
    }
    if (!assets.includes(src)) assets.push(src);
    return opts.rewriteAsset ? opts.rewriteAsset(src) : src;
  };
  const mdUrl = (url: string) => (/[\s()<>]/.test(url) ? `<${url.replace(/[<>]/g, encodeURIComponent)}>` : url);

  td.addRule('folio-heading', {
    filter: (node) => /^H[1-6]$/.test(node.nodeName) && node.getAttribute('data-level') !== null,
    replacement: (content, node) => {
      const text = content.replace(/\n+/g, ' ').trim();
      // The heading's id stays its anchor (GitBook's `## Title <a href="#id" id="id"></a>`), so `#id` links keep working.
      const id = (node as Element).getAttribute('id') ?? '';
      const anchor = /^[A-Za-z0-9_-]{1,100}$/.test(id) ? ` <a href="#${id}" id="${id}"></a>` : '';
      return text ? `\n\n${'#'.repeat(Number((node as Element).getAttribute('data-level')))} ${text}${anchor}\n\n` : '';
    },
  });
  td.addRule('folio-code', {
    filter: (node) => node.nodeName === 'PRE' && node.getAttribute('data-folio') === 'code',
    replacement: (_content, node) => {
      const el = node as Element;
      const code = el.textContent ?? '';
      const ticks = fence(code);
      const block = `${ticks}${attr(el, 'language')}\n${code}\n${ticks}`;
      const title = attr(el, 'title');
      return title ? `\n\n{% code title="${liquidValue(title)}" %}\n${block}\n{% endcode %}\n\n` : `\n\n${block}\n\n`;
    },
  });
  td.addRule('folio-hint', {
    filter: (node) => node.nodeName === 'DIV' && node.getAttribute('data-folio') === 'hint',
    replacement: (content, node) => {
      const body = content.trim();
      return body ? `\n\n{% hint style="${attr(node as Element, 'style')}" %}\n${body}\n{% endhint %}\n\n` : '';
    },
  });
  td.addRule('folio-tabs', {
    filter: (node) => node.nodeName === 'DIV' && node.getAttribute('data-folio') === 'tabs',
    replacement: (content) => `\n\n{% tabs %}\n${content.trim()}\n{% endtabs %}\n\n`,
  });
  td.addRule('folio-tab', {
    filter: (node) => node.nodeName === 'DIV' && node.getAttribute('data-folio') === 'tab',
    replacement: (content, node) => `\n\n{% tab title="${liquidValue(attr(node as Element, 'title'))}" %}\n${content.trim()}\n{% endtab %}\n\n`,
  });
  td.addRule('folio-expandable', {
    filter: (node) => node.nodeName === 'DIV' && node.getAttribute('data-folio') === 'expandable',
    replacement: (content, node) => {
      const el = node as Element;
      const open = attr(el, 'open') ? '<details open>' : '<details>';
      return `\n\n${open}\n\n<summary>${escapeHtml(attr(el, 'title'))}</summary>\n\n${content.trim()}\n\n</details>\n\n`;
    },
  });
  td.addRule('folio-figure', {
    filter: (node) => node.nodeName === 'FIGURE' && node.getElementsByTagName('img').length === 1 && node.getElementsByTagName('figcaption').length > 0,
    replacement: (_content, node) => {
      const el = node as Element;
      const img = el.getElementsByTagName('img')[0]!;
      const src = image(img);
      if (!src) return '';
      const caption = escapeHtml(normalizeSpace(el.getElementsByTagName('figcaption')[0]?.textContent ?? ''));
      return `\n\n<figure><img src="${escapeHtml(src.replace(/ /g, "%20"))}" alt="${escapeHtml(img.getAttribute('alt') ?? '')}"><figcaption>${caption ? `<p>${caption}</p>` : ''}</figcaption></figure>\n\n`;
    },
  });
  td.addRule('folio-image', {
    filter: 'img',
    replacement: (_content, node) => {
      const el = node as Element;
      const src = image(el);
      if (!src) return '';
      const alt = (el.getAttribute('alt') ?? '').replace(/[[\]\\]/g, '\\$&').replace(/\n/g, ' ');
      return `![${alt}](${mdUrl(src)})`;
    },
  });
  td.addRule('folio-link', {
    filter: (node) => node.nodeName === 'A' && node.getAttribute('href') !== null,
    replacement: (content, node) => {
      const raw = (node as Element).getAttribute('href')!.trim();
      const text = content.trim();
      if (/^(javascript|vbscript|data):/i.test(raw) || raw === '') return content;
      if (!text) return '';
      let href = resolve(raw);
      if (opts.rewriteLink) href = opts.rewriteLink(href);
      return `[${text}](${mdUrl(href)})`;
    },
  });
  td.addRule('folio-table', {
    filter: 'table',
    replacement: (_content, node) => `\n\n${pipeTable(node as Element, td, warn)}\n\n`,
  });
  td.addRule('folio-strike', {
    filter: (node) => ['DEL', 'S', 'STRIKE'].includes(node.nodeName),
    replacement: (content) => (content.trim() ? `~~${content}~~` : ''),
  });
  td.addRule('folio-inline-html', {
    filter: ['sup', 'sub', 'kbd', 'mark'],
    replacement: (content, node) => {
      const tag = node.nodeName.toLowerCase();
      return content.trim() ? `<${tag}>${content}</${tag}>` : '';
    },
  });
  td.addRule('folio-task', {
    filter: (node) => node.nodeName === 'INPUT' && node.getAttribute('type') === 'checkbox',
    replacement: (_content, node) => ((node as Element).hasAttribute('checked') ? '[x] ' : '[ ] '),
  });
  return td;
}

/** A GFM pipe table: the first row is the header (GitBook tables always have one); cells are one line. */
function pipeTable(table: Element, td: TurndownService, warn: (m: string) => void): string {
  const rows: Element[] = [];
  const collect = (el: Element) => {
    for (const child of elementChildren(el)) {
      const tag = child.tagName.toLowerCase();
      if (tag === 'tr') rows.push(child);
      else if (tag === 'thead' || tag === 'tbody' || tag === 'tfoot') collect(child);
    }
  };
  collect(table);
  const grid: string[][] = [];
  for (const row of rows) {
    const cells: string[] = [];
    for (const cell of elementChildren(row).filter((c) => /^t[hd]$/i.test(c.tagName))) {
      if (cell.getElementsByTagName('table').length > 0) warn('a table inside a table cell was flattened to text');
      let text: string;
      if (['ul', 'ol', 'pre'].some((t) => cell.getElementsByTagName(t).length > 0) || Array.from(cell.getElementsByTagName('div')).some((d) => d.getAttribute('data-folio') !== null)) {
        warn('block content inside a table cell (lists, code, callouts) was flattened to text');
        text = td.escape(normalizeSpace(cell.textContent ?? ''));
      } else {
        text = td.turndown(cell.innerHTML).trim().replace(/\\\n|\n{2,}/g, '<br>').replace(/\n/g, ' ');
      }
      text = text.replace(/(^|[^\\])\|/g, '$1\\|');
      const span = Math.max(1, Math.min(50, Number(cell.getAttribute('colspan') ?? 1) || 1));
      cells.push(text, ...Array<string>(span - 1).fill(''));
    }
    if (cells.length > 0) grid.push(cells);
  }
  if (grid.length === 0) return '';
  const width = Math.max(...grid.map((r) => r.length));
  const line = (cells: string[]) => `| ${[...cells, ...Array<string>(width - cells.length).fill('')].map((c) => c || ' ').join(' | ')} |`;
  return [line(grid[0]!), `|${' --- |'.repeat(width)}`, ...grid.slice(1).map(line)].join('\n');
}
