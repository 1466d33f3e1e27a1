import { useEffect, useId, useState, type FormEvent } from 'react';
import { useLocation } from 'wouter';
import { errorText, request } from '../api/client.ts';
import { useSession, type AppSession } from '../session.tsx';

/** The one-time link of `folio serve`'s first start (or of an administrator): choose a password. */
export default function PasswordSetup() {
  const token = new URLSearchParams(window.location.hash.slice(1)).get('token') ?? '';
  const { opened } = useSession();
  const [, navigate] = useLocation();
  const [password, setPassword] = useState('');
  const [confirm, setConfirm] = useState('');
  const [error, setError] = useState<string>();
  // Whom the link is for (asked without using it): shown, and given to password managers. A dead
  // link is said at once, before a password is typed.
  const [account, setAccount] = useState<{ email: string; displayName: string }>();
  const [dead, setDead] = useState<string>();
  const id = useId();

  useEffect(() => {
    if (!token) return;
    request<{ email: string; displayName: string }>('/app/api/password-setup/check', { method: 'POST', body: { token } }).then(setAccount, (err: unknown) => setDead(errorText(err)));
  }, [token]);

  async function submit(event: FormEvent) {
    event.preventDefault();
    if (password !== confirm) return setError('The two passwords differ.');
    try {
      opened(await request<AppSession>('/app/api/password-setup', { method: 'POST', body: { token, password } }));
      navigate('/', { replace: true });
    } catch (err) {
      setError(errorText(err));
    }
  }

  return (
    <main className="centered">
      <div className="card narrow">
        <h1>Choose your password</h1>
        {!token || dead ? (
          <p role="alert" className="error">
            {dead ?? 'This link has no setup token. Ask your administrator for a new link.'}
          </p>
        ) : (
          <form className="form" onSubmit={submit}>
            {account && (
              <>
                <p>
                  For <strong>{account.displayName}</strong> ({account.email})
                </p>
                {/* For password managers: the account the new password belongs to. */}
                <input type="email" name="username" autoComplete="username" value={account.email} readOnly hidden />
              </>
            )}
            <label htmlFor={`${id}-password`}>New password</label>
            <input id={`${id}-password`} type="password" autoComplete="new-password" required minLength={8} value={password} onChange={(e) => setPassword(e.target.value)} />
            <label htmlFor={`${id}-confirm`}>Repeat the password</label>
            <input id={`${id}-confirm`} type="password" autoComplete="new-password" required value={confirm} onChange={(e) => setConfirm(e.target.value)} />
            {error && (
              <p role="alert" className="error">
                {error}
              </p>
            )}
            <button type="submit" className="primary">
              Set password
            </button>
          </form>
        )}
      </div>
    </main>
  );
}
