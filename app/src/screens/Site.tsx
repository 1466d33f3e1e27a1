import { useQuery, useQueryClient } from '@tanstack/react-query';
import { useState } from 'react';
import { Link } from 'wouter';
import type { SiteSpace } from '@gitbook/api';
import { api, errorText, listAll } from '../api/client.ts';
import { keys, useSite, useTitle } from '../api/queries.ts';
import { Sidebar } from '../components/Shell.tsx';
import { appHref } from '../paths.ts';
import NotFound from './NotFound.tsx';

/** A site: whether it is published and where, its spaces, publish and unpublish. Customization stays in the API. */
export default function Site({ orgId, siteId }: { orgId: string; siteId: string }) {
  const site = useSite(orgId, siteId);
  const spaces = useQuery({ queryKey: [...keys.site(siteId), 'spaces'], queryFn: () => listAll<SiteSpace>(`/orgs/${orgId}/sites/${siteId}/site-spaces`) });
  const queryClient = useQueryClient();
  const [error, setError] = useState<string>();
  useTitle(site.data?.title);
  if (site.isError) return <NotFound />;
  if (!site.data) return <p className="loading" role="status">Loading…</p>;
  const s = site.data;
  const published = !!s.urls.published;

  async function toggle() {
    setError(undefined);
    try {
      await api.post(`/orgs/${orgId}/sites/${siteId}/${published ? 'unpublish' : 'publish'}`);
      await queryClient.invalidateQueries({ queryKey: keys.site(siteId) });
    } catch (err) {
      setError(errorText(err));
    }
  }

  return (
    <div className="layout">
      <Sidebar orgId={orgId} />
      <main className="content">
        <h1>{s.title}</h1>
        <p>
          {published ? (
            <>
              Published at{' '}
              <a href={s.urls.published} target="_blank" rel="noopener noreferrer">
                {s.urls.published}
              </a>
            </>
          ) : (
            'Not published.'
          )}{' '}
          Visibility: {s.visibility}.
        </p>
        <div className="toolbar">
          {published && (
            <a className="button" href={s.urls.published} target="_blank" rel="noopener noreferrer">
              Open published site
            </a>
          )}
          <button type="button" className={published ? '' : 'primary'} onClick={() => void toggle()}>
            {published ? 'Unpublish' : 'Publish'}
          </button>
        </div>
        {error && <p role="alert" className="error">{error}</p>}
        <h2>Spaces</h2>
        <ul>
          {(spaces.data ?? []).map((ss) => (
            <li key={ss.id}>
              <Link href={appHref(`/s/${ss.space.id}`)}>{ss.space.title || 'Untitled'}</Link>
            </li>
          ))}
        </ul>
      </main>
    </div>
  );
}
