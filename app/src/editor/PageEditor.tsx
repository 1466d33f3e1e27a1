/**
 * A page's content, editable or read-only: a Tiptap (ProseMirror) editor over the GitBook document
 * the API stores. `onChange` receives the GitBook document after each change (converted once the
 * browser is idle, and only the blocks that changed: see convert.ts); the caller saves it.
 *
 * No CSS is injected (the CSP has no `unsafe-inline`): editor.css is imported instead.
 */
import type { Editor } from '@tiptap/core';
import { Selection } from '@tiptap/pm/state';
import { EditorContent, useEditor } from '@tiptap/react';
import { StarterKit } from '@tiptap/starter-kit';
import { Collaboration } from '@tiptap/extension-collaboration';
import type * as Y from 'yjs';
import { CollabCarets, type Awareness } from './collab.ts';
import { type MutableRefObject, useEffect, useId, useLayoutEffect, useMemo, useRef, useState } from 'react';
import { Behaviour, type MarkdownPaste, type SlashHandlers, SlashKeys, type Upload } from './behaviour.ts';
import { type InsertContext, containerAt, imagesJson } from './blocks.ts';
import { type JSONDocument, fromProseMirrorNode } from './convert.ts';
import { EMPTY_DOC, loadDocument, loaded, loading, whenIdle } from './load.ts';
import './editor.css';
import { ALLOWED_CHILDREN } from './model.ts';
import { viewExtensions } from './nodeviews.ts';
import { LinkDialog } from './LinkDialog.tsx';
import { SlashMenu } from './SlashMenu.tsx';

export type { JSONDocument };

export interface PageEditorProps {
  document: JSONDocument;
  editable: boolean;
  /** The GitBook document after a change (called once per burst of changes). */
  onChange?: (doc: JSONDocument) => void;
  /** Converts markdown pasted as plain text into blocks (without it, such text is pasted as it is). */
  pasteMarkdown?: MarkdownPaste;
  /** Uploads a pasted, dropped or picked image to the space's files. */
  uploadFile?: (file: File) => Promise<{ id: string; downloadURL: string }>;
  /** The URL of a space file (images, file blocks). */
  fileURL?: (fileId: string) => string | undefined;
  /** The accessible name of the page's content. */
  label?: string;
  /**
   * Edited live with others (a page of a change request): the content is this shared document
   * (already synced), not `document`, and the server saves it; `onChange` is not called.
   */
  shared?: { doc: Y.Doc; awareness: Awareness | null };
  /** Set while the editor exists, for the page around it (Enter in the page's title moves the caret here). */
  handle?: MutableRefObject<PageEditorHandle | null>;
}

/** What the page around an editor may ask of it. */
export interface PageEditorHandle {
  /** Puts the caret at the start of the content; false when the editor is gone. */
  focusStart(): boolean;
}

function useLatest<T>(value: T) {
  const ref = useRef(value);
  ref.current = value;
  return ref;
}

/** From the starter kit: undo/redo, the drop and gap cursors, list keys; its nodes and marks are ours (schema.ts). */
const ONLY_HISTORY_AND_CURSORS = {
  blockquote: false,
  bold: false,
  bulletList: false,
  code: false,
  codeBlock: false,
  document: false,
  hardBreak: false,
  heading: false,
  horizontalRule: false,
  italic: false,
  listItem: false,
  link: false,
  orderedList: false,
  paragraph: false,
  strike: false,
  text: false,
  underline: false,
  trailingNode: false,
} as const;

export function PageEditor(props: PageEditorProps) {
  const { document: doc, editable, label = 'Page content', shared } = props;
  const onChange = useLatest(props.onChange);
  const uploadFile = useLatest(props.uploadFile);
  const pasteMarkdown = useLatest(props.pasteMarkdown);
  const fileURL = useLatest(props.fileURL);
  /** Download URLs of files uploaded here, shown before the caller knows them. */
  const uploaded = useRef(new Map<string, string>());
  const slashHandlers = useRef<SlashHandlers | null>(null);
  const uploadRef = useRef<Upload | null>(null);
  const frame = useRef<HTMLDivElement | null>(null);
  const fileInput = useRef<HTMLInputElement | null>(null);
  const listboxId = `folio-slash-${useId().replace(/[^a-zA-Z0-9_-]/g, '')}`;
  const [uploadError, setUploadError] = useState<string | null>(null);
  const [linkOpen, setLinkOpen] = useState(false);
  /** The document last sent to onChange (or received): a prop equal to it is not loaded again. */
  const current = useRef<JSONDocument>(doc);
  const cancelPending = useRef<(() => void) | null>(null);

  const extensions = useMemo(
    () => [
      ...viewExtensions({ editable, fileURL: (id) => fileURL.current?.(id) ?? uploaded.current.get(id) }),
      // Shared: the document is the Yjs one, with its own undo (one's own changes only) and the others' carets.
      ...(shared ? [Collaboration.configure({ document: shared.doc, field: 'default' }), ...(shared.awareness ? [CollabCarets.configure({ awareness: shared.awareness })] : [])] : []),
      ...(editable
        ? [
            StarterKit.configure(shared ? { ...ONLY_HISTORY_AND_CURSORS, undoRedo: false } : ONLY_HISTORY_AND_CURSORS),
            SlashKeys.configure({ slash: () => slashHandlers.current }),
            Behaviour.configure({ upload: () => uploadRef.current, pasteMarkdown: () => pasteMarkdown.current ?? null, openLink: () => setLinkOpen(true) }),
          ]
        : []),
    ],
    // The views are made for one mode: switching mode (or shared document) makes a new editor.
    // eslint-disable-next-line react-hooks/exhaustive-deps
    [editable, shared?.doc, shared?.awareness],
  );

  const flush = (editor: Editor) => {
    cancelPending.current?.();
    cancelPending.current = null;
    if (editor.isDestroyed) return;
    // Never a page cut short: a change made while the page is still coming in waits for the rest.
    const pending = loading.get(editor);
    if (pending) {
      cancelPending.current = () => undefined;
      pending.whenDone(() => flush(editor));
      return;
    }
    const next = fromProseMirrorNode(editor.state.doc);
    current.current = next;
    onChange.current?.(next);
  };

  const flushRef = useLatest(flush);
  // Made once per editor. It starts empty: its page is loaded once it is in place (below), so the
  // page is drawn once, not once per setup step Tiptap takes (each redraws every node view).
  const options = useMemo(
    () => ({
      extensions,
      content: shared ? undefined : EMPTY_DOC,
      editable,
      injectCSS: false,
      shouldRerenderOnTransaction: false,
      editorProps: {
        attributes: (editable
          ? { role: 'textbox', 'aria-multiline': 'true', 'aria-label': label, class: 'gb-page gb-editable', spellcheck: 'true' }
          : { role: 'article', 'aria-label': label, class: 'gb-page gb-readonly' }) as Record<string, string>,
      },
      onUpdate: ({ editor: e }: { editor: Editor }) => {
        if (shared || cancelPending.current) return;
        cancelPending.current = whenIdle(() => flushRef.current(e));
      },
    }),
    // eslint-disable-next-line react-hooks/exhaustive-deps
    [extensions],
  );
  const editor = useEditor(options, [extensions]);

  useLayoutEffect(() => {
    // A shared document draws itself from the Yjs document.
    if (shared || loaded.has(editor) || editor.isDestroyed) return;
    loaded.add(editor);
    loadDocument(editor, current.current);
  }, [editor]);

  // Changes not yet sent when the page goes (or the mode changes) are sent now.
  useEffect(
    () => () => {
      if (!cancelPending.current) return;
      loading.get(editor)?.finish();
      flush(editor);
    },
    // eslint-disable-next-line react-hooks/exhaustive-deps
    [editor],
  );

  // A document from outside (another version read). While a writer has changes not yet sent, it
  // never replaces them: what they typed wins, and their next save carries it.
  useEffect(() => {
    if (shared || doc === current.current || editor.isDestroyed) return;
    if (JSON.stringify(doc) === JSON.stringify(current.current)) {
      current.current = doc;
      return;
    }
    if (editable && cancelPending.current) return;
    current.current = doc;
    loadDocument(editor, doc, { keepSelection: editable });
  }, [doc, editor, editable, shared]);

  const handle = props.handle;
  useEffect(() => {
    if (!handle) return;
    handle.current = {
      focusStart: () => {
        if (editor.isDestroyed) return false;
        // Focused now, not on the next frame as Tiptap's focus command does: the key typed right
        // after Enter in the title must land here, not in the title.
        editor.view.focus();
        const { state } = editor.view;
        editor.view.dispatch(state.tr.setSelection(Selection.atStart(state.doc)).scrollIntoView());
        return true;
      },
    };
    return () => {
      handle.current = null;
    };
  }, [editor, handle]);

  useEffect(() => {
    if (editor.isDestroyed) return;
    const dom = editor.view.dom;
    dom.setAttribute('aria-label', label);
  }, [editor, label]);

  // Images pasted, dropped or picked: uploaded, then inserted as one images block.
  uploadRef.current =
    editable && props.uploadFile
      ? (files, at) => {
          const upload = uploadFile.current;
          if (!upload) return;
          setUploadError(null);
          Promise.all(
            files.map(async (file) => {
              const result = await upload(file);
              uploaded.current.set(result.id, result.downloadURL);
              return { id: result.id, alt: file.name.replace(/\.[a-z0-9]+$/i, '') };
            }),
          ).then(
            (done) => insertImages(editor, done, at),
            (error: unknown) => setUploadError(`The image could not be uploaded: ${error instanceof Error ? error.message : String(error)}`),
          );
        }
      : null;

  const insertContext: InsertContext = {
    ...(editable && props.uploadFile ? { pickImage: () => fileInput.current?.click() } : {}),
  };

  return (
    <div className="gb-editor" ref={frame}>
      {editable && (
        <div className="gb-toolbar" role="toolbar" aria-label="Formatting">
          <button type="button" aria-label="Bold" title="Bold (Ctrl+B)" onMouseDown={(e) => e.preventDefault()} onClick={() => editor.chain().focus().toggleMark('bold').run()}>
            <b>B</b>
          </button>
          <button type="button" aria-label="Italic" title="Italic (Ctrl+I)" onMouseDown={(e) => e.preventDefault()} onClick={() => editor.chain().focus().toggleMark('italic').run()}>
            <i>I</i>
          </button>
          <button type="button" aria-label="Code" title="Code (Ctrl+E)" onMouseDown={(e) => e.preventDefault()} onClick={() => editor.chain().focus().toggleMark('code').run()}>
            {'</>'}
          </button>
          <button type="button" aria-label="Link" title="Link (Ctrl+K)" onMouseDown={(e) => e.preventDefault()} onClick={() => setLinkOpen(true)}>
            Link
          </button>
        </div>
      )}
      {editable && linkOpen && <LinkDialog editor={editor} onClose={() => setLinkOpen(false)} />}
      <EditorContent editor={editor} />
      {editable && <SlashMenu editor={editor} listboxId={listboxId} handlers={slashHandlers} context={insertContext} frame={frame} />}
      {editable && props.uploadFile && (
        <input
          ref={fileInput}
          type="file"
          accept="image/*"
          multiple
          hidden
          aria-label="Upload image"
          onChange={(event) => {
            const files = Array.from(event.currentTarget.files ?? []);
            event.currentTarget.value = '';
            if (files.length > 0) uploadRef.current?.(files, null);
          }}
        />
      )}
      {uploadError && (
        <p className="gb-editor-error" role="alert">
          {uploadError}
        </p>
      )}
    </div>
  );
}

/** Inserts an images block at `at` (or the selection); where images may not stand, after the top-level block. */
function insertImages(editor: Editor, files: { id: string; alt: string }[], at: number | null): void {
  if (editor.isDestroyed || files.length === 0) return;
  const size = editor.state.doc.content.size;
  const pos = Math.min(at ?? editor.state.selection.from, size);
  const $pos = editor.state.doc.resolve(pos);
  const container = containerAt($pos);
  const content = imagesJson(files);
  if (container && ALLOWED_CHILDREN[container]!.includes('images') && editor.can().insertContentAt(pos, content)) {
    editor.chain().insertContentAt(pos, content).focus().run();
    return;
  }
  const after = $pos.depth >= 1 ? $pos.after(1) : pos;
  editor.chain().insertContentAt(after, content).focus().run();
}
