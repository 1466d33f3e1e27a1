/**
 * The app's reads, as TanStack Query hooks over the /v1 API, and the keys that writes invalidate.
 * A change request is named by its number (the API takes a number where it takes an id).
 */
import { type QueryClient, useQuery } from '@tanstack/react-query';
import { useEffect } from 'react';
import type { ChangeRequest, Collection, JSONDocument, Organization, RevisionFile, RevisionPage, RevisionPageDocument, Site, Space } from '@gitbook/api';
import { api, listAll } from './client.ts';

/** Where a space's content is read: its current revision, or a change request (by number). */
export interface ContentScope {
  spaceId: string;
  changeRequest?: number;
  /** A past revision, read only. */
  revision?: string;
}

export const contentPath = ({ spaceId, changeRequest, revision }: ContentScope) =>
  changeRequest !== undefined
    ? `/spaces/${spaceId}/change-requests/${changeRequest}/content`
    : revision !== undefined
      ? `/spaces/${spaceId}/revisions/${revision}`
      : `/spaces/${spaceId}/content`;

const scopeKey = (scope: ContentScope) => (scope.changeRequest !== undefined ? `cr-${scope.changeRequest}` : scope.revision ? `rev-${scope.revision}` : 'main');

export const keys = {
  organizations: ['organizations'] as const,
  organization: (id: string) => ['organization', id] as const,
  orgSpaces: (id: string) => ['organization', id, 'spaces'] as const,
  orgCollections: (id: string) => ['organization', id, 'collections'] as const,
  orgSites: (id: string) => ['organization', id, 'sites'] as const,
  collection: (id: string) => ['collection', id] as const,
  collectionSpaces: (id: string) => ['collection', id, 'spaces'] as const,
  space: (id: string) => ['space', id] as const,
  pages: (scope: ContentScope) => ['space', scope.spaceId, 'pages', scopeKey(scope)] as const,
  page: (scope: ContentScope, pageId: string) => ['space', scope.spaceId, 'page', scopeKey(scope), pageId] as const,
  files: (scope: ContentScope) => ['space', scope.spaceId, 'files', scopeKey(scope)] as const,
  changeRequests: (spaceId: string) => ['space', spaceId, 'change-requests'] as const,
  changeRequest: (spaceId: string, number: number) => ['space', spaceId, 'change-request', number] as const,
  site: (id: string) => ['site', id] as const,
};

export const useOrganizations = () => useQuery({ queryKey: keys.organizations, queryFn: () => listAll<Organization>('/orgs') });

export const useOrganization = (id: string | undefined) =>
  useQuery({ queryKey: keys.organization(id ?? ''), queryFn: () => api.get<Organization>(`/orgs/${id}`), enabled: !!id });

export const useOrgSpaces = (id: string | undefined) =>
  useQuery({ queryKey: keys.orgSpaces(id ?? ''), queryFn: () => listAll<Space>(`/orgs/${id}/spaces`), enabled: !!id });

export const useOrgCollections = (id: string | undefined) =>
  useQuery({ queryKey: keys.orgCollections(id ?? ''), queryFn: () => listAll<Collection>(`/orgs/${id}/collections`), enabled: !!id });

export const useOrgSites = (id: string | undefined, spaceId?: string) =>
  useQuery({
    queryKey: [...keys.orgSites(id ?? ''), spaceId ?? 'all'],
    queryFn: () => listAll<Site>(`/orgs/${id}/sites`, spaceId ? { space: spaceId } : {}),
    enabled: !!id,
  });

export const useCollection = (id: string) => useQuery({ queryKey: keys.collection(id), queryFn: () => api.get<Collection>(`/collections/${id}`) });

export const useCollectionSpaces = (id: string) =>
  useQuery({ queryKey: keys.collectionSpaces(id), queryFn: () => listAll<Space>(`/collections/${id}/spaces`) });

export const useSpace = (id: string) => useQuery({ queryKey: keys.space(id), queryFn: () => api.get<Space>(`/spaces/${id}`) });

const pagesQuery = (scope: ContentScope) => ({
  queryKey: keys.pages(scope),
  queryFn: async () => (await api.get<{ pages: RevisionPage[] }>(`${contentPath(scope)}/pages`)).pages,
});

export const usePages = (scope: ContentScope) => useQuery(pagesQuery(scope));

/** The page tree read again after an edit, once: the screens showing it get it too. */
export const refreshPages = (queryClient: QueryClient, scope: ContentScope) => queryClient.fetchQuery({ ...pagesQuery(scope), staleTime: 0 });

/** Sets the window's title while a screen shows (App resets it between screens). */
export function useTitle(title: string | undefined): void {
  useEffect(() => {
    if (title !== undefined) document.title = `${title} · Folio`;
  }, [title]);
}

type PageDocumentRead = RevisionPageDocument & { document?: JSONDocument };

/** Page documents asked for by path while the page tree (which names the path's page) is still coming. */
const byPath = new Map<string, Promise<PageDocumentRead>>();
const pathKey = (scope: ContentScope, path: string) => `${scope.spaceId}:${scopeKey(scope)}:${path}`;

/**
 * Opening a page by its address: its document is asked for at once, by path, beside the tree,
 * instead of after it (a big page's document is most of the wait). Not when the tree is already
 * here: the page's id is known, and usePageDocument asks for it directly.
 */
export function prefetchPageByPath(queryClient: QueryClient, scope: ContentScope, path: string): void {
  if (!path || queryClient.getQueryData(keys.pages(scope)) !== undefined) return;
  const key = pathKey(scope, path);
  if (byPath.has(key)) return;
  const read = api.get<PageDocumentRead>(`${contentPath(scope)}/path/${path.split('/').map(encodeURIComponent).join('/')}`, { format: 'document' });
  read.catch(() => undefined);
  byPath.set(key, read);
  // Unclaimed (the path named no page, or another page opened), it is dropped.
  setTimeout(() => byPath.delete(key), 60_000);
}

/** A page with its document, as the API reads it (`path`: where it was opened, to use a read prefetchPageByPath began). */
export const usePageDocument = (scope: ContentScope, pageId: string | undefined, path?: string) =>
  useQuery({
    queryKey: keys.page(scope, pageId ?? ''),
    queryFn: async () => {
      const pending = path ? byPath.get(pathKey(scope, path)) : undefined;
      if (pending) {
        byPath.delete(pathKey(scope, path!));
        const read = await pending.catch(() => undefined);
        if (read?.id === pageId) return read;
      }
      return api.get<PageDocumentRead>(`${contentPath(scope)}/page/${pageId}`, { format: 'document' });
    },
    enabled: !!pageId,
    // The editor owns the document once open: refetching under it would undo typing.
    staleTime: Infinity,
  });

/** The space's files in this scope, by id (images and files in pages name them). */
export const useFiles = (scope: ContentScope) =>
  useQuery({
    queryKey: keys.files(scope),
    queryFn: async () => new Map((await listAll<RevisionFile>(`${contentPath(scope)}/files`)).map((f) => [f.id, f])),
  });

export const useChangeRequests = (spaceId: string, status: string) =>
  useQuery({
    queryKey: [...keys.changeRequests(spaceId), status],
    queryFn: () => listAll<ChangeRequest>(`/spaces/${spaceId}/change-requests`, { status }),
  });

const changeRequestQuery = (spaceId: string, number: number | undefined) => ({
  queryKey: keys.changeRequest(spaceId, number ?? 0),
  queryFn: () => api.get<ChangeRequest>(`/spaces/${spaceId}/change-requests/${number}`),
});

export const useChangeRequest = (spaceId: string, number: number | undefined) => useQuery({ ...changeRequestQuery(spaceId, number), enabled: number !== undefined });

/**
 * What a page screen needs, asked for as soon as its address is known (before the space and the
 * screen's code are in): the page tree, the change request, and the page's document by path.
 */
export function prefetchPageScreen(queryClient: QueryClient, scope: ContentScope, path: string): void {
  prefetchPageByPath(queryClient, scope, path);
  void queryClient.prefetchQuery(pagesQuery(scope));
  if (scope.changeRequest !== undefined) void queryClient.prefetchQuery(changeRequestQuery(scope.spaceId, scope.changeRequest));
}

export const useSite = (orgId: string, id: string) => useQuery({ queryKey: keys.site(id), queryFn: () => api.get<Site>(`/orgs/${orgId}/sites/${id}`) });

/** Depth-first list of a page tree with each page's parent and depth (the tree's order). */
export interface FlatPage {
  page: RevisionPage;
  parent: string | undefined;
  depth: number;
  index: number;
}

export function flattenPages(pages: RevisionPage[], parent?: string, depth = 0, out: FlatPage[] = []): FlatPage[] {
  pages.forEach((page, index) => {
    out.push({ page, parent, depth, index });
    if ('pages' in page && page.pages) flattenPages(page.pages as RevisionPage[], page.id, depth + 1, out);
  });
  return out;
}

/** The page at `path` (a document or group page), or the first document page when path is empty. */
export function findPage(pages: RevisionPage[], path: string): RevisionPage | undefined {
  const flat = flattenPages(pages).map((f) => f.page);
  if (!path) return flat.find((p) => p.type === 'document');
  return flat.find((p) => 'path' in p && p.path === path);
}
