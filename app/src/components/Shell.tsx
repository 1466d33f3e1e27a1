import { useState, type ReactNode } from 'react';
import { Link, useLocation } from 'wouter';
import { useOrganizations, useOrgCollections, useOrgSpaces } from '../api/queries.ts';
import { useSession } from '../session.tsx';
import { emojiText } from '../format.ts';
import { NewCollectionDialog, NewOrganizationDialog, NewSpaceDialog } from './NewDialogs.tsx';
import { appHref } from '../paths.ts';

/** The organization's navigation: its spaces and collections, a switcher between organizations, and the account. */
export function Sidebar({ orgId, current, children }: { orgId: string; current?: string; children?: ReactNode }) {
  const { session, signOut } = useSession();
  const organizations = useOrganizations();
  const spaces = useOrgSpaces(orgId);
  const collections = useOrgCollections(orgId);
  const [location, navigate] = useLocation();
  const [creating, setCreating] = useState<'space' | 'collection' | 'organization'>();
  // On a narrow screen the sidebar is folded away behind "Menu" (styles.css hides the button on
  // wide screens); following a link in it folds it again.
  const [open, setOpen] = useState(false);
  const topSpaces = (spaces.data ?? []).filter((s) => !s.parent);

  return (
    <>
      <button type="button" className="menu-toggle" aria-expanded={open} aria-controls="sidebar" onClick={() => setOpen(!open)}>
        Menu
      </button>
      <aside
        id="sidebar"
        className={open ? 'sidebar open' : 'sidebar'}
        onClick={(event) => {
          if ((event.target as HTMLElement).closest('a')) setOpen(false);
        }}
      >
        <nav aria-label="Organization">
          <label className="visually-hidden" htmlFor="org-switcher">
            Organization
          </label>
          <select id="org-switcher" value={orgId} onChange={(e) => navigate(appHref(`/o/${e.target.value}`))}>
            {(organizations.data ?? []).map((o) => (
              <option key={o.id} value={o.id}>
                {o.title}
              </option>
            ))}
          </select>
          <ul className="nav-list">
            <li>
              <Link href={appHref(`/o/${orgId}`)} aria-current={location === `/o/${orgId}` ? 'page' : undefined}>
                Overview
              </Link>
            </li>
            <li>
              <Link href={appHref(`/o/${orgId}/members`)} aria-current={location === `/o/${orgId}/members` ? 'page' : undefined}>
                Members
              </Link>
            </li>
          </ul>
          <h2 className="sidebar-heading">Spaces</h2>
          <ul className="nav-list">
            {topSpaces.map((s) => (
              <li key={s.id}>
                <Link href={appHref(`/s/${s.id}`)} aria-current={current === s.id ? 'page' : undefined}>
                  {s.emoji ? `${emojiText(s.emoji)} ` : ''}
                  {s.title || 'Untitled'}
                </Link>
              </li>
            ))}
          </ul>
          <button type="button" onClick={() => setCreating('space')}>
            New space
          </button>
          <h2 className="sidebar-heading">Collections</h2>
          <ul className="nav-list">
            {(collections.data ?? [])
              .filter((c) => !c.parent)
              .map((c) => (
                <li key={c.id}>
                  <Link href={appHref(`/c/${c.id}`)} aria-current={current === c.id ? 'page' : undefined}>
                    {c.title}
                  </Link>
                </li>
              ))}
          </ul>
          <button type="button" onClick={() => setCreating('collection')}>
            New collection
          </button>
        </nav>
        {children}
        <div className="account">
          <span title={session?.user.email}>{session?.user.displayName}</span>
          <button type="button" onClick={() => setCreating('organization')}>
            New organization
          </button>
          <button type="button" onClick={() => signOut().then(() => navigate(appHref('/sign-in')))}>
            Sign out
          </button>
        </div>
        {creating === 'space' && <NewSpaceDialog orgId={orgId} onClose={() => setCreating(undefined)} />}
        {creating === 'collection' && <NewCollectionDialog orgId={orgId} onClose={() => setCreating(undefined)} />}
        {creating === 'organization' && <NewOrganizationDialog onClose={() => setCreating(undefined)} />}
      </aside>
    </>
  );
}
