import { lazy, Suspense, useEffect, type ReactNode } from 'react';
import { Redirect, Route, Router, Switch, useLocation, useSearch } from 'wouter';
import { SessionExpiredDialog } from './components/SessionExpiredDialog.tsx';
import { useSession } from './session.tsx';
import SignIn from './screens/SignIn.tsx';

// Every screen but sign-in loads its code when first opened: the sign-in page stays small.
const PasswordSetup = lazy(() => import('./screens/PasswordSetup.tsx'));
const Home = lazy(() => import('./screens/Home.tsx'));
const Organization = lazy(() => import('./screens/Organization.tsx'));
const Members = lazy(() => import('./screens/Members.tsx'));
const Collection = lazy(() => import('./screens/Collection.tsx'));
const Space = lazy(() => import('./screens/Space.tsx'));
const Site = lazy(() => import('./screens/Site.tsx'));
const OpenAPISpec = lazy(() => import('./screens/OpenAPISpec.tsx'));
const Integration = lazy(() => import('./screens/Integration.tsx'));
const NotFound = lazy(() => import('./screens/NotFound.tsx'));

function Loading() {
  return (
    <p className="loading" role="status">
      Loading…
    </p>
  );
}

/** Screens behind sign-in: without a session, the sign-in page, which comes back here after. */
function SignedIn({ children }: { children: ReactNode }) {
  const { session, expired } = useSession();
  const [location] = useLocation();
  const search = useSearch();
  if (session === undefined) return <Loading />;
  if (session === null) {
    const next = `${location}${search ? `?${search}` : ''}${window.location.hash}`;
    return <Redirect to={`/sign-in?next=${encodeURIComponent(next)}`} replace />;
  }
  return (
    <>
      {children}
      {expired && <SessionExpiredDialog />}
    </>
  );
}

function Title() {
  const [location] = useLocation();
  useEffect(() => {
    // Screens set their own title; this resets it between them.
    document.title = 'Folio';
  }, [location]);
  return null;
}

export function App() {
  return (
    <Router base="/app">
      <Title />
      <Suspense fallback={<Loading />}>
        <Switch>
          <Route path="/sign-in" component={SignIn} />
          <Route path="/password-setup" component={PasswordSetup} />
          <Route>
            <SignedIn>
              <Switch>
                <Route path="/"><Home /></Route>
                <Route path="/o/:orgId/sites/:siteId" nest>
                  {(params) => <Site orgId={params.orgId} siteId={params.siteId} />}
                </Route>
                <Route path="/o/:orgId/openapi/:slug">{(params) => <OpenAPISpec orgId={params.orgId} slug={params.slug} />}</Route>
                <Route path="/o/:orgId/integrations/:name">{(params) => <Integration orgId={params.orgId} name={params.name} />}</Route>
                <Route path="/integrations/:name">{(params) => <Integration name={params.name} />}</Route>
                <Route path="/o/:orgId/members">{(params) => <Members orgId={params.orgId} />}</Route>
                <Route path="/o/:orgId">{(params) => <Organization orgId={params.orgId} />}</Route>
                <Route path="/c/:collectionId">{(params) => <Collection collectionId={params.collectionId} />}</Route>
                <Route path="/s/:spaceId" nest>
                  {(params) => <Space spaceId={params.spaceId} />}
                </Route>
                <Route component={NotFound} />
              </Switch>
            </SignedIn>
          </Route>
        </Switch>
      </Suspense>
    </Router>
  );
}
