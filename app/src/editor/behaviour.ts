/**
 * How the editor behaves when typed in: keyboard shortcuts, markdown shortcuts (`# `, `- `, `1. `,
 * `> `, ``` ``` ```, `[ ] `, `---`, `**bold**`…), the `/` menu's state, and pasted or dropped
 * images (uploaded, then inserted as an images block). No DOM at import time.
 */
import { type Editor, Extension, InputRule, markInputRule, textblockTypeInputRule, wrappingInputRule } from '@tiptap/core';
import { Fragment, type Node as PMNode, Slice } from '@tiptap/pm/model';
import { type EditorState, Plugin, PluginKey, TextSelection, type Transaction } from '@tiptap/pm/state';
import { Mapping } from '@tiptap/pm/transform';
import { Decoration, DecorationSet } from '@tiptap/pm/view';
import { codeBlockJson, dividerJson, newShell } from './blocks.ts';
import { type JSONDocument, topLevelToProseMirror } from './convert.ts';
import { isRecord } from './model.ts';

// ───────────────────────────── the `/` menu's state ─────────────────────────────

export interface SlashState {
  /** Where the `/` is; null when the menu is closed. */
  from: number | null;
  /** What was typed after the `/`. */
  query: string;
  /** The highlighted choice. */
  index: number;
  /** A `/` the writer closed the menu on (Escape): the menu stays closed for it. */
  dismissed: number | null;
}

export const slashKey = new PluginKey<SlashState>('slashMenu');

/** Keys the open menu takes (set by the menu component: it knows the choices). */
export interface SlashHandlers {
  onKey(key: 'ArrowUp' | 'ArrowDown' | 'Enter' | 'Escape' | 'Tab'): boolean;
}

/** The `/query` right before the cursor, when it starts a block or follows a space. */
function slashBefore(state: EditorState): { from: number; query: string } | null {
  const { selection } = state;
  if (!selection.empty) return null;
  const $from = selection.$from;
  const parent = $from.parent;
  if (!parent.isTextblock || parent.type.name === 'codeLine') return null;
  const before = parent.textBetween(Math.max(0, $from.parentOffset - 40), $from.parentOffset, undefined, '\ufffc');
  const m = /(?:^|\s)\/([^\s/]{0,30}(?: [^\s/]{1,30})?)$/.exec(before);
  if (!m) return null;
  return { from: $from.pos - m[1]!.length - 1, query: m[1]! };
}

function slashPlugin(handlers: () => SlashHandlers | null): Plugin<SlashState> {
  return new Plugin<SlashState>({
    key: slashKey,
    state: {
      init: () => ({ from: null, query: '', index: 0, dismissed: null }),
      apply(tr, previous, _old, state) {
        const meta = tr.getMeta(slashKey) as Partial<SlashState> | undefined;
        let dismissed = previous.dismissed === null ? null : tr.mapping.map(previous.dismissed);
        if (meta?.dismissed !== undefined) dismissed = meta.dismissed;
        const found = slashBefore(state);
        if (!found || found.from === dismissed) return { from: null, query: '', index: 0, dismissed: found ? dismissed : null };
        const index = meta?.index ?? (found.query === previous.query && previous.from !== null ? previous.index : 0);
        return { from: found.from, query: found.query, index, dismissed };
      },
    },
    props: {
      handleKeyDown(view, event) {
        const state = slashKey.getState(view.state);
        const current = handlers();
        if (!state || state.from === null || !current) return false;
        if (event.key === 'ArrowUp' || event.key === 'ArrowDown' || event.key === 'Enter' || event.key === 'Escape' || event.key === 'Tab') {
          return current.onKey(event.key);
        }
        return false;
      },
    },
  });
}

// ───────────────────────────── markdown shortcuts ─────────────────────────────

/** Replaces the textblock the rule fired in by a block (code, divider) when its container may hold it. */
function replaceTextblockRule(find: RegExp, make: (match: RegExpMatchArray, editor: Editor) => PMNode, after: 'inside' | 'next'): (editor: Editor) => InputRule {
  return (editor) =>
    new InputRule({
      find,
      handler: ({ state, range, match }) => {
        const $from = state.doc.resolve(range.from);
        const block = $from.parent;
        if (block.type.name !== 'paragraph' || $from.depth < 1) return null;
        const node = make(match, editor);
        const start = $from.before();
        const end = $from.after();
        const container = $from.node(-1);
        const index = $from.index(-1);
        const trailing = after === 'next' ? editor.schema.nodes.paragraph!.create() : null;
        const content = trailing ? [node, trailing] : [node];
        if (!container.canReplace(index, index + 1, Fragment.from(content))) return null;
        const tr = state.tr.replaceWith(start, end, content);
        // The cursor goes into the new code block's first line, or into the paragraph after the divider.
        const target = after === 'inside' ? start + 2 : start + node.nodeSize + 1;
        tr.setSelection(TextSelection.create(tr.doc, Math.min(target, tr.doc.content.size)));
      },
    });
}

const codeFenceRule = replaceTextblockRule(/^```([a-zA-Z0-9+#._-]*)[\s]$/, (m, editor) => editor.schema.nodeFromJSON(codeBlockJson(m[1] ?? '')), 'inside');
const dividerRule = replaceTextblockRule(/^(?:---|—-|___\s|\*\*\*\s)$/, (_m, editor) => editor.schema.nodeFromJSON(dividerJson()), 'next');

// ───────────────────────────── images pasted or dropped ─────────────────────────────

/** Uploads images; the editor inserts an images block of them where they were pasted or dropped. */
export type Upload = (files: File[], at: number | null) => void;

function imageFiles(list: FileList | null | undefined): File[] {
  return Array.from(list ?? []).filter((f) => f.type.startsWith('image/'));
}

/** Keys of pasted nodes are dropped: a copy is a new node, and two nodes may not share a key. */
function withoutKeys(slice: Slice): Slice {
  const strip = (node: PMNode): PMNode => {
    let attrs = node.attrs;
    if (isRecord(attrs.gb) && 'key' in attrs.gb) {
      const { key: _key, ...gb } = attrs.gb;
      attrs = { ...attrs, gb };
    }
    if (isRecord(attrs.json)) attrs = { ...attrs, json: stripKeysDeep(attrs.json) };
    const marks = node.marks.map((mark) => {
      if (isRecord(mark.attrs.gb) && 'key' in mark.attrs.gb) {
        const { key: _key, ...gb } = mark.attrs.gb;
        return mark.type.create({ ...mark.attrs, gb });
      }
      return mark;
    });
    if (node.isText) return node.mark(marks);
    const content: PMNode[] = [];
    node.content.forEach((child) => content.push(strip(child)));
    return node.type.create(attrs, Fragment.from(content), marks);
  };
  const content: PMNode[] = [];
  slice.content.forEach((child) => content.push(strip(child)));
  return new Slice(Fragment.from(content), slice.openStart, slice.openEnd);
}

function stripKeysDeep(value: unknown): Record<string, unknown> {
  const walk = (v: unknown): unknown => {
    if (Array.isArray(v)) return v.map(walk);
    if (!isRecord(v)) return v;
    const out: Record<string, unknown> = {};
    for (const [k, x] of Object.entries(v)) if (k !== 'key' || !('object' in v)) out[k] = walk(x);
    return out;
  };
  return walk(value) as Record<string, unknown>;
}

// ───────────────────────────── a hint in the empty block ─────────────────────────────

/** The empty block the cursor is in says how to insert a block (CSS shows `data-placeholder`). */
function placeholderPlugin(): Plugin {
  return new Plugin({
    key: new PluginKey('folioPlaceholder'),
    props: {
      // The first character typed into an empty block is inserted here, the caret placed after it
      // by the transaction. Left to the browser, Chromium was seen (on a loaded machine, about one
      // time in five in the editor's flow test) to leave its caret before that first character, so
      // that everything typed next went in front of it ("yped.T"), and a "/" never opened the menu.
      // Input rules run before this (their plugin comes first), so `# `, `- `… still apply.
      handleTextInput(view, from, to, text) {
        const $from = view.state.doc.resolve(from);
        if (from !== to || !$from.parent.isTextblock || $from.parent.content.size > 0) return false;
        view.dispatch(view.state.tr.insertText(text, from, to));
        return true;
      },
      // A printable key is inserted by a transaction before the browser touches the page, as
      // ProseMirror does itself for non-text selections. Left to the browser, the character sits in
      // the page until ProseMirror reads it back; a change from another person applied in between
      // (co-editing redraws the document and puts the caret back where it was) left the caret
      // before the new character, and a fast typist's words came out backwards. Input rules and
      // the handlers above still run (handleTextInput); composition (IME, dead keys) is left alone.
      handleKeyPress(view, event) {
        if (event.isComposing || event.ctrlKey || event.metaKey || event.altKey || event.key.length !== 1 || /[\r\n]/.test(event.key)) return false;
        const { selection } = view.state;
        if (!(selection instanceof TextSelection) || !selection.$from.sameParent(selection.$to) || !selection.$from.parent.isTextblock) return false;
        const { from, to } = selection;
        const text = event.key;
        const insert = () => view.state.tr.insertText(text, from, to).scrollIntoView();
        if (!view.someProp('handleTextInput', (f) => f(view, from, to, text, insert))) view.dispatch(insert());
        event.preventDefault();
        return true;
      },
      decorations(state) {
        if (!state.selection.empty) return null;
        const { $from } = state.selection;
        const parent = $from.parent;
        if (!parent.isTextblock || parent.content.size > 0 || parent.type.name === 'codeLine') return null;
        const text = parent.type.name === 'heading' ? 'Heading' : $from.node(-1)?.type.name === 'expandableTitle' ? 'Title' : 'Type / to insert a block';
        return DecorationSet.create(state.doc, [Decoration.node($from.before(), $from.after(), { class: 'gb-empty', 'data-placeholder': text })]);
      },
    },
  });
}

// ───────────────────────────── markdown pasted as text ─────────────────────────────

/** Converts markdown to the GitBook document it reads as (the server does: the API's own conversion). */
export type MarkdownPaste = (markdown: string) => Promise<JSONDocument>;

/**
 * Whether pasted plain text is markdown worth converting: a heading, a list, a quote, a fence, a
 * table row or a divider starting a line, or inline emphasis, code or a link. Prose without any is
 * pasted as it is.
 */
export function looksLikeMarkdown(text: string): boolean {
  if (/^(#{1,6} |\s*[-*+] |\s*\d+[.)] |> |```|~~~|\|.*\|\s*$|---\s*$|\s*- \[[ xX]\] )/m.test(text)) return true;
  return /\*\*[^*\n]+\*\*|__[^_\n]+__|`[^`\n]+`|\[[^\]\n]+\]\([^)\s]+\)/.test(text);
}

/**
 * Markdown pasted as text: converted, then put where it was pasted, as blocks (the place is mapped
 * through whatever changed meanwhile: typing, others' edits). When the conversion fails, the text
 * goes in as it is.
 */
function pasteMarkdown(editor: Editor, text: string, convert: MarkdownPaste): void {
  const { from, to } = editor.state.selection;
  const mapping = new Mapping();
  const track = ({ transaction }: { transaction: Transaction }) => mapping.appendMapping(transaction.mapping);
  editor.on('transaction', track);
  const place = () => {
    editor.off('transaction', track);
    return editor.isDestroyed ? null : { from: mapping.map(from, -1), to: mapping.map(to, 1) };
  };
  convert(text).then(
    (doc) => {
      const at = place();
      if (!at) return;
      const nodes = topLevelToProseMirror(doc.nodes ?? []).map((json) => editor.schema.nodeFromJSON(json));
      const slice = withoutKeys(new Slice(Fragment.from(nodes), 0, 0));
      editor.view.dispatch(editor.state.tr.replaceRange(at.from, at.to, slice).scrollIntoView());
      editor.view.focus();
    },
    () => {
      const at = place();
      if (at) editor.view.dispatch(editor.state.tr.insertText(text, at.from, at.to));
    },
  );
}

// ───────────────────────────── the extensions ─────────────────────────────

/**
 * The `/` menu's keys come before any other key handling (Enter must not split the block). Options
 * are functions: Tiptap deep-copies plain objects given to `configure`.
 */
export const SlashKeys = Extension.create<{ slash: () => SlashHandlers | null }>({
  name: 'folioSlashMenu',
  priority: 10_000,
  addOptions() {
    return { slash: () => null };
  },
  addProseMirrorPlugins() {
    return [slashPlugin(this.options.slash)];
  },
});

export interface BehaviourOptions {
  upload: () => Upload | null;
  /** Converts markdown pasted as plain text (none: pasted as text). */
  pasteMarkdown: () => MarkdownPaste | null;
  /** Opens the link form (Mod-K). */
  openLink: () => void;
}

export const Behaviour = Extension.create<BehaviourOptions>({
  name: 'folioBehaviour',

  addOptions() {
    return { upload: () => null, pasteMarkdown: () => null, openLink: () => undefined };
  },

  addKeyboardShortcuts() {
    const inCodeLine = () => this.editor.state.selection.$from.parent.type.name === 'codeLine';
    return {
      'Mod-b': () => this.editor.commands.toggleMark('bold'),
      'Mod-i': () => this.editor.commands.toggleMark('italic'),
      'Mod-e': () => this.editor.commands.toggleMark('code'),
      'Mod-Shift-s': () => this.editor.commands.toggleMark('strikethrough'),
      'Mod-Shift-x': () => this.editor.commands.toggleMark('strikethrough'),
      'Mod-.': () => this.editor.commands.toggleMark('superscript'),
      'Mod-,': () => this.editor.commands.toggleMark('subscript'),
      'Mod-k': () => {
        if (inCodeLine()) return false;
        this.options.openLink();
        return true;
      },
      // A line break inside a block is a newline in its text (what markdown's `<br>` reads as).
      'Shift-Enter': () => (inCodeLine() ? false : this.editor.commands.insertContent('\n')),
      Enter: () => {
        if (this.editor.isActive('taskItem')) return this.editor.commands.splitListItem('taskItem');
        if (this.editor.isActive('listItem')) return this.editor.commands.splitListItem('listItem');
        return false;
      },
      // Leaves a code block: a paragraph after it.
      'Mod-Enter': () => {
        if (!inCodeLine()) return false;
        const { $from } = this.editor.state.selection;
        const after = $from.after(-1);
        return this.editor.chain().insertContentAt(after, { type: 'paragraph' }).setTextSelection(after + 1).run();
      },
      Tab: () => {
        if (inCodeLine()) return this.editor.commands.insertContent('  ');
        if (this.editor.isActive('taskItem')) return this.editor.commands.sinkListItem('taskItem');
        if (this.editor.isActive('listItem')) return this.editor.commands.sinkListItem('listItem');
        return false;
      },
      'Shift-Tab': () => {
        if (this.editor.isActive('taskItem')) return this.editor.commands.liftListItem('taskItem');
        if (this.editor.isActive('listItem')) return this.editor.commands.liftListItem('listItem');
        return false;
      },
    };
  },

  addInputRules() {
    const { schema } = this.editor;
    return [
      // `# ` is heading 1 in the editor (GitBook's markdown writes it `##`: `#` is the page title).
      textblockTypeInputRule({ find: /^(#{1,3})\s$/, type: schema.nodes.heading!, getAttributes: (m) => ({ level: m[1]!.length }) }),
      wrappingInputRule({ find: /^\s*([-+*])\s$/, type: schema.nodes.bulletList! }),
      wrappingInputRule({
        find: /^(\d+)\.\s$/,
        type: schema.nodes.orderedList!,
        getAttributes: (m) => (Number(m[1]) === 1 ? {} : { gb: newShell('list-ordered', { start: Number(m[1]) }) }),
      }),
      wrappingInputRule({ find: /^\s*\[( |x)?\]\s$/, type: schema.nodes.taskList! }),
      wrappingInputRule({ find: /^\s*>\s$/, type: schema.nodes.blockquote! }),
      codeFenceRule(this.editor),
      dividerRule(this.editor),
      markInputRule({ find: /(?:^|\s)(\*\*(?!\s+\*\*)((?:[^*]+))\*\*(?!\s+\*\*))$/, type: schema.marks.bold! }),
      markInputRule({ find: /(?:^|\s)(__(?!\s+__)((?:[^_]+))__(?!\s+__))$/, type: schema.marks.bold! }),
      markInputRule({ find: /(?:^|\s)(\*(?!\s+\*)((?:[^*]+))\*(?!\s+\*))$/, type: schema.marks.italic! }),
      markInputRule({ find: /(?:^|\s)(_(?!\s+_)((?:[^_]+))_(?!\s+_))$/, type: schema.marks.italic! }),
      markInputRule({ find: /(?:^|\s)(~~(?!\s+~~)((?:[^~]+))~~(?!\s+~~))$/, type: schema.marks.strikethrough! }),
      markInputRule({ find: /(?:^|\s)(`(?!\s+`)((?:[^`]+))`(?!\s+`))$/, type: schema.marks.code! }),
    ];
  },

  addProseMirrorPlugins() {
    const upload = this.options.upload;
    const markdown = this.options.pasteMarkdown;
    const editor = this.editor;
    return [
      placeholderPlugin(),
      new Plugin({
        key: new PluginKey('folioPaste'),
        props: {
          transformPasted: (slice) => withoutKeys(slice),
          handlePaste: (view, event) => {
            const files = imageFiles(event.clipboardData?.files);
            const send = upload();
            if (files.length > 0 && send) {
              send(files, null);
              return true;
            }
            // Plain text only (HTML from a web page pastes as HTML), and never into code.
            const convert = markdown();
            const data = event.clipboardData;
            const text = data?.getData('text/plain') ?? '';
            if (!convert || !text || data?.types.includes('text/html') || view.state.selection.$from.parent.type.name === 'codeLine') return false;
            if (!looksLikeMarkdown(text)) return false;
            pasteMarkdown(editor, text, convert);
            return true;
          },
          handleDrop: (view, event) => {
            const files = imageFiles((event as DragEvent).dataTransfer?.files);
            const send = upload();
            if (files.length === 0 || !send) return false;
            const at = view.posAtCoords({ left: (event as DragEvent).clientX, top: (event as DragEvent).clientY });
            send(files, at?.pos ?? null);
            event.preventDefault();
            return true;
          },
        },
      }),
    ];
  },
});
