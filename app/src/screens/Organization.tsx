import { Link } from 'wouter';
import { useOrganization, useOrgSites, useOrgSpaces, useTitle } from '../api/queries.ts';
import { Search } from '../components/Search.tsx';
import { Sidebar } from '../components/Shell.tsx';
import { emojiText, timeAgo } from '../format.ts';
import NotFound from './NotFound.tsx';

/** An organization: its spaces and sites, and search across them. */
export default function Organization({ orgId }: { orgId: string }) {
  const org = useOrganization(orgId);
  const spaces = useOrgSpaces(orgId);
  const sites = useOrgSites(orgId);
  useTitle(org.data?.title);
  if (org.isError) return <NotFound />;
  return (
    <div className="layout">
      <Sidebar orgId={orgId} />
      <main className="content">
        <h1>{org.data?.title ?? '…'}</h1>
        <Search orgId={orgId} />
        <section aria-labelledby="spaces-heading">
          <h2 id="spaces-heading">Spaces</h2>
          {spaces.data && spaces.data.length === 0 && <p className="muted">No spaces yet: create one with “New space”.</p>}
          <ul className="cards">
            {(spaces.data ?? []).map((space) => (
              <li key={space.id} className="card">
                <Link href={`/s/${space.id}`}>
                  {emojiText(space.emoji)} {space.title || 'Untitled'}
                </Link>
                <p className="muted">Updated {timeAgo(space.updatedAt)}</p>
              </li>
            ))}
          </ul>
        </section>
        {(sites.data ?? []).length > 0 && (
          <section aria-labelledby="sites-heading">
            <h2 id="sites-heading">Sites</h2>
            <ul className="cards">
              {(sites.data ?? []).map((site) => (
                <li key={site.id} className="card">
                  <Link href={`/o/${orgId}/sites/${site.id}`}>{site.title}</Link>
                  <p className="muted">{site.urls.published ? 'Published' : 'Not published'}</p>
                </li>
              ))}
            </ul>
          </section>
        )}
      </main>
    </div>
  );
}
