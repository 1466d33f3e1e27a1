import { useQueryClient } from '@tanstack/react-query';
import { lazy, useEffect } from 'react';
import { Link, Route, Switch, useLocation } from 'wouter';
import { type ContentScope, prefetchPageScreen, useSpace, useTitle } from '../api/queries.ts';
import { Sidebar } from '../components/Shell.tsx';
import { Search } from '../components/Search.tsx';
import { emojiText } from '../format.ts';
import NotFound from './NotFound.tsx';
import { PublishButton } from '../components/PublishButton.tsx';

const loadPageScreen = () => import('./PageScreen.tsx');
const PageScreen = lazy(loadPageScreen);
const ChangeRequestList = lazy(() => import('./ChangeRequestList.tsx'));
const ChangeRequestReview = lazy(() => import('./ChangeRequestReview.tsx'));
const SpaceSettings = lazy(() => import('./SpaceSettings.tsx'));

/**
 * A space: its pages (the current content, or a change request's), its change requests and
 * their review. Routes below /s/:spaceId, as the API's urls.app name them.
 */
export default function Space({ spaceId }: { spaceId: string }) {
  const space = useSpace(spaceId);
  const [location] = useLocation();
  const queryClient = useQueryClient();
  // What the page an address opens needs is asked for now, beside the space (see prefetchPageScreen).
  useEffect(() => {
    const opened = pageAt(spaceId, location);
    if (!opened) return;
    prefetchPageScreen(queryClient, opened.scope, opened.path);
    // Its code (the editor's is most of it) comes in beside its data, not after the space.
    void loadPageScreen();
  }, [spaceId, location, queryClient]);
  useTitle(space.data ? space.data.title || 'Untitled' : undefined);
  if (space.isError) return <NotFound />;
  if (!space.data) return <p className="loading" role="status">Loading…</p>;
  const s = space.data;
  return (
    <div className="layout">
      <Sidebar orgId={s.organization} current={s.id} />
      <div className="space">
        <header className="space-header">
          <p className="space-title">
            <Link href="/">
              {emojiText(s.emoji)} {s.title || 'Untitled'}
            </Link>
          </p>
          <nav aria-label="Space" className="space-nav">
            <Link href="/~/changes">Change requests{s.changeRequestsOpen ? ` (${s.changeRequestsOpen})` : ''}</Link>
            {s.permissions.admin && <PublishButton space={s} />}
            {s.permissions.admin && <Link href="/~/settings">Settings</Link>}
          </nav>
          <Search spaceId={s.id} />
        </header>
        <Switch>
          <Route path="/~/changes">{() => <ChangeRequestList space={s} />}</Route>
          <Route path="/~/settings">{() => <SpaceSettings space={s} />}</Route>
          {/* Pages first: "/~/changes/2/" (the review's "Edit pages") is the pages, which the review's
              pattern would take too (a trailing slash matches it); "/~/changes/2" is the review. */}
          <Route path="/~/changes/:number/*">{(p) => <PageScreen space={s} changeRequest={Number(p.number)} path={p['*'] ?? ''} />}</Route>
          <Route path="/~/changes/:number">{(p) => <ChangeRequestReview space={s} number={Number(p.number)} />}</Route>
          <Route path="/published">{() => <PageScreen space={s} path="" />}</Route>
          <Route path="/revisions/:revisionId">{(p) => <PageScreen space={s} revision={p.revisionId} path="" />}</Route>
          <Route path="/*?">{(p) => <PageScreen space={s} path={p['*'] ?? ''} />}</Route>
        </Switch>
      </div>
    </div>
  );
}

/** The page an address inside a space opens (its content scope and page path), if it names one. */
function pageAt(spaceId: string, location: string): { scope: ContentScope; path: string } | undefined {
  const inChangeRequest = /^\/~\/changes\/(\d+)\/(.+)$/.exec(location);
  if (inChangeRequest) return { scope: { spaceId, changeRequest: Number(inChangeRequest[1]) }, path: decodeURIComponent(inChangeRequest[2]!) };
  if (location.startsWith('/~/') || location.startsWith('/revisions/') || location === '/published' || location.length <= 1) return undefined;
  return { scope: { spaceId }, path: decodeURIComponent(location.slice(1)) };
}
