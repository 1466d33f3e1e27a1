import { useQuery, useQueryClient } from '@tanstack/react-query';
import { useId, useState, type FormEvent } from 'react';
import { api, errorText, listAll } from '../api/client.ts';
import { timeAgo } from '../format.ts';

interface CommentItem {
  id: string;
  body: { markdown?: string };
  postedBy: { id: string; displayName: string };
  postedAt: string;
  status?: 'open' | 'resolved';
  resolvedBy?: { displayName: string };
  replies?: number;
}

/**
 * A thread of comments: a change request's (`path` …/change-requests/N/comments) or a space's
 * (…/comments), all of them or those of one page (`page`). Everyone who may comment posts and
 * resolves (the API decides: `canComment` only hides the form). Bodies are shown as text, never
 * read as HTML.
 */
export function Comments({ path, page, canComment, queryKey, heading = 'Comments' }: { path: string; page?: string; canComment: boolean; queryKey: readonly unknown[]; heading?: string }) {
  const key = [...queryKey, 'comments', page ?? 'all'];
  const comments = useQuery({ queryKey: key, queryFn: () => listAll<CommentItem>(path, { format: 'markdown', ...(page ? { targetPage: page } : {}) }) });
  const [text, setText] = useState('');
  const [error, setError] = useState<string>();
  const id = useId();
  const queryClient = useQueryClient();

  async function run(call: () => Promise<unknown>) {
    try {
      await call();
      setError(undefined);
      await queryClient.invalidateQueries({ queryKey: key });
      return true;
    } catch (err) {
      setError(errorText(err));
      return false;
    }
  }

  async function submit(event: FormEvent) {
    event.preventDefault();
    if (!text.trim()) return;
    if (await run(() => api.post(path, { body: { markdown: text }, ...(page ? { page } : {}) }))) setText('');
  }

  const items = comments.data ?? [];
  return (
    <section aria-labelledby={`${id}-heading`} className="comments-section">
      <h2 id={`${id}-heading`}>{heading}</h2>
      {comments.data && items.length === 0 && <p className="muted">No comments yet.</p>}
      <ul className="comments">
        {items.map((c) => (
          <li key={c.id} className={c.status === 'resolved' ? 'resolved' : undefined}>
            <p className="muted">
              {c.postedBy.displayName}, {timeAgo(c.postedAt)}
              {c.status === 'resolved' && <span className="badge">Resolved{c.resolvedBy ? ` by ${c.resolvedBy.displayName}` : ''}</span>}
              {!!c.replies && ` · ${c.replies} ${c.replies === 1 ? 'reply' : 'replies'}`}
            </p>
            <p className="comment-body">{c.body.markdown}</p>
            {canComment && (
              <button type="button" className="link-button" onClick={() => void run(() => api.put(`${path}/${c.id}`, { resolved: c.status !== 'resolved' }))}>
                {c.status === 'resolved' ? 'Reopen' : 'Resolve'}
              </button>
            )}
          </li>
        ))}
      </ul>
      {error && (
        <p role="alert" className="error">
          {error}
        </p>
      )}
      {canComment && (
        <form className="form" onSubmit={submit}>
          <label htmlFor={`${id}-comment`}>Comment</label>
          <textarea id={`${id}-comment`} rows={3} value={text} onChange={(e) => setText(e.target.value)} />
          <button type="submit">Post comment</button>
        </form>
      )}
    </section>
  );
}
