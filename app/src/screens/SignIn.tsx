import { useQuery } from '@tanstack/react-query';
import { useEffect } from 'react';
import { request } from '../api/client.ts';
import { useLocation, useSearch } from 'wouter';
import { SignInForm } from '../components/SignInForm.tsx';
import { useSession } from '../session.tsx';

/** Where to go after signing in: the `next` of the address, when it is a path of the app. */
export function nextPath(search: string): string {
  const next = new URLSearchParams(search).get('next');
  return next && next.startsWith('/') && !next.startsWith('//') ? next : '/';
}

export default function SignIn() {
  const search = useSearch();
  const [, navigate] = useLocation();
  const { session } = useSession();
  const next = nextPath(search);

  useEffect(() => {
    if (session) navigate(next, { replace: true });
  }, [session, next, navigate]);

  return (
    <main className="centered">
      <div className="card narrow">
        <h1>Sign in to Folio</h1>
        <SignInForm />
        <SingleSignOn next={next} />
      </div>
    </main>
  );
}

interface SignInOptions {
  sso: Array<{ label: string; startURL: string }>;
}

/** The identity providers of the organization the person is heading to (from `next`), as links that start a SAML or OpenID Connect sign-in. */
function SingleSignOn({ next }: { next: string }) {
  const options = useQuery({
    queryKey: ['sign-in-options', next],
    queryFn: () => request<SignInOptions>('/app/api/sign-in/options', { query: { next: `/app${next}` } }),
    enabled: next.startsWith('/o/'),
  });
  const providers = options.data?.sso ?? [];
  if (providers.length === 0) return null;
  return (
    <div className="sso">
      <p className="muted">Or sign in with your organization:</p>
      {providers.map((p) => (
        <a key={p.startURL} className="button" href={p.startURL}>
          Sign in with {p.label}
        </a>
      ))}
    </div>
  );
}
