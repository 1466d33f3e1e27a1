import { useQueryClient } from '@tanstack/react-query';
import { useCallback, useEffect, useMemo, useRef, useState } from 'react';
import { Link, useLocation } from 'wouter';
import type { ChangeRequest, JSONDocument, RevisionPage, RevisionPageDocument, Space } from '@gitbook/api';
import { ApiError, errorText, request } from '../api/client.ts';
import { saveStateText } from '../api/save-state.ts';
import { sharedDocument, useSharedPage } from '../api/collab.ts';
import { createdPageId, editContent, fileBase64, openChangeRequest, type ContentChange } from '../api/edits.ts';
import { findPage, flattenPages, keys, refreshPages, useChangeRequest, useChangeRequests, useFiles, usePageDocument, usePages, type ContentScope } from '../api/queries.ts';
import { Comments } from '../components/Comments.tsx';
import { Dialog } from '../components/Dialog.tsx';
import { ExportPdf } from '../components/ExportPdf.tsx';
import { PageTree, type TreeActions } from '../components/PageTree.tsx';
import { PageEditor, type PageEditorHandle } from '../editor/PageEditor.tsx';
import { useSession } from '../session.tsx';

const EMPTY: JSONDocument = { object: 'document', data: {}, nodes: [] } as unknown as JSONDocument;
const EDITABLE = new Set(['open', 'draft']);

/**
 * A space's pages, read (main content, a past revision) or written (inside a change request):
 * the page tree on the side, the page in the editor. Edits from the main content open a change
 * request first and continue there.
 */
export default function PageScreen({ space, changeRequest, revision, path }: { space: Space; changeRequest?: number; revision?: string; path: string }) {
  const scope: ContentScope = useMemo(() => ({ spaceId: space.id, changeRequest, revision }), [space.id, changeRequest, revision]);
  // The version of the space shown (main content or a change request), as the API names it: its
  // comments and its PDF are below it.
  const versionPath = changeRequest === undefined ? `/spaces/${space.id}` : `/spaces/${space.id}/change-requests/${changeRequest}`;
  const pages = usePages(scope);
  const cr = useChangeRequest(space.id, changeRequest);
  const [, navigate] = useLocation();
  const queryClient = useQueryClient();
  const [error, setError] = useState<string>();
  const [choosing, setChoosing] = useState(false);
  const page = pages.data ? findPage(pages.data, decodeURIComponent(path)) : undefined;
  const base = changeRequest !== undefined ? `/~/changes/${changeRequest}` : '';
  const canEdit = space.permissions.edit && revision === undefined;
  const editable = canEdit && changeRequest !== undefined && !!cr.data && EDITABLE.has(cr.data.status);

  const hrefOf = useCallback(
    (p: RevisionPage) => {
      if (p.type === 'link') return p.href ?? '#';
      return `${base}/${'path' in p ? p.path : ''}`;
    },
    [base],
  );

  /** The number of the change request edits go into: this one, or a new one. */
  async function changeRequestNumber(subject: string): Promise<number> {
    if (changeRequest !== undefined) return changeRequest;
    return (await openChangeRequest(space.id, subject)).number;
  }

  /** Runs a tree edit, then shows the change request's tree (and `pageId`, when given). */
  async function edit(subject: string, changes: ContentChange[], show?: (created?: string) => string | undefined) {
    setError(undefined);
    try {
      const number = await changeRequestNumber(subject);
      const update = await editContent(space.id, number, changes);
      const crScope = { spaceId: space.id, changeRequest: number };
      await queryClient.invalidateQueries({ queryKey: keys.changeRequest(space.id, number) });
      const fresh = await refreshPages(queryClient, crScope);
      const id = show?.(createdPageId(update));
      const target = id ? flattenPages(fresh).find((f) => f.page.id === id)?.page : undefined;
      const targetPath = target && 'path' in target ? target.path : changeRequest === undefined ? path : undefined;
      if (targetPath !== undefined || changeRequest === undefined) navigate(`/~/changes/${number}/${targetPath ?? ''}`);
    } catch (err) {
      setError(errorText(err));
    }
  }

  const actions: TreeActions | undefined = canEdit && (changeRequest === undefined || editable)
    ? {
        create: (into) => void edit('New page', [{ operation: 'insert_page', title: 'Untitled', document: {}, ...(into ? { into } : {}) }], (created) => created),
        createEntry: (entry) =>
          void edit(`New ${entry.type} ${entry.title}`, [
            entry.type === 'group'
              ? { operation: 'insert_page', type: 'group', title: entry.title }
              : { operation: 'insert_page', type: 'link', title: entry.title, target: { kind: 'url', url: entry.url }, ...(entry.into ? { into: entry.into } : {}) },
          ]),
        relink: (p, title, url) => void edit(`Edit link ${p.title}`, [{ operation: 'update_page', page: p.id, title, target: { kind: 'url', url } }]),
        rename: (p, title) => void edit(`Rename ${p.title}`, [{ operation: 'update_page', page: p.id, title }], () => (p.id === page?.id ? p.id : undefined)),
        move: (p, into, at) => void edit(`Move ${p.title}`, [{ operation: 'update_page', page: p.id, into, at }], () => (p.id === page?.id ? p.id : undefined)),
        remove: (p) => void edit(`Delete ${p.title}`, [{ operation: 'delete_page', page: p.id }], () => undefined),
      }
    : undefined;

  return (
    <div className="space-body">
      <PageTree pages={pages.data ?? []} currentId={page?.id} hrefOf={hrefOf} actions={actions} />
      <main className="content">
        {changeRequest !== undefined && cr.data && <ChangeRequestBanner space={space} cr={cr.data} />}
        {revision !== undefined && <p className="banner">You are reading a past revision of this space.</p>}
        {error && (
          <p role="alert" className="error">
            {error}
          </p>
        )}
        {pages.isError && <p role="alert" className="error">{pages.error.message}</p>}
        {pages.data && !page && (
          <div>
            <h1>{pages.data.length === 0 ? 'This space has no pages yet' : 'Page not found'}</h1>
            {actions && pages.data.length === 0 && (
              <button type="button" className="primary" onClick={() => actions.create(null)}>
                Create the first page
              </button>
            )}
          </div>
        )}
        {page && page.type === 'document' && (
          <>
            {revision === undefined && (
              <div className="toolbar">
                {canEdit && changeRequest === undefined && (
                  <button type="button" className="primary" onClick={() => setChoosing(true)}>
                    Edit
                  </button>
                )}
                <ExportPdf
                  contentPath={versionPath}
                  pageId={page.id}
                  pageTitle={page.title}
                />
              </div>
            )}
            {/* In a change request, the page waits to know whether it may be edited: an editor made
                read-only, then editable, would draw a big page twice (and miss a kept draft). */}
            {changeRequest === undefined || cr.data || cr.isError ? (
              <DocumentPage
                key={`${page.id}:${changeRequest ?? revision ?? 'main'}`}
                scope={scope}
                page={page}
                editable={editable}
                changeRequestId={cr.data && EDITABLE.has(cr.data.status) ? cr.data.id : undefined}
                onRenamed={(p) => navigate(`${base}/${p}`)}
              />
            ) : (
              <p className="loading" role="status">Loading the page…</p>
            )}
            {revision === undefined && (
              <Comments
                key={page.id}
                heading="Comments on this page"
                path={`${versionPath}/comments`}
                page={page.id}
                canComment={space.permissions.comment}
                queryKey={changeRequest === undefined ? keys.space(space.id) : keys.changeRequest(space.id, changeRequest)}
              />
            )}
          </>
        )}
        {page && page.type === 'group' && (
          <div>
            <h1>{page.title}</h1>
            <p className="muted">A group of pages:</p>
            <ul>
              {('pages' in page ? (page.pages as RevisionPage[]) : []).map((child) => (
                <li key={child.id}>
                  <Link href={hrefOf(child)}>{child.title}</Link>
                </li>
              ))}
            </ul>
          </div>
        )}
        {page && page.type === 'link' && (
          <div>
            <h1>{page.title}</h1>
            <p>
              A link to <a href={page.href ?? '#'}>{page.href}</a>
            </p>
          </div>
        )}
        {choosing && page && <StartEditing space={space} page={page} onClose={() => setChoosing(false)} />}
      </main>
    </div>
  );
}

/** Edit: continue one of the person's open change requests, or start a new one. */
function StartEditing({ space, page, onClose }: { space: Space; page: RevisionPage; onClose: () => void }) {
  const { session } = useSession();
  const open = useChangeRequests(space.id, 'open');
  const draft = useChangeRequests(space.id, 'draft');
  const [, navigate] = useLocation();
  const [error, setError] = useState<string>();
  const mine = [...(open.data ?? []), ...(draft.data ?? [])].filter((c) => c.createdBy.id === session?.user.id);
  const path = 'path' in page ? page.path : '';
  const loaded = open.isSuccess && draft.isSuccess;

  async function startNew() {
    try {
      const cr = await openChangeRequest(space.id, `Edit ${page.title}`);
      onClose();
      navigate(`/~/changes/${cr.number}/${path}`);
    } catch (err) {
      setError(errorText(err));
    }
  }

  // With no change request of theirs to continue, start one at once.
  useEffect(() => {
    if (loaded && mine.length === 0) void startNew();
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [loaded, mine.length]);

  if (!loaded || mine.length === 0) return error ? <p role="alert" className="error">{error}</p> : null;
  return (
    <Dialog title="Edit in a change request" onClose={onClose}>
      <p>Your edits go into a change request, merged when it is ready.</p>
      <ul className="choice-list">
        {mine.map((c) => (
          <li key={c.id}>
            <button
              type="button"
              onClick={() => {
                onClose();
                navigate(`/~/changes/${c.number}/${path}`);
              }}
            >
              Continue #{c.number}: {c.subject || 'Untitled'}
            </button>
          </li>
        ))}
      </ul>
      {error && <p role="alert" className="error">{error}</p>}
      <div className="actions">
        <button type="button" onClick={onClose}>
          Cancel
        </button>
        <button type="button" className="primary" onClick={() => void startNew()}>
          New change request
        </button>
      </div>
    </Dialog>
  );
}

function ChangeRequestBanner({ space, cr }: { space: Space; cr: ChangeRequest }) {
  return (
    <div className="banner" role="region" aria-label="Change request">
      <span>
        Change request #{cr.number}: <strong>{cr.subject || 'Untitled'}</strong> · {cr.status}
      </span>
      <span className="banner-links">
        <Link href={`/~/changes/${cr.number}`}>Review changes</Link>
        <Link href="/">Main content</Link>
      </span>
      {!EDITABLE.has(cr.status) && <span> (this change request is {cr.status}: read only)</span>}
      <span className="visually-hidden">{space.title}</span>
    </div>
  );
}

/** A document page read (main content, a past revision, a closed change request): its title and its content. */
function DocumentPage({ scope, page, editable, changeRequestId, onRenamed }: { scope: ContentScope; page: RevisionPage; editable: boolean; changeRequestId?: string; onRenamed: (path: string) => void }) {
  const read = usePageDocument(scope, page.id, 'path' in page ? page.path : undefined);
  const files = useFiles(scope);
  const fileURL = useCallback((id: string) => files.data?.get(id)?.downloadURL, [files.data]);
  if (changeRequestId) return <SharedDocumentPage scope={scope} page={page} editable={editable} changeRequestId={changeRequestId} fileURL={fileURL} onRenamed={onRenamed} />;
  if (read.isError) return <p role="alert" className="error">{read.error instanceof ApiError ? read.error.message : 'Could not load the page.'}</p>;
  if (!read.data) return <p className="loading" role="status">Loading the page…</p>;
  const doc = page as RevisionPageDocument;
  return (
    <article className="page">
      <h1 className="page-title">{page.title}</h1>
      {doc.description && <p className="page-description">{doc.description}</p>}
      <PageEditor document={read.data.document ?? EMPTY} editable={false} fileURL={fileURL} label={`Content of ${page.title}`} />
    </article>
  );
}

/**
 * A page of an open change request, edited live with everyone on it (src/collab/ on the server):
 * the editor binds to the shared document once it has arrived; the server saves it.
 */
function SharedDocumentPage({
  scope,
  page,
  editable,
  changeRequestId,
  fileURL,
  onRenamed,
}: {
  scope: ContentScope;
  page: RevisionPage;
  editable: boolean;
  changeRequestId: string;
  fileURL: (id: string) => string | undefined;
  onRenamed: (path: string) => void;
}) {
  const { session } = useSession();
  const queryClient = useQueryClient();
  const number = scope.changeRequest;
  const user = session ? { id: session.user.id, name: session.user.displayName || 'Someone' } : undefined;
  const shared = useSharedPage({
    name: `${scope.spaceId}/${changeRequestId}/${page.id}`,
    draftKey: `folio:draft:${scope.spaceId}:${number}:${page.id}`,
    user,
    documentOf: sharedDocument,
  });
  const writable = editable && !shared.readOnly;

  // Saves by the server change the change request: its lists and review follow.
  useEffect(() => {
    if (shared.state === 'saved' && number !== undefined) void queryClient.invalidateQueries({ queryKey: keys.changeRequest(scope.spaceId, number) });
  }, [shared.state, number, scope.spaceId, queryClient]);

  const uploadFile = useCallback(
    async (file: File) => {
      if (number === undefined) throw new Error('Files are added in a change request');
      const update = await editContent(scope.spaceId, number, [
        { operation: 'insert_files', files: [{ name: file.name || 'pasted-image.png', contentType: file.type || 'application/octet-stream', base64: await fileBase64(file) }] },
      ]);
      const inserted = update.insertedFiles[0];
      if (!inserted) throw new Error('The server inserted no file');
      await queryClient.invalidateQueries({ queryKey: keys.files(scope) });
      return { id: inserted.id, downloadURL: inserted.downloadURL };
    },
    [number, scope, queryClient],
  );
  const sharedDoc = useMemo(() => ({ doc: shared.doc, awareness: shared.provider?.awareness ?? null }), [shared.doc, shared.provider]);
  const doc = page as RevisionPageDocument;
  const editorHandle = useRef<PageEditorHandle | null>(null);

  return (
    <article className="page">
      {writable ? (
        <PageFields page={page} scope={scope} onRenamed={onRenamed} onEnter={() => editorHandle.current?.focusStart() ?? false} />
      ) : (
        <>
          <h1 className="page-title">{page.title}</h1>
          {doc.description && <p className="page-description">{doc.description}</p>}
        </>
      )}
      {shared.peers.length > 0 && (
        <ul className="collab-peers" aria-label="Also on this page">
          {shared.peers.map((peer) => (
            <li key={peer.clientId} className={`collab-peer collab-color-${peer.color}`}>
              {peer.name}
            </li>
          ))}
        </ul>
      )}
      {editable && (
        <p className="save-state" role="status" aria-live="polite">
          {shared.readOnly ? 'You can follow along: editing is not allowed here' : saveStateText(shared.state, shared.error)}
        </p>
      )}
      {!editable && shared.error && <p role="alert" className="error">{shared.error}</p>}
      {shared.synced && shared.provider ? (
        <PageEditor
          key={`${writable}`}
          document={EMPTY}
          editable={writable}
          shared={sharedDoc}
          uploadFile={writable ? uploadFile : undefined}
          pasteMarkdown={writable ? convertPastedMarkdown : undefined}
          fileURL={fileURL}
          label={`Content of ${page.title}`}
          handle={editorHandle}
        />
      ) : (
        <p className="loading" role="status">
          Loading the page…
        </p>
      )}
    </article>
  );
}

/**
 * The page's title and description, changed in place. Enter (or leaving a field) saves it; Enter
 * also moves the caret to the start of the content, as in other editors. A title leads to the page's
 * new path (its slug follows the title).
 */
function PageFields({ page, scope, onRenamed, onEnter }: { page: RevisionPage; scope: ContentScope; onRenamed: (path: string) => void; onEnter: () => boolean }) {
  const queryClient = useQueryClient();
  const description = (page as RevisionPageDocument).description ?? '';
  async function update(change: { title: string } | { description: string }) {
    if (scope.changeRequest === undefined) return;
    await editContent(scope.spaceId, scope.changeRequest, [{ operation: 'update_page', page: page.id, ...change }]);
    const fresh = await refreshPages(queryClient, scope);
    const moved = flattenPages(fresh).find((f) => f.page.id === page.id)?.page;
    if ('title' in change && moved && 'path' in moved) onRenamed(moved.path);
  }
  return (
    <>
      <InPlaceField id="page-title" label="Page title" className="page-title" value={page.title} maxLength={500} required onSave={(title) => update({ title })} onEnter={onEnter} />
      <InPlaceField
        id="page-description"
        label="Page description"
        className="page-description"
        placeholder="Add a description"
        value={description}
        maxLength={1000}
        onSave={(text) => update({ description: text })}
        onEnter={onEnter}
      />
    </>
  );
}

/**
 * One line of text saved when the writer leaves it or presses Enter (which also calls `onEnter`:
 * on into the content; without an editor yet, saved there). While the writer is in the field, a
 * value arriving from the server (their own save, or someone else's) does not replace what they
 * type.
 */
function InPlaceField(props: { id: string; label: string; className: string; value: string; maxLength: number; required?: boolean; placeholder?: string; onSave: (value: string) => Promise<void>; onEnter: () => boolean }) {
  const { id, label, className, value, maxLength, required = false, placeholder, onSave, onEnter } = props;
  const [text, setText] = useState(value);
  const [error, setError] = useState<string>();
  const inField = useRef(false);
  useEffect(() => {
    if (!inField.current) setText(value);
  }, [value]);

  async function save() {
    const wanted = text.trim();
    if ((required && !wanted) || wanted === value) return;
    try {
      setError(undefined);
      await onSave(wanted);
    } catch (err) {
      setError(errorText(err));
    }
  }

  return (
    <div className="title-field">
      <label htmlFor={id} className="visually-hidden">
        {label}
      </label>
      <input
        id={id}
        className={className}
        value={text}
        placeholder={placeholder}
        maxLength={maxLength}
        onChange={(e) => setText(e.target.value)}
        onFocus={() => {
          inField.current = true;
        }}
        onBlur={() => {
          inField.current = false;
          void save();
        }}
        onKeyDown={(e) => {
          if (e.key !== 'Enter' || e.nativeEvent.isComposing) return;
          e.preventDefault();
          if (!onEnter()) void save();
        }}
      />
      {error && <p role="alert" className="error">{error}</p>}
    </div>
  );
}

/** Markdown pasted into the editor as text, read as the API reads markdown (POST /app/api/markdown). */
async function convertPastedMarkdown(markdown: string): Promise<JSONDocument> {
  return (await request<{ document: JSONDocument }>('/app/api/markdown', { method: 'POST', body: { markdown } })).document;
}
