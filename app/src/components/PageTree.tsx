import { useState, type DragEvent } from 'react';
import { Link } from 'wouter';
import type { RevisionPage } from '@gitbook/api';
import { emojiText } from '../format.ts';
import { ConfirmDialog, Dialog } from './Dialog.tsx';

/** What the tree asks its screen to do; each becomes a content change in a change request. */
export interface TreeActions {
  create(into: string | null): void;
  /** A group (top level only) or a link (a URL), with the title the writer gave. */
  createEntry(entry: { type: 'group'; title: string } | { type: 'link'; title: string; url: string; into: string | null }): void;
  /** A link's new title and URL. */
  relink(page: RevisionPage, title: string, url: string): void;
  rename(page: RevisionPage, title: string): void;
  move(page: RevisionPage, into: string | null, at: number): void;
  remove(page: RevisionPage): void;
}

type Drop = { target: string; where: 'before' | 'after' | 'inside' };

interface Node {
  page: RevisionPage;
  parent: string | null;
  index: number;
  children: RevisionPage[];
}

function index(pages: RevisionPage[], parent: string | null = null, into = new Map<string, Node>()): Map<string, Node> {
  pages.forEach((page, i) => {
    const children = ('pages' in page ? (page.pages as RevisionPage[] | undefined) : undefined) ?? [];
    into.set(page.id, { page, parent, index: i, children });
    index(children, page.id, into);
  });
  return into;
}

/**
 * A space's pages (documents, groups and links) as nested lists of links. With `actions`, pages can
 * be created, renamed, deleted and moved: by drag and drop (top of a page: before it; bottom:
 * after it; middle: inside it), or with the keyboard through each page's "Move up/down" actions.
 */
export function PageTree({ pages, currentId, hrefOf, actions }: { pages: RevisionPage[]; currentId?: string; hrefOf: (page: RevisionPage) => string; actions?: TreeActions }) {
  const nodes = index(pages);
  const [dragging, setDragging] = useState<string>();
  const [drop, setDrop] = useState<Drop>();
  const [renaming, setRenaming] = useState<RevisionPage>();
  const [deleting, setDeleting] = useState<RevisionPage>();
  /** The form open for a new group or link (`into`: the page a link goes inside), or for a link's target. */
  const [entryForm, setEntryForm] = useState<{ type: 'group' } | { type: 'link'; into: string | null } | { type: 'relink'; page: RevisionPage }>();

  function siblingsOf(parent: string | null): RevisionPage[] {
    return parent === null ? pages : (nodes.get(parent)?.children ?? []);
  }

  /** Moves `id` to a drop position, as the API's `into` and `at` (the index among the other siblings). */
  function moveTo(id: string, target: Drop) {
    const source = nodes.get(id);
    const dest = nodes.get(target.target);
    if (!source || !dest || id === target.target || !actions) return;
    // Not into itself or below itself.
    for (let p: string | null = dest.page.id; p; p = nodes.get(p)?.parent ?? null) if (p === id && target.where === 'inside') return;
    if (target.where === 'inside') return actions.move(source.page, dest.page.id, dest.children.filter((c) => c.id !== id).length);
    const others = siblingsOf(dest.parent).filter((p) => p.id !== id);
    const at = others.findIndex((p) => p.id === dest.page.id) + (target.where === 'after' ? 1 : 0);
    actions.move(source.page, dest.parent, at);
  }

  function shift(page: RevisionPage, by: -1 | 1) {
    const node = nodes.get(page.id)!;
    const at = node.index + by;
    if (at < 0 || at >= siblingsOf(node.parent).length) return;
    actions?.move(page, node.parent, at);
  }

  function onDragOver(event: DragEvent, id: string) {
    if (!dragging || dragging === id) return;
    event.preventDefault();
    const box = (event.currentTarget as HTMLElement).getBoundingClientRect();
    const y = (event.clientY - box.top) / box.height;
    const where = y < 0.3 ? 'before' : y > 0.7 ? 'after' : 'inside';
    if (drop?.target !== id || drop.where !== where) setDrop({ target: id, where });
  }

  function render(list: RevisionPage[]) {
    return (
      <ul className="tree">
        {list.map((page) => {
          const node = nodes.get(page.id)!;
          const label = `${emojiText(page.emoji)} ${page.title || 'Untitled'}`.trim();
          const dropClass = drop?.target === page.id ? ` drop-${drop.where}` : '';
          return (
            <li key={page.id}>
              <div
                className={`tree-item${page.id === currentId ? ' current' : ''}${dropClass}`}
                draggable={!!actions}
                onDragStart={(e) => {
                  e.dataTransfer.setData('text/plain', page.id);
                  e.dataTransfer.effectAllowed = 'move';
                  setDragging(page.id);
                }}
                onDragEnd={() => {
                  setDragging(undefined);
                  setDrop(undefined);
                }}
                onDragOver={(e) => onDragOver(e, page.id)}
                onDragLeave={() => setDrop((d) => (d?.target === page.id ? undefined : d))}
                onDrop={(e) => {
                  e.preventDefault();
                  if (dragging && drop) moveTo(dragging, drop);
                  setDragging(undefined);
                  setDrop(undefined);
                }}
              >
                {page.type === 'group' ? (
                  <span className="tree-group">{label}</span>
                ) : page.type === 'link' && /^https?:/.test(hrefOf(page)) ? (
                  <a href={hrefOf(page)} target="_blank" rel="noopener noreferrer">
                    {label} <span aria-hidden="true">↗</span>
                  </a>
                ) : (
                  <Link href={hrefOf(page)} aria-current={page.id === currentId ? 'page' : undefined}>
                    {label}
                  </Link>
                )}
                {actions && (
                  <details className="tree-actions">
                    <summary aria-label={`Actions for ${page.title || 'Untitled'}`}>⋯</summary>
                    {/* Choosing an action closes the menu: left open, it would cover the pages below. */}
                    <div className="menu" onClick={(e) => e.currentTarget.closest('details')?.removeAttribute('open')}>
                      {page.type !== 'link' && (
                        <>
                          <button type="button" onClick={() => actions.create(page.id)}>
                            Add page inside
                          </button>
                          <button type="button" onClick={() => setEntryForm({ type: 'link', into: page.id })}>
                            Add link inside
                          </button>
                        </>
                      )}
                      {page.type === 'link' ? (
                        <button type="button" onClick={() => setEntryForm({ type: 'relink', page })}>
                          Edit link
                        </button>
                      ) : (
                        <button type="button" onClick={() => setRenaming(page)}>
                          Rename
                        </button>
                      )}
                      <button type="button" disabled={node.index === 0} onClick={() => shift(page, -1)}>
                        Move up
                      </button>
                      <button type="button" disabled={node.index === siblingsOf(node.parent).length - 1} onClick={() => shift(page, 1)}>
                        Move down
                      </button>
                      <button type="button" className="danger" onClick={() => setDeleting(page)}>
                        Delete
                      </button>
                    </div>
                  </details>
                )}
              </div>
              {node.children.length > 0 && render(node.children)}
            </li>
          );
        })}
      </ul>
    );
  }

  return (
    <nav aria-label="Pages" className="page-tree">
      {pages.length === 0 ? <p className="muted">No pages yet.</p> : render(pages)}
      {actions && (
        <div className="tree-new">
          <button type="button" onClick={() => actions.create(null)}>
            New page
          </button>
          <button type="button" onClick={() => setEntryForm({ type: 'group' })}>
            New group
          </button>
          <button type="button" onClick={() => setEntryForm({ type: 'link', into: null })}>
            New link
          </button>
        </div>
      )}
      {entryForm && actions && (
        <EntryDialog
          form={entryForm}
          onClose={() => setEntryForm(undefined)}
          onDone={(title, url) => {
            if (entryForm.type === 'group') actions.createEntry({ type: 'group', title });
            else if (entryForm.type === 'link') actions.createEntry({ type: 'link', title, url: url!, into: entryForm.into });
            else actions.relink(entryForm.page, title, url!);
            setEntryForm(undefined);
          }}
        />
      )}
      {renaming && actions && (
        <RenameDialog
          page={renaming}
          onClose={() => setRenaming(undefined)}
          onRename={(title) => {
            actions.rename(renaming, title);
            setRenaming(undefined);
          }}
        />
      )}
      {deleting && actions && (
        <ConfirmDialog title={`Delete “${deleting.title}”?`} confirm="Delete page" onConfirm={() => actions.remove(deleting)} onClose={() => setDeleting(undefined)}>
          <p>The page and the pages inside it are deleted in this change request. Until it is merged, nothing changes for readers.</p>
        </ConfirmDialog>
      )}
    </nav>
  );
}

function RenameDialog({ page, onClose, onRename }: { page: RevisionPage; onClose: () => void; onRename: (title: string) => void }) {
  const [title, setTitle] = useState(page.title);
  return (
    <Dialog title="Rename page" onClose={onClose}>
      <form
        className="form"
        onSubmit={(e) => {
          e.preventDefault();
          if (title.trim()) onRename(title.trim());
        }}
      >
        <label htmlFor="rename-title">Page title</label>
        <input id="rename-title" required maxLength={500} value={title} onChange={(e) => setTitle(e.target.value)} autoFocus />
        <div className="actions">
          <button type="button" onClick={onClose}>
            Cancel
          </button>
          <button type="submit" className="primary">
            Rename
          </button>
        </div>
      </form>
    </Dialog>
  );
}

/** The form for a new group (its title), a new link or a link's target (title and URL). */
function EntryDialog({
  form,
  onClose,
  onDone,
}: {
  form: { type: 'group' } | { type: 'link'; into: string | null } | { type: 'relink'; page: RevisionPage };
  onClose: () => void;
  onDone: (title: string, url?: string) => void;
}) {
  const editing = form.type === 'relink' ? form.page : undefined;
  const [title, setTitle] = useState(editing?.title ?? '');
  const [url, setUrl] = useState(editing && 'href' in editing ? (editing.href ?? '') : 'https://');
  const isGroup = form.type === 'group';
  const heading = isGroup ? 'New group' : editing ? 'Edit link' : 'New link';
  return (
    <Dialog title={heading} onClose={onClose}>
      <form
        className="form"
        onSubmit={(e) => {
          e.preventDefault();
          if (!title.trim()) return;
          onDone(title.trim(), isGroup ? undefined : url.trim());
        }}
      >
        {isGroup && <p className="muted">A group is a heading of the table of contents: pages go inside it.</p>}
        <label htmlFor="entry-title">{isGroup ? 'Group title' : 'Link title'}</label>
        <input id="entry-title" required maxLength={500} value={title} onChange={(e) => setTitle(e.target.value)} autoFocus />
        {!isGroup && (
          <>
            <label htmlFor="entry-url">URL</label>
            <input id="entry-url" type="url" required maxLength={2048} pattern="(https?://|mailto:).+" value={url} onChange={(e) => setUrl(e.target.value)} />
          </>
        )}
        <div className="actions">
          <button type="button" onClick={onClose}>
            Cancel
          </button>
          <button type="submit" className="primary">
            {editing ? 'Save link' : isGroup ? 'Create group' : 'Create link'}
          </button>
        </div>
      </form>
    </Dialog>
  );
}
