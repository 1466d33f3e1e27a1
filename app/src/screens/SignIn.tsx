import { useEffect } from 'react';
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
      </div>
    </main>
  );
}
