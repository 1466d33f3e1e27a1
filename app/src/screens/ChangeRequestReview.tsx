import { useQuery, useQueryClient } from '@tanstack/react-query';
import { useId, useState, type FormEvent } from 'react';
import { Link } from 'wouter';
import type { ChangeRequest, ChangeRequestReview as Review, JSONDocument, Space } from '@gitbook/api';
import { api, ApiError, errorText, listAll, type ApiConflict } from '../api/client.ts';
import { keys, useChangeRequest, useFiles } from '../api/queries.ts';
import { Comments } from '../components/Comments.tsx';
import { DiffView } from '../editor/DiffView.tsx';
import { timeAgo } from '../format.ts';
import { useSession } from '../session.tsx';

interface Changes {
  changes: Array<{ type: string; page?: { id: string; title: string; path?: string; type?: string }; file?: { id: string; name: string } }>;
  more?: number;
  conflicts: Array<{ page: string; title: string; reason: string }>;
}

interface Member {
  user: { id: string; displayName: string; email?: string };
}

const CHANGE_LABELS: Record<string, string> = {
  page_created: 'Added',
  page_edited: 'Edited',
  page_deleted: 'Deleted',
  page_moved: 'Moved',
  file_created: 'File added',
  file_edited: 'File changed',
  file_deleted: 'File deleted',
  variables_edited: 'Variables changed',
  reusable_content_created: 'Reusable content added',
  reusable_content_edited: 'Reusable content changed',
  reusable_content_deleted: 'Reusable content deleted',
};

/**
 * A change request's review: what it changes (each page's diff, rendered), its reviews and
 * comments, and merging, with the merge rules and conflicts the API enforces shown as the API
 * says them. Buttons show only to those the API lets act; the API refuses anyway.
 */
export default function ChangeRequestReview({ space, number }: { space: Space; number: number }) {
  const cr = useChangeRequest(space.id, number);
  const queryClient = useQueryClient();
  const base = `/spaces/${space.id}/change-requests/${number}`;
  const changes = useQuery({ queryKey: [...keys.changeRequest(space.id, number), 'changes'], queryFn: () => api.get<Changes>(`${base}/changes`) });
  const reviews = useQuery({ queryKey: [...keys.changeRequest(space.id, number), 'reviews'], queryFn: () => listAll<Review>(`${base}/reviews`) });
  const [message, setMessage] = useState<{ kind: 'error' | 'ok'; text: string }>();
  const [busy, setBusy] = useState(false);
  // The pages a refused merge named: they conflict with the main content until the change request is updated.
  const [refused, setRefused] = useState<ApiConflict[]>([]);
  const { session } = useSession();

  if (cr.isError) return <main className="content"><p role="alert" className="error">{cr.error.message}</p></main>;
  if (!cr.data) return <p className="loading" role="status">Loading…</p>;
  const c = cr.data;
  const active = c.status === 'open' || c.status === 'draft';
  const mine = c.createdBy.id === session?.user.id;

  async function act(run: () => Promise<unknown>, done: string) {
    setBusy(true);
    setMessage(undefined);
    try {
      await run();
      setRefused([]);
      setMessage({ kind: 'ok', text: done });
      await queryClient.invalidateQueries({ queryKey: keys.changeRequest(space.id, number) });
      await queryClient.invalidateQueries({ queryKey: keys.space(space.id) });
      await queryClient.invalidateQueries({ queryKey: ['space', space.id, 'pages'] });
    } catch (err) {
      setMessage({ kind: 'error', text: errorText(err) });
      if (err instanceof ApiError && err.conflicts.length) setRefused(err.conflicts);
      await queryClient.invalidateQueries({ queryKey: [...keys.changeRequest(space.id, number), 'changes'] });
    } finally {
      setBusy(false);
    }
  }

  const marked = changes.data?.conflicts ?? [];
  // Conflicts an update marked in the pages come first; otherwise those a merge was refused for.
  const conflicts = marked.length ? marked : refused;
  const mustUpdate = marked.length === 0 && refused.length > 0;
  return (
    <main className="content review">
      <header>
        <Subject space={space} cr={c} path={base} canRename={active && space.permissions.edit} />
        <p className="muted">
          {c.status} · opened by {c.createdBy.displayName} {timeAgo(c.createdAt)}
          {c.mergedBy ? ` · merged by ${c.mergedBy.displayName}` : ''}
        </p>
      </header>
      <div className="toolbar">
        {active && space.permissions.edit && <Link href={`/~/changes/${number}/`}>Edit pages</Link>}
        {active && c.status === 'draft' && mine && (
          <button type="button" disabled={busy} onClick={() => act(() => api.patch(base, { status: 'open' }), 'Ready for review.')}>
            Ready for review
          </button>
        )}
        {active && space.permissions.review && !mine && (
          <>
            <button type="button" disabled={busy} onClick={() => act(() => api.post(`${base}/reviews`, { status: 'approved' }), 'You approved this change request.')}>
              Approve
            </button>
            <button type="button" disabled={busy} onClick={() => act(() => api.post(`${base}/reviews`, { status: 'changes-requested' }), 'You requested changes.')}>
              Request changes
            </button>
          </>
        )}
        {active && space.permissions.merge && (
          <button type="button" className="primary" disabled={busy} onClick={() => act(() => api.post(`${base}/merge`), 'Merged.')}>
            Merge
          </button>
        )}
        {/* Set aside without merging, and back: its content stays as it is. */}
        {active && space.permissions.edit && (
          <button type="button" disabled={busy} onClick={() => act(() => api.patch(base, { status: 'archived' }), 'Archived: reopen it to go on.')}>
            Archive
          </button>
        )}
        {c.status === 'archived' && space.permissions.edit && (
          <button type="button" disabled={busy} onClick={() => act(() => api.patch(base, { status: 'open' }), 'Reopened.')}>
            Reopen
          </button>
        )}
      </div>
      {message && (
        <p role={message.kind === 'error' ? 'alert' : 'status'} className={message.kind === 'error' ? 'error' : 'ok'}>
          {message.text}
        </p>
      )}
      {conflicts.length > 0 && (
        <section className="conflicts" aria-labelledby="conflicts-heading">
          <h2 id="conflicts-heading">Conflicts to resolve</h2>
          {mustUpdate ? (
            <p>These pages changed in the main content too. Update this change request from the main content: both versions show in each page, to edit into what should stay; then merge.</p>
          ) : (
            <p>These pages changed in the main content too. Edit them to keep what should stay, then merge.</p>
          )}
          <ul>
            {conflicts.map((conflict) => (
              <li key={`${conflict.page}:${conflict.title}`}>
                {conflict.page ? <Link href={`/~/changes/${number}/${pathOf(changes.data, conflict.page)}`}>{conflict.title}</Link> : conflict.title}: {conflict.reason}
              </li>
            ))}
          </ul>
          {mustUpdate && active && space.permissions.edit && (
            <button type="button" disabled={busy} onClick={() => act(() => api.post(`${base}/update`), 'Updated from the main content: resolve the conflicts in the pages listed.')}>
              Update from main content
            </button>
          )}
        </section>
      )}
      {active && space.permissions.edit && <RequestReviewers space={space} cr={c} />}
      <Reviews reviews={reviews.data ?? []} />
      <section aria-labelledby="changes-heading">
        <h2 id="changes-heading">Changes</h2>
        {changes.data && changes.data.changes.length === 0 && <p className="muted">No changes yet.</p>}
        {(changes.data?.changes ?? []).map((change, i) => (
          <ChangeItem key={`${change.type}:${change.page?.id ?? change.file?.id ?? i}`} space={space} cr={c} change={change} />
        ))}
      </section>
      <Comments path={`${base}/comments`} canComment={space.permissions.comment} queryKey={keys.changeRequest(space.id, number)} />
    </main>
  );
}

function pathOf(changes: Changes | undefined, pageId: string): string {
  return changes?.changes.find((c) => c.page?.id === pageId)?.page?.path ?? '';
}

function ChangeItem({ space, cr, change }: { space: Space; cr: ChangeRequest; change: Changes['changes'][number] }) {
  const label = CHANGE_LABELS[change.type] ?? change.type;
  const page = change.page;
  const isDocument = page && (page.type === undefined || page.type === 'document');
  const baseRevision = cr.revisionMergedAncestor ?? cr.revisionInitial;
  const docs = useQuery({
    queryKey: ['diff', space.id, cr.number, cr.revision, page?.id],
    enabled: !!isDocument && change.type !== 'page_moved',
    queryFn: async () => {
      const read = async (path: string) => {
        try {
          return (await api.get<{ document?: JSONDocument }>(path, { format: 'document' })).document ?? null;
        } catch (err) {
          if (err instanceof ApiError && err.status === 404) return null;
          throw err;
        }
      };
      const [before, after] = await Promise.all([
        change.type === 'page_created' ? null : read(`/spaces/${space.id}/revisions/${baseRevision}/page/${page!.id}`),
        change.type === 'page_deleted' ? null : read(`/spaces/${space.id}/change-requests/${cr.number}/content/page/${page!.id}`),
      ]);
      return { before, after };
    },
  });
  const files = useFiles({ spaceId: space.id, changeRequest: cr.number });
  return (
    <article className="change" aria-label={`${label}: ${page?.title ?? change.file?.name ?? ''}`}>
      <h3>
        <span className={`badge badge-${change.type}`}>{label}</span> {page ? page.title : (change.file?.name ?? '')}
      </h3>
      {docs.isError && <p role="alert" className="error">{docs.error.message}</p>}
      {docs.data && <DiffView before={docs.data.before} after={docs.data.after} fileURL={(id) => files.data?.get(id)?.downloadURL} />}
    </article>
  );
}

function Reviews({ reviews }: { reviews: Review[] }) {
  if (reviews.length === 0) return null;
  return (
    <section aria-labelledby="reviews-heading">
      <h2 id="reviews-heading">Reviews</h2>
      <ul>
        {reviews.map((r) => (
          <li key={r.id}>
            {r.reviewer.displayName}: {r.status === 'approved' ? 'approved' : 'requested changes'}
            {r.outdated ? ' (before the latest changes)' : ''}
          </li>
        ))}
      </ul>
    </section>
  );
}

function RequestReviewers({ space, cr }: { space: Space; cr: ChangeRequest }) {
  const members = useQuery({ queryKey: ['organization', space.organization, 'members'], queryFn: () => listAll<Member>(`/orgs/${space.organization}/members`) });
  const [user, setUser] = useState('');
  const [note, setNote] = useState<string>();
  const id = useId();
  const queryClient = useQueryClient();
  const others = (members.data ?? []).filter((m) => m.user.id !== cr.createdBy.id);
  if (others.length === 0) return null;
  async function submit(event: FormEvent) {
    event.preventDefault();
    if (!user) return;
    try {
      await api.post(`/spaces/${space.id}/change-requests/${cr.number}/requested-reviewers`, { users: [user] });
      setNote('Review requested.');
      await queryClient.invalidateQueries({ queryKey: keys.changeRequest(space.id, cr.number) });
    } catch (err) {
      setNote(errorText(err));
    }
  }
  return (
    <form className="inline-form" onSubmit={submit}>
      <label htmlFor={`${id}-reviewer`}>Reviewer</label>
      <select id={`${id}-reviewer`} value={user} onChange={(e) => setUser(e.target.value)}>
        <option value="">Choose a member</option>
        {others.map((m) => (
          <option key={m.user.id} value={m.user.id}>
            {m.user.displayName}
          </option>
        ))}
      </select>
      <button type="submit">Request review</button>
      {note && <span role="status">{note}</span>}
    </form>
  );
}

/**
 * The change request's subject, as its heading; those who may edit it rename it in place (a change
 * request opened by "New page" or "Edit" starts with a subject the app chose).
 */
function Subject({ space, cr, path, canRename }: { space: Space; cr: ChangeRequest; path: string; canRename: boolean }) {
  const [editing, setEditing] = useState(false);
  const [subject, setSubject] = useState('');
  const [error, setError] = useState<string>();
  const [saving, setSaving] = useState(false);
  const queryClient = useQueryClient();
  const id = useId();

  if (!editing) {
    return (
      <div className="cr-subject">
        <h1>
          #{cr.number} {cr.subject || 'Untitled'}
        </h1>
        {canRename && (
          <button
            type="button"
            onClick={() => {
              setSubject(cr.subject ?? '');
              setError(undefined);
              setEditing(true);
            }}
          >
            Rename
          </button>
        )}
      </div>
    );
  }

  async function save(event: FormEvent) {
    event.preventDefault();
    setSaving(true);
    try {
      await api.patch(path, { subject: subject.trim() });
      await queryClient.invalidateQueries({ queryKey: keys.changeRequest(space.id, cr.number) });
      await queryClient.invalidateQueries({ queryKey: keys.changeRequests(space.id) });
      setEditing(false);
    } catch (err) {
      setError(errorText(err));
    } finally {
      setSaving(false);
    }
  }

  return (
    <form className="cr-subject-form" onSubmit={save}>
      <label htmlFor={id}>Subject of change request #{cr.number}</label>
      <input
        id={id}
        required
        maxLength={100}
        value={subject}
        onChange={(e) => setSubject(e.target.value)}
        onKeyDown={(e) => e.key === 'Escape' && setEditing(false)}
        autoFocus
      />
      <button type="submit" className="primary" disabled={saving}>
        Save
      </button>
      <button type="button" onClick={() => setEditing(false)}>
        Cancel
      </button>
      {error && (
        <p role="alert" className="error">
          {error}
        </p>
      )}
    </form>
  );
}
