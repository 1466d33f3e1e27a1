/**
 * Adding, changing or removing a link (Mod-K, or the "Link" button): a small labelled form over
 * the page. A URL becomes a `url` reference, `#anchor` an anchor on this page; only http(s) and
 * mailto URLs are clickable when the page is read (links.ts).
 */
import type { Editor } from '@tiptap/core';
import { type FormEvent, useEffect, useRef, useState } from 'react';
import { isRecord } from './model.ts';

/** The reference a typed destination stands for. */
export function refOfTyped(value: string): Record<string, unknown> {
  const text = value.trim();
  if (text.startsWith('#') && text.length > 1) return { kind: 'anchor', anchor: text.slice(1) };
  const page = /^\/pages\/([^/#?]+)(?:#(.+))?$/.exec(text);
  if (page) return page[2] ? { kind: 'anchor', anchor: page[2], page: page[1] } : { kind: 'page', page: page[1] };
  const file = /^\/files\/([^/#?]+)$/.exec(text);
  if (file) return { kind: 'file', file: file[1] };
  // A bare domain is a web address.
  return { kind: 'url', url: /^[a-z][a-z0-9+.-]*:/i.test(text) ? text : `https://${text}` };
}

function typedOfRef(ref: unknown): string {
  if (!isRecord(ref)) return '';
  if (ref.kind === 'url') return String(ref.url ?? '');
  if (ref.kind === 'anchor') return ref.page ? `/pages/${String(ref.page)}#${String(ref.anchor)}` : `#${String(ref.anchor)}`;
  if (ref.kind === 'page') return `/pages/${String(ref.page)}`;
  if (ref.kind === 'file') return `/files/${String(ref.file)}`;
  return '';
}

export function LinkDialog({ editor, onClose }: { editor: Editor; onClose: () => void }) {
  const current = editor.getAttributes('link').gb as Record<string, unknown> | undefined;
  const [value, setValue] = useState(() => typedOfRef(isRecord(current?.data) ? current.data.ref : undefined));
  const input = useRef<HTMLInputElement | null>(null);
  useEffect(() => input.current?.focus(), []);

  const close = () => {
    onClose();
    editor.commands.focus();
  };
  const apply = (event: FormEvent) => {
    event.preventDefault();
    if (!value.trim()) return remove();
    const ref = refOfTyped(value);
    // An existing link keeps its key and data; only where it points changes.
    const gb = current ? { ...current, data: { ...(isRecord(current.data) ? current.data : {}), ref } } : { object: 'inline', type: 'link', data: { ref }, nodes: null, isVoid: false };
    const chain = editor.chain().focus().extendMarkRange('link');
    if (editor.state.selection.empty && !current) chain.insertContent({ type: 'text', text: value.trim(), marks: [{ type: 'link', attrs: { gb } }] });
    else chain.setMark('link', { gb });
    chain.run();
    onClose();
  };
  const remove = () => {
    editor.chain().focus().extendMarkRange('link').unsetMark('link').run();
    onClose();
  };
  return (
    <form className="gb-link-dialog" role="dialog" aria-label="Link" onSubmit={apply} onKeyDown={(e) => e.key === 'Escape' && close()}>
      <label>
        Link URL
        <input ref={input} className="gb-input" type="text" value={value} placeholder="https://…, #anchor or /pages/…" onChange={(e) => setValue(e.target.value)} />
      </label>
      <button type="submit" className="primary">
        Apply
      </button>
      {current && (
        <button type="button" onClick={remove}>
          Remove link
        </button>
      )}
      <button type="button" onClick={close}>
        Cancel
      </button>
    </form>
  );
}
