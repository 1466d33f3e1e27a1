import jsyaml from 'js-yaml';
import { isMap, parseDocument } from 'yaml';

/**
 * Page front matter (GitBook's YAML header) ↔ the official page fields. Read with a real YAML
 * parser, so folded (`>`) and literal (`|`) scalars, quoting and escapes mean what YAML says;
 * written back in GitBook's layout (`layout.<part>.visible`, `cover` + `coverY` + `coverHeight`).
 * Keys Folio does not model are kept in `extra` and written back unchanged.
 */

export interface PageLayout {
  width?: 'default' | 'wide';
  cover?: boolean;
  coverSize?: 'full' | 'hero' | 'background';
  coverMask?: 'none' | 'radial';
  title?: boolean;
  description?: boolean;
  tableOfContents?: boolean;
  outline?: boolean;
  pagination?: boolean;
  metadata?: boolean;
  tags?: boolean;
  actions?: boolean;
  anchors?: boolean;
}

export interface PageMetadata {
  description?: string;
  icon?: string;
  hidden?: boolean;
  noIndex?: boolean;
  noRobotsIndex?: boolean;
  /**
   * Cover image URL, path, or `/files/<id>` (a space file: a git import and a markdown write turn a
   * path to a file of the space into that), its vertical position and height (the official
   * `cover.ref`, `yPos`, `height`).
   */
  cover?: { url: string; yPos: number; height?: number };
  layout?: PageLayout;
  metaLinks?: { canonical?: string; alternates?: string[] };
  /** Visibility condition (`if:`), the official page `condition`. */
  condition?: string;
  /** Page variables (`vars:`), the official page `variables`: strings, numbers and booleans. */
  variables?: Record<string, string | number | boolean>;
  /** Keys we do not model, kept as they were. */
  extra?: Record<string, unknown>;
  /**
   * The header's top-level keys in the order the file had them, when that is not the order Folio
   * writes: a page written back keeps its keys where they were (as GitBook does), so an export
   * changes only the lines that changed.
   */
  keyOrder?: string[];
}

const FENCE = /^---[ \t]*\r?\n/;
const VISIBLE_PARTS = ['title', 'description', 'tableOfContents', 'outline', 'pagination', 'metadata', 'tags', 'actions', 'anchors'] as const;

/** The front matter block at the top of a page: its YAML text and where the body starts; null when there is none. */
function split(markdown: string): { yaml: string; bodyStart: number } | null {
  const open = FENCE.exec(markdown);
  if (!open) return null;
  let at = open[0].length;
  // The closing fence is the first line that is exactly `---` (or `...`): a linear scan by lines.
  while (at <= markdown.length) {
    const eol = markdown.indexOf('\n', at);
    const line = markdown.slice(at, eol < 0 ? markdown.length : eol).replace(/\r$/, '');
    if (line.trimEnd() === '---' || line.trimEnd() === '...') {
      return { yaml: markdown.slice(open[0].length, at), bodyStart: eol < 0 ? markdown.length : eol + 1 };
    }
    if (eol < 0) break;
    at = eol + 1;
  }
  return null;
}

const bool = (value: unknown): boolean | undefined => (typeof value === 'boolean' ? value : undefined);
const str = (value: unknown): string | undefined => (typeof value === 'string' ? value : typeof value === 'number' ? String(value) : undefined);

/** A YAML mapping of variable names to scalars (strings ≤ 256, numbers, booleans); undefined for anything else. */
export function variablesOf(value: unknown): Record<string, string | number | boolean> | undefined {
  if (!value || typeof value !== 'object' || Array.isArray(value)) return undefined;
  const out: Record<string, string | number | boolean> = {};
  for (const [name, v] of Object.entries(value)) {
    if (!VARIABLE_NAME.test(name)) return undefined;
    if (typeof v === 'string' ? v.length > 256 : typeof v !== 'number' && typeof v !== 'boolean') return undefined;
    if (typeof v === 'number' && !Number.isFinite(v)) return undefined;
    out[name] = v as string | number | boolean;
  }
  return out;
}

/** Variable names as expressions can name them (`space.vars.<name>`). */
export const VARIABLE_NAME = /^[A-Za-z_][A-Za-z0-9_-]{0,99}$/;

/** Splits a page into its metadata and its body. A header that is not a YAML mapping is body. */
export function readFrontMatter(markdown: string): { metadata: PageMetadata; body: string } {
  const found = split(markdown);
  if (!found) return { metadata: {}, body: markdown };
  const doc = parseDocument(found.yaml, { uniqueKeys: false });
  if (doc.errors.length > 0 || (!isMap(doc.contents) && found.yaml.trim() !== '')) return { metadata: {}, body: markdown };
  const data = (doc.toJS() ?? {}) as Record<string, unknown>;
  const metadata: PageMetadata = {};
  const extra: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(data)) {
    switch (key) {
      case 'description':
        if (str(value) !== undefined) metadata.description = str(value)!.replace(/\n$/, '');
        break;
      case 'icon':
        if (str(value) !== undefined) metadata.icon = str(value);
        break;
      case 'hidden':
      case 'noIndex':
      case 'noRobotsIndex':
        if (bool(value) !== undefined) metadata[key] = bool(value);
        break;
      case 'cover':
        if (str(value)) metadata.cover = { url: str(value)!, yPos: Number(data.coverY ?? 0) || 0 };
        if (metadata.cover && typeof data.coverHeight === 'number') metadata.cover.height = data.coverHeight;
        break;
      case 'coverY':
      case 'coverHeight':
        // Without a cover (GitBook leaves `coverY: 0` on a page whose cover was removed) they are
        // kept as they are, like other keys Folio does not model.
        if (!str(data.cover)) extra[key] = value;
        break;
      case 'if':
        if (str(value)) metadata.condition = str(value);
        break;
      case 'vars': {
        const vars = variablesOf(value);
        if (vars) metadata.variables = vars;
        else extra[key] = value;
        break;
      }
      case 'metaLinks': {
        const links = value as { canonical?: unknown; alternates?: unknown } | null;
        if (links && typeof links === 'object') {
          metadata.metaLinks = {};
          if (str(links.canonical)) metadata.metaLinks.canonical = str(links.canonical);
          if (Array.isArray(links.alternates)) metadata.metaLinks.alternates = links.alternates.map(String);
        }
        break;
      }
      case 'layout': {
        const layout = value as Record<string, unknown> | null;
        if (!layout || typeof layout !== 'object') {
          extra[key] = value;
          break;
        }
        const out: PageLayout = {};
        if (layout.width === 'wide' || layout.width === 'default') out.width = layout.width;
        const cover = layout.cover as { visible?: unknown; size?: unknown; mask?: unknown } | undefined;
        if (cover && typeof cover === 'object') {
          if (bool(cover.visible) !== undefined) out.cover = bool(cover.visible);
          if (cover.size === 'full' || cover.size === 'hero' || cover.size === 'background') out.coverSize = cover.size;
          if (cover.mask === 'none' || cover.mask === 'radial') out.coverMask = cover.mask;
        }
        for (const part of VISIBLE_PARTS) {
          const visible = (layout[part] as { visible?: unknown } | undefined)?.visible;
          if (bool(visible) !== undefined) out[part] = bool(visible);
        }
        metadata.layout = out;
        break;
      }
      default:
        extra[key] = value;
    }
  }
  if (Object.keys(extra).length > 0) metadata.extra = extra;
  const keys = Object.keys(data);
  const written = Object.keys(frontMatterData(metadata));
  if (keys.length === written.length && keys.some((key, i) => key !== written[i])) metadata.keyOrder = keys;
  return { metadata, body: markdown.slice(found.bodyStart) };
}

/** The YAML header for page metadata ('' when there is nothing to write), GitBook's key order. */
export function writeFrontMatter(metadata: PageMetadata): string {
  let data = frontMatterData(metadata);
  if (metadata.keyOrder) {
    // The keys the page had, where it had them; any key added since comes after, in Folio's order.
    const ordered: Record<string, unknown> = {};
    for (const key of metadata.keyOrder) if (key in data) ordered[key] = data[key];
    data = Object.assign(ordered, data);
  }
  if (Object.keys(data).length === 0) return '';
  return `---\n${gitbookYaml(data)}---\n`;
}

/** The header's keys and values, in the order Folio writes them (GitBook's for a new page). */
function frontMatterData(metadata: PageMetadata): Record<string, unknown> {
  const data: Record<string, unknown> = {};
  if (metadata.description !== undefined && metadata.description !== '') data.description = metadata.description;
  if (metadata.icon) data.icon = metadata.icon;
  if (metadata.cover) {
    data.cover = metadata.cover.url;
    data.coverY = metadata.cover.yPos;
    if (metadata.cover.height !== undefined) data.coverHeight = metadata.cover.height;
  }
  if (metadata.layout) {
    const l = metadata.layout;
    const layout: Record<string, unknown> = {};
    if (l.width) layout.width = l.width;
    if (l.cover !== undefined || l.coverSize || l.coverMask) {
      layout.cover = { ...(l.cover !== undefined ? { visible: l.cover } : {}), ...(l.coverSize ? { size: l.coverSize } : {}), ...(l.coverMask ? { mask: l.coverMask } : {}) };
    }
    for (const part of VISIBLE_PARTS) if (l[part] !== undefined) layout[part] = { visible: l[part] };
    if (Object.keys(layout).length > 0) data.layout = layout;
  }
  if (metadata.hidden) data.hidden = true;
  if (metadata.noIndex) data.noIndex = true;
  if (metadata.noRobotsIndex) data.noRobotsIndex = true;
  if (metadata.metaLinks && (metadata.metaLinks.canonical || metadata.metaLinks.alternates?.length)) data.metaLinks = metadata.metaLinks;
  if (metadata.condition) data.if = metadata.condition;
  if (metadata.variables && Object.keys(metadata.variables).length) data.vars = metadata.variables;
  Object.assign(data, metadata.extra ?? {});
  return data;
}

/** A page's markdown with its metadata as front matter (any header it already had is replaced). */
export function withFrontMatter(metadata: PageMetadata, markdown: string): string {
  const header = writeFrontMatter(metadata);
  const body = readFrontMatter(markdown).body.replace(/^\n+/, '');
  return header ? `${header}\n${body}` : body;
}

/**
 * YAML as GitBook writes front matter (js-yaml's defaults): long strings folded at 80 columns
 * (`description: >-`), single quotes where quoting is needed.
 */
export function gitbookYaml(data: Record<string, unknown>): string {
  return jsyaml.dump(data);
}
