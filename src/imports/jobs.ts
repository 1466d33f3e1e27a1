import { generateNKeysBetween } from 'fractional-indexing';
import { addContributor, lockChangeRequest, lockSpace, setSpaceRevision, updateChangeRequest } from '../change-requests/store.ts';
import { newRevision } from '../change-requests/service.ts';
import { importTree } from '../git/convert.ts';
import { GitError } from '../git/git.ts';
import { ContentEditor, ContentReader, EMPTY, putDocuments, type PageEntry } from '../content/model.ts';
import { loadRevision } from '../content/service.ts';
import { emitSpaceEvent } from '../events/outbox.ts';
import { SITES_CONTENT, SITES_TOPIC } from '../platform/bus.ts';
import type { Ctx, Services } from '../platform/context.ts';
import type { Db } from '../platform/db/database.ts';
import type { ImportRunRow } from '../platform/db/schema.ts';
import { HttpError } from '../platform/errors.ts';
import type { JobContext } from '../platform/jobs.ts';
import { refreshSearchIndex } from '../search/indexer.ts';
import { uploadedFile } from '../storage/service.ts';
import type { ArchiveLimits } from './archive.ts';
import { IMPORT_RUN_JOB } from './service.ts';
import { ImportError, sourceProject, websiteImports, type Upload } from './sources.ts';
import type { Project, SourceTree } from './projects/nav.ts';
import { attachWebsiteAssets, websiteProject } from './projects/website.ts';
import * as store from './store.ts';
import { buildVirtualRepo, type ImportWarning } from './virtual-build.ts';
import { VIRTUAL_COMMIT } from './virtual-repo.ts';

export { IMPORT_RUN_JOB };

/** The most warnings a run keeps (the rest are counted in the last one). */
const MAX_WARNINGS = 1000;

export interface ImportJobOptions {
  /** Archive limits (tests lower them). */
  limits?: ArchiveLimits;
  /** How long a run may take before it fails (default 15 minutes). */
  timeLimitMs?: number;
  /** Called once the pages are converted, before anything is written (tests cancel there). */
  afterConvert?: (runId: string) => Promise<void>;
}

/** The run was cancelled while the job ran: it stops, writing nothing. */
class Cancelled extends Error {}

/**
 * The job of an import run: uploads → source tree → recognised project → virtual GitBook
 * repository → content tree (the git importer, importTree) → grafted under the target, written
 * as one revision (of the change request, or merged into the space) in the same transaction
 * that marks the run completed. A cancel between any two steps stops it before the write; a
 * retry after a crash starts again from the uploads (nothing was written), and a completed run
 * is never run again.
 */
export function importRunJob(services: Services, options: ImportJobOptions = {}) {
  return async (payload: { run: string }, job: JobContext) => {
    const first = await store.importRunById(job.db, payload.run);
    if (!first || (first.status !== 'pending' && first.status !== 'in-progress')) return;
    const org = first.organization_id;
    const started = await store.updateImportRun(job.db, org, first.id, { status: 'in-progress', started_at: first.started_at ?? new Date(services.now()) });
    if (!started || started.status !== 'in-progress') return;
    const deadline = Date.now() + (options.timeLimitMs ?? 15 * 60_000);
    const log = (message: string, data: Record<string, unknown> = {}) => services.jobs.logger?.info({ importRun: first.id, ...data }, message);
    const checkTime = () => {
      if (Date.now() > deadline) throw new ImportError(`the import took longer than ${Math.round((options.timeLimitMs ?? 15 * 60_000) / 1000)} seconds: import fewer files at once`);
    };
    /** Records progress while the run is still in progress; throws Cancelled when it no longer is. */
    const record = async (set: store.ImportRunUpdate) => {
      checkTime();
      const row = await job.db
        .updateTable('import_runs')
        .set({ updated_at: new Date() })
        .where('id', '=', first.id)
        .where('status', '=', 'in-progress')
        .returning('id')
        .executeTakeFirst();
      if (!row) throw new Cancelled();
      if (Object.keys(set).length) await store.updateImportRun(job.db, org, first.id, set);
    };
    try {
      await run(services, job.db, started, { options, record, log, checkTime });
    } catch (err) {
      if (err instanceof Cancelled) {
        log('import run: cancelled');
        return;
      }
      const userFacing = err instanceof ImportError || err instanceof HttpError || err instanceof GitError;
      const reason = userFacing ? (err as Error).message : `Internal error: ${(err as Error).message}`;
      services.jobs.logger?.warn({ importRun: first.id, err: reason }, 'import run failed');
      if (!userFacing && !job.lastAttempt) throw err; // retried: nothing was written
      await job.db
        .updateTable('import_runs')
        .set({ status: 'failed', reason: reason.slice(0, 2000), updated_at: new Date() })
        .where('id', '=', first.id)
        .where('status', 'in', ['pending', 'in-progress'])
        .execute();
    }
  };
}

interface RunTools {
  options: ImportJobOptions;
  record: (set: store.ImportRunUpdate) => Promise<void>;
  log: (message: string, data?: Record<string, unknown>) => void;
  checkTime: () => void;
}

async function run(services: Services, db: Db, row: ImportRunRow, tools: RunTools): Promise<void> {
  const org = row.organization_id;
  const source = row.source as { type: 'file'; files: string[] } | { type: 'website'; url: string };
  if (!row.created_by) throw new ImportError('the member who started the import no longer exists');
  const user = await db.selectFrom('users').selectAll().where('id', '=', row.created_by).executeTakeFirst();
  if (!user) throw new ImportError('the member who started the import no longer exists');
  const ctx: Ctx = { ...services, user } as Ctx;
  const warnings: ImportWarning[] = [];
  const warn = (message: string) => warnings.push({ message });

  // 1. The source as a tree of files and what it is: uploads (read, archives opened, recognised),
  // or a crawled website.
  let tree: SourceTree;
  let project: Project;
  let label: string;
  let sourceURL = (path: string) => path;
  if (source.type === 'website') {
    if (!websiteImports.crawl || !websiteImports.toMarkdown) throw new ImportError('website imports are not supported yet');
    const site = await crawlSite(services, source.url, warn, tools);
    ({ tree, project } = site);
    sourceURL = (path) => site.urls.get(path) ?? path;
    label = 'website';
  } else {
    const uploads: Upload[] = [];
    for (const key of source.files) {
      const { data, row: up } = await uploadedFile(ctx, org, key);
      uploads.push({ key, name: up.name, contentType: up.content_type, data: Buffer.from(data) });
    }
    const read = await sourceProject(uploads, { warn, ...(tools.options.limits ? { limits: tools.options.limits } : {}) });
    ({ tree, project, label } = read);
    if (read.sources) sourceURL = (path) => read.sources!.get(path) ?? path;
  }
  await tools.record({});

  // 2. The virtual GitBook repository the project becomes.
  const built = buildVirtualRepo(tree, project, { cancelled: tools.checkTime });
  warnings.push(...built.warnings);
  const kept = warnings.length > MAX_WARNINGS ? [...warnings.slice(0, MAX_WARNINGS - 1), { message: `${warnings.length - MAX_WARNINGS + 1} more warnings` }] : warnings;
  const progress = { pagesFound: built.pagesFound, pagesConverted: built.pagesConverted, pagesFailed: built.pagesFailed };
  await tools.record({ project: label, progress, warnings: kept });
  tools.log('import run: converted', { project: project.kind, ...progress });
  await tools.options.afterConvert?.(row.id);
  await tools.record({});

  // 3. The content tree, built by the git importer from the virtual repository (content-addressed
  // documents and tree nodes: nothing refers to them until the revision below).
  const imported = await importTree(db, built.repo, VIRTUAL_COMMIT, {
    spaceId: row.space_id,
    projectDir: '',
    base: { root: EMPTY, manifest: null },
    progress: (message, data) => tools.log(message, data),
    blobs: services.blobs,
  });
  await tools.record({});
  const content = await new ContentReader(db, imported.root).all();
  const sourceOfPage = new Map<string, string>();
  for (const [id, p] of Object.entries(imported.manifest.pages)) if (p.path && built.sources.has(p.path)) sourceOfPage.set(id, sourceURL(built.sources.get(p.path)!));

  // 4. One write: the import grafted under the target, the run completed, in one transaction.
  const outcome = await db.transaction().execute(async (trx) => {
    const locked = await store.lockImportRun(trx, org, row.id);
    if (!locked || locked.status !== 'in-progress') throw new Cancelled();
    const space = await lockSpace(trx, org, row.space_id);
    if (space.deleted_at) throw new ImportError('the target space was deleted');
    if (space.edit_mode === 'locked') throw new ImportError('the target space is locked');
    let revision: string;
    if (row.change_request_id) {
      const cr = await lockChangeRequest(trx, org, row.change_request_id);
      if (cr.status === 'merged' || cr.status === 'archived') throw new ImportError(`the target change request is ${cr.status}`);
      const head = await loadRevision(trx, space.id, cr.revision);
      const editor = new ContentEditor(trx, head.root);
      await graft(trx, editor, content, row.page_id, space.id);
      revision = await newRevision(trx, space, await editor.commit(trx), [head.id], 'edits', user.id);
      await addContributor(trx, cr.id, user.id);
      await updateChangeRequest(trx, org, cr.id, { revision, updated_at: new Date() });
    } else {
      const current = await loadRevision(trx, space.id, space.revision_id);
      const editor = new ContentEditor(trx, current.root);
      await graft(trx, editor, content, row.page_id, space.id);
      revision = await newRevision(trx, space, await editor.commit(trx), [current.id], 'edits', user.id);
      await setSpaceRevision(trx, org, space.id, revision, new Date());
      await emitSpaceEvent(trx, services.jobs, space, { type: 'space_content_updated', revisionId: revision, updatedBy: [] });
    }
    const pages = [...content.pages.values()].map((p) => ({
      id: p.id,
      type: [...content.pages.values()].some((c) => c.parent === p.id) || p.type === 'group' ? ('folder' as const) : ('page' as const),
      status: 'complete' as const,
      ...(sourceOfPage.has(p.id) ? { sourceURL: sourceOfPage.get(p.id)! } : {}),
    }));
    await store.updateImportRun(trx, org, row.id, { status: 'completed', completed_at: new Date(services.now()), result_revision: revision, pages });
    return { revision, merged: !row.change_request_id };
  });
  tools.log('import run: completed', { revision: outcome.revision, pages: content.pages.size, files: content.files.length });
  if (outcome.merged) {
    void services.bus.publish(SITES_TOPIC, SITES_CONTENT);
    await refreshSearchIndex(db, row.space_id, services.jobs).catch((err) => services.jobs.logger?.error({ err, space: row.space_id }, 'search index refresh failed'));
  }
}

/** The most images of a website import downloaded as space files (the others stay links to the site). */
const MAX_WEBSITE_ASSETS = 2000;
const IMAGE_EXTENSIONS: Record<string, string> = { 'image/png': '.png', 'image/jpeg': '.jpg', 'image/gif': '.gif', 'image/webp': '.webp', 'image/svg+xml': '.svg', 'image/avif': '.avif' };

/**
 * Crawls a website source while watching the run: every few hundred milliseconds the run's
 * progress (pages fetched) is recorded, and a cancel (or the run's time limit) aborts the crawl
 * and the downloads at once. The pages' images are then downloaded through the vetted fetch
 * (the same reach as the crawl), bounded by IMPORT_WEBSITE_MAX_BYTES, and stored in the tree.
 */
async function crawlSite(services: Services, url: string, warn: (m: string) => void, tools: RunTools) {
  const controller = new AbortController();
  let fetched = 0;
  let recorded = -1;
  let recording = false;
  const poll = setInterval(() => {
    if (recording || controller.signal.aborted) return;
    recording = true;
    const n = fetched;
    tools
      .record(n !== recorded ? { progress: { pagesFound: n, pagesConverted: 0, pagesFailed: 0 } } : {})
      .then(() => (recorded = n))
      .catch((err) => controller.abort(err))
      .finally(() => (recording = false));
  }, 250);
  try {
    const crawled = await websiteImports.crawl!(url, services, { signal: controller.signal, onProgress: (n) => (fetched = n) });
    crawled.warnings.forEach(warn);
    const site = websiteProject(crawled.pages, websiteImports.toMarkdown!, warn);
    if (websiteImports.fetchAsset && site.assets.size) {
      const wanted = [...new Set([...site.assets.values()].flat())].filter((u) => /^https?:\/\//i.test(u));
      if (wanted.length > MAX_WEBSITE_ASSETS) warn(`the pages show ${wanted.length} images: the first ${MAX_WEBSITE_ASSETS} were stored, the others stay links to the site`);
      const stored = new Map<string, string>();
      let bytesLeft = services.config.importWebsiteMaxBytes;
      for (const [i, asset] of wanted.slice(0, MAX_WEBSITE_ASSETS).entries()) {
        if (controller.signal.aborted) throw controller.signal.reason;
        if (bytesLeft <= 0) {
          warn(`the images reached ${services.config.importWebsiteMaxBytes} bytes: the others stay links to the site`);
          break;
        }
        try {
          const { data, contentType } = await websiteImports.fetchAsset(asset, services, { signal: controller.signal, maxBytes: bytesLeft });
          bytesLeft -= data.length;
          if (contentType && !/^image\//i.test(contentType)) throw new Error(`it is not an image (${contentType})`);
          let name = (new URL(asset).pathname.split('/').pop() ?? '').replace(/%[0-9a-f]{2}|[^\w.-]+/gi, '-').replace(/^[.-]+/, '');
          name ||= 'image';
          const extension = IMAGE_EXTENSIONS[(contentType ?? '').toLowerCase()];
          if (extension && !/\.[a-z0-9]{2,5}$/i.test(name)) name += extension;
          const path = `_images/${i}/${name}`;
          site.tree.set(path, data);
          stored.set(asset, path);
        } catch (err) {
          if (controller.signal.aborted) throw controller.signal.reason;
          warn(`the image ${asset} was not stored (${(err as Error).message}): it stays a link to the site`);
        }
      }
      attachWebsiteAssets(site.tree, site.assets, stored);
    }
    return site;
  } finally {
    clearInterval(poll);
  }
}

/**
 * Puts the imported pages and files into `editor`: the import's top-level pages after the target
 * parent's children (slugs kept unique among them), its groups as pages when they land below a
 * page (groups exist at the top level only).
 */
async function graft(trx: Db, editor: ContentEditor, content: Awaited<ReturnType<ContentReader['all']>>, parentId: string | null, spaceId: string) {
  const top = [...content.pages.values()].filter((p) => p.parent === null).sort((a, b) => (a.pos < b.pos ? -1 : a.pos > b.pos ? 1 : 0));
  const siblings = await editor.children(parentId);
  const last = siblings.length ? siblings[siblings.length - 1]!.pos : null;
  const positions = generateNKeysBetween(last, null, top.length);
  const slugs = new Set(siblings.map((s) => s.slug));
  let empty: string | undefined;
  for (const [i, page] of top.entries()) {
    let slug = page.slug;
    for (let n = 2; slugs.has(slug); n++) slug = `${page.slug}-${n}`;
    slugs.add(slug);
    let entry: PageEntry = { ...page, parent: parentId, pos: positions[i]!, slug };
    if (parentId !== null && entry.type === 'group') {
      empty ??= (await putDocuments(trx, spaceId, ['']))[0]!;
      entry = { ...entry, type: 'document', doc: empty };
    }
    editor.putPage(entry);
  }
  for (const page of content.pages.values()) if (page.parent !== null) editor.putPage(page);
  const children = new Map<string, string[]>();
  for (const page of content.pages.values()) if (page.parent !== null) children.set(page.parent, [...(children.get(page.parent) ?? []), page.id]);
  for (const [parent, ids] of children) await editor.setChildren(parent, ids);
  await editor.setChildren(parentId, [...(await editor.childIds(parentId)), ...top.map((p) => p.id)]);
  for (const file of content.files) editor.putFile(file);
}
