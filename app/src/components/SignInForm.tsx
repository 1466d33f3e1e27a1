import { useId, useState, type FormEvent } from 'react';
import { errorText } from '../api/client.ts';
import { useSession } from '../session.tsx';

/** Email and password, with the server's message on failure (it never says which of the two was wrong). */
export function SignInForm({ onSignedIn, initialEmail = '' }: { onSignedIn?: () => void; initialEmail?: string }) {
  const { signIn } = useSession();
  const [email, setEmail] = useState(initialEmail);
  const [password, setPassword] = useState('');
  const [error, setError] = useState<string>();
  const [busy, setBusy] = useState(false);
  const id = useId();

  async function submit(event: FormEvent) {
    event.preventDefault();
    setBusy(true);
    setError(undefined);
    try {
      await signIn(email, password);
      onSignedIn?.();
    } catch (err) {
      setError(errorText(err));
    } finally {
      setBusy(false);
    }
  }

  return (
    <form className="form" onSubmit={submit} aria-describedby={error ? `${id}-error` : undefined}>
      <label htmlFor={`${id}-email`}>Email</label>
      <input id={`${id}-email`} type="email" autoComplete="username" required value={email} onChange={(e) => setEmail(e.target.value)} />
      <label htmlFor={`${id}-password`}>Password</label>
      <input id={`${id}-password`} type="password" autoComplete="current-password" required value={password} onChange={(e) => setPassword(e.target.value)} />
      {error && (
        <p id={`${id}-error`} role="alert" className="error">
          {error}
        </p>
      )}
      <button type="submit" className="primary" disabled={busy}>
        {busy ? 'Signing in…' : 'Sign in'}
      </button>
    </form>
  );
}
