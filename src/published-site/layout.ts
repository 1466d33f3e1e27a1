import { escapeHtml } from './render.ts';
import type { Heading } from './render.ts';
import type { NavPage } from './navigation.ts';

/**
 * The HTML page around a rendered document: header (site title or logo, sections as tabs, the
 * variant switcher, search, theme toggle), the page tree, the page, its table of contents,
 * breadcrumbs and previous/next links. Landmarks (`header`, `nav`, `main`, `aside`, `footer`)
 * and a skip link make it usable from the keyboard and by screen readers; it works without
 * JavaScript (site.js only adds tabs, copy buttons and the theme toggle).
 */

export interface Link {
  title: string;
  href: string;
  current?: boolean;
}

export interface PageView {
  siteTitle: string;
  /** Where the site's assets are (`…/_folio/`). */
  assets: string;
  home: string;
  logo?: { light?: string; dark?: string } | undefined;
  favicon?: string | undefined;
  primaryColor?: { light?: string; dark?: string } | undefined;
  announcement?: { message: string; href?: string | undefined } | undefined;
  headerLinks: Link[];
  sections: Link[];
  variants: Link[];
  tree: NavPage[];
  pageUrl(page: NavPage): string;
  currentPageId?: string | undefined;
  /** Pages whose children are listed: the current page and its ancestors. */
  openIds: Set<string>;
  title: string;
  description?: string | undefined;
  emoji?: string | undefined;
  cover?: string | undefined;
  html: string;
  headings: Heading[];
  breadcrumbs: Link[];
  previous?: Link | undefined;
  next?: Link | undefined;
  noIndex: boolean;
  searchUrl: string;
  query?: string | undefined;
  markdownUrl?: string | undefined;
  language: string;
  /** Scripts installed integrations inject; those using cookies wait for the visitor's consent. */
  scripts: { src: string; cookies: boolean }[];
  /** Where site.js sends the reader's events (views, searches, ratings), in batches. */
  eventsUrl?: string | undefined;
  /**
   * The "was this page helpful?" control (when the site's customization turns it on, or an
   * installation receives feedback; `comment`: it also takes a comment, for the installations).
   */
  feedback?: { action: string; page: string; comment: boolean } | undefined;
}

const color = (value: string | undefined) => (value && /^#[0-9a-fA-F]{3,8}$/.test(value) ? value : undefined);

function treeHtml(pages: NavPage[], view: PageView): string {
  if (!pages.length) return '';
  const items = pages.map((p) => {
    const label = `${p.emoji ? `<span class="emoji">${escapeHtml(p.emoji)}</span> ` : ''}${escapeHtml(p.title)}`;
    // A group is a heading with its pages always listed; a link goes where it points.
    if (p.entry.type === 'group') return `<li class="group"><span class="group-title">${label}</span>${treeHtml(p.children, view)}</li>`;
    if (p.entry.type === 'link') {
      const target = p.entry.target;
      const href = p.linkTo ? `${view.pageUrl(p.linkTo.page)}${p.linkTo.anchor ? `#${encodeURIComponent(p.linkTo.anchor)}` : ''}` : target?.kind === 'url' ? target.url : '#';
      return `<li><a href="${escapeHtml(href)}"${target?.kind === 'url' ? ' rel="noopener"' : ''}>${label}</a></li>`;
    }
    const current = p.id === view.currentPageId;
    const link = `<a href="${escapeHtml(view.pageUrl(p))}"${current ? ' aria-current="page"' : ''}>${p.emoji ? `<span class="emoji">${escapeHtml(p.emoji)}</span> ` : ''}${escapeHtml(p.title)}</a>`;
    // Only the branch being read is open: the page stays small however large the space.
    const open = view.openIds.has(p.id);
    return `<li${p.children.length ? ` class="${open ? 'open' : 'closed'}"` : ''}>${link}${open ? treeHtml(p.children, view) : ''}</li>`;
  });
  return `<ul>${items.join('')}</ul>`;
}

const links = (items: Link[], cls: string, label: string) =>
  items.length
    ? `<nav class="${cls}" aria-label="${escapeHtml(label)}"><ul>${items.map((l) => `<li><a href="${escapeHtml(l.href)}"${l.current ? ' aria-current="page"' : ''}>${escapeHtml(l.title)}</a></li>`).join('')}</ul></nav>`
    : '';

/**
 * Integration scripts. One that may use cookies is only named here (`data-src`): site.js loads it
 * once the visitor accepts cookies in the banner, and never if they decline.
 */
function integrationScripts(scripts: PageView['scripts']): string {
  return scripts
    .map((s) => (s.cookies ? `<meta name="folio-cookie-script" content="${escapeHtml(s.src)}">` : `<script src="${escapeHtml(s.src)}" defer></script>`))
    .join('\n');
}

const COOKIE_BANNER = `<div class="cookie-banner" role="region" aria-label="Cookies" data-cookie-banner hidden>
<p>This site uses cookies to deliver its services and to analyze traffic.</p>
<button type="button" data-cookies="accepted">Accept</button> <button type="button" data-cookies="declined">Decline</button>
</div>`;

/**
 * "Was this page helpful?": three buttons, each a complete answer (a form post without JavaScript,
 * then back to the page's thank-you note; site.js sends it in place as a reader event).
 */
function feedbackForm(feedback: NonNullable<PageView['feedback']>): string {
  const buttons = (
    [
      ['good', 'Yes'],
      ['ok', 'Somewhat'],
      ['bad', 'No'],
    ] as const
  )
    .map(([value, label]) => `<button type="submit" name="rating" value="${value}">${label}</button>`)
    .join(' ');
  const comment = feedback.comment ? '<label class="feedback-comment">Anything to add? (optional)<textarea name="comment" maxlength="512" rows="2"></textarea></label>' : '';
  return `<form class="feedback" method="post" action="${escapeHtml(feedback.action)}" data-feedback>
<p class="feedback-question" id="feedback-question">Was this page helpful?</p>
<input type="hidden" name="page" value="${escapeHtml(feedback.page)}">
<input type="hidden" name="referrer" value="">
${comment}<div class="feedback-ratings" role="group" aria-labelledby="feedback-question">${buttons}</div>
</form>
<p id="feedback-sent" class="feedback-sent" role="status">Thank you for your feedback.</p>`;
}

export function pageHtml(view: PageView): string {
  const light = color(view.primaryColor?.light);
  const dark = color(view.primaryColor?.dark) ?? light;
  const style = light ? `<style>:root{--primary:${light}}[data-theme="dark"]{--primary:${dark}}</style>` : '';
  const logo = view.logo?.light
    ? `<img class="logo logo-light" src="${escapeHtml(view.logo.light)}" alt="${escapeHtml(view.siteTitle)}">${view.logo.dark ? `<img class="logo logo-dark" src="${escapeHtml(view.logo.dark)}" alt="">` : ''}`
    : escapeHtml(view.siteTitle);
  // GitBook's page outline lists heading-1 and heading-2 blocks; heading-3 stays in the page only.
  const outline = view.headings.filter((h) => h.level <= 2);
  const toc = outline.length
    ? `<aside class="toc" aria-label="On this page"><p>On this page</p><ul>${outline.map((h) => `<li class="toc-${h.level}"><a href="#${escapeHtml(encodeURIComponent(h.id))}">${escapeHtml(h.text)}</a></li>`).join('')}</ul></aside>`
    : '';
  const pagination =
    view.previous || view.next
      ? `<nav class="pagination" aria-label="Previous and next pages">${view.previous ? `<a rel="prev" href="${escapeHtml(view.previous.href)}"><span>Previous</span> ${escapeHtml(view.previous.title)}</a>` : '<span></span>'}${view.next ? `<a rel="next" href="${escapeHtml(view.next.href)}"><span>Next</span> ${escapeHtml(view.next.title)}</a>` : ''}</nav>`
      : '';
  const breadcrumbs = view.breadcrumbs.length
    ? `<nav class="breadcrumbs" aria-label="Breadcrumbs"><ol>${view.breadcrumbs.map((b) => `<li><a href="${escapeHtml(b.href)}">${escapeHtml(b.title)}</a></li>`).join('')}</ol></nav>`
    : '';
  const variants = view.variants.length > 1
    ? `<nav class="variants" aria-label="Versions"><ul>${view.variants.map((v) => `<li><a href="${escapeHtml(v.href)}"${v.current ? ' aria-current="true"' : ''}>${escapeHtml(v.title)}</a></li>`).join('')}</ul></nav>`
    : '';
  const announcement = view.announcement
    ? `<div class="announcement" role="region" aria-label="Announcement">${view.announcement.href ? `<a href="${escapeHtml(view.announcement.href)}">${escapeHtml(view.announcement.message)}</a>` : escapeHtml(view.announcement.message)}</div>`
    : '';
  const title = view.title ? `${view.title} | ${view.siteTitle}` : view.siteTitle;
  return `<!doctype html>
<html lang="${escapeHtml(view.language)}" data-theme="light">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${escapeHtml(title)}</title>
${view.description ? `<meta name="description" content="${escapeHtml(view.description)}">` : ''}
${view.noIndex ? '<meta name="robots" content="noindex">' : ''}
<link rel="icon" href="${escapeHtml(view.favicon ?? 'data:,')}">
${view.markdownUrl ? `<link rel="alternate" type="text/markdown" href="${escapeHtml(view.markdownUrl)}">` : ''}
<link rel="stylesheet" href="${escapeHtml(view.assets)}site.css">
<link rel="stylesheet" href="${escapeHtml(view.assets)}katex/katex.min.css">
${style}
<script src="${escapeHtml(view.assets)}site.js" defer></script>
${view.eventsUrl ? `<meta name="folio-events" content="${escapeHtml(view.eventsUrl)}">` : ''}
${integrationScripts(view.scripts)}
</head>
<body>
<a class="skip" href="#content">Skip to content</a>
${announcement}
<header class="site-header">
<a class="site-title" href="${escapeHtml(view.home)}">${logo}</a>
${links(view.sections, 'sections', 'Sections')}
${links(view.headerLinks, 'header-links', 'Links')}
<form class="search" role="search" action="${escapeHtml(view.searchUrl)}" method="get"><label for="search-q" class="visually-hidden">Search</label><input id="search-q" type="search" name="q" placeholder="Search…" value="${escapeHtml(view.query ?? '')}"><button type="submit">Search</button></form>
<button type="button" class="theme-toggle" data-theme-toggle aria-label="Switch between light and dark theme" hidden>◐</button>
</header>
<div class="layout">
<nav class="sidebar" aria-label="Pages">${variants}${treeHtml(view.tree, view)}</nav>
<main id="content" tabindex="-1">
${breadcrumbs}
<article class="page">
${view.cover ? `<img class="cover" src="${escapeHtml(view.cover)}" alt="">` : ''}
<h1>${view.emoji ? `<span class="emoji">${escapeHtml(view.emoji)}</span> ` : ''}${escapeHtml(view.title)}</h1>
${view.description ? `<p class="description">${escapeHtml(view.description)}</p>` : ''}
${view.html}
${view.feedback ? feedbackForm(view.feedback) : ''}
</article>
${pagination}
</main>
${toc}
</div>
<footer class="site-footer"><p>${escapeHtml(view.siteTitle)}</p></footer>
${view.scripts.some((s) => s.cookies) ? COOKIE_BANNER : ''}
</body>
</html>`;
}

export const SITE_CSS = `
:root{--primary:#346ddb;--bg:#fff;--fg:#1d1d1f;--muted:#6b6b70;--border:#e4e4e7;--code-bg:#f6f6f7;--hint-info:#3b82f6;--hint-warning:#f59e0b;--hint-danger:#ef4444;--hint-success:#10b981}
[data-theme="dark"]{--bg:#111114;--fg:#ececf1;--muted:#a0a0aa;--border:#2c2c33;--code-bg:#1b1b20}
*{box-sizing:border-box}
body{margin:0;font:16px/1.6 system-ui,-apple-system,"Segoe UI",sans-serif;background:var(--bg);color:var(--fg)}
a{color:var(--primary)}
.skip{position:absolute;left:-999px}.skip:focus{left:8px;top:8px;background:var(--bg);padding:8px;z-index:10}
.visually-hidden{position:absolute;width:1px;height:1px;overflow:hidden;clip:rect(0 0 0 0)}
.announcement{background:var(--primary);color:#fff;padding:6px 16px;text-align:center}.announcement a{color:#fff}
.site-header{display:flex;gap:16px;align-items:center;flex-wrap:wrap;padding:12px 24px;border-bottom:1px solid var(--border)}
.site-title{font-weight:700;color:var(--fg);text-decoration:none}.logo{height:32px}
[data-theme="light"] .logo-dark,[data-theme="dark"] .logo-dark + .logo-light{display:none}[data-theme="dark"] .logo-light:has(+ .logo-dark){display:none}
.site-header nav ul{display:flex;gap:12px;list-style:none;margin:0;padding:0}
.site-header nav a[aria-current]{font-weight:700;text-decoration:underline}
.search{margin-left:auto;display:flex;gap:4px}.search input{padding:4px 8px;border:1px solid var(--border);border-radius:6px;background:var(--bg);color:var(--fg)}
.theme-toggle{background:none;border:1px solid var(--border);border-radius:6px;color:var(--fg);cursor:pointer}
.layout{display:grid;grid-template-columns:260px minmax(0,1fr) 220px;gap:32px;max-width:1400px;margin:0 auto;padding:24px}
@media (max-width:900px){.layout{grid-template-columns:1fr}.toc{display:none}}
.sidebar ul{list-style:none;padding-left:14px;margin:0}.sidebar>ul{padding-left:0}
.sidebar .group-title{display:block;margin-top:12px;padding:3px 6px;font-weight:600;color:var(--muted)}.sidebar a{display:block;padding:3px 6px;border-radius:6px;color:var(--fg);text-decoration:none}
.sidebar li.closed>a::after{content:" ›";color:var(--muted)}.sidebar a[aria-current]{background:var(--code-bg);color:var(--primary);font-weight:600}
.variants ul{display:flex;gap:8px;flex-wrap:wrap;padding:0;margin:0 0 12px}
.toc{font-size:14px}.toc ul{list-style:none;padding:0}.toc-2{padding-left:10px}.toc-3{padding-left:20px}
.breadcrumbs ol{display:flex;gap:6px;list-style:none;padding:0;font-size:14px}.breadcrumbs li+li::before{content:"/";margin-right:6px;color:var(--muted)}
.description{color:var(--muted);font-size:1.1em}.cover{width:100%;max-height:240px;object-fit:cover;border-radius:8px}
.anchor{margin-left:8px;opacity:0;text-decoration:none}h2:hover .anchor,h3:hover .anchor,h4:hover .anchor,.anchor:focus{opacity:1}
.hint{border-left:4px solid var(--hint-info);background:var(--code-bg);padding:8px 16px;margin:16px 0;border-radius:6px}
.hint-warning{border-color:var(--hint-warning)}.hint-danger{border-color:var(--hint-danger)}.hint-success{border-color:var(--hint-success)}
.hint-label{display:block;font-size:12px;text-transform:uppercase;color:var(--muted)}
.code{position:relative;margin:16px 0}.code pre{background:var(--code-bg);padding:12px 16px;border-radius:8px;overflow:auto}.code.wrap pre{white-space:pre-wrap}
.code-title{font-size:13px;color:var(--muted);padding:4px 0}.copy{position:absolute;top:8px;right:8px}
.tabs [role=tablist]{display:flex;gap:4px;border-bottom:1px solid var(--border)}
.tabs [role=tab]{background:none;border:0;padding:6px 12px;cursor:pointer;color:var(--fg)}.tabs [role=tab][aria-selected=true]{border-bottom:2px solid var(--primary);font-weight:600}
.js .tabs [role=tabpanel][data-inactive]{display:none}
html:not(.js) .tabs [role=tablist]{display:none}html:not(.js) .tabs [role=tabpanel]::before{content:attr(data-title);font-weight:700;display:block}
.stepper{counter-reset:step;list-style:none;padding-left:0}.step{counter-increment:step;border-left:2px solid var(--border);padding-left:24px;position:relative}
.step::before{content:counter(step);position:absolute;left:-12px;background:var(--primary);color:#fff;border-radius:50%;width:22px;height:22px;text-align:center;font-size:13px;line-height:22px}
.columns{display:flex;gap:24px;flex-wrap:wrap}.column{flex:1 1 0}
.cards{display:grid;grid-template-columns:repeat(auto-fill,minmax(220px,1fr));gap:16px}.card{display:block;border:1px solid var(--border);border-radius:8px;padding:12px;color:var(--fg);text-decoration:none}
.card-cover{width:100%;border-radius:6px}
.table-wrap{overflow-x:auto}table{border-collapse:collapse;width:100%}th,td{border:1px solid var(--border);padding:6px 10px;text-align:left}
figure{margin:16px 0}figure img{max-width:100%;height:auto}figcaption{color:var(--muted);font-size:14px}
.images.framed figure{border:1px solid var(--border);padding:8px;border-radius:8px}
.file,.embed,.content-ref,.openapi,.integration,.prompt{display:block;border:1px solid var(--border);border-radius:8px;padding:10px 14px;margin:12px 0}
.update{border-left:2px solid var(--border);padding-left:16px;margin:16px 0}.tag{display:inline-block;background:var(--code-bg);border-radius:4px;padding:0 6px;margin-right:4px;font-size:12px}
.button{display:inline-block;padding:4px 12px;border-radius:6px;background:var(--primary);color:#fff;text-decoration:none}.button-secondary{background:var(--code-bg);color:var(--fg)}
mark{background:none;color:inherit}.bg-yellow{background:#fef08a}.bg-warning{background:#fde68a}.color-red{color:#dc2626}.color-green{color:#16a34a}.color-blue{color:#2563eb}
.pagination{display:flex;justify-content:space-between;margin-top:32px;border-top:1px solid var(--border);padding-top:16px}
.pagination span{display:block;font-size:12px;color:var(--muted)}
.search-results li{margin-bottom:12px}
.search{position:relative}.search-live{position:absolute;top:100%;right:0;z-index:20;width:min(480px,90vw);max-height:70vh;overflow:auto;margin:4px 0 0;padding:4px;list-style:none;background:var(--bg);color:var(--fg);border:1px solid var(--border);border-radius:8px;box-shadow:0 4px 16px rgba(0,0,0,.15)}
.search-live a{display:block;padding:6px 8px;border-radius:6px;color:inherit;text-decoration:none}.search-live a:hover,.search-live a:focus{background:var(--border)}.search-live span{display:block;font-size:.85em;opacity:.85}
.search-results mark,.search-live mark{background:#fde68a;color:#1c1917;border-radius:2px}
.site-footer{border-top:1px solid var(--border);padding:16px 24px;color:var(--muted);font-size:14px}
.hljs-keyword,.hljs-built_in{color:#7c3aed}.hljs-string{color:#15803d}.hljs-number,.hljs-literal{color:#c2410c}.hljs-comment{color:var(--muted);font-style:italic}.hljs-title,.hljs-function{color:#2563eb}
[data-theme="dark"] .hljs-keyword{color:#c4b5fd}[data-theme="dark"] .hljs-string{color:#86efac}
.feedback{margin-top:40px;padding-top:16px;border-top:1px solid var(--border)}.feedback-question{font-weight:600;margin:0 0 6px}
.feedback-ratings button{padding:4px 14px;margin-right:6px;border:1px solid var(--border);border-radius:6px;background:var(--bg);color:var(--fg);cursor:pointer}.feedback-ratings button:hover,.feedback-ratings button:focus-visible{border-color:var(--primary)}.feedback-comment{display:block;margin:8px 0}.feedback-comment textarea{display:block;width:100%;max-width:480px;margin-top:4px;background:var(--bg);color:var(--fg);border:1px solid var(--border);border-radius:6px}
.feedback-sent{display:none;color:var(--muted)}.feedback-sent:target,.feedback-sent.shown{display:block}
.integration-block{border:1px solid var(--border);border-radius:8px;padding:12px 16px;margin:16px 0}.ck-vstack{display:flex;flex-direction:column;gap:8px}.ck-hstack{display:flex;flex-wrap:wrap;gap:8px}.ck-align-center{align-items:center}.ck-align-end{align-items:flex-end}
.ck-button{display:inline-block;padding:4px 12px;border:1px solid var(--border);border-radius:6px;text-decoration:none;color:var(--fg);background:var(--code-bg)}.ck-primary{background:var(--primary);color:#fff}.ck-danger{color:var(--hint-danger)}
.ck-card{display:block;border:1px solid var(--border);border-radius:8px;padding:8px 12px;color:var(--fg);text-decoration:none}.ck-card-title{font-weight:600;margin:0}.ck-card-hint{color:var(--muted);margin:0}
.ck-hint{color:var(--muted);font-size:.9em}.ck-image{max-width:100%}.ck-webframe{width:100%;border:0}.ck-divider{border:0;border-top:1px solid var(--border)}
.cookie-banner{position:fixed;bottom:16px;left:16px;right:16px;max-width:560px;background:var(--bg);color:var(--fg);border:1px solid var(--border);border-radius:8px;padding:12px 16px;box-shadow:0 4px 16px rgba(0,0,0,.15)}
`;

export const SITE_JS = `
(function () {
  var root = document.documentElement;
  root.classList.add('js');
  var stored = null;
  try { stored = localStorage.getItem('folio-theme'); } catch (e) {}
  var prefersDark = window.matchMedia && window.matchMedia('(prefers-color-scheme: dark)').matches;
  root.setAttribute('data-theme', stored || (prefersDark ? 'dark' : 'light'));
  document.addEventListener('DOMContentLoaded', function () {
    var toggle = document.querySelector('[data-theme-toggle]');
    if (toggle) {
      toggle.hidden = false;
      toggle.addEventListener('click', function () {
        var next = root.getAttribute('data-theme') === 'dark' ? 'light' : 'dark';
        root.setAttribute('data-theme', next);
        try { localStorage.setItem('folio-theme', next); } catch (e) {}
      });
    }
    document.querySelectorAll('.tabs').forEach(function (tabs) {
      var buttons = Array.prototype.slice.call(tabs.querySelectorAll('[role=tab]'));
      function select(i) {
        buttons.forEach(function (b, j) {
          b.setAttribute('aria-selected', String(i === j));
          b.tabIndex = i === j ? 0 : -1;
          var panel = document.getElementById(b.getAttribute('aria-controls'));
          if (panel) { if (i === j) panel.removeAttribute('data-inactive'); else panel.setAttribute('data-inactive', ''); }
        });
      }
      buttons.forEach(function (b, i) {
        b.addEventListener('click', function () { select(i); });
        b.addEventListener('keydown', function (e) {
          if (e.key === 'ArrowRight' || e.key === 'ArrowLeft') {
            var next = (i + (e.key === 'ArrowRight' ? 1 : buttons.length - 1)) % buttons.length;
            select(next); buttons[next].focus();
          }
        });
      });
    });
    // Reader events for the site's insights: batched, sent with sendBeacon (fetch keepalive when
    // it cannot, or when the reader waits for the answer), to the site itself only. A reader who
    // asks not to be tracked (Do Not Track, Global Privacy Control) sends only what they choose to
    // send: a rating.
    var eventsMeta = document.querySelector('meta[name="folio-events"]');
    var optOut = navigator.doNotTrack === '1' || window.doNotTrack === '1' || navigator.globalPrivacyControl === true;
    var queue = [];
    var flushTimer = null;
    var flush = function (waited) {
      clearTimeout(flushTimer);
      flushTimer = null;
      var sent = Promise.resolve(true);
      while (eventsMeta && queue.length) {
        var body = JSON.stringify({ events: queue.splice(0, 20) });
        if (!waited && navigator.sendBeacon && navigator.sendBeacon(eventsMeta.content, new Blob([body], { type: 'text/plain' }))) continue;
        sent = fetch(eventsMeta.content, { method: 'POST', keepalive: true, credentials: 'same-origin', headers: { 'content-type': 'text/plain' }, body: body })
          .then(function (res) { return res.ok; }, function () { return false; });
      }
      return sent;
    };
    var track = function (event, now) {
      if (!eventsMeta || (optOut && event.type !== 'page_post_feedback')) return Promise.resolve(false);
      // The page's address only: its query and fragment are not the site's to collect.
      event.url = (location.origin + location.pathname).slice(0, 2048);
      queue.push(event);
      if (now || queue.length >= 20) return flush(now);
      if (!flushTimer) flushTimer = setTimeout(flush, 3000);
      return Promise.resolve(true);
    };
    document.addEventListener('visibilitychange', function () { if (document.visibilityState === 'hidden') flush(); });
    window.addEventListener('pagehide', function () { flush(); });
    if (document.querySelector('article.page') && !document.querySelector('article.search-page')) track({ type: 'page_view', referrer: document.referrer.slice(0, 2048) });
    // A search is counted once the reader stops typing for a second, leaves the box or sends the form.
    var lastSearch = '';
    var searchPause = null;
    var trackSearch = function (q) {
      q = q.trim().slice(0, 512);
      if (q && q !== lastSearch) { lastSearch = q; track({ type: 'search_type_query', query: q }); }
    };

    // Results as the reader types: the search page's JSON (search.json), newest answer only.
    var searchForm = document.querySelector('form.search');
    var searchInput = searchForm && searchForm.querySelector('input[type=search]');
    if (searchInput && window.fetch) {
      var list = document.createElement('ul');
      list.className = 'search-live';
      list.hidden = true;
      list.setAttribute('aria-label', 'Search results');
      searchForm.appendChild(list);
      searchInput.setAttribute('autocomplete', 'off');
      var timer = null;
      var asked = 0;
      var show = function (results) {
        list.textContent = '';
        results.slice(0, 8).forEach(function (r) {
          var item = document.createElement('li');
          var link = document.createElement('a');
          link.href = r.url;
          var title = document.createElement('strong');
          title.textContent = r.section && r.section !== r.title ? r.title + ' › ' + r.section : r.title;
          link.appendChild(title);
          var snippet = document.createElement('span');
          var at = 0;
          (r.highlights || []).forEach(function (h) {
            if (h.start < at) return;
            snippet.appendChild(document.createTextNode(r.body.slice(at, h.start)));
            var mark = document.createElement('mark');
            mark.textContent = r.body.slice(h.start, h.end);
            snippet.appendChild(mark);
            at = h.end;
          });
          snippet.appendChild(document.createTextNode(r.body.slice(at)));
          link.appendChild(snippet);
          item.appendChild(link);
          list.appendChild(item);
        });
        list.hidden = results.length === 0;
      };
      searchForm.addEventListener('submit', function () { trackSearch(searchInput.value); });
      searchInput.addEventListener('blur', function () { clearTimeout(searchPause); trackSearch(searchInput.value); });
      searchInput.addEventListener('input', function () {
        clearTimeout(timer);
        clearTimeout(searchPause);
        var q = searchInput.value;
        searchPause = setTimeout(function () { trackSearch(q); }, 1000);
        if (!q.trim()) { list.hidden = true; return; }
        timer = setTimeout(function () {
          var mine = ++asked;
          fetch(searchForm.action + '.json?q=' + encodeURIComponent(q), { headers: { accept: 'application/json' } })
            .then(function (res) { return res.ok ? res.json() : { results: [] }; })
            .then(function (data) { if (mine === asked) show(data.results || []); }, function () {});
        }, 150);
      });
      searchInput.addEventListener('keydown', function (e) {
        if (e.key === 'Escape') list.hidden = true;
        if (e.key === 'ArrowDown' && !list.hidden && list.firstChild) { e.preventDefault(); list.querySelector('a').focus(); }
      });
      document.addEventListener('click', function (e) { if (!searchForm.contains(e.target)) list.hidden = true; });
    }
    var form = document.querySelector('[data-feedback]');
    if (form && eventsMeta && window.fetch) {
      form.elements.referrer.value = document.referrer;
      form.addEventListener('submit', function (e) {
        var rating = e.submitter && e.submitter.value;
        if (!rating) return;
        e.preventDefault();
        var feedback = { rating: rating };
        var comment = form.elements.comment ? form.elements.comment.value.trim() : '';
        if (comment) feedback.comment = comment.slice(0, 512);
        form.querySelectorAll('button').forEach(function (b) { b.disabled = true; b.setAttribute('aria-pressed', String(b === e.submitter)); });
        track({ type: 'page_post_feedback', feedback: feedback }, true).then(function (ok) {
          if (!ok) { form.querySelectorAll('button').forEach(function (b) { b.disabled = false; }); return; }
          form.hidden = true;
          var sent = document.getElementById('feedback-sent');
          if (sent) sent.classList.add('shown');
        });
      });
    }
    var consentScripts = document.querySelectorAll('meta[name="folio-cookie-script"]');
    if (consentScripts.length) {
      var loadScripts = function () {
        consentScripts.forEach(function (m) { var s = document.createElement('script'); s.src = m.content; document.head.appendChild(s); });
      };
      var choice = null;
      try { choice = localStorage.getItem('folio-cookies'); } catch (e) {}
      var banner = document.querySelector('[data-cookie-banner]');
      if (choice === 'accepted') loadScripts();
      else if (choice !== 'declined' && banner) {
        banner.hidden = false;
        banner.querySelectorAll('[data-cookies]').forEach(function (button) {
          button.addEventListener('click', function () {
            var value = button.getAttribute('data-cookies');
            try { localStorage.setItem('folio-cookies', value); } catch (e) {}
            banner.hidden = true;
            if (value === 'accepted') loadScripts();
          });
        });
      }
    }
    document.querySelectorAll('[data-copy]').forEach(function (button) {
      button.hidden = false;
      button.addEventListener('click', function () {
        var code = button.parentElement.querySelector('code');
        if (code && navigator.clipboard) navigator.clipboard.writeText(code.textContent || '').then(function () { button.textContent = 'Copied'; }, function () {});
      });
    });
  });
})();
`;
