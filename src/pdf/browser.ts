import { constants } from 'node:fs';
import { access } from 'node:fs/promises';
import type { Browser, BrowserContext } from 'playwright-core';
import type { PdfSettings } from '../platform/config.ts';
import { UnavailableError } from '../platform/errors.ts';

/**
 * Printing HTML to PDF with Chromium, driven by playwright-core (the browser the site tests use).
 *
 * One browser per process and executable, launched at the first print, reused by every print after
 * it (each print in a fresh context), launched again if it dies, and closed on shutdown
 * (closePrinters). At most `concurrency` prints run at once; the others wait their turn, within the
 * same time limit as the print itself.
 *
 * The printed page reaches nothing but what `resource` answers: every request goes through it, and
 * any it does not answer is refused, so a page cannot make the server fetch another address (its
 * external images are left out). JavaScript is off: the page is static HTML.
 */

/** The origin the printed document is served from (reserved name: never resolved, only intercepted). */
export const PRINT_ORIGIN = 'http://print.invalid';

/** Flags for a headless Chromium in a container (the browser tests start theirs with these too). */
export const CHROMIUM_ARGS = [
  '--no-sandbox',
  '--disable-dev-shm-usage',
  '--disable-gpu',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
  '--no-first-run',
];

export interface Resource {
  body: Buffer | Uint8Array | string;
  contentType: string;
}

export interface PrintJob {
  /** The HTML document to print. */
  html: string;
  /** Bytes for a path of PRINT_ORIGIN the document loads (`/files/…`), undefined: refused. */
  resource(path: string): Promise<Resource | undefined>;
  /** Footer of every sheet, as HTML (Chromium's template: `pageNumber`, `totalPages` classes). */
  footer?: string;
}

/** Chromium is missing or does not start: what to install, or which setting to fix. */
export class ChromiumUnavailableError extends UnavailableError {}

function missing(path: string): ChromiumUnavailableError {
  return new ChromiumUnavailableError(
    `Printing PDFs needs Chromium, which is not installed at ${path}: install it (apt-get install chromium) or set CHROMIUM_PATH to the Chromium or Chrome executable`,
  );
}

/** Whether the configured Chromium is there; throws ChromiumUnavailableError saying what to install when not. */
export async function checkChromium(settings: Pick<PdfSettings, 'chromiumPath'>): Promise<void> {
  try {
    await access(settings.chromiumPath, constants.X_OK);
  } catch {
    throw missing(settings.chromiumPath);
  }
}

/** Counts the prints running and queues the others. */
class Slots {
  private running = 0;
  private readonly waiting: (() => void)[] = [];
  constructor(private readonly size: number) {}

  async take(signal: AbortSignal): Promise<void> {
    if (this.running < this.size) {
      this.running++;
      return;
    }
    await new Promise<void>((resolve, reject) => {
      const go = () => {
        signal.removeEventListener('abort', abort);
        this.running++;
        resolve();
      };
      const abort = () => {
        this.waiting.splice(this.waiting.indexOf(go), 1);
        reject(signal.reason);
      };
      this.waiting.push(go);
      signal.addEventListener('abort', abort, { once: true });
    });
  }

  give(): void {
    this.running--;
    this.waiting.shift()?.();
  }
}

class Printer {
  private browser: Promise<Browser> | undefined;
  private readonly slots: Slots;
  private closed = false;

  constructor(private readonly settings: Pick<PdfSettings, 'chromiumPath' | 'concurrency'>) {
    this.slots = new Slots(settings.concurrency);
  }

  private launch(): Promise<Browser> {
    if (this.browser) return this.browser;
    const launching = (async () => {
      await checkChromium(this.settings);
      let chromium: typeof import('playwright-core').chromium;
      try {
        ({ chromium } = await import('playwright-core'));
      } catch (err) {
        throw new ChromiumUnavailableError('Printing PDFs needs the playwright-core package, which is not installed: run npm install in Folio\'s directory', err);
      }
      try {
        const browser = await chromium.launch({ executablePath: this.settings.chromiumPath, args: CHROMIUM_ARGS, timeout: 60_000 });
        // A browser that crashed or was killed is launched again by the next print.
        browser.on('disconnected', () => {
          if (this.browser === launching) this.browser = undefined;
        });
        return browser;
      } catch (err) {
        throw new ChromiumUnavailableError(`Chromium at ${this.settings.chromiumPath} did not start: ${(err as Error).message.split('\n')[0]}`, err);
      }
    })();
    launching.catch(() => {
      if (this.browser === launching) this.browser = undefined;
    });
    this.browser = launching;
    return launching;
  }

  /** Prints within `timeoutMs`, its wait for a turn and the browser's start included. */
  async print(job: PrintJob, timeoutMs: number): Promise<Uint8Array> {
    if (this.closed) throw new UnavailableError('The server is stopping: ask for the PDF again');
    const timeout = AbortSignal.timeout(timeoutMs);
    const late = () => new UnavailableError(`Printing the PDF took longer than ${Math.round(timeoutMs / 1000)} seconds (PDF_TIMEOUT_MS): print part of it with "page"`);
    try {
      await this.slots.take(timeout);
    } catch {
      throw late();
    }
    let context: BrowserContext | undefined;
    const work = (async () => {
      const browser = await this.launch();
      const opened = await browser.newContext({ javaScriptEnabled: false, serviceWorkers: 'block' });
      context = opened;
      // Too late already: the context is closed by the `finally` below (it may have run already).
      if (timeout.aborted) {
        await opened.close().catch(() => {});
        throw late();
      }
      return this.render(opened, job);
    })();
    work.catch(() => {});
    const expired = new Promise<never>((_, reject) => {
      const stop = () => {
        reject(late());
        // Closing the context stops whatever the page was doing.
        context?.close().catch(() => {});
      };
      if (timeout.aborted) stop();
      else timeout.addEventListener('abort', stop, { once: true });
    });
    expired.catch(() => {});
    try {
      return await Promise.race([expired, work]);
    } finally {
      this.slots.give();
      await (context as BrowserContext | undefined)?.close().catch(() => {});
    }
  }

  private async render(context: BrowserContext, job: PrintJob): Promise<Uint8Array> {
    const page = await context.newPage();
    await page.route('**/*', async (route) => {
      const url = new URL(route.request().url());
      if (url.origin !== PRINT_ORIGIN) return route.abort('blockedbyclient');
      const path = decodeURIComponent(url.pathname);
      const found = path === '/' ? { body: job.html, contentType: 'text/html; charset=utf-8' } : await job.resource(path).catch(() => undefined);
      if (!found) return route.fulfill({ status: 404, body: '' });
      return route.fulfill({ status: 200, contentType: found.contentType, body: typeof found.body === 'string' ? found.body : Buffer.from(found.body) });
    });
    // `load`: the stylesheet, fonts and every image are in.
    await page.goto(`${PRINT_ORIGIN}/`, { waitUntil: 'load', timeout: 0 });
    // Links within the document stay (they jump inside the PDF) and so do absolute ones; a link to
    // another path of the print origin (a file to download) would lead nowhere once printed: text.
    await page.evaluate(() => {
      for (const a of Array.from(document.querySelectorAll('a[href]'))) if (a.getAttribute('href')!.startsWith('/')) a.removeAttribute('href');
    });
    const pdf = await page.pdf({
      format: 'A4',
      printBackground: true,
      outline: true,
      tagged: true,
      margin: { top: '18mm', bottom: '18mm', left: '16mm', right: '16mm' },
      displayHeaderFooter: job.footer !== undefined,
      headerTemplate: '<span></span>',
      footerTemplate: job.footer ?? '<span></span>',
    });
    return new Uint8Array(pdf);
  }

  async close(): Promise<void> {
    this.closed = true;
    const browser = this.browser;
    this.browser = undefined;
    await browser?.then((b) => b.close()).catch(() => {});
  }
}

/** One printer per Chromium executable; its number of slots is PDF_CONCURRENCY as it was at its first print. */
const printers = new Map<string, Printer>();

/** Prints a document with the configured Chromium (see the top of this file). */
export function printPdf(settings: PdfSettings, job: PrintJob): Promise<Uint8Array> {
  let printer = printers.get(settings.chromiumPath);
  if (!printer) printers.set(settings.chromiumPath, (printer = new Printer(settings)));
  return printer.print(job, settings.timeoutMs);
}

/** Closes the browsers of this process (on shutdown). */
export async function closePrinters(): Promise<void> {
  const all = [...printers.values()];
  printers.clear();
  await Promise.all(all.map((p) => p.close()));
}
