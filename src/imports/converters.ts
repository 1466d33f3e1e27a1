import { posix } from 'node:path';
import { fetchVetted } from '../content/files.ts';
import { BadRequestError } from '../platform/errors.ts';
import { docxToHtml } from './docx.ts';
import { readHtmlExport } from './html-export.ts';
import { htmlToGitbookMarkdown } from './html.ts';
import { titleOf } from './projects/nav.ts';
import { htmlExportProject } from './projects/html-export.ts';
import { CONVERTERS, ImportError, TREE_READERS, websiteImports } from './sources.ts';
import { crawlWebsite } from './website.ts';

/**
 * The converters of src/imports/html.ts, docx.ts, html-export.ts and website.ts registered with
 * the import framework (src/imports/sources.ts): imported once by the imports service, so the API
 * (which accepts or refuses sources) and the job (which converts them) see the same ones.
 */

const safeName = (name: string) => name.replace(/[^\w.-]+/g, '-').replace(/^[.-]+/, '') || 'file';

// A folder of HTML pages (a Notion or Confluence export, plain HTML files, one HTML file): its
// hierarchy and order kept, through readHtmlExport.
TREE_READERS.push(async (tree, warn) => {
  const read = readHtmlExport(tree);
  if (!read || read.pages.length === 0) return undefined;
  read.warnings.forEach(warn);
  const built = htmlExportProject(tree, read, htmlToGitbookMarkdown, warn);
  return { ...built, label: read.kind };
});

// An HTML file among Markdown files: one page, its images where the HTML says they are, its links
// to other HTML files pointed at the pages they become.
CONVERTERS.set('.html', async ({ path, data }, warn) => {
  const converted = htmlToGitbookMarkdown(data.toString('utf8'), {
    rewriteLink: (href) => {
      const m = /^([^:?#]*\/)?([^/:?#]+)\.html?(#.*)?$/i.exec(href);
      if (!m || /^[a-z][a-z0-9+.-]*:|^\/\//i.test(href)) return href;
      let stem = m[2]!;
      try {
        stem = decodeURIComponent(stem);
      } catch {
        // kept as written
      }
      return `${m[1] ?? ''}${safeName(stem)}.md${m[3] ?? ''}`;
    },
  });
  converted.warnings.forEach(warn);
  const stem = posix.basename(path).replace(/\.html?$/i, '');
  return [{ path: `${safeName(stem)}.md`, data: Buffer.from(`# ${converted.title ?? titleOf(stem)}\n\n${converted.markdown}`) }];
});
CONVERTERS.set('.htm', CONVERTERS.get('.html')!);

// A Word document: one page (its first heading the title, else the file's name), its images
// beside it in a folder of their own (space files once imported).
CONVERTERS.set('.docx', async ({ path, data }, warn) => {
  const stem = posix.basename(path).replace(/\.docx$/i, '');
  const name = safeName(stem);
  let doc: Awaited<ReturnType<typeof docxToHtml>>;
  try {
    doc = await docxToHtml(data);
  } catch (err) {
    if (err instanceof BadRequestError) throw new ImportError(`${path}: ${err.message}`);
    throw err;
  }
  doc.warnings.forEach(warn);
  const folder = `${name}.docx-images`;
  const converted = htmlToGitbookMarkdown(doc.html, { rewriteAsset: (src) => (doc.images.some((i) => i.name === src) ? `${folder}/${encodeURIComponent(src)}` : src) });
  converted.warnings.forEach(warn);
  return [
    { path: `${name}.md`, data: Buffer.from(`# ${converted.title ?? titleOf(stem)}\n\n${converted.markdown}`) },
    ...doc.images.map((i) => ({ path: `${folder}/${i.name}`, data: i.bytes })),
  ];
});

// Websites: crawled under the configuration's bounds and reach, each page's main content converted.
websiteImports.crawl = (url, services, opts = {}) =>
  crawlWebsite(url, {
    maxPages: services.config.importWebsiteMaxPages,
    maxBytes: services.config.importWebsiteMaxBytes,
    timeoutMs: services.config.importWebsiteTimeoutMs,
    reach: { fetchAllowPrivate: services.config.fetchAllowPrivate, fetchAllowCidrs: services.config.fetchAllowCidrs },
    ...(opts.signal ? { signal: opts.signal } : {}),
    ...(opts.onProgress ? { onProgress: opts.onProgress } : {}),
  });
websiteImports.toMarkdown = (html, { baseUrl }) => htmlToGitbookMarkdown(html, { ...(baseUrl ? { baseUrl } : {}), mainContent: true });
websiteImports.fetchAsset = async (url, services, { signal, maxBytes }) => {
  const res = await fetchVetted(url, {
    config: { fetchAllowPrivate: services.config.fetchAllowPrivate, fetchAllowCidrs: services.config.fetchAllowCidrs },
    signal,
    maxBytes,
    tooLarge: () => new BadRequestError(`it is larger than ${maxBytes} bytes, the bytes left for this import`),
    privateHint: '; a website import only reaches public addresses',
  });
  return { data: res.data, ...(res.contentType ? { contentType: res.contentType } : {}) };
};
