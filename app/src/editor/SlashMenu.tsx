/**
 * The `/` menu: typing `/` at the start of a block (or after a space) lists the blocks that may be
 * inserted there; typing filters them, ↑/↓ move, Enter or Tab inserts, Escape closes. Focus stays
 * in the page (the writer keeps typing): the page's textbox points at the highlighted option with
 * `aria-activedescendant` (set by the plugin, behaviour.ts), the list is a `listbox` of `option`s.
 */
import type { Editor } from '@tiptap/core';
import { type MutableRefObject, useEffect, useLayoutEffect, useReducer, useRef } from 'react';
import { type SlashHandlers, type SlashState, slashKey } from './behaviour.ts';
import { type BlockChoice, type InsertContext, choicesFor } from './blocks.ts';

export function optionId(listboxId: string, choice: BlockChoice): string {
  return `${listboxId}-${choice.id}`;
}

interface Props {
  editor: Editor;
  listboxId: string;
  handlers: MutableRefObject<SlashHandlers | null>;
  context: InsertContext;
  /** The element the menu is positioned in (the editor's frame). */
  frame: MutableRefObject<HTMLDivElement | null>;
}

export function SlashMenu({ editor, listboxId, handlers, context, frame }: Props) {
  const [, rerender] = useReducer((n: number) => n + 1, 0);
  const menu = useRef<HTMLDivElement | null>(null);

  // Drawn again only when the menu's state changes (not on every keystroke while it is closed).
  useEffect(() => {
    let shown = '';
    const onTransaction = () => {
      const state = editor.isDestroyed ? undefined : slashKey.getState(editor.state);
      const now = state && state.from !== null ? `${state.from}:${state.query}:${state.index}` : '';
      if (now === shown) return;
      shown = now;
      rerender();
    };
    editor.on('transaction', onTransaction);
    return () => {
      editor.off('transaction', onTransaction);
    };
  }, [editor]);

  const state: SlashState | undefined = editor.isDestroyed ? undefined : slashKey.getState(editor.state);
  const open = !!state && state.from !== null;
  const choices = open ? choicesFor(editor, state.query, context) : [];
  const index = open && choices.length > 0 ? Math.min(state.index, choices.length - 1) : 0;

  const choose = (choice: BlockChoice) => {
    if (!state || state.from === null) return;
    const to = editor.state.selection.from;
    editor.chain().focus().deleteRange({ from: state.from, to }).run();
    choice.insert(editor, context);
  };

  handlers.current = {
    onKey(key) {
      if (!state || state.from === null) return false;
      if (key === 'Escape') {
        editor.view.dispatch(editor.state.tr.setMeta(slashKey, { dismissed: state.from }));
        return true;
      }
      if (choices.length === 0) return false;
      if (key === 'ArrowDown' || key === 'ArrowUp') {
        const next = (index + (key === 'ArrowDown' ? 1 : -1) + choices.length) % choices.length;
        editor.view.dispatch(editor.state.tr.setMeta(slashKey, { index: next }));
        return true;
      }
      choose(choices[index]!);
      return true;
    },
  };

  // The highlighted option, for assistive technology: the page's textbox points at it.
  const active = open && choices.length > 0 ? optionId(listboxId, choices[index]!) : undefined;
  useEffect(() => {
    const dom = editor.isDestroyed ? null : editor.view.dom;
    if (!dom) return;
    if (active) {
      dom.setAttribute('aria-activedescendant', active);
      dom.setAttribute('aria-controls', listboxId);
    } else {
      dom.removeAttribute('aria-activedescendant');
      dom.removeAttribute('aria-controls');
    }
  }, [editor, active, listboxId]);

  // Placed under the `/`, through the DOM (the CSP allows no inline style attributes).
  useLayoutEffect(() => {
    const el = menu.current;
    const box = frame.current;
    if (!el || !box || !state || state.from === null) return;
    const at = editor.view.coordsAtPos(state.from);
    const origin = box.getBoundingClientRect();
    el.style.left = `${Math.max(0, at.left - origin.left)}px`;
    el.style.top = `${at.bottom - origin.top + 4}px`;
    el.querySelector('[aria-selected="true"]')?.scrollIntoView({ block: 'nearest' });
  });

  if (!open) return null;
  return (
    <div className="gb-slash-menu" ref={menu}>
      {choices.length === 0 ? (
        <p className="gb-slash-empty" role="status">
          No block matches “{state.query}”
        </p>
      ) : (
        <div role="listbox" id={listboxId} aria-label="Insert block">
          {choices.map((choice, i) => (
            <div
              key={choice.id}
              id={optionId(listboxId, choice)}
              role="option"
              aria-selected={i === index}
              className={i === index ? 'gb-slash-option gb-active' : 'gb-slash-option'}
              // Keeps the focus (and the selection) in the page.
              onMouseDown={(event) => {
                event.preventDefault();
                choose(choice);
              }}
            >
              {choice.name}
            </div>
          ))}
        </div>
      )}
    </div>
  );
}
