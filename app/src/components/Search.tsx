import { useQuery } from '@tanstack/react-query';
import { useEffect, useId, useState } from 'react';
import { Link } from 'wouter';
import type { SearchPageResult, SearchSpaceResult } from '@gitbook/api';
import { api } from '../api/client.ts';
import { appHref } from '../paths.ts';

/** The app path of an absolute `urls.app` (…/app/s/x → /s/x), for the app's own router. */
export function appPath(url: string): string {
  try {
    const path = new URL(url, window.location.origin).pathname;
    return path.startsWith('/app') ? path.slice('/app'.length) || '/' : path;
  } catch {
    return '/';
  }
}

function useDebounced<T>(value: T, ms: number): T {
  const [debounced, setDebounced] = useState(value);
  useEffect(() => {
    const timer = setTimeout(() => setDebounced(value), ms);
    return () => clearTimeout(timer);
  }, [value, ms]);
  return debounced;
}

/**
 * Search across a space (its pages) or an organization (pages of all its spaces), with the API's
 * search: results show as the person types.
 */
export function Search({ orgId, spaceId }: { orgId?: string; spaceId?: string }) {
  const [query, setQuery] = useState('');
  const debounced = useDebounced(query.trim(), 250);
  const id = useId();
  const results = useQuery({
    queryKey: ['search', orgId ?? '', spaceId ?? '', debounced],
    enabled: debounced.length > 0,
    queryFn: async () => {
      if (spaceId) {
        const found = await api.get<{ items: SearchPageResult[] }>(`/spaces/${spaceId}/search`, { query: debounced, limit: 20 });
        return [{ id: spaceId, title: '', pages: found.items }];
      }
      const found = await api.get<{ items: SearchSpaceResult[] }>(`/orgs/${orgId}/search`, { query: debounced, limit: 20 });
      return found.items;
    },
  });
  const groups = results.data ?? [];
  const count = groups.reduce((n, g) => n + g.pages.length, 0);
  return (
    <div role="search" className="search">
      <label htmlFor={`${id}-q`}>{spaceId ? 'Search this space' : 'Search the organization'}</label>
      <input id={`${id}-q`} type="search" value={query} onChange={(e) => setQuery(e.target.value)} placeholder="Search…" />
      {debounced && results.isSuccess && (
        <div className="search-results" aria-live="polite">
          <p className="muted">{count === 0 ? 'No results' : `${count} result${count === 1 ? '' : 's'}`}</p>
          {groups.map((group) => (
            <section key={group.id} aria-label={group.title || 'Results'}>
              {group.title && <h3>{group.title}</h3>}
              <ul className="nav-list">
                {group.pages.map((p) => (
                  <li key={p.id}>
                    <Link href={appHref(appPath(p.urls.app))}>{p.title}</Link>
                  </li>
                ))}
              </ul>
            </section>
          ))}
        </div>
      )}
    </div>
  );
}
