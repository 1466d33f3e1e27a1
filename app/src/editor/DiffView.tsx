/**
 * Two versions of a page, read-only, as one page: blocks added are marked "Added", blocks removed
 * "Removed" (a block that changed is both: what it was, then what it is). The page is drawn by
 * the editor's own read-only views, so blocks look as they do on the page; each marked block is a
 * group named "Added" or "Removed" for assistive technology.
 */
import { Extension } from '@tiptap/core';
import { Plugin, PluginKey } from '@tiptap/pm/state';
import { Decoration, DecorationSet } from '@tiptap/pm/view';
import { EditorContent, useEditor } from '@tiptap/react';
import { useLayoutEffect, useMemo } from 'react';
import { type BlockStatus, diffBlocks } from './diff.ts';
import './editor.css';
import { EMPTY_DOC, loadDocument } from './load.ts';
import type { JSONDocument } from './model.ts';
import { viewExtensions } from './nodeviews.ts';

export interface DiffViewProps {
  before: JSONDocument | null;
  after: JSONDocument | null;
  fileURL?: (fileId: string) => string | undefined;
  /** The accessible name of the comparison. */
  label?: string;
}

const LABELS: Record<Exclude<BlockStatus, 'same'>, string> = { added: 'Added', removed: 'Removed' };

/** Marks each top-level block with its status (the page holds exactly the diff's blocks, in order). */
function statusMarks(statuses: () => BlockStatus[]) {
  return Extension.create({
    name: 'folioDiffMarks',
    addProseMirrorPlugins() {
      const key = new PluginKey('folioDiff');
      return [
        new Plugin({
          key,
          state: {
            init: (_config, state) => decorate(state.doc),
            apply: (tr, set) => (tr.docChanged ? decorate(tr.doc) : set),
          },
          props: { decorations: (state) => key.getState(state) as DecorationSet },
        }),
      ];
      function decorate(doc: import('@tiptap/pm/model').Node): DecorationSet {
        const list = statuses();
        const decorations: Decoration[] = [];
        doc.forEach((node, offset, index) => {
          const status = list[index];
          if (!status || status === 'same') return;
          decorations.push(Decoration.node(offset, offset + node.nodeSize, { class: `gb-diff-${status}`, role: 'group', 'aria-label': LABELS[status] }));
        });
        return DecorationSet.create(doc, decorations);
      }
    },
  });
}

export function DiffView({ before, after, fileURL, label = 'Changes' }: DiffViewProps) {
  const entries = useMemo(() => diffBlocks(before, after), [before, after]);
  const merged = useMemo<JSONDocument>(
    () => ({ ...(after ?? before ?? { object: 'document', data: {} }), nodes: entries.map((e) => e.block) }) as JSONDocument,
    [entries, before, after],
  );
  const statuses = useMemo(() => entries.map((e) => e.status), [entries]);
  const extensions = useMemo(
    () => [...viewExtensions({ editable: false, fileURL }), statusMarks(() => statuses)],
    // A new comparison is a new editor: the marks follow the blocks' order.
    // eslint-disable-next-line react-hooks/exhaustive-deps
    [statuses],
  );
  const options = useMemo(
    () => ({
      extensions,
      content: EMPTY_DOC,
      editable: false,
      injectCSS: false,
      editorProps: { attributes: { role: 'article', 'aria-label': label, class: 'gb-page gb-readonly gb-diff' } },
    }),
    // eslint-disable-next-line react-hooks/exhaustive-deps
    [extensions],
  );
  const editor = useEditor(options, [extensions]);
  useLayoutEffect(() => {
    if (!editor.isDestroyed) loadDocument(editor, merged, { inPieces: false });
  }, [editor, merged]);

  const added = statuses.filter((s) => s === 'added').length;
  const removed = statuses.filter((s) => s === 'removed').length;
  return (
    <div className="gb-editor gb-diff-view">
      <p className="gb-diff-summary">
        {added === 0 && removed === 0 ? 'No changes' : `${added} block${added === 1 ? '' : 's'} added, ${removed} removed`}
      </p>
      <EditorContent editor={editor} />
    </div>
  );
}
