/**
 * The shared document of a page being co-edited: a Yjs document holding the editor's ProseMirror
 * tree (the app's schema, app/src/editor/schema.ts, converted by the one module both sides use,
 * app/src/editor/convert.ts), and its conversions to and from the markdown Folio stores.
 *
 * Changes that reach a page from outside the editors (an API write, an update from the main
 * content) are merged in three ways rather than overwriting: the change from the markdown the
 * shared state was last saved as to the new markdown is computed on a copy of that saved state and
 * applied to the live document as a CRDT update, so whatever was typed meanwhile stays.
 */
import * as Y from 'yjs';
import { prosemirrorJSONToYXmlFragment, updateYFragment, yXmlFragmentToProseMirrorRootNode } from '@tiptap/y-tiptap';
import { editorSchema, fromProseMirrorNode, toProseMirror, type JSONDocument } from '../../app/src/editor/convert.ts';
import { documentInputToMarkdown, markdownToDocumentForRead } from '../content/convert.ts';

/** The Y.XmlFragment the editor binds to (Tiptap's Collaboration extension's default field). */
export const FIELD = 'default';


async function proseMirrorOf(markdown: string) {
  const document = (await markdownToDocumentForRead(markdown)) as unknown as JSONDocument;
  return editorSchema().nodeFromJSON(toProseMirror(document));
}

/** A new shared state holding `markdown` (a page not being edited yet). */
export async function stateFromMarkdown(markdown: string): Promise<Uint8Array> {
  const doc = new Y.Doc();
  prosemirrorJSONToYXmlFragment(editorSchema(), (await proseMirrorOf(markdown)).toJSON(), doc.getXmlFragment(FIELD));
  const state = Y.encodeStateAsUpdate(doc);
  doc.destroy();
  return state;
}

/** The GitBook document a shared document holds now. */
export function documentOf(doc: Y.Doc): JSONDocument {
  return fromProseMirrorNode(yXmlFragmentToProseMirrorRootNode(doc.getXmlFragment(FIELD), editorSchema()));
}

/** The markdown Folio would store for a shared document (what the API then reads). */
export function markdownOf(doc: Y.Doc): Promise<string> {
  return documentInputToMarkdown(documentOf(doc), 'document');
}

/**
 * Merges a change made outside the editors: `saved` is the shared state whose content is the
 * markdown stored before the change, `markdown` what is stored now. Answers the new saved state:
 * `saved` plus the edit that turns one text into the other, which, applied to the live document,
 * merges with what was typed since.
 */
export async function externalChange(saved: Uint8Array, markdown: string): Promise<Uint8Array> {
  const doc = new Y.Doc();
  Y.applyUpdate(doc, saved);
  const next = await proseMirrorOf(markdown);
  doc.transact(() => updateYFragment(doc, doc.getXmlFragment(FIELD), next, { mapping: new Map(), isOMark: new Map() } as never));
  const state = Y.encodeStateAsUpdate(doc);
  doc.destroy();
  return state;
}

/** Applies `state` to the live document; answers whether it held anything the document did not. */
export function absorb(doc: Y.Doc, state: Uint8Array, origin: unknown): boolean {
  let changed = false;
  const mark = () => (changed = true);
  doc.on('update', mark);
  try {
    Y.applyUpdate(doc, state, origin);
  } finally {
    doc.off('update', mark);
  }
  return changed;
}
