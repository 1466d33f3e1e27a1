/**
 * Loading a GitBook document into an editor: a long page is drawn in pieces (what fills the first
 * screens at once, the rest while the browser is idle), and a change is never sent before the
 * whole page is in. The editor starts empty and is filled once it is in place: Tiptap's setup
 * steps each redraw every node view, so a page given at creation would be drawn three times.
 */
import type { Editor } from '@tiptap/core';
import { Fragment } from '@tiptap/pm/model';
import { Selection } from '@tiptap/pm/state';
import { type JSONDocument, toProseMirror, topLevelToProseMirror } from './convert.ts';

/** Runs `fn` when the browser is idle (soon after, at the latest). */
export function whenIdle(fn: () => void): () => void {
  if (typeof window.requestIdleCallback === 'function') {
    const id = window.requestIdleCallback(fn, { timeout: 250 });
    return () => window.cancelIdleCallback(id);
  }
  const id = window.setTimeout(fn, 50);
  return () => window.clearTimeout(id);
}

export const EMPTY_DOC = { type: 'doc', content: [{ type: 'paragraph' }] };

/** Editors whose page has been loaded (or is being). */
export const loaded = new WeakSet<Editor>();

/** A page being loaded piece by piece: its remaining blocks go in when the browser is idle. */
export interface Loading {
  cancel(): void;
  /** Called once the whole page is in. */
  whenDone(fn: () => void): void;
  /** Puts the rest of the page in now. */
  finish(): void;
}
export const loading = new WeakMap<Editor, Loading>();

/** Positions (PM node sizes) drawn at once on opening, then in each idle step after. */
const FIRST_PIECE = 12_000;
const NEXT_PIECES = 40_000;

/**
 * Replaces the editor's content by a GitBook document (not an undoable step, nor a change to
 * save). A long page is drawn in pieces: what fills the first screens at once, the rest while the
 * browser is idle; no change is sent before the whole page is in.
 */
export function loadDocument(editor: Editor, doc: JSONDocument, options: { inPieces?: boolean; keepSelection?: boolean } = {}): void {
  loading.get(editor)?.cancel();
  const blocks = doc.nodes ?? [];
  let next = 0;
  /** The next blocks, as PM nodes, up to about `budget` positions. */
  const take = (budget: number) => {
    const nodes = [];
    let size = 0;
    while (next < blocks.length && size < budget) {
      const node = editor.schema.nodeFromJSON(topLevelToProseMirror([blocks[next++]!])[0]!);
      size += node.nodeSize;
      nodes.push(node);
    }
    return nodes;
  };
  const shell = editor.schema.nodeFromJSON({ ...toProseMirror({ ...doc, nodes: [] }) });
  const first = blocks.length === 0 ? shell.content : Fragment.from(take(options.inPieces === false ? Infinity : FIRST_PIECE));
  const tr = editor.state.tr.replaceWith(0, editor.state.doc.content.size, first);
  tr.setDocAttribute('gb', shell.attrs.gb);
  // A page opened starts at its top; a page read again keeps the caret where it was (as near as the new content allows).
  const from = editor.state.selection.from;
  tr.setSelection(options.keepSelection ? Selection.near(tr.doc.resolve(Math.min(from, tr.doc.content.size))) : Selection.atStart(tr.doc));
  editor.view.dispatch(tr.setMeta('addToHistory', false).setMeta('preventUpdate', true));
  if (next >= blocks.length) return;

  const waiting: (() => void)[] = [];
  let cancelStep: (() => void) | null = null;
  const state: Loading = {
    cancel: () => {
      cancelStep?.();
      loading.delete(editor);
    },
    whenDone: (fn) => waiting.push(fn),
    finish: () => {
      cancelStep?.();
      while (loading.get(editor) === state) step(Infinity);
    },
  };
  loading.set(editor, state);
  const step = (budget = NEXT_PIECES) => {
    if (editor.isDestroyed || loading.get(editor) !== state) {
      loading.delete(editor);
      return;
    }
    const nodes = take(budget);
    const end = editor.state.doc.content.size;
    editor.view.dispatch(editor.state.tr.insert(end, nodes).setMeta('addToHistory', false).setMeta('preventUpdate', true));
    if (next < blocks.length) {
      cancelStep = whenIdle(() => step());
      return;
    }
    loading.delete(editor);
    for (const fn of waiting) fn();
  };
  cancelStep = whenIdle(() => step());
}
