import { emitSpaceEvent } from '../events/outbox.ts';
import { presentUser } from '../users/presenter.ts';
import { mergeContents, hasConflictMarkers, type Conflict } from '../content/merge.ts';
import { ContentEditor, ContentReader, getDocuments, putDocuments, type PageEntry, type PageInput, type ReusableContentEntry, type Variables } from '../content/model.ts';
import { canonicalCover, canonicalLinks, INCLUDES_DIRECTORY, pageDirectory } from '../content/page-links.ts';
import { readFrontMatter, VARIABLE_NAME, type PageMetadata } from '../content/markdown/front-matter.ts';
import { decodeBase64, fetchFile, FileBudget, imageDimensions, putBlob } from '../content/files.ts';
import { loadRevision } from '../content/service.ts';
import { refreshSearchIndex } from '../search/indexer.ts';
import { changeRequestHooks } from './hooks.ts';
import type { Ctx } from '../platform/context.ts';
import type { Db } from '../platform/db/database.ts';
import type { ChangeRequestRow, ChangeRequestStatus, MergeRules, Role, SpaceRow } from '../platform/db/schema.ts';
import { BadRequestError, ConflictError, ForbiddenError, NotFoundError } from '../platform/errors.ts';
import { newId } from '../platform/ids.ts';
import type { PageRequest } from '../platform/paging.ts';
import { assertContentRole } from '../platform/policy.ts';
import { orgRoleOf } from '../access/effective.ts';
import { loadSpace, type SpaceAccess } from '../spaces/access.ts';
import { visibleSpaces } from '../spaces/service.ts';
import { documentInputToMarkdown, normalizeDocumentInput } from '../content/convert.ts';
import { checkMarkdownLimits } from '../platform/document-limits.ts';
import type { ContentChangeInput } from './schemas.ts';
import * as store from './store.ts';
import type { ChangeRequestFilters } from './store.ts';
import { clusterExists } from '../insights/service.ts';

/** A cluster id a change request may be tied to: one of the space's organization (400 otherwise). */
async function clusterLink(db: Db, organizationId: string, cluster: string | null | undefined): Promise<string | null | undefined> {
  if (cluster === undefined || cluster === null) return cluster;
  if (!(await clusterExists(db, organizationId, cluster))) throw new BadRequestError(`conversationsIssuesCluster: "${cluster}" is not an issues cluster of the organization`);
  return cluster;
}

export class MergeConflictError extends ConflictError {
  constructor(
    message: string,
    readonly conflicts: Conflict[],
  ) {
    super(message);
  }
}

export interface CrAccess extends SpaceAccess {
  cr: ChangeRequestRow;
}

/** A change request of a space the caller can read, by id or by number. */
export async function loadChangeRequest(ctx: Ctx, spaceId: string, idOrNumber: string): Promise<CrAccess> {
  const access = await loadSpace(ctx, spaceId);
  const key = /^\d{1,9}$/.test(idOrNumber) ? { number: Number(idOrNumber) } : { id: idOrNumber };
  const cr = await store.findChangeRequest(ctx.db, access.space.organization_id, access.space.id, key);
  if (!cr) throw new NotFoundError('Change request');
  return { ...access, cr };
}

async function requireChangeRequest(ctx: Ctx, spaceId: string, idOrNumber: string, min: Role, action: string) {
  const access = await loadChangeRequest(ctx, spaceId, idOrNumber);
  assertContentRole(access.role, min, action);
  return access;
}

function assertLive(space: SpaceRow, action: string) {
  if (space.edit_mode === 'locked') throw new ForbiddenError(`The space is locked: nobody can ${action} until its editMode is "live" again`);
}

function assertOpen(cr: ChangeRequestRow, action: string) {
  if (cr.status === 'merged' || cr.status === 'archived') {
    throw new BadRequestError(`Cannot ${action}: the change request is ${cr.status}`);
  }
}

/** Records a new revision of the space (its parents first); the locks are explained in store.ts. */
export async function newRevision(trx: Db, space: SpaceRow, root: string, parents: string[], type: string, userId: string) {
  return store.insertRevision(trx, space, root, parents, type, userId);
}

export async function createChangeRequest(ctx: Ctx, spaceId: string, input: { subject?: string | undefined; conversationsIssuesCluster?: string | null | undefined }) {
  const { space, role } = await loadSpace(ctx, spaceId);
  assertContentRole(role, 'edit', 'open a change request');
  const cluster = await clusterLink(ctx.db, space.organization_id, input.conversationsIssuesCluster);
  const cr = await ctx.db.transaction().execute(async (trx) => {
    // Numbers are per space: lock the space row so two creations never take the same number.
    const locked = await store.lockSpace(trx, space.organization_id, space.id);
    return store.insertChangeRequest(trx, space, {
      number: await store.nextNumber(trx, space.organization_id, space.id),
      subject: input.subject ?? '',
      createdBy: ctx.user.id,
      revision: locked.revision_id,
      cluster: cluster ?? null,
    });
  });
  return { cr, space };
}

export interface ChangeRequestQuery extends PageRequest, ChangeRequestFilters {
  status?: ChangeRequestStatus | undefined;
}

export async function listChangeRequests(ctx: Ctx, spaceId: string, query: ChangeRequestQuery) {
  const { space } = await loadSpace(ctx, spaceId);
  return { space, ...(await store.listInSpace(ctx.db, space.organization_id, space.id, [query.status ?? 'open'], query, query)) };
}

/** Change requests of every space of the organization the caller can read. */
export async function listOrganizationChangeRequests(
  ctx: Ctx,
  organizationId: string,
  query: Omit<ChangeRequestQuery, 'status'> & { statuses?: ChangeRequestStatus[] | undefined; space?: string | undefined },
) {
  const orgRole = await orgRoleOf(ctx.db, organizationId, ctx.user.id);
  if (orgRole === undefined) throw new NotFoundError('Organization');
  const spaces = visibleSpaces(ctx.db, organizationId, ctx.user.id, orgRole).clearSelect().select('spaces.id');
  // As in the official API: open change requests unless other statuses are asked for.
  return store.listInSpaces(ctx.db, organizationId, spaces, query.statuses?.length ? query.statuses : ['open'], query, query);
}

export async function updateChangeRequest(
  ctx: Ctx,
  spaceId: string,
  idOrNumber: string,
  input: { subject?: string | undefined; description?: unknown; status?: 'draft' | 'open' | 'archived' | undefined; conversationsIssuesCluster?: string | null | undefined },
) {
  const { cr } = await requireChangeRequest(ctx, spaceId, idOrNumber, 'edit', 'change the change request');
  const cluster = await clusterLink(ctx.db, cr.organization_id, input.conversationsIssuesCluster);
  if (cr.status === 'merged' && input.status) throw new BadRequestError('status: a merged change request keeps its status');
  const description = input.description !== undefined ? await normalizeDocumentInput(input.description, 'description') : undefined;
  return store.updateChangeRequest(ctx.db, cr.organization_id, cr.id, {
    ...(input.subject !== undefined ? { subject: input.subject } : {}),
    ...(description !== undefined ? { description } : {}),
    ...(input.status !== undefined ? { status: input.status } : {}),
    ...(cluster !== undefined ? { conversations_issues_cluster: cluster } : {}),
    updated_at: new Date(),
  });
}

/**
 * Front matter and a leading `# Title` become page metadata, as git sync reads them: the YAML
 * header is read by `content/markdown/front-matter.ts` (description, icon, hidden, noIndex,
 * noRobotsIndex, cover, layout, metaLinks, if, and unknown keys kept for the way back).
 */
export function readMarkdownMetadata(markdown: string): { markdown: string; title?: string; metadata: PageMetadata } {
  const { metadata, body: rest } = readFrontMatter(markdown.replace(/^\uFEFF/, ''));
  // The blank line that usually follows the front matter is not part of the body.
  let body = rest.replace(/^(?:[ \t]*\r?\n)+/, '');
  let title = typeof metadata.extra?.title === 'string' ? metadata.extra.title : undefined;
  if (metadata.extra && 'title' in metadata.extra) {
    const { title: _title, ...extra } = metadata.extra;
    if (Object.keys(extra).length) metadata.extra = extra;
    else delete metadata.extra;
  }
  const heading = /^\s*#\s+(.+?)\s*#*\s*(\r?\n|$)/.exec(body);
  if (heading && !title) {
    title = heading[1]!;
    body = body.slice(heading[0].length).replace(/^\s*\r?\n/, '');
  }
  return { markdown: body, ...(title ? { title } : {}), metadata };
}

type DocumentInput = { markdown: string } | { document: unknown } | Record<string, never>;

/** The markdown of a page body, within the content limits (400 naming the problem otherwise). */
async function markdownOf(input: DocumentInput | undefined): Promise<string | undefined> {
  if (!input) return undefined;
  if ('markdown' in input) {
    checkMarkdownLimits(input.markdown, 'document.markdown');
    return input.markdown;
  }
  if ('document' in input) return documentInputToMarkdown(input.document, 'document');
  return '';
}

/** Applies a batch of content changes to a change request as one new head revision, all or nothing. */
export async function editContent(ctx: Ctx, spaceId: string, idOrNumber: string, changes: ContentChangeInput[]) {
  const { space, cr } = await requireChangeRequest(ctx, spaceId, idOrNumber, 'edit', 'edit the change request');
  assertLive(space, 'edit its content');
  assertOpen(cr, 'edit the content');

  // Refs name pages and files inserted by this batch; each is unique within it.
  const pageRefs = new Map<string, string>();
  for (const [index, change] of changes.entries()) {
    if (change.operation !== 'insert_page' || !change.ref) continue;
    if (pageRefs.has(change.ref)) throw new BadRequestError(`changes[${index}] (insert_page): ref "${change.ref}" is used twice in the batch`);
    pageRefs.set(change.ref, newId());
  }
  // Files first (they may be fetched over the network): outside the transaction, one after
  // another within one budget of bytes and time for the whole request.
  const budget = new FileBudget(ctx.config);
  const fileIds = new Map<string, string>();
  const files: { id: string; name: string; contentType: string; data: Uint8Array }[] = [];
  for (const [index, change] of changes.entries()) {
    if (change.operation !== 'insert_files') continue;
    for (const f of change.files) {
      try {
        if (f.ref && (fileIds.has(f.ref) || pageRefs.has(f.ref))) throw new BadRequestError(`files: ref "${f.ref}" is used twice in the batch`);
        if ((f.url === undefined) === (f.base64 === undefined)) throw new BadRequestError(`files: "${f.name}" needs exactly one of url or base64`);
        let data: Uint8Array;
        let contentType = f.contentType;
        if (f.base64 !== undefined) {
          if (!contentType) throw new BadRequestError(`files: "${f.name}" needs a contentType with base64`);
          data = decodeBase64(f.base64);
          budget.take(data.byteLength, `"${f.name}"`);
        } else {
          const fetched = await fetchFile(f.url!, budget);
          data = fetched.data;
          contentType ??= fetched.contentType ?? 'application/octet-stream';
        }
        const id = newId();
        if (f.ref) fileIds.set(f.ref, id);
        files.push({ id, name: f.name, contentType: contentType!, data });
      } catch (err) {
        if (err instanceof BadRequestError) throw new BadRequestError(`changes[${index}] (insert_files): ${err.message}`);
        throw err;
      }
    }
  }
  // Page bodies are converted and checked before the transaction: a large document converts on a
  // worker thread, and no database session waits for it.
  const bodies = new Map<number, string>();
  for (const [index, change] of changes.entries()) {
    if (!('document' in change)) continue;
    try {
      const markdown = await markdownOf(change.document as DocumentInput | undefined);
      if (markdown !== undefined) bodies.set(index, markdown);
    } catch (err) {
      if (err instanceof BadRequestError) throw new BadRequestError(`changes[${index}] (${change.operation}): ${err.message}`);
      throw err;
    }
  }
  const resolveRefs = (markdown: string) =>
    markdown.replace(/\]\(\.?\/?([^)\s]+?)\)/g, (whole, target: string) => {
      const ref = target.replace(/\.md$/, '');
      if (pageRefs.has(ref)) return `](/pages/${pageRefs.get(ref)})`;
      if (fileIds.has(target)) return `](/files/${fileIds.get(target)})`;
      return whole;
    });

  return ctx.db.transaction().execute(async (trx) => {
    // One edit at a time per change request: the head we edit is the head we replace.
    const current = await store.lockChangeRequest(trx, cr.organization_id, cr.id);
    assertOpen(current, 'edit the content');
    const head = await loadRevision(trx, space.id, current.revision);
    const editor = new ContentEditor(trx, head.root);
    for (const f of files) {
      const blob = await putBlob(trx, f.data);
      const dimensions = f.contentType.startsWith('image/') ? imageDimensions(f.data) : undefined;
      editor.putFile({ id: f.id, name: f.name, contentType: f.contentType, size: f.data.byteLength, blob, ...(dimensions ? { dimensions } : {}) });
    }
    // Pages in the order the batch first touched them, and which of them it created (with their ref).
    const touched: string[] = [];
    const created = new Map<string, string | undefined>();
    const existedBefore = new Map<string, boolean>();
    const written: ({ page: string } | { reusableContent: string })[] = [];
    for (const [index, change] of changes.entries()) {
      try {
        if ('page' in change && !existedBefore.has(change.page)) existedBefore.set(change.page, !!(await editor.page(change.page)));
        const pageId = await applyChange(trx, editor, space, current, change, bodies.get(index), { pageRefs, resolveRefs });
        if (pageId && !touched.includes(pageId)) touched.push(pageId);
        if (bodies.has(index)) written.push(pageId ? { page: pageId } : { reusableContent: (change as { reusableContent?: string }).reusableContent ?? '' });
        if (pageId && change.operation === 'insert_page') created.set(pageId, change.ref);
      } catch (err) {
        if (err instanceof BadRequestError) throw new BadRequestError(`changes[${index}] (${change.operation}): ${err.message}`);
        throw err;
      }
    }
    await storeLinksById(trx, editor, space.id, written);
    const root = await editor.commit(trx);
    const revision = await newRevision(trx, space, root, [head.id], 'edits', ctx.user.id);
    // A page is resolved once its markdown no longer holds conflict markers.
    let conflicts = current.conflicts;
    if (conflicts.length) {
      const pages = await Promise.all(conflicts.map((id) => editor.page(id)));
      const texts = await getDocuments(trx, pages.map((p) => p?.doc ?? ''));
      conflicts = conflicts.filter((id, i) => pages[i] && hasConflictMarkers(texts.get(pages[i]!.doc ?? '') ?? ''));
    }
    await store.addContributor(trx, cr.id, ctx.user.id);
    const outcome: ContentOutcome = { pages: [], files: files.map((f) => f.id) };
    for (const id of touched) {
      const exists = !!(await editor.page(id));
      if (created.has(id)) {
        if (exists) outcome.pages.push({ kind: 'created', id, ...(created.get(id) ? { ref: created.get(id)! } : {}) });
      } else if (exists) outcome.pages.push({ kind: existedBefore.get(id) === false ? 'created' : 'updated', id });
      else if (existedBefore.get(id) !== false) outcome.pages.push({ kind: 'deleted', id });
    }
    const row = await store.updateChangeRequest(trx, cr.organization_id, cr.id, { revision, updated_at: new Date(), conflicts });
    return { cr: row, outcome, root };
  });
}

/**
 * Relative links in the bodies a batch wrote, stored as page and file ids so they survive moves.
 * They resolve against the batch's result, so a link may name a page inserted after it.
 */
async function storeLinksById(trx: Db, editor: ContentEditor, spaceId: string, written: ({ page: string } | { reusableContent: string })[]) {
  for (const item of written) {
    let entry = 'page' in item ? await editor.page(item.page) : await editor.reusableContent(item.reusableContent);
    if (!entry?.doc) continue;
    const text = (await getDocuments(trx, [entry.doc])).get(entry.doc) ?? '';
    const directory = 'page' in item ? await pageDirectory(editor, entry as PageEntry) : INCLUDES_DIRECTORY;
    // A cover naming a space file is stored as a reference to it, like the links of the body.
    if ('page' in item && (entry as PageEntry).cover) {
      const page = await canonicalCover(editor, entry as PageEntry, directory);
      if (page !== entry) editor.putPage((entry = page));
    }
    const canonical = await canonicalLinks(editor, text, directory);
    if (canonical === text) continue;
    const [doc] = await putDocuments(trx, spaceId, [canonical]);
    if ('page' in item) editor.putPage({ ...(entry as PageEntry), doc: doc! });
    else editor.putReusableContent({ ...(entry as ReusableContentEntry), doc: doc! });
  }
}

/** What a batch did, for `compat=false`: affected pages in first-touch order, and inserted files. */
export interface ContentOutcome {
  pages: { kind: 'created' | 'updated' | 'deleted'; id: string; ref?: string }[];
  files: string[];
}

async function applyChange(
  trx: Db,
  editor: ContentEditor,
  space: SpaceRow,
  cr: ChangeRequestRow,
  change: ContentChangeInput,
  body: string | undefined,
  refs: { pageRefs: Map<string, string>; resolveRefs: (markdown: string) => string },
): Promise<string | undefined> {
  // Only the fields each operation declares are read: the server assigns page ids and document
  // references, so a body can never name a stored document or an existing page as a new one.
  const metadata = (c: PageMetadataInput) => ({
    title: c.title,
    slug: c.slug,
    emoji: c.emoji,
    icon: c.icon,
    description: c.description,
    hidden: c.hidden,
    noIndex: c.noIndex,
    noRobotsIndex: c.noRobotsIndex,
    variables: c.variables === undefined ? undefined : checkedVariables(c.variables, 'variables'),
  });
  // A page inserted earlier in the batch can be named by its ref as the parent.
  const parentOf = (into: string | null | undefined) => (into && refs.pageRefs.has(into) ? refs.pageRefs.get(into)! : into);
  switch (change.operation) {
    case 'insert_page': {
      const raw = body ?? '';
      const meta = 'markdown' in change.document ? readMarkdownMetadata(raw) : { markdown: raw, metadata: {} };
      const [doc] = await putDocuments(trx, space.id, [refs.resolveRefs(meta.markdown)]);
      const entry = await editor.insertPage({
        ...metadata(change),
        ...meta.metadata,
        ...(change.ref ? { id: refs.pageRefs.get(change.ref)! } : {}),
        title: meta.title ?? change.title ?? 'Untitled',
        parent: parentOf(change.into) ?? null,
        at: change.at,
        doc: doc!,
      });
      return entry.id;
    }
    case 'update_page': {
      let doc: string | undefined;
      let meta: { title?: string; metadata: PageMetadata } = { metadata: {} };
      if (body !== undefined) {
        const read = change.document && 'markdown' in change.document ? readMarkdownMetadata(body) : { markdown: body, metadata: {} };
        meta = read;
        [doc] = await putDocuments(trx, space.id, [refs.resolveRefs(read.markdown)]);
      }
      await editor.updatePage(change.page, {
        ...metadata(change),
        ...meta.metadata,
        into: parentOf(change.into),
        at: change.at,
        ...(meta.title ? { title: meta.title } : {}),
        ...(doc !== undefined ? { doc } : {}),
      });
      return change.page;
    }
    case 'delete_page':
      await editor.deletePage(change.page);
      return change.page;
    case 'revert_page': {
      const from = await loadRevision(trx, space.id, change.revision ?? cr.revision_merged_ancestor ?? cr.revision_initial).catch(() => {
        throw new BadRequestError(`revision ${change.revision} not found in this space`);
      });
      await editor.revertPage(change.page, new ContentReader(trx, from.root));
      return change.page;
    }
    case 'insert_files':
      return undefined; // stored before the pages, above
    case 'update_variables': {
      const variables = { ...(await editor.variables()) };
      for (const [name, value] of Object.entries(change.variables)) {
        if (!VARIABLE_NAME.test(name)) throw new BadRequestError(`variables: "${name}" is not a variable name (a letter or _, then letters, digits, _ or -)`);
        if (value === null) delete variables[name];
        else variables[name] = value;
      }
      editor.setVariables(variables);
      return undefined;
    }
    case 'insert_reusable_content': {
      const id = change.reusableContent ?? newId();
      if (await editor.reusableContent(id)) throw new BadRequestError(`reusable content "${id}" already exists`);
      const [doc] = await putDocuments(trx, space.id, [refs.resolveRefs(body ?? '')]);
      const now = new Date().toISOString();
      editor.putReusableContent({ id, title: change.title, doc: doc!, createdAt: now, updatedAt: now });
      return undefined;
    }
    case 'update_reusable_content': {
      const current = await editor.reusableContent(change.reusableContent);
      if (!current) throw new BadRequestError(`reusable content "${change.reusableContent}" not found in the change request`);
      const [doc] = body === undefined ? [current.doc] : await putDocuments(trx, space.id, [refs.resolveRefs(body)]);
      editor.putReusableContent({ ...current, title: change.title ?? current.title, doc: doc ?? null, updatedAt: new Date().toISOString() });
      return undefined;
    }
    case 'delete_reusable_content':
      if (!(await editor.reusableContent(change.reusableContent))) {
        throw new BadRequestError(`reusable content "${change.reusableContent}" not found in the change request`);
      }
      editor.deleteReusableContent(change.reusableContent);
      return undefined;
  }
}

/** Page variables as given, once every name is one an expression can use. */
function checkedVariables(variables: Variables, field: string): Variables {
  for (const name of Object.keys(variables)) {
    if (!VARIABLE_NAME.test(name)) throw new BadRequestError(`${field}: "${name}" is not a variable name (a letter or _, then letters, digits, _ or -)`);
  }
  return variables;
}

type PageMetadataInput = { [K in keyof PageInput]?: PageInput[K] | undefined };

/** Merge rules of the space (or of its organization when the space inherits them). */
async function mergeRulesOf(db: Db, space: SpaceRow): Promise<MergeRules> {
  if (space.merge_rules.type !== 'inherit') return space.merge_rules;
  return store.organizationMergeRules(db, space.organization_id);
}

async function assertMergeRules(db: Db, space: SpaceRow, cr: ChangeRequestRow) {
  const rules = await mergeRulesOf(db, space);
  if (rules.type !== 'rules') return;
  const required = [...new Set((rules.rules ?? []).flatMap((r) => r.users))];
  if (!required.length) return;
  // The latest review of each required reviewer must approve the current head.
  const reviews = await store.reviewsBy(db, cr.id, required);
  const latest = new Map<string, { status: string; revision: string }>();
  for (const r of reviews) if (!latest.has(r.reviewer_id)) latest.set(r.reviewer_id, r);
  const missing = required.filter((u) => latest.get(u)?.status !== 'approved' || latest.get(u)?.revision !== cr.revision);
  if (missing.length) {
    throw new ForbiddenError(`Merge rules require approval of the latest changes by: ${missing.join(', ')}`);
  }
}

/**
 * Merges a change request into its space: a three-way merge of its base, its head and the space's
 * current revision. Merges into one space are serialized by locking the space row, so two merges
 * never both apply against the same revision.
 */
export async function mergeChangeRequest(ctx: Ctx, spaceId: string, idOrNumber: string) {
  const { space, cr } = await requireChangeRequest(ctx, spaceId, idOrNumber, 'review', 'merge the change request');
  assertLive(space, 'merge');
  assertOpen(cr, 'merge');
  const merged = await ctx.db.transaction().execute(async (trx) => {
    const locked = await store.lockSpace(trx, space.organization_id, space.id);
    assertLive(locked, 'merge');
    const current = await store.lockChangeRequest(trx, cr.organization_id, cr.id);
    assertOpen(current, 'merge');
    if (current.conflicts.length) {
      throw new MergeConflictError('Resolve the conflicts left by the last update before merging', current.conflicts.map((page) => ({ page, title: '', reason: 'conflict markers left by an update' })));
    }
    await assertMergeRules(trx, locked, current);
    const [base, main, head] = await Promise.all([
      loadRevision(trx, space.id, current.revision_merged_ancestor ?? current.revision_initial),
      loadRevision(trx, space.id, locked.revision_id),
      loadRevision(trx, space.id, current.revision),
    ]);
    const root =
      main.id === base.id
        ? head.root
        : await (async () => {
            const outcome = await mergeContents(trx, { base: base.root, ours: main.root, theirs: head.root }, { spaceId: space.id, keepConflicts: false });
            if (outcome.conflicts.length) {
              throw new MergeConflictError(`The change request conflicts with the space on ${outcome.conflicts.length} page(s): update it and resolve them`, outcome.conflicts);
            }
            return outcome.root;
          })();
    const revision = await newRevision(trx, locked, root, [main.id, head.id], 'merge', ctx.user.id);
    const now = new Date();
    await store.setSpaceRevision(trx, space.organization_id, space.id, revision, now);
    await store.updateChangeRequest(trx, cr.organization_id, cr.id, { status: 'merged', revision_merged: revision, merged_by: ctx.user.id, merged_at: now, updated_at: now });
    // Integrations installed on the space hear of it, in the merge's own transaction (outbox).
    await emitSpaceEvent(trx, ctx.jobs, locked, { type: 'space_content_updated', revisionId: revision, updatedBy: [presentUser(ctx.urls, ctx.user)] });
    return { revision, result: 'merge' as const };
  });
  // The search index follows the space's content, page by changed page, outside the merge's
  // transaction: extracting the text of a large page must not hold the space locked. The merge
  // has committed: a failure here is reported, not answered, and the next merge or start-up
  // (refreshStaleSearchIndexes) catches the index up.
  await refreshSearchIndex(ctx.db, space.id).catch((err) => ctx.jobs.logger?.error({ err, space: space.id }, 'search index refresh failed'));
  // Spaces synced both ways send each merge to their repository (src/git/, through the hook).
  await changeRequestHooks
    .run('merged', ctx.db, { spaceId: space.id, message: `${cr.subject || 'Change request'} (#${cr.number})`, jobs: ctx.jobs })
    .catch((err) => ctx.jobs.logger?.error({ err, space: space.id }, 'git export after merge not queued'));
  return merged;
}

/**
 * Brings the space's latest content into the change request. Conflicting pages keep both sides
 * (between conflict markers) in the new head and are listed until edited; merging waits for them.
 */
export async function updateFromSpace(ctx: Ctx, spaceId: string, idOrNumber: string) {
  const { space, cr } = await requireChangeRequest(ctx, spaceId, idOrNumber, 'edit', 'update the change request');
  assertLive(space, 'update change requests');
  assertOpen(cr, 'update');
  return ctx.db.transaction().execute(async (trx) => {
    const locked = await store.lockSpace(trx, space.organization_id, space.id);
    const current = await store.lockChangeRequest(trx, cr.organization_id, cr.id);
    const baseId = current.revision_merged_ancestor ?? current.revision_initial;
    if (locked.revision_id === baseId) return { revision: current.revision, result: 'update' as const };
    const [base, main, head] = await Promise.all([
      loadRevision(trx, space.id, baseId),
      loadRevision(trx, space.id, locked.revision_id),
      loadRevision(trx, space.id, current.revision),
    ]);
    const outcome =
      head.id === base.id
        ? { root: main.root, conflicts: [] as Conflict[] }
        : await mergeContents(trx, { base: base.root, ours: head.root, theirs: main.root }, { spaceId: space.id, keepConflicts: true, labels: { theirs: 'space', ours: 'change request' } });
    const revision = await newRevision(trx, locked, outcome.root, [head.id, main.id], 'update', ctx.user.id);
    const conflicted = [...new Set(outcome.conflicts.map((c) => c.page).filter(Boolean))];
    await store.updateChangeRequest(trx, cr.organization_id, cr.id, { revision, revision_merged_ancestor: main.id, conflicts: conflicted, updated_at: new Date() });
    return { revision, result: outcome.conflicts.length ? ('conflicts' as const) : ('update' as const), conflicts: outcome.conflicts };
  });
}

/** What a change request changes compared with its base: page and file changes, and open conflicts. */
export async function changesOf(ctx: Ctx, spaceId: string, idOrNumber: string, limit = 100) {
  const { space, cr } = await loadChangeRequest(ctx, spaceId, idOrNumber);
  const [base, head] = await Promise.all([
    loadRevision(ctx.db, space.id, cr.revision_merged_ancestor ?? cr.revision_initial),
    loadRevision(ctx.db, space.id, cr.revision),
  ]);
  const before = new ContentReader(ctx.db, base.root);
  const after = new ContentReader(ctx.db, head.root);
  const diff = await after.tree.diff(base.root, head.root);
  const changes: ({ type: string } & Record<string, unknown>)[] = [];
  const page = async (reader: ContentReader, p: PageEntry) => ({ id: p.id, type: p.type, title: p.title, path: await reader.path(p) });
  for (const [key, a, b] of diff) {
    if (key.startsWith('p:')) {
      const old = a as PageEntry | undefined;
      const now = b as PageEntry | undefined;
      if (!old && now) changes.push({ type: 'page_created', page: await page(after, now) });
      else if (old && !now) changes.push({ type: 'page_deleted', page: await page(before, old) });
      else if (old && now) {
        if (old.parent !== now.parent || old.pos !== now.pos) {
          const parent = async (reader: ContentReader, id: string | null) => {
            const p = id ? await reader.page(id) : undefined;
            return p ? await page(reader, p) : undefined;
          };
          const [from, to] = await Promise.all([parent(before, old.parent), parent(after, now.parent)]);
          changes.push({ type: 'page_moved', page: await page(after, now), parent: { ...(from ? { before: from } : {}), ...(to ? { after: to } : {}) } });
        }
        const attributes: Record<string, { before?: string; after?: string }> = {};
        for (const [field, attr] of [['title', 'title'], ['description', 'description'], ['slug', 'slug'], ['doc', 'document'], ['emoji', 'emoji']] as const) {
          if (old[field] !== now[field]) {
            attributes[attr] = {
              ...(old[field] !== undefined && old[field] !== null ? { before: String(old[field]) } : {}),
              ...(now[field] !== undefined && now[field] !== null ? { after: String(now[field]) } : {}),
            };
          }
        }
        if (Object.keys(attributes).length) changes.push({ type: 'page_edited', page: await page(after, now), attributes });
      }
    } else if (key.startsWith('f:')) {
      const f = (b ?? a) as { id: string; name: string; contentType: string; blob: string };
      const file = { id: f.id, name: f.name, contentType: f.contentType, downloadURL: ctx.urls.api(`/blobs/${f.blob}/${encodeURIComponent(f.name)}`) };
      changes.push({ type: !a ? 'file_created' : !b ? 'file_deleted' : 'file_edited', file });
    }
  }
  const conflicts = await Promise.all(
    cr.conflicts.map(async (id) => {
      const p = await after.page(id);
      return { page: id, title: p?.title ?? '', reason: 'conflict markers left by an update' };
    }),
  );
  return { changes: changes.slice(0, limit), ...(changes.length > limit ? { more: changes.length - limit } : {}), conflicts };
}

/**
 * Edits a change request's head through the content editor itself, as one new head revision: for
 * writers that compute whole page entries rather than content changes (translation runs). The
 * same checks and locks as `editContent`; `edit` runs inside the transaction.
 */
export async function editChangeRequestTree(
  ctx: Ctx,
  spaceId: string,
  idOrNumber: string,
  edit: (trx: Db, editor: ContentEditor, space: SpaceRow) => Promise<void>,
) {
  const { space, cr } = await requireChangeRequest(ctx, spaceId, idOrNumber, 'edit', 'edit the change request');
  assertLive(space, 'edit its content');
  assertOpen(cr, 'edit the content');
  return ctx.db.transaction().execute(async (trx) => {
    const current = await store.lockChangeRequest(trx, cr.organization_id, cr.id);
    assertOpen(current, 'edit the content');
    const head = await loadRevision(trx, space.id, current.revision);
    const editor = new ContentEditor(trx, head.root);
    await edit(trx, editor, space);
    const root = await editor.commit(trx);
    const revision = await newRevision(trx, space, root, [head.id], 'edits', ctx.user.id);
    await store.addContributor(trx, cr.id, ctx.user.id);
    return store.updateChangeRequest(trx, cr.organization_id, cr.id, { revision, updated_at: new Date() });
  });
}
