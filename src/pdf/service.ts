import { createHash } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { setImmediate } from 'node:timers/promises';
import { createRequire } from 'node:module';
import { dirname, join, normalize } from 'node:path';
import { errors as joseErrors, jwtVerify, SignJWT } from 'jose';
import { loadChangeRequest } from '../change-requests/service.ts';
import { loadRevision } from '../content/service.ts';
import { expressionValue } from '../published-site/conditions.ts';
import { navigationOf, type Navigation, type NavPage } from '../published-site/navigation.ts';
import { pageDocument } from '../published-site/published.ts';
import { loadSpace } from '../spaces/access.ts';
import type { Ctx, Services } from '../platform/context.ts';
import type { PdfExportRow, SpaceRow } from '../platform/db/schema.ts';
import { BadRequestError, HttpError, NotFoundError, UnauthorizedError, UnavailableError } from '../platform/errors.ts';
import { newId } from '../platform/ids.ts';
import type { JobContext } from '../platform/jobs.ts';
import { checkChromium, printPdf, type Resource } from './browser.ts';
import { pageBodyHtml, printFooter, printHtml, type PrintedPage } from './document.ts';
import * as store from './store.ts';

/**
 * PDFs of a space or of a change request's head (getSpacePDF, getChangeRequestPDF): every page, a
 * page and the pages below it, or one page, laid out by the published site's renderer and printed
 * by Chromium (browser.ts, document.ts).
 *
 * Each request is a PDF export (a row): one of up to PDF_BACKGROUND_PAGES pages is printed while
 * the request waits, a bigger one by a background job. Either way the answer is a link that works
 * for an hour without a token; while a job still prints, the link waits a little and then answers
 * 503 with Retry-After and how far printing is. Asking again for the same content (same revision,
 * selection and title) shares the export already printed or printing.
 */

export const PDF_EXPORT_JOB = 'pdf-export';
/** How long a PDF link works. */
export const PDF_LINK_TTL_SECONDS = 3600;
/** How long a download of a PDF still being printed waits for it before answering 503. */
const DOWNLOAD_WAIT_MS = 20_000;
/** Audience of PDF link tokens, so no other token signed with the same key opens a PDF. */
const AUDIENCE = 'folio:pdf';
/** Changes when the layout does: a PDF printed by an older version is not reused. */
const LAYOUT_VERSION = 2;

export interface PdfQuery {
  /** Print only `page`, not the pages below it. */
  only?: boolean | undefined;
  /** Print this page (and, unless `only`, the pages below it) instead of every page. */
  page?: string | undefined;
}

/**
 * Prints the head of a change request (every page, one page, or a page and the pages below it) and
 * answers a link to the PDF. Readers of the space can print; the link itself needs no token, so it
 * can be handed to a browser.
 */
export async function changeRequestPdf(ctx: Ctx, spaceId: string, idOrNumber: string, query: PdfQuery): Promise<{ url: string }> {
  const { space, cr } = await loadChangeRequest(ctx, spaceId, idOrNumber);
  const head = await loadRevision(ctx.db, space.id, cr.revision);
  const title = cr.subject || `Change request #${cr.number}`;
  return requestPdf(ctx, space, head, { title, subtitle: `Change request #${cr.number} of ${space.title || 'Untitled space'}` }, 'change request', query);
}

/** Prints a space's current content (every page, one page, or a page and the pages below it), as changeRequestPdf does. */
export async function spacePdf(ctx: Ctx, spaceId: string, query: PdfQuery): Promise<{ url: string }> {
  const { space } = await loadSpace(ctx, spaceId);
  const head = await loadRevision(ctx.db, space.id, space.revision_id);
  return requestPdf(ctx, space, head, { title: space.title || 'Untitled space' }, 'space', query);
}

/** The pages a request prints, in reading order (depth first, siblings in order), with their depth. Links lead elsewhere: left out. */
function selection(nav: Navigation, query: PdfQuery): { page: NavPage; depth: number }[] {
  const out: { page: NavPage; depth: number }[] = [];
  const visit = (pages: NavPage[], depth: number) => {
    for (const page of pages) {
      if (page.entry.type === 'link') continue;
      out.push({ page, depth });
      visit(page.children, depth + 1);
    }
  };
  if (!query.page) {
    visit(nav.top, 0);
    return out;
  }
  const root = nav.byId.get(query.page);
  if (!root) throw new NotFoundError('Page');
  if (query.only) return root.entry.type === 'link' ? [] : [{ page: root, depth: 0 }];
  visit([root], 0);
  return out;
}

async function requestPdf(
  ctx: Ctx,
  space: SpaceRow,
  head: { root: string; created_at: Date },
  labels: { title: string; subtitle?: string },
  what: string,
  query: PdfQuery,
): Promise<{ url: string }> {
  if (query.only && !query.page) throw new BadRequestError('only: name the page to print with "page"');
  const settings = ctx.config.pdf;
  const nav = await navigationOf(ctx.db, head.root);
  const selected = selection(nav, query);
  if (selected.length > settings.maxPages) {
    throw new BadRequestError(`The ${what} has ${selected.length} pages to print, more than ${settings.maxPages} (PDF_MAX_PAGES): print part of it with "page"`);
  }
  const subtitle = query.page ? [selected[0]?.page.title, labels.subtitle].filter(Boolean).join(' · ') : labels.subtitle;
  const request: store.PdfRequest = { root: head.root, title: labels.title, subtitle, date: head.created_at.toISOString(), page: query.page, only: query.page ? !!query.only : undefined };
  const key = createHash('sha256').update(JSON.stringify([LAYOUT_VERSION, request])).digest('base64url');
  const name = fileName(labels.title, query.page ? selected[0]?.page.entry.slug : undefined);

  const existing = await store.reusablePdfExport(ctx.db, space.organization_id, key);
  if (existing && (await alive(ctx, existing))) return link(ctx, existing);
  // Said now rather than by a job that would fail later.
  await checkChromium(settings);

  // Real time, as the updates after it: whether a print is still alive is judged by it.
  const at = new Date();
  if (selected.length > settings.backgroundPages) {
    const row = await ctx.db.transaction().execute(async (trx) => {
      const row = await store.insertPdfExport(trx, space.organization_id, { id: newId(), spaceId: space.id, key, request, status: 'pending', pagesTotal: selected.length, name, at });
      const jobId = await ctx.jobs.enqueue(PDF_EXPORT_JOB, { export: row.id }, { db: trx });
      await store.setPdfExportJob(trx, row.id, jobId);
      return row;
    });
    return link(ctx, row);
  }
  const row = await store.insertPdfExport(ctx.db, space.organization_id, { id: newId(), spaceId: space.id, key, request, status: 'running', pagesTotal: selected.length, name, at });
  try {
    await printExport(ctx, row);
  } catch (err) {
    await store.updatePdfExport(ctx.db, row.id, { status: 'failed', reason: (err as Error).message });
    throw err;
  }
  return link(ctx, row);
}

/** Whether an export is printed or still being printed by someone (a print whose process or job died is not). */
async function alive(services: Pick<Services, 'db' | 'config'>, row: PdfExportRow): Promise<boolean> {
  if (row.status === 'done') return true;
  if (row.status === 'failed') return false;
  if (row.job_id !== null) {
    const job = await store.pdfJobStatus(services.db, row.job_id);
    return job === 'queued' || job === 'running';
  }
  // Printed while a request waited: it is over within the time limit, or its process stopped.
  return Date.now() - row.updated_at.getTime() < services.config.pdf.timeoutMs + 60_000;
}

async function link(ctx: Ctx, row: PdfExportRow): Promise<{ url: string }> {
  const token = await new SignJWT({ export: row.id })
    .setProtectedHeader({ alg: 'HS256', typ: 'JWT' })
    .setAudience(AUDIENCE)
    .setIssuer(ctx.config.publicUrl)
    .setSubject(ctx.user.id)
    .setIssuedAt()
    .setExpirationTime(`${PDF_LINK_TTL_SECONDS}s`)
    .sign(ctx.signingKey);
  return { url: ctx.urls.api(`/pdf/${encodeURIComponent(row.name)}?token=${token}`) };
}

/** How often layout progress is recorded, in pages. */
const PROGRESS_EVERY = 20;

/** Lays out the pages of an export and prints them; the export is done once the PDF is stored. */
async function printExport(services: Services, row: PdfExportRow): Promise<void> {
  const request = row.request as unknown as store.PdfRequest;
  const nav = await navigationOf(services.db, request.root);
  const selected = selection(nav, request);
  const file = (id: string) => {
    const f = nav.files.get(id);
    return f && { url: `/files/${encodeURIComponent(f.id)}/${encodeURIComponent(f.name)}`, name: f.name, contentType: f.contentType, size: f.size };
  };
  const pages: PrintedPage[] = selected.map(({ page, depth }) => {
    // A cover that is a space file (`/files/<id>`); one at another address is not fetched.
    const coverFile = page.entry.cover && /^\/files\/([^/#?]+)$/.exec(page.entry.cover.url)?.[1];
    return {
      id: page.id,
      title: page.title,
      depth,
      group: page.entry.type === 'group',
      emoji: page.emoji,
      description: page.entry.description,
      cover: coverFile ? file(coverFile)?.url : undefined,
    };
  });
  const bodies: string[] = [];
  for (const [i, { page }] of selected.entries()) {
    // Reads on the embedded database answer without a turn of the event loop: without this, laying
    // out a big space would hold back every request of the process (measured: seconds).
    await setImmediate();
    if (page.entry.type !== 'document' || !page.entry.doc) {
      bodies.push('');
      continue;
    }
    const { document } = await pageDocument(services.db, services.blobs, row.organization_id, request.root, page.entry);
    const scope = { space: { vars: nav.variables }, page: { vars: page.entry.variables ?? {} } };
    bodies.push(pageBodyHtml(pages, i, document, { file, expression: (e) => expressionValue(e, scope) }));
    if ((i + 1) % PROGRESS_EVERY === 0) await store.updatePdfExport(services.db, row.id, { pagesDone: i + 1 });
  }
  await store.updatePdfExport(services.db, row.id, { pagesDone: selected.length });
  const html = printHtml(pages, bodies, { title: request.title, subtitle: request.subtitle, date: new Date(request.date) });
  const data = await printPdf(services.config.pdf, {
    html,
    resource: (path) => resource(services, nav, path),
    footer: printFooter(request.title),
  });
  const blob = await services.blobs.put(data);
  await store.updatePdfExport(services.db, row.id, { status: 'done', blob });
}

const KATEX_DIST = join(dirname(createRequire(import.meta.url).resolve('katex/package.json')), 'dist');

/** What the printed document loads: the space's files (`/files/<id>/<name>`) and KaTeX's stylesheet and fonts. */
async function resource(services: Services, nav: Navigation, path: string): Promise<Resource | undefined> {
  const files = /^\/files\/([^/]+)\//.exec(path);
  if (files) {
    const file = nav.files.get(files[1]!);
    const data = file && (await services.blobs.read(file.blob));
    return data ? { body: data, contentType: file.contentType } : undefined;
  }
  if (path.startsWith('/katex/')) {
    const name = normalize(path.slice('/katex/'.length));
    if (!/^(katex\.min\.css|fonts\/[\w.-]+\.(woff2?|ttf))$/.test(name)) return undefined;
    const type = name.endsWith('.css') ? 'text/css; charset=utf-8' : name.endsWith('.ttf') ? 'font/ttf' : name.endsWith('.woff') ? 'font/woff' : 'font/woff2';
    return { body: await readFile(join(KATEX_DIST, name)), contentType: type };
  }
  return undefined;
}

/**
 * The job printing a big export. A print that fails for a reason to tell (no Chromium, too long)
 * fails the export at once; another is tried again, then fails the export with its message.
 */
export function pdfExportJob(services: Services) {
  return async (payload: { export: string }, job: JobContext) => {
    const row = await store.pdfExportById(job.db, payload.export);
    if (!row || (row.status !== 'pending' && row.status !== 'running')) return;
    await store.updatePdfExport(job.db, row.id, { status: 'running' });
    const log = (message: string, data: Record<string, unknown> = {}) => services.jobs.logger?.info({ pdfExport: row.id, pages: row.pages_total, ...data }, message);
    log('pdf export: printing');
    const started = Date.now();
    try {
      await printExport(services, row);
      log('pdf export: printed', { ms: Date.now() - started });
    } catch (err) {
      const told = err instanceof HttpError;
      if (!told && !job.lastAttempt) throw err;
      const reason = told ? (err as Error).message : `Internal error: ${(err as Error).message}`;
      services.jobs.logger?.warn({ pdfExport: row.id, err: reason }, 'pdf export failed');
      await store.updatePdfExport(job.db, row.id, { status: 'failed', reason });
    }
  };
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

/** The PDF is still being printed: try again shortly. */
export class PdfNotReadyError extends UnavailableError {
  readonly retryAfterSeconds = 5;
}

/**
 * The PDF a link token names, once printed: a print in progress is waited for a little (then
 * PdfNotReadyError, saying how far it is); an expired, tampered or foreign token is refused.
 */
export async function pdfForToken(services: Pick<Services, 'db' | 'config' | 'signingKey'>, token: string): Promise<{ blob: string; name: string }> {
  let claims: { export?: unknown };
  try {
    claims = (await jwtVerify(token, services.signingKey, { algorithms: ['HS256'], audience: AUDIENCE })).payload as typeof claims;
  } catch (err) {
    if (err instanceof joseErrors.JWTExpired) throw new UnauthorizedError('This PDF link has expired: ask for a new one');
    throw new UnauthorizedError('This PDF link is not valid');
  }
  if (typeof claims.export !== 'string') throw new UnauthorizedError('This PDF link is not valid');
  const deadline = Date.now() + DOWNLOAD_WAIT_MS;
  for (;;) {
    const row = await store.pdfExportById(services.db, claims.export);
    if (!row) throw new NotFoundError('PDF', 'ask for a new link');
    if (row.status === 'done' && row.blob) return { blob: row.blob, name: row.name };
    if (!(await alive(services, row))) throw new UnavailableError(`The PDF could not be printed${row.reason ? `: ${row.reason}` : ''}. Ask for it again`);
    if (Date.now() > deadline) {
      const progress = row.status === 'pending' ? 'waiting for its turn' : `${row.pages_done} of ${row.pages_total} pages laid out`;
      throw new PdfNotReadyError(`The PDF is still being printed (${progress}): try this link again in a few seconds`);
    }
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}
