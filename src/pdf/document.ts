import { SITE_CSS } from '../published-site/layout.ts';
import { escapeHtml, renderDocument, type RenderContext } from '../published-site/render.ts';
import type { GitBookDocument } from '../content/markdown/shared.ts';

/**
 * The HTML document a PDF is printed from: a title page, the table of contents, then every page
 * (its cover, title, description and body) starting on a new sheet (a group's title shares the sheet
 * of its first page). Page bodies are rendered by the
 * published site's renderer with the site's stylesheet, so the PDF reads like the site; each page's
 * ids are prefixed (`p3-…`) so that links between printed pages become links inside the PDF.
 */

/** One page to print. */
export interface PrintedPage {
  id: string;
  title: string;
  /** Depth in the printed tree (0: top). */
  depth: number;
  /** A group only titles the pages below it. */
  group: boolean;
  emoji?: string | undefined;
  description?: string | undefined;
  /** URL of the page's cover image (on the print origin). */
  cover?: string | undefined;
}

export interface PrintOptions {
  /** The document's title (title page, PDF metadata). */
  title: string;
  /** Under the title: what is printed (the page printed, the change request…). */
  subtitle?: string | undefined;
  /** When the printed content was last changed. */
  date: Date;
}

export interface BodyOptions {
  /** A file of the content (`/files/<id>` references): its URL on the print origin, name, type and size. */
  file(id: string): { url: string; name: string; contentType: string; size: number } | undefined;
  /** The value of a variable expression on this page, undefined when unknown. */
  expression(expression: string): string | undefined;
}

/** The anchor of a printed page, and the prefix of the ids inside it. */
const anchorOf = (index: number) => `p${index}`;

/** Rules for paper: sheets, breaks, and the screen-only parts of the site's styles undone. */
const PRINT_CSS = `
@page{size:A4}
html,body{background:#fff}
body{font-size:11pt;line-height:1.5;-webkit-print-color-adjust:exact;print-color-adjust:exact}
.print-page{break-before:page}
.print-page.group+.print-page{break-before:auto}
.print-page .cover{max-height:60mm;margin-bottom:8pt}
.title-page{display:flex;flex-direction:column;justify-content:center;min-height:230mm;text-align:left}
.title-page h1{font-size:32pt;line-height:1.2;margin:0 0 12pt}
.title-page .subtitle{font-size:14pt;color:var(--muted);margin:0 0 6pt}
.title-page .date{color:var(--muted);margin:0}
.contents{break-before:page}
.contents h2{font-size:20pt;margin:0 0 12pt}
.contents ol{list-style:none;margin:0;padding:0}
.contents li{margin:3pt 0}
.contents a{color:var(--fg);text-decoration:none}
.contents .group>span{font-weight:600;color:var(--muted)}
.print-page>h1{font-size:22pt;line-height:1.25;margin:0 0 8pt}
.print-page.group>h1{color:var(--muted)}
h2,h3,h4,h5,h6{break-after:avoid}
.anchor,.copy{display:none}
pre,table,figure,.hint,blockquote{break-inside:avoid}
.code pre{white-space:pre-wrap;overflow:visible;word-break:break-word}
.table-wrap{overflow:visible}
details>summary{list-style:none;font-weight:600}
details::details-content{content-visibility:visible;display:block}
a[href^="http"]{word-break:break-word}
`;

/** Where each page is in its list, by id (built once per list). */
const indexes = new WeakMap<readonly PrintedPage[], Map<string, number>>();

/** The HTML of page `at` of `pages`: links to printed pages lead to them in the document. */
export function pageBodyHtml(pages: readonly PrintedPage[], at: number, document: GitBookDocument, opts: BodyOptions): string {
  let index = indexes.get(pages);
  if (!index) indexes.set(pages, (index = new Map(pages.map((p, i) => [p.id, i]))));
  const ctx: RenderContext = {
    // A page printed here is a place in this document; one that is not printed, its title as text.
    pageUrl: (ref) => {
      if (ref.space) return undefined;
      const i = index!.get(ref.page);
      if (i === undefined) return undefined;
      return `#${encodeURIComponent(ref.anchor ? `${anchorOf(i)}-${ref.anchor}` : anchorOf(i))}`;
    },
    file: (id) => opts.file(id),
    // Everything a member can read is printed: there is no visitor, so every conditional block shows.
    condition: () => true,
    expression: (expression) => opts.expression(expression),
    pageTitle: (id) => pages[index!.get(id) ?? -1]?.title,
    idPrefix: `${anchorOf(at)}-`,
    print: true,
  };
  return renderDocument(document, ctx).html;
}

/** The HTML of the document to print, from its pages and their bodies (pageBodyHtml). */
export function printHtml(pages: readonly PrintedPage[], bodies: readonly string[], opts: PrintOptions): string {
  const contents = pages.map((page, i) => {
    const label = `${page.emoji ? `${escapeHtml(page.emoji)} ` : ''}${escapeHtml(page.title)}`;
    const indent = page.depth ? ` style="margin-left:${Math.min(page.depth, 6) * 14}pt"` : '';
    return page.group ? `<li class="group"${indent}><span>${label}</span></li>` : `<li${indent}><a href="#${anchorOf(i)}">${label}</a></li>`;
  });
  const printed = pages.map((page, i) => {
    const title = `<h1>${page.emoji ? `<span class="emoji">${escapeHtml(page.emoji)}</span> ` : ''}${escapeHtml(page.title)}</h1>`;
    const description = page.description ? `<p class="description">${escapeHtml(page.description)}</p>` : '';
    const cover = page.cover ? `<img class="cover" src="${escapeHtml(page.cover)}" alt="">` : '';
    return `<article class="page print-page${page.group ? ' group' : ''}" id="${anchorOf(i)}">${cover}${title}${description}${bodies[i] ?? ''}</article>`;
  });
  const date = opts.date.toISOString().slice(0, 10);
  const math = bodies.some((b) => b.includes('class="katex'));
  return `<!doctype html>
<html lang="en" data-theme="light">
<head>
<meta charset="utf-8">
<title>${escapeHtml(opts.title)}</title>
<style>${SITE_CSS}${PRINT_CSS}</style>
${math ? '<link rel="stylesheet" href="/katex/katex.min.css">' : ''}
</head>
<body>
<section class="title-page"><h1>${escapeHtml(opts.title)}</h1>${opts.subtitle ? `<p class="subtitle">${escapeHtml(opts.subtitle)}</p>` : ''}<p class="date"><time datetime="${date}">${date}</time></p></section>
<nav class="contents" aria-label="Contents"><h2>Contents</h2>${pages.length ? `<ol>${contents.join('')}</ol>` : '<p>There are no pages to print.</p>'}</nav>
${printed.join('\n')}
</body>
</html>`;
}

/** The footer of every sheet: the document's title and the page number. */
export function printFooter(title: string): string {
  return `<div style="font:8px system-ui,sans-serif;color:#6b6b70;width:100%;padding:0 16mm;display:flex;justify-content:space-between"><span>${escapeHtml(title)}</span><span><span class="pageNumber"></span> / <span class="totalPages"></span></span></div>`;
}
