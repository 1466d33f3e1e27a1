import { useQueryClient } from '@tanstack/react-query';
import { useId, useState, type FormEvent } from 'react';
import { useLocation } from 'wouter';
import type { Space } from '@gitbook/api';
import { api, errorText } from '../api/client.ts';
import { keys } from '../api/queries.ts';
import { ConfirmDialog } from '../components/Dialog.tsx';
import { appHref } from '../paths.ts';

/**
 * A space's settings, for its admins: its title, and deleting it. What the API refuses shows as
 * the API says it.
 */
export default function SpaceSettings({ space }: { space: Space }) {
  const id = useId();
  const queryClient = useQueryClient();
  const [, navigate] = useLocation();
  const [title, setTitle] = useState(space.title);
  const [message, setMessage] = useState<{ kind: 'error' | 'ok'; text: string }>();
  const [deleting, setDeleting] = useState(false);

  async function rename(event: FormEvent) {
    event.preventDefault();
    setMessage(undefined);
    try {
      await api.patch(`/spaces/${space.id}`, { title: title.trim() });
      await queryClient.invalidateQueries({ queryKey: keys.space(space.id) });
      await queryClient.invalidateQueries({ queryKey: keys.orgSpaces(space.organization) });
      setMessage({ kind: 'ok', text: 'Saved.' });
    } catch (err) {
      setMessage({ kind: 'error', text: errorText(err) });
    }
  }

  async function remove() {
    try {
      await api.delete(`/spaces/${space.id}`);
      await queryClient.invalidateQueries({ queryKey: keys.orgSpaces(space.organization) });
      navigate(appHref(`/o/${space.organization}`));
    } catch (err) {
      setMessage({ kind: 'error', text: errorText(err) });
    }
  }

  if (!space.permissions.admin) {
    return (
      <main className="content">
        <h1>Settings</h1>
        <p className="muted">Only the space's admins change its settings.</p>
      </main>
    );
  }
  return (
    <main className="content">
      <h1>Settings</h1>
      <form className="form narrow-form" onSubmit={rename}>
        <label htmlFor={`${id}-title`}>Space title</label>
        <input id={`${id}-title`} required maxLength={100} value={title} onChange={(e) => setTitle(e.target.value)} />
        <button type="submit" className="primary">
          Save
        </button>
      </form>
      {message && (
        <p role={message.kind === 'error' ? 'alert' : 'status'} className={message.kind === 'error' ? 'error' : 'ok'}>
          {message.text}
        </p>
      )}
      <section aria-labelledby={`${id}-danger`} className="danger-zone">
        <h2 id={`${id}-danger`}>Delete this space</h2>
        <p>Gone for everyone at once, with its pages, change requests and comments. Until it is purged (after 7 days by default: SPACE_RETENTION_MS), the API can restore it (restoreSpace).</p>
        <button type="button" className="danger" onClick={() => setDeleting(true)}>
          Delete space
        </button>
      </section>
      {deleting && (
        <ConfirmDialog title={`Delete “${space.title || 'Untitled'}”?`} confirm="Delete space" danger onConfirm={() => void remove()} onClose={() => setDeleting(false)}>
          <p>Everyone loses it at once, with its pages, change requests and comments.</p>
        </ConfirmDialog>
      )}
    </main>
  );
}
