import { useQueryClient } from '@tanstack/react-query';
import { useId, useState, type FormEvent } from 'react';
import { Link, useLocation } from 'wouter';
import type { Site, Space } from '@gitbook/api';
import { api, errorText } from '../api/client.ts';
import { keys, useOrgSites } from '../api/queries.ts';
import { appHref } from '../paths.ts';
import { Dialog } from './Dialog.tsx';

/** The space's site when it has one; otherwise "Publish", which makes a site of the space and publishes it. */
export function PublishButton({ space }: { space: Space }) {
  const sites = useOrgSites(space.organization, space.id);
  const [open, setOpen] = useState(false);
  const site = sites.data?.[0];
  if (sites.isPending) return null;
  if (site) return <Link href={appHref(`/o/${space.organization}/sites/${site.id}`)}>Site</Link>;
  return (
    <>
      <button type="button" onClick={() => setOpen(true)}>
        Publish
      </button>
      {open && <PublishDialog space={space} onClose={() => setOpen(false)} />}
    </>
  );
}

function PublishDialog({ space, onClose }: { space: Space; onClose: () => void }) {
  const [title, setTitle] = useState(space.title || 'Documentation');
  const [visibility, setVisibility] = useState('public');
  const [error, setError] = useState<string>();
  const [busy, setBusy] = useState(false);
  const id = useId();
  const queryClient = useQueryClient();
  const [, navigate] = useLocation();

  async function submit(event: FormEvent) {
    event.preventDefault();
    setBusy(true);
    try {
      const site = await api.post<Site>(`/orgs/${space.organization}/sites`, { title, visibility, spaces: [space.id] });
      await api.post<Site>(`/orgs/${space.organization}/sites/${site.id}/publish`);
      await queryClient.invalidateQueries({ queryKey: keys.orgSites(space.organization) });
      onClose();
      navigate(appHref(`/o/${space.organization}/sites/${site.id}`));
    } catch (err) {
      setError(errorText(err));
      setBusy(false);
    }
  }

  return (
    <Dialog title="Publish this space" onClose={onClose}>
      <form className="form" onSubmit={submit}>
        <label htmlFor={`${id}-title`}>Site title</label>
        <input id={`${id}-title`} required maxLength={128} value={title} onChange={(e) => setTitle(e.target.value)} />
        <label htmlFor={`${id}-visibility`}>Who can read it</label>
        <select id={`${id}-visibility`} value={visibility} onChange={(e) => setVisibility(e.target.value)}>
          <option value="public">Everyone (public)</option>
          <option value="unlisted">Anyone with the link (unlisted)</option>
          <option value="share-link">Only with a share link</option>
        </select>
        {error && <p role="alert" className="error">{error}</p>}
        <div className="actions">
          <button type="button" onClick={onClose}>
            Cancel
          </button>
          <button type="submit" className="primary" disabled={busy}>
            Publish site
          </button>
        </div>
      </form>
    </Dialog>
  );
}
