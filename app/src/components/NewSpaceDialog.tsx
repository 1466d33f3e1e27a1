import { useQueryClient } from '@tanstack/react-query';
import { useId, useState, type FormEvent } from 'react';
import { useLocation } from 'wouter';
import type { Space } from '@gitbook/api';
import { api, errorText } from '../api/client.ts';
import { keys } from '../api/queries.ts';
import { Dialog } from './Dialog.tsx';
import { appHref } from '../paths.ts';

export function NewSpaceDialog({ orgId, onClose }: { orgId: string; onClose: () => void }) {
  const [title, setTitle] = useState('');
  const [error, setError] = useState<string>();
  const id = useId();
  const queryClient = useQueryClient();
  const [, navigate] = useLocation();

  async function submit(event: FormEvent) {
    event.preventDefault();
    try {
      const space = await api.post<Space>(`/orgs/${orgId}/spaces`, { title });
      await queryClient.invalidateQueries({ queryKey: keys.orgSpaces(orgId) });
      onClose();
      navigate(appHref(`/s/${space.id}`));
    } catch (err) {
      setError(errorText(err));
    }
  }

  return (
    <Dialog title="New space" onClose={onClose}>
      <form className="form" onSubmit={submit}>
        <label htmlFor={`${id}-title`}>Space title</label>
        <input id={`${id}-title`} required maxLength={100} value={title} onChange={(e) => setTitle(e.target.value)} autoFocus />
        {error && (
          <p role="alert" className="error">
            {error}
          </p>
        )}
        <div className="actions">
          <button type="button" onClick={onClose}>
            Cancel
          </button>
          <button type="submit" className="primary">
            Create space
          </button>
        </div>
      </form>
    </Dialog>
  );
}
