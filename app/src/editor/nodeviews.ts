/**
 * Node views: how blocks look and what they offer beyond their text. Plain DOM (no React per
 * node): a long page has thousands of nodes and must open fast. Each view that edits a block's
 * data (code title and language, hint style, tab titles, task checkbox, condition, formula) writes
 * the new data into the node's `gb` attribute, which conversion turns back into GitBook data.
 *
 * Read-only (not editable), views show the block as a reader sees it: tabs as tabs, expandables
 * closed (unless open by default), no inputs.
 */
import { type Editor, type Extensions, Node as TiptapNode, type NodeViewRenderer, type NodeViewRendererProps } from '@tiptap/core';
import type { Node as PMNode } from '@tiptap/pm/model';
import type { NodeView, ViewMutationRecord } from '@tiptap/pm/view';
import { newShell, tabsItemJson } from './blocks.ts';
import { HINT_STYLES, type GBNode, isRecord } from './model.ts';
import { type PreviewContext, blockPreview, h, inlinePreview, renderMath } from './preview.ts';
import { schemaExtensions } from './schema.ts';
import { tableEditor } from './table-edit.ts';

export interface ViewContext extends PreviewContext {
  editable: boolean;
}

type Json = Record<string, unknown>;

/** `gb` with `patch` applied to its data: empty strings and undefined remove a field. */
export function withData(gb: Json | null, fallback: () => Json, patch: Json): Json {
  const base = gb ?? fallback();
  const dataOut: Json = { ...(isRecord(base.data) ? base.data : {}) };
  for (const [key, value] of Object.entries(patch)) {
    if (value === undefined || value === '') delete dataOut[key];
    else dataOut[key] = value;
  }
  return { ...base, data: dataOut };
}

function dataOf(node: PMNode): Json {
  const gb = node.attrs.gb as Json | null;
  return gb && isRecord(gb.data) ? gb.data : {};
}

/** Sets the node's `gb` data (one undoable step per change). */
function setData(editor: Editor, getPos: () => number | undefined, node: PMNode, fallback: () => Json, patch: Json): void {
  const pos = getPos();
  if (pos === undefined) return;
  const current = editor.state.doc.nodeAt(pos);
  if (!current || current.type !== node.type) return;
  const gb = withData(current.attrs.gb as Json | null, fallback, patch);
  editor.view.dispatch(editor.state.tr.setNodeMarkup(pos, undefined, { ...current.attrs, gb }));
}

/** The parts of a block view outside its editable content do not go to ProseMirror. */
function outside(contentDOM: HTMLElement | null) {
  return {
    stopEvent: (event: Event) => !!contentDOM && event.target instanceof Node && !contentDOM.contains(event.target),
    ignoreMutation: (mutation: ViewMutationRecord) => {
      if (mutation.type === 'selection') return false;
      return !contentDOM || !contentDOM.contains(mutation.target);
    },
  };
}

function labelledInput(label: string, value: string, className: string, onInput: (value: string) => void, placeholder = label): HTMLInputElement {
  const input = h('input', { className, attrs: { type: 'text', 'aria-label': label, placeholder, spellcheck: 'false' } });
  input.value = value;
  input.addEventListener('input', () => onInput(input.value));
  return input;
}

/** Keeps an input's value in step with the document, unless the writer is typing in it. */
function syncInput(input: HTMLInputElement | HTMLTextAreaElement | HTMLSelectElement, value: string) {
  if (document.activeElement !== input && input.value !== value) input.value = value;
}

const str = (v: unknown) => (typeof v === 'string' ? v : '');

// ───────────────────────────── code ─────────────────────────────

function codeBlockView(ctx: ViewContext): NodeViewRenderer {
  return ({ node, editor, getPos }: NodeViewRendererProps) => {
    const code = h('code', { className: 'gb-code-lines' });
    const pre = h('pre', { className: 'gb-code' }, [code]);
    const header = h('div', { className: 'gb-code-header', attrs: { contenteditable: 'false' } });
    const fallback = () => newShell('code');
    let current = node;
    let title: HTMLInputElement | null = null;
    let syntax: HTMLInputElement | null = null;
    const titleText = h('span', { className: 'gb-code-title' });
    const syntaxText = h('span', { className: 'gb-code-syntax' });
    if (ctx.editable) {
      title = labelledInput('Code title', str(dataOf(node).title), 'gb-input gb-code-title-input', (value) => setData(editor, getPos, current, fallback, { title: value }), 'Title (optional)');
      syntax = labelledInput('Language', str(dataOf(node).syntax), 'gb-input gb-code-syntax-input', (value) => setData(editor, getPos, current, fallback, { syntax: value.trim() }), 'Language');
      header.append(title, syntax);
    } else header.append(titleText, syntaxText);
    const dom = h('div', { className: 'gb-code-block', attrs: { role: 'group', 'aria-label': 'Code block' } }, [header, pre]);
    const render = () => {
      const d = dataOf(current);
      titleText.textContent = str(d.title);
      syntaxText.textContent = str(d.syntax);
      header.hidden = !ctx.editable && !d.title && !d.syntax;
      dom.classList.toggle('gb-wrap', d.overflow === 'wrap');
      dom.classList.toggle('gb-line-numbers', d.lineNumbers === true);
      if (title) syncInput(title, str(d.title));
      if (syntax) syncInput(syntax, str(d.syntax));
    };
    render();
    return {
      dom,
      contentDOM: code,
      update(next) {
        if (next.type !== current.type) return false;
        current = next;
        render();
        return true;
      },
      ...outside(code),
    } satisfies NodeView;
  };
}

// ───────────────────────────── hint ─────────────────────────────

const HINT_NAMES: Record<string, string> = { info: 'Info', success: 'Success', warning: 'Warning', danger: 'Danger' };
const HINT_ICONS: Record<string, string> = { info: 'i', success: '✓', warning: '!', danger: '✕' };

function hintView(ctx: ViewContext): NodeViewRenderer {
  return ({ node, editor, getPos }) => {
    const body = h('div', { className: 'gb-hint-body' });
    const icon = h('span', { className: 'gb-hint-icon', attrs: { 'aria-hidden': 'true' } });
    const header = h('div', { className: 'gb-hint-side', attrs: { contenteditable: 'false' } }, [icon]);
    const tools = h('div', { className: 'gb-hint-tools', attrs: { contenteditable: 'false' } });
    let current = node;
    let select: HTMLSelectElement | null = null;
    if (ctx.editable) {
      select = h(
        'select',
        { className: 'gb-input gb-hint-style', attrs: { 'aria-label': 'Hint style' } },
        HINT_STYLES.map((style) => h('option', { text: HINT_NAMES[style], attrs: { value: style } })),
      );
      select.addEventListener('change', () => setData(editor, getPos, current, () => newShell('hint', { style: 'info' }), { style: select!.value }));
      tools.append(select);
    }
    const dom = h('div', { className: 'gb-hint', attrs: { role: 'note' } }, [header, body, ctx.editable && tools]);
    const render = () => {
      const style = (HINT_STYLES as readonly string[]).includes(str(dataOf(current).style)) ? str(dataOf(current).style) : 'info';
      dom.dataset.style = style;
      dom.setAttribute('aria-label', `${HINT_NAMES[style]} hint`);
      icon.textContent = HINT_ICONS[style]!;
      if (select) syncInput(select, style);
    };
    render();
    return {
      dom,
      contentDOM: body,
      update(next) {
        if (next.type !== current.type) return false;
        current = next;
        render();
        return true;
      },
      ...outside(body),
    };
  };
}

// ───────────────────────────── tabs ─────────────────────────────

/** Ids of tabs and panels (read-only tabs name their panels). */
let tabsCount = 0;

function tabsView(ctx: ViewContext): NodeViewRenderer {
  return ({ node, editor, getPos }) => {
    const panels = h('div', { className: 'gb-tabs-panels' });
    const tablist = h('div', { className: 'gb-tablist', attrs: { role: 'tablist', contenteditable: 'false' } });
    const dom = h('div', { className: 'gb-tabs' }, [tablist, panels]);
    let current = node;
    let selected = 0;
    const uid = `gb-tabs-${++tabsCount}`;
    if (ctx.editable) {
      const add = h('button', { className: 'gb-add-tab', text: 'Add tab', attrs: { type: 'button', contenteditable: 'false' } });
      add.addEventListener('click', () => {
        const pos = getPos();
        if (pos === undefined) return;
        const end = pos + current.nodeSize - 1;
        editor
          .chain()
          .insertContentAt(end, tabsItemJson(`Tab ${current.childCount + 1}`))
          .focus()
          .run();
      });
      dom.appendChild(add);
      tablist.hidden = true;
    }
    const showSelected = () => {
      if (ctx.editable) return;
      Array.from(panels.children).forEach((panel, i) => {
        (panel as HTMLElement).hidden = i !== selected;
        panel.id = `${uid}-panel-${i}`;
        panel.setAttribute('aria-labelledby', `${uid}-tab-${i}`);
      });
    };
    const renderTabs = () => {
      if (ctx.editable) return;
      tablist.replaceChildren(
        ...Array.from({ length: current.childCount }, (_, i) => {
          const title = str(dataOf(current.child(i)).title) || `Tab ${i + 1}`;
          const tab = h('button', {
            className: 'gb-tab-button',
            text: title,
            attrs: { type: 'button', role: 'tab', id: `${uid}-tab-${i}`, 'aria-controls': `${uid}-panel-${i}`, 'aria-selected': String(i === selected), tabindex: i === selected ? '0' : '-1' },
          });
          tab.addEventListener('click', () => {
            selected = i;
            renderTabs();
            showSelected();
          });
          tab.addEventListener('keydown', (event) => {
            const step = event.key === 'ArrowRight' ? 1 : event.key === 'ArrowLeft' ? -1 : 0;
            if (!step) return;
            selected = (selected + step + current.childCount) % current.childCount;
            renderTabs();
            showSelected();
            (tablist.children[selected] as HTMLElement | undefined)?.focus();
          });
          return tab;
        }),
      );
    };
    renderTabs();
    // Panels are rendered into `panels` after this view is made.
    queueMicrotask(showSelected);
    return {
      dom,
      contentDOM: panels,
      update(next) {
        if (next.type !== current.type) return false;
        current = next;
        if (selected >= current.childCount) selected = 0;
        renderTabs();
        showSelected();
        return true;
      },
      ...outside(panels),
      // Panels shown or hidden by this view are not edits.
      ignoreMutation: (mutation) => mutation.type === 'attributes' || (mutation.type !== 'selection' && !panels.contains(mutation.target)),
    };
  };
}

function tabsItemView(ctx: ViewContext): NodeViewRenderer {
  return ({ node, editor, getPos }) => {
    const body = h('div', { className: 'gb-tab-body' });
    const dom = h('section', { className: 'gb-tab' }, [body]);
    let current = node;
    let input: HTMLInputElement | null = null;
    if (ctx.editable) {
      input = labelledInput('Tab title', str(dataOf(node).title), 'gb-input gb-tab-title', (value) => setData(editor, getPos, current, () => newShell('tabs-item', { title: '' }), { title: value }));
      const remove = h('button', { className: 'gb-remove-tab', text: 'Remove tab', attrs: { type: 'button' } });
      remove.addEventListener('click', () => {
        const pos = getPos();
        if (pos === undefined) return;
        const $pos = editor.state.doc.resolve(pos);
        // The last tab goes with its tabs block.
        if ($pos.parent.childCount <= 1) editor.chain().deleteRange({ from: $pos.before(), to: $pos.after() }).focus().run();
        else editor.chain().deleteRange({ from: pos, to: pos + current.nodeSize }).focus().run();
      });
      dom.prepend(h('div', { className: 'gb-tab-header', attrs: { contenteditable: 'false' } }, [input, remove]));
    }
    const render = () => {
      const title = str(dataOf(current).title);
      if (ctx.editable) dom.setAttribute('aria-label', title || 'Tab');
      else dom.setAttribute('role', 'tabpanel');
      if (input) syncInput(input, title);
    };
    render();
    return {
      dom,
      contentDOM: body,
      update(next) {
        if (next.type !== current.type) return false;
        current = next;
        render();
        return true;
      },
      ...outside(body),
      ignoreMutation: (mutation) => (mutation.type === 'attributes' && mutation.target === dom) || (mutation.type !== 'selection' && !body.contains(mutation.target)),
    };
  };
}

// ───────────────────────────── expandable ─────────────────────────────

function expandableView(ctx: ViewContext): NodeViewRenderer {
  return ({ node }) => {
    const content = h('div', { className: 'gb-expandable-content' });
    const dom = h('div', { className: 'gb-expandable' }, [content]);
    let open = ctx.editable || dataOf(node).defaultExpanded === true;
    const toggle = h('button', { className: 'gb-expandable-toggle', attrs: { type: 'button', contenteditable: 'false', 'aria-label': 'Show content' } });
    const render = () => {
      dom.classList.toggle('gb-open', open);
      toggle.setAttribute('aria-expanded', String(open));
      toggle.textContent = open ? '▾' : '▸';
    };
    if (!ctx.editable) {
      toggle.addEventListener('click', () => {
        open = !open;
        render();
      });
      dom.prepend(toggle);
    }
    render();
    return {
      dom,
      contentDOM: content,
      update: (next) => next.type === node.type,
      ...outside(content),
      ignoreMutation: (mutation) => (mutation.type === 'attributes' && mutation.target === dom) || (mutation.type !== 'selection' && !content.contains(mutation.target)),
    };
  };
}

// ───────────────────────────── task item ─────────────────────────────

function taskItemView(ctx: ViewContext): NodeViewRenderer {
  return ({ node, editor, getPos }) => {
    const body = h('div', { className: 'gb-task-body' });
    const checkbox = h('input', { attrs: { type: 'checkbox', 'aria-label': 'Done' } });
    checkbox.disabled = !ctx.editable;
    const dom = h('li', { className: 'gb-task' }, [h('span', { className: 'gb-task-check', attrs: { contenteditable: 'false' } }, [checkbox]), body]);
    let current = node;
    checkbox.addEventListener('change', () => setData(editor, getPos, current, () => newShell('list-item', { checked: false }), { checked: checkbox.checked }));
    const render = () => {
      checkbox.checked = dataOf(current).checked === true;
      dom.dataset.checked = String(checkbox.checked);
    };
    render();
    return {
      dom,
      contentDOM: body,
      update(next) {
        if (next.type !== current.type) return false;
        current = next;
        render();
        return true;
      },
      ...outside(body),
      ignoreMutation: (mutation) => (mutation.type === 'attributes' && mutation.target === dom) || (mutation.type !== 'selection' && !body.contains(mutation.target)),
    };
  };
}

// ───────────────────────────── condition, update ─────────────────────────────

function conditionalView(ctx: ViewContext): NodeViewRenderer {
  return ({ node, editor, getPos }) => {
    const body = h('div', { className: 'gb-if-body' });
    const header = h('div', { className: 'gb-if-header', attrs: { contenteditable: 'false' } }, [h('span', { text: 'Shown when ' })]);
    let current = node;
    let input: HTMLInputElement | null = null;
    const text = h('code');
    if (ctx.editable) {
      input = labelledInput('Condition', str(dataOf(node).expression), 'gb-input gb-if-input', (value) => setData(editor, getPos, current, () => newShell('if', { expression: '' }), { expression: value || ' ' }));
      header.append(input);
    } else header.append(text);
    const dom = h('div', { className: 'gb-if', attrs: { role: 'group', 'aria-label': 'Conditional content' } }, [header, body]);
    const render = () => {
      text.textContent = str(dataOf(current).expression);
      if (input) syncInput(input, str(dataOf(current).expression));
    };
    render();
    return {
      dom,
      contentDOM: body,
      update(next) {
        if (next.type !== current.type) return false;
        current = next;
        render();
        return true;
      },
      ...outside(body),
    };
  };
}

function updateView(): NodeViewRenderer {
  return ({ node }) => {
    const body = h('div', { className: 'gb-update-body' });
    const date = h('time', { className: 'gb-update-date', attrs: { contenteditable: 'false' } });
    const dom = h('section', { className: 'gb-update' }, [date, body]);
    let current = node;
    const render = () => {
      const value = str(dataOf(current).date);
      date.textContent = value.slice(0, 10);
      date.setAttribute('datetime', value);
      dom.setAttribute('aria-label', `Update of ${value.slice(0, 10)}`);
    };
    render();
    return {
      dom,
      contentDOM: body,
      update(next) {
        if (next.type !== current.type) return false;
        current = next;
        render();
        return true;
      },
      ...outside(body),
    };
  };
}

// ───────────────────────────── atoms ─────────────────────────────

function setJson(editor: Editor, getPos: () => number | undefined, node: PMNode, json: GBNode): void {
  const pos = getPos();
  if (pos === undefined) return;
  const current = editor.state.doc.nodeAt(pos);
  if (!current || current.type !== node.type) return;
  editor.view.dispatch(editor.state.tr.setNodeMarkup(pos, undefined, { ...current.attrs, json }));
}

function gbBlockView(ctx: ViewContext): NodeViewRenderer {
  return ({ node, editor, getPos }) => {
    let current = node;
    const dom = h('div', { className: 'gb-block-atom' });
    const preview = h('div', { className: 'gb-block-preview' });
    dom.appendChild(preview);
    const json = () => (current.attrs.json ?? { object: 'block', type: 'unknown' }) as GBNode;
    // Editable fields of the few atoms that have one.
    let field: HTMLInputElement | HTMLTextAreaElement | null = null;
    const type = json().type;
    if (ctx.editable && type === 'math') {
      field = h('textarea', { className: 'gb-input gb-formula', attrs: { 'aria-label': 'Formula', rows: '2', spellcheck: 'false', placeholder: 'LaTeX, e.g. E = mc^2' } });
      field.value = str(json().data?.formula);
      field.addEventListener('input', () => setJson(editor, getPos, current, { ...json(), data: { ...json().data, formula: field!.value } }));
    } else if (ctx.editable && type === 'embed') {
      field = labelledInput('Embed URL', str(json().data?.url), 'gb-input gb-embed-url', (value) => setJson(editor, getPos, current, { ...json(), data: { ...json().data, url: value } }), 'https://…');
    }
    if (field) dom.appendChild(h('div', { className: 'gb-atom-fields' }, [field]));
    let shown: unknown = undefined;
    const editableTable = ctx.editable && type === 'table' && isRecord(json().data?.view) && (json().data!.view as Json).type === 'grid';
    const render = () => {
      if (shown === current.attrs.json) return;
      shown = current.attrs.json;
      if (editableTable) {
        preview.replaceChildren(
          tableEditor(json(), {
            // The grid stays while typing (its input keeps the focus): the new JSON counts as shown.
            typed: (next) => {
              shown = next;
              setJson(editor, getPos, current, next);
            },
            reshaped: (next) => setJson(editor, getPos, current, next),
          }),
        );
        return;
      }
      preview.replaceChildren(type === 'math' && ctx.editable ? renderMath(str(json().data?.formula) || ' ', true) : blockPreview(json(), ctx));
      dom.dataset.type = str(json().type);
      if (field) syncInput(field, str(type === 'math' ? json().data?.formula : json().data?.url));
    };
    render();
    return {
      dom,
      update(next) {
        if (next.type !== current.type || (next.attrs.json as GBNode | null)?.type !== type) return false;
        current = next;
        render();
        return true;
      },
      // Inputs and buttons of the block (formula, URL, table cells) keep their events.
      stopEvent: (event) => event.target instanceof HTMLElement && dom.contains(event.target) && /^(INPUT|TEXTAREA|SELECT|BUTTON)$/.test(event.target.tagName),
      ignoreMutation: () => true,
      selectNode: () => dom.classList.add('ProseMirror-selectednode'),
      deselectNode: () => dom.classList.remove('ProseMirror-selectednode'),
    };
  };
}

function gbInlineView(ctx: ViewContext): NodeViewRenderer {
  return ({ node }) => {
    const dom = h('span', { className: 'gb-inline-atom' });
    dom.appendChild(inlinePreview((node.attrs.json ?? { object: 'inline', type: 'unknown' }) as GBNode, ctx));
    return {
      dom,
      update: (next) => next.type === node.type && next.attrs.json === node.attrs.json,
      ignoreMutation: () => true,
    };
  };
}

/** The schema's extensions with their node views for a page (editable or not). */
export function viewExtensions(ctx: ViewContext): Extensions {
  const views: Partial<Record<string, NodeViewRenderer>> = {
    codeBlock: codeBlockView(ctx),
    hint: hintView(ctx),
    tabs: tabsView(ctx),
    tabsItem: tabsItemView(ctx),
    expandable: expandableView(ctx),
    taskItem: taskItemView(ctx),
    conditional: conditionalView(ctx),
    update: updateView(),
    gbBlock: gbBlockView(ctx),
    gbInline: gbInlineView(ctx),
  };
  return schemaExtensions.map((extension) => {
    const view = views[extension.name];
    return view && extension instanceof TiptapNode ? extension.extend({ addNodeView: () => view }) : extension;
  });
}
