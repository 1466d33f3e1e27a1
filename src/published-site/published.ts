import { createHash } from 'node:crypto';
import type { Blobs } from '../platform/blob-store.ts';
import { setTimeout as delay } from 'node:timers/promises';
import type { Db } from '../platform/db/database.ts';
import type { SiteRow, SiteSectionRow, SiteSpaceRow, SpaceRow } from '../platform/db/schema.ts';
import type { Urls } from '../platform/urls.ts';
import { effectiveCustomization } from '../sites/customization.ts';
import { markdownToDocumentForRead, searchTextOf } from '../content/convert.ts';
import { readBody, storedText } from '../content/documents.ts';
import { ContentReader, type PageEntry } from '../content/model.ts';
import { withFrontMatter } from '../content/markdown/front-matter.ts';
import { documentToMarkdown } from '../content/markdown/markdown.ts';
import type { GitBookDocument } from '../content/markdown/shared.ts';
import { frontMatterOf } from '../content/presenter.ts';
import { pageDirectory, relativeCover, relativeLinks } from '../content/page-links.ts';
import { conditionHolds, expressionValue } from './conditions.ts';
import { pageHtml, type Link, type PageView } from './layout.ts';
import { navigationOf, type Navigation, type NavPage } from './navigation.ts';
import { renderDocument, type RenderContext } from './render.ts';
import { openAPIBlockHtml } from './openapi.ts';
import { mayHoldOpenAPIBlocks, resolveOpenAPIBlocks } from '../openapi/blocks.ts';
import type { Visitor } from './visitor.ts';
import { ContentKitRenderer } from './contentkit.ts';
import type { RenderedBlock } from '../integrations/blocks.ts';
import { injectsScript, publishedScriptUrl, type SiteIntegration } from '../integrations/site-scripts.ts';

/**
 * A published site as readers see it: which section and variant (site space) a path is in, which
 * page, and that page rendered. Rendered pages are cached by (site, its last update, the space's
 * revision, page, visitor segment): a merge moves the revision and a site change its update time,
 * so exactly the affected pages are rendered again, and nothing stale is served.
 */

export interface SiteStructure {
  sections: SiteSectionRow[];
  /** Each site space with its space and the root of the space's live revision. */
  siteSpaces: (SiteSpaceRow & { space: SpaceRow; root: string })[];
}

export interface Located {
  section: SiteSectionRow | undefined;
  siteSpace: SiteStructure['siteSpaces'][number];
  /** The page path within the space ('' for its first page). */
  pagePath: string;
  /** The site-relative prefix of the site space (`section/variant/`, '' for the default). */
  prefix: string;
}

const visibleTo = (visitor: Visitor, condition: string | null | undefined) => conditionHolds(condition, { visitor: { claims: visitor.claims } });

/** Which section, site space and page a site-relative path is about (undefined: none). */
export function locate(structure: SiteStructure, path: string, visitor: Visitor): Located | undefined {
  const parts = path.split('/').filter(Boolean);
  const sections = structure.sections.filter((s) => visibleTo(visitor, s.condition));
  let section = sections.find((s) => !s.is_default && s.path === parts[0]);
  if (section) parts.shift();
  else section = sections.find((s) => s.is_default) ?? sections[0];
  const inSection = structure.siteSpaces.filter((s) => (section ? s.section_id === section.id : true) && visibleTo(visitor, s.condition));
  let siteSpace = inSection.find((s) => !s.is_default && s.path === parts[0]);
  if (siteSpace) parts.shift();
  else siteSpace = inSection.find((s) => s.is_default) ?? inSection[0];
  if (!siteSpace) return undefined;
  return { section, siteSpace, pagePath: parts.join('/'), prefix: prefixOf(section, siteSpace) };
}

/** The site spaces a visitor may reach (their section's and their own conditions hold), with their prefix. */
export function reachableSiteSpaces(structure: SiteStructure, visitor: Visitor) {
  const sections = new Map(structure.sections.map((s) => [s.id, s]));
  return structure.siteSpaces.flatMap((siteSpace) => {
    const section = siteSpace.section_id ? sections.get(siteSpace.section_id) : undefined;
    if (section && !visibleTo(visitor, section.condition)) return [];
    if (!visibleTo(visitor, siteSpace.condition)) return [];
    const prefix = prefixOf(section, siteSpace);
    // Reachable only if its prefix leads to it (a second variant without a path would not).
    const located = locate(structure, prefix, visitor);
    return located && located.siteSpace.id === siteSpace.id ? [located] : [];
  });
}

export function prefixOf(section: SiteSectionRow | undefined, siteSpace: SiteSpaceRow): string {
  return (section && !section.is_default ? `${section.path}/` : '') + (siteSpace.is_default ? '' : `${siteSpace.path}/`);
}

/** The pages of the tree a visitor may see in navigation (hidden pages and unmet conditions left out). */
function visibleTree(pages: NavPage[], visitor: Visitor): NavPage[] {
  return pages
    .filter((p) => !p.hidden && visibleTo(visitor, p.condition))
    .map((p) => ({ ...p, children: visibleTree(p.children, visitor) }));
}

export interface PageRequest {
  db: Db;
  blobs: Blobs;
  urls: Urls;
  site: SiteRow;
  /** Absolute path of the site's root, ending with '/'. */
  base: string;
  structure: SiteStructure;
  located: Located;
  visitor: Visitor;
  /** Active installations covering the site: scripts they inject, views and feedback they receive. */
  integrations: SiteIntegration[];
  /** Renders an integration block of a page of `space` (its integration's `ui_render`); absent: placeholders. */
  renderBlock?: (space: { id: string; organization_id: string }, block: { integration: string; block?: string | undefined; props: Record<string, unknown> }) => Promise<RenderedBlock>;
}

export interface RenderedPage {
  html: string;
  etag: string;
  noIndex: boolean;
  /** Origins of the web frames integration blocks embed (for the page's frame-src). */
  frames: string[];
}

const MAX_CACHED = 2000;
const cache = new Map<string, RenderedPage>();

function remember(key: string, page: RenderedPage): RenderedPage {
  cache.set(key, page);
  if (cache.size > MAX_CACHED) cache.delete(cache.keys().next().value!);
  return page;
}

export async function navigationFor(req: PageRequest): Promise<Navigation> {
  return navigationOf(req.db, req.located.siteSpace.root);
}

/** The navigation a visitor sees (hidden pages and unmet conditions left out) and its reading order, kept per revision and visitor segment. */
const visibleTrees = new Map<string, { tree: NavPage[]; flat: NavPage[]; at: Map<string, number> }>();

function visibleNavigation(nav: Navigation, visitor: Visitor) {
  const key = `${nav.root}|${visitor.segment}`;
  let found = visibleTrees.get(key);
  if (!found) {
    const tree = visibleTree(nav.top, visitor);
    // Previous and next go from page to page: groups and links are not read.
    const flat: NavPage[] = [];
    const flatten = (pages: NavPage[]) => pages.forEach((p) => (p.entry.type === 'document' && flat.push(p), flatten(p.children)));
    flatten(tree);
    found = { tree, flat, at: new Map(flat.map((p, i) => [p.id, i])) };
    visibleTrees.set(key, found);
    if (visibleTrees.size > 256) visibleTrees.delete(visibleTrees.keys().next().value!);
  }
  return found;
}

/** The page tree a visitor sees in the site's navigation (hidden pages and unmet conditions left out). */
export function visibleTreeOf(nav: Navigation, visitor: Visitor): NavPage[] {
  return visibleNavigation(nav, visitor).tree;
}

/** The page a located path names: the first readable page for the root, undefined when none. */
export function pageAt(nav: Navigation, pagePath: string, visitor: Visitor): NavPage | undefined {
  const page = pagePath ? nav.byPath.get(pagePath) : nav.order.find((p) => !p.hidden && visibleTo(visitor, p.condition));
  if (!page) return undefined;
  // A page under a condition that does not hold is not there for this visitor (its ancestors' too).
  for (let p: NavPage | undefined = page; p; p = p.parent ? nav.byId.get(p.parent) : undefined) if (!visibleTo(visitor, p.condition)) return undefined;
  return page;
}

function customization(site: SiteRow, siteSpace: SiteSpaceRow) {
  return effectiveCustomization(site.customization, siteSpace.customization) as Record<string, any>;
}

/**
 * Whether a site space's pages ask "was this page helpful?": when the site's customization turns
 * it on (`feedback.enabled`, as on GitBook), or when an installation receives the answers.
 */
export function asksFeedback(site: SiteRow, siteSpace: SiteSpaceRow, integrations: SiteIntegration[]): boolean {
  return customization(site, siteSpace).feedback?.enabled === true || integrations.some((i) => i.scopes.includes('page:feedback:read'));
}

/**
 * The document of a page as readers get it: its stored markdown with reusable contents expanded,
 * converted, and its OpenAPI blocks resolved from the organization's specs. The published site
 * and the PDF of a space (src/pdf/) render it with renderDocument.
 */
export async function pageDocument(db: Db, blobs: Blobs, organizationId: string, root: string, entry: PageEntry): Promise<{ markdown: string; document: GitBookDocument }> {
  const reader = new ContentReader(db, root);
  const source = await storedText(db, entry.doc);
  const markdown = await readBody(reader, source, entry, { dereferenced: true });
  const document = await markdownToDocumentForRead(markdown);
  // OpenAPI blocks show the operation from the organization's spec, as its readers see it.
  if (mayHoldOpenAPIBlocks(markdown)) await resolveOpenAPIBlocks(db, blobs, organizationId, null, document as Parameters<typeof resolveOpenAPIBlocks>[4]);
  return { markdown, document };
}

export async function renderPage(req: PageRequest, nav: Navigation, page: NavPage, query?: string): Promise<RenderedPage> {
  const { site, located, visitor } = req;
  const key = [site.id, req.base, site.updated_at.getTime(), site.customization_updated_at?.getTime() ?? 0, located.siteSpace.id, located.siteSpace.customization_updated_at?.getTime() ?? 0, nav.root, page.id, visitor.segment, req.integrations.map((i) => `${i.installationId}.${i.stamp}`).join(',')].join('|');
  const cached = cache.get(key);
  if (cached) return cached;

  const { markdown, document } = await pageDocument(req.db, req.blobs, site.organization_id, nav.root, page.entry);
  const blocks = await integrationBlocks(req, document);
  const scope = { visitor: { claims: visitor.claims }, space: { vars: nav.variables }, page: { vars: page.entry.variables ?? {} } };
  const siteSpaceBase = `${req.base}${located.prefix}`;
  const pageUrl = (p: NavPage) => `${siteSpaceBase}${p.path}`;
  const ctx: RenderContext = {
    pageUrl: (ref) => {
      if (ref.space && ref.space !== located.siteSpace.space.id) {
        const other = req.structure.siteSpaces.find((s) => s.space.id === ref.space);
        return other ? `${req.base}${prefixOf(req.structure.sections.find((s) => s.id === other.section_id), other)}` : undefined;
      }
      const target = nav.byId.get(ref.page);
      return target ? `${pageUrl(target)}${ref.anchor ? `#${encodeURIComponent(ref.anchor)}` : ''}` : undefined;
    },
    file: (id) => {
      const file = nav.files.get(id);
      return file && { url: `${req.base}_folio/files/${file.blob}/${encodeURIComponent(file.name)}`, name: file.name, contentType: file.contentType, size: file.size };
    },
    condition: (expression) => conditionHolds(expression, scope),
    expression: (expression) => expressionValue(expression, scope),
    pageTitle: (id) => nav.byId.get(id)?.title,
    openapi: openAPIBlockHtml,
    integration: (node) => blocks.html.get(node),
  };
  const rendered = renderDocument(document, ctx);

  const settings = customization(site, located.siteSpace);
  const { tree, flat, at: positions } = visibleNavigation(nav, visitor);
  const at = positions.get(page.id) ?? -1;
  const link = (p: NavPage | undefined): Link | undefined => (p ? { title: p.title, href: pageUrl(p) } : undefined);
  const breadcrumbs: Link[] = [];
  for (let p = page.parent ? nav.byId.get(page.parent) : undefined; p; p = p.parent ? nav.byId.get(p.parent) : undefined) breadcrumbs.unshift(link(p)!);

  const sections = req.structure.sections
    .filter((s) => visibleTo(visitor, s.condition))
    .map((s) => ({ title: s.title, href: `${req.base}${s.is_default ? '' : `${s.path}/`}`, current: s.id === located.section?.id }));
  const variants = req.structure.siteSpaces
    .filter((s) => s.section_id === (located.section?.id ?? null) && !s.hidden && visibleTo(visitor, s.condition))
    .map((s) => ({ title: s.space.title, href: `${req.base}${prefixOf(located.section, s)}`, current: s.id === located.siteSpace.id }));
  const coverUrl = page.entry.cover?.url;
  // A cover that is a space file (`/files/<id>`) is served from the site's files.
  const coverFileId = coverUrl ? /^\/files\/([^/#?]+)$/.exec(coverUrl)?.[1] : undefined;
  const noIndex = site.visibility !== 'public' || !!page.entry.noIndex || !!page.entry.noRobotsIndex;
  const view: PageView = {
    siteTitle: typeof settings.title === 'string' && settings.title ? settings.title : site.title,
    assets: `${req.base}_folio/`,
    home: req.base,
    logo: settings.header?.logo,
    favicon: settings.favicon?.icon?.light,
    primaryColor: settings.styling?.primaryColor,
    announcement: settings.announcement?.enabled && settings.announcement.message ? { message: String(settings.announcement.message), href: settings.announcement.link?.to?.url } : undefined,
    headerLinks: ((settings.header?.links ?? []) as { title?: string; to?: { kind?: string; url?: string } }[])
      .filter((l) => l.title && l.to?.kind === 'url' && l.to.url && /^https?:/i.test(l.to.url))
      .map((l) => ({ title: l.title!, href: l.to!.url! })),
    sections: sections.length > 1 ? sections : [],
    variants,
    tree,
    pageUrl,
    currentPageId: page.id,
    openIds: new Set([page.id, ...ancestorIds(nav, page)]),
    title: page.title,
    description: page.entry.description,
    emoji: page.emoji,
    cover: coverFileId ? ctx.file(coverFileId)?.url : coverUrl && /^(https?:|\/)/i.test(coverUrl) ? coverUrl : undefined,
    html: rendered.html,
    headings: rendered.headings,
    breadcrumbs,
    previous: at > 0 ? link(flat[at - 1]) : undefined,
    next: at >= 0 && at < flat.length - 1 ? link(flat[at + 1]) : undefined,
    noIndex,
    searchUrl: `${req.base}search`,
    query,
    markdownUrl: `${pageUrl(page)}.md`,
    language: typeof settings.internationalization?.locale === 'string' ? settings.internationalization.locale : 'en',
    scripts: req.integrations.filter(injectsScript).map((i) => ({ src: publishedScriptUrl(req.urls, i, site.id), cookies: i.scopes.includes('site:script:cookies') })),
    // Reader events (views, searches, ratings) for the site's insights and its installations.
    eventsUrl: `${req.base}~gitbook/events`,
    feedback: asksFeedback(site, located.siteSpace, req.integrations)
      ? { action: `${req.base}_folio/feedback`, page: `${located.prefix}${page.path}`, comment: req.integrations.some((i) => i.scopes.includes('page:feedback:read')) }
      : undefined,
  };
  const html = pageHtml(view);
  const result = { html, etag: `"${createHash('sha256').update(html).digest('base64url').slice(0, 27)}"`, noIndex, frames: [...blocks.frames] };
  // A page showing OpenAPI operations follows its spec's latest version, one with integration
  // blocks what its integrations answer now (they keep their own cache): rendered each time.
  return mayHoldOpenAPIBlocks(markdown) || blocks.html.size ? result : remember(key, result);
}

/** How long a page waits for its integration blocks; a block not there by then shows its placeholder (and is ready for the next reader). */
const BLOCK_WAIT_MS = 3000;

/** Integration blocks of a document rendered to HTML by their integrations, by node. */
async function integrationBlocks(req: PageRequest, document: { nodes?: unknown[] }): Promise<{ html: Map<unknown, string>; frames: Set<string> }> {
  const html = new Map<unknown, string>();
  const frames = new Set<string>();
  const nodes: { type?: string; data?: { integration?: unknown; block?: unknown; props?: unknown } }[] = [];
  const walk = (list: unknown) => {
    if (!Array.isArray(list)) return;
    for (const n of list as { type?: string; nodes?: unknown; fragments?: unknown }[]) {
      if (n?.type === 'integration') nodes.push(n as (typeof nodes)[number]);
      walk(n?.nodes);
      walk(n?.fragments);
    }
  };
  walk(document.nodes);
  if (!nodes.length || !req.renderBlock) return { html, frames };
  const space = { id: req.located.siteSpace.space.id, organization_id: req.site.organization_id };
  const timeout = delay(BLOCK_WAIT_MS, undefined, { ref: false });
  await Promise.all(
    nodes.slice(0, 50).map(async (node) => {
      const data = node.data ?? {};
      if (typeof data.integration !== 'string') return;
      const props = data.props && typeof data.props === 'object' ? (data.props as Record<string, unknown>) : {};
      const rendering = req.renderBlock!(space, { integration: data.integration, block: typeof data.block === 'string' ? data.block : undefined, props });
      const rendered = await Promise.race([rendering.catch(() => undefined), timeout]);
      if (!rendered?.output) return;
      const markdown = new Map<string, string>();
      for (const text of ContentKitRenderer.markdownOf(rendered.output.element, rendered.output.state).slice(0, 20)) {
        if (markdown.has(text) || text.length > 20_000) continue;
        markdown.set(text, renderDocument(await markdownToDocumentForRead(text), STANDALONE).html);
      }
      const renderer = new ContentKitRenderer({ state: rendered.output.state, markdown });
      html.set(node, renderer.html(rendered.output.element));
      for (const origin of renderer.frames) frames.add(origin);
    }),
  );
  return { html, frames };
}

/** Rendering outside any page (markdown inside an integration block): links to pages and files stay text. */
const STANDALONE: RenderContext = { pageUrl: () => undefined, file: () => undefined, condition: () => false, expression: () => undefined };

function ancestorIds(nav: Navigation, page: NavPage): string[] {
  const ids: string[] = [];
  for (let p = page.parent ? nav.byId.get(page.parent) : undefined; p; p = p.parent ? nav.byId.get(p.parent) : undefined) ids.push(p.id);
  return ids;
}

type Node = { type?: string; data?: { expression?: unknown }; nodes?: Node[]; fragments?: Node[] };

/**
 * The markdown a visitor may read: `if` blocks whose condition does not hold for them are left
 * out, those that hold give their content, as the HTML page shows it. Only a page holding an `if`
 * block is converted (to the document and back); any other is served as stored.
 */
async function visibleMarkdown(markdown: string, scope: Record<string, unknown>): Promise<string> {
  if (!/\{%-?\s*if\b/.test(markdown)) return markdown;
  const keep = (nodes: Node[]): Node[] =>
    nodes.flatMap((node) => {
      if (node.type === 'if') return conditionHolds(String(node.data?.expression ?? ''), scope) ? keep(node.nodes ?? []) : [];
      return [{ ...node, ...(Array.isArray(node.nodes) ? { nodes: keep(node.nodes) } : {}), ...(Array.isArray(node.fragments) ? { fragments: keep(node.fragments) } : {}) }];
    });
  const document = await markdownToDocumentForRead(markdown);
  return documentToMarkdown({ ...document, nodes: keep(document.nodes as Node[]) } as typeof document);
}

/** What adaptive-content conditions read on a page: the visitor's claims, the space's and the page's variables. */
const conditionScope = (nav: Navigation, page: NavPage, visitor: Visitor) => ({ visitor: { claims: visitor.claims }, space: { vars: nav.variables }, page: { vars: page.entry.variables ?? {} } });

/**
 * The searchable text (sections) of a page as `visitor` may read it, when the page holds `if`
 * blocks; undefined when it holds none (the search index's text is then what the visitor reads).
 */
export async function visibleSearchText(db: Db, nav: Navigation, page: NavPage, visitor: Visitor): Promise<{ sections: { id: string; title: string; body: string }[] } | undefined> {
  const source = await storedText(db, page.entry.doc);
  if (!/\{%-?\s*if\b/.test(source)) return undefined;
  return searchTextOf(await visibleMarkdown(source, conditionScope(nav, page, visitor)));
}

/** A page as markdown (`<page>.md`), with its front matter and links relative to it, as `visitor` may read it. */
export async function pageMarkdown(db: Db, nav: Navigation, page: NavPage, visitor: Visitor): Promise<string> {
  const reader = new ContentReader(db, nav.root);
  const source = await storedText(db, page.entry.doc);
  const directory = await pageDirectory(reader, page.entry);
  const body = await relativeLinks(reader, await visibleMarkdown(await readBody(reader, source, page.entry, { dereferenced: true }), conditionScope(nav, page, visitor)), directory);
  return withFrontMatter(await relativeCover(reader, frontMatterOf(page.entry), directory), `# ${page.title}\n\n${body}`);
}
