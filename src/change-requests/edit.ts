import { ContentEditor, getDocuments, putDocuments, ContentReader, type LinkTarget, type PageEntry, type PageInput, type ReusableContentEntry, type Variables } from '../content/model.ts';
import { hasConflictMarkers } from '../content/merge.ts';
import { canonicalCover, canonicalLinks, INCLUDES_DIRECTORY, pageDirectory } from '../content/page-links.ts';
import { readFrontMatter, VARIABLE_NAME, type PageMetadata } from '../content/markdown/front-matter.ts';
import { uploadedFile, uploadKeyOf } from '../storage/service.ts';
import { decodeBase64, fetchFile, FileBudget, imageDimensions } from '../content/files.ts';
import { loadRevision } from '../content/service.ts';
import { documentInputToMarkdown } from '../content/convert.ts';
import { keepMentionText } from '../content/markdown/mention-text.ts';
import type { Ctx } from '../platform/context.ts';
import type { Db } from '../platform/db/database.ts';
import type { ChangeRequestRow, SpaceRow } from '../platform/db/schema.ts';
import { BadRequestError } from '../platform/errors.ts';
import { newId } from '../platform/ids.ts';
import { checkMarkdownLimits } from '../platform/document-limits.ts';
import type { ContentChangeInput } from './schemas.ts';
import { assertLive, assertOpen, newRevision, requireChangeRequest } from './service.ts';
import * as store from './store.ts';
import { announceChangeRequest } from './hooks.ts';

/** Edits of a change request's content: each batch (or tree edit) one new head revision. */

/**
 * Front matter and a leading `# Title` become page metadata, as git sync reads them: the YAML
 * header is read by `front-matter.ts` (description, icon, hidden, noIndex, noRobotsIndex, cover,
 * layout, metaLinks, if, and unknown keys kept for the way back).
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

/**
 * What a writer that keeps its own state beside the content (live co-editing, src/collab/) runs
 * inside the edit's transaction, with the change request locked: `guard` sees the head the batch
 * applies to (and may refuse it by throwing), `after` the edited content before it commits.
 */
export interface EditHooks {
  guard?(trx: Db, head: ContentReader): Promise<void>;
  after?(trx: Db, edited: ContentEditor): Promise<void>;
}

/** Applies a batch of content changes to a change request as one new head revision, all or nothing. */
export async function editContent(ctx: Ctx, spaceId: string, idOrNumber: string, changes: ContentChangeInput[], hooks: EditHooks = {}) {
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
        } else if (uploadKeyOf(ctx.config.publicUrl, f.url!)) {
          // A direct upload of the organization (generateStorageUploadURL), read from storage.
          const upload = await uploadedFile(ctx, space.organization_id, uploadKeyOf(ctx.config.publicUrl, f.url!)!);
          data = upload.data;
          budget.take(data.byteLength, `"${f.name}"`);
          contentType ??= upload.row.content_type;
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

  // File bytes are stored by hash before the transaction: the store may be a bucket over the
  // network, and bytes a rolled-back edit leaves behind are unreferenced, never wrong.
  const blobs: string[] = [];
  for (const f of files) blobs.push(await ctx.blobs.put(f.data));

  const result = await ctx.db.transaction().execute(async (trx) => {
    // One edit at a time per change request: the head we edit is the head we replace.
    const current = await store.lockChangeRequest(trx, cr.organization_id, cr.id);
    assertOpen(current, 'edit the content');
    const head = await loadRevision(trx, space.id, current.revision);
    await hooks.guard?.(trx, new ContentReader(trx, head.root));
    const editor = new ContentEditor(trx, head.root);
    for (const [i, f] of files.entries()) {
      const blob = blobs[i]!;
      const dimensions = f.contentType.startsWith('image/') ? imageDimensions(f.data) : undefined;
      editor.putFile({ id: f.id, name: f.name, contentType: f.contentType, size: f.data.byteLength, blob, ...(dimensions ? { dimensions } : {}) });
    }
    // Pages in the order the batch first touched them, and which of them it created (with their ref).
    const touched: string[] = [];
    const created = new Map<string, string | undefined>();
    const existedBefore = new Map<string, boolean>();
    const written: WrittenBody[] = [];
    for (const [index, change] of changes.entries()) {
      try {
        if ('page' in change && !existedBefore.has(change.page)) existedBefore.set(change.page, !!(await editor.page(change.page)));
        const pageId = await applyChange(trx, editor, space, current, change, bodies.get(index), { pageRefs, resolveRefs });
        if (pageId && !touched.includes(pageId)) touched.push(pageId);
        if (bodies.has(index)) {
          const input = (change as { document?: DocumentInput }).document;
          const fromDocument = !!input && 'document' in input;
          written.push(pageId ? { page: pageId, fromDocument } : { reusableContent: (change as { reusableContent?: string }).reusableContent ?? '', fromDocument });
        }
        if (pageId && change.operation === 'insert_page') created.set(pageId, change.ref);
      } catch (err) {
        if (err instanceof BadRequestError) throw new BadRequestError(`changes[${index}] (${change.operation}): ${err.message}`);
        throw err;
      }
    }
    await storeLinksById(trx, editor, new ContentReader(trx, head.root), space.id, written);
    await hooks.after?.(trx, editor);
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
  announceChangeRequest({ organizationId: cr.organization_id, spaceId: space.id, changeRequestId: cr.id });
  return result;
}

/** A body a batch wrote: of a page or a reusable content, given as a document or as markdown. */
type WrittenBody = ({ page: string } | { reusableContent: string }) & { fromDocument: boolean };

/**
 * Relative links in the bodies a batch wrote, stored as page and file ids so they survive moves.
 * They resolve against the batch's result, so a link may name a page inserted after it. A body
 * given as a document keeps the texts its mentions had before (`before`: the content the batch
 * edits), which the document cannot hold (mention-text.ts).
 */
async function storeLinksById(trx: Db, editor: ContentEditor, before: ContentReader, spaceId: string, written: WrittenBody[]) {
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
    let canonical = await canonicalLinks(editor, text, directory);
    if (item.fromDocument) {
      const old = 'page' in item ? await before.page(item.page) : await before.reusableContent(item.reusableContent);
      if (old?.doc && old.doc !== entry.doc) canonical = keepMentionText(canonical, (await getDocuments(trx, [old.doc])).get(old.doc));
    }
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

/** A link's target as stored; a page named by a batch ref becomes its id. URLs must be absolute (http, https or mailto). */
function linkTarget(target: { kind: 'url'; url: string } | { kind: 'page'; page: string }, parentOf: (id: string) => string | null | undefined): LinkTarget {
  if (target.kind === 'page') return { kind: 'page', page: parentOf(target.page) ?? target.page };
  if (!/^(https?:\/\/[^\s]+|mailto:[^\s]+)$/i.test(target.url)) throw new BadRequestError(`target.url: "${target.url}" is not an absolute http(s) or mailto URL`);
  return { kind: 'url', url: target.url };
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
      const type = change.type ?? 'document';
      const common = {
        ...metadata(change),
        ...(change.ref ? { id: refs.pageRefs.get(change.ref)! } : {}),
        parent: parentOf(change.into) ?? null,
        at: change.at,
      };
      if (type !== 'document') {
        // Groups and links are entries of the table of contents: no body of their own.
        if (change.document && Object.keys(change.document).length > 0) throw new BadRequestError(`document: a ${type} has no content (send {} or leave it out)`);
        if (type === 'group' && change.target) throw new BadRequestError('target: only a link has a target');
        if (type === 'link' && !change.target) throw new BadRequestError('target: a link needs a target ({ kind: "url", url } or { kind: "page", page })');
        const entry = await editor.insertPage({
          ...common,
          type,
          title: change.title ?? (type === 'group' ? 'Untitled group' : 'Untitled link'),
          doc: null,
          ...(change.target ? { target: linkTarget(change.target, parentOf) } : {}),
        });
        return entry.id;
      }
      if (change.target) throw new BadRequestError('target: only a link has a target');
      if (!change.document) throw new BadRequestError('document: a document page needs its content ({ markdown }, { document } or {})');
      const raw = body ?? '';
      const meta = change.document && 'markdown' in change.document ? readMarkdownMetadata(raw) : { markdown: raw, metadata: {} };
      const [doc] = await putDocuments(trx, space.id, [refs.resolveRefs(meta.markdown)]);
      const entry = await editor.insertPage({ ...common, ...meta.metadata, title: meta.title ?? change.title ?? 'Untitled', doc: doc! });
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
        ...(change.target ? { target: linkTarget(change.target, parentOf) } : {}),
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
  const row = await ctx.db.transaction().execute(async (trx) => {
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
  announceChangeRequest({ organizationId: cr.organization_id, spaceId: space.id, changeRequestId: cr.id });
  return row;
}
