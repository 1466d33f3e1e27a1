/**
 * Others' carets and selections in a shared page (y-tiptap's cursor plugin over the Hocuspocus
 * provider's awareness). Carets and names are drawn with classes (collab-color-0…7 in
 * editor.css), never inline styles: the app's CSP allows none.
 */
import { Extension } from '@tiptap/core';
import { yCursorPlugin } from '@tiptap/y-tiptap';

export type Awareness = Parameters<typeof yCursorPlugin>[0];

/** The caret and name colours, in the order of the collab-color-N classes. */
export const PEER_PALETTE = ['#2563eb', '#dc2626', '#15803d', '#9333ea', '#c2410c', '#0e7490', '#be185d', '#4d7c0f'] as const;

export function paletteIndex(color: unknown): number {
  const index = PEER_PALETTE.indexOf(color as (typeof PEER_PALETTE)[number]);
  return index < 0 ? 0 : index;
}

function caret(user: { name?: string; color?: string }): HTMLElement {
  const cursor = document.createElement('span');
  cursor.className = `collab-caret collab-color-${paletteIndex(user.color)}`;
  // The list of people on the page names them for assistive technology; the caret is decoration.
  cursor.setAttribute('aria-hidden', 'true');
  const label = document.createElement('span');
  label.className = 'collab-caret-name';
  label.textContent = user.name ?? 'Someone';
  // Word joiners keep the caret from breaking the line around it.
  cursor.append('\u2060', label, '\u2060');
  return cursor;
}

export const CollabCarets = Extension.create<{ awareness: Awareness | null }>({
  name: 'collabCarets',
  addOptions() {
    return { awareness: null };
  },
  addProseMirrorPlugins() {
    if (!this.options.awareness) return [];
    return [
      yCursorPlugin(this.options.awareness, {
        cursorBuilder: caret,
        selectionBuilder: (user: { color?: string }) => ({ class: `collab-selection collab-color-${paletteIndex(user.color)}` }),
      }),
    ];
  },
});
