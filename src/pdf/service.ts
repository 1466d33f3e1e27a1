import { errors as joseErrors, jwtVerify, SignJWT } from 'jose';
import { loadChangeRequest } from '../change-requests/service.ts';
import { markdownLinks } from '../content/markdown/markdown.ts';
import { ContentReader, getDocuments, sortPages, type FileEntry, type PageEntry } from '../content/model.ts';
import { loadRevision } from '../content/service.ts';
import { loadSpace } from '../spaces/access.ts';
import type { Ctx, Services } from '../platform/context.ts';
import { BadRequestError, NotFoundError, UnauthorizedError } from '../platform/errors.ts';
import { renderPdf, type PrintedPage } from './render.ts';

/** How long a PDF link works. */
export const PDF_LINK_TTL_SECONDS = 3600;
/** Most pages one PDF prints: larger change requests are printed page by page (`page`). */
export const MAX_PDF_PAGES = 1000;
/** Audience of PDF link tokens, so no other token signed with the same key opens a PDF. */
const AUDIENCE = 'folio:pdf';

export interface PdfQuery {
  /** Print only `page`, not the pages below it. */
  only?: boolean | undefined;
  /** Print this page (and, unless `only`, the pages below it) instead of every page. */
  page?: string | undefined;
}

/** Pages in tree order (depth first, siblings by position), with their depth below `from`. */
function inTreeOrder(pages: Map<string, PageEntry>, from: string | null): { page: PageEntry; depth: number }[] {
  const children = new Map<string | null, PageEntry[]>();
  for (const page of pages.values()) {
    const list = children.get(page.parent) ?? [];
    list.push(page);
    children.set(page.parent, list);
  }
  const out: { page: PageEntry; depth: number }[] = [];
  const visit = (parent: string | null, depth: number) => {
    for (const page of sortPages(children.get(parent) ?? [])) {
      out.push({ page, depth });
      visit(page.id, depth + 1);
    }
  };
  visit(from, 0);
  return out;
}

/**
 * Prints the head of a change request (every page, one page, or a page and the pages below it) to
 * a PDF kept as a blob, and answers a link to it that works for an hour. Readers of the space can
 * print; the link itself needs no token, so it can be handed to a browser.
 */
export async function changeRequestPdf(ctx: Ctx, spaceId: string, idOrNumber: string, query: PdfQuery): Promise<{ url: string }> {
  const { space, cr } = await loadChangeRequest(ctx, spaceId, idOrNumber);
  const head = await loadRevision(ctx.db, space.id, cr.revision);
  return printRevision(ctx, head, cr.subject || `Change request #${cr.number}`, 'change request', query);
}

/** Prints a space's current content (every page, one page, or a page and the pages below it), as changeRequestPdf does. */
export async function spacePdf(ctx: Ctx, spaceId: string, query: PdfQuery): Promise<{ url: string }> {
  const { space } = await loadSpace(ctx, spaceId);
  const head = await loadRevision(ctx.db, space.id, space.revision_id);
  return printRevision(ctx, head, space.title || 'Untitled space', 'space', query);
}

async function printRevision(ctx: Ctx, head: { root: string; created_at: Date }, title: string, what: string, query: PdfQuery): Promise<{ url: string }> {
  if (query.only && !query.page) throw new BadRequestError('only: name the page to print with "page"');
  const { pages, files } = await new ContentReader(ctx.db, head.root).all();
  let selected: { page: PageEntry; depth: number }[];
  if (query.page) {
    const root = pages.get(query.page);
    if (!root) throw new NotFoundError('Page');
    selected = [{ page: root, depth: 0 }, ...(query.only ? [] : inTreeOrder(pages, root.id).map((p) => ({ ...p, depth: p.depth + 1 })))];
  } else {
    selected = inTreeOrder(pages, null);
  }
  // A link leads elsewhere: nothing of it to print.
  selected = selected.filter((s) => s.page.type !== 'link');
  if (selected.length > MAX_PDF_PAGES) {
    throw new BadRequestError(`The ${what} has ${selected.length} pages to print, more than ${MAX_PDF_PAGES}: print part of it with "page"`);
  }
  const markdown = await getDocuments(ctx.db, selected.map((s) => s.page.doc ?? ''));
  const printed: PrintedPage[] = selected.map(({ page, depth }) => ({ title: page.title, depth, markdown: page.doc ? (markdown.get(page.doc) ?? '') : '' }));
  const images = await imagesOf(ctx, printed, files);
  const data = await renderPdf(printed, { title, createdAt: head.created_at, images });
  const blob = await ctx.blobs.put(data);
  const name = fileName(title, query.page ? selected[0]?.page.slug : undefined);
  const token = await new SignJWT({ blob, name })
    .setProtectedHeader({ alg: 'HS256', typ: 'JWT' })
    .setAudience(AUDIENCE)
    .setIssuer(ctx.config.publicUrl)
    .setSubject(ctx.user.id)
    .setIssuedAt()
    .setExpirationTime(`${PDF_LINK_TTL_SECONDS}s`)
    .sign(ctx.signingKey);
  return { url: ctx.urls.api(`/pdf/${encodeURIComponent(name)}?token=${token}`) };
}

/** Images embedded in a PDF: PNG and JPEG files the printed pages show, within a total size. */
const MAX_IMAGE_BYTES = 20 * 1024 * 1024;

async function imagesOf(ctx: Ctx, printed: PrintedPage[], files: FileEntry[]): Promise<Map<string, Uint8Array>> {
  const byId = new Map(files.map((f) => [f.id, f]));
  const wanted = new Set<string>();
  for (const page of printed) {
    for (const link of markdownLinks(page.markdown)) {
      const id = /^\/files\/([^/#?]+)$/.exec(link.url)?.[1];
      const file = id ? byId.get(id) : undefined;
      if (file && (file.contentType === 'image/png' || file.contentType === 'image/jpeg')) wanted.add(file.id);
    }
  }
  const images = new Map<string, Uint8Array>();
  let total = 0;
  for (const id of wanted) {
    const file = byId.get(id)!;
    if (total + file.size > MAX_IMAGE_BYTES) continue;
    const data = await ctx.blobs.read(file.blob);
    if (!data) continue;
    images.set(id, data);
    total += data.byteLength;
  }
  return images;
}

function fileName(title: string, page: string | undefined): string {
  const base = `${title}${page ? `-${page}` : ''}`
    .normalize('NFKD')
    .replace(/[^A-Za-z0-9 _-]+/g, '')
    .trim()
    .replace(/\s+/g, '-')
    .slice(0, 80);
  return `${base || 'content'}.pdf`;
}

/** The PDF a link token names; an expired, tampered or foreign token is refused. */
export async function pdfForToken(services: Pick<Services, 'signingKey'>, token: string): Promise<{ blob: string; name: string }> {
  let claims: { blob?: unknown; name?: unknown };
  try {
    claims = (await jwtVerify(token, services.signingKey, { algorithms: ['HS256'], audience: AUDIENCE })).payload as typeof claims;
  } catch (err) {
    if (err instanceof joseErrors.JWTExpired) throw new UnauthorizedError('This PDF link has expired: ask for a new one');
    throw new UnauthorizedError('This PDF link is not valid');
  }
  if (typeof claims.blob !== 'string' || typeof claims.name !== 'string') throw new UnauthorizedError('This PDF link is not valid');
  return { blob: claims.blob, name: claims.name };
}
